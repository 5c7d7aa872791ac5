"""Capstone checkers: multi-head attention and a Transformer block written from scratch.

* ``check_multihead(cls)``: ``cls(d_model, num_heads)`` with ``nn.Linear`` submodules
  ``q_proj, k_proj, v_proj, out_proj``; ``forward(query, key=None, value=None, mask=None)``
  returns ``(out (B, T, D), weights (B, H, T, S))``; mask bool, True = may attend.
* ``check_block(cls)``: ``cls(d_model, num_heads, d_ff, dropout=0.1, norm_first=False)`` with
  submodules ``attention, norm1, norm2, linear1, linear2``; ``forward(x, mask=None)`` returns x.

The checker copies the weights of ``attnlab.MultiHeadAttention`` / ``attnlab.TransformerBlock``
into the student's module (LayerNorms with random gains and biases), compares the outputs with
attnlab's and with PyTorch's (``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``) and
matches a wrong answer against the typical mistakes, each with its own hint.
"""
from __future__ import annotations

import functools
import math

import torch
import torch.nn as nn

from ..block import TransformerBlock
from ..masks import causal_mask
from ..multihead import MultiHeadAttention
from ..i18n import t
from ._common import Feedback, NotDone, call_student, evaluate, printing

__all__ = ["check_multihead", "evaluate_multihead", "check_block", "evaluate_block"]

TOL = 1e-5
MHA_NAMES = ("q_proj", "k_proj", "v_proj", "out_proj")
BLOCK_NAMES = ("attention", "norm1", "norm2", "linear1", "linear2")


def _close(a, b, tol: float = TOL) -> bool:
    """Same shape and close values; NaN matches NaN (a mistake may produce them where the reference does)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    return bool(torch.allclose(a.detach().double(), b.detach().double(), rtol=tol, atol=tol, equal_nan=True))


def _build(cls, *args, **kwargs) -> nn.Module:
    module = call_student(cls, *args, **kwargs)
    if not list(module.parameters()):
        raise NotDone                                      # the untouched skeleton: no submodule yet
    return module


def _copy(student: nn.Module, ref_state: dict[str, torch.Tensor], rename=lambda k: k):
    """Load attnlab's weights into the student's module; the hint key if its names differ."""
    wanted = {rename(k): v for k, v in ref_state.items()}
    have = student.state_dict()
    missing = sorted(set(wanted) - set(have))
    if missing or any(have[k].shape != v.shape for k, v in wanted.items()):
        return "capstone.hint.names"
    student.load_state_dict(wanted, strict=False)
    return None


# ------------------------------------------------------------------------ multi-head attention
def _mha_cases():
    g = torch.Generator().manual_seed(1201)
    x = torch.randn(2, 5, 12, generator=g)                                # (B, T, D)
    memory = torch.randn(2, 7, 12, generator=g)                           # (B, S, D), S != T
    pad = torch.tensor([[True] * 5, [True, True, True, False, False]]).view(2, 1, 1, 5)   # (B, 1, 1, S)
    return [                                                              # (query, key, value, mask)
        (x, None, None, None),
        (x, None, None, pad),
        (x, None, None, causal_mask(5)),
        (x, memory, memory, None),
    ]


def _reference_mha(d_model: int = 12, num_heads: int = 3) -> MultiHeadAttention:
    torch.manual_seed(1202)
    return MultiHeadAttention(d_model, num_heads).eval()


def _mha_variant(ref, query, key, value, mask, *, scale=True, split_t=True, merge_t=True,
                 mask_mode="ok", softmax_dim=-1, kv_from_query=False):
    """attnlab's computation with one typical mistake switched on: (out (B, T, D), weights)."""
    key = query if key is None or kv_from_query else key
    value = key if value is None or kv_from_query else value
    B, T, D = query.shape
    S, H = key.shape[1], ref.num_heads
    d_k = D // H

    def split(x, L):
        return x.view(B, L, H, d_k).transpose(1, 2) if split_t else x.view(B, H, L, d_k)   # (B, H, L, d_k)

    q, k, v = split(ref.q_proj(query), T), split(ref.k_proj(key), S), split(ref.v_proj(value), S)
    scores = q @ k.transpose(-2, -1)                                      # (B, H, T, S)
    if scale:
        scores = scores / math.sqrt(d_k)
    if mask is not None and mask_mode != "ignored":
        keep = ~mask if mask_mode == "inverted" else mask
        scores = scores.masked_fill(~keep, 0.0 if mask_mode == "zero" else float("-inf"))
    w = torch.softmax(scores, dim=softmax_dim)
    out = w @ v                                                           # (B, H, T, d_k)
    out = out.transpose(1, 2).reshape(B, T, D) if merge_t else out.reshape(B, T, D)
    return ref.out_proj(out), w


_MHA_MISTAKES = (
    ("capstone.hint.no_scale", {"scale": False}),
    ("capstone.hint.split_heads", {"split_t": False}),
    ("capstone.hint.merge_heads", {"merge_t": False}),
    ("capstone.hint.split_heads", {"split_t": False, "merge_t": False}),
    ("capstone.hint.mask_inverted", {"mask_mode": "inverted"}),
    ("capstone.hint.mask_zero", {"mask_mode": "zero"}),
    ("capstone.hint.mask_ignored", {"mask_mode": "ignored"}),
    ("capstone.hint.softmax_dim", {"softmax_dim": -2}),
    ("capstone.hint.kv_from_query", {"kv_from_query": True}),
)


def _torch_mha(ref: MultiHeadAttention, query, key, value, mask):
    """The same layer as torch.nn.MultiheadAttention (PyTorch's mask: True = blocked)."""
    D, H = ref.d_model, ref.num_heads
    tm = nn.MultiheadAttention(D, H, batch_first=True).eval()
    ref.copy_to(tm)
    key = query if key is None else key
    value = key if value is None else value
    B, T, S = query.shape[0], query.shape[1], key.shape[1]
    attn_mask = None if mask is None else (~mask.expand(B, H, T, S)).reshape(B * H, T, S)
    return tm(query, key, value, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)


def _own_random_state(diagnose):
    """Run ``diagnose`` on a forked random state: building modules and dropout draw random numbers,
    and the student's notebook must not depend on whether a checker ran."""
    @functools.wraps(diagnose)
    def wrapper(*args, **kwargs):
        with torch.random.fork_rng(devices=[]):
            return diagnose(*args, **kwargs)
    return wrapper


@_own_random_state
def diagnose_multihead(cls) -> tuple[bool, str, dict]:
    ref = _reference_mha()
    student = _build(cls, 12, 3)
    problem = _copy(student, ref.state_dict())
    if problem:
        return False, problem, {"names": ", ".join(MHA_NAMES)}
    student.eval()
    with torch.no_grad():
        for query, key, value, mask in _mha_cases():
            result = call_student(student, query.clone(), None if key is None else key.clone(),
                                  None if value is None else value.clone(), mask)
            if not (isinstance(result, (tuple, list)) and len(result) == 2
                    and all(isinstance(r, torch.Tensor) for r in result)):
                return False, "capstone.hint.return_pair", {}
            out, w = result
            ref_out, ref_w = ref(query, key, value, mask)
            torch_out, torch_w = _torch_mha(ref, query, key, value, mask)
            if _close(out, ref_out) and _close(w, ref_w) and _close(out, torch_out) and _close(w, torch_w):
                continue
            for key_, flags in _MHA_MISTAKES:
                v_out, v_w = _mha_variant(ref, query, key, value, mask, **flags)
                if _close(out, v_out) or _close(w, v_w):
                    return False, key_, {}
            if out.shape != ref_out.shape or w.shape != ref_w.shape:
                return False, "capstone.hint.shapes", {"out": tuple(out.shape), "w": tuple(w.shape),
                                                       "want_out": tuple(ref_out.shape), "want_w": tuple(ref_w.shape)}
            return False, "capstone.hint.mha_mismatch", {"diff": _max_diff(out, ref_out)}
    return True, "capstone.ok.multihead", {}


def _max_diff(a, b) -> float:
    d = (a.detach().double() - b.detach().double()).abs()
    return float(d.nan_to_num(nan=float("inf")).max())


# ------------------------------------------------------------------------ the Transformer block
def _block_rename(key: str) -> str:
    return key.replace("feed_forward.", "")                     # attnlab nests linear1/linear2 in feed_forward


def _reference_block(norm_first: bool, dropout: float = 0.0) -> TransformerBlock:
    torch.manual_seed(1203)
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


def _torch_block(ref: TransformerBlock, x, mask):
    """The same block as torch.nn.TransformerEncoderLayer (ReLU, PyTorch's mask: True = blocked)."""
    layer = nn.TransformerEncoderLayer(12, 3, 20, dropout=0.0, batch_first=True, norm_first=ref.norm_first).eval()
    a = ref.attention
    with torch.no_grad():
        a.copy_to(layer.self_attn)
        for name in ("linear1", "linear2"):
            getattr(layer, name).load_state_dict(getattr(ref.feed_forward, name).state_dict())
        for name in ("norm1", "norm2"):
            getattr(layer, name).load_state_dict(getattr(ref, name).state_dict())
    src_mask = None if mask is None else ~mask[0, 0]                       # (T, T)
    return layer(x, src_mask=src_mask)


def _block_output(student, x, mask):
    out = call_student(student, x.clone(), mask=mask)
    return out[0] if isinstance(out, (tuple, list)) and out else out


def _block_mistake(student, ref, x, mask, out, expected, norm_first):
    style = "pre-LN" if norm_first else "post-LN"
    if not _close(student.attention(x, mask=mask)[0], ref.attention(x, mask=mask)[0]):
        return False, "capstone.hint.attention_first", {}
    mistakes = [("capstone.hint.pre_post_swapped", {"norm_first": not norm_first})]
    mistakes += [("capstone.hint.no_residual", {"norm_first": norm_first, "residual": r})
                 for r in ((False, True), (True, False), (False, False))]
    mistakes += [("capstone.hint.block_mask", {"norm_first": norm_first, "use_mask": False})]
    for key, flags in mistakes:
        if _close(out, _block_variant(ref, x, mask, **flags)):
            return False, key, {"style": style}
    return False, "capstone.hint.block_mismatch", {"style": style, "diff": _max_diff(out, expected)}


@_own_random_state
def diagnose_block(cls) -> tuple[bool, str, dict]:
    g = torch.Generator().manual_seed(1204)
    x = torch.randn(2, 6, 12, generator=g)                                # (B, T, D)
    mask = causal_mask(6)                                                 # (1, 1, T, T)
    for norm_first in (False, True):
        ref = _reference_block(norm_first)
        student = _build(cls, 12, 3, 20, dropout=0.5, norm_first=norm_first)
        problem = _copy(student, ref.state_dict(), _block_rename)
        if problem:
            return False, problem, {"names": ", ".join(BLOCK_NAMES)}
        student.eval()
        with torch.no_grad():
            out = _block_output(student, x, mask)
            if not isinstance(out, torch.Tensor) or out.shape != x.shape:
                return False, "capstone.hint.block_shape", {"want": tuple(x.shape)}
            if not _close(_block_output(student, x, mask), out, 0.0):
                return False, "capstone.hint.dropout_eval", {}
            expected = ref(x, mask)[0]
            if not (_close(out, expected) and _close(out, _torch_block(ref, x, mask))):
                return _block_mistake(student, ref, x, mask, out, expected, norm_first)
        student.train()                                                   # dropout must act while training
        with torch.no_grad():
            if _close(_block_output(student, x, mask), out):
                return False, "capstone.hint.dropout_never", {}
    return True, "capstone.ok.block", {}


def evaluate_multihead(cls, lang: str | None = None) -> Feedback:
    """Capstone 1: ``cls(d_model, num_heads)``, multi-head attention from scratch."""
    return evaluate("capstone.ex.multihead", lambda: _verdict(diagnose_multihead(cls), lang), lang)


def evaluate_block(cls, lang: str | None = None) -> Feedback:
    """Capstone 2: ``cls(d_model, num_heads, d_ff, dropout, norm_first)``, a Transformer block from scratch."""
    return evaluate("capstone.ex.block", lambda: _verdict(diagnose_block(cls), lang), lang)


def _verdict(diagnosis: tuple[bool, str, dict], lang: str | None) -> tuple[bool, str]:
    ok, key, fields = diagnosis
    return ok, t(key, lang, **fields)


check_multihead = printing(evaluate_multihead)
check_block = printing(evaluate_block)
