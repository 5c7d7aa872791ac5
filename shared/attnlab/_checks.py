"""Input validation shared by the modules: clear errors instead of deep torch tracebacks."""
from __future__ import annotations

import operator

import torch


def shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


def positive_int(name: str, n) -> int:
    """``n`` as an int >= 1 (numpy integers accepted); bool, float and the rest refused."""
    if isinstance(n, bool):
        raise TypeError(f"{name} must be an int, got bool {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(n).__name__} {n!r}") from None
    if n < 1:
        raise ValueError(f"{name} must be a positive int, got {n}")
    return n


def probability(name: str, p) -> float:
    """A dropout probability in [0, 1); a bool is refused (``dropout=True`` is a mistake)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1), got {type(p).__name__} {p!r}")
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {p}")
    return float(p)


def check_tensor(name: str, t, ndim: int | tuple[int, ...] | None = None) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and t.dim() not in dims:
        want = " or ".join(str(d) for d in dims) if len(dims) < 3 else \
            ", ".join(str(d) for d in dims[:-1]) + f" or {dims[-1]}"
        raise ValueError(f"{name} must have {want} dimensions, got shape {shape(t)}")


def check_float(name: str, t: torch.Tensor) -> None:
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {t.dtype}")


def check_same(**tensors: torch.Tensor) -> None:
    """All tensors on one device and of one dtype."""
    items = list(tensors.items())
    first_name, first = items[0]
    for name, t in items[1:]:
        if t.device != first.device:
            raise ValueError(f"{first_name} is on {first.device} but {name} is on {t.device}; "
                             "move them to the same device")
        if t.dtype != first.dtype:
            raise TypeError(f"{first_name} has dtype {first.dtype} but {name} has dtype {t.dtype}; "
                            "use one dtype")


def _bool_mask(mask, device: torch.device) -> None:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a bool torch.Tensor (True = may attend), got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
                        "convert with `mask.bool()` or `mask == 1` if 1 means 'may attend'")
    if mask.device != device:
        raise ValueError(f"mask is on {mask.device} but the scores are on {device}")


def _fits(mask: torch.Tensor, target: tuple[int, ...]) -> bool:
    """Same rank as ``target`` and each dimension equal to it or 1: broadcasting cannot misalign."""
    return mask.dim() == len(target) and all(m in (1, n) for m, n in zip(mask.shape, target))


def check_mask(mask, target: tuple[int, ...], device: torch.device) -> None:
    """Low level: a bool mask with as many dimensions as the scores ``target`` (..., T, S), each 1 or equal."""
    _bool_mask(mask, device)
    if not _fits(mask, target):
        raise ValueError(f"mask of shape {shape(mask)} does not fit the scores' shape {tuple(target)}: "
                         f"it needs {len(target)} dimensions, each equal to the scores' or 1 "
                         f"(e.g. padding_mask(...) gives (B, 1, 1, S), causal_mask(T, S) gives (1, 1, T, S))")


def check_attn_mask(mask, B: int, H: int, T: int, S: int, device: torch.device) -> None:
    """Module level: a bool mask with the scores' rank, 4-D, broadcastable to (B, H, T, S) with
    each dimension equal or 1. Nothing is guessed from the sizes, so a mask means the same
    whatever the batch size: a 2-D mask could be (T, S) or a (B, S) padding mask, a 3-D one
    (B, T, S) or (H, T, S); they are refused with the fix for each reading."""
    _bool_mask(mask, device)
    if _fits(mask, (B, H, T, S)):
        return
    given = shape(mask)
    if mask.dim() == 2:
        fix = ("one (T, S) mask for every sequence and head: mask[None, None]; "
               "a (B, S) padding mask: padding_mask(token_ids) or mask[:, None, None]")
    elif mask.dim() == 3:
        fix = "a (B, T, S) mask: mask[:, None]; an (H, T, S) mask: mask[None]"
    elif mask.dim() == 1:
        fix = "a 1-D (S,) mask must be (1, 1, 1, S): use mask[None, None, None]"
    else:
        fix = "padding_mask(...) gives (B, 1, 1, S), causal_mask(T, S) gives (1, 1, T, S)"
    raise ValueError(f"mask has shape {given}; expected 4-D (B, H, T, S) = {(B, H, T, S)} with each "
                     f"dimension equal or 1. Likely fix: {fix}")
