"""The one interface the explorer asks of a model: ``ExplorerModel``.

A model is one module of ``attnlab.explorer.models`` with one ``ExplorerModel`` instance, ``MODEL``;
``compute``, the state and the widget ask only what this class says, so a new model is one new
file (and its ``MODEL`` in the list of ``models/__init__.py``).
"""
from __future__ import annotations

from ...course.i18n import t
from ..result import Result


class ExplorerModel:
    """One source of attention weights for the explorer.

    Class attributes: ``names`` (the ``ExplorerState.model`` values it serves, e.g. one per
    language), ``text_field`` (the ``ExplorerState`` field that holds its input: it is edited in
    the text box, and its label and placeholder are the messages ``explorer.<text_field>`` and
    ``explorer.<text_field>_hint``), ``max_layers`` (the bound of ``ExplorerState.layer``),
    ``fixes_settings`` (a trained model fixes the random-weight settings: mask, heads, padding,
    scaling) and ``chooses_attention`` (the encoder / decoder / cross choice applies).
    """
    names: tuple = ()
    text_field = "sentence"
    max_layers = 1
    fixes_settings = True
    chooses_attention = False

    def label(self, name: str, lang: str) -> str:
        """The model's name in the model control (the message ``explorer.model.<name>``)."""
        return t(f"explorer.model.{name}", lang)

    def available(self, name: str) -> bool:
        """Whether ``name`` can be offered here (an optional module may be missing)."""
        return True

    def heads(self, state) -> int:
        """How many heads ``state`` has (what ``ExplorerState.head`` counts), known without input."""
        raise NotImplementedError

    def max_heads(self, state) -> int:
        """The bound ``ExplorerState`` checks ``head`` against (without loading anything)."""
        return self.heads(state)

    def layers(self, name: str) -> int | None:
        """How many layers the model ``name`` has (the options of the layer control); None: no
        layer to choose (the control keeps its options, disabled)."""
        return self.max_layers

    def default_text(self, name: str, lang: str) -> str | None:
        """The input ``name`` opens with when the state gives none (None: the state's field)."""
        return None

    def fixed(self, state) -> dict:
        """The settings the model fixes (mask, num_heads, pad, scaled, maybe layers), known without
        the input, so that the controls show them even while the input is bad; {} if none."""
        return {}

    def fixed_note(self, state, fixed: dict) -> str:
        """The line that says which settings the model fixes ("" if none)."""
        return ""

    def compute(self, state) -> Result:
        """Tokens, weights (H, T, S) of every head, mask (T, S) and a note; InputError for bad input."""
        raise NotImplementedError

    def title(self, state, result: Result) -> str:
        """The figure's title in ``state.lang``."""
        raise NotImplementedError
