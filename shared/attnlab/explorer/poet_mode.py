"""The explorer's "poet" models: lesson 10's verse GPT (``attnlab.poet``), one per corpus.

"poet-vi" reads Truyện Kiều's characters, "poet-zh" the Tang poems'. The input is a verse typed on
one line, its lines separated by " / " (a text box holds one line); each line ends with a line
break, as in the corpus. The weights are ``attnlab.poet.heads.attention_for``'s, one layer
(H, T, T) under the model's causal mask; a space is labelled ␣ and a line break ↵.
"""
from __future__ import annotations

import functools
import unicodedata

import torch

from ..course.i18n import t
from .state import POET_HEADS, POET_LAYERS, ExplorerState, InputError

LINE_SEPARATOR = "/"
LABELS = {" ": "␣", "\n": "↵"}
POET_FIXED = {"mask": "causal", "num_heads": POET_HEADS, "pad": 0, "scaled": True}


def corpus_lang(model: str) -> str:
    """"poet-vi" -> "vi": the corpus (and the checkpoint) of a poet model."""
    return model.split("-", 1)[1]


@functools.lru_cache(maxsize=None)
def _model(lang: str):
    from ..poet import load_pretrained

    model = load_pretrained(lang)
    c = model.config
    if (c.num_layers, c.num_heads) != (POET_LAYERS, POET_HEADS):
        raise RuntimeError(f"the {lang} verse checkpoint has {c.num_layers} layers x {c.num_heads} heads, "
                           f"not the expected {POET_LAYERS} x {POET_HEADS}")
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
    from ..poet import heads

    return verse_line(heads.default_verse(corpus_lang(model)))


@functools.lru_cache(maxsize=256)
def _attention(model: str, text: str) -> tuple[tuple[str, ...], torch.Tensor]:
    """(characters, weights (layers, H, T, T)) of a poet model on ``text``, cached."""
    from ..poet import heads

    lang = corpus_lang(model)
    chars, weights = heads.attention_for(_model(lang), lang, text)
    return tuple(chars), torch.stack(weights)


def parse_verse(state: ExplorerState) -> str:
    """The text the model reads, or InputError with a message in ``state.lang``."""
    from ..poet import load_corpus

    lang, corpus = corpus_lang(state.model), t(f"explorer.poet_corpus.{corpus_lang(state.model)}", state.lang)
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


def compute_poet(state: ExplorerState):
    """The verse's characters (␣ for a space, ↵ for a line break), the weights of ``state.layer``
    (H, T, T), the causal mask and the settings the model fixes."""
    from .compute import self_attention

    chars, weights = _attention(state.model, parse_verse(state))
    T = len(chars)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    labels = [LABELS.get(ch, ch) for ch in chars]
    return self_attention(labels, weights[state.layer - 1].clone(), mask, fixed=dict(POET_FIXED))


def title(state: ExplorerState, H: int) -> str:
    c = _model(corpus_lang(state.model)).config
    return t("explorer.poet_title", state.lang, corpus=t(f"explorer.poet_corpus.{corpus_lang(state.model)}", state.lang),
             layer=state.layer, layers=c.num_layers, h=H, d_k=c.d_model // c.num_heads)
