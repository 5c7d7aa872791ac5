"""Multi-head attention: h heads of size d_k = d_model / h, side by side."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._checks import check_attn_mask, check_float, check_same, check_tensor, positive_int, probability, shape
from .attention import attend, autocast_dtype, scaled_dot_product_attention
from .masks import is_plain_causal


def attend_step(q: torch.Tensor, k_cache, v_cache, k_new: torch.Tensor, v_new: torch.Tensor):
    """One decoding step of self-attention with a KV cache.

    q, k_new, v_new (B, H, 1, d_k): the newest position's query, key and value; k_cache, v_cache
    (B, H, t, d_k) or None. Appends the new key and value, then the one query attends to all t + 1
    keys with ``mask=None``: every key is at or before the query's position, so nothing needs
    masking. Returns ``(out (B, H, 1, d_k), weights (B, H, 1, t + 1), k (B, H, t+1, d_k), v)``.
    """
    k = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=2)       # (B, H, t+1, d_k)
    v = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=2)
    out, weights = scaled_dot_product_attention(q, k, v, mask=None)
    return out, weights, k, v


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o, head_i = Attention(Q W_q^i, K W_k^i, V W_v^i).

    ``forward(query (B, T, D), key (B, S, D) = query, value (B, S, D) = key, mask=None)``
    returns ``(out (B, T, D), weights (B, H, T, S))``; the weights are per head and taken
    before dropout. Self-attention: pass only ``query``. Cross-attention: ``key``/``value``
    come from the encoder and S may differ from T. With ``need_weights=False`` it takes a
    fast path through ``F.scaled_dot_product_attention`` and returns ``(out, None)``.

    ``mask`` (bool, True = may attend) has the scores' rank: 4-D, broadcastable to (B, H, T, S)
    with each dimension equal or 1 (``padding_mask``: (B, 1, 1, S), ``causal_mask``: (1, 1, T, S)).
    Anything else is refused rather than broadcast onto the wrong axes, whatever the batch size.
    Both paths accept the same masks and give zeros for a query that may attend to no key.
    Dropout on the weights (``dropout``) is active in training mode only.

    KV cache (decoding one position at a time, as PyTorch and Hugging Face models do):
    ``past_key_value=(k, v)``, the keys and values of the earlier positions (B, H, P, d_k), and
    ``use_cache=True`` to get them back with this call's appended: the result is then
    ``(out, weights, (k, v))``. Self-attention appends the new positions' keys and values after
    the past ones (``attend_step``), so ``mask`` covers P + S keys (None for one new query: all
    its keys are in its past). Cross-attention (``key`` given) reuses the past keys and values
    as they are: the encoder output is projected once, at the first step.
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
                need_weights: bool = True, *, past_key_value: tuple | None = None, use_cache: bool = False):
        cross = key is not None and key is not query
        key = query if key is None else key
        value = key if value is None else value
        self._check(query, key, value)
        past = self._check_past(past_key_value, query)

        q = self.split_heads(self.q_proj(query))                          # (B, H, T, d_k)
        if cross and past is not None:
            k, v = past                                                   # (B, H, S, d_k): projected once
        else:
            k = self.split_heads(self.k_proj(key))                        # (B, H, S, d_k)
            v = self.split_heads(self.v_proj(value))                      # (B, H, S, d_k)
        caching = past is not None or use_cache
        if not cross and caching and mask is None and not (self.training and self.dropout.p):
            out, weights, k, v = self.attend_step(q, *(past or (None, None)), k, v)   # a decoding step
            weights = weights if need_weights else None
        else:
            if not cross and past is not None:
                k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)   # (B, H, P+S, d_k)
            if mask is not None:
                check_attn_mask(mask, query.shape[0], self.num_heads, query.shape[1], k.shape[2], query.device)
            out, weights = self._attention(q, k, v, mask, need_weights)
        out = self.out_proj(self.merge_heads(out))                        # (B, T, D)
        return (out, weights, (k, v)) if use_cache else (out, weights)    # weights (B, H, T, S)

    def _attention(self, q, k, v, mask, need_weights: bool):
        """The one place where queries meet keys: (out (B, H, T, d_k), weights (B, H, T, S) or None)."""
        p = self.dropout.p if self.training else 0.0
        if need_weights:
            return attend(q, k, v, mask, p)
        return self._fast(q, k, v, mask, p), None

    attend_step = staticmethod(attend_step)

    def _check_past(self, past, query):
        if past is None:
            return None
        if not (isinstance(past, (tuple, list)) and len(past) == 2):
            raise TypeError(f"past_key_value must be a (keys, values) pair, got {type(past).__name__}")
        B, H, d_k = query.shape[0], self.num_heads, self.d_k
        for name, t in zip(("keys", "values"), past):
            check_tensor(f"past_key_value {name}", t, ndim=4)
            if t.shape[0] != B or t.shape[1] != H or t.shape[3] != d_k or t.shape[2] != past[0].shape[2]:
                raise ValueError(f"past_key_value {name} must be (B, H, P, d_k) = ({B}, {H}, P, {d_k}) "
                                 f"for both, got {shape(past[0])} and {shape(past[1])}")
        return tuple(past)

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
        if is_plain_causal(mask) and mask.shape[-2:] == (q.shape[-2], k.shape[-2]):
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)   # causal_mask(T)
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
