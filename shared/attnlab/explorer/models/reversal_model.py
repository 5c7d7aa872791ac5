"""The explorer's "trained" model: lesson 07's tiny reversal model (``attnlab.reversal``) on a digit sequence."""
from __future__ import annotations

import functools
import unicodedata

import torch

from ... import reversal
from ...course.i18n import t
from ..result import InputError, Result, causal, self_attention
from .base import ExplorerModel

CONFIG = reversal.TinyConfig()            # the checkpoint's size (checked against the loaded model)
DIGIT_SEPARATORS = " \t,，、;"          # allowed between digits ("3 1 4", "3,1,4", "314", "３１４")
FIXED = {"mask": "causal", "num_heads": CONFIG.num_heads, "pad": 0, "scaled": True}


@functools.lru_cache(maxsize=None)
def _model() -> reversal.TinyTransformer:
    """The tiny reversal model of lesson 07, loaded once, on the CPU, in eval mode."""
    model = reversal.load_pretrained()
    c = model.config
    if (c.num_heads, c.num_layers, c.max_len) != (CONFIG.num_heads, CONFIG.num_layers, CONFIG.max_len):
        raise RuntimeError(f"the checkpoint's model {c} is not the expected {CONFIG}")
    return model


@functools.lru_cache(maxsize=512)
def _attention(digits: tuple[int, ...]) -> tuple[tuple[str, ...], torch.Tensor]:
    """(tokens, weights (layers, H, T, T)) of the trained model for one digit sequence, cached."""
    tokens, weights = reversal.attention_for(_model(), digits)
    return tuple(tokens), torch.stack(weights)


def parse_digits(state) -> tuple[int, ...]:
    """``state.digits`` -> the digits (1 to 8 of them), or InputError with a message in ``state.lang``.

    Digits may be written together ("314159") or apart ("3 1 4", "3,1,4"); full-width digits count.
    """
    lang, n_max = state.lang, CONFIG.max_len
    chars = [ch for ch in state.digits if ch not in DIGIT_SEPARATORS and not ch.isspace()]
    bad = [ch for ch in chars if not (ch.isdecimal() and unicodedata.decimal(ch, None) is not None)]
    if bad:
        shown = list(dict.fromkeys(bad))[:5]
        raise InputError(t("explorer.error.digits_chars", lang, chars=" ".join(shown)))
    if not chars:
        raise InputError(t("explorer.error.digits_empty", lang, max=n_max))
    if len(chars) > n_max:
        raise InputError(t("explorer.error.digits_count", lang, n=len(chars), max=n_max))
    return tuple(unicodedata.decimal(ch) for ch in chars)


class ReversalModel(ExplorerModel):
    names = ("trained",)
    text_field = "digits"
    max_layers = CONFIG.num_layers

    def heads(self, state) -> int:
        return CONFIG.num_heads

    def fixed(self, state) -> dict:
        return dict(FIXED)

    def fixed_note(self, state, fixed: dict) -> str:
        return t("explorer.trained_fixed", state.lang, h=fixed["num_heads"])

    def compute(self, state) -> Result:
        """The model's tokens, the weights of ``state.layer`` (H, T, T), its causal mask and a note."""
        digits = parse_digits(state)
        tokens, weights = _attention(digits)
        notes = [t("explorer.note.trained", state.lang)]
        if len(digits) < CONFIG.min_len:
            notes.append(t("explorer.note.short", state.lang, min=CONFIG.min_len, max=CONFIG.max_len,
                           n=len(digits)))
        return self_attention(tokens, weights[state.layer - 1].clone(), causal(len(tokens)), " ".join(notes),
                              fixed=self.fixed(state))

    def title(self, state, result: Result) -> str:
        return t("explorer.trained_title", state.lang, layer=state.layer, layers=CONFIG.num_layers,
                 h=int(result.weights.shape[0]), d_k=CONFIG.d_model // CONFIG.num_heads)


MODEL = ReversalModel()
