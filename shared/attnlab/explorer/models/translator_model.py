"""The explorer's "translator" models: lesson 08's number translator (``attnlab.translator``), one
per language, offered only where that module is installed and its checkpoints load.

A thin adapter of ``attnlab.translator.attention_maps`` (the agreed API: ``load_pretrained(lang)``,
``attention_maps(model, number)`` with ``src_tokens``, ``tgt_tokens``, ``enc_self``, ``dec_self`` and
``cross``): encoder self-, decoder self- or cross-attention (T != S) of one layer.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import pathlib
import unicodedata

import torch

from ...course.i18n import t
from ...course.languages import COURSE_LANGUAGES
from ..result import InputError, Result
from .base import ExplorerModel

MAX_LAYERS = 16                        # bound of ``ExplorerState.layer`` (the real count is checked later)
MAX_HEADS = 16                         # bound of ``ExplorerState.head`` (idem)
NUMBER_SEPARATORS = " \t.,_'"          # thousands separators a reader may type: "12 345", "12.345", "12,345"


def _module():
    """``attnlab.translator``, imported when the translator is first asked for: it is optional, and
    a stand-in may take its place in ``sys.modules`` (tests)."""
    return importlib.import_module("attnlab.translator")


def translator_available() -> bool:
    """Whether ``attnlab.translator`` is installed and its checkpoints load (checked once)."""
    return _translator_status() is None


@functools.lru_cache(maxsize=None)
def _translator_status() -> str | None:
    """None when the translator can be offered, else why not. Cheap: imports the module and looks
    for its checkpoints (``checkpoint_path(lang)`` where the module has it); loads no model."""
    try:
        found = importlib.util.find_spec("attnlab.translator") is not None
    except ValueError:                     # imported already, without a spec (e.g. a stand-in in tests)
        found = True
    if not found:
        return "attnlab.translator is not installed"
    try:
        translator = _module()
        for name in ("load_pretrained", "attention_maps"):
            if not callable(getattr(translator, name, None)):
                return f"attnlab.translator has no {name}()"
        where = getattr(translator, "checkpoint_path", None)
        if callable(where):
            missing = [lang for lang in COURSE_LANGUAGES if not pathlib.Path(where(lang)).is_file()]
            if missing:
                return f"no translator checkpoint for {', '.join(missing)}"
    except Exception as err:  # a broken module: no translator choice, never a traceback
        return f"{type(err).__name__}: {err}"
    return None


@functools.lru_cache(maxsize=None)
def _translator(model: str):
    return _module().load_pretrained(model.split("-")[1])


@functools.lru_cache(maxsize=256)
def _translator_maps(model: str, number: int):
    return _module().attention_maps(_translator(model), number)


def parse_number(state) -> int:
    """``state.number`` -> a non-negative int, or InputError with a message in ``state.lang``."""
    chars = [ch for ch in state.number if ch not in NUMBER_SEPARATORS]
    if not chars or not all(ch.isdecimal() and unicodedata.decimal(ch, None) is not None for ch in chars):
        raise InputError(t("explorer.error.number", state.lang, detail=state.number.strip()[:40] or "—"))
    return int("".join(str(unicodedata.decimal(ch)) for ch in chars))


class TranslatorModel(ExplorerModel):
    names = ("translator-vi", "translator-zh")
    text_field = "number"
    max_layers = MAX_LAYERS
    chooses_attention = True

    def available(self, name: str) -> bool:
        return translator_available()

    def heads(self, state) -> int:
        return self.fixed(state)["num_heads"]

    def max_heads(self, state) -> int:
        return MAX_HEADS

    def layers(self, name: str) -> int:
        return len(_translator_maps(name, 0).dec_self)

    def fixed(self, state) -> dict:
        maps = _translator_maps(state.model, 0)           # the model's shape, whatever the input
        return {"mask": "causal" if state.attention == "dec_self" else "none",
                "num_heads": int(maps.cross[0].shape[-3]), "pad": 0, "scaled": True,
                "layers": len(getattr(maps, state.attention))}

    def fixed_note(self, state, fixed: dict) -> str:
        return t("explorer.translator_fixed", state.lang, mask=t(f"explorer.fixed_mask.{fixed['mask']}", state.lang),
                 h=fixed["num_heads"])

    def compute(self, state) -> Result:
        number = parse_number(state)
        try:
            maps = _translator_maps(state.model, number)
        except (ValueError, TypeError):               # e.g. out of the model's range (its words are English)
            raise InputError(t("explorer.error.number", state.lang, detail=state.number.strip()[:40])) from None
        layers = getattr(maps, state.attention)
        if not 1 <= state.layer <= len(layers):
            raise InputError(t("explorer.error.unexpected", state.lang, kind="ValueError",
                               detail=f"layer must be in 1..{len(layers)}, got {state.layer}"))
        weights = layers[state.layer - 1].detach().float().cpu().clone()       # (H, rows, cols)
        if weights.dim() == 4 and weights.shape[0] == 1:
            weights = weights[0]
        rows = list(maps.tgt_tokens if state.attention != "enc_self" else maps.src_tokens)
        cols = list(maps.src_tokens if state.attention != "dec_self" else maps.tgt_tokens)
        H, T, S = weights.shape
        if (T, S) != (len(rows), len(cols)):
            raise RuntimeError(f"the translator's {state.attention} weights are {(T, S)} for {len(rows)} x {len(cols)} tokens")
        mask = torch.ones(T, S, dtype=torch.bool)
        if state.attention == "dec_self":
            mask = mask.tril()
        fixed = {"mask": "causal" if state.attention == "dec_self" else "none", "num_heads": H, "pad": 0,
                 "scaled": True, "layers": len(layers)}
        return Result(rows, cols, weights, mask, "", (False,) * T, (False,) * S, fixed)

    def title(self, state, result: Result) -> str:
        lang = state.lang
        return t("explorer.translator_title", lang, attention=t(f"explorer.attention.{state.attention}", lang),
                 layer=state.layer, layers=result.fixed.get("layers", state.layer), h=int(result.weights.shape[0]))


MODEL = TranslatorModel()
