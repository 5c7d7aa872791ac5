"""Reading a trained model's attention: which head puts the most weight where it should."""
from __future__ import annotations

from typing import NamedTuple

import torch


class HeadScore(NamedTuple):
    layer: int      # 1-based, as in the figure titles
    head: int       # 1-based
    mass: float


def mass_on(weights: list[torch.Tensor], marked: torch.Tensor) -> torch.Tensor:
    """(layers, heads): the average weight on the (query, key) pairs marked 1 in ``marked``.

    ``weights``: one (B, H, T, S) tensor per layer; ``marked`` (B, 1, T, S), 0 or 1. Averaged over
    every marked pair of every row.
    """
    return torch.stack([(w * marked).sum(dim=(0, 2, 3)) / marked.sum() for w in weights])


def best_head(mass: torch.Tensor, layer: int | None = None) -> HeadScore:
    """The (layer, head), counted from 1, with the largest ``mass`` (layers, heads); in one
    ``layer`` only (a Python index, -1 for the last) if given."""
    if layer is not None:
        li = range(mass.shape[0])[layer]
        h = int(mass[li].argmax())
        return HeadScore(li + 1, h + 1, float(mass[li, h]))
    best = int(mass.argmax())
    li, h = divmod(best, mass.shape[1])
    return HeadScore(li + 1, h + 1, float(mass.flatten()[best]))
