"""Exercise checkers for lesson 01 (self-attention).

Checkers: ``check_softmax(fn)``, ``check_attention(fn)``, ``check_dot_std(fn)``. Each is a probe
(``probe_x(fn, *, seed)``: the student's function on inputs whose sizes are drawn from the seed) and
a judge (``judge_x(results, *, seed)``: the same inputs again, compared with torch and attnlab, the
typical mistakes recognised, one hint each, never the solution); ``evaluate_x`` words the verdict.
"""
from __future__ import annotations

import math

import torch

from ._common import (Draw, Exercise, Feedback, Verdict, attempt, changed_inputs, evaluate_exercise, is_tensor,
                      judging, kind, number, printing, raises, value_of)
from ._common import close as _close, max_diff as _max_diff, shape as _shape
from .l01_attention import attention_problem as _attention_problem

__all__ = ["check_softmax", "evaluate_softmax", "check_attention", "evaluate_attention", "check_dot_std",
           "evaluate_dot_std", "EXERCISES"]


def _stop(outcome: dict) -> bool:
    """The probe stops at the first call that did not return a value (the judge stops there too)."""
    return "value" not in outcome or outcome["value"] is None


# --------------------------------------------------------------------------- exercise 1: softmax
def _softmax_cases(seed: int) -> list[torch.Tensor]:
    d = Draw(seed, "l01/softmax")
    rows, cols = d.sample(range(2, 9), 2)                        # 2-D, not square: a missing keepdim fails loudly
    a, b, c = d.sample(range(2, 7), 3)                           # 3-D: "the last dimension", not dim=1
    n = d.int(3, 7)                                              # square: a missing keepdim fails silently
    width = d.int(4, 8)
    big = d.uniform(300.0, 1000.0)
    overflow = torch.cat([big + 2 * d.randn(1, width),          # exp overflows without the max trick
                          2 * d.randn(2, width)])                # rows far below the global maximum
    return [2 * d.randn(rows, cols), 2 * d.randn(a, b, c), 2 * d.randn(n, n), overflow, 2 * d.randn(d.int(2, 9))]


def probe_softmax(fn, *, seed: int) -> dict:
    """``fn(x)`` on each case (a copy of x: whether ``fn`` changed it is recorded)."""
    results = {}
    for i, x in enumerate(_softmax_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, x.clone())
        if _stop(outcome):
            break
    return results


def _softmax_error_hint(error: dict):
    if raises(error, "TypeError") and "return_types.max" in error["message"]:
        return False, "l01.softmax.max_values", {}
    if raises(error, "RuntimeError") and "must match the size of tensor" in error["message"]:
        return False, "l01.softmax.keepdim", {}
    return None


def _softmax_problem(x: torch.Tensor, got) -> tuple[str, dict] | None:
    """None if ``got`` is softmax(x, dim=-1); otherwise the hint for the most likely mistake."""
    expected = torch.softmax(x, dim=-1)
    if not is_tensor(got):
        return ("l01.softmax.not_tensor", {"got": kind(got)})
    if got.shape != x.shape:
        return ("l01.softmax.shape", {"want": _shape(x), "got": _shape(got)})
    if _close(got, expected, rtol=1e-4, atol=1e-6):
        return None
    got_d = got.detach().double()
    if not torch.isfinite(got_d).all():
        # Which rows broke? The row holding the global maximum overflows without the max trick;
        # rows far below the global maximum underflow to 0/0 when one max serves the whole tensor.
        bad_rows = ~torch.isfinite(got_d).all(dim=-1)
        top_rows = x.amax(dim=-1) == x.max()
        return ("l01.softmax.overflow" if (bad_rows & top_rows).any() else "l01.softmax.global_max", {})
    for d in range(x.dim() - 1):
        if _close(got, torch.softmax(x, dim=d)):
            return ("l01.softmax.axis", {})
    if (got_d >= 0).all() and abs(float(got_d.sum()) - 1.0) < 1e-4:
        return ("l01.softmax.axis", {})                               # normalised over everything
    row_max = x.amax(dim=-1, keepdim=True)
    if _close(got, torch.exp(x)) or _close(got, torch.exp(x - row_max)):
        return ("l01.softmax.normalize", {})
    if x.dim() == 2 and x.shape[0] == x.shape[1]:                  # broadcasting the wrong way
        m = x.amax(dim=-1)                                         # (T,) lines up with the columns
        e_bad, e_ok = torch.exp(x - m), torch.exp(x - row_max)
        candidates = (e_bad / e_bad.sum(dim=-1, keepdim=True), e_bad / e_bad.sum(dim=-1),
                      e_ok / e_ok.sum(dim=-1), torch.exp(x) / torch.exp(x).sum(dim=-1))
        if any(_close(got, c) for c in candidates):
            return ("l01.softmax.keepdim", {})
    return ("l01.softmax.mismatch", {"diff": _max_diff(got, expected)})


@judging
def judge_softmax(results: dict, *, seed: int):
    """Every case must be softmax(x, dim=-1), computed on a new tensor (x left as it was)."""
    for i, x in enumerate(_softmax_cases(seed)):
        got = value_of(results, f"case{i}", errors=_softmax_error_hint)
        problem = _softmax_problem(x, got)
        if problem:
            return (False, *problem)
        if changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "x"}
    return True, "l01.softmax.ok", {}


SOFTMAX = Exercise("l01.softmax", "l01.ex.softmax", ("my_softmax",), probe_softmax, judge_softmax)


def evaluate_softmax(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Exercise 1: ``fn(x)`` must return the softmax of ``x`` over its last dimension, stable for large scores."""
    return evaluate_exercise(SOFTMAX, (fn,), lang, seed)

check_softmax = printing(evaluate_softmax)


# --------------------------------------------------------------------------- exercise 2: attention
def _attention_cases(seed: int) -> list[tuple[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
    d = Draw(seed, "l01/attention")
    n = d.int(3, 6)
    # Every size of a case different, none the square of d_k (√ of it would be d_k: an ambiguous
    # hint), d_k different in each case (no fixed number can stand for √d_k), and no size of the
    # second case equal to the first case's n (each size the student may have used instead of d_k,
    # q.shape[-2], k.shape[0], ..., changes between the cases, unlike a number written in the code).
    while True:
        T, S, d_k, d_v = d.sample(range(2, 10), 4)
        if d_k * d_k not in (T, S, d_v) and n not in (T, S, d_k, d_v):
            break
    while True:
        B, H, bT, bS, b_dk, b_dv = d.sample(range(2, 10), 6)
        if b_dk * b_dk not in (B, H, bT, bS, b_dv) and b_dk not in (n, d_k):
            break
    return [
        # T = S = d_k = d_v: every shape fits, so a transposed Q gives wrong values, not an error.
        ("square", (d.randn(n, n), d.randn(n, n), d.randn(n, n))),
        # T queries, S keys, d_k, d_v: every size different.
        ("cross", (d.randn(T, d_k), d.randn(S, d_k), d.randn(S, d_v))),
        # batched (B, H, T, d) inputs, every size different again.
        ("batched", (d.randn(B, H, bT, b_dk), d.randn(B, H, bS, b_dk), d.randn(B, H, bS, b_dv))),
    ]


def probe_attention(fn, *, seed: int) -> dict:
    results = {}
    for case, (q, k, v) in _attention_cases(seed):
        results[case] = outcome = attempt(fn, q.clone(), k.clone(), v.clone())
        if _stop(outcome):
            break
    return results


@judging
def judge_attention(results: dict, *, seed: int):
    for case, (q, k, v) in _attention_cases(seed):
        def errors(error, case=case):
            if case == "square" or raises(error, "NotImplementedError"):
                return None                                        # reported as it is
            if any(raises(error, e) for e in ("RuntimeError", "ValueError", "TypeError", "IndexError")):
                return False, "l01.attn.cross" if case == "cross" else "l01.attn.batched", {"error": error["type"]}
            return None
        result = value_of(results, case, errors=errors)
        others = [(*qkv, results[c]["value"]) for c, qkv in _attention_cases(seed)
                  if c != case and isinstance(results.get(c), dict) and "value" in results[c]]
        problem = _attention_problem(case, q, k, v, result, others)
        if problem:
            return (False, *problem)
        changed = changed_inputs(results, case)
        if changed:
            return False, "ex.changed_input", {"name": "qkv"[min(changed[0], 2)]}
    return True, "l01.attn.ok", {}


ATTENTION = Exercise("l01.attention", "l01.ex.attention", ("my_attention",), probe_attention, judge_attention)


def evaluate_attention(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Exercise 2: ``fn(q, k, v)`` must return ``(out, weights)`` like attnlab.scaled_dot_product_attention."""
    return evaluate_exercise(ATTENTION, (fn,), lang, seed)

check_attention = printing(evaluate_attention)


# --------------------------------------------------------------------------- exercise 3: std of q·k
def _std_cases(seed: int) -> list[tuple[int, float | None]]:
    """(d_k, sigma) pairs; sigma None: called as fn(d_k), the default sigma = 1.0 of the exercise cell."""
    d = Draw(seed, "l01/dot_std")
    d_ks = [d.int(2, 9), d.int(10, 60), d.int(61, 400), d.int(2, 400), d.int(2, 100)]
    sigmas = [round(d.uniform(0.3, 0.75), 2), round(d.uniform(1.35, 2.5), 2), round(d.uniform(0.3, 0.75), 2),
              round(d.uniform(1.35, 2.5), 2), None]
    return list(zip(d_ks, sigmas))


def probe_dot_std(fn, *, seed: int) -> dict:
    results = {}
    for i, (d_k, sigma) in enumerate(_std_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, d_k) if sigma is None else attempt(fn, d_k, sigma)
        if _stop(outcome):
            break
    return results


def _std(d_k: int, sigma: float) -> float:
    """The standard deviation of q·k: Var(q_i k_i) = sigma⁴ for each of the d_k independent products."""
    return sigma ** 2 * math.sqrt(d_k)


_STD_MISTAKES = (
    ("l01.std.variance", lambda d, s: d * s ** 4),
    ("l01.std.variance", lambda d, s: d * s ** 2),
    ("l01.std.variance", lambda d, s: float(d)),
    ("l01.std.scale", lambda d, s: 1 / math.sqrt(d)),
    ("l01.std.one", lambda d, s: s ** 2),
    ("l01.std.one", lambda d, s: 1.0),
    ("l01.std.sigma_missing", lambda d, s: math.sqrt(d)),
    ("l01.std.sigma_once", lambda d, s: s * math.sqrt(d)),
)


@judging
def judge_dot_std(results: dict, *, seed: int):
    cases = [(d_k, 1.0 if sigma is None else sigma) for d_k, sigma in _std_cases(seed)]
    got = []
    for i in range(len(cases)):
        value = value_of(results, f"case{i}")
        if number(value) is None:
            raise Verdict(False, "l01.std.number", got=kind(value))
        got.append(float(number(value)))

    def matches(formula) -> bool:
        return all(math.isclose(g, formula(d, s), rel_tol=0.03) for g, (d, s) in zip(got, cases))

    for value, (d_k, sigma) in zip(got, cases):
        if not math.isclose(value, _std(d_k, sigma), rel_tol=0.02):
            for key, formula in _STD_MISTAKES:
                if matches(formula):
                    return False, key, {}
            return False, "l01.std.mismatch", {"d_k": d_k, "sigma": sigma, "got": value}
    return True, "l01.std.ok", {}


DOT_STD = Exercise("l01.dot_std", "l01.ex.dot_std", ("dot_std",), probe_dot_std, judge_dot_std)


def evaluate_dot_std(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Exercise 3: ``fn(d_k, sigma=1.0)`` must predict the standard deviation of q·k when every
    component of q and k is independent with mean 0 and standard deviation sigma."""
    return evaluate_exercise(DOT_STD, (fn,), lang, seed)

check_dot_std = printing(evaluate_dot_std)

EXERCISES = (SOFTMAX, ATTENTION, DOT_STD)
