"""A grid of attention heatmaps drawn into a Figure of fixed size, with a hand-made layout.

Used by the explorer (heads side by side) and its static figure (mask type x head).
The layout is computed in pixels instead of by matplotlib's constrained layout: it is
several times faster, and the figure keeps its size whatever the tokens are.
Masked cells are grey; a query row that sees no key at all gets a red label.
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

MASKED_COLOR = "#d0d0d0"
EMPTY_ROW_COLOR = "#c0392b"
MUTED_COLOR = "#7f7f7f"
MAX_LABEL_CHARS = 8
CMAP = matplotlib.colormaps["viridis"].with_extremes(bad=MASKED_COLOR)


def text_width(text: str) -> float:
    """Approximate width of ``text`` in em: wide (CJK) characters 1.0, others 0.62."""
    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.62 for c in text)


def short_label(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[:MAX_LABEL_CHARS - 1] + "…"


def heatmap_grid(fig: Figure, weights, masks, tokens: Sequence[str], *, titles: Sequence[str],
                 xlabel: str, ylabel: str | Sequence[str], suptitle: str = "", footnote: str = "",
                 muted: Sequence[bool] | None = None, annotate: bool = False,
                 font_scale: float = 1.0) -> bool:
    """Draw ``weights`` (R, C, T, T) as an R x C grid of heatmaps into the empty ``fig``.

    ``masks`` (bool, True = may attend) broadcasts to the weights; masked cells are grey.
    ``titles`` has R * C panel titles; ``ylabel`` is one string or one per row of panels.
    ``muted`` marks tokens (e.g. padding) whose labels are drawn in grey. Returns whether
    the values could be written in the cells (False when ``annotate`` but cells are too small).
    """
    weights = np.asarray(weights, dtype=np.float32)
    R, C, T, S = weights.shape
    masks = np.broadcast_to(np.asarray(masks, dtype=bool), weights.shape)
    labels = [short_label(tok) for tok in tokens]
    muted = list(muted) if muted is not None else [False] * T
    ylabels = [ylabel] * R if isinstance(ylabel, str) else list(ylabel)

    dpi = fig.dpi
    W, H = fig.get_size_inches() * dpi
    px = dpi / 72.0                                       # pixels per point
    fs = 10.0 * font_scale                                # base font size (pt)
    label_em = max((text_width(s) for s in labels), default=1.0)
    rotate = label_em > 1.2
    tick_fs = 0.85 * fs
    label_px = label_em * tick_fs * px + 4
    line = 1.5 * fs * px                                  # one line of text (px)

    top = (1.6 * line if suptitle else 0.3 * line) + line
    bottom = (label_px if rotate else line) + line + (1.1 * line if footnote else 0.3 * line)
    left = label_px + line + 4
    right = 4.5 * fs * px
    hgap, vgap = 0.6 * line, 1.2 * line
    side = min((W - left - right - (C - 1) * hgap) / C, (H - top - bottom - (R - 1) * vgap) / R)
    side = max(side, 10.0)
    cell = side / T
    tick_fs = min(tick_fs, 0.8 * cell / px)
    x0 = left + max(0.0, (W - left - right - C * side - (C - 1) * hgap) / 2)

    annotated = annotate and cell >= 16
    value_fs = min(0.8 * fs, 0.36 * cell / px)
    image = None
    for r in range(R):
        for c in range(C):
            x = x0 + c * (side + hgap)
            y = H - top - side - r * (side + vgap)
            ax = fig.add_axes((x / W, y / H, side / W, side / H))
            w = np.ma.masked_array(weights[r, c], mask=~masks[r, c])
            image = ax.imshow(w, cmap=CMAP, vmin=0.0, vmax=1.0, interpolation="nearest", aspect="auto")
            ax.set_title(titles[r * C + c], fontsize=fs, pad=3)
            ax.tick_params(length=2, pad=1, labelsize=tick_fs)
            ax.set_xticks(range(S), labels if r == R - 1 else [], rotation=90 if rotate else 0)
            ax.set_yticks(range(T), labels if c == 0 else [])
            if c == 0:
                ax.set_ylabel(ylabels[r], fontsize=fs)
                empty = ~masks[r, c].any(-1)
                for i, lab in enumerate(ax.get_yticklabels()):
                    lab.set_color(EMPTY_ROW_COLOR if empty[i] else MUTED_COLOR if muted[i] else "black")
            if r == R - 1:
                if c == 0:
                    ax.set_xlabel(xlabel, fontsize=fs)
                for j, lab in enumerate(ax.get_xticklabels()):
                    if muted[j]:
                        lab.set_color(MUTED_COLOR)
            if annotated:
                _write_values(ax, weights[r, c], masks[r, c], value_fs)

    cax = fig.add_axes(((x0 + C * side + (C - 1) * hgap + 0.6 * line) / W, (H - top - R * side - (R - 1) * vgap) / H,
                        0.5 * line / W, (R * side + (R - 1) * vgap) / H))
    fig.colorbar(image, cax=cax).ax.tick_params(labelsize=0.85 * fs)
    if suptitle:
        fig.text(0.5, 1 - 0.25 * line / H, suptitle, ha="center", va="top", fontsize=1.1 * fs, fontweight="bold")
    if footnote:
        fig.text(4 / W, 0.3 * line / H, footnote, ha="left", va="bottom", fontsize=0.9 * fs, color="#333333")
    return annotated


def _write_values(ax, weights: np.ndarray, mask: np.ndarray, fontsize: float) -> None:
    for i, j in zip(*np.nonzero(mask)):
        v = float(weights[i, j])
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=fontsize,
                color="black" if v > 0.6 else "white")


def new_figure(width: float, height: float, dpi: float) -> Figure:
    """A Figure outside pyplot (nothing to close, nothing leaks)."""
    return Figure(figsize=(width, height), dpi=dpi)
