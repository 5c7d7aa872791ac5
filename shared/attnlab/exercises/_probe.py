"""The probe side of a checker: what runs next to the student's code (their kernel, or the grading
sandbox). It draws every input from a seed, calls the student's code, and turns what came back into
plain data that a judge in another process can read (``_judge``). Re-exported by ``_common``.

    draw = Draw(seed, "l01/softmax")          # sizes and tensors from the seed alone
    outcome = attempt(fn, x)                  # {"value": ...} | {"error": {...}} | {"not_done": True}

Nothing here decides a verdict, and nothing touches torch's global random state.
"""
from __future__ import annotations

import ast
import dis
import inspect
import numbers
import secrets
import textwrap
import zlib
from contextlib import contextmanager
from typing import Callable

import torch

from ._errors import error_data, mark_student, raised_by_student  # noqa: F401  (re-exported)

_MAX_ELEMENTS = 4_000_000          # a returned tensor larger than this is recorded by its shape only
_MAX_DEPTH = 6


class NotDone(Exception):
    """The student has not written the exercise yet; ``key``: the message that says what to finish
    (default ``ex.not_done``: the TODO of this cell), with the exercise's name as ``{name}``."""

    def __init__(self, key: str = "ex.not_done", **fields):
        super().__init__(key)
        self.key, self.fields = key, fields


class ReturnedNone(Exception):
    """The student's function was written (it is not the untouched TODO) but returned None:
    most often a forgotten ``return``. A wrong answer, not "not done"."""


# --------------------------------------------------------------------------- seeds and sizes
def fresh_seed() -> int:
    """A new seed from the operating system's entropy (never from torch's global generator)."""
    return secrets.randbelow(2 ** 31)


def torch_seed(seed: int) -> int:
    """``seed`` of any size as a seed torch takes (at most 2**63 - 1): the grader's per-student seeds
    go up to 2**62 and probes multiply them."""
    return int(seed) % 2 ** 62


def generator(seed: int) -> torch.Generator:
    """A CPU torch.Generator seeded with ``seed`` of any size."""
    return torch.Generator().manual_seed(torch_seed(seed))


class Draw:
    """Everything a probe builds, drawn from ``seed`` alone (and a ``salt``, the exercise's key, so
    two exercises draw different sizes from one seed): its own torch.Generator, nothing global."""

    def __init__(self, seed: int, salt: str = ""):
        self.seed = int(seed)
        self.g = generator(self.seed * 1_000_003 + zlib.crc32(salt.encode()))

    def int(self, low: int, high: int) -> int:
        """An integer in [low, high], both included."""
        return int(torch.randint(low, high + 1, (1,), generator=self.g))

    def choice(self, options):
        options = list(options)
        return options[self.int(0, len(options) - 1)]

    def sample(self, options, k: int) -> list:
        """``k`` distinct items of ``options``, in random order."""
        options = list(options)
        order = torch.randperm(len(options), generator=self.g)[:k]
        return [options[int(i)] for i in order]

    def uniform(self, low: float, high: float) -> float:
        return low + (high - low) * float(torch.rand((), generator=self.g, dtype=torch.float64))

    def randn(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=self.g, dtype=dtype)

    def randint(self, low: int, high: int, shape) -> torch.Tensor:
        """Integers in [low, high] (both included), int64."""
        return torch.randint(low, high + 1, tuple(shape), generator=self.g)

    def perm(self, n: int) -> list[int]:
        return [int(i) for i in torch.randperm(n, generator=self.g)]

    def sub(self, salt: str) -> "Draw":
        """An independent stream for one part of the probe (the same seed, another salt)."""
        return Draw(self.seed, f"{salt}/{int(torch.randint(0, 2 ** 30, (1,), generator=self.g))}")


@contextmanager
def seeded(seed: int):
    """Torch's global CPU generator seeded with ``seed`` inside, restored after: for building
    modules (nn.Linear draws its weights from the global generator) the same way in probe and judge."""
    with torch.random.fork_rng(devices=[]):
        torch.random.default_generator.manual_seed(torch_seed(seed))
        yield


# --------------------------------------------------------------------------- the untouched TODO
_QUIET_OPS = {"RESUME", "NOP", "CACHE", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST", "POP_TOP",
              "EXTENDED_ARG", "NOT_TAKEN"}


def untouched(obj) -> bool:
    """True for the TODO as the notebook ships it: None, ``...``, a function whose body does
    nothing but return None (``# TODO`` / ``pass`` / ``return None``, read from its bytecode, so
    that it works without the source), or one whose source still has its ``# TODO`` and still ends
    with the TODO's ``return None`` (templates that unpack the shapes first). A function that
    returns None otherwise was written and forgot its ``return``. An nn.Module or a class is judged
    by its ``forward``."""
    if obj is None or obj is Ellipsis:
        return True
    if isinstance(obj, torch.nn.Module):
        obj = type(obj).forward
    elif isinstance(obj, type):
        obj = getattr(obj, "forward", None)
        if obj is None:
            return False
    func = getattr(obj, "__func__", obj)
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    for ins in dis.get_instructions(code):
        if ins.opname not in _QUIET_OPS or (
                ins.opname in ("LOAD_CONST", "RETURN_CONST") and ins.argval not in (None, Ellipsis)):
            return _todo_template(func)
    return True


def _todo_template(func) -> bool:
    """Does the source of ``func`` still have a TODO comment and end with ``return None``?"""
    source = source_of(func)
    if not source or "TODO" not in source:
        return False
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    body = next((n.body for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    last = body[-1] if body else None
    return isinstance(last, ast.Return) and (last.value is None or (
        isinstance(last.value, ast.Constant) and last.value.value is None))


# --------------------------------------------------------------------------- calling the student
def call_student(fn: Callable, *args, **kwargs):
    """Call the student's function (or class, or module). NotDone while it is the untouched TODO
    (or returns ``...``); ReturnedNone when written but returning None. An exception raised inside
    is marked as the student's and re-raised."""
    if fn is None or fn is Ellipsis:
        raise NotDone
    try:
        result = fn(*args, **kwargs)
    except (NotDone, ReturnedNone):
        raise
    except Exception as err:
        mark_student(err)
        raise
    if result is Ellipsis or (result is None and untouched(fn)):
        raise NotDone
    if result is None:
        raise ReturnedNone
    return result


def attempt(fn: Callable, *args, **kwargs) -> dict:
    """Call the student's code once and record what happened, as plain data:

    ``{"value": data}`` (``{"value": None}``: it ran but returned None), ``{"not_done": True}`` (the
    untouched TODO, ``...`` or NotImplementedError), or ``{"error": {"type", "types", "message",
    "cause"}}``. ``"changed"`` lists the positions of the tensor arguments it modified in place."""
    before = [a.detach().clone() if isinstance(a, torch.Tensor) else None for a in args]
    try:
        result = call_student(fn, *args, **kwargs)
    except NotDone:
        return {"not_done": True}
    except NotImplementedError:
        return {"not_done": True}
    except ReturnedNone:
        out: dict = {"value": None}
    except Exception as err:                    # noqa: BLE001 - the student's, recorded as data
        out = {"error": error_data(err)}
    else:
        out = {"value": to_data(result)}
    out["changed"] = [i for i, (a, b) in enumerate(zip(args, before))
                      if b is not None and not _same(a, b)]
    return out


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """``a`` still holds what ``b`` (a copy taken before the call) holds, NaN included."""
    try:
        a = a.detach()
        return (a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a.isnan(), b.isnan()))
                and bool(torch.equal(a.nan_to_num(), b.nan_to_num())))
    except Exception:                           # noqa: BLE001 - a tensor the student broke
        return False


def opaque(obj) -> dict:
    """How a value that is not plain data is recorded: its type's name (and shape, for a tensor)."""
    out = {"__type__": type(obj).__name__}
    if isinstance(obj, torch.Tensor):
        out["shape"] = [int(s) for s in obj.shape]
        out["dtype"] = str(obj.dtype)
    return out


def to_data(obj, depth: int = 0):
    """What the student returned, as plain data: tensors (detached CPU copies), numbers, strings,
    bools, None, and tuples/lists/dicts of those; a numpy array as ``{"__type__": "ndarray",
    "data": tensor}``; anything else as ``{"__type__": name}``."""
    if depth > _MAX_DEPTH:
        return opaque(obj)
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided or obj.is_meta or obj.numel() > _MAX_ELEMENTS:
            return opaque(obj)
        return obj.detach().to("cpu", copy=True).as_subclass(torch.Tensor)
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        return float(obj)
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(to_data(o, depth + 1) for o in obj)
    if isinstance(obj, (list, tuple)):
        return [to_data(o, depth + 1) for o in obj]
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj) and "__type__" not in obj:
        return {k: to_data(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, torch.Size):                                    # pragma: no cover - a tuple
        return tuple(int(s) for s in obj)
    if type(obj).__module__ == "numpy" and hasattr(obj, "dtype") and hasattr(obj, "shape"):
        out = opaque(obj)                      # an ndarray: its type, and its values as a tensor
        try:
            if obj.dtype.kind in "biuf" and obj.size <= _MAX_ELEMENTS:
                out["data"] = torch.from_numpy(obj.copy())
        except Exception:                                              # noqa: BLE001
            pass
        return out
    return opaque(obj)


# --------------------------------------------------------------------------- the student's source
def source_of(obj) -> str | None:
    """The source of the student's function or class (``inspect.getsource``: works for notebook
    cells, which IPython keeps in linecache); None when it cannot be found."""
    target = getattr(obj, "__func__", obj)
    if isinstance(target, torch.nn.Module):
        target = type(target)
    try:
        return textwrap.dedent(inspect.getsource(target))
    except (OSError, TypeError):
        return None


def references(obj) -> list[str]:
    """The names the student's function uses (globals, attributes, nested functions included) and,
    for each global that is a function, class or module, its qualified name: what a judge checks
    for a forbidden call when the source is missing (``attnlab.masks.causal_mask``)."""
    target = getattr(obj, "__func__", obj)
    if isinstance(target, type) or isinstance(target, torch.nn.Module):
        cls = target if isinstance(target, type) else type(target)
        codes = [v.__code__ for v in vars(cls).values() if hasattr(v, "__code__")]
        scope = vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {}
    else:
        code = getattr(target, "__code__", None)
        codes = [code] if code is not None else []
        scope = getattr(target, "__globals__", {})
    names: set[str] = set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    out = set(names)
    if inspect.isfunction(target) or inspect.isbuiltin(target):        # the student's name for a package function
        out.add(f"{getattr(target, '__module__', '') or ''}.{getattr(target, '__qualname__', '')}")
    for name in names:
        value = scope.get(name) if isinstance(scope, dict) else None
        if inspect.ismodule(value):
            out.add(value.__name__)
        elif inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value):
            out.add(f"{getattr(value, '__module__', '') or ''}.{getattr(value, '__qualname__', name)}")
    return sorted(out)
