"""The capstone checkers' weight copying: build the student's module (or record why it cannot be
built), read its state dict's names and shapes, load attnlab's weights into it. Shared by exercise 1
(capstone_mha), exercise 2 (capstone_block) and lesson 09 §5 (capstone_in_model).
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ._common import NotDone, ReturnedNone, call_student, close, error_data, value_of

TOL = 1e-5


def _close(a, b, tol: float = TOL) -> bool:
    """Same shape and close values; NaN matches NaN (a mistake may produce them where the reference does)."""
    return close(a, b, rtol=tol, atol=tol, equal_nan=True)


def build(cls, *args, **kwargs):
    """(the student's module, None), or (None, the outcome to record: not done or an error)."""
    try:
        module = call_student(cls, *args, **kwargs)
    except (NotDone, NotImplementedError):
        return None, {"not_done": True}
    except ReturnedNone:                                     # pragma: no cover - a class never returns None
        return None, {"value": None}
    except Exception as err:                                 # noqa: BLE001 - the student's, recorded as data
        return None, {"error": error_data(err), "raised_in": _raised_in(err)}
    if not isinstance(module, nn.Module) or not list(module.parameters()):
        return None, {"not_done": True}                      # the untouched skeleton: no submodule yet
    return module, None


def _raised_in(err: BaseException) -> str:
    """The class whose method raised ``err`` (the innermost frame with a ``self``), or ""."""
    name, tb = "", err.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, nn.Module):
            name = type(owner).__name__
        tb = tb.tb_next
    return name


def state_shapes(module: nn.Module) -> dict:
    """{name: shape} of the student's state dict (what the judge compares with attnlab's names)."""
    state = call_student(module.state_dict)
    return {str(k): [int(s) for s in v.shape] for k, v in state.items() if isinstance(v, torch.Tensor)}


def load(module: nn.Module, wanted: dict[str, torch.Tensor]) -> None:
    """attnlab's weights into the student's module (names it lacks are left out: the judge says so)."""
    have = state_shapes(module)
    call_student(module.load_state_dict, {k: v for k, v in wanted.items() if have.get(k) == list(v.shape)},
                 strict=False)


def mismatched(shapes, wanted: dict[str, torch.Tensor]) -> list[str]:
    """The names of ``wanted`` the student's module lacks, or has with another shape."""
    shapes = shapes if isinstance(shapes, dict) else {}
    return [k for k, v in wanted.items() if shapes.get(k) != list(v.shape)]


def built(results: dict, key: str = "build") -> None:
    """Raise the Verdict for a module that could not be built (not done, or the student's error)."""
    if key in results:
        value_of(results, key)
