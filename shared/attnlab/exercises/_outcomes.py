"""Outcomes of lessons 06-09's probes beyond ``attempt``: ``typed_attempt`` also records the type of
what the student's code returned (``"returned"``: "Tensor", "ndarray", "tuple of (Tensor, ndarray,
Tensor)", ...), since ``to_data`` turns a numpy array into a tensor and the judge must still tell a
student who returned numpy that a tensor is asked for (the untouched TODO is recognised on the
student's own function, as ``attempt`` does); ``answer_outcome`` records an answer that is a value
("which head?"), ``pair`` reads a (layer, head) answer back.
"""
from __future__ import annotations

import numbers

from ._common import attempt, to_data, untouched


def type_name(value) -> str:
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of ({', '.join(type(v).__name__ for v in value[:8])})"
    return type(value).__name__


def typed_attempt(fn, *args, **kwargs) -> dict:
    """``attempt(fn, *args, **kwargs)`` plus ``"returned"``: the type name of the returned value."""
    if untouched(fn):
        return attempt(fn, *args, **kwargs)
    seen: list[str] = []

    def run(*a, **k):
        result = fn(*a, **k)
        seen.append(type_name(result))
        return result

    outcome = attempt(run, *args, **kwargs)
    if seen:
        outcome["returned"] = seen[-1]
    return outcome


def returned(results: dict, key: str) -> str:
    """The type name recorded for ``results[key]`` ("" when none was)."""
    outcome = results.get(key)
    value = outcome.get("returned") if isinstance(outcome, dict) else None
    return value if isinstance(value, str) else ""


def numpy_returned(results: dict, key: str) -> bool:
    return "ndarray" in returned(results, key)


def answer_outcome(answer) -> dict:
    """The student's answer (a value, not code) recorded as an outcome: None or ``...`` is not done."""
    return {"not_done": True} if answer is None or answer is Ellipsis else {"value": to_data(answer)}


def pair(answer) -> tuple[int, int] | None:
    """(layer, head) from a pair of integers (a tuple or a list), else None."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2 \
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in answer):
        return None
    return int(answer[0]), int(answer[1])
