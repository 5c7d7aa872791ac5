"""Sampling from lesson 10's GPT: temperature, top-k, top-p, reproducible with a seed.

    probs = softmax(logits / temperature)                 temperature > 0: < 1 sharper, > 1 flatter
    top-k: keep the k most likely characters              k >= 1 (None: all)
    top-p: keep the fewest most likely characters whose   0 < p <= 1 (None or 1: all); the most
           probabilities add up to at least p             likely character is always kept
    then renormalise and draw one character.

A seed makes a draw reproducible through its own ``torch.Generator``; the global RNG is not
touched. Bad parameters are refused with a message in the current language (``set_language``).
"""
from __future__ import annotations

import math
import numbers

import torch

from ..course.i18n import t
from ..training import cpu_threads, eval_mode
from .corpus import Vocab


def check_sampling(temperature=1.0, top_k=None, top_p=None) -> None:
    """Refuse temperature <= 0, top-k < 1 (or not an integer), top-p outside (0, 1]."""
    if (isinstance(temperature, bool) or not isinstance(temperature, numbers.Real)
            or not math.isfinite(temperature) or temperature <= 0):
        raise ValueError(t("poet.err.temperature", got=repr(temperature)))
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 1):
        raise ValueError(t("poet.err.top_k", got=repr(top_k)))
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, numbers.Real)
                              or not 0 < top_p <= 1):
        raise ValueError(t("poet.err.top_p", got=repr(top_p)))


def next_token_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None) -> torch.Tensor:
    """Logits (..., V) -> the probabilities (..., V) one draws the next character from."""
    check_sampling(temperature, top_k, top_p)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_k is not None and top_k < probs.shape[-1]:
        kth = probs.topk(top_k, dim=-1).values[..., -1:]                 # (..., 1): the k-th largest
        probs = torch.where(probs >= kth, probs, 0.0)                    # ties with the k-th are kept
    if top_p is not None and top_p < 1:
        probs = probs / probs.sum(-1, keepdim=True)
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p                          # mass of the more likely ones
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before < top_p)
        probs = torch.where(keep, probs, 0.0)
    return probs / probs.sum(-1, keepdim=True)


@torch.no_grad()
def generate(model, vocab: Vocab, prompt: str, length: int, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None, seed: int | None = 0,
             num_samples: int = 1, threads: int | None = 1) -> list[str]:
    """``num_samples`` continuations of ``prompt``, ``length`` characters each (the prompt not included).

    ``seed``: an int draws from its own generator (the same seed, the same text; the global RNG
    untouched); None draws from torch's global RNG. The model reads the last ``context`` characters.
    """
    check_sampling(temperature, top_k, top_p)
    if not isinstance(prompt, str) or not prompt:
        raise ValueError(t("poet.err.prompt", got=repr(prompt)))
    for name, value, low in (("length", length, 0), ("num_samples", num_samples, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(t("poet.err.count", name=name, low=low, got=repr(value)))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ValueError(t("poet.err.seed", got=repr(seed)))
    ids = torch.tensor([vocab.encode(prompt)] * num_samples, dtype=torch.long)     # (N, P)
    start = ids.shape[1]
    generator = None if seed is None else torch.Generator().manual_seed(int(seed))
    context = model.config.context
    with cpu_threads(threads), eval_mode(model):
        for _ in range(length):
            x, _ = model.features(ids[:, -context:])                              # (N, T, D)
            logits = x[:, -1] @ model.embed.weight.T                               # (N, V): the last position only
            probs = next_token_probs(logits, temperature, top_k, top_p)           # (N, V)
            ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return [vocab.decode(row[start:]) for row in ids]
