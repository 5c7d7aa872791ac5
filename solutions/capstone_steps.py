"""Reference solutions of lesson 09's stepwise checks (attnlab.exercises.capstone_steps)."""
from __future__ import annotations


import torch


def split_heads(x, num_heads):
    B, L, D = x.shape
    return x.view(B, L, num_heads, D // num_heads).transpose(1, 2)        # (B, H, L, d_k)


def attention_scores(q, k):
    return q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5               # (B, H, T, S)


def apply_mask(scores, mask):
    return scores.masked_fill(~mask, float("-inf"))                      # True = may attend


def merge_heads(x):
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)                      # (B, T, D)
