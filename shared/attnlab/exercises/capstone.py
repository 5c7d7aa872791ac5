"""Capstone checkers: multi-head attention and a Transformer block written from scratch.

* ``check_multihead(cls)``: ``cls(d_model, num_heads)`` with ``nn.Linear`` submodules
  ``q_proj, k_proj, v_proj, out_proj``; ``forward(query, key=None, value=None, mask=None)``
  returns ``(out (B, T, D), weights (B, H, T, S))``; ``key`` defaults to ``query`` and ``value``
  to ``key``; mask bool, True = may attend. (``capstone_mha``)
* ``check_block(cls)``: ``cls(d_model, num_heads, d_ff, dropout=0.1, norm_first=False)`` with
  submodules ``attention, norm1, norm2, linear1, linear2``; ``forward(x, mask=None)`` returns x.
  (``capstone_block``)

Each checker copies the weights of ``attnlab.MultiHeadAttention`` / ``attnlab.TransformerBlock``
into the student's module at sizes drawn per run, compares with attnlab's outputs and matches a
wrong answer against the typical mistakes, each with its own hint. This module keeps the names the
lessons and the assignments call (``attnlab.exercises.capstone.check_multihead`` ...).
"""
from __future__ import annotations

from ._common import printing
from .capstone_block import BLOCK, evaluate_block, judge_block, probe_block
from .capstone_mha import MULTIHEAD, evaluate_multihead, judge_multihead, probe_multihead

__all__ = ["check_multihead", "evaluate_multihead", "probe_multihead", "judge_multihead",
           "check_block", "evaluate_block", "probe_block", "judge_block", "EXERCISES"]

check_multihead = printing(evaluate_multihead)
check_block = printing(evaluate_block)

EXERCISES = (MULTIHEAD, BLOCK)
