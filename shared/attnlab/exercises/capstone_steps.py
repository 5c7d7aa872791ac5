"""Lesson 09's stepwise checks: the four steps of multi-head attention, one function each, before
the whole class; and the student's block plugged into lesson 07's trained model.

* ``check_split(fn)``: ``fn(x, num_heads)``, (B, L, D) -> (B, H, L, d_k).
* ``check_scores(fn)``: ``fn(q, k)``, (B, H, T, d_k) and (B, H, S, d_k) -> (B, H, T, S) = q kᵀ / √d_k.
* ``check_mask(fn)``: ``fn(scores, mask)`` -> the scores with every cell where the bool ``mask`` is
  False pushed to -inf (or a very negative number): compared after the softmax, on rows that keep
  at least one key (a fully masked row is attnlab's business: it returns zeros there, not NaN);
  returning the weights (the softmax taken already) has its own hint.
* ``check_merge(fn)``: ``fn(x)``, (B, H, T, d_k) -> (B, T, D), the inverse of the split.
* ``check_in_tiny_model(cls)``: ``cls`` is the student's ``TransformerBlock`` (capstone exercise 2);
  four of them, with the weights of lesson 07's checkpoint, replace its blocks; the model must
  reverse the held-out sequences exactly as the checkpoint does, and the accuracy is printed.

Each check has ``diagnose_x(...) -> (ok, message key, fields)`` for the tests, ``evaluate_x`` ->
``Feedback`` and ``check_x`` (prints). The words are in ``messages/capstone_steps.json``; every key
is written out whole, so tests/test_i18n.py finds each one used.
"""
from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn

from ._common import Feedback, Msg, NotDone, call_student, evaluate, printing
from .capstone import _block_rename, _close

__all__ = ["check_split", "check_scores", "check_mask", "check_merge", "check_in_tiny_model"]


def _data(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _shape_hint(got, want, key):
    return False, key, {"got": tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__,
                        "want": tuple(want.shape)}


# ----------------------------------------------------------------------------------- split
def _split_ref(x, H):
    B, L, D = x.shape
    return x.view(B, L, H, D // H).transpose(1, 2)                        # (B, H, L, d_k)


def diagnose_split(fn):
    for B, L, D, H in ((2, 5, 12, 3), (1, 7, 8, 4)):
        x = _data(B, L, D, seed=L)
        got, want = call_student(fn, x.clone(), H), _split_ref(x, H)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return _shape_hint(got, want, "capstone_steps.hint.split_shape")
        if not _close(got, want, 0.0):
            if _close(got, x.view(B, H, L, D // H), 0.0):
                return False, "capstone_steps.hint.split_no_transpose", {}
            return False, "capstone_steps.hint.split_values", {}
    return True, "capstone_steps.ok.split", {}


# ----------------------------------------------------------------------------------- scores
def diagnose_scores(fn):
    q, k = _data(2, 3, 5, 4, seed=11), _data(2, 3, 7, 4, seed=12)        # T = 5, S = 7, d_k = 4
    got, want = call_student(fn, q.clone(), k.clone()), q @ k.transpose(-2, -1) / math.sqrt(4)
    if isinstance(got, torch.Tensor) and got.shape == (2, 3, 7, 5):
        return False, "capstone_steps.hint.scores_transposed", {}
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return _shape_hint(got, want, "capstone_steps.hint.scores_shape")
    if _close(got, want * 2):
        return False, "capstone_steps.hint.scores_no_scale", {}
    if _close(got, want / 2):
        return False, "capstone_steps.hint.scores_dk", {}
    if not _close(got, want):
        return False, "capstone_steps.hint.scores_values", {}
    return True, "capstone_steps.ok.scores", {}


# ----------------------------------------------------------------------------------- mask
def _mask_cases():
    causal = torch.ones(5, 5, dtype=torch.bool).tril().view(1, 1, 5, 5)
    pad = torch.tensor([[True] * 5, [True, True, True, False, False]]).view(2, 1, 1, 5)
    return [causal, pad, causal & pad]                                     # broadcast to (2, 3, 5, 5)


def diagnose_mask(fn):
    scores = _data(2, 3, 5, 5, seed=21)
    for mask in _mask_cases():
        got = call_student(fn, scores.clone(), mask)
        if not isinstance(got, torch.Tensor) or got.shape != scores.shape:
            return _shape_hint(got, scores, "capstone_steps.hint.mask_shape")
        want = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        mine = torch.softmax(got, dim=-1)
        if _close(mine, want):
            continue
        if _close(got, want):
            return False, "capstone_steps.hint.mask_softmax", {}
        if _close(mine, torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)):
            return False, "capstone_steps.hint.mask_inverted", {}
        if _close(got, scores.masked_fill(~mask, 0.0)) or _close(got, scores * mask):
            return False, "capstone_steps.hint.mask_zero", {}
        return False, "capstone_steps.hint.mask_values", {}
    return True, "capstone_steps.ok.mask", {}


# ----------------------------------------------------------------------------------- merge
def diagnose_merge(fn):
    for B, H, T, d_k in ((2, 3, 5, 4), (1, 4, 6, 2)):
        x = _data(B, H, T, d_k, seed=31 + T)
        got, want = call_student(fn, x.clone()), x.transpose(1, 2).reshape(B, T, H * d_k)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return _shape_hint(got, want, "capstone_steps.hint.merge_shape")
        if not _close(got, want, 0.0):
            if _close(got, x.reshape(B, T, H * d_k), 0.0):
                return False, "capstone_steps.hint.merge_no_transpose", {}
            return False, "capstone_steps.hint.merge_values", {}
    return True, "capstone_steps.ok.merge", {}


# ----------------------------------------------------------------------------------- lesson 07's model
class _Adapter(nn.Module):
    """The student's block returns x; lesson 07's model expects ``block(x, mask=, need_weights=)`` -> (x, w)."""

    def __init__(self, block: nn.Module):
        super().__init__()
        self.block = block

    def forward(self, x, mask=None, need_weights=False):
        out = self.block(x, mask=mask)
        return (out[0] if isinstance(out, (tuple, list)) else out), None


_BLOCK_NOT_DONE = "capstone_steps.not_done.tiny"     # this cell has no TODO: the block's exercise is unfinished


def diagnose_in_tiny_model(cls, model=None):
    from .. import reversal

    ref = (reversal.load_pretrained() if model is None else model).eval()
    c = ref.config
    mine = copy.deepcopy(ref)
    probe = _data(1, 4, c.d_model, seed=41)
    blocks = []
    for block in ref.blocks:
        student = call_student(cls, c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=block.norm_first)
        if not list(student.parameters()):
            raise NotDone(_BLOCK_NOT_DONE, block=Msg("capstone.ex.block"))   # exercise 2 not written yet
        wanted = {_block_rename(k): v for k, v in block.state_dict().items()}
        if set(wanted) - set(student.state_dict()):
            return False, "capstone.hint.names", {"names": "attention, norm1, norm2, linear1, linear2"}
        student.load_state_dict(wanted, strict=False)
        student.eval()
        with torch.no_grad():
            try:
                call_student(student, probe, mask=None)
            except (NotDone, NotImplementedError):                        # forward still the TODO
                raise NotDone(_BLOCK_NOT_DONE, block=Msg("capstone.ex.block")) from None
        blocks.append(_Adapter(student))
    mine.blocks = nn.ModuleList(blocks)
    held = reversal.heldout()[:64]
    with torch.no_grad():
        same = torch.allclose(mine(held[:, :-1])[0], ref(held[:, :-1])[0], atol=1e-4, rtol=1e-4)
    acc_ref, acc_mine = reversal.accuracy(ref), reversal.accuracy(mine)
    fields = {"mine": 100 * acc_mine, "ref": 100 * acc_ref}
    if not same or abs(acc_mine - acc_ref) > 0.002:
        return False, "capstone_steps.hint.tiny_differs", fields
    return True, "capstone_steps.ok.tiny", fields


# ----------------------------------------------------------------------------------- public API
def evaluate_split(fn, lang: str | None = None) -> Feedback:
    """Step 1: ``fn(x, num_heads)`` splits (B, L, D) into (B, H, L, d_k)."""
    return evaluate("capstone_steps.ex.split", lambda: diagnose_split(fn), lang)


def evaluate_scores(fn, lang: str | None = None) -> Feedback:
    """Step 2: ``fn(q, k)`` -> the scaled scores (B, H, T, S)."""
    return evaluate("capstone_steps.ex.scores", lambda: diagnose_scores(fn), lang)


def evaluate_mask(fn, lang: str | None = None) -> Feedback:
    """Step 3: ``fn(scores, mask)`` -> the scores with the masked cells at -inf (mask: True = may attend)."""
    return evaluate("capstone_steps.ex.mask", lambda: diagnose_mask(fn), lang)


def evaluate_merge(fn, lang: str | None = None) -> Feedback:
    """Step 4: ``fn(x)`` merges (B, H, T, d_k) back into (B, T, D)."""
    return evaluate("capstone_steps.ex.merge", lambda: diagnose_merge(fn), lang)


def evaluate_in_tiny_model(cls, model=None, lang: str | None = None) -> Feedback:
    """The student's ``TransformerBlock`` in lesson 07's trained model: the same answers, the same accuracy."""
    return evaluate("capstone_steps.ex.tiny", lambda: diagnose_in_tiny_model(cls, model), lang)


check_split = printing(evaluate_split)
check_scores = printing(evaluate_scores)
check_mask = printing(evaluate_mask)
check_merge = printing(evaluate_merge)
check_in_tiny_model = printing(evaluate_in_tiny_model)
