"""Shared machinery of the exercise checkers: run the student's code, report in the
current language, never print the solution.

Each exercise has two functions: ``evaluate_x(...) -> Feedback`` (the verdict, printed
nowhere: for tests and tools) and ``check_x(...)`` (what a notebook calls: prints the
feedback and returns None, so neither IPython 7 nor 8 echoes a True/False after it).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ..i18n import t


class NotDone(Exception):
    """The student has not written the exercise yet."""


@dataclass(frozen=True)
class Feedback:
    """A checker's verdict: ``ok`` is True (correct), False (wrong) or None (not done yet);
    ``text`` is the line the student reads."""

    ok: bool | None
    text: str


def call_student(fn: Callable, *args, **kwargs):
    """Call the student's function; NotDone if it is missing, returns None/Ellipsis or
    raises NotImplementedError."""
    if fn is None:
        raise NotDone
    result = fn(*args, **kwargs)
    if result is None or result is Ellipsis:
        raise NotDone
    return result


def evaluate(name: str, check: Callable[[], tuple[bool, str]], lang: str | None = None) -> Feedback:
    """Run ``check`` -> (ok, detail message) and word the verdict; ``name`` is the exercise's key."""
    try:
        ok, detail = check()
    except (NotDone, NotImplementedError):
        return Feedback(None, t("ex.not_done", lang, name=t(name, lang)))
    except Exception as e:  # the student's code failed: say so briefly, no traceback
        message = str(e).splitlines()[0] if str(e) else ""
        return Feedback(False, t("ex.error", lang, error=type(e).__name__, message=message))
    return Feedback(bool(ok), t("ex.correct" if ok else "ex.wrong", lang, detail=detail))


def printing(evaluate_fn: Callable[..., Feedback]) -> Callable[..., None]:
    """``check_x`` from ``evaluate_x``: the same arguments; prints the feedback, returns None."""
    @functools.wraps(evaluate_fn)
    def check(*args, **kwargs) -> None:
        print(evaluate_fn(*args, **kwargs).text)

    check.__name__ = check.__qualname__ = evaluate_fn.__name__.replace("evaluate_", "check_", 1)
    check.__annotations__ = {**evaluate_fn.__annotations__, "return": None}
    del check.__wrapped__                      # its signature is not evaluate's return type
    check.evaluate = evaluate_fn
    return check


def run_check(name: str, check: Callable[[], tuple[bool, str]], lang: str | None = None) -> None:
    """Print the verdict of ``check`` and return None (kept for checkers written before
    ``evaluate``/``printing``; new checkers define ``evaluate_x`` and ``check_x = printing(evaluate_x)``)."""
    print(evaluate(name, check, lang).text)
