"""Lesson 08's analysis: how the translator's cross-attention lines up with the source digits
(``alignment_mass``, ``aligned_head``, ``context_mass``), and every attention map of one number
for the explorer (``attention_maps``)."""
from __future__ import annotations

import dataclasses
from typing import Sequence

import torch

from . import numwords
from ..analysis import HeadScore, best_head, mass_on
from .decoding import translate
from .data import BOS, _check_number, alignment_map, encode, encode_source, heldout, shift_right, target_tokens
from ..training import device_of, eval_mode


@torch.no_grad()
def cross_attention(model, numbers: Sequence[int]) -> list[torch.Tensor]:
    """Teacher-forced cross-attention weights per decoder layer, (B, H, T, S) on the CPU."""
    src, tgt = encode(numbers, model.lang)
    tgt_in, _ = shift_right(tgt)
    dev = device_of(model)
    with eval_mode(model):
        _, w = model(src.to(dev), tgt_in.to(dev), need_weights=True)
    return [x.float().cpu() for x in w["cross"]]


def alignment_mass(model, numbers: Sequence[int] | None = None) -> torch.Tensor:
    """(layers, heads): the average cross-attention weight that the query predicting a word puts on
    that word's aligned source digit (``numwords``), over every word of every number (held-out
    numbers by default). 1 = perfectly aligned; uniform attention gives 1/S on average."""
    numbers = heldout() if numbers is None else list(numbers)
    R = alignment_map(numbers, model.lang)[:, None]                            # (B, 1, T, S)
    return mass_on(cross_attention(model, numbers), R)


def uniform_mass(lang: str, numbers: Sequence[int] | None = None) -> float:
    """What attention spread evenly over the real digits would score: 1/S averaged over every word."""
    numbers = heldout() if numbers is None else list(numbers)
    per_word = [1 / len(w.digits) for w in (numwords.words(int(n), lang) for n in numbers) for _ in w.tokens]
    return sum(per_word) / len(per_word)


# Words whose form needs a source digit besides their aligned one (numwords' context_digits).
CONTEXT_WORDS = {"vi": ("mốt", "tư", "lăm", "linh"), "zh": ("零",)}
# The same words in groups whose extra context differs (the tens digit; a later non-zero digit).
CONTEXT_GROUPS = {"vi": (("mốt", "tư", "lăm"), ("linh",)), "zh": (("零",),)}


def context_mass(model, numbers: Sequence[int] | None = None,
                 words: Sequence[str] | None = None) -> tuple[torch.Tensor, int]:
    """For the words of ``CONTEXT_WORDS[lang]`` (mốt, linh, 零, …; or only ``words``): the average
    cross-attention weight that the query predicting the word puts on the OTHER digits that decide its
    form (not its aligned digit), per (layer, head); and how many such words the numbers contain
    (held-out by default)."""
    numbers = heldout() if numbers is None else list(numbers)
    chosen = CONTEXT_WORDS[model.lang] if words is None else tuple(words)
    if not set(chosen) <= set(CONTEXT_WORDS[model.lang]):
        raise ValueError(f"words must be among {CONTEXT_WORDS[model.lang]}, got {tuple(words)}")
    src, tgt = encode(numbers, model.lang)
    R = torch.zeros(len(numbers), tgt.shape[1] - 1, src.shape[1])
    count = 0
    for b, n in enumerate(numbers):
        w = numwords.words(int(n), model.lang)
        for j, (word, a, ctx) in enumerate(zip(w.tokens, w.align, w.context_digits)):
            if word in chosen:
                count += 1
                for c in ctx:
                    if c != a:
                        R[b, j, c] = 1.0
    weights = cross_attention(model, numbers)
    rows = R.amax(-1)[:, None]                                                  # (B, 1, T): the words counted
    mass = torch.stack([(w * R[:, None]).sum(-1).mul(rows).sum(dim=(0, 2)) / max(count, 1) for w in weights])
    return mass, count


def aligned_head(model, numbers: Sequence[int] | None = None, layer: int | None = -1) -> HeadScore:
    """The head (counted from 1) with the most attention mass on the aligned digit, in the last
    decoder layer by default (``layer=None``: any layer)."""
    return best_head(alignment_mass(model, numbers), layer)


@dataclasses.dataclass
class TranslatorMaps:
    """Attention of one number through the model. ``tgt_tokens`` are the decoder's inputs
    (``<s>`` then the model's own words), ``out_tokens`` what each of those positions predicts."""
    src_tokens: list[str]          # S source digits
    tgt_tokens: list[str]          # T decoder inputs
    out_tokens: list[str]          # T predicted words (the last is </s>)
    enc_self: list[torch.Tensor]   # per encoder layer (H, S, S)
    dec_self: list[torch.Tensor]   # per decoder layer (H, T, T)
    cross: list[torch.Tensor]      # per decoder layer (H, T, S)


@torch.no_grad()
def attention_maps(model, number: int, words: Sequence[str] | None = None) -> TranslatorMaps:
    """The model translates ``number`` (greedy); then one teacher-forced pass over ``<s>`` + its
    words gives every attention map. ``words``: feed these words instead of the model's own."""
    n = _check_number(number)
    lang = model.lang
    src = encode_source([n]).to(device_of(model))
    if words is None:
        words = translate(model, n)
    vocab = {w: i for i, w in enumerate(target_tokens(lang))}
    unknown = [w for w in words if w not in vocab]
    if unknown:
        raise ValueError(f"words not in the {lang} vocabulary: {unknown}")
    ids = [BOS] + [vocab[w] for w in words]
    tgt_in = torch.tensor([ids], device=src.device)
    with eval_mode(model):
        _, w = model(src, tgt_in, need_weights=True)
    labels = target_tokens(lang)
    return TranslatorMaps(
        src_tokens=list(str(n)),
        tgt_tokens=[labels[i] for i in ids],
        out_tokens=list(words) + ["</s>"],
        enc_self=[x[0].float().cpu() for x in w["enc_self"]],
        dec_self=[x[0].float().cpu() for x in w["dec_self"]],
        cross=[x[0].float().cpu() for x in w["cross"]],
    )
