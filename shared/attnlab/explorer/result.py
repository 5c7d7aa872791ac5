"""What every explorer model answers: ``Result`` (tokens, weights, mask, note), and ``InputError``.

The drawing only sees a ``Result``, so it does not care which model the numbers came from.
"""
from __future__ import annotations

from typing import NamedTuple

import torch


class InputError(ValueError):
    """Input the explorer cannot show; ``message`` is ready for the user, in the state's language."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Result(NamedTuple):
    queries: list[str]           # T row labels (padding included)
    keys: list[str]              # S column labels
    weights: torch.Tensor        # (H, T, S), every head
    mask: torch.Tensor           # (T, S) bool, True = may attend
    message: str                 # a note for the user ("" if none)
    muted_queries: tuple         # (T,) bool: pad tokens (grey labels)
    muted_keys: tuple            # (S,) bool
    fixed: dict                  # model modes: the settings the model fixes (mask, num_heads, pad, scaled)

    @property
    def tokens(self) -> list[str]:
        """The row tokens (self-attention: also the column tokens)."""
        return self.queries


def self_attention(tokens, weights, mask, message="", muted=None, fixed=None) -> Result:
    """A Result whose rows and columns are the same ``tokens``."""
    muted = tuple(muted) if muted is not None else (False,) * len(tokens)
    return Result(list(tokens), list(tokens), weights, mask, message, muted, muted, fixed or {})


def empty_rows(mask: torch.Tensor) -> int:
    """How many queries may attend to no key at all (their weights are all zero)."""
    return int((~mask.any(-1)).sum())


def causal(T: int) -> torch.Tensor:
    """(T, T) bool: query i may attend to keys 0..i."""
    return torch.ones(T, T, dtype=torch.bool).tril()
