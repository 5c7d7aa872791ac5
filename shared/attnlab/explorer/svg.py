"""Numbers -> an HTML fragment with a vector heatmap grid (SVG) that the browser draws.

The SVG has a ``viewBox`` and ``width="100%"``: it fills the width of the output area, keeps
square cells and is drawn at the screen's pixel density, with real text for every label.
No JavaScript: a cell shows its query, key, weight (3 decimals) and "masked" on hover (CSS
``:hover``, at once, no tooltip delay), and hovering, clicking or tapping a query's label
(focusable: ``tabindex``) outlines that row in every head (the sibling combinator ``~`` from
the label to the row's cells, which share one group; no ``:has()``, which made every restyle slow).

Tooltip stacking: SVG paints in document order (no z-index), so each cell's tip is placed on
the line above the cell, where everything was painted before it (cells are painted row by row,
each row across every head).
"""
from __future__ import annotations

import html
import itertools
import unicodedata
from typing import Sequence

import numpy as np

from ..course.i18n import t
from ..course.languages import HTML_LANG
from ..course.style import EMPTY_ROW_COLOR, MASKED_COLOR, MUTED_COLOR, TEXT_COLOR, WEIGHT_CMAP

WIDTH = 1000.0                          # viewBox width; everything scales with the output's width
FONT = {False: 15.0, True: 21.0}        # base font size (viewBox units), normal / large-font mode
# Width / height of the box the drawing must fit (viewBox units): the screen below the controls at
# 1280x720 and 1920x1080 is about 2.4 : 1. At 1024x768 the box is taller (1.8 : 1): the drawing
# fits by its width there.
ASPECT = 2.4
# Large-font mode: every label at FONT[True] units in a box WIDTH x LARGE_HEIGHT, which the page's
# CSS draws under the controls at 0.9 px per unit or more at 1024x768, 1280x720 and 1920x1080
# (measured in docs/explorer.md): labels of 2.5 % of the screen's height or more (``view`` pages the
# heads and windows the positions so that the figure fits the box at that size).
LARGE_HEIGHT = 460.0
TICK_OF_CELL = {False: 0.9, True: 0.98}  # label size at most this fraction of a cell (rows stay apart)
MAX_LABEL_CHARS = 8
FONT_FAMILY = ('system-ui, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", "Noto Sans CJK SC", '
               '"Source Han Sans SC", "PingFang SC", "Microsoft YaHei", "Hiragino Sans GB", '
               '"WenQuanYi Micro Hei", sans-serif')
# Chinese text (lang="zh-Hans"): a Simplified Chinese face first, so that "；" and "：" sit at the
# bottom left as in mainland typography (a Japanese face centres them).
ZH_FONT_FAMILY = ('"Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", '
                  '"Hiragino Sans GB", "WenQuanYi Micro Hei", system-ui, sans-serif')
LANG_TAGS = HTML_LANG        # BCP 47 tags of the UI languages (data/languages.json)
_ids = itertools.count(1)

# Rules shared by every explorer on the page: sent once (``GLOBAL_CSS``), not with each drawing.
GLOBAL_CSS = """
.attnlab-fig { width: 100%; font-family: %(font)s; color: %(text)s; line-height: 1.35; }
.attnlab-fig .attnlab-title { font-weight: 600; font-size: 1.05em; margin: 0.1em 0 0.2em 0; }
.attnlab-fig .attnlab-legend { font-size: 0.95em; margin-top: 0.2em; display: flex; flex-wrap: wrap;
  gap: 0.3em 1.2em; align-items: center; }
.attnlab-fig .attnlab-legend > span:nth-child(-n+2) { white-space: nowrap; }
.attnlab-fig .attnlab-swatch { display: inline-block; width: 1.1em; height: 1.1em; vertical-align: -0.2em;
  border: 1px solid #888; margin-right: 0.35em; }
.attnlab-fig .attnlab-colorbar { display: inline-block; width: 8em; height: 0.9em; vertical-align: -0.1em;
  border: 1px solid #888; margin: 0 0.35em; }
.attnlab-fig[lang="zh-Hans"] { font-family: %(zh_font)s; }
.attnlab-svg { display: block; width: 100%%; height: auto; overflow: visible; user-select: none; }
.attnlab-svg .row > text.t { display: none; pointer-events: none; font-weight: 700; paint-order: stroke;
  stroke: #ffffff; stroke-width: 0.28em; stroke-linejoin: round; fill: #000000; text-anchor: end; }
.attnlab-svg .row > text.s { text-anchor: start; }
.attnlab-svg .row > rect:hover + text.t { display: inline; }
.attnlab-svg .row > rect:hover { stroke: #ff2d55; stroke-width: 2; }
.attnlab-svg .q { cursor: pointer; outline: none; }
.attnlab-svg .q:hover, .attnlab-svg .q:focus { font-weight: 700; text-decoration: underline; }
.attnlab-svg .q:hover ~ rect, .attnlab-svg .q:focus ~ rect { stroke: #ff2d55; stroke-width: 2.5; }
.attnlab-svg .v { pointer-events: none; text-anchor: middle; dominant-baseline: central; }
""".replace("%(font)s", FONT_FAMILY).replace("%(zh_font)s", ZH_FONT_FAMILY).replace("%(text)s", TEXT_COLOR).replace("%%", "%")


def global_style() -> str:
    return f"<style>{GLOBAL_CSS}</style>"


def _lut(name: str = WEIGHT_CMAP) -> list[str]:
    import matplotlib

    cmap = matplotlib.colormaps[name]
    return ["#%02x%02x%02x" % tuple(int(round(255 * c)) for c in cmap(i / 255)[:3]) for i in range(256)]


LUT = _lut()


def colorbar_css() -> str:
    stops = ", ".join(LUT[round(255 * k / 10)] for k in range(11))
    return f"background: linear-gradient(to right, {stops});"


def text_width(text: str) -> float:
    """Approximate width of ``text`` in em: wide (CJK) characters 1.0, others 0.6."""
    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6 for c in text)


def short_label(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[:MAX_LABEL_CHARS - 1] + "…"


def grid_shape(n: int, T: int = 12, S: int | None = None, large: bool = False) -> tuple[int, int]:
    """(panel rows, panel columns) for ``n`` heads of T x S cells: the arrangement whose cells are
    the largest in the drawing box (``WIDTH`` x ``WIDTH / ASPECT``, the screen below the controls)."""
    return Layout(n, T, T if S is None else S, ["w"] * T, ["w"] * (T if S is None else S), large).shape


def _margins(wq: float, wk: float, fs: float, tick: float, cell: float | None) -> dict:
    """The space around the cells (viewBox units) for labels of ``tick`` units (``wq``, ``wk``: the
    widest query and key label, in em) and titles of ``fs``: the rotated "queries" title and the
    query labels on the left, head titles above each panel row over a free line (the tips of a
    panel's top row are drawn on the line just above its cells, so they never cover a title), key
    labels (rotated when wider than a cell) and the "keys" title below, gaps between panels."""
    axis = 1.4 * fs
    rotate = cell is not None and wk * tick > 0.98 * cell               # all x labels the same way; one CJK character fits
    return dict(axis=axis, left=axis + wq * tick + 0.4 * fs, right=0.3 * fs, gap=0.9 * fs, title_h=2.35 * fs,
                rotate=rotate, xlabel_h=(wk * tick if rotate else tick) + 0.5 * fs, bottom=1.6 * fs)


def large_margins(row_labels, col_labels) -> dict:
    """Large-font mode: the margins and the cell (labels at FONT[True], the most of a cell they may
    take) for these labels; ``view`` counts the rows and keys that fit the box from them."""
    fs = FONT[True]
    cell = fs / TICK_OF_CELL[True]
    wq = max((text_width(s) for s in row_labels), default=1.0)
    wk = max((text_width(s) for s in col_labels), default=1.0)
    return dict(_margins(wq, wk, fs, fs, cell), cell=cell)


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


class Layout:
    """Where everything goes, in viewBox units; computed from the shapes and label widths only.

    The drawing must fit a box ``WIDTH`` wide and ``WIDTH / ASPECT`` high: the part of a
    projected screen (16:9 or 4:3) below the controls, so that the whole grid, its labels and
    the legend are on screen at once. Of every (rows, columns) arrangement of the panels, the one
    with the largest cells is taken; the page's CSS shrinks the drawing further where the box is
    even flatter. Labels are as large as the base font allows, at most ``TICK_OF_CELL`` of a cell.
    """

    def __init__(self, n_panels: int, T: int, S: int, row_labels, col_labels, large: bool):
        self.T, self.S = T, S
        self.wq = max((text_width(s) for s in row_labels), default=1.0)  # em
        self.wk = max((text_width(s) for s in col_labels), default=1.0)
        self.max_height = LARGE_HEIGHT if large else WIDTH / ASPECT
        best = None
        for fs in (FONT[large],):
            for C in range(1, n_panels + 1):
                R = -(-n_panels // C)
                if (R - 1) * C >= n_panels:                             # an empty panel row
                    continue
                fit = self._fit(R, C, fs, FONT[large], TICK_OF_CELL[large])
                if best is None or (fit["tick"], fit["cell"]) > (best["tick"] + 1e-9, best["cell"] + 1e-9):
                    best = fit
        self.__dict__.update(best)
        self.R, self.C = self.shape
        self.pw, self.ph = S * self.cell, T * self.cell
        self.top = self.title_h
        self.height = (self.top + self.R * self.ph + (self.R - 1) * (self.gap + self.title_h)
                       + self.xlabel_h + 1.6 * self.fs)
        grid_w = self.C * self.pw + (self.C - 1) * self.gap
        self.dx = max(0.0, (WIDTH - self.left - grid_w - 0.3 * self.fs) / 2)   # centred in the width

    def _fit(self, R: int, C: int, fs: float, label_max: float, ratio: float) -> dict:
        """The sizes for R x C panels with titles at ``fs``: cell, tick (label size), margins."""
        T, S = self.T, self.S
        tick, cell = label_max, None
        for _ in range(4):                                              # labels' size -> margins -> cell -> size
            m = _margins(self.wq, self.wk, fs, tick, cell)
            by_width = (WIDTH - m["left"] - (C - 1) * m["gap"] - m["right"]) / (C * S)
            m = _margins(self.wq, self.wk, fs, tick, by_width if cell is None else cell)
            by_height = (self.max_height - R * m["title_h"] - (R - 1) * m["gap"] - m["xlabel_h"] - m["bottom"]) / (R * T)
            cell = max(1.0, min(by_width, by_height))
            tick = min(label_max, ratio * cell)
        m = _margins(self.wq, self.wk, fs, tick, cell)
        by_height = (self.max_height - R * m["title_h"] - (R - 1) * m["gap"] - m["xlabel_h"] - m["bottom"]) / (R * T)
        by_width = (WIDTH - m["left"] - (C - 1) * m["gap"] - m["right"]) / (C * S)
        cell = max(1.0, min(cell, by_width, by_height))                 # the last labels' margins, kept inside
        return dict(shape=(R, C), fs=fs, gap=m["gap"], axis=m["axis"], title_h=m["title_h"], cell=cell, tick=tick,
                    left=m["left"], rotate=m["rotate"], xlabel_h=m["xlabel_h"])

    def origin(self, r: int, c: int) -> tuple[float, float]:
        return (self.dx + self.left + c * (self.pw + self.gap), self.top + r * (self.ph + self.gap + self.title_h))


def render_svg(result, heads: Sequence[int], *, lang: str, large: bool = False, annotate: bool = False,
               uid: str | None = None) -> tuple[str, bool]:
    """The SVG of ``result``'s ``heads`` -> (svg text, whether the weights were written in the cells).

    Structure: panel titles and frames, then one ``<g class="row r{i}">`` per query i holding its
    labels (one per row of panels, first) and its cells in every head (``<rect>`` + its tip
    ``<text>``), then the key labels and the values. CSS alone does the rest: ``rect:hover + text``
    shows a tip, ``.q:hover ~ rect`` / ``.q:focus ~ rect`` outline the row in every head.
    """
    uid = uid or f"attnlab-svg-{next(_ids)}"
    weights = result.weights.detach().float().cpu().numpy()[list(heads)]      # (P, T, S), no torch op
    P, T, S = weights.shape
    mask = result.mask.detach().cpu().numpy().astype(bool)                   # (T, S)
    rows = [short_label(s) for s in result.queries]
    cols = [short_label(s) for s in result.keys]
    L = Layout(P, T, S, rows, cols, large)
    fs, tick, cell = L.fs, L.tick, L.cell
    annotated = annotate and cell >= 1.5 * fs
    value_fs = min(0.36 * cell, 0.8 * fs)                                    # "0.12" fits in 0.9 of a cell
    colors = np.asarray(LUT)[np.clip(np.rint(weights * 255), 0, 255).astype(int)]      # (P, T, S)
    empty = ~mask.any(-1)                                                    # (T,)
    masked_word = t("explorer.tip.masked", lang)
    esc = html.escape
    q_esc = [esc(s) for s in result.queries]
    k_esc = [esc(s) for s in result.keys]
    origins = [L.origin(*divmod(p, L.C)) for p in range(P)]
    tip_fs = 0.95 * fs

    out = [f'<svg id="{uid}" class="attnlab-svg" xmlns="http://www.w3.org/2000/svg" '
           f'viewBox="0 0 {_f(WIDTH)} {_f(L.height)}" width="100%" preserveAspectRatio="xMidYMin meet" '
           f'lang="{LANG_TAGS[lang]}" role="img" '
           f'aria-label="{esc(t("plot.weights", lang))}" font-size="{_f(tick)}" fill="{TEXT_COLOR}">',
           f"<style>#{uid} .row > text.t {{ font-size: {_f(tip_fs)}px; }} "
           f"#{uid} .row > rect {{ width: {_f(cell)}px; height: {_f(cell)}px; }} "
           f"#{uid} .row > text.v {{ font-size: {_f(value_fs)}px; }}</style>"]
    for p, (x0, y0) in enumerate(origins):                              # titles and frames
        out.append(f'<text class="ht" x="{_f(x0 + L.pw / 2)}" y="{_f(y0 - 1.55 * fs)}" text-anchor="middle" '
                   f'font-size="{_f(fs)}">{esc(t("plot.head", lang, i=heads[p] + 1))}</text>'
                   f'<rect x="{_f(x0 - 0.6)}" y="{_f(y0 - 0.6)}" width="{_f(L.pw + 1.2)}" height="{_f(L.ph + 1.2)}" '
                   f'fill="none" stroke="#888888" stroke-width="1.2"/>')
        if p % L.C == 0:                                              # the "queries" axis title of each panel row
            out.append(f'<text transform="translate({_f(L.dx + 0.9 * fs)},{_f(y0 + L.ph / 2)}) rotate(-90)" '
                       f'text-anchor="middle" font-size="{_f(fs)}">{esc(t("plot.queries", lang))}</text>')
    for i in range(T):
        color = EMPTY_ROW_COLOR if empty[i] else MUTED_COLOR if result.muted_queries[i] else TEXT_COLOR
        parts = [f'<g class="row r{i}">']
        for p in range(0, P, L.C):                                    # the labels first: "~" reaches every cell
            x0, y0 = origins[p]
            parts.append(f'<text class="q q{i}" tabindex="0" x="{_f(x0 - 0.3 * fs)}" y="{_f(y0 + (i + 0.5) * cell)}" '
                         f'text-anchor="end" dominant-baseline="central" fill="{color}">{esc(rows[i])}</text>')
        for p, (x0, y0) in enumerate(origins):
            y = y0 + i * cell
            ty = y - 0.3 * fs
            for j in range(S):
                x = x0 + j * cell
                if mask[i, j]:
                    v = float(weights[p, i, j])
                    fill, tip = colors[p, i, j], f"{q_esc[i]} → {k_esc[j]} · {v:.3f}"
                else:
                    fill, tip = MASKED_COLOR, f"{q_esc[i]} → {k_esc[j]} · {masked_word}"
                # The tip extends left (anchor at the cell's right edge) unless that leaves the picture.
                width = text_width(tip) * tip_fs
                side = "t" if x + cell - width >= 0 else "t s"
                tx = x + cell if side == "t" else x
                parts.append(f'<rect x="{_f(x)}" y="{_f(y)}" fill="{fill}"/>'
                             f'<text class="{side}" x="{_f(tx)}" y="{_f(ty)}">{tip}</text>')
        if annotated:                     # this row's values, under the tips of the rows below
            for p, (x0, y0) in enumerate(origins):
                for j in np.nonzero(mask[i])[0]:
                    v = float(weights[p, i, j])
                    parts.append(f'<text class="v" x="{_f(x0 + (j + 0.5) * cell)}" y="{_f(y0 + (i + 0.5) * cell)}" '
                                 f'fill="{"#000000" if v > 0.6 else "#ffffff"}">{v:.2f}</text>')
        parts.append("</g>")
        out.append("".join(parts))
    for p, (x0, y0) in enumerate(origins):
        if p // L.C == L.R - 1 or p + L.C >= P:                       # key labels under the lowest panels
            for j, lab in enumerate(cols):
                color = MUTED_COLOR if result.muted_keys[j] else TEXT_COLOR
                x, y = x0 + (j + 0.5) * cell, y0 + L.ph + 0.3 * fs
                if L.rotate:
                    out.append(f'<text class="kl" transform="translate({_f(x)},{_f(y)}) rotate(-90)" '
                               f'text-anchor="end" dominant-baseline="central" fill="{color}">{esc(lab)}</text>')
                else:
                    out.append(f'<text class="kl" x="{_f(x)}" y="{_f(y)}" text-anchor="middle" '
                               f'dominant-baseline="hanging" fill="{color}">{esc(lab)}</text>')
    grid_w = L.C * L.pw + (L.C - 1) * L.gap
    out.append(f'<text x="{_f(L.dx + L.left + grid_w / 2)}" y="{_f(L.height - 0.4 * fs)}" text-anchor="middle" '
               f'font-size="{_f(fs)}">{esc(t("plot.keys", lang))}</text>')
    out.append("</svg>")
    return "".join(out), annotated


def legend_html(lang: str) -> str:
    """Colour bar 0..1, the masked colour named in ``lang``, how to read the grid."""
    return (f'<div class="attnlab-legend"><span>0<span class="attnlab-colorbar" style="{colorbar_css()}"></span>1</span>'
            f'<span><span class="attnlab-swatch" style="background:{MASKED_COLOR}"></span>'
            f'{html.escape(t("explorer.legend_masked", lang))}</span>'
            f'<span>{html.escape(t("explorer.legend", lang))}</span>'
            f'<span>{html.escape(t("explorer.legend_hover", lang))}</span></div>')


def figure_html(svg: str, title: str, lang: str) -> str:
    """The heatmap as the explorer shows it: title, SVG, legend."""
    return (f'<div class="attnlab-fig" lang="{LANG_TAGS[lang]}">'
            f'<div class="attnlab-title">{html.escape(title)}</div>{svg}{legend_html(lang)}</div>')
