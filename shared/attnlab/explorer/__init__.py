"""The attention explorer: one sentence, four masks, 1-8 heads, scaling on or off; or a trained model
(lesson 07's reversal model, lesson 08's translator, lesson 10's verse GPT).

* ``state``: ``ExplorerState`` (a frozen dataclass) says what to show.
* ``models``: one module per model behind one interface (``models.base.ExplorerModel``);
  ``compute(state)`` hands the state to its model -> a ``result.Result``: row and column tokens,
  the weights of every head (H, T, S), the mask (T, S) and a note. Pure, unit-tested without a browser.
* ``view``: which heads and positions one figure shows (pages of heads, windows of positions).
* ``svg``: the numbers -> a vector heatmap grid (SVG in HTML) that the browser draws at the
  output's width, with hover tooltips and row highlighting in CSS (no JavaScript); ``figure``
  adds the title and legend.
* ``controls`` and ``widgets``: ``AttentionExplorer``, core ipywidgets (7.7 and 8); ``launch``:
  ``explore(**defaults)`` and the instructor's page.
* ``static``: ``plot_grid(...)``, the matplotlib figure for readers without a kernel.
"""
from .compute import Result, compute, empty_rows, pad_flags, translator_available
from .launch import dashboard, explore
from .figure import draw, render, title
from .state import (ALL_HEADS, ATTENTION_KINDS, HEAD_COUNTS, MASK_TYPES, MODELS, PAD_SIDES, ExplorerState,
                    InputError)
from .static import plot_grid
from .widgets import AttentionExplorer

__all__ = ["ExplorerState", "InputError", "Result", "compute", "render", "draw", "title", "plot_grid",
           "AttentionExplorer", "explore", "dashboard", "empty_rows", "pad_flags", "translator_available",
           "ALL_HEADS", "ATTENTION_KINDS", "HEAD_COUNTS", "MASK_TYPES", "MODELS", "PAD_SIDES"]
