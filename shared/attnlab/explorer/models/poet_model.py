"""The explorer's "poet" models: lesson 10's verse GPT (``attnlab.poet``), one per corpus.

"poet-vi" reads Truyện Kiều's characters, "poet-zh" the Tang poems'. The input is a verse typed on
one line, its lines separated by " / " (a text box holds one line); each line ends with a line
break, as in the corpus. The weights are ``attnlab.poet.heads.attention_for``'s: computed once per
verse for every layer (cached), then one layer (H, T, T) is shown under the model's causal mask;
a space is labelled ␣ and a line break ↵.
"""
from __future__ import annotations

import functools
import unicodedata

import torch

from ...course.i18n import t
from ...poet import heads as poet_heads
from ...poet import load_corpus, load_pretrained
from ..result import InputError, Result, causal, self_attention
from .base import ExplorerModel

LINE_SEPARATOR = "/"
LABELS = {" ": "␣", "\n": "↵"}
LAYERS, HEADS = 4, 4               # lesson 10's GPT (attnlab.poet.PoetConfig; checked against the checkpoint)
FIXED = {"mask": "causal", "num_heads": HEADS, "pad": 0, "scaled": True}


def corpus_lang(model: str) -> str:
    """"poet-vi" -> "vi": the corpus (and the checkpoint) of a poet model."""
    return model.split("-", 1)[1]


@functools.lru_cache(maxsize=None)
def _model(lang: str):
    model = load_pretrained(lang)
    c = model.config
    if (c.num_layers, c.num_heads) != (LAYERS, HEADS):
        raise RuntimeError(f"the {lang} verse checkpoint has {c.num_layers} layers x {c.num_heads} heads, "
                           f"not the expected {LAYERS} x {HEADS}")
    return model


def verse_text(line: str) -> str:
    """What the model reads for a verse typed on one line: "a, / b." -> "a,\\nb.\\n" (NFC)."""
    lines = [part.strip() for part in unicodedata.normalize("NFC", line).split(LINE_SEPARATOR)]
    return "".join(part + "\n" for part in lines if part)


def verse_line(text: str) -> str:
    """The inverse, for the text box: "a,\\nb.\\n" -> "a, / b."."""
    return f" {LINE_SEPARATOR} ".join(part for part in text.split("\n") if part)


@functools.lru_cache(maxsize=None)
def default_line(model: str) -> str:
    """The default input of a poet model: a verse of its corpus's validation text, on one line."""
    return verse_line(poet_heads.default_verse(corpus_lang(model)))


@functools.lru_cache(maxsize=256)
def _attention(model: str, text: str) -> tuple[tuple[str, ...], torch.Tensor]:
    """(characters, weights (layers, H, T, T)) of a poet model on ``text``: one forward pass per
    verse, reused for every layer and head shown."""
    lang = corpus_lang(model)
    chars, weights = poet_heads.attention_for(_model(lang), lang, text)
    return tuple(chars), torch.stack(weights)


def parse_verse(state) -> str:
    """The text the model reads, or InputError with a message in ``state.lang``."""
    lang = corpus_lang(state.model)
    corpus = t(f"explorer.poet_corpus.{lang}", state.lang)
    text = verse_text(state.verse if state.verse is not None else default_line(state.model))
    if not text:
        raise InputError(t("explorer.error.verse_empty", state.lang))
    unknown = load_corpus(lang).vocab.unknown(text)
    if unknown:
        raise InputError(t("explorer.error.verse_chars", state.lang, corpus=corpus,
                           chars=" ".join(repr(ch) if ch.isspace() else ch for ch in unknown[:5])))
    context = _model(lang).config.context
    if len(text) > context:
        raise InputError(t("explorer.error.verse_long", state.lang, n=len(text), max=context))
    return text


class PoetModel(ExplorerModel):
    names = ("poet-vi", "poet-zh")
    text_field = "verse"
    max_layers = LAYERS

    def heads(self, state) -> int:
        return HEADS

    def default_text(self, name: str, lang: str) -> str:
        return default_line(name)

    def fixed(self, state) -> dict:
        return dict(FIXED)

    def fixed_note(self, state, fixed: dict) -> str:
        return t("explorer.trained_fixed", state.lang, h=fixed["num_heads"])

    def compute(self, state) -> Result:
        """The verse's characters (␣ for a space, ↵ for a line break), the weights of ``state.layer``
        (H, T, T), the causal mask and the settings the model fixes."""
        chars, weights = _attention(state.model, parse_verse(state))
        labels = [LABELS.get(ch, ch) for ch in chars]
        return self_attention(labels, weights[state.layer - 1].clone(), causal(len(chars)), fixed=self.fixed(state))

    def title(self, state, result: Result) -> str:
        lang = corpus_lang(state.model)
        c = _model(lang).config
        return t("explorer.poet_title", state.lang, corpus=t(f"explorer.poet_corpus.{lang}", state.lang),
                 layer=state.layer, layers=c.num_layers, h=int(result.weights.shape[0]),
                 d_k=c.d_model // c.num_heads)


MODEL = PoetModel()
