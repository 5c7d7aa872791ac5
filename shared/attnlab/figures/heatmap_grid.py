"""A grid of attention heatmaps drawn fast into a Figure of fixed size.

Used by the explorer's static figure (mask type x head), the one GitHub, nbviewer and PDF show.
Everything lives in ONE invisible Axes whose data coordinates are the figure's pixels
(origin top left): the panels are ``imshow`` images placed with ``extent``, the token
labels are plain texts. No tick machinery, no per-panel Axes, no constrained layout: the
figure keeps its size whatever the tokens are. Masked cells have the course's one masked
colour (``attnlab.style.MASKED_COLOR``); a query row that sees no key at all gets a red label;
the x labels are all upright or all vertical.
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from ..course.i18n import num
from ..course.style import EMPTY_ROW_COLOR, MASKED_COLOR, MUTED_COLOR, TEXT_COLOR, weight_cmap

MAX_LABEL_CHARS = 8
CMAP = weight_cmap()


def text_width(text: str) -> float:
    """Approximate width of ``text`` in em: wide (CJK) characters 1.0, others 0.62."""
    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.62 for c in text)


def short_label(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[:MAX_LABEL_CHARS - 1] + "…"


def new_figure(width: float, height: float, dpi: float) -> Figure:
    """A Figure outside pyplot: nothing to close, nothing leaks."""
    return Figure(figsize=(width, height), dpi=dpi)


class _Grid:
    """One drawing of a heatmap grid into an empty figure: a single invisible Axes whose data
    coordinates are the figure's pixels, and the artists added to it."""

    TEXT_DEFAULTS = dict(ha="left", va="baseline", rotation=0, color=TEXT_COLOR)

    def __init__(self, fig: Figure, lang: str | None = None):
        self.fig = fig
        self.lang = lang                      # numbers in this language (None: the current one)
        self.ax = fig.add_axes((0, 0, 1, 1))
        self.ax.set_axis_off()
        self.ax.set_autoscale_on(False)

    def text(self, x: float, y: float, s: str, **props) -> Text:
        return self.ax.add_artist(Text(x, y, s, **{**self.TEXT_DEFAULTS, **props}))

    def image(self, data, extent, interpolation: str = "nearest"):
        return self.ax.imshow(data, cmap=CMAP, vmin=0.0, vmax=1.0, aspect="auto", extent=extent,
                              interpolation=interpolation)

    def rect(self, x: float, y: float, width: float, height: float) -> Rectangle:
        return self.ax.add_patch(Rectangle((x, y), width, height, fill=False, lw=0.5, ec="#888888"))

    def _draw(self, weights, masks, tokens, *, titles, xlabel, ylabel, suptitle, footnote, warning, muted,
              annotate, font_scale) -> bool:
        weights = np.asarray(weights, dtype=np.float32)
        R, C, T, S = weights.shape
        masks = np.broadcast_to(np.asarray(masks, dtype=bool), weights.shape)
        labels = [short_label(tok) for tok in tokens]
        muted = list(muted) if muted is not None else [False] * T
        ylabels = [ylabel] * R if isinstance(ylabel, str) else list(ylabel)

        W, H = self.fig.get_size_inches() * self.fig.dpi
        self.ax.set_xlim(0, W)
        self.ax.set_ylim(H, 0)                                # pixels, y down
        px = self.fig.dpi / 72.0                              # pixels per point
        fs = 10.0 * font_scale                                # base font size (pt)
        line = 1.45 * fs * px                                 # height of one line of text (px)
        widths = [text_width(s) for s in labels]              # em
        notes = [(text, color) for text, color in ((warning, EMPTY_ROW_COLOR), (footnote, "#444444")) if text]
        top = (1.5 * line if suptitle else 0.3 * line) + line
        hgap, vgap = 0.5 * line, 1.6 * line

        def fit(tick_fs, rotate):
            """Margins for labels of this size -> (label width px, x label height px, panel side px)."""
            label_px = max(widths, default=1.0) * tick_fs * px + 0.3 * line
            xlabel_px = max([w * tick_fs * px + 0.3 * line for w, r in zip(widths, rotate) if r] + [line])
            bottom = xlabel_px + 1.3 * line + 1.1 * line * len(notes)
            left, right = label_px + 1.2 * line, 4.0 * fs * px
            side = min((W - left - right - (C - 1) * hgap) / C, (H - top - bottom - (R - 1) * vgap) / R)
            return label_px, xlabel_px, max(side, 4.0 * T)

        # Pass 1 sizes the labels for the cells; pass 2 redoes the margins for labels of that size,
        # turning every x label vertical when one of them is wider than a cell (all the same way).
        tick_fs = 0.85 * fs
        _, _, side = fit(tick_fs, [max(widths, default=0) > 1.2] * len(widths))
        tick_fs = min(tick_fs, 0.75 * side / T / px)
        rotate = [max(widths, default=0) * tick_fs * px > 0.8 * side / T] * len(widths)
        label_px, xlabel_px, side = fit(tick_fs, rotate)
        cell = side / T
        x0 = label_px + 1.2 * line
        x0 += max(0.0, (W - x0 - 4.0 * fs * px - C * side - (C - 1) * hgap) / 2)
        annotated = annotate and cell >= 16
        value_fs = min(0.8 * fs, 0.36 * cell / px)

        for r in range(R):
            y = top + r * (side + vgap)
            for c in range(C):
                x = x0 + c * (side + hgap)
                self.image(np.ma.masked_array(weights[r, c], mask=~masks[r, c]), (x, x + side, y + side, y))
                self.rect(x, y, side, side)
                self.text(x + side / 2, y - 0.25 * line, titles[r * C + c], ha="center", va="bottom", fontsize=fs)
                if annotated:
                    for i, j in zip(*np.nonzero(masks[r, c])):
                        v = float(weights[r, c, i, j])
                        self.text(x + (j + 0.5) * cell, y + (i + 0.5) * cell, num(v, ".2f", self.lang), ha="center",
                                  va="center", fontsize=value_fs, color="black" if v > 0.6 else "white")
                if r == R - 1:
                    for j, lab in enumerate(labels):
                        self.text(x + (j + 0.5) * cell, y + side + 0.2 * line, lab, ha="center", va="top",
                                  rotation=90 if rotate[j] else 0, fontsize=tick_fs,
                                  color=MUTED_COLOR if muted[j] else TEXT_COLOR)
            empty = ~masks[r, 0].any(-1)
            for i, lab in enumerate(labels):
                color = EMPTY_ROW_COLOR if empty[i] else MUTED_COLOR if muted[i] else TEXT_COLOR
                self.text(x0 - 0.2 * line, y + (i + 0.5) * cell, lab, ha="right", va="center",
                          fontsize=tick_fs, color=color)
            self.text(x0 - label_px - 0.7 * line, y + side / 2, ylabels[r], ha="center", va="center",
                      rotation=90, fontsize=fs)

        grid_w, grid_h = C * side + (C - 1) * hgap, R * side + (R - 1) * vgap
        self.text(x0 + grid_w / 2, top + grid_h + xlabel_px + 0.2 * line, xlabel, ha="center", va="top",
                  fontsize=fs)
        self._colorbar(x0 + grid_w + 0.6 * line, top, 0.5 * line, grid_h, 0.85 * fs, px)
        if suptitle:
            self.text(W / 2, 0.3 * line, suptitle, ha="center", va="top", fontsize=1.1 * fs, color="black")
        for k, (text, color) in enumerate(reversed(notes)):
            self.text(0.3 * line, H - (0.3 + 1.1 * k) * line, text, va="bottom", fontsize=0.9 * fs, color=color)
        return annotated

    def _colorbar(self, x, y, width, height, fontsize, px):
        self.image(np.linspace(1.0, 0.0, 128)[:, None], (x, x + width, y + height, y), interpolation="bilinear")
        self.rect(x, y, width, height)
        for v in (0.0, 0.5, 1.0):
            self.text(x + width + 0.3 * fontsize * px, y + (1 - v) * height, num(v, "g", self.lang), va="center",
                      fontsize=fontsize)


def heatmap_grid(fig: Figure, weights, masks, tokens: Sequence[str], *, titles: Sequence[str], xlabel: str,
                 ylabel: str | Sequence[str], suptitle: str = "", footnote: str = "", warning: str = "",
                 muted: Sequence[bool] | None = None, annotate: bool = False, font_scale: float = 1.0,
                 lang: str | None = None) -> bool:
    """Draw ``weights`` (R, C, T, T) as an R x C grid of heatmaps into the empty ``fig``.

    ``masks`` (bool, True = may attend) broadcasts to the weights; masked cells get MASKED_COLOR.
    ``titles`` has R * C panel titles; ``ylabel`` is one string or one per row of panels.
    ``footnote`` and ``warning`` (red) are one line each under the grid. ``muted`` marks
    tokens (e.g. padding) whose labels are grey. Returns whether the values were written
    in the cells (False when ``annotate`` but the cells are too small for them). The values and the
    colour bar's numbers are written in ``lang``'s format (vi 0,38; default: the current language).
    """
    return _Grid(fig, lang)._draw(weights, masks, tokens, titles=titles, xlabel=xlabel, ylabel=ylabel,
                                  suptitle=suptitle, footnote=footnote, warning=warning, muted=muted,
                                  annotate=annotate, font_scale=font_scale)
