"""Exercise checkers for lesson 05 (the Transformer block).

* ``check_post_ln_block(fn)``: ``fn(x, attn, ffn, norm1, norm2)`` is a post-LN block.
* ``check_pre_ln_block(fn)``: the same, pre-LN.
* ``check_masks(leaky_mask, safe_mask)``: ``leaky_mask(T)`` must fail the causality
  experiment, ``safe_mask(T)`` must pass it and be the causal mask.

The block checkers build an ``attnlab.TransformerBlock`` of sizes drawn from the seed (dropout
off, LayerNorms with random, different gains and biases), hand its sublayers to the student's
function (the probe) and compare with the block's own output (the judge, which rebuilds the block
from the seed); a wrong answer is matched against the typical mistakes, each with its own hint.
The mask checker runs the causality experiment on the masks the student's functions returned.
"""
from __future__ import annotations

from typing import Callable

import torch

from ..block import TransformerBlock
from ..causality import causality_check
from ..masks import causal_mask
from ._common import (Diagnosis, Draw, Exercise, generator, Feedback, Verdict, attempt, changed_inputs, evaluate_exercise,
                      is_tensor, judging, kind, printing, seeded, value_of)
from ._common import max_diff as _max_diff

__all__ = ["check_post_ln_block", "evaluate_post_ln_block", "diagnose_post_ln_block", "check_pre_ln_block",
           "evaluate_pre_ln_block", "diagnose_pre_ln_block", "check_masks", "evaluate_masks", "diagnose_masks",
           "EXERCISES"]

TOL = 1e-5


# ------------------------------------------------------------------------- the block exercises

def _cases(seed: int = 0) -> list[tuple[int, int, int, int, int, int]]:
    """(case seed, B, T, d_model, num_heads, d_ff) drawn from the seed: B ≠ T, odd and even T,
    several widths and head counts."""
    d = Draw(seed, "l05/blocks")
    cases = []
    for n, (B, T) in enumerate(((d.int(2, 3), d.int(5, 7)), (1, d.int(3, 8)), (d.int(3, 4), d.int(2, 5)))):
        if B == T:
            T += 1
        d_model, heads = d.choice([(8, 2), (12, 3), (16, 4), (16, 2), (20, 5), (24, 4)])
        cases.append((seed * 10 + n, B, T, d_model, heads, d.int(2 * d_model - 4, 3 * d_model)))
    return cases


def _make_block(norm_first: bool, seed: int, d_model: int = 16, num_heads: int = 4, d_ff: int = 32):
    """A TransformerBlock without dropout, whose two LayerNorms have distinct random γ, β (built
    the same way from ``seed`` by the probe and by the judge)."""
    g = generator(seed)
    with seeded(seed):
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


def _block_input(case_seed: int, B: int, T: int, d_model: int) -> torch.Tensor:
    """An input scaled and shifted far from LayerNorm's output, so that the variants differ."""
    g = generator(100 + case_seed)
    return 2.0 * torch.randn(B, T, d_model, generator=g) + 0.5


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


def _probe_block(fn: Callable, norm_first: bool, seed: int) -> dict:
    results = {}
    for i, (case_seed, B, T, d_model, heads, d_ff) in enumerate(_cases(seed)):
        block = _make_block(norm_first, case_seed, d_model, heads, d_ff)
        with torch.no_grad():
            results[f"case{i}"] = outcome = attempt(fn, _block_input(case_seed, B, T, d_model), *_sublayers(block))
        if outcome.get("value") is None:
            break
    return results


def _judge_block(results: dict, seed: int, norm_first: bool, mistakes: dict) -> Diagnosis:
    """(True, ok key, fields) if every case is the block's output, else the typical mistake that
    explains every case, else a generic hint with the largest difference."""
    runs = []                                                   # (student output, sublayers, x)
    worst = 0.0
    for i, (case_seed, B, T, d_model, heads, d_ff) in enumerate(_cases(seed)):
        block = _make_block(norm_first, case_seed, d_model, heads, d_ff)
        x = _block_input(case_seed, B, T, d_model)
        got = value_of(results, f"case{i}")
        with torch.no_grad():
            expected, _ = block(x, mask=causal_mask(T))
        if not is_tensor(got):
            return False, "l05.hint.not_tensor", {"got": kind(got)}
        if got.shape != expected.shape:
            return False, "l05.hint.shape", {"expected": tuple(expected.shape), "got": tuple(got.shape)}
        worst = max(worst, _max_diff(got, expected))
        runs.append((got, _sublayers(block), x, i))
    if worst <= TOL:
        for *_, i in runs:
            if changed_inputs(results, f"case{i}"):
                return False, "ex.changed_input", {"name": "x"}
        return True, "l05.ok.pre_ln" if norm_first else "l05.ok.post_ln", {"n": len(runs)}
    for key, variants in mistakes.items():
        for variant in variants:
            with torch.no_grad():
                if all(_max_diff(got, variant(x, *subs)) <= TOL for got, subs, x, _ in runs):
                    return False, key, {}
    return False, "l05.hint.generic_block", {"diff": worst}         # worst > TOL: the result does differ


def probe_post_ln_block(fn: Callable, *, seed: int) -> dict:
    return _probe_block(fn, False, seed)


@judging
def judge_post_ln_block(results: dict, *, seed: int) -> Diagnosis:
    return _judge_block(results, seed, False, _POST_MISTAKES)


def probe_pre_ln_block(fn: Callable, *, seed: int) -> dict:
    return _probe_block(fn, True, seed)


@judging
def judge_pre_ln_block(results: dict, *, seed: int) -> Diagnosis:
    return _judge_block(results, seed, True, _PRE_MISTAKES)


POST_LN = Exercise("l05.post_ln_block", "l05.ex.post_ln", ("my_post_ln_block",), probe_post_ln_block,
                   judge_post_ln_block)
PRE_LN = Exercise("l05.pre_ln_block", "l05.ex.pre_ln", ("my_pre_ln_block",), probe_pre_ln_block, judge_pre_ln_block)


def diagnose_post_ln_block(fn: Callable, seed: int = 0) -> Diagnosis:
    """(verdict, message key, fields) for a post-LN block ``fn(x, attn, ffn, norm1, norm2)``."""
    return POST_LN.diagnose(fn, seed=seed)


def diagnose_pre_ln_block(fn: Callable, seed: int = 0) -> Diagnosis:
    """(verdict, message key, fields) for a pre-LN block ``fn(x, attn, ffn, norm1, norm2)``."""
    return PRE_LN.diagnose(fn, seed=seed)


def evaluate_post_ln_block(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Exercise 1: ``fn(x, attn, ffn, norm1, norm2)`` must compute the post-LN block
    x = LN1(x + attn(x)); x = LN2(x + ffn(x)). The verdict as a Feedback."""
    return evaluate_exercise(POST_LN, (fn,), lang, seed)

check_post_ln_block = printing(evaluate_post_ln_block)


def evaluate_pre_ln_block(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Exercise 2: ``fn(x, attn, ffn, norm1, norm2)`` must compute the pre-LN block
    x = x + attn(LN1(x)); x = x + ffn(LN2(x)). The verdict as a Feedback."""
    return evaluate_exercise(PRE_LN, (fn,), lang, seed)

check_pre_ln_block = printing(evaluate_pre_ln_block)


# ------------------------------------------------------------------------- the mask exercise
def _mask_lengths(seed: int) -> tuple[int, int]:
    """Two lengths drawn from the seed, one even and one odd."""
    d = Draw(seed, "l05/masks")
    return 2 * d.int(3, 8), 2 * d.int(2, 7) + 1


def probe_masks(leaky_mask: Callable, safe_mask: Callable, *, seed: int) -> dict:
    results = {}
    for T in _mask_lengths(seed):
        for which, fn in (("leaky", leaky_mask), ("safe", safe_mask)):
            results[f"{which}{T}"] = outcome = attempt(fn, T)
            if outcome.get("value") is None:
                return results
    return results


def _student_mask(results: dict, which: str, T: int) -> torch.Tensor:
    """The student's mask for length T as a (T, T) bool tensor; a Verdict if it is not a usable mask."""
    m = value_of(results, f"{which}{T}")
    name = f"{which}_mask"
    if not is_tensor(m) or m.dtype != torch.bool:
        raise Verdict(False, "l05.hint.mask_type", which=name, got=kind(m) if not is_tensor(m) else f"dtype {m.dtype}")
    if tuple(m.shape) not in ((T, T), (1, T, T), (1, 1, T, T)):
        raise Verdict(False, "l05.hint.mask_shape", which=name, T=T, got=tuple(m.shape))
    return m.reshape(T, T)


@judging
def judge_masks(results: dict, *, seed: int) -> Diagnosis:
    """The pair of masks, checked for two drawn lengths with the causality experiment of seed 000
    (``attnlab.causality_check``), run here on the recorded masks."""
    leaks, safes = [], []
    for T in _mask_lengths(seed):
        leaky = _student_mask(results, "leaky", T)
        safe = _student_mask(results, "safe", T)
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


MASKS = Exercise("l05.masks", "l05.ex.masks", ("leaky_mask", "safe_mask"), probe_masks, judge_masks,
                 discussion="l05.discuss.masks")


def diagnose_masks(leaky_mask: Callable, safe_mask: Callable, seed: int = 0) -> Diagnosis:
    """(verdict, message key, fields) for the pair of masks."""
    return MASKS.diagnose(leaky_mask, safe_mask, seed=seed)


def evaluate_masks(leaky_mask: Callable, safe_mask: Callable, lang: str | None = None, *,
                   seed: int | None = None) -> Feedback:
    """Exercise 3: ``leaky_mask(T)`` must fail the causality experiment and ``safe_mask(T)``
    must pass it (and be the causal mask). The verdict as a Feedback."""
    return evaluate_exercise(MASKS, (leaky_mask, safe_mask), lang, seed)

check_masks = printing(evaluate_masks)

EXERCISES = (POST_LN, PRE_LN, MASKS)
