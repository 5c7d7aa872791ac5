"""Which part of a ``Result`` the figure shows: the heads of one page and a window of positions.

Two limits decide it:

* **Speed.** The browser lays out every cell of the SVG (a rect and its hover tip), so a figure has
  at most ``MAX_CELLS`` cells: 8 heads of 14 tokens fit; a 64-character verse does not (4 heads of
  64 x 64 are 16,384 cells, 1.6 MB of HTML, close to a second per change in the browser). Beyond
  it the figure shows a window of the queries (rows) with all the keys when they fit, else a block
  of keys that ends at the window's last query (under a causal mask, exactly the keys it can see).
* **Legibility on a projector.** In large-font mode every label is drawn at ``svg.FONT[True]``
  viewBox units in a box of ``svg.WIDTH`` x ``svg.LARGE_HEIGHT`` (about 2.5 % of the screen's
  height at 1024x768, 1280x720 and 1920x1080, once the SVG fills the space under the controls).
  As many heads as keep at least ``MIN_KEYS`` keys each are put side by side, one row of panels;
  "all heads" becomes pages of heads (the head control lists them), and the queries that do not
  fit the height come in windows (the positions control).

Pages and windows are balanced (8 heads, 3 a page: 3 + 3 + 2; 64 rows, 25 a window: 22 + 21 + 21).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .result import Result
from . import svg

MAX_CELLS = 1600            # 8 heads x 14 x 14 (the Chinese example, padded) fit (latency: docs/performance.md)
MIN_ROWS = 12               # a window of queries has at least this many rows when the input has them
MIN_KEYS = 16               # large font: each head of a page keeps at least this many keys (or all)


class View(NamedTuple):
    heads: tuple            # the heads drawn (0-based)
    rows: range             # the query positions drawn
    cols: range             # the key positions drawn
    pages: tuple            # "all heads" in pages: a tuple of heads per page (one page when they fit)
    starts: tuple           # the first query of each window of positions (one window when all fit)

    def crop(self, result: Result) -> Result:
        """``result`` restricted to this view's rows and columns (every head kept)."""
        r, c = list(self.rows), list(self.cols)
        return result._replace(queries=[result.queries[i] for i in r], keys=[result.keys[j] for j in c],
                               weights=result.weights[:, r][:, :, c], mask=result.mask[r][:, c],
                               muted_queries=tuple(result.muted_queries[i] for i in r),
                               muted_keys=tuple(result.muted_keys[j] for j in c))

    @property
    def whole(self) -> bool:
        """Every position is shown (no window)."""
        return len(self.starts) == 1 and len(self.cols) == self.cols.stop


def _balanced(n: int, most: int) -> list[range]:
    """``range(n)`` cut into the fewest pieces of at most ``most``, as equal as possible."""
    pieces = max(1, math.ceil(n / max(1, most)))
    size = math.ceil(n / pieces)
    return [range(a, min(n, a + size)) for a in range(0, n, size)]


def _large_capacity(rows, cols, panels: int) -> tuple[int, int]:
    """(query rows, keys per head) that fit the large-font box with ``panels`` heads side by side."""
    m = svg.large_margins(rows, cols)
    cell = m["cell"]
    n_rows = int((svg.LARGE_HEIGHT - m["title_h"] - m["xlabel_h"] - m["bottom"]) // cell)
    n_cols = int((svg.WIDTH - m["left"] - (panels - 1) * m["gap"] - m["right"]) // (panels * cell))
    return max(1, n_rows), max(1, n_cols)


def plan(result: Result, head: int, page: int = 0, start: int = 0, large: bool = False) -> View:
    """The view of ``result`` for the head control's choice (``head`` >= 0: that head; else page
    ``page`` of all heads) and the window that holds query position ``start``. ``pages`` always
    splits all the heads (the head control lists them), whichever is shown."""
    H, T, S = result.weights.shape
    rows = [svg.short_label(s) for s in result.queries]
    cols = [svg.short_label(s) for s in result.keys]
    per_page = H
    if large:                                                   # as many heads as keep MIN_KEYS keys each
        per_page = next((n for n in range(H, 0, -1) if _large_capacity(rows, cols, n)[1] >= min(S, MIN_KEYS)), 1)
    pages = [tuple(part) for part in _balanced(H, per_page)]
    heads = pages[min(page, len(pages) - 1)] if head < 0 else (head,)
    P = len(heads)
    if large:
        n_rows, n_cols = _large_capacity(rows, cols, P)
    elif P * T * S <= MAX_CELLS:
        n_rows, n_cols = T, S
    elif P * S * min(T, MIN_ROWS) <= MAX_CELLS:                 # a window of queries, every key
        n_rows, n_cols = MAX_CELLS // (P * S), S
    else:                                                       # a block of queries x keys
        n_rows = min(T, math.isqrt(MAX_CELLS // P))
        n_cols = MAX_CELLS // (P * n_rows)
    windows = _balanced(T, n_rows)
    shown = next((w for w in windows if start in w), windows[0] if start < T else windows[-1])
    n_cols = min(S, n_cols)
    end = min(S, max(n_cols, shown.stop))                      # the keys end at the window's last query
    return View(heads, shown, range(end - n_cols, end), tuple(pages), tuple(w.start for w in windows))
