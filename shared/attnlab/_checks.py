"""Input validation shared by the modules: clear errors instead of deep torch tracebacks."""
from __future__ import annotations

import torch


def shape(t: torch.Tensor) -> str:
    return str(tuple(t.shape))


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


def check_mask(mask, target: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """A bool mask (True = may attend) broadcastable to `target` (B, H, T, S)."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a bool torch.Tensor (True = may attend), got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
                        "convert with `mask.bool()` or `mask == 1` if 1 means 'may attend'")
    if mask.dim() > len(target):
        raise ValueError(f"mask has shape {shape(mask)} with {mask.dim()} dimensions; "
                         f"it must broadcast to the scores' shape {tuple(target)}")
    try:
        ok = torch.broadcast_shapes(mask.shape, target) == torch.Size(target)
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(f"mask of shape {shape(mask)} does not broadcast to the scores' shape "
                         f"(B, H, T, S) = {tuple(target)}")
    if mask.device != device:
        raise ValueError(f"mask is on {mask.device} but the scores are on {device}")
    return mask
