"""Exercise checkers for lesson 01 (self-attention).

Checkers: ``check_softmax(fn)``, ``check_attention(fn)``, ``check_dot_std(fn)``. Each runs the
student's function on several inputs, compares it with a reference and recognises the typical
mistakes (one hint each, never the solution); ``evaluate_*`` returns the verdict unprinted.
"""
from __future__ import annotations

import math

import torch

from ..attention import scaled_dot_product_attention
from ._common import Feedback, Msg, call_student, evaluate, printing
from ._common import close as _close, max_diff as _max_diff, shape as _shape, type_name as _type_name

__all__ = ["check_softmax", "evaluate_softmax", "check_attention", "evaluate_attention", "check_dot_std",
           "evaluate_dot_std"]


# --------------------------------------------------------------------------- helpers
def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --------------------------------------------------------------------------- exercise 1: softmax
def _softmax_cases() -> list[torch.Tensor]:
    g = _gen(101)
    return [
        torch.randn(3, 5, generator=g) * 2,          # 2-D, not square: a missing keepdim fails loudly
        torch.randn(2, 4, 6, generator=g) * 2,       # 3-D: "the last dimension", not dim=1
        torch.randn(4, 4, generator=g) * 2,          # square: a missing keepdim fails silently
        torch.tensor([[1000.0, 999.0, 998.0],        # overflow without the max trick
                      [3.0, 2.0, 1.0]]),             # underflow with one max for the whole tensor
    ]


def _softmax_error_hint(err: Exception) -> tuple[str, dict] | None:
    msg = str(err)
    if isinstance(err, TypeError) and "return_types.max" in msg:
        return ("l01.softmax.max_values", {})
    if isinstance(err, RuntimeError) and "must match the size of tensor" in msg:
        return ("l01.softmax.keepdim", {})
    return None


def _softmax_problem(x: torch.Tensor, got) -> tuple[str, dict] | None:
    """None if ``got`` is softmax(x, dim=-1); otherwise the hint for the most likely mistake."""
    expected = torch.softmax(x, dim=-1)
    if not isinstance(got, torch.Tensor):
        return ("l01.softmax.not_tensor", {"got": _type_name(got)})
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


def evaluate_softmax(fn, lang: str | None = None) -> Feedback:
    """Exercise 1: ``fn(x)`` must return the softmax of ``x`` over its last dimension, stable for large scores."""
    def check():
        for x in _softmax_cases():
            try:
                got = call_student(fn, x.clone())
            except (TypeError, RuntimeError) as err:
                hint = _softmax_error_hint(err)
                if hint is None or isinstance(err, NotImplementedError):
                    raise
                return (False, *hint)
            problem = _softmax_problem(x, got)
            if problem:
                return (False, *problem)
        return True, "l01.softmax.ok", {}
    return evaluate("l01.ex.softmax", check, lang)

check_softmax = printing(evaluate_softmax)


# --------------------------------------------------------------------------- exercise 2: attention
def _attention_cases() -> list[tuple[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
    g = _gen(102)
    rn = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    return [
        # T = S = d_k = d_v: every shape fits, so a transposed Q gives wrong values, not an error.
        ("square", (rn(4, 4), rn(4, 4), rn(4, 4))),
        # T = 3 queries, S = 5 keys, d_k = 8, d_v = 6: every size different.
        ("cross", (rn(3, 8), rn(5, 8), rn(5, 6))),
        # batched (B, H, T, d) inputs.
        ("batched", (rn(2, 3, 4, 8), rn(2, 3, 5, 8), rn(2, 3, 5, 6))),
    ]


def _attend(scores: torch.Tensor, v: torch.Tensor, dim: int = -1):
    w = torch.softmax(scores, dim=dim)
    return w @ v, w


def _attention_variants(q, k, v) -> list[tuple[str, tuple[torch.Tensor, torch.Tensor]]]:
    """(hint key, (out, weights)) for each typical mistake that runs on these shapes."""
    d_k = q.shape[-1]
    raw = q @ k.transpose(-2, -1)
    variants = [
        ("l01.attn.no_scale", _attend(raw, v)),
        ("l01.attn.scale_dk", _attend(raw / d_k, v)),
        ("l01.attn.softmax_dim", _attend(raw / math.sqrt(d_k), v, dim=-2)),
    ]
    for size in {q.shape[-2], k.shape[-2], v.shape[-1]} - {d_k}:
        variants.append(("l01.attn.which_dk", _attend(raw / math.sqrt(size), v)))
    for key, scores in (("l01.attn.transpose_q", lambda: q.transpose(-2, -1) @ k),
                        ("l01.attn.order", lambda: k @ q.transpose(-2, -1))):
        try:
            variants.append((key, _attend(scores() / math.sqrt(d_k), v)))
        except RuntimeError:                                       # shapes do not fit: it would have raised
            pass
    return variants


def _attention_problem(case: str, q, k, v, result) -> tuple[str, dict] | None:
    if not (isinstance(result, (tuple, list)) and len(result) == 2
            and all(isinstance(r, torch.Tensor) for r in result)):
        return ("l01.attn.return_pair", {})
    out, w = result
    ref_out, ref_w = scaled_dot_product_attention(q, k, v)
    if _close(out, ref_out) and _close(w, ref_w):
        return None
    if _close(out, ref_w) and _close(w, ref_out):
        return ("l01.attn.swapped", {})
    # Mistakes in the scores or the softmax change the weights: matched on the weights.
    if not _close(w, ref_w):
        for key, (_, v_w) in _attention_variants(q, k, v):
            if _close(w, v_w):
                return (key, {})
        if _close(out, ref_out):
            return ("l01.attn.weights_not_softmax", {})
        if w.shape != ref_w.shape:
            return ("l01.attn.weights_shape", {"got": _shape(w), "want": _shape(ref_w)})
    # The weights are right (or unrecognisably wrong): look at the output.
    if _close(out, w) or _close(out, ref_w):
        return ("l01.attn.no_v", {})
    if out.shape != ref_out.shape:
        return ("l01.attn.out_shape", {"got": _shape(out), "want": _shape(ref_out)})
    if case == "batched":
        return ("l01.attn.batched", {"error": Msg("l01.attn.wrong_values")})
    return ("l01.attn.mismatch", {"diff": _max_diff(out, ref_out)})


def evaluate_attention(fn, lang: str | None = None) -> Feedback:
    """Exercise 2: ``fn(q, k, v)`` must return ``(out, weights)`` like attnlab.scaled_dot_product_attention."""
    def check():
        for case, (q, k, v) in _attention_cases():
            try:
                result = call_student(fn, q.clone(), k.clone(), v.clone())
            except (RuntimeError, ValueError, TypeError, IndexError) as err:
                if isinstance(err, NotImplementedError) or case == "square":
                    raise                                          # evaluate reports it as it is
                key = "l01.attn.cross" if case == "cross" else "l01.attn.batched"
                return False, key, {"error": type(err).__name__}
            problem = _attention_problem(case, q, k, v, result)
            if problem:
                return (False, *problem)
        return True, "l01.attn.ok", {}
    return evaluate("l01.ex.attention", check, lang)

check_attention = printing(evaluate_attention)


# --------------------------------------------------------------------------- exercise 3: std of q·k
_STD_CASES = ((4, 1.0), (64, 1.0), (256, 1.0), (16, 0.5), (64, 2.0), (9, 1.5))


def _measured_std(d_k: int, sigma: float, n: int = 20_000, seed: int = 103) -> float:
    g = _gen(seed)
    q = torch.randn(n, d_k, generator=g, dtype=torch.float64) * sigma
    k = torch.randn(n, d_k, generator=g, dtype=torch.float64) * sigma
    return float((q * k).sum(dim=-1).std())


def evaluate_dot_std(fn, lang: str | None = None) -> Feedback:
    """Exercise 3: ``fn(d_k, sigma)`` must predict the standard deviation of q·k when every
    component of q and k is independent with mean 0 and standard deviation sigma."""
    def check():
        got = []
        for d_k, sigma in _STD_CASES:
            r = call_student(fn, d_k, sigma)
            try:
                value = float(r)
            except (TypeError, ValueError, RuntimeError):
                return False, "l01.std.number", {"got": _type_name(r)}
            got.append(value)

        def matches(formula) -> bool:
            return all(math.isclose(g, formula(d, s), rel_tol=0.03) for g, (d, s) in zip(got, _STD_CASES))

        mistakes = (
            ("l01.std.variance", lambda d, s: d * s ** 4),
            ("l01.std.variance", lambda d, s: d * s ** 2),
            ("l01.std.variance", lambda d, s: float(d)),
            ("l01.std.scale", lambda d, s: 1 / math.sqrt(d)),
            ("l01.std.one", lambda d, s: s ** 2),
            ("l01.std.one", lambda d, s: 1.0),
            ("l01.std.sigma_missing", lambda d, s: math.sqrt(d)),
            ("l01.std.sigma_once", lambda d, s: s * math.sqrt(d)),
        )
        for value, (d_k, sigma) in zip(got, _STD_CASES):
            if not math.isclose(value, _measured_std(d_k, sigma), rel_tol=0.03):
                for key, formula in mistakes:
                    if matches(formula):
                        return False, key, {}
                return False, "l01.std.mismatch", {"d_k": d_k, "sigma": sigma, "got": value}
        return True, "l01.std.ok", {}
    return evaluate("l01.ex.dot_std", check, lang)

check_dot_std = printing(evaluate_dot_std)
