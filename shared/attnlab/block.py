"""The Transformer block: attention and a feed-forward network, each wrapped in a residual and a LayerNorm."""
from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import positive_int, probability
from .course.i18n import t
from .multihead import MultiHeadAttention


class FeedForward(nn.Module):
    """Position-wise FFN(x) = W_2 ReLU(W_1 x + b_1) + b_2, d_model -> d_ff -> d_model."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        d_model, d_ff = positive_int("d_model", d_model), positive_int("d_ff", d_ff)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(probability("dropout", dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))           # (B, T, D)


def _attn_dropout(dropout: float, attn_dropout: float | None) -> float:
    return probability("dropout", dropout) if attn_dropout is None else probability("attn_dropout", attn_dropout)


class TransformerBlock(nn.Module):
    """Encoder / decoder-only block.

    post-LN (the paper, default): x = LN(x + Drop(Attn(x)));  x = LN(x + Drop(FFN(x)))
    pre-LN  (GPT-2, norm_first):  x = x + Drop(Attn(LN(x)));  x = x + Drop(FFN(LN(x)))

    Dropout, as in ``nn.TransformerEncoderLayer`` (training mode only), in three places: on the
    attention weights (``attn_dropout``, default ``dropout``), inside the FFN after the ReLU,
    and on each sub-layer's output before the residual sum (``dropout``).

    ``forward(x (B, T, D), mask=None, need_weights=False, *, is_causal=False)`` returns
    ``(x, weights)`` where ``weights`` is (B, H, T, T) if asked for, else None. ``mask``: as in
    ``MultiHeadAttention``, 4-D broadcastable to (B, H, T, T), used by its content;
    ``is_causal=True``: the causal rule (a decoder-only stack; an encoder leaves it False), per
    call, like ``nn.TransformerEncoderLayer``'s ``is_causal``, so one block class serves both
    and the model that stacks the blocks says which it is. KV cache: ``past_key_value=(k, v)``
    of the earlier positions and ``use_cache=True`` return ``(x, weights, (k, v))`` (see
    ``MultiHeadAttention``; with ``is_causal`` the new positions come after the cached ones).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False,
                 *, attn_dropout: float | None = None):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, num_heads, dropout=_attn_dropout(dropout, attn_dropout))
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = False,
                *, is_causal: bool = False, past_key_value: tuple | None = None, use_cache: bool = False):
        def attn(h):
            return _with_present(self.attention(h, mask=mask, need_weights=need_weights, is_causal=is_causal,
                                                past_key_value=past_key_value, use_cache=use_cache))

        if self.norm_first:
            a, weights, present = attn(self.norm1(x))
            x = x + self.dropout(a)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            a, weights, present = attn(x)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return (x, weights, present) if use_cache else (x, weights)


class DecoderBlock(nn.Module):
    """Encoder-decoder block: masked self-attention, cross-attention to the encoder output, FFN.

    ``forward(x (B, T, D), memory (B, S, D), self_mask (.., T, T), memory_mask (.., T, S),
    need_weights=False, *, is_causal=False)`` returns ``(x, self_weights (B, H, T, T),
    cross_weights (B, H, T, S))`` (None unless asked for). ``is_causal`` is the self-attention's
    (``tgt_is_causal`` in ``nn.TransformerDecoderLayer``); the cross-attention sees all of memory
    that ``memory_mask`` allows. ``self_attention`` is built as self-attention and
    ``cross_attention`` with ``cross=True``: which is which is fixed, never guessed from the inputs.
    Dropout as in ``nn.TransformerDecoderLayer``: on both attentions' weights (``attn_dropout``,
    default ``dropout``), inside the FFN and on each sub-layer's output (``dropout``).

    KV cache: ``past_key_value=(self_k, self_v, cross_k, cross_v)`` (Hugging Face's per-layer
    layout; None at the first step) and ``use_cache=True`` return ``(x, w_self, w_cross, present)``
    with the same layout: the self-attention keys and values grow by the new positions, the
    cross-attention ones are those of ``memory``, computed at the first step and reused.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False,
                 *, attn_dropout: float | None = None):
        super().__init__()
        p_attn = _attn_dropout(dropout, attn_dropout)
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout=p_attn)
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout=p_attn, cross=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, self_mask=None, memory_mask=None, need_weights: bool = False,
                *, is_causal: bool = False, past_key_value: tuple | None = None, use_cache: bool = False):
        past = _split_past(past_key_value)

        def self_attn(h):
            return _with_present(self.self_attention(h, mask=self_mask, need_weights=need_weights, is_causal=is_causal,
                                                     past_key_value=past[0], use_cache=use_cache))

        def cross_attn(h):
            return _with_present(self.cross_attention(h, memory, memory, mask=memory_mask, need_weights=need_weights,
                                                      past_key_value=past[1], use_cache=use_cache))

        if self.norm_first:
            a, w_self, kv_self = self_attn(self.norm1(x))
            x = x + self.dropout(a)
            c, w_cross, kv_cross = cross_attn(self.norm2(x))
            x = x + self.dropout(c)
            x = x + self.dropout(self.feed_forward(self.norm3(x)))
        else:
            a, w_self, kv_self = self_attn(x)
            x = self.norm1(x + self.dropout(a))
            c, w_cross, kv_cross = cross_attn(x)
            x = self.norm2(x + self.dropout(c))
            x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return (x, w_self, w_cross, kv_self + kv_cross) if use_cache else (x, w_self, w_cross)


def _with_present(result: tuple) -> tuple:
    """(out, weights) or (out, weights, present) -> always (out, weights, present or None)."""
    return result if len(result) == 3 else (*result, None)


def _split_past(past) -> tuple:
    """(self_k, self_v, cross_k, cross_v) or None -> ((self_k, self_v), (cross_k, cross_v)) or (None, None)."""
    if past is None:
        return None, None
    if not (isinstance(past, (tuple, list)) and len(past) == 4):
        raise TypeError(t("checks.decoder_past", got=type(past).__name__))
    return tuple(past[:2]), tuple(past[2:])
