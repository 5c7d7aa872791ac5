"""The explorer's controls: core ipywidgets, labelled in the UI language, showing what applies.

``ControlPanel`` builds the widgets (``controls``: one per ``ExplorerState`` field the user sets,
plus "More settings") and keeps their labels, options, enabled state and visibility in step with
the model shown, the UI language and the last figure's pages of heads and windows of positions.
It sets values with the explorer's observers muted (``quiet``); reading them back into a state is
the explorer's job (``widgets.AttentionExplorer.read_state``).
"""
from __future__ import annotations

import contextlib

import ipywidgets as widgets

from ..course.i18n import t
from . import models
from .state import (ALL_HEADS, ATTENTION_KINDS, HEAD_COUNTS, LANGUAGE_NAMES, MASK_TYPES, MAX_PAD, PAD_SIDES,
                    ExplorerState)

# Large-font mode shows these behind "More settings" (the controls take fewer rows on a projector).
SECONDARY = ("layer", "pad", "pad_side", "scaled", "annotate")
RANDOM_FIELDS = ("mask", "num_heads", "pad", "pad_side", "scaled")    # the model modes fix these
ORDER = ("model", "sentence", "layer", "attention", "mask", "num_heads", "head", "start", "pad", "pad_side",
         "scaled", "annotate", "lang", "large")
LABEL_KEYS = {"model": "model", "layer": "layer", "attention": "attention", "mask": "mask", "num_heads": "heads",
              "head": "show", "start": "window", "pad": "pad", "pad_side": "pad_side", "scaled": "scaled",
              "annotate": "annotate", "lang": "language", "large": "large"}


def _auto() -> dict:
    """A control's own layout (never shared: hiding one must not hide the others) and label style."""
    return dict(layout=widgets.Layout(width="auto"), style={"description_width": "initial"})


def _set_tooltip(widget, text: str) -> None:
    """The control's hover text: its whole label (a cut label can still be read). ipywidgets 8
    calls it ``tooltip``, 7.7 ``description_tooltip``; left None, both render ``title="null"``."""
    name = "tooltip" if widget.has_trait("tooltip") else "description_tooltip"
    if widget.has_trait(name) and getattr(widget, name) != text:
        setattr(widget, name, text)


def page_value(page: int) -> int:
    """The head control's value for page ``page`` of all heads (heads themselves are 0, 1, ...)."""
    return -1 - page


class ControlPanel:
    def __init__(self, state: ExplorerState, model_names: list[str]):
        self.model_names = model_names
        self.muted = False
        self.heads = state.source.heads(state)                             # how many heads the model has
        self.pages: tuple = (tuple(range(self.heads)),)                    # the last figure's pages of them
        self.starts: tuple = (0,)                                          # and its windows of queries
        self.length = 0                                                    # and how many queries it has
        c = self.controls = {
            "model": widgets.Dropdown(options=model_names, value=state.model, **_auto()),
            "layer": widgets.Dropdown(options=[(str(state.layer), state.layer)], value=state.layer, **_auto()),
            "attention": widgets.Dropdown(options=ATTENTION_KINDS, value=state.attention, **_auto()),
            "sentence": widgets.Text(value=state.text, continuous_update=False,
                                     layout=widgets.Layout(flex="1 1 26em", min_width="14em", width="auto"),
                                     style={"description_width": "initial"}),
            "mask": widgets.Dropdown(options=MASK_TYPES, value=state.mask, **_auto()),
            "num_heads": widgets.Dropdown(options=[(str(h), h) for h in HEAD_COUNTS], value=state.num_heads, **_auto()),
            "head": widgets.Dropdown(options=[("", ALL_HEADS)], value=ALL_HEADS, **_auto()),
            "start": widgets.Dropdown(options=[("", 0)], value=0, **_auto()),
            "pad": widgets.IntSlider(value=state.pad, min=0, max=MAX_PAD, layout=widgets.Layout(width="19em"),
                                     style={"description_width": "initial"}),
            "pad_side": widgets.Dropdown(options=PAD_SIDES, value=state.pad_side, **_auto()),
            "scaled": widgets.Checkbox(value=state.scaled, indent=False, **_auto()),
            "annotate": widgets.Checkbox(value=state.annotate, indent=False, **_auto()),
            "lang": widgets.Dropdown(options=LANGUAGE_NAMES, value=state.lang, **_auto()),
            "large": widgets.Checkbox(value=state.large, indent=False, **_auto()),
        }
        self.more = widgets.ToggleButton(value=False, layout=widgets.Layout(width="auto"))
        self.more.add_class("attnlab-more")
        for name, control in c.items():               # CSS hooks for styling and browser tests
            control.add_class(f"attnlab-control-{name}")
        self.grid = widgets.HBox([c[name] for name in ORDER] + [self.more], layout=widgets.Layout(width="100%"))
        self.grid.add_class("attnlab-controls")

    @contextlib.contextmanager
    def quiet(self):
        """Set values without the explorer reacting to them."""
        self.muted = True
        try:
            yield
        finally:
            self.muted = False

    @property
    def model(self) -> models.ExplorerModel:
        return models.get(self.controls["model"].value)

    # --- labels and options in the UI language

    def relabel(self, layers: int | None = None) -> None:
        """Every description and option label in the current UI language (values unchanged), and
        the controls that apply to the current model enabled, the others disabled."""
        c, lang, source = self.controls, self.controls["lang"].value, self.model
        fixed_word = t("explorer.fixed_suffix", lang)
        for name, key in LABEL_KEYS.items():
            suffix = fixed_word if source.fixes_settings and name in RANDOM_FIELDS else ""
            c[name].description = t(f"explorer.{key}", lang) + suffix
        c["sentence"].description = t(f"explorer.{source.text_field}", lang)
        c["sentence"].placeholder = t(f"explorer.{source.text_field}_hint", lang)
        layers = layers or source.layers(c["model"].value)
        layer_values = range(1, layers + 1) if layers else [v for _, v in c["layer"].options] or [c["layer"].value]
        options = {
            "model": [(models.get(m).label(m, lang), m) for m in self.model_names],
            "layer": [(t("explorer.layer_option", lang, i=i), i) for i in layer_values],
            "attention": [(t(f"explorer.attention.{a}", lang), a) for a in ATTENTION_KINDS],
            "mask": [(t(f"explorer.mask.{m}", lang), m) for m in MASK_TYPES],
            "pad_side": [(t(f"explorer.side.{s}", lang), s) for s in PAD_SIDES],
        }
        with self.quiet():
            for name, opts in options.items():
                value = c[name].value
                if name == "layer" and value not in layer_values:
                    value = layer_values[-1]
                c[name].options = opts
                c[name].value = value
        self.set_heads(c["head"].value)
        self.set_windows(self.starts, self.length)
        for name in RANDOM_FIELDS:
            c[name].disabled = source.fixes_settings
        c["layer"].disabled = not source.fixes_settings
        self.more.description = t("explorer.more", lang)
        for control in (*c.values(), self.more):
            _set_tooltip(control, control.description)

    def set_heads(self, value: int, heads: int | None = None, pages: tuple | None = None) -> None:
        """The head control: "all heads" (or its pages, when they do not fit at once), then each head."""
        c, lang = self.controls, self.controls["lang"].value
        if heads is not None and heads != self.heads:                  # another model or head count:
            self.heads, self.pages = heads, (tuple(range(heads)),)    # pages known after the next figure
        self.pages = pages if pages is not None else self.pages
        heads = self.heads
        if len(self.pages) > 1:
            first = [(t("explorer.head_page", lang, a=p[0] + 1, b=p[-1] + 1) if len(p) > 1 else
                      t("plot.head", lang, i=p[0] + 1), page_value(k)) for k, p in enumerate(self.pages)]
        else:
            first = [(t("explorer.all_heads", lang), ALL_HEADS)]
        options = first + [(t("plot.head", lang, i=h + 1), h) for h in range(heads)]
        values = [v for _, v in options]
        value = value if value in values else ALL_HEADS
        with self.quiet():
            if list(c["head"].options) != options:
                c["head"].options = options
            c["head"].value = value

    def set_windows(self, starts: tuple, length: int, value: int | None = None) -> None:
        """The positions control: one option per window of queries; shown only when there are several."""
        c, lang = self.controls, self.controls["lang"].value
        self.starts, self.length = tuple(starts), length
        ends = list(self.starts[1:]) + [length]
        options = [(t("explorer.window_option", lang, a=a + 1, b=b, n=length), a) for a, b in zip(self.starts, ends)]
        value = c["start"].value if value is None else value
        with self.quiet():
            if list(c["start"].options) != options:
                c["start"].options = options or [("", 0)]
            c["start"].value = value if value in self.starts else self.starts[0]
        display = "" if len(self.starts) > 1 else "none"
        if c["start"].layout.display != display:
            c["start"].layout.display = display

    def show_fixed(self, fixed: dict) -> None:
        """Model modes: the fixed controls show the model's real settings (disabled)."""
        c = self.controls
        with self.quiet():
            if fixed["num_heads"] not in [v for _, v in c["num_heads"].options]:
                c["num_heads"].options = [(str(h), h) for h in sorted({*HEAD_COUNTS, fixed["num_heads"]})]
            for name in ("num_heads", "mask", "pad", "scaled"):
                c[name].value = fixed[name]

    def restore(self, values: dict) -> None:
        """Back to random weights: the user's own settings come back."""
        with self.quiet():
            for name, value in values.items():
                self.controls[name].value = value

    def show(self) -> None:
        """Which controls are on screen: "attention" where the model has that choice; in large-font
        mode the secondary settings only while "More settings" is on (the layer only in a model mode),
        and not the settings a model fixes (the mode note lists them)."""
        c, source = self.controls, self.model
        large, more = c["large"].value, self.more.value
        for name in SECONDARY:
            primary = name == "layer" and source.fixes_settings
            c[name].layout.display = "none" if large and not more and not primary else ""
        for name in RANDOM_FIELDS:          # large font: what a model fixes is said once, in the note
            if source.fixes_settings and large and not more:
                c[name].layout.display = "none"
            elif name not in SECONDARY:
                c[name].layout.display = ""
        c["attention"].layout.display = "" if source.chooses_attention else "none"
        self.more.layout.display = "" if large else "none"
