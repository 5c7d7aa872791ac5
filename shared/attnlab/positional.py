"""Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5)."""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from ._checks import check_float, check_tensor, shape
from .course.i18n import t


def sinusoidal_encoding(max_len: int, d_model: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    r"""(max_len, d_model) table with PE[pos, 2i] = sin(pos / 10000^{2i/d}), PE[pos, 2i+1] = cos(...).

    Computed in float64, then cast to ``dtype``.
    """
    if not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        raise ValueError(t("checks.pe_d_model", got=repr(d_model)))
    if not isinstance(max_len, int) or max_len < 1:
        raise ValueError(t("checks.int_positive", name="max_len", got=repr(max_len)))
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]                     # (L, 1)
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)                                           # (L, D/2)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe.to(dtype)


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to token embeddings: x (B, T, D) -> x + PE[:T].

    ``offset``: the position of x's first token (decoding with a KV cache feeds position t
    alone: ``pos(x, offset=t)`` adds PE[t : t + T])."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0):
        super().__init__()
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        check_tensor("x", x, ndim=3)
        check_float("x", x)
        max_len, d_model = self.pe.shape
        if x.shape[-1] != d_model:
            raise ValueError(t("checks.pe_width", shape=shape(x), d_model=d_model))
        end = offset + x.shape[1]
        if end > max_len:
            key = "checks.pe_too_long_at" if offset else "checks.pe_too_long"
            raise ValueError(t(key, T=x.shape[1], offset=offset, max_len=max_len))
        return self.dropout(x + self.pe[offset:end].to(x.dtype))
