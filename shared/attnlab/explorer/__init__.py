"""The attention explorer: one sentence, four masks, 1-8 heads, scaling on or off; or a trained model
(lesson 07's reversal model, lesson 08's translator, lesson 10's verse GPT).

* ``state``: ``ExplorerState`` (a frozen dataclass) says what to show.
* ``compute``: ``compute(state)`` -> row and column tokens, the weights of every head (H, T, S),
  the mask (T, S) and a note. Pure, unit-tested without a browser.
* ``poet_mode``: the "poet-vi" / "poet-zh" models, lesson 10's verse GPT on a verse typed with " / ".
* ``svg``: the numbers -> a vector heatmap grid (SVG in HTML) that the browser draws at the
  output's width, with hover tooltips and row highlighting in CSS (no JavaScript).
* ``widgets``: ``AttentionExplorer`` / ``explore(**defaults)``, core ipywidgets (7.7 and 8).
* ``static``: ``plot_grid(...)``, the matplotlib figure for readers without a kernel.
"""
from .compute import Result, compute, empty_rows, pad_flags, translator_available
from .state import (ALL_HEADS, ATTENTION_KINDS, HEAD_COUNTS, MASK_TYPES, MODELS, PAD_SIDES, ExplorerState,
                    InputError)
from .static import plot_grid
from .widgets import AttentionExplorer, dashboard, draw, explore, render, title

__all__ = ["ExplorerState", "InputError", "Result", "compute", "render", "draw", "title", "plot_grid",
           "AttentionExplorer", "explore", "dashboard", "empty_rows", "pad_flags", "translator_available",
           "ALL_HEADS", "ATTENTION_KINDS", "HEAD_COUNTS", "MASK_TYPES", "MODELS", "PAD_SIDES"]
