"""Exercise checkers for lesson 05 (the Transformer block).

* ``check_post_ln_block(fn)``: ``fn(x, attn, ffn, norm1, norm2)`` is a post-LN block.
* ``check_pre_ln_block(fn)``: the same, pre-LN.
* ``check_masks(leaky_mask, safe_mask)``: ``leaky_mask(T)`` must fail the causality
  experiment, ``safe_mask(T)`` must pass it and be the causal mask.

The block checkers build an ``attnlab.TransformerBlock`` (dropout off, LayerNorms with
random, different gains and biases), hand its sublayers to the student's function and
compare with the block's own output; a wrong answer is matched against the typical
mistakes, each with its own hint.
"""
from __future__ import annotations

from typing import Callable

import torch

from ..block import TransformerBlock
from ..causality import causality_check
from ..masks import causal_mask
from ._common import Feedback, call_student, evaluate, printing
from ._common import seed as _seed
from ._common import max_diff as _max_diff

TOL = 1e-5


# ------------------------------------------------------------------------- the block exercises

def _make_block(norm_first: bool, seed: int, d_model: int = 16, num_heads: int = 4, d_ff: int = 32):
    """A TransformerBlock without dropout, whose two LayerNorms have distinct random γ, β."""
    g = torch.Generator().manual_seed(seed)
    _seed(seed)                     # evaluate runs every checker on a forked random state
    block = TransformerBlock(d_model, num_heads, d_ff, dropout=0.0, norm_first=norm_first).eval()
    with torch.no_grad():
        for norm in (block.norm1, block.norm2):
            norm.weight.copy_(1.0 + 0.5 * torch.randn(d_model, generator=g))
            norm.bias.copy_(0.5 * torch.randn(d_model, generator=g))
    return block


def _sublayers(block):
    """What the student's function receives: attn(h) (causal mask inside), ffn, norm1, norm2."""
    def attn(h):
        return block.attention(h, mask=causal_mask(h.shape[1], device=h.device), need_weights=False)[0]
    return attn, block.feed_forward, block.norm1, block.norm2


def _cases():
    """(seed, B, T) and an input scale/shift far from LayerNorm's output, so the variants differ."""
    return [(0, 2, 5), (1, 1, 7), (2, 3, 4)]


# Typical mistakes, as functions of (x, A, F, N1, N2), grouped by the hint they deserve.
_POST_MISTAKES = {
    "l05.hint.post_is_pre": [
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(N1(x) + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h) + F(N2(h)))(N1(x) + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h) + F(h))(N1(x) + A(x)),
    ],
    "l05.hint.norm_branch": [
        lambda x, A, F, N1, N2: (lambda h: h + N2(F(h)))(x + N1(A(x))),
    ],
    "l05.hint.no_residual": [
        lambda x, A, F, N1, N2: N2(F(N1(A(x)))),
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(N1(A(x))),
        lambda x, A, F, N1, N2: N2(F(N1(x + A(x)))),
    ],
    "l05.hint.post.ln_once": [
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(x + A(x)),
        lambda x, A, F, N1, N2: (lambda h: N1(h + F(h)))(x + A(x)),
        lambda x, A, F, N1, N2: (lambda h: h + F(h))(N1(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(h))(N2(x + A(x))),
    ],
    "l05.hint.norms_mixed": [
        lambda x, A, F, N1, N2: (lambda h: N1(h + F(h)))(N1(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(N2(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: N1(h + F(h)))(N2(x + A(x))),
    ],
    "l05.hint.ffn_input": [
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(x)))(N1(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(x + F(h)))(N1(x + A(x))),
    ],
}

_PRE_MISTAKES = {
    "l05.hint.pre_is_post": [
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(N1(x + A(x))),
    ],
    "l05.hint.pre.norm_stream": [
        lambda x, A, F, N1, N2: (lambda h: (lambda g: g + F(g))(N2(h)))((lambda n: n + A(n))(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(N1(x) + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h) + F(N2(h)))(x + A(N1(x))),
    ],
    "l05.hint.no_residual": [
        lambda x, A, F, N1, N2: F(N2(A(N1(x)))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(A(N1(x))),
        lambda x, A, F, N1, N2: F(N2(x + A(N1(x)))),
    ],
    "l05.hint.pre.ln_once": [
        lambda x, A, F, N1, N2: (lambda h: h + F(h))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(x + A(x)),
        lambda x, A, F, N1, N2: (lambda h: h + F(N1(h)))(x + A(x)),
    ],
    "l05.hint.norms_mixed": [
        lambda x, A, F, N1, N2: (lambda h: h + F(N1(h)))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(x + A(N2(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N1(h)))(x + A(N2(x))),
    ],
    "l05.hint.ffn_input": [
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(x)))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: x + F(N2(h)))(x + A(N1(x))),
    ],
}


def _diagnose_block(fn: Callable, norm_first: bool, mistakes: dict) -> tuple[bool, str, dict]:
    """Run ``fn`` on several inputs; (True, ok key, fields) or (False, hint key, fields).

    Raises NotDone (through call_student) while the TODO is untouched.
    """
    runs = []                                                   # (student output, sublayers, x)
    worst = 0.0
    for seed, B, T in _cases():
        block = _make_block(norm_first, seed)
        g = torch.Generator().manual_seed(100 + seed)
        x = 2.0 * torch.randn(B, T, block.norm1.normalized_shape[0], generator=g) + 0.5
        subs = _sublayers(block)
        with torch.no_grad():
            expected, _ = block(x, mask=causal_mask(T))
            got = call_student(fn, x.clone(), *subs)
        if not isinstance(got, torch.Tensor):
            return False, "l05.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            return False, "l05.hint.shape", {"expected": tuple(expected.shape), "got": tuple(got.shape)}
        worst = max(worst, _max_diff(got, expected))
        runs.append((got, subs, x))
    if worst <= TOL:
        return True, "l05.ok.pre_ln" if norm_first else "l05.ok.post_ln", {"n": len(runs)}
    for key, variants in mistakes.items():
        for variant in variants:
            with torch.no_grad():
                if all(_max_diff(got, variant(x, *subs)) <= TOL for got, subs, x in runs):
                    return False, key, {}
    return False, "l05.hint.generic_block", {"diff": worst}


def diagnose_post_ln_block(fn: Callable) -> tuple[bool, str, dict]:
    """(verdict, message key, fields) for a post-LN block ``fn(x, attn, ffn, norm1, norm2)``."""
    return _diagnose_block(fn, False, _POST_MISTAKES)


def diagnose_pre_ln_block(fn: Callable) -> tuple[bool, str, dict]:
    """(verdict, message key, fields) for a pre-LN block ``fn(x, attn, ffn, norm1, norm2)``."""
    return _diagnose_block(fn, True, _PRE_MISTAKES)


def evaluate_post_ln_block(fn: Callable, lang: str | None = None) -> Feedback:
    """Exercise 1: ``fn(x, attn, ffn, norm1, norm2)`` must compute the post-LN block
    x = LN1(x + attn(x)); x = LN2(x + ffn(x)). The verdict as a Feedback."""
    return evaluate("l05.ex.post_ln", lambda: diagnose_post_ln_block(fn), lang)

check_post_ln_block = printing(evaluate_post_ln_block)


def evaluate_pre_ln_block(fn: Callable, lang: str | None = None) -> Feedback:
    """Exercise 2: ``fn(x, attn, ffn, norm1, norm2)`` must compute the pre-LN block
    x = x + attn(LN1(x)); x = x + ffn(LN2(x)). The verdict as a Feedback."""
    return evaluate("l05.ex.pre_ln", lambda: diagnose_pre_ln_block(fn), lang)

check_pre_ln_block = printing(evaluate_pre_ln_block)


# ------------------------------------------------------------------------- the mask exercise

def _student_mask(fn: Callable, which: str, T: int):
    """The student's mask for length T, or (None, hint key, fields) if it is not a usable mask."""
    m = call_student(fn, T)
    if not isinstance(m, torch.Tensor) or m.dtype != torch.bool:
        got = f"{type(m).__name__}" if not isinstance(m, torch.Tensor) else f"dtype {m.dtype}"
        return None, "l05.hint.mask_type", {"which": which, "got": got}
    if tuple(m.shape) not in ((T, T), (1, T, T), (1, 1, T, T)):
        return None, "l05.hint.mask_shape", {"which": which, "T": T, "got": tuple(m.shape)}
    return m.reshape(T, T), None, None


def diagnose_masks(leaky_mask: Callable, safe_mask: Callable) -> tuple[bool, str, dict]:
    """(verdict, message key, fields) for the pair of masks, checked for T = 10 and T = 6 with
    the causality experiment of seed 000 (``attnlab.causality_check``)."""
    leaks, safes = [], []
    for T in (10, 6):
        leaky, key, fields = _student_mask(leaky_mask, "leaky_mask", T)
        if leaky is None:
            return False, key, fields
        safe, key, fields = _student_mask(safe_mask, "safe_mask", T)
        if safe is None:
            return False, key, fields
        reference = causal_mask(T)[0, 0]
        r_leaky = causality_check(mask=leaky, seq_len=T, verbose=False)
        r_safe = causality_check(mask=safe, seq_len=T, verbose=False)
        if r_leaky.earlier_drift < r_leaky.tol:
            # The experiment changes only the LAST token: a leak elsewhere is invisible to it.
            if (leaky & ~reference).any() and not leaky[:T - 1, T - 1].any():
                return False, "l05.hint.leak_not_last", {"T": T, "last": T - 1}
            return False, "l05.hint.leaky_is_safe", {"T": T}
        if r_safe.earlier_drift >= r_safe.tol:
            if torch.equal(safe, ~reference):
                return False, "l05.hint.safe_inverted", {}
            if torch.equal(safe, reference.T):
                return False, "l05.hint.safe_upper", {}
            return False, "l05.hint.safe_leaks", {"T": T, "drift": r_safe.earlier_drift}
        if not torch.equal(safe, reference):
            if not safe.diagonal().all():
                return False, "l05.hint.safe_no_diagonal", {}
            return False, "l05.hint.safe_too_strict", {}
        leaks.append(r_leaky.earlier_drift)
        safes.append(r_safe.earlier_drift)
    return True, "l05.ok.masks", {"leak": leaks[0], "safe": safes[0]}


def evaluate_masks(leaky_mask: Callable, safe_mask: Callable, lang: str | None = None) -> Feedback:
    """Exercise 3: ``leaky_mask(T)`` must fail the causality experiment and ``safe_mask(T)``
    must pass it (and be the causal mask). The verdict as a Feedback."""
    return evaluate("l05.ex.masks", lambda: diagnose_masks(leaky_mask, safe_mask), lang,
                    discussion="l05.discuss.masks")

check_masks = printing(evaluate_masks)
