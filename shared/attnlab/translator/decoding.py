"""Lesson 08's decoding: greedy generation, with or without a KV cache, and what each costs.

Without the cache every step runs the decoder on the whole prefix again. With it, each step
feeds only the newest token through the decoder blocks themselves (``DecoderBlock`` with
``past_key_value``/``use_cache``): its one query attends to the cached keys of every earlier
position and itself, all in its past, so the decoder self-attention needs no mask at all; the
cross-attention keys and values of the source are computed at the first step and reused.
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import NamedTuple, Sequence

import torch

from ..multihead import MultiHeadAttention, attend_step  # noqa: F401  (attend_step: the step lesson 08 shows)
from .data import BOS, EOS, PAD, decode_ids, encode, encode_source, heldout
from ..training import device_of, eval_mode


class Generation(NamedTuple):
    tokens: torch.Tensor      # (B, n) generated ids, EOS included, PAD after it
    logits: torch.Tensor      # (B, n, V) the logits of every step
    products: dict            # query·key dot products computed: {"self": int, "cross": int}


@dataclasses.dataclass
class KVCache:
    """What cached decoding keeps between steps: the encoder output ``memory`` (B, S, D) and its
    mask (B, 1, 1, S); per decoder layer, what the block returned with ``use_cache=True``
    (self_k, self_v (B, H, t, d_k), cross_k, cross_v (B, H, S, d_k); None before the first step);
    and the position of the next token."""
    memory: torch.Tensor
    memory_mask: torch.Tensor | None
    layers: list
    position: int = 0

    @staticmethod
    def start(model, memory: torch.Tensor, src: torch.Tensor) -> "KVCache":
        return KVCache(memory, model.memory_mask(src), [None] * len(model.decoder))


def cached_step(model, token: torch.Tensor, cache: KVCache, attend=None) -> torch.Tensor:
    """Feed one token per row (B,) at position ``cache.position`` through the decoder blocks, with
    their cached keys and values; update ``cache``; return the logits (B, V).

    ``attend``: a replacement for the self-attention's step, with ``attend_step``'s signature and
    result (lesson 08's exercise decodes with the student's step this way).
    """
    with _self_attention_step(model, attend):
        x = model.pos(model.tgt_embed(token[:, None]), offset=cache.position)       # (B, 1, D)
        for i, block in enumerate(model.decoder):
            x, _, _, cache.layers[i] = block(x, cache.memory, memory_mask=cache.memory_mask,
                                             past_key_value=cache.layers[i], use_cache=True)
    cache.position += 1
    return model.head(model.dec_norm(x))[:, 0]                                      # (B, V)


@contextlib.contextmanager
def _self_attention_step(model, attend):
    if attend is None:
        yield
        return
    with _shadowing([(block.self_attention, "attend_step", lambda m: attend) for block in model.decoder]):
        yield


@contextlib.contextmanager
def _shadowing(replacements):
    """Set instance attributes ``(module, name, make(module))`` that shadow the class's methods,
    and put back whatever was there before, even on an error."""
    saved = [(m, name, m.__dict__.get(name, _NOTHING)) for m, name, _ in replacements]
    for m, name, make in replacements:
        setattr(m, name, make(m))
    try:
        yield
    finally:
        for m, name, before in reversed(saved):
            if before is _NOTHING:
                m.__dict__.pop(name, None)
            else:
                m.__dict__[name] = before


_NOTHING = object()


@contextlib.contextmanager
def counting_products(modules: dict[str, list[MultiHeadAttention]]):
    """Count the query·key dot products that ``modules`` compute inside the block: a spy on the two
    places where their queries meet their keys, reading the shapes of the tensors multiplied,
    q (B, H, T, d_k) and k (B, H, S, d_k): B·H·T·S per call. Yields ``{name: count}``."""
    counts = dict.fromkeys(modules, 0)

    def spy(name, fn, keys_of):
        def counted(q, *args, **kwargs):
            result = fn(q, *args, **kwargs)
            counts[name] += q.shape[:-1].numel() * keys_of(args, result).shape[-2]
            return result
        return counted

    spies = []
    for name, group in modules.items():
        for m in group:
            spies.append((m, "_attention", lambda m, name=name: spy(name, m._attention, lambda a, r: a[0])))
            spies.append((m, "attend_step", lambda m, name=name: spy(name, m.attend_step, lambda a, r: r[2])))
    with _shadowing(spies):                  # _attention(q, k, v, ..); attend_step(..) -> (o, w, k, v)
        yield counts


@torch.no_grad()
def generate(model, src: torch.Tensor, max_len: int | None = None, use_cache: bool = False) -> Generation:
    """Greedy decoding of a batch ``src`` (B, S): append the argmax until every row has EOS.

    ``use_cache=False``: each step runs the decoder on the whole prefix (B, t) again and keeps the
    last position. ``use_cache=True``: each step feeds only the newest token (``cached_step``).
    Same tokens, same logits (to float rounding). ``products`` counts the query·key dot products
    of the decoder's attention (all batch rows, heads and layers), measured on the tensors that
    the attention actually multiplied (``counting_products``).
    """
    with eval_mode(model):
        src = src.to(device_of(model))
        B = src.shape[0]
        max_len = max_len or model.config.max_tgt - 1
        memory, _ = model.encode(src)
        fed = torch.full((B, 1), BOS, dtype=torch.long, device=src.device)       # what the decoder reads
        out = []                                                                  # what it wrote (PAD after EOS)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        logits_all = []
        cache = KVCache.start(model, memory, src) if use_cache else None
        decoder = {"self": [b.self_attention for b in model.decoder], "cross": [b.cross_attention for b in model.decoder]}
        with counting_products(decoder) as products:
            for _ in range(max_len):
                if use_cache:
                    step_logits = cached_step(model, fed[:, -1], cache)           # (B, V)
                else:
                    step_logits = model.decode(fed, memory, src)[0][:, -1]        # (B, t, V) -> (B, V)
                nxt = step_logits[:, EOS:].argmax(-1) + EOS       # (B,) the best word or EOS, never PAD/BOS
                logits_all.append(step_logits)
                # A finished row keeps being fed its own argmax (never PAD, which the uncached decoder
                # would mask), so both paths compute the same thing; its output after EOS is PAD.
                fed = torch.cat([fed, nxt[:, None]], dim=1)
                out.append(torch.where(done, PAD, nxt))
                done |= nxt == EOS
                if done.all():
                    break
    return Generation(torch.stack(out, dim=1), torch.stack(logits_all, dim=1), dict(products))


def translate(model, numbers: Sequence[int] | int, use_cache: bool = True):
    """The model's words for one number (a list of words) or for a list of numbers (a list of lists)."""
    single = isinstance(numbers, int) and not isinstance(numbers, bool)
    nums = [numbers] if single else list(numbers)
    gen = generate(model, encode_source(nums), use_cache=use_cache)
    out = [decode_ids(row, model.lang) for row in gen.tokens]
    return out[0] if single else out


@torch.no_grad()
def accuracy(model, numbers: Sequence[int] | None = None, batch_size: int = 500) -> float:
    """Exact-match accuracy of greedy decoding (with the KV cache), held-out numbers by default."""
    numbers = heldout() if numbers is None else list(numbers)
    right = 0
    for i in range(0, len(numbers), batch_size):
        chunk = numbers[i: i + batch_size]
        src, tgt = encode(chunk, model.lang)
        gen = generate(model, src, use_cache=True)
        for row, truth in zip(gen.tokens.cpu(), tgt):
            right += decode_ids(row, model.lang) == decode_ids(truth, model.lang)
    return right / len(numbers)
