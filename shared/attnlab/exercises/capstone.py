"""Capstone checkers: multi-head attention and a Transformer block written from scratch.

* ``check_multihead(cls)``: ``cls(d_model, num_heads)`` with ``nn.Linear`` submodules
  ``q_proj, k_proj, v_proj, out_proj``; ``forward(query, key=None, value=None, mask=None)``
  returns ``(out (B, T, D), weights (B, H, T, S))``; ``key`` defaults to ``query`` and ``value``
  to ``key``; mask bool, True = may attend.
* ``check_block(cls)``: ``cls(d_model, num_heads, d_ff, dropout=0.1, norm_first=False)`` with
  submodules ``attention, norm1, norm2, linear1, linear2``; ``forward(x, mask=None)`` returns x.

The checker copies the weights of ``attnlab.MultiHeadAttention`` / ``attnlab.TransformerBlock``
into the student's module (LayerNorms with random gains and biases), compares with attnlab's
outputs (self- and cross-attention with distinct key and value, padding and causal masks; the
block in eval mode and, with the same random draws, in training mode, so every dropout shows) and
matches a wrong answer against the typical mistakes, each with its own hint: a mistake that
changes the attention weights is recognised on the weights, one that changes only the output
on the output. The block's attention sublayer is the student's own class of exercise 1: it is
checked first (self-attention, as the block uses it), and a wrong one is named as such, never
mistaken for a mistake of the block.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..block import TransformerBlock
from ..masks import causal_mask
from ..multihead import MultiHeadAttention
from ._common import Diagnosis, Feedback, NotDone, call_student, evaluate, max_diff, printing
from ._common import close, seed as _seed

__all__ = ["check_multihead", "evaluate_multihead", "check_block", "evaluate_block"]

TOL = 1e-5
MHA_NAMES = ("q_proj", "k_proj", "v_proj", "out_proj")
BLOCK_NAMES = ("attention", "norm1", "norm2", "linear1", "linear2")
P_DROP = 0.5


def _close(a, b, tol: float = TOL) -> bool:
    """Same shape and close values; NaN matches NaN (a mistake may produce them where the reference does)."""
    return close(a, b, rtol=tol, atol=tol, equal_nan=True)


def _build(cls, *args, **kwargs) -> nn.Module:
    module = call_student(cls, *args, **kwargs)
    if not isinstance(module, nn.Module) or not list(module.parameters()):
        raise NotDone                                      # the untouched skeleton: no submodule yet
    return module


def _copy(student: nn.Module, ref_state: dict[str, torch.Tensor], rename=lambda k: k):
    """Load attnlab's weights into the student's module; the hint key if its names differ."""
    wanted = {rename(k): v for k, v in ref_state.items()}
    if _mismatched(student, wanted):
        return "capstone.hint.names"
    student.load_state_dict(wanted, strict=False)
    return None


def _mismatched(student: nn.Module, wanted: dict[str, torch.Tensor]) -> list[str]:
    """The names of ``wanted`` the student's module lacks, or has with another shape."""
    have = student.state_dict()
    return [k for k, v in wanted.items() if k not in have or have[k].shape != v.shape]


# ------------------------------------------------------------------------ multi-head attention
def _mha_cases():
    """(query, key, value, mask): self-attention with and without masks, then cross-attention where
    key is given and value defaults to it (S = T, so a wrong default still runs), and where key and
    value are different tensors with S != T, with and without a padding mask."""
    g = torch.Generator().manual_seed(1201)
    x = torch.randn(2, 5, 12, generator=g)                                # (B, T, D)
    memory5 = torch.randn(2, 5, 12, generator=g)                          # (B, S = T, D)
    memory = torch.randn(2, 7, 12, generator=g)                           # (B, S, D), S != T
    values = torch.randn(2, 7, 12, generator=g)                           # (B, S, D), not the keys
    pad = torch.tensor([[True] * 5, [True, True, True, False, False]]).view(2, 1, 1, 5)   # (B, 1, 1, T)
    pad_s = torch.tensor([[True] * 7, [True] * 4 + [False] * 3]).view(2, 1, 1, 7)         # (B, 1, 1, S)
    return [
        (x, None, None, None),
        (x, None, None, pad),
        (x, None, None, causal_mask(5)),
        (x, memory5, None, None),
        (x, memory, values, None),
        (x, memory, values, pad_s),
    ]


def _reference_mha(d_model: int = 12, num_heads: int = 3) -> MultiHeadAttention:
    _seed(1202)
    return MultiHeadAttention(d_model, num_heads).eval()


def _mha_variant(ref, query, key, value, mask, *, scale=True, split_t=True, merge_t=True, mask_mode="ok",
                 softmax_dim=-1, kv_from_query=False, value_from="value", value_default="key", out_proj=True):
    """attnlab's computation with one typical mistake switched on: (out (B, T, D), weights)."""
    given_key = key
    key = query if key is None or kv_from_query else key
    if kv_from_query:
        value = query
    elif value is None:
        value = query if value_default == "query" else key
    if value_from == "key":                                               # v_proj(key): value ignored
        value = key if given_key is not None else query
    B, T, D = query.shape
    S, H = key.shape[1], ref.num_heads
    d_k = D // H

    def split(x, L):
        return x.view(B, L, H, d_k).transpose(1, 2) if split_t else x.view(B, H, L, d_k)   # (B, H, L, d_k)

    q, k, v = split(ref.q_proj(query), T), split(ref.k_proj(key), S), split(ref.v_proj(value), S)
    scores = q @ k.transpose(-2, -1)                                      # (B, H, T, S)
    if scale:
        scores = scores / math.sqrt(D if scale == "d_model" else d_k)
    if mask is not None and mask_mode != "ignored":
        keep = ~mask if mask_mode == "inverted" else mask
        scores = scores.masked_fill(~keep, 0.0 if mask_mode == "zero" else float("-inf"))
    w = torch.softmax(scores, dim=softmax_dim)
    out = w @ v                                                           # (B, H, T, d_k)
    out = out.transpose(1, 2).reshape(B, T, D) if merge_t else out.reshape(B, T, D)
    return (ref.out_proj(out) if out_proj else out), w


# (hint, the mistake): weights-changing mistakes first (recognised on the weights), then the ones
# that change only the output (recognised on the output).
_MHA_MISTAKES = (
    ("capstone.hint.no_scale", {"scale": False}),
    ("capstone.hint.scale_d_model", {"scale": "d_model"}),
    ("capstone.hint.split_heads", {"split_t": False}),
    ("capstone.hint.split_heads", {"split_t": False, "merge_t": False}),
    ("capstone.hint.mask_inverted", {"mask_mode": "inverted"}),
    ("capstone.hint.mask_zero", {"mask_mode": "zero"}),
    ("capstone.hint.mask_ignored", {"mask_mode": "ignored"}),
    ("capstone.hint.softmax_dim", {"softmax_dim": -2}),
    ("capstone.hint.kv_from_query", {"kv_from_query": True}),
    ("capstone.hint.merge_heads", {"merge_t": False}),
    ("capstone.hint.no_out_proj", {"out_proj": False}),
    ("capstone.hint.value_ignored", {"value_from": "key"}),
    ("capstone.hint.value_default", {"value_default": "query"}),
)


def _mha_mistake(ref, query, key, value, mask, out, w) -> Diagnosis | None:
    ref_out, ref_w = ref(query, key, value, mask)
    for hint, flags in _MHA_MISTAKES:
        v_out, v_w = _mha_variant(ref, query, key, value, mask, **flags)
        changes_weights = not _close(v_w, ref_w)
        if changes_weights and _close(w, v_w):
            return False, hint, {}
        if not changes_weights and not _close(v_out, ref_out) and _close(w, ref_w) and _close(out, v_out):
            return False, hint, {}
    return None


def diagnose_multihead(cls) -> Diagnosis:
    ref = _reference_mha()
    student = _build(cls, 12, 3)
    problem = _copy(student, ref.state_dict())
    if problem:
        return False, problem, {"names": ", ".join(MHA_NAMES)}
    student.eval()
    with torch.no_grad():
        for query, key, value, mask in _mha_cases():
            try:
                result = call_student(student, query.clone(), None if key is None else key.clone(),
                                      None if value is None else value.clone(), mask)
            except RuntimeError as err:
                if key is not None and key.shape[1] != query.shape[1] and "invalid for input of size" in str(err):
                    return False, "capstone.hint.cross_sizes", {}
                raise
            if not (isinstance(result, (tuple, list)) and len(result) == 2
                    and all(isinstance(r, torch.Tensor) for r in result)):
                return False, "capstone.hint.return_pair", {}
            out, w = result
            ref_out, ref_w = ref(query, key, value, mask)
            if _close(out, ref_out) and _close(w, ref_w):
                continue
            if _close(out, ref_w) and _close(w, ref_out):
                return False, "capstone.hint.return_order", {}
            mistake = _mha_mistake(ref, query, key, value, mask, out, w)
            if mistake:
                return mistake
            if out.shape != ref_out.shape or w.shape != ref_w.shape:
                return False, "capstone.hint.shapes", {"out": tuple(out.shape), "w": tuple(w.shape),
                                                       "want_out": tuple(ref_out.shape), "want_w": tuple(ref_w.shape)}
            return False, "capstone.hint.mha_mismatch", {"diff": max_diff(out, ref_out)}
    return True, "capstone.ok.multihead", {}


# ------------------------------------------------------------------------ the Transformer block
def _block_rename(key: str) -> str:
    return key.replace("feed_forward.", "")                     # attnlab nests linear1/linear2 in feed_forward


def _reference_block(norm_first: bool, dropout: float = 0.0) -> TransformerBlock:
    _seed(1203)
    with torch.no_grad():
        block = TransformerBlock(12, 3, 20, dropout=dropout, norm_first=norm_first)
        for norm in (block.norm1, block.norm2):                 # gains and biases that make the order of LN matter
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    return block.eval()


def _block_variant(ref: TransformerBlock, x, mask, *, norm_first, residual=(True, True), use_mask=True):
    """attnlab's block with one typical mistake."""
    m = mask if use_mask else None

    def attn(h):
        return ref.attention(h, mask=m)[0]

    subs = (attn, ref.feed_forward)
    norms = (ref.norm1, ref.norm2)
    for sub, norm, res in zip(subs, norms, residual):
        if norm_first:
            x = (x if res else 0) + sub(norm(x))
        else:
            x = norm((x if res else 0) + sub(x))
    return x


def _train_variant(ref: TransformerBlock, x, mask, seed: int, *, inner=True, outer=True):
    """attnlab's block in training mode, dropout p = P_DROP drawn from ``seed`` in the order any right
    block draws it (attention output, the FFN's hidden layer, the FFN output); ``inner`` / ``outer``
    switch the FFN's inner dropout / the dropouts on the sublayer outputs off."""
    _seed(seed)
    ff = ref.feed_forward

    def drop(h, on):
        return F.dropout(h, P_DROP, training=True) if on else h

    def ffn(h):
        return ff.linear2(drop(torch.relu(ff.linear1(h)), inner))

    if ref.norm_first:
        x = x + drop(ref.attention(ref.norm1(x), mask=mask)[0], outer)
        return x + drop(ffn(ref.norm2(x)), outer)
    x = ref.norm1(x + drop(ref.attention(x, mask=mask)[0], outer))
    return ref.norm2(x + drop(ffn(x), outer))


def _block_output(student, x, mask):
    out = call_student(student, x.clone(), mask=mask)
    return out[0] if isinstance(out, (tuple, list)) and out else out


def _attention_wrong(student, ref, x, mask) -> bool:
    """The block's attention sublayer (the student's class of exercise 1, with attnlab's weights)
    differs from attnlab's on self-attention: every block mistake would then be a guess."""
    attended = call_student(student.attention, x.clone(), mask=mask)
    return not _close(attended[0] if isinstance(attended, (tuple, list)) else attended, ref.attention(x, mask=mask)[0])


def _attention_not_done(student, ref_state) -> bool:
    """Only the names inside ``self.attention`` differ, and it is the student's own class (exercise 1
    not done yet, or its submodules named otherwise), not one of torch's."""
    attention = getattr(student, "attention", None)
    bad = _mismatched(student, {_block_rename(k): v for k, v in ref_state.items()})
    return (isinstance(attention, nn.Module) and not type(attention).__module__.startswith("torch.")
            and all(k.startswith("attention.") for k in bad))


def _block_mistake(student, ref, x, mask, out, expected, norm_first) -> Diagnosis:
    style = "pre-LN" if norm_first else "post-LN"
    mistakes = [("capstone.hint.pre_post_swapped", {"norm_first": not norm_first})]
    mistakes += [("capstone.hint.no_residual", {"norm_first": norm_first, "residual": r})
                 for r in ((False, True), (True, False), (False, False))]
    mistakes += [("capstone.hint.block_mask", {"norm_first": norm_first, "use_mask": False})]
    for key, flags in mistakes:
        if _close(out, _block_variant(ref, x, mask, **flags)):
            return False, key, {"style": style}
    return False, "capstone.hint.block_mismatch", {"style": style, "diff": max_diff(out, expected)}


def _dropout_mistake(student, ref, x, mask, out_eval) -> Diagnosis | None:
    """In training mode, with the random draws of a right block, the student's block gives its output."""
    _seed(7)
    got = _block_output(student, x, mask)
    if _close(got, _train_variant(ref, x, mask, 7)):
        return None
    if _close(got, out_eval):
        return False, "capstone.hint.dropout_never", {}
    if _close(got, _train_variant(ref, x, mask, 7, inner=False)):
        return False, "capstone.hint.ffn_dropout", {}
    if _close(got, _train_variant(ref, x, mask, 7, outer=False)):
        return False, "capstone.hint.dropout_outputs", {}
    return False, "capstone.hint.dropout_where", {}


def diagnose_block(cls) -> Diagnosis:
    g = torch.Generator().manual_seed(1204)
    x = torch.randn(2, 6, 12, generator=g)                                # (B, T, D)
    mask = causal_mask(6)                                                 # (1, 1, T, T)
    for norm_first in (False, True):
        ref = _reference_block(norm_first)
        student = _build(cls, 12, 3, 20, dropout=P_DROP, norm_first=norm_first)
        problem = _copy(student, ref.state_dict(), _block_rename)
        if problem and _attention_not_done(student, ref.state_dict()):
            return False, "capstone.hint.attention_first", {}
        if problem:
            return False, problem, {"names": ", ".join(BLOCK_NAMES)}
        student.eval()
        with torch.no_grad():
            if _attention_wrong(student, ref, x, mask):          # exercise 1's mistake, not the block's
                return False, "capstone.hint.attention_first", {}
            out = _block_output(student, x, mask)
            if not isinstance(out, torch.Tensor) or out.shape != x.shape:
                return False, "capstone.hint.block_shape", {"want": tuple(x.shape)}
            if not _close(_block_output(student, x, mask), out, 0.0):
                return False, "capstone.hint.dropout_eval", {}
            expected = ref(x, mask)[0]
            if not _close(out, expected):
                return _block_mistake(student, ref, x, mask, out, expected, norm_first)
        student.train()                                                   # dropout must act while training
        with torch.no_grad():
            mistake = _dropout_mistake(student, ref, x, mask, out)
        if mistake:
            return mistake
    return True, "capstone.ok.block", {}


def evaluate_multihead(cls, lang: str | None = None) -> Feedback:
    """Capstone 1: ``cls(d_model, num_heads)``, multi-head attention from scratch."""
    return evaluate("capstone.ex.multihead", lambda: diagnose_multihead(cls), lang)


def evaluate_block(cls, lang: str | None = None) -> Feedback:
    """Capstone 2: ``cls(d_model, num_heads, d_ff, dropout, norm_first)``, a Transformer block from scratch."""
    return evaluate("capstone.ex.block", lambda: diagnose_block(cls), lang)


check_multihead = printing(evaluate_multihead)
check_block = printing(evaluate_block)
