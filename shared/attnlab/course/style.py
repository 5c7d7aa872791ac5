"""Colours shared by every attention figure of the course (static matplotlib figures and the explorer).

One colour for masked cells everywhere, distinct from every colour of the viridis map that
shows the weights (a masked weight is 0, but it is shown as "masked", not as a dark 0).
"""
from __future__ import annotations

WEIGHT_CMAP = "viridis"          # weights 0..1
MASKED_COLOR = "#d9d9d9"         # masked cells (light grey)
EMPTY_ROW_COLOR = "#c0392b"      # label of a query that may attend to no key at all
MUTED_COLOR = "#7f7f7f"          # labels of pad tokens
TEXT_COLOR = "#222222"


def weight_cmap(name: str = WEIGHT_CMAP):
    """The colormap ``name`` with masked (invalid) values drawn in MASKED_COLOR."""
    import matplotlib

    return matplotlib.colormaps[name].with_extremes(bad=MASKED_COLOR)
