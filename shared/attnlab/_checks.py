"""Input validation shared by the modules: clear errors instead of deep torch tracebacks.

The words are in ``messages/core_checks.json`` (``checks.*``), so they follow ``set_language``.
"""
from __future__ import annotations

import operator

import torch

from .course.i18n import t


def shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def _got(x) -> str:
    """``float 8.0``: a refused value with its type, as the messages show it."""
    return f"{type(x).__name__} {x!r}"


def positive_int(name: str, n) -> int:
    """``n`` as an int >= 1 (numpy integers accepted); bool, float and the rest refused."""
    if isinstance(n, bool):
        raise TypeError(t("checks.int_type", name=name, got=_got(n)))
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(t("checks.int_type", name=name, got=_got(n))) from None
    if n < 1:
        raise ValueError(t("checks.int_positive", name=name, got=str(n)))
    return n


def probability(name: str, p) -> float:
    """A dropout probability in [0, 1); a bool is refused (``dropout=True`` is a mistake)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(t("checks.prob_type", name=name, got=_got(p)))
    if not 0.0 <= p < 1.0:
        raise ValueError(t("checks.prob_range", name=name, got=p))
    return float(p)


def flag(name: str, value) -> bool:
    """A switch such as ``is_causal`` or ``cross``: True or False, nothing that merely looks like one."""
    if not isinstance(value, bool):
        raise TypeError(t("checks.bool", name=name, got=_got(value)))
    return value


def _either(options) -> str:
    """(2, 3, 4) -> "2, 3 or 4" in the current language."""
    words = [str(o) for o in options]
    if len(words) == 1:
        return words[0]
    return t("checks.list_sep").join(words[:-1]) + t("checks.list_or") + words[-1]


def check_tensor(name: str, x, ndim: int | tuple[int, ...] | None = None) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(t("checks.tensor_type", name=name, got=type(x).__name__))
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and x.dim() not in dims:
        raise ValueError(t("checks.tensor_ndim", name=name, want=_either(dims), shape=shape(x)))


def check_float(name: str, x: torch.Tensor) -> None:
    if not x.is_floating_point():
        raise TypeError(t("checks.float_dtype", name=name, dtype=str(x.dtype)))


def check_same(**tensors: torch.Tensor) -> None:
    """All tensors on one device and of one dtype."""
    items = list(tensors.items())
    first_name, first = items[0]
    for name, x in items[1:]:
        if x.device != first.device:
            raise ValueError(t("checks.same_device", a=first_name, a_device=str(first.device),
                               b=name, b_device=str(x.device)))
        if x.dtype != first.dtype:
            raise TypeError(t("checks.same_dtype", a=first_name, a_dtype=str(first.dtype),
                              b=name, b_dtype=str(x.dtype)))


def _bool_mask(mask, device: torch.device) -> None:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(t("checks.mask_type", got=type(mask).__name__))
    if mask.dtype != torch.bool:
        # An additive float mask (0 = may attend, -inf = masked, as nn.Transformer.generate_square_subsequent_mask)
        # becomes ``mask == 0``; ``mask.bool()`` would be True exactly on the masked cells.
        key = "checks.mask_float" if mask.is_floating_point() else "checks.mask_int"
        raise TypeError(t(key, dtype=str(mask.dtype)))
    if mask.device != device:
        raise ValueError(t("checks.mask_device", mask_device=str(mask.device), device=str(device)))


def _fits(mask: torch.Tensor, target: tuple[int, ...]) -> bool:
    """Same rank as ``target`` and each dimension equal to it or 1: broadcasting cannot misalign."""
    return mask.dim() == len(target) and all(m in (1, n) for m, n in zip(mask.shape, target))


def check_mask(mask, target: tuple[int, ...], device: torch.device) -> None:
    """Low level: a bool mask with as many dimensions as the scores ``target`` (..., T, S), each 1 or equal."""
    _bool_mask(mask, device)
    if not _fits(mask, target):
        raise ValueError(t("checks.mask_fit", shape=shape(mask), target=str(tuple(target)), n=len(target)))


def check_attn_mask(mask, B: int, H: int, T: int, S: int, device: torch.device) -> None:
    """Module level: a bool mask with the scores' rank, 4-D, broadcastable to (B, H, T, S) with
    each dimension equal or 1. Nothing is guessed from the sizes, so a mask means the same
    whatever the batch size: a 2-D mask could be (T, S) or a (B, S) padding mask, a 3-D one
    (B, T, S) or (H, T, S); they are refused with the fix for each reading."""
    _bool_mask(mask, device)
    if _fits(mask, (B, H, T, S)):
        return
    fix = {2: "checks.mask_fix_2d", 3: "checks.mask_fix_3d", 1: "checks.mask_fix_1d"}.get(mask.dim(), "checks.mask_fix")
    raise ValueError(t("checks.attn_mask_fit", shape=shape(mask), target=str((B, H, T, S)), fix=t(fix)))


def check_causal_sizes(T: int, S: int, what: str = "is_causal=True") -> None:
    """The causal rule puts the T queries at the last T of the S key positions: S >= T."""
    if S < T:
        raise ValueError(t("checks.causal_s_lt_t", what=what, T=T, S=S))
