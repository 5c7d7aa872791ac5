"""The Transformer block: attention and a feed-forward network, each wrapped in a residual and a LayerNorm."""
from __future__ import annotations

import torch
import torch.nn as nn

from ._checks import positive_int, probability
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


class TransformerBlock(nn.Module):
    """Encoder / decoder-only block.

    post-LN (the paper, default): x = LN(x + Drop(Attn(x)));  x = LN(x + Drop(FFN(x)))
    pre-LN  (GPT-2, norm_first):  x = x + Drop(Attn(LN(x)));  x = x + Drop(FFN(LN(x)))

    ``forward(x (B, T, D), mask=None, need_weights=False)`` returns ``(x, weights)`` where
    ``weights`` is (B, H, T, T) if asked for, else None. ``mask``: as in ``MultiHeadAttention``,
    4-D broadcastable to (B, H, T, T) or 2-D (T, T).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, num_heads, dropout=0.0)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = False):
        if self.norm_first:
            a, weights = self.attention(self.norm1(x), mask=mask, need_weights=need_weights)
            x = x + self.dropout(a)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            a, weights = self.attention(x, mask=mask, need_weights=need_weights)
            x = self.norm1(x + self.dropout(a))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights


class DecoderBlock(nn.Module):
    """Encoder-decoder block: masked self-attention, cross-attention to the encoder output, FFN.

    ``forward(x (B, T, D), memory (B, S, D), self_mask (.., T, T), memory_mask (.., T, S))``
    returns ``(x, self_weights (B, H, T, T), cross_weights (B, H, T, S))`` (None unless asked for).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False):
        super().__init__()
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout=0.0)
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout=0.0)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, memory, self_mask=None, memory_mask=None, need_weights: bool = False):
        def self_attn(h):
            return self.self_attention(h, mask=self_mask, need_weights=need_weights)

        def cross_attn(h):
            return self.cross_attention(h, memory, memory, mask=memory_mask, need_weights=need_weights)

        if self.norm_first:
            a, w_self = self_attn(self.norm1(x))
            x = x + self.dropout(a)
            c, w_cross = cross_attn(self.norm2(x))
            x = x + self.dropout(c)
            x = x + self.dropout(self.feed_forward(self.norm3(x)))
        else:
            a, w_self = self_attn(x)
            x = self.norm1(x + self.dropout(a))
            c, w_cross = cross_attn(x)
            x = self.norm2(x + self.dropout(c))
            x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return x, w_self, w_cross
