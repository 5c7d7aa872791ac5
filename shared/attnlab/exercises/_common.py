"""Shared machinery of the exercise checkers: run the student's code, word the verdict in the
current language, never print the solution, never touch the caller's world.

Each exercise has two functions: ``evaluate_x(...) -> Feedback`` (the verdict, printed
nowhere: for tests and tools) and ``check_x(...)`` (what a notebook calls: prints the
feedback and returns None, so neither IPython 7 nor 8 echoes a True/False after it).

A checker's ``diagnose()`` returns ``(ok, message key, fields)``; ``evaluate`` words it. A field
may itself be a message key (``Msg("l06.masks.name.enc")``), translated when worded. Everything
the student wrote is called through ``call_student``, which marks the exceptions raised inside it:
``evaluate`` reports those as the student's (with the likely cause where one is known) and any
other exception as the checker's own failure. Every checker runs on a forked random state,
seeded the same way each time, and leaves torch's thread count as it found it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import torch

from ..course.i18n import t


class NotDone(Exception):
    """The student has not written the exercise yet; ``key``: the message that says what to finish
    (default ``ex.not_done``: the TODO of this cell), with the exercise's name as ``{name}``."""

    def __init__(self, key: str = "ex.not_done", **fields):
        super().__init__(key)
        self.key, self.fields = key, fields


@dataclass(frozen=True)
class Feedback:
    """A checker's verdict: ``ok`` is True (correct), False (wrong) or None (not done yet, or the
    checker itself failed); ``text`` is what the student reads; ``key`` the message key of the
    verdict or hint (what a test or a grader compares), None while not done."""

    ok: bool | None
    text: str
    key: str | None = None


class Msg(str):
    """A message field whose value is a message key, translated when the verdict is worded."""


Diagnosis = tuple[bool, str, dict]
_STUDENT = "_attnlab_raised_by_student"


# --------------------------------------------------------------------------- comparing tensors
def close(a, b, rtol: float = 1e-4, atol: float = 1e-5, equal_nan: bool = False) -> bool:
    """Both tensors, the same shape and all values close (in float64; NaN matches only with equal_nan)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    return bool(torch.allclose(a.detach().cpu().double(), b.detach().cpu().double(), rtol=rtol, atol=atol,
                               equal_nan=equal_nan))


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest absolute difference (NaN counts as infinite); 0.0 for empty tensors."""
    d = (a.detach().cpu().double() - b.detach().cpu().double()).abs()
    return float(d.nan_to_num(nan=float("inf")).max()) if d.numel() else 0.0


def shape(x) -> str:
    """'(2, 3, 4)' for a tensor or a size."""
    size = x.shape if isinstance(x, torch.Tensor) else x
    return "(" + ", ".join(str(int(s)) for s in size) + ")"


def type_name(x) -> str:
    return type(x).__name__


def seed(n: int) -> None:
    """Seed the CPU generator only (``torch.manual_seed`` would also reseed CUDA, which evaluate's
    fork does not restore); the checkers build and run everything on the CPU."""
    torch.random.default_generator.manual_seed(n)


# --------------------------------------------------------------------------- running student code
def call_student(fn: Callable, *args, **kwargs):
    """Call the student's function (or class, or module); NotDone if it is missing or returns
    None/Ellipsis. An exception raised inside is marked as the student's and re-raised."""
    if fn is None or fn is Ellipsis:
        raise NotDone
    try:
        result = fn(*args, **kwargs)
    except NotDone:
        raise
    except Exception as err:
        mark_student(err)
        raise
    if result is None or result is Ellipsis:
        raise NotDone
    return result


def mark_student(err: BaseException) -> BaseException:
    """Mark ``err`` as raised inside the student's code (``evaluate`` then blames the student)."""
    try:
        setattr(err, _STUDENT, True)
    except (AttributeError, TypeError):      # pragma: no cover - exceptions without a __dict__
        pass
    return err


def raised_by_student(err: BaseException) -> bool:
    return bool(getattr(err, _STUDENT, False))


# Where a raw Python error from the student's code has a likely cause: (type, any of these texts, key).
_CAUSES = (
    (TypeError, ("'tuple' object", "not tuple", "and 'tuple'", "'tuple' and", "concatenate tuple"), "ex.cause.tuple"),
    (TypeError, ("'float' object cannot be interpreted as an integer", "found element of type float",
                 "tuple of ints,but got float", "tuple of ints, but got float", "slice indices must be integers",
                 "must be int, not float", "not float"), "ex.cause.float_int"),
    (TypeError, ("'NoneType'", "NoneType"), "ex.cause.none"),
    (AttributeError, ("'NoneType'",), "ex.cause.none"),
    (AttributeError, ("'tuple' object",), "ex.cause.tuple"),
    (NameError, ("",), "ex.cause.name"),
    (IndexError, ("Dimension out of range",), "ex.cause.dim"),
    (RuntimeError, ("mat1 and mat2 shapes cannot be multiplied", "must match the size of tensor",
                    "Expected size for first two dimensions of batch2", "size mismatch"), "ex.cause.shapes"),
)


def error_cause(err: BaseException) -> str | None:
    """The message key of the likely cause of ``err``, or None where none is known."""
    text = str(err)
    for kind, needles, key in _CAUSES:
        if isinstance(err, kind) and any(n in text for n in needles):
            return key
    return None


def _first_line(err: BaseException) -> str:
    return str(err).splitlines()[0] if str(err) else ""


def _word(value, lang: str | None):
    return t(value, lang) if isinstance(value, Msg) else value


def wording(key: str, fields: dict, lang: str | None) -> str:
    """``t(key, **fields)`` with every ``Msg`` field translated first."""
    return t(key, lang, **{k: _word(v, lang) for k, v in fields.items()})


def evaluate(name: str, diagnose: Callable[[], Diagnosis], lang: str | None = None, *,
             discussion: str | None = None) -> Feedback:
    """Run ``diagnose() -> (ok, key, fields)`` and word the verdict; ``name`` is the exercise's key.

    ``discussion``: a message key shown after a pass (a short model discussion, with the same
    fields), for questions that have no single right code.
    """
    threads = torch.get_num_threads()
    try:
        with torch.random.fork_rng(devices=[]):    # the notebook's random state is never touched
            seed(0)                                # and the checker's draws never depend on it
            ok, key, fields = diagnose()
    except NotDone as err:
        return Feedback(None, wording(err.key, {"name": Msg(name), **err.fields}, lang))
    except NotImplementedError:
        return Feedback(None, t("ex.not_done", lang, name=t(name, lang)))
    except Exception as err:
        message = _first_line(err)
        if not raised_by_student(err):             # a bug of the checker: never the student's fault
            return Feedback(None, t("ex.checker_error", lang, error=type(err).__name__, message=message))
        cause = error_cause(err)
        if cause is None:
            return Feedback(False, t("ex.error", lang, error=type(err).__name__, message=message))
        return Feedback(False, t("ex.error_cause", lang, cause=t(cause, lang), error=type(err).__name__,
                                 message=message), cause)
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    text = t("ex.correct" if ok else "ex.wrong", lang, detail=wording(key, fields, lang))
    if ok and discussion:
        text += "\n" + t("ex.discussion", lang, text=wording(discussion, fields, lang))
    return Feedback(bool(ok), text, key)


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
