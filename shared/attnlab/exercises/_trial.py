"""What the probes of lessons 06-09 share: draw sizes from a seed, call the student's code and keep
what came back as plain data, and read that data back in a judge that trusts none of it.

A probe returns a dict of plain data (tensors detached on the CPU, numbers, strings, lists); where
the student's code raised, the entry is ``{"error": {"type", "message", "cause"}}``, where it
returned None ``{"error": {"type": "NotDone", ...}}``. ``replay(entry)`` in the judge turns such an
entry back into the exception ``_common.evaluate`` words, so the student reads what they read when
the checker and their code ran together.
"""
from __future__ import annotations

import builtins
import math
import numbers
import secrets

import torch

from ._common import NotDone, call_student, error_cause, mark_student

NOT_DONE = "NotDone"


def fresh_seed(seed: int | None) -> int:
    """``seed``, or a new one from the OS's entropy (never from torch's random state)."""
    return secrets.randbits(31) if seed is None else int(seed)


def generator(seed: int, salt: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed((int(seed) * 1_000_003 + salt) % (2 ** 63))


def pick(g: torch.Generator, choices):
    """One of ``choices``, drawn with ``g``."""
    choices = list(choices)
    return choices[int(torch.randint(len(choices), (1,), generator=g))]


def plain(value, depth: int = 0):
    """The student's result as plain data: tensors detached and cloned on the CPU, tuples and lists
    as lists (tagged with their type), numbers and strings as they are, anything else by its type name."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, numbers.Number):
        return float(value) if isinstance(value, numbers.Real) else str(value)
    if isinstance(value, (tuple, list)) and depth < 3:
        return {"sequence": type(value).__name__, "items": [plain(v, depth + 1) for v in value[:8]],
                "length": len(value)}
    return {"object": type(value).__name__}


def error_data(err: BaseException) -> dict:
    text = str(err)
    return {"error": {"type": type(err).__name__, "message": text.splitlines()[0] if text else "",
                      "cause": error_cause(err)}}


def attempt(fn, *args, **kwargs):
    """``plain(fn(*args, **kwargs))`` through ``call_student``, or the error as data."""
    try:
        return plain(call_student(fn, *args, **kwargs))
    except NotDone as err:
        return {"error": {"type": NOT_DONE, "key": err.key, "message": "", "cause": None}}
    except Exception as err:                            # noqa: BLE001 - the student's error, kept as data
        return error_data(err)


def failed(entry) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("error"), dict)


class StudentError(Exception):
    """An error of the student's code, rebuilt from its data when its type is not a builtin one."""


_BUILTIN_ERRORS = {name for name in dir(builtins) if name.endswith("Error")} - {"BaseExceptionGroup"}


def replay(entry) -> None:
    """Raise again, in the judge, the error kept in ``entry`` (a no-op for any other entry)."""
    if not failed(entry):
        return
    error = entry["error"]
    kind, message = str(error.get("type", "")), str(error.get("message", ""))[:500]
    if kind == NOT_DONE:
        raise NotDone
    cls = getattr(builtins, kind, None) if kind in _BUILTIN_ERRORS else None
    err = cls(message) if isinstance(cls, type) and issubclass(cls, Exception) else StudentError(message)
    if not isinstance(cls, type):
        err.__class__ = type(kind if kind.isidentifier() else "StudentError", (StudentError,), {})
    raise mark_student(err)


# ----------------------------------------------------------------------------- reading hostile data
def tensor(entry, dtype_kind: str | None = None) -> torch.Tensor | None:
    """``entry`` if it is a tensor (of the kind "float", "bool" or "int" when given), else None."""
    if not isinstance(entry, torch.Tensor):
        return None
    if dtype_kind == "float" and not entry.is_floating_point():
        return None
    if dtype_kind == "bool" and entry.dtype != torch.bool:
        return None
    return entry


def items(entry) -> list | None:
    """The items of a recorded tuple or list, else None."""
    if isinstance(entry, dict) and isinstance(entry.get("items"), list):
        return entry["items"]
    return None


def kind(entry) -> str:
    """What the student returned, by name: 'tuple', 'Tensor', 'int', 'NoneType', ..."""
    if isinstance(entry, dict) and "sequence" in entry:
        return str(entry["sequence"])
    if isinstance(entry, dict) and "object" in entry:
        return str(entry["object"])
    return type(entry).__name__


def number(entry) -> float | None:
    if isinstance(entry, bool) or not isinstance(entry, (int, float)) or not math.isfinite(entry):
        return None
    return float(entry)


def close(a, b, tol: float = 1e-5, equal_nan: bool = True) -> bool:
    """Both tensors, the same shape, all values within ``tol`` (float64; NaN matches NaN if asked)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    if a.is_complex() or b.is_complex():
        return False
    return bool(torch.allclose(a.double(), b.double(), rtol=tol, atol=tol, equal_nan=equal_nan))


def largest_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    d = (a.double() - b.double()).abs().nan_to_num(nan=float("inf"))
    return float(d.max()) if d.numel() else 0.0
