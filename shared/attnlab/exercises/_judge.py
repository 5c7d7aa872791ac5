"""The judge side of a checker: pure and trusted. A judge reads the results a probe recorded
(plain data, possibly tampered with), rebuilds the same inputs from the seed, computes the
references with the package and returns ``(ok, message key, fields)``; it never calls the student's
code. Re-exported by ``_common``.

    @judging
    def judge_x(results, *, seed):
        out = value_of(results, "case0")          # raises Verdict for an error, None, not done, junk
        ...

Results travel between processes with ``save_results`` / ``load_results`` (``torch.save`` and
``torch.load(weights_only=True)``: tensors and plain containers only, never pickle's objects).
"""
from __future__ import annotations

import ast
import functools
import math
import numbers
from pathlib import Path
from typing import Callable

import torch

Diagnosis = tuple  # (ok: bool | None, message key, fields); ok None: not done yet


class Verdict(Exception):
    """Raised inside a judge to give its diagnosis at once (``@judging`` turns it into the return
    value): ``Verdict(False, "l01.softmax.shape", want=..., got=...)``."""

    def __init__(self, ok: bool | None, key: str, **fields):
        super().__init__(key)
        self.diagnosis = (ok, key, fields)


def judging(judge: Callable) -> Callable:
    """A judge's decorator: results that are not a dict are junk (a wrong answer); results that are
    one error (``{"error": {...}}``: the grader's word for a probe that could not run, e.g. the
    student's cell is gone) are that error; a ``Verdict`` raised anywhere inside becomes the diagnosis."""
    @functools.wraps(judge)
    def wrapped(results, *args, **kwargs):
        try:
            if not isinstance(results, dict):
                raise Verdict(False, "ex.no_result")
            if "error" in results:
                raise student_error(error_of(results))
            return judge(results, *args, **kwargs)
        except Verdict as verdict:
            return verdict.diagnosis
    return wrapped


# --------------------------------------------------------------------------- reading one outcome
def outcome_of(results: dict, key: str) -> dict:
    """The recorded outcome ``results[key]``; a Verdict (no result) if it is missing or malformed."""
    outcome = results.get(key)
    if not isinstance(outcome, dict) or not ({"value", "error", "not_done"} & set(outcome)):
        raise Verdict(False, "ex.no_result")
    return outcome


def error_of(outcome: dict) -> dict | None:
    """The student's error as recorded (type, types, message, cause), or None if it ran."""
    err = outcome.get("error")
    if err is None:
        return None
    if not isinstance(err, dict):
        raise Verdict(False, "ex.no_result")
    types = err.get("types")
    return {"type": str(err.get("type", "Exception"))[:80],
            "types": [str(t) for t in types] if isinstance(types, (list, tuple)) else [str(err.get("type"))],
            "message": str(err.get("message", ""))[:300],
            "cause": err.get("cause") if isinstance(err.get("cause"), str) else None}


def raises(error: dict | None, kind: str) -> bool:
    """Did the recorded error have the exception class ``kind`` (by name, subclasses included)?"""
    return error is not None and kind in error["types"]


def student_error(error: dict) -> Verdict:
    """The generic verdict on a student's exception: its likely cause first where one is known."""
    from ._errors import CAUSE_KEYS
    fields = {"error": error["type"], "message": error["message"]}
    if error["cause"] in CAUSE_KEYS:
        return Verdict(False, error["cause"], **fields)
    return Verdict(False, "ex.error", **fields)


def value_of(results: dict, key: str, *, errors: Callable[[dict], Diagnosis | None] | None = None):
    """What the student's code returned in ``results[key]``. Raises a Verdict instead for the
    untouched TODO (not done), an exception (``errors(error)`` first: an exercise's own hint for
    it, or None for the generic one), a function that returned None, or missing data."""
    outcome = outcome_of(results, key)
    if outcome.get("not_done"):
        raise Verdict(None, "ex.not_done")
    error = error_of(outcome)
    if error is not None:
        hint = errors(error) if errors else None
        if hint:
            raise Verdict(*hint[:2], **(hint[2] if len(hint) > 2 else {}))
        raise student_error(error)
    value = outcome["value"]
    if value is None:
        raise Verdict(False, "ex.returned_none")
    return value


def changed_inputs(results: dict, key: str) -> list[int]:
    """Positions of the tensor arguments the student's code modified in place, in ``results[key]``."""
    changed = outcome_of(results, key).get("changed", [])
    return [int(i) for i in changed if isinstance(i, int) and not isinstance(i, bool)] \
        if isinstance(changed, (list, tuple)) else []


# --------------------------------------------------------------------------- reading values
def is_tensor(value) -> bool:
    return type(value) is torch.Tensor


def kind(value) -> str:
    """The name of the type the student returned ('Tensor', 'list', 'ndarray', ...)."""
    if isinstance(value, dict) and isinstance(value.get("__type__"), str):
        return value["__type__"][:60]
    return type(value).__name__


def as_tensor(value):
    """The tensor the student returned, a numpy array's values included; None otherwise."""
    if is_tensor(value):
        return value
    if isinstance(value, dict) and value.get("__type__") == "ndarray" and is_tensor(value.get("data")):
        return value["data"]
    return None


def number(value):
    """A Python number from an int/float or a one-element tensor; None otherwise (bool is not a number)."""
    if is_tensor(value) and value.numel() == 1 and not value.dtype.is_complex:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return value


def finite(value: float) -> bool:
    return isinstance(value, numbers.Real) and math.isfinite(value)


# --------------------------------------------------------------------------- forbidden calls
def _used_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names used: Name loads, attributes, imported names, string constants; names defined)."""
    used, defined = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, ast.Store) else used).add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                used.update(alias.name.split("."))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            used.add(node.value)                                 # getattr(attnlab, "causal_mask")
    return used, defined


def forbidden_use(results: dict, forbidden: frozenset[str] | set[str]) -> str | None:
    """The first forbidden name the student's code uses, or None.

    Read from ``results["source"]`` (the function's source in the kernel; the grader puts the
    notebook cell's source there) with the AST: a forbidden name used as a name, an attribute
    (``attnlab.causal_mask``), an import or a string, unless the source defines it itself. Without
    a readable source, from ``results["references"]`` (the code object's names and the qualified
    names of the globals it uses, which also catches ``cm = attnlab.causal_mask`` in another cell)."""
    source = results.get("source")
    refs = results.get("references")
    hits: set[str] = set()
    parsed = False
    if isinstance(source, str):
        try:
            used, defined = _used_names(ast.parse(source))
            hits |= (used - defined) & set(forbidden)
            hits |= {n for n in used & set(forbidden) if n in defined and _attribute_only(source, n)}
            parsed = True
        except (SyntaxError, ValueError, RecursionError):
            pass
    if isinstance(refs, (list, tuple)):
        for ref in refs:
            if not isinstance(ref, str):
                continue
            last = ref.rsplit(".", 1)[-1]
            if last in forbidden and (ref.startswith(("attnlab.", "torch.")) if "." in ref else not parsed):
                hits.add(last)                # a package function by its qualified name; a bare name: no source
    return min(hits) if hits else None


def _attribute_only(source: str, name: str) -> bool:
    """Is ``name`` (which the source also defines) used as an attribute (``attnlab.name``)?"""
    return any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(ast.parse(source)))


# --------------------------------------------------------------------------- results on disk
_PLAIN = (str, int, float, bool, type(None))


def check_plain(data, depth: int = 0) -> None:
    """Raise ValueError unless ``data`` is plain: tensors, numbers, strings, bools, None, and
    lists/tuples/dicts (string keys) of those, at most 12 levels deep."""
    if depth > 12:
        raise ValueError("results nested too deeply")
    if isinstance(data, _PLAIN) or type(data) is torch.Tensor:
        return
    if isinstance(data, (list, tuple)) and type(data) in (list, tuple):
        for item in data:
            check_plain(item, depth + 1)
        return
    if type(data) is dict:
        for k, v in data.items():
            if not isinstance(k, str):
                raise ValueError(f"results have a key of type {type(k).__name__}")
            check_plain(v, depth + 1)
        return
    raise ValueError(f"results hold a {type(data).__name__}, which is not plain data")


def save_results(path, results: dict) -> None:
    """Write a probe's results to ``path`` (torch.save of plain data only)."""
    check_plain(results)
    torch.save(results, Path(path))


def load_results(path) -> dict:
    """Read results written by ``save_results``, safely: ``torch.load(weights_only=True)`` (no
    pickled objects are ever built) on the CPU, and plain data only."""
    data = torch.load(Path(path), map_location="cpu", weights_only=True)
    check_plain(data)
    if not isinstance(data, dict):
        raise ValueError("results must be a dict")
    return data
