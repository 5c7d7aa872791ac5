"""Multi-head attention: h heads of size d_k = d_model / h, side by side."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._checks import check_float, check_mask, check_same, check_tensor, shape
from .attention import scaled_dot_product_attention


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o, head_i = Attention(Q W_q^i, K W_k^i, V W_v^i).

    ``forward(query (B, T, D), key (B, S, D) = query, value (B, S, D) = key, mask=None)``
    returns ``(out (B, T, D), weights (B, H, T, S))``; the weights are per head and taken
    before dropout. Self-attention: pass only ``query``. Cross-attention: ``key``/``value``
    come from the encoder and S may differ from T. With ``need_weights=False`` it takes a
    fast path through ``F.scaled_dot_product_attention`` and returns ``(out, None)``.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if not isinstance(d_model, int) or not isinstance(num_heads, int) or d_model < 1 or num_heads < 1:
            raise ValueError(f"d_model and num_heads must be positive ints, got {d_model!r} and {num_heads!r}")
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}: "
                             f"each head needs d_k = d_model / num_heads dimensions")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, L, _ = x.shape
        return x.view(B, L, self.num_heads, self.d_k).transpose(1, 2)      # (B, H, L, d_k)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, _, L, _ = x.shape
        return x.transpose(1, 2).reshape(B, L, self.d_model)              # (B, L, D)

    def forward(self, query: torch.Tensor, key: torch.Tensor | None = None,
                value: torch.Tensor | None = None, mask: torch.Tensor | None = None,
                need_weights: bool = True):
        key = query if key is None else key
        value = key if value is None else value
        self._check(query, key, value)
        B, T, S = query.shape[0], query.shape[1], key.shape[1]
        if mask is not None:
            check_mask(mask, (B, self.num_heads, T, S), query.device)

        q = self.split_heads(self.q_proj(query))                          # (B, H, T, d_k)
        k = self.split_heads(self.k_proj(key))                            # (B, H, S, d_k)
        v = self.split_heads(self.v_proj(value))                          # (B, H, S, d_k)
        if need_weights:
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout=self.dropout)
        else:
            p = self.dropout.p if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            weights = None
            if mask is not None:
                empty = ~mask.any(-1, keepdim=True)                           # rows with no visible key
                if empty.any():
                    out = out.masked_fill(empty, 0.0)  # zeros, whatever the kernel returned
        return self.out_proj(self.merge_heads(out)), weights               # (B, T, D), (B, H, T, S)

    def _check(self, query, key, value):
        for name, t in (("query", query), ("key", key), ("value", value)):
            check_tensor(name, t, ndim=3)
            check_float(name, t)
        check_same(query=query, key=key, value=value)
        if query.shape[-1] != self.d_model or key.shape[-1] != self.d_model or value.shape[-1] != self.d_model:
            raise ValueError(f"query, key and value must end in d_model={self.d_model}, got "
                             f"{shape(query)}, {shape(key)}, {shape(value)}")
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(f"expected query (B, T, D) and key/value (B, S, D) with the same B and S, got "
                             f"{shape(query)}, {shape(key)}, {shape(value)}")
        w = self.q_proj.weight
        if query.device != w.device or query.dtype != w.dtype:
            raise ValueError(f"input is {query.dtype} on {query.device} but the module's weights are "
                             f"{w.dtype} on {w.device}; use module.to(...) or x.to(...)")
