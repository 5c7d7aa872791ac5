"""Lesson 06, exercise 3: one step of greedy decoding with a cropped context (``l06.check_greedy_step``).

``fn(model, ids (B, T), max_len)`` -> (B, T + 1): ids plus the argmax of the last position's logits,
the model given only the last max_len tokens. The checker's toy model (max_len drawn per run) records
what it is fed, so a crop of the wrong length or from the wrong end is named as such.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ._common import Draw, Exercise, Feedback, attempt, evaluate_exercise, is_tensor, judging, kind, raises, shape, value_of


class ContextTooLong(IndexError):
    """Raised by the checker's toy model when it gets more than max_len tokens."""


class ToyLM(nn.Module):
    """A fixed toy language model for the checker: logits[b, t] = table[ids[b, t]] + pos[t].

    Like TinyGPT it returns (B, T, V) logits and has only ``max_len`` positions; ``seen`` lists the
    length of every sequence it was given (what the student fed it, for the crop hints).
    """

    def __init__(self, vocab_size: int = 11, max_len: int = 6, seed: int = 6):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("table", torch.randn(vocab_size, vocab_size, generator=g))
        self.register_buffer("pos", torch.randn(max_len, vocab_size, generator=g))
        self.max_len = max_len
        self.seen: list[int] = []
        self.fed: list[torch.Tensor] = []

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T = ids.shape[1]
        self.seen.append(int(T))
        self.fed.append(ids.detach().cpu().clone())
        if T > self.max_len:
            raise ContextTooLong(f"sequence of {T} tokens, but the model has only max_len={self.max_len} positions")
        return self.table[ids] + self.pos[:T]                                        # (B, T, V)


def greedy_setup(seed: int) -> tuple[ToyLM, list[torch.Tensor]]:
    """The toy model and the id batches, drawn from ``seed``: max_len never the lesson's 16 nor a
    fixed number; one sequence first (B = 1, so an argmax over the wrong axis shows as a wrong shape,
    not a crash), a batch shorter than max_len, two batches longer (they must be cropped; the second
    more than twice max_len, so a crop to a fixed length shows), a single token.
    Each batch is drawn again until every row tells the mistakes apart: the first position's argmax
    and the first max_len tokens' argmax both differ from the right token, and the first position's
    argmax from the last position's argmin (so that an argmin is not read as the first position)."""
    d = Draw(seed, "l06.greedy_step")
    V, m = d.int(9, 15), d.choice((4, 5, 7, 8, 9))
    model = ToyLM(V, m, seed=d.int(0, 10 ** 6))
    B = d.int(2, 3)
    batches = []
    for size in [(1, d.int(2, m - 1)), (B, m - 1), (B, m + d.int(2, 4)), (1, 1), (B, 2 * m + 1)]:
        for _ in range(1000):
            ids = d.randint(0, V - 1, size)
            with torch.no_grad():
                want = model(ids[:, -m:])[:, -1].argmax(-1)
                least = model(ids[:, -m:])[:, -1].argmin(-1)
                first = model(ids[:, -m:])[:, 0].argmax(-1)
                front = model(ids[:, :m])[:, -1].argmax(-1)
            if size[1] == 1 or (bool((first != want).all()) and bool((first != least).all())
                                and (size[1] <= m or bool((front != want).all()))):
                break
        batches.append(ids)
    model.seen, model.fed = [], []
    return model, batches


def reference_greedy_step(model, ids, max_len):
    with torch.no_grad():
        logits = model(ids[:, -max_len:])
    return torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)


def probe_greedy_step(fn, *, seed: int) -> dict:
    """For each batch: what the student's step returned and the lengths the toy model was given."""
    model, batches = greedy_setup(seed)
    m = model.max_len
    results = {}
    for i, ids in enumerate(batches):            # every batch, even after an error: the crops tell apart
        model.seen, model.fed = [], []
        results[f"case{i}"] = attempt(fn, model, ids.clone(), m)
        results[f"seen{i}"] = list(model.seen)
        results[f"fed{i}"] = list(model.fed[-4:])                  # what the model read (the last calls)
    return results


def _seen(results: dict, i: int) -> list[int]:
    seen = results.get(f"seen{i}")
    return [int(n) for n in seen if isinstance(n, int) and not isinstance(n, bool)] if isinstance(seen, list) else []


def _greedy_error_hint(error: dict):
    if raises(error, "ContextTooLong"):
        return False, "l06.greedy.no_crop", {}
    if raises(error, "RuntimeError") and any(w in error["message"] for w in ("must match", "same number of dimensions")):
        return False, "l06.greedy.cat", {}
    return None


@judging
def judge_greedy_step(results: dict, *, seed: int):
    model, batches = greedy_setup(seed)
    m = model.max_len
    for i, ids in enumerate(batches):             # a crop of the wrong length, in any batch, comes first
        T, seen = ids.shape[1], _seen(results, i)
        if seen and min(T, m) not in seen and seen[-1] != T:
            return False, "l06.greedy.crop_length", {"got": seen[-1], "need": min(T, m), "T": T, "max_len": m}
    for i, ids in enumerate(batches):
        B, T = ids.shape
        got = value_of(results, f"case{i}", errors=_greedy_error_hint)
        if not is_tensor(got):
            return False, "l06.greedy.not_tensor", {"kind": kind(got)}
        with torch.no_grad():
            first = model(ids[:, -m:])[:, 0].argmax(-1)
            front = model(ids[:, :m])[:, -1].argmax(-1)
        want = reference_greedy_step(model, ids, m)
        if got.is_floating_point() or got.is_complex():
            return False, "l06.greedy.values", {}
        if tuple(got.shape) in ((B, 1), (B,)):
            return False, "l06.greedy.no_append", {}
        if T > m and tuple(got.shape) == (B, m + 1):
            return False, "l06.greedy.crop_return", {}
        if tuple(got.shape) != (B, T + 1):
            return False, "l06.greedy.shape", {"got": shape(got.shape), "want": shape((B, T + 1))}
        if not torch.equal(got[:, :T], ids):
            return False, "l06.greedy.changed", {}
        fed = [f for f in results.get(f"fed{i}", []) if is_tensor(f)] if isinstance(results.get(f"fed{i}"), list) else []
        if T > m and any(f.shape == (B, m) and torch.equal(f, ids[:, :m]) for f in fed) \
                and not any(f.shape == (B, m) and torch.equal(f, ids[:, -m:]) for f in fed):
            return False, "l06.greedy.crop_front", {}               # the model read the first max_len tokens
        new = got[:, -1]
        if torch.equal(new, want[:, -1]):
            continue
        if torch.equal(new, first):
            return False, "l06.greedy.first", {}
        if T > m and torch.equal(new, front):
            return False, "l06.greedy.crop_front", {}
        return False, "l06.greedy.wrong", {"shape": shape(ids)}
    return True, "l06.greedy.ok", {}


GREEDY = Exercise("l06.greedy_step", "l06.ex.greedy", ("greedy_step",), probe_greedy_step, judge_greedy_step)


def evaluate_greedy_step(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(model, ids (B, T), max_len)`` -> (B, T+1): ids plus the argmax of the last position's logits."""
    return evaluate_exercise(GREEDY, (fn,), lang, seed)
