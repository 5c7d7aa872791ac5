"""State + numbers -> the explorer's figure: title, SVG heatmap (``svg``) and legend, as HTML.

``draw`` shows the part of the result that ``view.plan`` chooses (a page of heads, a window of
positions); the title says which part when it is not the whole.
"""
from __future__ import annotations

from ..course.i18n import t
from . import svg, view as views
from .compute import compute
from .result import Result
from .state import ExplorerState


def title(state: ExplorerState, result: Result, shown: views.View | None = None) -> str:
    """The model's title, and the positions shown when a window leaves some out."""
    text = state.source.title(state, result)
    if shown is None or shown.whole:
        return text
    rows, cols = shown.rows, shown.cols
    return t("explorer.window_title", state.lang, title=text, a=rows.start + 1, b=rows.stop, c=cols.start + 1,
             d=cols.stop, n=len(result.queries), m=len(result.keys))


def plan(state: ExplorerState, result: Result) -> views.View:
    H = int(result.weights.shape[0])
    if state.head >= H:
        raise ValueError(f"head must be -1 (all) or in 0..{H - 1}, got {state.head}")
    return views.plan(result, state.head, state.page, state.start, state.large)


def draw(state: ExplorerState, result: Result, uid: str | None = None,
         shown: views.View | None = None) -> tuple[str, str]:
    """(HTML of the heatmap, note for the user) for a computed ``result``."""
    shown = plan(state, result) if shown is None else shown
    part = shown.crop(result)
    figure, annotated = svg.render_svg(part, list(shown.heads), lang=state.lang, large=state.large,
                                       annotate=state.annotate, uid=uid)
    note = result.message
    if state.annotate and not annotated:
        key = "explorer.note.no_numbers" if len(shown.heads) > 1 else "explorer.note.no_numbers_one"
        note = " ".join(filter(None, [note, t(key, state.lang)]))
    return svg.figure_html(figure, title(state, result, shown), state.lang), note


def render(state: ExplorerState) -> str:
    """The explorer's heatmap for ``state`` as an HTML fragment (title, SVG, legend)."""
    return draw(state, compute(state))[0]
