"""Multi-head attention: h heads of size d_k = d_model / h, side by side."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._checks import check_attn_mask, check_float, check_same, check_tensor, positive_int, probability, shape
from .attention import attend, autocast_dtype


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o, head_i = Attention(Q W_q^i, K W_k^i, V W_v^i).

    ``forward(query (B, T, D), key (B, S, D) = query, value (B, S, D) = key, mask=None)``
    returns ``(out (B, T, D), weights (B, H, T, S))``; the weights are per head and taken
    before dropout. Self-attention: pass only ``query``. Cross-attention: ``key``/``value``
    come from the encoder and S may differ from T. With ``need_weights=False`` it takes a
    fast path through ``F.scaled_dot_product_attention`` and returns ``(out, None)``.

    ``mask`` (bool, True = may attend) is 4-D, broadcastable to (B, H, T, S) with each dimension
    equal or 1 (``padding_mask``: (B, 1, 1, S), ``causal_mask``: (1, 1, T, S)), or 2-D (T, S)
    shared by every sequence and head (refused when B == T > 1: it could be a (B, S) padding mask).
    Anything else is refused rather than broadcast onto the wrong axes. Both paths accept the
    same masks and give zeros for a query that may attend to no key.
    Dropout on the weights (``dropout``) is active in training mode only.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        d_model, num_heads = positive_int("d_model", d_model), positive_int("num_heads", num_heads)
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}: "
                             f"each head needs d_k = d_model / num_heads dimensions")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(probability("dropout", dropout))       # p used on the weights

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
        if mask is not None:
            check_attn_mask(mask, query.shape[0], self.num_heads, query.shape[1], key.shape[1], query.device)

        q = self.split_heads(self.q_proj(query))                          # (B, H, T, d_k)
        k = self.split_heads(self.k_proj(key))                            # (B, H, S, d_k)
        v = self.split_heads(self.v_proj(value))                          # (B, H, S, d_k)
        p = self.dropout.p if self.training else 0.0
        if need_weights:
            out, weights = attend(q, k, v, mask, p)
        else:
            out, weights = self._fast(q, k, v, mask, p), None
        return self.out_proj(self.merge_heads(out)), weights               # (B, T, D), (B, H, T, S)

    @torch.no_grad()
    def copy_to(self, ref: nn.MultiheadAttention) -> nn.MultiheadAttention:
        """Copy these weights into ``ref`` (q, k, v stacked as its ``in_proj``); return ``ref``.

        The two layers then compute the same output, with PyTorch's opposite bool mask convention.
        """
        ref.in_proj_weight.copy_(torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight]))
        ref.out_proj.weight.copy_(self.out_proj.weight)
        if self.q_proj.bias is not None:
            ref.in_proj_bias.copy_(torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]))
            ref.out_proj.bias.copy_(self.out_proj.bias)
        return ref

    @staticmethod
    def _fast(q, k, v, mask, p):
        """torch's fused kernel. A query that sees no key is given every key (so the kernel never
        meets an empty row, whatever its version does with one) and zeroed afterwards: no NaN,
        zero gradients, and no host-device sync."""
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        seen = mask.any(-1, keepdim=True)                                 # (.., T, 1): False = sees no key
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask >= seen, dropout_p=p)  # mask | ~seen
        return out * seen if out.requires_grad else out.mul_(seen)        # (B, H, T, d_k)

    def _check(self, query, key, value):
        distinct = {"query": query}                                       # self-attention: checked once
        if key is not query:
            distinct["key"] = key
        if value is not query and value is not key:
            distinct["value"] = value
        for name, t in distinct.items():
            check_tensor(name, t, ndim=3)
            check_float(name, t)
        if len(distinct) > 1:
            check_same(**distinct)
        if query.shape[-1] != self.d_model or key.shape[-1] != self.d_model or value.shape[-1] != self.d_model:
            raise ValueError(f"query, key and value must end in d_model={self.d_model}, got "
                             f"{shape(query)}, {shape(key)}, {shape(value)}")
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(f"expected query (B, T, D) and key/value (B, S, D) with the same B and S, got "
                             f"{shape(query)}, {shape(key)}, {shape(value)}")
        w = self.q_proj.weight
        if query.device != w.device or (query.dtype != w.dtype and autocast_dtype(w.device) is None):
            raise ValueError(f"input is {query.dtype} on {query.device} but the module's weights are "
                             f"{w.dtype} on {w.device}; use module.to(...) or x.to(...)")
