"""Lesson 07's model: a tiny decoder-only Transformer (pre-LN blocks of the package) that learns
to reverse digits (``attnlab.reversal.data``), and its size."""
from __future__ import annotations

import dataclasses

import torch
import torch.nn as nn

from ..block import TransformerBlock
from ..masks import causal_mask
from ..positional import PositionalEncoding
from .data import MAX_LEN, MIN_LEN, TRAIN_SEED, VOCAB_SIZE


@dataclasses.dataclass(frozen=True)
class TinyConfig:
    """Size of the model and of the task."""
    d_model: int = 32
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 128
    min_len: int = MIN_LEN
    max_len: int = MAX_LEN
    vocab_size: int = VOCAB_SIZE

    @property
    def context(self) -> int:
        """Input length: a full row has 2 * max_len + 1 tokens, the model reads all but the last."""
        return 2 * self.max_len



class TinyTransformer(nn.Module):
    """Decoder-only Transformer: token embedding + sinusoidal positions, pre-LN blocks, LayerNorm, head.

    ``forward(ids (B, T), need_weights=False)`` returns ``(logits (B, T, vocab), weights)`` where
    ``weights`` is a list with one (B, H, T, T) tensor per layer if asked for, else ``[]``.
    Every block gets ``causal_mask(T)``; with ``causal=False`` it gets ``mask=None`` (lesson 07
    trains such a model to show how it cheats).
    """

    def __init__(self, config: TinyConfig | None = None, causal: bool = True):
        super().__init__()
        c = self.config = config or TinyConfig()
        self.causal = causal
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = PositionalEncoding(c.d_model, max_len=c.context)
        self.blocks = nn.ModuleList(
            TransformerBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=True)
            for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size)

    def forward(self, ids: torch.Tensor, need_weights: bool = False):
        T = ids.shape[1]
        x = self.pos(self.embed(ids))                                          # (B, T, D)
        mask = causal_mask(T, device=ids.device) if self.causal else None      # (1, 1, T, T)
        weights = []
        for block in self.blocks:
            x, w = block(x, mask=mask, need_weights=need_weights)
            if need_weights:
                weights.append(w)                                              # (B, H, T, T)
        return self.head(self.norm(x)), weights                                # (B, T, vocab)


def make_model(seed: int = TRAIN_SEED, config: TinyConfig | None = None, causal: bool = True) -> TinyTransformer:
    """A freshly initialised model; the same seed gives the same weights, whatever ran before."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(config, causal=causal)
