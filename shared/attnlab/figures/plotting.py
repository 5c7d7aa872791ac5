"""Static attention heatmaps with matplotlib. Titles and axis labels come from the catalog."""
from __future__ import annotations

import functools
import math
from typing import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import torch

from ..course.fonts import use_course_fonts
from ..course.i18n import _localize, _normalize, num, t
from ..course.style import weight_cmap


class _LocalizedScalarFormatter(mticker.ScalarFormatter):
    """matplotlib's default tick formatter, with the marks of ``lang`` (vi: 0,2)."""

    def __init__(self, lang: str):
        super().__init__()
        self.lang = lang

    def __call__(self, x, pos=None):
        return _localize(super().__call__(x, pos), self.lang)

    def get_offset(self):
        return _localize(super().get_offset(), self.lang)


def localize_ticks(fig_or_ax, lang: str | None = None):
    """Write the numeric tick labels of a Figure or Axes (its colorbars too) in the number format of
    ``lang`` (default: the current language): vi 0,2, zh and en 0.2 (matplotlib does not group thousands).
    Only these axes' formatters change (no rcParams); tick labels that are words (tokens) stay
    as they are. Returns ``fig_or_ax``."""
    lang = _normalize(lang)
    axes = fig_or_ax.get_axes() if hasattr(fig_or_ax, "get_axes") else [fig_or_ax]
    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is mticker.ScalarFormatter or \
                    isinstance(axis.get_major_formatter(), _LocalizedScalarFormatter):
                axis.set_major_formatter(_LocalizedScalarFormatter(lang))
    return fig_or_ax


def _course_fonts(fn):
    """Draw with the course fonts inside ``rc_context``: matplotlib's global rcParams are untouched."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mpl.rc_context():
            use_course_fonts()
            return fn(*args, **kwargs)
    return wrapper


def _as_matrix(weights) -> torch.Tensor:
    w = torch.as_tensor(weights).detach().float().cpu()
    while w.dim() > 2 and w.shape[0] == 1:
        w = w[0]
    if w.dim() != 2:
        raise ValueError(f"expected a (T, S) matrix of weights, got shape {tuple(w.shape)}")
    return w


@_course_fonts
def plot_attention(weights, queries: Sequence[str] | None = None, keys: Sequence[str] | None = None,
                   ax=None, title: str | None = None, annotate: bool = False, colorbar: bool = True,
                   vmin: float = 0.0, vmax: float = 1.0, cmap: str = "viridis", lang: str | None = None):
    """One heatmap of a (T, S) weight matrix: rows are queries, columns are keys. Returns the Axes."""
    w = _as_matrix(weights)
    T, S = w.shape
    queries = list(queries) if queries is not None else [str(i) for i in range(T)]
    keys = list(keys) if keys is not None else (queries if S == T else [str(j) for j in range(S)])
    if len(queries) != T or len(keys) != S:
        raise ValueError(f"weights are ({T}, {S}) but got {len(queries)} query and {len(keys)} key labels")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.45 * S, 0.8 + 0.45 * T))
    # Masked weights (exactly 0 after the softmax) in the course's one masked colour. An unmasked
    # weight is exactly 0 only if its score is ~100 below the row's largest, far from the lessons.
    im = ax.imshow(np.ma.masked_equal(w.numpy(), 0.0), cmap=weight_cmap(cmap), vmin=vmin, vmax=vmax)
    ax.set_xticks(range(S), keys, rotation=45 if max(map(len, keys), default=0) > 3 else 0)
    ax.set_yticks(range(T), queries)
    ax.set_xlabel(t("plot.keys", lang))
    ax.set_ylabel(t("plot.queries", lang))
    ax.set_title(t("plot.weights", lang) if title is None else title)
    if annotate:
        for i in range(T):
            for j in range(S):
                v = w[i, j].item()
                ax.text(j, i, num(v, ".2f", lang), ha="center", va="center", fontsize=7,
                        color="black" if v > 0.6 * vmax else "white")
    if colorbar:
        localize_ticks(ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04).ax, lang)
    return localize_ticks(ax, lang)


@_course_fonts
def plot_heads(weights, queries: Sequence[str] | None = None, keys: Sequence[str] | None = None,
               ncols: int | None = None, annotate: bool = False, suptitle: str | None = None,
               lang: str | None = None, panel_size: float = 2.6, **style):
    """One heatmap per head of (H, T, S) weights (a leading batch of 1 is dropped). Returns the Figure.

    ``style`` (vmin, vmax, cmap) is passed on to each panel's ``plot_attention``."""
    w = torch.as_tensor(weights).detach().float().cpu()
    while w.dim() > 3 and w.shape[0] == 1:
        w = w[0]
    if w.dim() != 3:
        raise ValueError(f"expected (H, T, S) weights, got shape {tuple(w.shape)}")
    H, T, S = w.shape
    ncols = ncols or min(H, 4)
    nrows = math.ceil(H / ncols)
    # Room per panel: the square-cell heatmap plus its title, tick labels and axis label.
    height = nrows * (panel_size * T / S + 0.75) + (0.4 if suptitle else 0.0)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size * ncols + 0.8, height),
                             squeeze=False, layout="constrained")
    for h, ax in enumerate(axes.flat):
        if h >= H:
            ax.axis("off")
            continue
        plot_attention(w[h], queries, keys, ax=ax, title=t("plot.head", lang, i=h + 1),
                       annotate=annotate, colorbar=False, lang=lang, **style)
        if h % ncols:
            ax.set_ylabel("")
        if h < H - ncols:
            ax.set_xlabel("")
    if suptitle is not None:
        fig.suptitle(suptitle)
    return localize_ticks(fig, lang)
