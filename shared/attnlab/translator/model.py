"""Lesson 08's model: a tiny encoder-decoder from the package's blocks, and its size."""
from __future__ import annotations

import dataclasses

import torch
import torch.nn as nn

from ..block import DecoderBlock, TransformerBlock
from ..masks import decoder_mask, padding_mask
from ..positional import PositionalEncoding
from .data import MAX_DIGITS, PAD, SRC_TOKENS, TRAIN_SEED, _check_lang, target_tokens


@dataclasses.dataclass(frozen=True)
class TranslatorConfig:
    lang: str = "vi"
    d_model: int = 64
    num_heads: int = 4
    enc_layers: int = 2
    dec_layers: int = 2
    d_ff: int = 128
    max_src: int = MAX_DIGITS
    max_tgt: int = 11           # BOS + up to 9 words + EOS

    @property
    def src_vocab(self) -> int:
        return len(SRC_TOKENS)

    @property
    def tgt_vocab(self) -> int:
        return len(target_tokens(self.lang))


class Translator(nn.Module):
    """Encoder-decoder Transformer from the package's blocks (pre-LN, no dropout).

    ``forward(src (B, S), tgt_in (B, T), need_weights=False)`` returns ``(logits (B, T, V),
    weights)`` where ``weights`` is a dict ``{"enc_self": [(B, H, S, S)], "dec_self": [(B, H, T, T)],
    "cross": [(B, H, T, S)]}`` (one tensor per layer) if asked for, else None.

    ``cross_padding`` and ``causal`` switch the source padding mask of the cross-attention and the
    causal part of the decoder mask; they stay True except in the tests and the lesson's
    experiments that show what goes wrong without them.
    """

    def __init__(self, config: TranslatorConfig | None = None):
        super().__init__()
        c = self.config = config or TranslatorConfig()
        _check_lang(c.lang)
        self.cross_padding = True
        self.causal = True
        self.src_embed = nn.Embedding(c.src_vocab, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab, c.d_model)
        self.pos = PositionalEncoding(c.d_model, max_len=max(c.max_src, c.max_tgt))
        self.encoder = nn.ModuleList(
            TransformerBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=True)
            for _ in range(c.enc_layers))
        self.decoder = nn.ModuleList(
            DecoderBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=True)
            for _ in range(c.dec_layers))
        self.enc_norm = nn.LayerNorm(c.d_model)
        self.dec_norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.tgt_vocab)

    @property
    def lang(self) -> str:
        return self.config.lang

    def encode(self, src: torch.Tensor, need_weights: bool = False):
        """src (B, S) -> memory (B, S, D) and the encoder self-attention weights per layer."""
        mask = padding_mask(src, PAD)                                          # (B, 1, 1, S)
        x = self.pos(self.src_embed(src))                                      # (B, S, D)
        weights = []
        for block in self.encoder:
            x, w = block(x, mask=mask, need_weights=need_weights)
            weights.append(w)                                                  # (B, H, S, S)
        return self.enc_norm(x), weights

    def memory_mask(self, src: torch.Tensor) -> torch.Tensor | None:
        """(B, 1, 1, S): the cross-attention mask, False on padded digits (None if switched off)."""
        return padding_mask(src, PAD) if self.cross_padding else None

    def self_mask(self, tgt_in: torch.Tensor) -> torch.Tensor:
        """(B, 1, T, T): causal AND padding (padding only, if ``causal`` is switched off)."""
        if self.causal:
            return decoder_mask(tgt_in, PAD)
        T = tgt_in.shape[1]
        return padding_mask(tgt_in, PAD).expand(-1, 1, T, T)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src: torch.Tensor,
               need_weights: bool = False):
        """tgt_in (B, T) -> logits (B, T, V), decoder self weights and cross weights per layer."""
        x = self.pos(self.tgt_embed(tgt_in))                                   # (B, T, D)
        self_mask, mem_mask = self.self_mask(tgt_in), self.memory_mask(src)
        w_self, w_cross = [], []
        for block in self.decoder:
            x, ws, wc = block(x, memory, self_mask=self_mask, memory_mask=mem_mask, need_weights=need_weights)
            w_self.append(ws)                                                  # (B, H, T, T)
            w_cross.append(wc)                                                 # (B, H, T, S)
        return self.head(self.dec_norm(x)), w_self, w_cross

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, need_weights: bool = False):
        memory, w_enc = self.encode(src, need_weights)
        logits, w_self, w_cross = self.decode(tgt_in, memory, src, need_weights)
        weights = {"enc_self": w_enc, "dec_self": w_self, "cross": w_cross} if need_weights else None
        return logits, weights


def make_model(lang: str = "vi", seed: int = TRAIN_SEED, config: TranslatorConfig | None = None) -> Translator:
    """A freshly initialised model for ``lang``; the same seed gives the same weights."""
    _check_lang(lang)
    config = dataclasses.replace(config or TranslatorConfig(), lang=lang)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Translator(config)
