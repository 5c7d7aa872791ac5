"""The explorer's user interface: core ipywidgets only (7.7 and 8), no custom widget, no JavaScript.

Controls (``controls.ControlPanel``) -> ``ExplorerState`` -> ``compute`` -> ``figure.draw`` (a page of
heads, a window of positions: ``view``) -> the ``value`` of an ``HTML`` widget. Core widgets run
unchanged in JupyterLab, Notebook 7, VS Code, Voilà and Google Colab (ipywidgets 7.7.1 there; a
custom widget would need ``enable_custom_widget_manager()`` and a CDN). Bad input shows one line in
the UI language and keeps the last good heatmap.
"""
from __future__ import annotations

import contextlib
import html

import ipywidgets as widgets

from ..course.i18n import get_language, t
from . import models, svg
from .compute import compute
from .controls import RANDOM_FIELDS, SECONDARY, ControlPanel
from .figure import draw, plan
from .page_css import PAGE_CSS
from .result import InputError, Result
from .state import ALL_HEADS, ExplorerState
from .svg import LANG_TAGS

__all__ = ["AttentionExplorer", "LARGE_CLASS", "LANG_CLASS", "SECONDARY", "STYLE_HTML"]

LARGE_CLASS = "attnlab-projector"          # on the explorer in large-font mode (page_css.py)
LANG_CLASS = "attnlab-lang-{}"             # on the explorer: the UI language (the Chinese font)
STYLE_HTML = f"<style>{PAGE_CSS}{svg.GLOBAL_CSS}</style>"


class AttentionExplorer(widgets.VBox):
    """The explorer as one widget (display it, or put it last in a cell).

    ``controls`` maps each ``ExplorerState`` field to its widget; changing any of them (by
    hand or in code: ``explorer.controls["mask"].value = "causal"``) redraws ``heatmap`` (an
    ``HTML`` widget holding an SVG). ``state`` is the state of the heatmap shown; ``message``
    shows notes and errors (hidden when empty). The text box ``controls["sentence"]`` holds the
    input of the current model (sentence, digits, number or verse); each model keeps its own text.
    In a model mode the controls the model fixes show its real settings, disabled, and
    ``mode_note`` says so. ``prose=True`` adds the dashboard's explanation under the heatmap,
    in the UI language.
    """

    TRAINED_FIXED = RANDOM_FIELDS

    def __init__(self, prose: bool = False, **defaults):
        lang = defaults.pop("lang", None) or get_language()
        sentence = defaults.pop("sentence", None)
        state = ExplorerState(sentence=t("example.long", lang) if sentence is None else sentence,
                              lang=lang, **defaults)
        source = state.source
        if not getattr(state, source.text_field):      # e.g. a poet model's own verse (loaded when asked for)
            state = state.replace(**{source.text_field: source.default_text(state.model, lang) or ""})
        self.state = state
        self._stale_text = False                       # the text box still shows the old language's example
        self._uid = f"attnlab-svg-{id(self):x}"
        self._shown = None                             # (state, result, view) of the last figure computed
        self._texts = {name: (getattr(state, m.text_field) if name == state.model or m.default_text(name, lang) is None
                              else None) for m in models.REGISTRY for name in m.names}
        self._random = {name: getattr(state, name) for name in RANDOM_FIELDS}   # kept while a model fixes them
        names = [m for m in models.NAMES if models.get(m).available(m) or m == state.model]
        self.panel = ControlPanel(state, names)
        self.controls, self.more = self.panel.controls, self.panel.more
        self.message = widgets.HTML()
        self.mode_note = widgets.HTML()               # which settings the model fixes (model modes only)
        self.heatmap = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.prose = widgets.HTML() if prose else None
        css = widgets.HTML(value=STYLE_HTML, layout=widgets.Layout(display="none"))
        notes = widgets.VBox([self.mode_note, self.message], layout=widgets.Layout(width="100%"))
        notes.add_class("attnlab-notes")              # below the heatmap, a line kept for them: nothing moves
        self.screen = widgets.VBox([self.panel.grid, self.heatmap, notes], layout=widgets.Layout(width="100%"))
        self.screen.add_class("attnlab-screen")       # one screen: controls, heatmap, notes (CSS)
        super().__init__(children=[css, self.screen] + ([self.prose] if prose else []),
                         layout=widgets.Layout(width="100%"))
        self.add_class("attnlab-explorer")
        self.mode_note.add_class("attnlab-mode-note")
        self.message.add_class("attnlab-message-box")
        self.heatmap.add_class("attnlab-heatmap")
        self._relabel()
        self.panel.set_heads(state.head, source.heads(state))
        self._large()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.more.observe(self._on_more, names="value")
        self.update()

    def __repr__(self) -> str:
        """The text/plain of the widget's output (a saved notebook without widget state shows it)."""
        return t("explorer.fallback", self.state.lang)

    # --- control values -> state -> heatmap

    def read_state(self, **override) -> ExplorerState:
        """The state the controls describe (may hold bad input: ``compute`` will say so); ``override``:
        fields to take instead of the controls' values."""
        c = self.controls
        model = c["model"].value
        values = {name: control.value for name, control in c.items() if name not in ("sentence", "head")}
        head = c["head"].value
        values.update(head=max(head, ALL_HEADS), page=-1 - head if head < 0 else 0)
        if models.get(model).fixes_settings:          # the model fixes these: the user's values are kept
            values.update(self._random)
        text = self._texts[model] if self._stale_text else c["sentence"].value
        fields = {m.text_field: getattr(self.state, m.text_field) for m in models.REGISTRY}
        fields.update(sentence=self._texts["random"])
        fields[models.get(model).text_field] = text
        return ExplorerState(**{**fields, **values, **override})

    def update(self) -> bool:
        """Redraw from the controls. On bad input, or any error, show a one-line message and
        keep the last good heatmap. Returns whether the heatmap was redrawn."""
        with self._batched():
            return self._update()

    def _update(self, controls_first: bool = True) -> bool:
        """``controls_first=False``: the head and positions controls are updated after the heatmap
        has been sent (a language switch relabels them then)."""
        try:
            state = self.read_state()
            self._show_fixed(state)
            result = compute(state)
            shown = plan(state, result)
            self._shown = (state, result, shown)
            if controls_first:
                self._show_view(state, result, shown)
            figure, note = draw(state, result, self._uid, shown)
        except InputError as e:
            self._say(e.message, error=True)
            return False
        except Exception as e:  # never a traceback in the UI
            self._say_unexpected(e)
            return False
        self.state = state.replace(page=shown.pages.index(shown.heads) if state.head < 0 else 0,
                                   start=shown.rows.start)
        self.heatmap.value = figure
        self._say(note)
        return True

    def _on_change(self, change) -> None:
        if self.panel.muted:
            return
        owner, c = change["owner"], self.controls
        with self._batched():                     # one message per widget, the heatmap's last
            try:
                self._before_update(owner, change["new"])
            except Exception as e:  # never a traceback in the UI
                self._say_unexpected(e)
                return
            self._update(controls_first=owner is not c["lang"])
        if owner is c["lang"]:                    # then the labels: the heatmap is already on its way
            with self._batched():
                try:
                    if self._shown is not None:
                        self._show_view(*self._shown)
                    self._relabel()
                except Exception as e:  # never a traceback in the UI
                    self._say_unexpected(e)

    def _before_update(self, owner, new) -> None:
        c = self.controls
        if owner is c["sentence"]:
            self._texts[c["model"].value] = new
        elif owner is c["lang"]:                  # the example sentence follows the language; the user's own stays
            if self._texts["random"] == t("example.long", self.state.lang):
                self._texts["random"] = t("example.long", new)
                # The text box shows it with the relabelled controls, after the heatmap (one message).
                self._stale_text = c["model"].value == "random"
        elif owner is c["model"]:
            source = models.get(new)
            if self._texts[new] is None:          # e.g. a poet model's verse, read when first shown
                self._texts[new] = source.default_text(new, c["lang"].value)
            with self.panel.quiet():              # each model gets its own text back
                c["sentence"].value = self._texts[new]
            if not source.fixes_settings:         # the user's own settings come back
                self.panel.restore(self._random)
        elif any(owner is c[n] for n in RANDOM_FIELDS) and not self.panel.model.fixes_settings:
            self._random = {name: c[name].value for name in RANDOM_FIELDS}
        if owner is c["num_heads"] or owner is c["model"]:
            self._relabel()
            heads = self.panel.model.heads(self.read_state(head=ALL_HEADS, page=0))   # the head chosen may be gone
            self.panel.set_heads(c["head"].value, heads)
        if owner is c["large"]:
            self._large()

    @contextlib.contextmanager
    def _batched(self):
        """Hold what one change sends until it is handled: one message per widget that changed
        (a language switch changes ~15 widgets; unbatched it sent ~35 messages), the heatmap's
        last, so that the frame which shows the new heatmap shows everything else too."""
        parts = [self, *self.controls.values(), self.more, self.mode_note, self.message]
        parts += [self.prose] if self.prose is not None else []
        with contextlib.ExitStack() as stack:
            for widget in [self.heatmap] + parts + [w.layout for w in parts]:   # sent in reverse order
                stack.enter_context(widget.hold_sync())
            yield

    def _say_unexpected(self, error: Exception) -> None:
        detail = (str(error).strip().splitlines() or [""])[0][:160]
        self._say(t("explorer.error.unexpected", self.controls["lang"].value, kind=type(error).__name__,
                    detail=detail), error=True)

    def _say(self, text: str, error: bool = False) -> None:
        """One line (wrapped if long) of note or error; the area takes no room when empty."""
        if not text:
            self.message.value = ""
            self.message.layout.display = "none"
            return
        color = "#b00020" if error else "#444444"
        icon = "⚠ " if error else "ℹ "
        lang = LANG_TAGS[self.controls["lang"].value]
        self.message.value = (f'<div class="attnlab-message" lang="{lang}" style="color:{color}">{icon}'
                              f'{html.escape(text)}</div>')
        self.message.layout.display = ""

    # --- language, fixed settings, pages and windows, size

    def _relabel(self) -> None:
        lang, model = self.controls["lang"].value, self.controls["model"].value
        if self._stale_text:
            self._stale_text = False
            with self.panel.quiet():
                self.controls["sentence"].value = self._texts[model]
        self.panel.relabel()
        for code in LANG_TAGS:
            (self.add_class if code == lang else self.remove_class)(LANG_CLASS.format(code))
        self.panel.show()
        if self.prose is not None:
            self.prose.value = (f'<div class="attnlab-prose" lang="{LANG_TAGS[lang]}"><h2>'
                                f'{html.escape(t("explorer.dashboard.title", lang))}</h2>'
                                f'<p>{html.escape(t("explorer.dashboard.prose", lang))}</p></div>')
        if not self.panel.model.fixes_settings:
            self.mode_note.value = ""
            self.mode_note.layout.display = "none"

    def _show_fixed(self, state: ExplorerState) -> None:
        """Model modes: the fixed controls show the model's real settings (disabled), even while the
        input is bad; the mode note says so; the layer choices follow the model's shape."""
        source = state.source
        if not source.fixes_settings:
            return
        fixed = source.fixed(state)
        self.panel.show_fixed(fixed)
        layers = fixed.get("layers")
        if layers and len(self.controls["layer"].options) != layers:
            self.panel.relabel(layers)
        lang = state.lang
        self.mode_note.value = (f'<div class="attnlab-note" lang="{LANG_TAGS[lang]}"><span class="attnlab-fixed-word">'
                                f'{html.escape(t("explorer.fixed", lang))}</span>'
                                f'{html.escape(source.fixed_note(state, fixed))}</div>')
        self.mode_note.layout.display = ""

    def _show_view(self, state: ExplorerState, result: Result, shown) -> None:
        """The head control lists the pages of heads, the positions control the windows of queries
        (only what changed: the labels follow the language in ``_relabel``, after the heatmap)."""
        panel, H = self.panel, int(result.weights.shape[0])
        value = -1 - shown.pages.index(shown.heads) if state.head < 0 else state.head
        if (H, shown.pages, value) != (panel.heads, panel.pages, self.controls["head"].value):
            panel.set_heads(value, H, shown.pages)
        if (shown.starts, len(result.queries), shown.rows.start) != (panel.starts, panel.length,
                                                                     self.controls["start"].value):
            panel.set_windows(shown.starts, len(result.queries), shown.rows.start)

    def _large(self) -> None:
        """Large-font mode: bigger labels and controls (CSS class), the settings used less often
        behind "More settings"; the heatmap's own text is redrawn bigger by ``update``."""
        (self.add_class if self.controls["large"].value else self.remove_class)(LARGE_CLASS)
        self.panel.show()

    def _on_more(self, change) -> None:
        with self._batched():
            self.panel.show()
