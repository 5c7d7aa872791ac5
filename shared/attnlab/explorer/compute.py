"""State -> numbers: the tokens, the weights of every head (H, T, S), the mask (T, S) and a note.

Pure functions (cached models aside), no widgets, no drawing. The random-weight mode: each
token has a seeded embedding (the same word always gets the same vector) and the projections
are seeded the same way for every head count, so 1 head and 8 heads use the same W_q, W_k
split differently. W_q and W_k are drawn with std 1/sqrt(d_model), so q.k has variance about
d_k as in a trained model: scaled by 1/sqrt(d_k) the scores are of order 1, unscaled the
softmax saturates. No positional encoding: two equal tokens get equal rows where the mask allows.

The trained mode shows the tiny reversal model of lesson 07 (``attnlab.reversal``), the translator
modes the number translator of lesson 08 (``attnlab.translator``, only where it is installed),
the poet modes lesson 10's verse GPT (``attnlab.poet``; ``poet_mode``).
Every mode returns the same ``Result``, so the drawing does not care which model it came from.
"""
from __future__ import annotations

import functools
import importlib.util
import pathlib
import unicodedata
import zlib
from typing import NamedTuple

import torch

from ..attention import scaled_dot_product_attention
from ..course.fonts import unsupported_chars
from ..course.i18n import t
from ..course.languages import COURSE_LANGUAGES
from ..masks import causal_mask, padding_mask
from ..multihead import MultiHeadAttention
from ..text import is_cjk, tokenize
from ..training import one_cpu_thread
from .. import reversal
from .state import (D_MODEL, DIGIT_SEPARATORS, MAX_TOKENS, PAD, SEED, TRAINED_CONFIG, ExplorerState,
                    InputError)


class Result(NamedTuple):
    queries: list[str]           # T row labels (padding included)
    keys: list[str]              # S column labels
    weights: torch.Tensor        # (H, T, S), every head
    mask: torch.Tensor           # (T, S) bool, True = may attend
    message: str                 # a note for the user ("" if none)
    muted_queries: tuple         # (T,) bool: pad tokens (grey labels)
    muted_keys: tuple            # (S,) bool
    fixed: dict                  # model modes: the settings the model fixes (mask, num_heads, pad, scaled)

    @property
    def tokens(self) -> list[str]:
        """The row tokens (self-attention: also the column tokens)."""
        return self.queries


def self_attention(tokens, weights, mask, message="", muted=None, fixed=None) -> Result:
    """A Result whose rows and columns are the same ``tokens``."""
    muted = tuple(muted) if muted is not None else (False,) * len(tokens)
    return Result(list(tokens), list(tokens), weights, mask, message, muted, muted, fixed or {})


# ----------------------------------------------------------------------------- random weights

@functools.lru_cache(maxsize=None)
def _model(num_heads: int) -> MultiHeadAttention:
    """Seeded projections, the same W_q, W_k, W_v for every head count; eval mode, cached."""
    with torch.random.fork_rng(devices=[]):          # leave the caller's RNG alone
        torch.manual_seed(SEED)
        mha = MultiHeadAttention(D_MODEL, num_heads).eval()
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for proj in (mha.q_proj, mha.k_proj, mha.v_proj):
            proj.weight.normal_(0.0, D_MODEL ** -0.5, generator=g)
            proj.bias.zero_()
    return mha


@functools.lru_cache(maxsize=4096)
def _embedding(token: str) -> torch.Tensor:
    """A unit-variance vector seeded by the token's text (stable across runs and machines)."""
    g = torch.Generator().manual_seed(zlib.crc32(token.encode("utf-8")))
    return torch.randn(D_MODEL, generator=g)


def sentence_tokens(state: ExplorerState) -> list[str]:
    """The sentence's tokens, or InputError with a message in ``state.lang``."""
    lang = state.lang
    tokens = tokenize(state.sentence)
    if not tokens:
        raise InputError(t("explorer.error.empty", lang))
    bad = unsupported_chars(state.sentence)
    if bad:
        raise InputError(t("explorer.error.chars", lang, chars=" ".join(bad[:5])))
    if len(tokens) > MAX_TOKENS:
        raise InputError(t("explorer.error.too_long", lang, n=len(tokens), max=MAX_TOKENS))
    if len(tokens) + state.pad > MAX_TOKENS:
        raise InputError(t("explorer.error.too_long_pad", lang, n=len(tokens), pad=state.pad,
                           total=len(tokens) + state.pad, max=MAX_TOKENS))
    return tokens


def is_mixed(tokens: list[str]) -> bool:
    """Chinese characters and Latin-script words in one sentence."""
    han = any(is_cjk(tok[0]) for tok in tokens)
    latin = any(ch.isalpha() and not is_cjk(ch) for tok in tokens for ch in tok)
    return han and latin


def pad_flags(state: ExplorerState, n: int) -> list[bool]:
    """Which of the ``n`` positions (padding included) are pad tokens (none in the model modes)."""
    if state.model != "random":
        return [False] * n
    return [i < state.pad if state.pad_side == "left" else i >= n - state.pad for i in range(n)]


def build_mask(kind: str, is_pad: torch.Tensor) -> torch.Tensor:
    """(T,) bool padding flags -> (T, T) bool mask of the given kind (True = may attend)."""
    T = is_pad.shape[0]
    ids = (~is_pad).long()[None]                                     # (1, T), pad id 0
    mask = torch.ones(T, T, dtype=torch.bool)
    if "padding" in kind:
        mask = mask & padding_mask(ids)[0, 0]                         # (1, T) -> (T, T)
    if "causal" in kind:
        mask = mask & causal_mask(T)[0, 0]
    return mask


def empty_rows(mask: torch.Tensor) -> int:
    """How many queries may attend to no key at all (their weights are all zero)."""
    return int((~mask.any(-1)).sum())


def compute_random(state: ExplorerState) -> Result:
    words = sentence_tokens(state)
    pads = [PAD] * state.pad
    tokens = pads + words if state.pad_side == "left" else words + pads
    is_pad = pad_flags(state, len(tokens))
    mask = build_mask(state.mask, torch.tensor(is_pad))
    mha = _model(state.num_heads)
    x = torch.stack([_embedding(tok) for tok in tokens])[None]         # (1, T, D)
    with torch.no_grad():
        q = mha.split_heads(mha.q_proj(x))                            # (1, H, T, d_k)
        k = mha.split_heads(mha.k_proj(x))
        v = mha.split_heads(mha.v_proj(x))
        _, weights = scaled_dot_product_attention(q, k, v, mask=mask[None, None],
                                                  scale=None if state.scaled else 1.0)
    notes = []
    if empty_rows(mask):                      # left padding + causal: queries that see no key
        notes.append(t("explorer.note.empty_rows", state.lang, n=empty_rows(mask)))
    if "padding" in state.mask and state.pad == 0:
        notes.append(t("explorer.note.no_pad", state.lang))
    if is_mixed(words):
        notes.append(t("explorer.note.mixed", state.lang))
    return self_attention(tokens, weights[0], mask, " ".join(notes), is_pad)


# ----------------------------------------------------------------------------- the trained reversal model

@functools.lru_cache(maxsize=None)
def _trained_model() -> reversal.TinyTransformer:
    """The tiny reversal model of lesson 07, loaded once, on the CPU, in eval mode."""
    model = reversal.load_pretrained()
    c = model.config
    if (c.num_heads, c.num_layers, c.max_len) != (TRAINED_CONFIG.num_heads, TRAINED_CONFIG.num_layers,
                                                   TRAINED_CONFIG.max_len):
        raise RuntimeError(f"the checkpoint's model {c} is not the expected {TRAINED_CONFIG}")
    return model


@functools.lru_cache(maxsize=512)
def _trained_attention(digits: tuple[int, ...]) -> tuple[tuple[str, ...], torch.Tensor]:
    """(tokens, weights (layers, H, T, T)) of the trained model for one digit sequence, cached."""
    tokens, weights = reversal.attention_for(_trained_model(), digits)
    return tuple(tokens), torch.stack(weights)


def parse_digits(state: ExplorerState) -> tuple[int, ...]:
    """``state.digits`` -> the digits (1 to 8 of them), or InputError with a message in ``state.lang``.

    Digits may be written together ("314159") or apart ("3 1 4", "3,1,4"); full-width digits count.
    """
    lang, n_max = state.lang, TRAINED_CONFIG.max_len
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


TRAINED_FIXED = {"mask": "causal", "num_heads": TRAINED_CONFIG.num_heads, "pad": 0, "scaled": True}


def compute_trained(state: ExplorerState) -> Result:
    """The model's tokens, the weights of ``state.layer`` (H, T, T), its causal mask and a note."""
    digits = parse_digits(state)
    tokens, weights = _trained_attention(digits)
    if not 1 <= state.layer <= weights.shape[0]:
        raise ValueError(f"layer must be in 1..{weights.shape[0]}, got {state.layer}")
    T = len(tokens)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    notes = [t("explorer.note.trained", state.lang)]
    c = TRAINED_CONFIG
    if len(digits) < c.min_len:
        notes.append(t("explorer.note.short", state.lang, min=c.min_len, max=c.max_len, n=len(digits)))
    return self_attention(tokens, weights[state.layer - 1].clone(), mask, " ".join(notes),
                          fixed=dict(TRAINED_FIXED))


# ----------------------------------------------------------------------------- the translator (lesson 08)

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
        from .. import translator

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
    from .. import translator

    return translator.load_pretrained(model.split("-")[1])


@functools.lru_cache(maxsize=256)
def _translator_maps(model: str, number: int):
    from .. import translator

    return translator.attention_maps(_translator(model), number)


NUMBER_SEPARATORS = " \t.,_'"          # thousands separators a reader may type: "12 345", "12.345", "12,345"


def parse_number(state: ExplorerState) -> int:
    """``state.number`` -> a non-negative int, or InputError with a message in ``state.lang``."""
    chars = [ch for ch in state.number if ch not in NUMBER_SEPARATORS]
    if not chars or not all(ch.isdecimal() and unicodedata.decimal(ch, None) is not None for ch in chars):
        raise InputError(t("explorer.error.number", state.lang, detail=state.number.strip()[:40] or "—"))
    return int("".join(str(unicodedata.decimal(ch)) for ch in chars))


def compute_translator(state: ExplorerState) -> Result:
    """Encoder self-, decoder self- or cross-attention (T != S) of one layer of the translator
    (``attnlab.translator.attention_maps``): a thin adapter to the generic ``Result``."""
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
    if state.attention == "dec_self":
        mask = torch.ones(T, S, dtype=torch.bool).tril()
    else:
        mask = torch.ones(T, S, dtype=torch.bool)
    fixed = {"mask": "causal" if state.attention == "dec_self" else "none", "num_heads": H, "pad": 0,
             "scaled": True, "layers": len(layers)}
    return Result(rows, cols, weights, mask, "", (False,) * T, (False,) * S, fixed)


# ----------------------------------------------------------------------------- dispatch

@one_cpu_thread
def compute(state: ExplorerState) -> Result:
    """Row and column tokens, per-head weights (H, T, S), mask (T, S) and a note; InputError for
    bad input, with a message in ``state.lang``.

    On one CPU thread (the caller's setting is restored): the tensors are tiny, and idle torch
    threads that wake for them compete with the browser and the server for a small machine's cores.
    """
    if state.trained:
        return compute_trained(state)
    if state.poet:
        from .poet_mode import compute_poet

        return compute_poet(state)
    if state.translator:
        return compute_translator(state)
    return compute_random(state)
