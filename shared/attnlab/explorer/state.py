"""What the explorer shows: ``ExplorerState``, a frozen dataclass, and its constants."""
from __future__ import annotations

import dataclasses

from ..course.i18n import LANGUAGES
from .. import reversal

D_MODEL = 64
HEAD_COUNTS = (1, 2, 4, 8)
MASK_TYPES = ("none", "padding", "causal", "causal+padding")
PAD_SIDES = ("right", "left")
MAX_TOKENS = 32
MAX_PAD = 16
PAD = "<pad>"
SEED = 0
ALL_HEADS = -1
LANGUAGE_NAMES = (("Tiếng Việt", "vi"), ("中文", "zh"), ("English", "en"))
TRANSLATOR_MODELS = ("translator-vi", "translator-zh")
POET_MODELS = ("poet-vi", "poet-zh")    # lesson 10's verse GPT, one per corpus (attnlab.poet)
MODELS = ("random", "trained") + TRANSLATOR_MODELS + POET_MODELS
ATTENTION_KINDS = ("enc_self", "dec_self", "cross")
TRAINED_CONFIG = reversal.TinyConfig()    # the checkpoint's size (compute checks it against the loaded model)
DIGIT_SEPARATORS = " \t,，、;"          # allowed between digits ("3 1 4", "3,1,4", "314", "３１４")
MAX_LAYERS = 16                       # bound for ``layer`` of the translator (its real count is checked later)
POET_LAYERS, POET_HEADS = 4, 4        # lesson 10's GPT (attnlab.poet.PoetConfig; compute checks the checkpoint)


class InputError(ValueError):
    """Input the explorer cannot show; ``message`` is ready for the user, in the state's language."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclasses.dataclass(frozen=True)
class ExplorerState:
    """Everything the explorer shows. ``head`` is 0-based, or ALL_HEADS (-1) for all side by side.

    ``model``: "random" (seeded random weights on ``sentence``, with ``mask``, ``num_heads``,
    ``pad``, ``pad_side``, ``scaled``), "trained" (the tiny reversal model of lesson 07 on
    ``digits``, one ``layer``, counted from 1) or "translator-vi" / "translator-zh" (the number
    translator of lesson 08 on ``number``: ``attention`` picks encoder self-, decoder self- or
    cross-attention of one ``layer``) or "poet-vi" / "poet-zh" (lesson 10's verse GPT on ``verse``,
    its lines separated by " / "; None: a verse of the corpus's validation text, one ``layer``).
    In the model modes the five random-weight fields are
    ignored and ``head`` counts the model's heads. Each mode keeps its own input.
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

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.mask not in MASK_TYPES:
            raise ValueError(f"mask must be one of {MASK_TYPES}, got {self.mask!r}")
        if self.num_heads not in HEAD_COUNTS:
            raise ValueError(f"num_heads must be one of {HEAD_COUNTS}, got {self.num_heads!r}")
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {self.attention!r}")
        layers = (POET_LAYERS if self.poet else MAX_LAYERS if self.model == "random" or self.translator
                  else TRAINED_CONFIG.num_layers)
        if not (isinstance(self.layer, int) and 1 <= self.layer <= layers):
            raise ValueError(f"layer must be in 1..{layers}, got {self.layer!r}")
        heads = self.heads
        if not (isinstance(self.head, int) and (self.head == ALL_HEADS or 0 <= self.head < heads)):
            raise ValueError(f"head must be -1 (all) or in 0..{heads - 1}, got {self.head!r}")
        if not (isinstance(self.pad, int) and 0 <= self.pad <= MAX_PAD):
            raise ValueError(f"pad must be an int in 0..{MAX_PAD}, got {self.pad!r}")
        if self.pad_side not in PAD_SIDES:
            raise ValueError(f"pad_side must be one of {PAD_SIDES}, got {self.pad_side!r}")
        if self.lang not in LANGUAGES:
            raise ValueError(f"lang must be one of {LANGUAGES}, got {self.lang!r}")

    def replace(self, **changes) -> "ExplorerState":
        return dataclasses.replace(self, **changes)

    @property
    def trained(self) -> bool:
        return self.model == "trained"

    @property
    def translator(self) -> bool:
        return self.model in TRANSLATOR_MODELS

    @property
    def poet(self) -> bool:
        return self.model in POET_MODELS

    @property
    def heads(self) -> int:
        """How many heads the figure has: ``num_heads``, or the model's (translator: at most 16)."""
        if self.trained:
            return TRAINED_CONFIG.num_heads
        if self.translator:
            return 16
        if self.poet:
            return POET_HEADS
        return self.num_heads

    @property
    def text(self) -> str:
        """The input of the current mode: ``digits`` (trained), ``number`` (translator), ``verse``
        (poet; "" when it is the default verse, which the widget fills in) or ``sentence``."""
        if self.poet:
            return self.verse or ""
        return self.digits if self.trained else self.number if self.translator else self.sentence
