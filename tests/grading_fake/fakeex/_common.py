"""save/load/evaluate of the stand-in registry (see __init__)."""
from __future__ import annotations

from typing import NamedTuple

import torch


class Feedback(NamedTuple):
    ok: bool | None
    text: str
    key: str | None = None


def save_results(path, results: dict) -> None:
    torch.save(results, path)


def load_results(path) -> dict:
    results = torch.load(path, weights_only=True)
    if not isinstance(results, dict):
        raise ValueError("results are not a dict")
    return results


def evaluate(name: str, diagnose, lang=None) -> Feedback:
    try:
        ok, key, fields = diagnose()
    except Exception as err:                      # a judge never raises; if it did, no point
        return Feedback(None, f"checker error in {name}: {type(err).__name__}", None)
    return Feedback(bool(ok), f"{'CORRECT' if ok else 'WRONG'} [{name}] {key} {fields}", key)


def call(fn, *args):
    """The student's function on ``args``: its value, or its exception as data."""
    try:
        return {"value": fn(*args)}
    except Exception as err:
        return {"error": {"type": type(err).__name__, "message": str(err).splitlines()[0][:200] if str(err) else "",
                          "cause": None}}


def tensor_of(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) else None
