"""What the explorer shows: ``ExplorerState``, a frozen dataclass, and its constants."""
from __future__ import annotations

import dataclasses

from ..course.i18n import LANGUAGES
from . import models
from .models.random_weights import D_MODEL, HEAD_COUNTS, MASK_TYPES, MAX_PAD, MAX_TOKENS, PAD, PAD_SIDES, SEED
from .models.reversal_model import CONFIG as TRAINED_CONFIG
from .result import InputError

ALL_HEADS = -1
LANGUAGE_NAMES = (("Tiếng Việt", "vi"), ("中文", "zh"), ("English", "en"))
MODELS = models.NAMES
ATTENTION_KINDS = ("enc_self", "dec_self", "cross")

__all__ = ["ExplorerState", "InputError", "ALL_HEADS", "LANGUAGE_NAMES", "MODELS", "ATTENTION_KINDS",
           "D_MODEL", "HEAD_COUNTS", "MASK_TYPES", "MAX_PAD", "MAX_TOKENS", "PAD", "PAD_SIDES", "SEED",
           "TRAINED_CONFIG"]


@dataclasses.dataclass(frozen=True)
class ExplorerState:
    """Everything the explorer shows. ``head`` is 0-based, or ALL_HEADS (-1) for all side by side.

    ``model``: "random" (seeded random weights on ``sentence``, with ``mask``, ``num_heads``,
    ``pad``, ``pad_side``, ``scaled``), "trained" (the tiny reversal model of lesson 07 on
    ``digits``, one ``layer``, counted from 1) or "translator-vi" / "translator-zh" (the number
    translator of lesson 08 on ``number``: ``attention`` picks encoder self-, decoder self- or
    cross-attention of one ``layer``) or "poet-vi" / "poet-zh" (lesson 10's verse GPT on ``verse``,
    its lines separated by " / "; None: a verse of the corpus's validation text, one ``layer``).
    In the model modes the five random-weight fields are ignored and ``head`` counts the model's
    heads. Each mode keeps its own input (``attnlab.explorer.models``: one module per model).
    What does not fit one figure (``view.py``) comes in pages of heads (``page``, when ``head`` is
    ALL_HEADS) and windows of query positions (the one holding ``start``, 0-based).
    """
    sentence: str = "The cat sat on the mat because it was tired"
    mask: str = "none"
    num_heads: int = 8
    head: int = ALL_HEADS
    pad: int = 2
    pad_side: str = "right"
    scaled: bool = True
    annotate: bool = False
    lang: str = "en"
    large: bool = False
    model: str = "random"
    digits: str = "3 1 4 1 5 9"
    layer: int = TRAINED_CONFIG.num_layers          # 1-based; the last layer shows the reversal best
    number: str = "2024"
    attention: str = "cross"
    verse: str | None = None                        # poet models; None: the model's default verse
    page: int = 0                                   # "all heads" that do not fit at once: which page (view.py)
    start: int = 0                                  # a long input: the window of queries holding this position

    def __post_init__(self):
        source = models.get(self.model)             # ValueError for an unknown model
        if self.mask not in MASK_TYPES:
            raise ValueError(f"mask must be one of {MASK_TYPES}, got {self.mask!r}")
        if self.num_heads not in HEAD_COUNTS:
            raise ValueError(f"num_heads must be one of {HEAD_COUNTS}, got {self.num_heads!r}")
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {self.attention!r}")
        if not (isinstance(self.layer, int) and 1 <= self.layer <= source.max_layers):
            raise ValueError(f"layer must be in 1..{source.max_layers}, got {self.layer!r}")
        heads = source.max_heads(self)
        if not (isinstance(self.head, int) and (self.head == ALL_HEADS or 0 <= self.head < heads)):
            raise ValueError(f"head must be -1 (all) or in 0..{heads - 1}, got {self.head!r}")
        if not (isinstance(self.pad, int) and 0 <= self.pad <= MAX_PAD):
            raise ValueError(f"pad must be an int in 0..{MAX_PAD}, got {self.pad!r}")
        if self.pad_side not in PAD_SIDES:
            raise ValueError(f"pad_side must be one of {PAD_SIDES}, got {self.pad_side!r}")
        for name in ("page", "start"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 0):
                raise ValueError(f"{name} must be an int >= 0, got {getattr(self, name)!r}")
        if self.lang not in LANGUAGES:
            raise ValueError(f"lang must be one of {LANGUAGES}, got {self.lang!r}")

    def replace(self, **changes) -> "ExplorerState":
        return dataclasses.replace(self, **changes)

    @property
    def source(self) -> models.ExplorerModel:
        """The model that computes this state's weights (``attnlab.explorer.models``)."""
        return models.get(self.model)

    @property
    def heads(self) -> int:
        """How many heads the figure may have (the bound ``head`` is checked against)."""
        return self.source.max_heads(self)

    @property
    def text(self) -> str:
        """The input of the current model: ``sentence``, ``digits``, ``number`` or ``verse`` ("" when
        it is the default verse, which the widget fills in)."""
        return getattr(self, self.source.text_field) or ""
