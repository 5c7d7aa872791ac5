"""The explorer's user interface: core ipywidgets only (7.7 and 8), no custom widget, no JavaScript.

Controls -> ``ExplorerState`` -> ``compute`` -> ``svg.render_svg`` -> the ``value`` of an ``HTML``
widget. Core widgets run unchanged in JupyterLab, Notebook 7, VS Code, Voilà and Google Colab
(ipywidgets 7.7.1 there; a custom widget would need ``enable_custom_widget_manager()`` and a CDN).
Bad input shows one line in the UI language and keeps the last good heatmap.
"""
from __future__ import annotations

import contextlib
import html
import os
import urllib.parse

import ipywidgets as widgets

from ..course.i18n import LANGUAGES, get_language, t
from . import poet_mode, svg
from .compute import Result, compute, translator_available
from .page_css import PAGE_CSS
from .svg import LANG_TAGS
from .state import (ALL_HEADS, ATTENTION_KINDS, D_MODEL, HEAD_COUNTS, LANGUAGE_NAMES, MASK_TYPES, MAX_PAD,
                    MODELS, PAD_SIDES, POET_HEADS, POET_LAYERS, POET_MODELS, TRAINED_CONFIG, ExplorerState,
                    InputError)

LARGE_CLASS = "attnlab-projector"          # on the explorer in large-font mode (CSS below)
LANG_CLASS = "attnlab-lang-{}"             # on the explorer: the UI language (the Chinese font)
# Large-font mode shows these behind "More settings" (the controls take fewer rows on a projector).
SECONDARY = ("layer", "pad", "pad_side", "scaled", "annotate")
STYLE_HTML = f"<style>{PAGE_CSS}{svg.GLOBAL_CSS}</style>"
RANDOM_FIELDS = ("mask", "num_heads", "pad", "pad_side", "scaled")    # the model modes fix these


def title(state: ExplorerState, result: Result) -> str:
    lang = state.lang
    H = int(result.weights.shape[0])
    if state.trained:
        c = TRAINED_CONFIG
        return t("explorer.trained_title", lang, layer=state.layer, layers=c.num_layers, h=H,
                 d_k=c.d_model // c.num_heads)
    if state.poet:
        return poet_mode.title(state, H)
    if state.translator:
        return t("explorer.translator_title", lang, attention=t(f"explorer.attention.{state.attention}", lang),
                 layer=state.layer, layers=result.fixed.get("layers", state.layer), h=H)
    d_k = D_MODEL // state.num_heads
    scale = t("explorer.scaled_title" if state.scaled else "explorer.unscaled_title", lang, d_k=d_k)
    return t("explorer.title", lang, mask=t(f"explorer.mask.{state.mask}", lang), h=state.num_heads,
             d_k=d_k, scale=scale)


def draw(state: ExplorerState, result: Result, uid: str | None = None) -> tuple[str, str]:
    """(HTML of the heatmap, note for the user) for a computed ``result``."""
    H = int(result.weights.shape[0])
    heads = list(range(H)) if state.head == ALL_HEADS else [state.head]
    if max(heads) >= H:
        raise ValueError(f"head must be -1 (all) or in 0..{H - 1}, got {state.head}")
    figure, annotated = svg.render_svg(result, heads, lang=state.lang, large=state.large,
                                       annotate=state.annotate, uid=uid)
    note = result.message
    if state.annotate and not annotated:
        key = "explorer.note.no_numbers" if len(heads) > 1 else "explorer.note.no_numbers_one"
        note = " ".join(filter(None, [note, t(key, state.lang)]))
    return svg.figure_html(figure, title(state, result), state.lang), note


def render(state: ExplorerState) -> str:
    """The explorer's heatmap for ``state`` as an HTML fragment (title, SVG, legend)."""
    return draw(state, compute(state))[0]


def _auto() -> dict:
    """A control's own layout (never shared: hiding one must not hide the others) and label style."""
    return dict(layout=widgets.Layout(width="auto"), style={"description_width": "initial"})


class AttentionExplorer(widgets.VBox):
    """The explorer as one widget (display it, or put it last in a cell).

    ``controls`` maps each ``ExplorerState`` field to its widget; changing any of them (by
    hand or in code: ``explorer.controls["mask"].value = "causal"``) redraws ``heatmap`` (an
    ``HTML`` widget holding an SVG). ``state`` is the state of the heatmap shown; ``message``
    shows notes and errors (hidden when empty). The text box ``controls["sentence"]`` holds the
    input of the current model (sentence, digits or number); each model keeps its own text.
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
        if state.poet and state.verse is None:         # the model's own verse (loaded only when asked for)
            state = state.replace(verse=poet_mode.default_line(state.model))
        self.state = state
        self._muted = False
        self._stale_text = False                       # the text box still shows the old language's example
        self._translator_layers: dict[str, int] = {}
        self._uid = f"attnlab-svg-{id(self):x}"
        self._texts = {"random": state.sentence, "trained": state.digits,
                       "translator-vi": state.number, "translator-zh": state.number,
                       **{m: state.verse if m == state.model else None for m in POET_MODELS}}
        self._random = {name: getattr(state, name) for name in RANDOM_FIELDS}   # kept while a model fixes them
        models = [m for m in MODELS if m in ("random", "trained") or m in POET_MODELS or translator_available()
                  or m == state.model]
        self._models = models
        self.controls = {
            "model": widgets.Dropdown(options=models, value=state.model, **_auto()),
            "layer": widgets.Dropdown(options=[state.layer], value=state.layer, **_auto()),
            "attention": widgets.Dropdown(options=ATTENTION_KINDS, value=state.attention, **_auto()),
            "sentence": widgets.Text(value=state.text, continuous_update=False,
                                     layout=widgets.Layout(flex="1 1 26em", min_width="14em", width="auto"),
                                     style={"description_width": "initial"}),
            "mask": widgets.Dropdown(options=MASK_TYPES, value=state.mask, **_auto()),
            "num_heads": widgets.Dropdown(options=[(str(h), h) for h in HEAD_COUNTS], value=state.num_heads, **_auto()),
            "head": widgets.Dropdown(options=[("", ALL_HEADS)], value=ALL_HEADS, **_auto()),
            "pad": widgets.IntSlider(value=state.pad, min=0, max=MAX_PAD, layout=widgets.Layout(width="19em"),
                                     style={"description_width": "initial"}),
            "pad_side": widgets.Dropdown(options=PAD_SIDES, value=state.pad_side, **_auto()),
            "scaled": widgets.Checkbox(value=state.scaled, indent=False, **_auto()),
            "annotate": widgets.Checkbox(value=state.annotate, indent=False, **_auto()),
            "lang": widgets.Dropdown(options=LANGUAGE_NAMES, value=state.lang, **_auto()),
            "large": widgets.Checkbox(value=state.large, indent=False, **_auto()),
        }
        c = self.controls
        self.more = widgets.ToggleButton(value=False, layout=widgets.Layout(width="auto"))
        self.more.add_class("attnlab-more")
        self.message = widgets.HTML()
        self.mode_note = widgets.HTML()               # which settings the model fixes (model modes only)
        self.heatmap = widgets.HTML(layout=widgets.Layout(width="100%"))
        self.prose = widgets.HTML() if prose else None
        css = widgets.HTML(value=STYLE_HTML, layout=widgets.Layout(display="none"))
        order = ["model", "sentence", "layer", "attention", "mask", "num_heads", "head", "pad", "pad_side",
                 "scaled", "annotate", "lang", "large"]
        self.control_grid = widgets.HBox([c[name] for name in order] + [self.more],
                                         layout=widgets.Layout(width="100%"))
        self.control_grid.add_class("attnlab-controls")
        notes = widgets.VBox([self.mode_note, self.message], layout=widgets.Layout(width="100%"))
        notes.add_class("attnlab-notes")              # below the heatmap, a line kept for them: nothing moves
        self.screen = widgets.VBox([self.control_grid, self.heatmap, notes], layout=widgets.Layout(width="100%"))
        self.screen.add_class("attnlab-screen")       # one screen: controls, heatmap, notes (CSS)
        super().__init__(children=[css, self.screen] + ([self.prose] if prose else []),
                         layout=widgets.Layout(width="100%"))
        self.add_class("attnlab-explorer")
        for name, control in c.items():               # CSS hooks for styling and browser tests
            control.add_class(f"attnlab-control-{name}")
        self.mode_note.add_class("attnlab-mode-note")
        self.message.add_class("attnlab-message-box")
        self.heatmap.add_class("attnlab-heatmap")
        self._relabel()
        self._set_head(state.head)
        self._large()
        for control in c.values():
            control.observe(self._on_change, names="value")
        self.more.observe(self._on_more, names="value")
        self.update()

    def __repr__(self) -> str:
        """The text/plain of the widget's output (a saved notebook without widget state shows it)."""
        return t("explorer.fallback", self.state.lang)

    # --- control values -> state -> heatmap

    def read_state(self) -> ExplorerState:
        """The state the controls describe (may hold bad input: ``compute`` will say so)."""
        c = self.controls
        model = c["model"].value
        values = {name: control.value for name, control in c.items() if name != "sentence"}
        if model != "random":                          # the model fixes these: the user's values are kept
            values.update(self._random)
        texts = {**self._texts, model: self._texts[model] if self._stale_text else c["sentence"].value}
        return ExplorerState(sentence=texts["random"], digits=texts["trained"],
                             number=texts[model] if model.startswith("translator") else self.state.number,
                             verse=texts[model] if model in POET_MODELS else self.state.verse, **values)

    def update(self) -> bool:
        """Redraw from the controls. On bad input, or any error, show a one-line message and
        keep the last good heatmap. Returns whether the heatmap was redrawn."""
        with self._batched():
            return self._update()

    def _update(self) -> bool:
        try:
            state = self.read_state()
            result = compute(state)
            self._show_fixed(state, result)
            figure, note = draw(state, result, self._uid)
        except InputError as e:
            self._say(e.message, error=True)
            return False
        except Exception as e:  # never a traceback in the UI
            self._say_unexpected(e)
            return False
        self.state = state
        self.heatmap.value = figure
        self._say(note)
        return True

    def _on_change(self, change) -> None:
        if self._muted:
            return
        owner, c = change["owner"], self.controls
        with self._batched():                     # one message per widget, the heatmap's last
            try:
                self._before_update(owner, change["new"])
            except Exception as e:  # never a traceback in the UI
                self._say_unexpected(e)
                return
            self._update()
        if owner is c["lang"]:                    # then the labels: the heatmap is already on its way
            with self._batched():
                try:
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
            if self._texts[new] is None:          # a poet model's verse, read when first shown
                self._texts[new] = poet_mode.default_line(new)
            with self._quiet():                   # each model gets its own text back
                c["sentence"].value = self._texts[new]
                if new == "random":                # the user's own settings come back
                    for name, value in self._random.items():
                        c[name].value = value
        elif any(owner is c[n] for n in RANDOM_FIELDS) and c["model"].value == "random":
            self._random = {name: c[name].value for name in RANDOM_FIELDS}
        if owner is c["num_heads"] or owner is c["model"]:
            self._relabel()
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

    # --- language, fixed settings, size

    @contextlib.contextmanager
    def _quiet(self):
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    def _set_head(self, head: int, heads: int | None = None) -> None:
        c, lang = self.controls, self.controls["lang"].value
        if heads is None:
            model = c["model"].value
            heads = len(c["head"].options) - 1 if model.startswith("translator") else (
                TRAINED_CONFIG.num_heads if model == "trained" else POET_HEADS if model in POET_MODELS
                else c["num_heads"].value)
        head = head if head < heads else ALL_HEADS
        options = [(t("explorer.all_heads", lang), ALL_HEADS)] + [(t("plot.head", lang, i=h + 1), h)
                                                                 for h in range(heads)]
        with self._quiet():
            if list(c["head"].options) != options:
                c["head"].options = options
            c["head"].value = head

    def _relabel(self) -> None:
        """Every description and option label in the current UI language (values unchanged), and
        the controls that apply to the current model enabled, the others disabled."""
        c, lang = self.controls, self.controls["lang"].value
        model = c["model"].value
        fixed_mode = model != "random"
        translator = model.startswith("translator")
        text_key = {"random": "sentence", "trained": "digits"}.get(model, "verse" if model in POET_MODELS else "number")
        fixed_word = t("explorer.fixed_suffix", lang)
        for name, key in (("model", "model"), ("layer", "layer"), ("attention", "attention"),
                          ("sentence", text_key), ("mask", "mask"), ("num_heads", "heads"), ("head", "show"),
                          ("pad", "pad"), ("pad_side", "pad_side"), ("scaled", "scaled"),
                          ("annotate", "annotate"), ("lang", "language"), ("large", "large")):
            suffix = fixed_word if fixed_mode and name in RANDOM_FIELDS else ""
            c[name].description = t(f"explorer.{key}", lang) + suffix
        c["sentence"].placeholder = t(f"explorer.{text_key}_hint", lang)
        if self._stale_text:
            self._stale_text = False
            with self._quiet():
                c["sentence"].value = self._texts[model]
        layers = self._layers(model)
        options = {
            "model": [(t(f"explorer.model.{m}", lang), m) for m in self._models],
            "layer": [(t("explorer.layer_option", lang, i=i), i) for i in range(1, layers + 1)],
            "attention": [(t(f"explorer.attention.{a}", lang), a) for a in ATTENTION_KINDS],
            "mask": [(t(f"explorer.mask.{m}", lang), m) for m in MASK_TYPES],
            "pad_side": [(t(f"explorer.side.{s}", lang), s) for s in PAD_SIDES],
        }
        with self._quiet():
            for name, opts in options.items():
                value = c[name].value
                if name == "layer" and value not in range(1, layers + 1):
                    value = layers
                c[name].options = opts
                c[name].value = value
        self._set_head(c["head"].value)
        for name in RANDOM_FIELDS:
            c[name].disabled = fixed_mode
        c["layer"].disabled = not fixed_mode
        self.more.description = t("explorer.more", lang)
        for code in LANG_TAGS:
            (self.add_class if code == lang else self.remove_class)(LANG_CLASS.format(code))
        self._show_controls()
        if self.prose is not None:
            self.prose.value = (f'<div class="attnlab-prose" lang="{LANG_TAGS[lang]}"><h2>'
                                f'{html.escape(t("explorer.dashboard.title", lang))}</h2>'
                                f'<p>{html.escape(t("explorer.dashboard.prose", lang))}</p></div>')
        if not fixed_mode:
            self.mode_note.value = ""
            self.mode_note.layout.display = "none"

    def _layers(self, model: str) -> int:
        if model in POET_MODELS:
            return POET_LAYERS
        if model == "trained":
            return TRAINED_CONFIG.num_layers
        if model.startswith("translator"):
            return self._translator_layers.get(model, len(self.controls["layer"].options) or 1)
        return TRAINED_CONFIG.num_layers

    def _show_fixed(self, state: ExplorerState, result: Result) -> None:
        """Model modes: the fixed controls show the model's real settings (disabled); the head
        and layer choices follow the model's shape."""
        if state.model == "random":
            return
        c, lang, fixed = self.controls, state.lang, result.fixed
        H = int(result.weights.shape[0])
        with self._quiet():
            if fixed["num_heads"] not in [v for _, v in c["num_heads"].options]:
                c["num_heads"].options = [(str(h), h) for h in sorted({*HEAD_COUNTS, fixed["num_heads"]})]
            c["num_heads"].value = fixed["num_heads"]
            c["mask"].value = fixed["mask"]
            c["pad"].value = fixed["pad"]
            c["scaled"].value = fixed["scaled"]
        if len(c["head"].options) - 1 != H:
            self._set_head(state.head, H)
        if "layers" in fixed and self._translator_layers.get(state.model) != fixed["layers"]:
            self._translator_layers[state.model] = fixed["layers"]
            self._relabel()
        if state.trained or state.poet:
            note = t("explorer.trained_fixed", lang, h=H)
        else:
            note = t("explorer.translator_fixed", lang, mask=t(f"explorer.fixed_mask.{fixed['mask']}", lang), h=H)
        self.mode_note.value = (f'<div class="attnlab-note" lang="{LANG_TAGS[lang]}"><span class="attnlab-fixed-word">'
                                f'{html.escape(t("explorer.fixed", lang))}</span>{html.escape(note)}</div>')
        self.mode_note.layout.display = ""

    def _large(self) -> None:
        """Large-font mode: bigger labels and controls (CSS class), the settings used less often
        behind "More settings"; the heatmap's own text is redrawn bigger by ``update``."""
        (self.add_class if self.controls["large"].value else self.remove_class)(LARGE_CLASS)
        self._show_controls()

    def _show_controls(self) -> None:
        """Which controls are on screen: "attention" for the translator only; in large-font mode
        the secondary settings only while "More settings" is on (the layer only in a model mode)."""
        c = self.controls
        model, large, more = c["model"].value, c["large"].value, self.more.value
        for name in SECONDARY:
            primary = name == "layer" and model != "random"
            c[name].layout.display = "none" if large and not more and not primary else ""
        c["attention"].layout.display = "" if model.startswith("translator") else "none"
        self.more.layout.display = "" if large else "none"

    def _on_more(self, change) -> None:
        with self._batched():
            self._show_controls()


def explore(**defaults) -> AttentionExplorer:
    """The interactive explorer, e.g. ``attnlab.explore(mask="causal", num_heads=2)``, or the
    trained reversal model of lesson 07: ``attnlab.explore(model="trained", digits="3 1 4 1 5 9")``,
    or lesson 10's verse GPT on a verse of its validation text: ``attnlab.explore(model="poet-vi")``.

    Keyword arguments are ``ExplorerState`` fields; ``lang`` defaults to the current
    language and ``sentence`` to its example sentence. Put it last in a cell (or display it).
    """
    return AttentionExplorer(**defaults)


TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def query_settings(query: str | None = None) -> dict:
    """``lang`` and ``large`` from a page's query string, e.g. ``"lang=vi&large=1"`` ->
    ``{"lang": "vi", "large": True}``; other keys and values it does not know are left out.

    ``query`` defaults to the ``QUERY_STRING`` that Voilà gives the kernel of each page (empty
    in JupyterLab), so that ``…/voila/render/attention_explorer.ipynb?lang=vi&large=1`` opens the
    dashboard in Vietnamese, in large font: a bookmark for the lecture hall (a reload keeps it).
    """
    query = os.environ.get("QUERY_STRING", "") if query is None else query
    values = {key: vals[-1].strip().lower() for key, vals in urllib.parse.parse_qs(query).items()}
    settings = {}
    if values.get("lang") in LANGUAGES:
        settings["lang"] = values["lang"]
    if values.get("large") in TRUE_WORDS + FALSE_WORDS:
        settings["large"] = values["large"] in TRUE_WORDS
    return settings


def dashboard(**defaults) -> AttentionExplorer:
    """The explorer with the dashboard's explanation under it (notebooks/attention_explorer.ipynb);
    the page's ``?lang=…&large=…`` (``query_settings``) override ``defaults``."""
    return AttentionExplorer(prose=True, **{**defaults, **query_settings()})
