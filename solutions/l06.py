"""Reference solutions for lesson 06 (encoder, decoder, GPT). For instructors; no notebook imports this."""
from __future__ import annotations

import torch

import attnlab


def block_params(d_model: int, num_heads: int, d_ff: int) -> int:
    """Parameters of attnlab.TransformerBlock(d_model, num_heads, d_ff).

    Attention: q_proj, k_proj, v_proj, out_proj, each nn.Linear(d_model, d_model) with bias:
    4 (d_model^2 + d_model). The number of heads does not matter: the heads split d_model.
    Feed-forward: (d_model d_ff + d_ff) + (d_ff d_model + d_model). Two LayerNorms: 2 * 2 d_model.
    """
    attention = 4 * (d_model * d_model + d_model)
    feed_forward = (d_model * d_ff + d_ff) + (d_ff * d_model + d_model)
    norms = 2 * (2 * d_model)
    return attention + feed_forward + norms


def make_masks(src_ids: torch.Tensor, tgt_ids: torch.Tensor, pad_id: int = 0):
    """(encoder (B,1,S,S), decoder self-attention (B,1,T,T), cross-attention (B,1,T,S)), True = may attend.

    Encoder: source padding only (bidirectional). Decoder: causal AND target padding.
    Cross-attention: target queries may see every non-padding source key (no causal mask).
    """
    B, S = src_ids.shape
    T = tgt_ids.shape[1]
    src_keys = attnlab.padding_mask(src_ids, pad_id)                 # (B, 1, 1, S)
    enc = src_keys.expand(B, 1, S, S)
    dec = attnlab.decoder_mask(tgt_ids, pad_id)                      # (B, 1, T, T)
    cross = src_keys.expand(B, 1, T, S)
    return enc, dec, cross


def greedy_step(model, ids: torch.Tensor, max_len: int) -> torch.Tensor:
    """Append the most likely next token: (B, T) -> (B, T+1). The model sees at most the last max_len tokens."""
    with torch.no_grad():
        logits = model(ids[:, -max_len:])                            # (B, min(T, max_len), V)
    next_id = logits[:, -1, :].argmax(dim=-1, keepdim=True)          # (B, 1)
    return torch.cat([ids, next_id], dim=1)                          # (B, T+1)
