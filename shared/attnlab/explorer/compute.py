"""State -> numbers: the tokens, the weights of every head (H, T, S), the mask (T, S) and a note.

Pure functions (cached models aside), no widgets, no drawing: ``compute`` hands the state to its
model (``attnlab.explorer.models``: random weights, lesson 07's reversal model, lesson 08's
translator, lesson 10's verse GPT), and every model returns the same ``Result``.
"""
from __future__ import annotations

from ..training import one_cpu_thread
from .models.random_weights import build_mask, pad_flags
from .models.translator_model import translator_available
from .result import Result, empty_rows
from .state import ExplorerState

__all__ = ["compute", "Result", "empty_rows", "pad_flags", "build_mask", "translator_available"]


@one_cpu_thread
def compute(state: ExplorerState) -> Result:
    """Row and column tokens, per-head weights (H, T, S), mask (T, S) and a note; InputError for
    bad input, with a message in ``state.lang``.

    On one CPU thread (the caller's setting is restored): the tensors are tiny, and idle torch
    threads that wake for them compete with the browser and the server for a small machine's cores.
    """
    return state.source.compute(state)
