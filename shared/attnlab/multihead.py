"""Multi-head attention: h heads of size d_k = d_model / h, side by side."""
from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import (check_attn_mask, check_causal_sizes, check_float, check_same, check_tensor, flag,
                      positive_int, probability, shape)
from .attention import attend, attend_fused, autocast_dtype
from .course.i18n import t


def attend_step(q: torch.Tensor, k_cache, v_cache, k_new: torch.Tensor, v_new: torch.Tensor):
    """One decoding step of self-attention with a KV cache.

    q, k_new, v_new (B, H, 1, d_k): the newest position's query, key and value; k_cache, v_cache
    (B, H, t, d_k) or None. Appends the new key and value, then the one query attends to all t + 1
    keys with ``mask=None``: every key is at or before the query's position, so nothing needs
    masking. Returns ``(out (B, H, 1, d_k), weights (B, H, 1, t + 1), k (B, H, t+1, d_k), v)``.
    """
    k = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=2)       # (B, H, t+1, d_k)
    v = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=2)
    out, weights = attend(q, k, v, mask=None)            # the module checked its inputs, once per call
    return out, weights, k, v


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o, head_i = Attention(Q W_q^i, K W_k^i, V W_v^i).

    ``MultiHeadAttention(d_model, num_heads, dropout=0.0, bias=True, *, cross=False)``;
    ``forward(query (B, T, D), key (B, S, D) = query, value (B, S, D) = key, mask=None,
    need_weights=True, *, is_causal=False)`` returns ``(out (B, T, D), weights (B, H, T, S))``;
    the weights are per head and taken before dropout. With ``need_weights=False`` it goes
    through torch's fused kernel and returns ``(out, None)``. Dropout on the weights is active
    in training mode only.

    Which keys a query may attend to is said by the arguments, nothing else:
    ``mask`` (bool, True = may attend), used by its content, 4-D, broadcastable to (B, H, T, S)
    with each dimension equal or 1 (``padding_mask``: (B, 1, 1, S), ``causal_mask``: (1, 1, T, S);
    anything else is refused rather than broadcast onto the wrong axes); and ``is_causal=True``,
    the causal rule, bottom-right aligned (the same as ``mask=causal_mask(T, S)``; with a mask
    too, both apply). A query that may attend to no key gets zeros, on both paths.

    Self- or cross-attention is set at construction. ``cross=False`` (self-attention): ``key``
    and ``value`` default to ``query``. ``cross=True``: ``key`` (and ``value``, default ``key``)
    are required, e.g. the encoder output, and S may differ from T.

    KV cache (decoding one position at a time, as PyTorch and Hugging Face models do):
    ``past_key_value=(k, v)``, the projected keys and values kept from earlier calls
    (B, H, P, d_k), and ``use_cache=True`` to get them back: the result is then
    ``(out, weights, (k, v))``. Self-attention appends the new positions' keys and values after
    the past ones (one new query: ``attend_step``), so the keys are the P + T positions,
    ``mask`` covers them and ``is_causal`` puts the T queries last; ``key``/``value`` are refused
    there (the cache grows by the query's own keys). Cross-attention computes its keys and values
    at the first call and reuses the past ones after that.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True, *, cross: bool = False):
        super().__init__()
        d_model, num_heads = positive_int("d_model", d_model), positive_int("num_heads", num_heads)
        if d_model % num_heads != 0:
            raise ValueError(t("checks.heads_divide", d_model=d_model, num_heads=num_heads))
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.cross = flag("cross", cross)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(probability("dropout", dropout))       # p used on the weights

    def extra_repr(self) -> str:
        return "cross=True" if self.cross else ""

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, L, _ = x.shape
        return x.view(B, L, self.num_heads, self.d_k).transpose(1, 2)      # (B, H, L, d_k)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, _, L, _ = x.shape
        return x.transpose(1, 2).reshape(B, L, self.d_model)              # (B, L, D)

    def forward(self, query: torch.Tensor, key: torch.Tensor | None = None,
                value: torch.Tensor | None = None, mask: torch.Tensor | None = None,
                need_weights: bool = True, *, is_causal: bool = False,
                past_key_value: tuple | None = None, use_cache: bool = False):
        flag("is_causal", is_causal)
        caching = flag("use_cache", use_cache) or past_key_value is not None
        key, value = self._sources(query, key, value, caching)
        past = self._check_past(past_key_value, query, key)

        q = self.split_heads(self.q_proj(query))                          # (B, H, T, d_k)
        if self.cross and past is not None:
            k, v = past                                                   # (B, H, S, d_k): projected once
        else:
            k = self.split_heads(self.k_proj(key))                        # (B, H, S, d_k)
            v = self.split_heads(self.v_proj(value))                      # (B, H, S, d_k)
        step = (not self.cross and caching and mask is None and not (self.training and self.dropout.p)
                and (query.shape[1] == 1 or not is_causal))               # nothing to mask: one new query
        if step:
            out, weights, k, v = self.attend_step(q, *(past or (None, None)), k, v)   # a decoding step
            weights = weights if need_weights else None
        else:
            if not self.cross and past is not None:
                k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)   # (B, H, P+S, d_k)
            T, S = query.shape[1], k.shape[2]
            if mask is not None:
                check_attn_mask(mask, query.shape[0], self.num_heads, T, S, query.device)
            if is_causal:
                check_causal_sizes(T, S)
            out, weights = self._attention(q, k, v, mask, need_weights, is_causal)
        out = self.out_proj(self.merge_heads(out))                        # (B, T, D)
        return (out, weights, (k, v)) if use_cache else (out, weights)    # weights (B, H, T, S)

    def _attention(self, q, k, v, mask, need_weights: bool, is_causal: bool = False):
        """The one place where queries meet keys: (out (B, H, T, d_k), weights (B, H, T, S) or None)."""
        p = self.dropout.p if self.training else 0.0
        if need_weights:
            return attend(q, k, v, mask, p, is_causal=is_causal)
        return attend_fused(q, k, v, mask, p, is_causal=is_causal), None

    attend_step = staticmethod(attend_step)

    def _sources(self, query, key, value, caching: bool):
        """``(key, value)`` as this module reads them: its own query (self-attention) or the given
        key/value (cross-attention), checked once each."""
        check_tensor("query", query, ndim=3)
        check_float("query", query)
        if self.cross:
            if key is None:
                raise ValueError(t("checks.cross_needs_key"))
        elif caching and (key is not None or value is not None):
            raise ValueError(t("checks.self_cache_key"))
        given = {"query": query}
        for name, x in (("key", key), ("value", value)):
            if x is not None:
                check_tensor(name, x, ndim=3)
                check_float(name, x)
                given[name] = x
        if len(given) > 1:
            check_same(**given)
        key = query if key is None else key
        value = key if value is None else value
        if query.shape[-1] != self.d_model or key.shape[-1] != self.d_model or value.shape[-1] != self.d_model:
            raise ValueError(t("checks.mha_width", d_model=self.d_model, q=shape(query), k=shape(key), v=shape(value)))
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(t("checks.mha_batch", q=shape(query), k=shape(key), v=shape(value)))
        w = self.q_proj.weight
        if query.device != w.device or (query.dtype != w.dtype and autocast_dtype(w.device) is None):
            raise ValueError(t("checks.mha_module", dtype=str(query.dtype), device=str(query.device),
                               w_dtype=str(w.dtype), w_device=str(w.device)))
        return key, value

    def _check_past(self, past, query, key):
        if past is None:
            return None
        if not (isinstance(past, (tuple, list)) and len(past) == 2):
            raise TypeError(t("checks.past_type", got=type(past).__name__))
        B, H, d_k = query.shape[0], self.num_heads, self.d_k
        for x in past:
            check_tensor("past_key_value", x, ndim=4)
            if x.shape[0] != B or x.shape[1] != H or x.shape[3] != d_k or x.shape[2] != past[0].shape[2]:
                raise ValueError(t("checks.past_shape", B=B, H=H, d_k=d_k, k=shape(past[0]), v=shape(past[1])))
        if self.cross and past[0].shape[2] != key.shape[1]:
            raise ValueError(t("checks.cross_past_len", P=past[0].shape[2], S=key.shape[1]))
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
