"""The character-level GPT of lesson 10, built from the package's own blocks, and the rungs of its loss ladder.

    ids (B, T) -> token embedding (+ learned positions) -> causal blocks (is_causal=True) -> LayerNorm
               -> logits (B, T, vocab) = x @ embedding^T          (tied embeddings, as GPT-2)

The ladder (``LADDER``), in the spirit of Karpathy's "Let's build GPT": each rung adds one idea.

    bigram         embedding -> LN -> tied output: the next character from the current one only
                   (``bigram_loss``: the same from counted frequencies, the best any bigram can do)
    one_head       embedding -> one causal attention head (+ residual) -> LN -> tied output
    several_heads  the same with num_heads heads
    full_blocks    num_layers TransformerBlocks (attention + feed-forward, pre-LN), no positions
    with_positions the full GPT: full blocks + learned position embeddings
"""
from __future__ import annotations

import dataclasses
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..block import TransformerBlock
from ..course.i18n import t
from ..multihead import MultiHeadAttention

LADDER = ("bigram", "one_head", "several_heads", "full_blocks", "with_positions")


@dataclasses.dataclass(frozen=True)
class PoetConfig:
    vocab_size: int
    context: int = 64
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 4
    d_ff: int = 256
    rung: str = "with_positions"      # one of LADDER
    dropout: float = 0.0              # in the blocks, while training only (the shipped checkpoints' recipe)

    def __post_init__(self):
        if self.rung not in LADDER:
            raise ValueError(t("checks.rung", rungs=", ".join(LADDER), got=repr(self.rung)))
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(t("checks.prob_range", name="dropout", got=repr(self.dropout)))


class AttentionOnly(nn.Module):
    """x + Attn(LN(x)): the ladder's attention-only rungs (no feed-forward network).
    Called like ``TransformerBlock`` (mask, is_causal, KV cache)."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = MultiHeadAttention(d_model, num_heads)

    def forward(self, x, mask=None, need_weights: bool = False, *, is_causal: bool = False,
                past_key_value=None, use_cache: bool = False):
        a, weights, *present = self.attention(self.norm1(x), mask=mask, need_weights=need_weights,
                                              is_causal=is_causal, past_key_value=past_key_value,
                                              use_cache=use_cache)
        return (x + a, weights, *present)


class PoetGPT(nn.Module):
    """``forward(ids (B, T), need_weights=False)`` -> ``(logits (B, T, vocab), weights)``, where
    ``weights`` is a list of (B, H, T, T) per layer when asked for, else ``[]``. T <= context.
    Causal: every block is called with ``is_causal=True``. Generation with a KV cache:
    ``poet.sample.cached_step``."""

    def __init__(self, config: PoetConfig):
        super().__init__()
        c = self.config = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = nn.Embedding(c.context, c.d_model) if c.rung == "with_positions" else None
        if c.rung == "bigram":
            self.blocks = nn.ModuleList()
        elif c.rung in ("one_head", "several_heads"):
            heads = 1 if c.rung == "one_head" else c.num_heads
            self.blocks = nn.ModuleList([AttentionOnly(c.d_model, heads)])
        else:
            self.blocks = nn.ModuleList(
                TransformerBlock(c.d_model, c.num_heads, c.d_ff, dropout=c.dropout, norm_first=True)
                for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.apply(_init)

    def forward(self, ids: torch.Tensor, need_weights: bool = False):
        x, weights = self.features(ids, need_weights)
        return x @ self.embed.weight.T, weights                               # (B, T, vocab)

    def features(self, ids: torch.Tensor, need_weights: bool = False):
        """Everything but the output layer: ``(LN(x) (B, T, D), weights)``."""
        B, T = ids.shape
        if T > self.config.context:
            raise ValueError(t("checks.context_too_long", context=self.config.context, T=T))
        x = self.embed(ids)                                                   # (B, T, D)
        if self.pos is not None:
            x = x + self.pos(torch.arange(T, device=ids.device))              # (T, D) broadcast
        weights = []
        for block in self.blocks:
            x, w = block(x, is_causal=True, need_weights=need_weights)        # position i sees 0..i
            if need_weights:
                weights.append(w)                                             # (B, H, T, T)
        return self.norm(x), weights


def _init(module: nn.Module) -> None:
    """GPT-2's initialisation: normal(0, 0.02) weights, zero biases."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
        if getattr(module, "bias", None) is not None:
            nn.init.zeros_(module.bias)


def make_model(config: PoetConfig, seed: int = 0) -> PoetGPT:
    """A freshly initialised model; the same seed gives the same weights, whatever ran before."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return PoetGPT(config)


@torch.no_grad()
def bigram_loss(train_ids: torch.Tensor, val_ids: torch.Tensor, vocab_size: int, alpha: float = 0.1) -> float:
    """Validation cross-entropy of the counted bigram model P(b | a) = (n(a, b) + alpha) / (n(a) + alpha V).

    Counted over the pairs that occur (no V x V table: the Chinese vocabulary has 5,117 characters).
    """
    pairs, counts = torch.unique(train_ids[:-1] * vocab_size + train_ids[1:], return_counts=True)
    first = torch.bincount(train_ids[:-1], minlength=vocab_size).double()           # n(a)
    wanted = val_ids[:-1] * vocab_size + val_ids[1:]
    where = torch.searchsorted(pairs, wanted).clamp(max=len(pairs) - 1)
    n_ab = torch.where(pairs[where] == wanted, counts[where], 0).double()
    p = (n_ab + alpha) / (first[val_ids[:-1]] + alpha * vocab_size)
    return float(-p.log().mean())


def uniform_loss(vocab_size: int) -> float:
    """The loss of a model that knows nothing: ln V."""
    return math.log(vocab_size)


def loss_on(model: PoetGPT, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits, _ = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
