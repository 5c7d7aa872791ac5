"""Printed checks for the lessons: PASS/FAIL lines with stable figures (no raw float dumps)."""
from __future__ import annotations

import torch

from .i18n import t


class Verdict:
    """The outcome of a printed check: truthy when it passed. A notebook shows nothing for it
    (the PASS/FAIL line is already printed), so a check can end a cell without a trailing ';'."""

    __slots__ = ("passed",)

    def __init__(self, passed: bool):
        self.passed = bool(passed)

    def __bool__(self) -> bool:
        return self.passed

    def __eq__(self, other) -> bool:
        return self.passed == bool(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed})"

    def _ipython_display_(self) -> None:
        pass


# Relative tolerance by dtype, as torch.testing.assert_close has it (integers and bool: exact).
RTOL = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2, torch.float32: 1.3e-6, torch.float64: 1e-7,
        torch.complex64: 1.3e-6, torch.complex128: 1e-7}


def check_close(what: str, actual: torch.Tensor, expected: torch.Tensor, tol: float = 1e-6,
                lang: str | None = None, *, rtol: float | None = None) -> Verdict:
    """Print 'PASS: <what> (difference ≤ tol)' or a FAIL line with the difference; return the Verdict.

    Close as in ``torch.testing.assert_close``: every element satisfies
    ``|actual - expected| ≤ tol + rtol · |expected|`` (equal infinities are close, NaN never is),
    ``tol`` the absolute tolerance and ``rtol`` by default that of the less precise dtype of the
    two (``RTOL``: float32 1.3e-6, so 1000 and 1000.0001 are close in float64, 0 and 1e-3 are not).
    ``what`` is a catalog key or plain text. The figure printed on PASS is the tolerance, which
    does not change between machines, not the difference itself, which can; it says
    ``+ rtol·|expected|`` too when the relative part was needed.
    """
    a, b = torch.as_tensor(actual), torch.as_tensor(expected)
    if a.shape != b.shape:
        raise ValueError(f"cannot compare shapes {tuple(a.shape)} and {tuple(b.shape)}")
    rtol = max(RTOL.get(a.dtype, 0.0), RTOL.get(b.dtype, 0.0)) if rtol is None else float(rtol)
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    same = a == b
    error = torch.where(same, 0.0, (a - b).abs())                          # inf - inf: 0, not NaN
    close = same | ((error <= tol + rtol * b.abs()) & b.isfinite())
    ok = bool(close.all())
    diff = error.max().item() if a.numel() else 0.0
    label = _label(what, lang)
    if ok and not diff <= tol:
        print(t("check.close_rel", lang, status=t("pass", lang), what=label, tol=tol, rtol=rtol))
    elif ok:
        print(t("check.close", lang, status=t("pass", lang), what=label, tol=tol))
    else:
        print(t("check.close_fail", lang, status=t("fail", lang), what=label, diff=diff, tol=tol))
    return Verdict(ok)


def check_true(what: str, condition: bool, lang: str | None = None) -> Verdict:
    """Print 'PASS: <what>' or 'FAIL: <what>'; return the Verdict."""
    ok = bool(condition)
    print(t("check.true", lang, status=t("pass" if ok else "fail", lang), what=_label(what, lang)))
    return Verdict(ok)


def _label(what: str, lang: str | None) -> str:
    from .i18n import CATALOG
    return t(what, lang) if what in CATALOG else what
