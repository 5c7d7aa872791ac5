"""Reference solution of the capstone: multi-head attention and a Transformer block from scratch.
For instructors; no notebook imports this. The names of the submodules are the ones the exercise
asks for, so the checker can copy attnlab's weights into them."""

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """forward(query (B, T, D), key (B, S, D) = query, value = key, mask (.., T, S) bool, True = may
    attend) -> (out (B, T, D), weights (B, H, T, S))."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        B, L, D = x.shape
        return x.view(B, L, self.num_heads, self.d_k).transpose(1, 2)       # (B, H, L, d_k)

    def forward(self, query, key=None, value=None, mask=None):
        key = query if key is None else key
        value = key if value is None else value
        q = self.split_heads(self.q_proj(query))                            # (B, H, T, d_k)
        k = self.split_heads(self.k_proj(key))                              # (B, H, S, d_k)
        v = self.split_heads(self.v_proj(value))                            # (B, H, S, d_k)
        scores = q @ k.transpose(-2, -1) / self.d_k ** 0.5              # (B, H, T, S)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = weights @ v                                                   # (B, H, T, d_k)
        B, H, T, d_k = out.shape
        out = out.transpose(1, 2).reshape(B, T, H * d_k)                    # (B, T, D)
        return self.out_proj(out), weights


class TransformerBlock(nn.Module):
    """post-LN (norm_first=False): x = LN1(x + Drop(Attn(x))); x = LN2(x + Drop(FFN(x)))
    pre-LN  (norm_first=True):  x = x + Drop(Attn(LN1(x))); x = x + Drop(FFN(LN2(x)))"""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, norm_first=False, attention_class=MultiHeadAttention):
        super().__init__()
        self.attention = attention_class(d_model, num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def ffn(self, x):
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.dropout(self.attention(self.norm1(x), mask=mask)[0])
            x = x + self.dropout(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.attention(x, mask=mask)[0]))
            x = self.norm2(x + self.dropout(self.ffn(x)))
        return x
