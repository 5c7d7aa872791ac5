"""The explorer's random-weight model: one sentence, four masks, 1-8 heads, scaling on or off.

Each token has a seeded embedding (the same word always gets the same vector) and the projections
are seeded the same way for every head count, so 1 head and 8 heads use the same W_q, W_k split
differently. W_q and W_k are drawn with std 1/sqrt(d_model), so q.k has variance about d_k as in a
trained model: scaled by 1/sqrt(d_k) the scores are of order 1, unscaled the softmax saturates.
No positional encoding: two equal tokens get equal rows where the mask allows.
"""
from __future__ import annotations

import functools
import zlib

import torch

from ...attention import scaled_dot_product_attention
from ...course.fonts import unsupported_chars
from ...course.i18n import t
from ...masks import causal_mask, padding_mask
from ...multihead import MultiHeadAttention
from ...text import is_cjk, tokenize
from ..result import InputError, Result, empty_rows, self_attention
from .base import ExplorerModel

D_MODEL = 64
HEAD_COUNTS = (1, 2, 4, 8)
MASK_TYPES = ("none", "padding", "causal", "causal+padding")
PAD_SIDES = ("right", "left")
MAX_TOKENS = 32
MAX_PAD = 16
MAX_LAYERS = 16                # bound of ``ExplorerState.layer`` (unused here: one layer)
PAD = "<pad>"
SEED = 0


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


def sentence_tokens(state) -> list[str]:
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


def pad_flags(state, n: int) -> list[bool]:
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


def compute_random(state) -> Result:
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


class RandomWeights(ExplorerModel):
    names = ("random",)
    text_field = "sentence"
    max_layers = MAX_LAYERS
    fixes_settings = False

    def heads(self, state) -> int:
        return state.num_heads

    def layers(self, name: str) -> int | None:
        return None                           # one attention layer: no layer to choose

    def compute(self, state) -> Result:
        return compute_random(state)

    def title(self, state, result: Result) -> str:
        lang, d_k = state.lang, D_MODEL // state.num_heads
        scale = t("explorer.scaled_title" if state.scaled else "explorer.unscaled_title", lang, d_k=d_k)
        return t("explorer.title", lang, mask=t(f"explorer.mask.{state.mask}", lang), h=state.num_heads,
                 d_k=d_k, scale=scale)


MODEL = RandomWeights()
