"""Exercise checkers for lesson 10 (a GPT that writes verse).

- ``check_probs(fn)``: ``fn(logits (V,), temperature, top_k) -> probabilities (V,)``: softmax of
  logits / temperature, only the top_k most likely kept (ties with the k-th too; None: all),
  renormalised.
- ``check_pattern(fn, lang)`` and ``check_rhymes(fn, lang)``: the verse itself (``l10_verse``).
- ``check_head(model, lang, answer)``: ``answer = (layer, head)`` counted from 1; right if that
  head puts at least ``HEAD_SHARE`` of the best head's weight on the line-break relation
  (``attnlab.poet.heads.BREAK``: from the first syllable (vi) or character (zh) of a line to the
  punctuation that ends the line before), measured on the package's checkpoint.
- ``check_guess(guess, low, high)``: the predict-then-run question (ungraded: it says whether
  the guess matched the measurement; not in the registry).

Each is a probe and a judge (docs/checkers.md): the judge recognises the typical mistakes and
words a hint for the first one it meets, never the solution.
"""
from __future__ import annotations

import functools
import numbers

import torch

from ..poet import heads
from ..poet.recipe import load_pretrained
from ..poet.sample import next_token_probs
from ._common import (Draw, Exercise, Feedback, NotDone, Verdict, attempt, evaluate, evaluate_exercise, forbidden_use,
                      is_tensor, judging, kind, printing, raises, references, source_of, to_data, value_of)
from ._common import close as _close, shape as _shape
from .l10_verse import (PATTERN, RHYMES, check_pattern, check_rhymes, evaluate_pattern,  # noqa: F401
                        evaluate_rhymes, judge_pattern, judge_rhymes, probe_pattern, probe_rhymes)

HEAD_SHARE = 0.8


# ------------------------------------------------------------------------------------ probs
def _probs_cases(seed: int) -> list[tuple[torch.Tensor, float, int | None]]:
    """(logits, temperature, top_k): sizes, temperatures and k drawn from the seed; one case of
    ties at the k-th place; top_k None first (a missing softmax is named before any top-k advice)."""
    d = Draw(seed, "l10.probs")
    V1, V2, V3 = d.sample(range(6, 41), 3)
    t1, t2 = d.sample([0.5, 0.7, 1.5, 2.0, 2.5], 2)
    k = d.int(3, V2 - 2)                                          # k >= 3: "k - 1" and "only the top one" differ
    tied_k = d.int(2, 5)
    tied = 2 * d.randn(V3)
    top = tied.topk(tied_k + 1).indices
    tied[top[tied_k]] = tied[top[tied_k - 1]]                     # the k-th and the (k+1)-th tie
    return [(2 * d.randn(V1), 1.0, None), (2 * d.randn(V2), t1, None), (2 * d.randn(V2), 1.0, k),
            (2 * d.randn(V1), t2, k if k < V1 else 3), (2 * d.randn(V3), t1, 1), (tied, 1.0, tied_k),
            (2 * d.randn(V1), t2, V1)]


def probe_probs(fn, *, seed: int) -> dict:
    results = {"source": source_of(fn), "references": references(fn)}
    for i, (logits, temperature, top_k) in enumerate(_probs_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, logits.clone(), temperature, top_k)
        if "value" not in outcome or outcome["value"] is None:
            break
    return results


def _variants(logits, temperature, top_k):
    """The typical mistakes, as (hint key, what they would return)."""
    V = logits.shape[-1]
    soft = torch.softmax(logits / temperature, -1)
    out = [("l10.hint.no_softmax", logits / temperature), ("l10.hint.no_softmax", torch.log_softmax(logits / temperature, -1)),
           ("l10.hint.temp_multiply", next_token_probs(logits * temperature, 1.0, top_k)),
           ("l10.hint.temp_ignored", next_token_probs(logits, 1.0, top_k)),
           ("l10.hint.temp_wrong", next_token_probs(logits, temperature ** 0.5, top_k))]
    if top_k is not None and top_k < V:
        kth = soft.topk(top_k).values[-1]
        out.append(("l10.hint.not_normalised", torch.where(soft >= kth, soft, 0.0)))
        smallest = soft.topk(top_k, largest=False).values[-1]
        kept = torch.where(soft <= smallest, soft, 0.0)
        out.append(("l10.hint.topk_smallest", kept / kept.sum()))
        if top_k > 1:
            out.append(("l10.hint.topk_kth", next_token_probs(logits, temperature, 1)))
        for k in (top_k - 1, top_k + 1):
            if 1 <= k <= V:
                out.append(("l10.hint.topk_off_by_one", next_token_probs(logits, temperature, k)))
        if top_k == 1:
            out.append(("l10.hint.topk_off_by_one", torch.where(soft > kth, soft, 0.0)))   # nothing kept
        out.append(("l10.hint.topk_ignored", soft))
    return out


def _probs_error(top_k):
    def hint(error: dict):
        message = error["message"]
        if top_k is None and raises(error, "TypeError") and ("NoneType" in message or "not NoneType" in message
                                                             or "'k'" in message or "None" in message):
            return False, "l10.hint.topk_none", {}
        return None
    return hint


@judging
def judge_probs(results: dict, *, seed: int):
    name = forbidden_use(results, {"next_token_probs", "generate"})
    if name:
        raise Verdict(False, "l10.hint.forbidden", name=name)
    for i, (logits, temperature, top_k) in enumerate(_probs_cases(seed)):
        got = value_of(results, f"case{i}", errors=_probs_error(top_k))
        fields = {"temperature": temperature, "top_k": "None" if top_k is None else top_k}
        if not is_tensor(got):
            return False, "l10.hint.not_tensor", {"got": kind(got)}
        if tuple(got.shape) != tuple(logits.shape):
            return False, "l10.hint.probs_shape", {"got": _shape(got), "expected": _shape(logits)}
        got = got.detach().double()
        if not torch.isfinite(got).all() and top_k is None:
            return False, "l10.hint.no_softmax", fields
        want = next_token_probs(logits, temperature, top_k)
        if _close(got, want):
            continue
        kept = got > 0
        if (top_k is not None and int(kept.sum()) == top_k < int((want > 0).sum())
                and not (kept & ~(want > 0)).any()):
            return False, "l10.hint.topk_ties", fields                  # exactly k kept: a tie dropped
        for key, variant in _variants(logits, temperature, top_k):
            if _close(got, variant):
                return False, key, fields
        if (got < 0).any() or not torch.isfinite(got).all() or abs(float(got.sum()) - 1) > 1e-4:
            return False, "l10.hint.no_softmax" if top_k is None else "l10.hint.not_normalised", fields
        return False, "l10.hint.probs_values", fields
    return True, "l10.ok.probs", {}


PROBS = Exercise("l10.probs", "l10.ex.probs", ("my_probs",), probe_probs, judge_probs)


def evaluate_probs(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(logits (V,), temperature, top_k) -> (V,)`` probabilities."""
    return evaluate_exercise(PROBS, (fn,), lang, seed)

check_probs = printing(evaluate_probs)


# ------------------------------------------------------------------------------------- head
def probe_head(model, lang, answer, *, seed: int) -> dict:
    """The answer as plain data. The judge measures the package's own checkpoint of ``lang``
    (not the model handed in: a grader never trusts a model from the student's kernel)."""
    return {"lang": lang if lang in ("vi", "zh") else None,
            "answer": {"not_done": True} if answer is None or answer is Ellipsis else {"value": to_data(answer)}}


@functools.lru_cache(maxsize=2)
def _mass(lang: str) -> tuple[torch.Tensor, float]:
    with torch.random.fork_rng(devices=[]):
        m = heads.attention_mass(load_pretrained(lang), lang)
    return m.mass, m.uniform


@judging
def judge_head(results: dict, *, seed: int):
    lang = results.get("lang")
    if lang not in ("vi", "zh"):
        raise Verdict(False, "ex.no_result")
    answer = value_of(results, "answer")
    if (not isinstance(answer, (tuple, list)) or len(answer) != 2
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in answer)):
        return False, "l10.hint.head_format", {"got": repr(answer) if not isinstance(answer, dict) else kind(answer)}
    layer, head = (int(v) for v in answer)
    mass, uniform = _mass(lang)
    L, H = mass.shape
    need = HEAD_SHARE * float(mass.max())

    def good(l, h):
        return 1 <= l <= L and 1 <= h <= H and float(mass[l - 1, h - 1]) >= need

    if not (1 <= layer <= L and 1 <= head <= H):
        if 0 in (layer, head) and good(layer + 1, head + 1):
            return False, "l10.hint.head_zero_based", {}
        return False, "l10.hint.head_range", {"layers": L, "heads": H, "layer": layer, "head": head}
    value = float(mass[layer - 1, head - 1])
    fields = {"layer": layer, "head": head, "mass": round(value, 3), "uniform": round(uniform, 3)}
    if good(layer, head):
        return True, "l10.ok.head", fields
    if good(layer + 1, head + 1):                 # a strong head, counted from 0
        return False, "l10.hint.head_zero_based", {}
    return False, "l10.hint.head_weak", fields


HEAD = Exercise("l10.head", "l10.ex.head", ("my_head",), probe_head, judge_head, args=("model", "LANG", "my_head"))


def evaluate_head(model, corpus_lang: str, answer, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``answer = (layer, head)``, counted from 1: a head that looks at the previous line's
    punctuation (``heads.BREAK``) in the checkpoint of the corpus ``corpus_lang``."""
    return evaluate_exercise(HEAD, (model, corpus_lang, answer), lang, seed)

check_head = printing(evaluate_head)


# ------------------------------------------------------------------------------------ guess
def evaluate_guess(guess, low: float, high: float, lang: str | None = None) -> Feedback:
    """The predict-then-run question: ``guess`` is True if the student expects the low temperature
    to give more well-formed lines than the high one. ``low``/``high``: the measured fractions."""
    def check():
        if guess is None or guess is Ellipsis:
            raise NotDone
        if not isinstance(guess, bool):
            return False, "l10.hint.guess_format", {"got": repr(guess)}
        fields = {"low": round(100 * low), "high": round(100 * high)}
        right = guess == (low > high)
        return right, "l10.ok.guess" if right else "l10.hint.guess_other", fields
    return evaluate("l10.ex.guess", check, lang)

check_guess = printing(evaluate_guess)

EXERCISES = (PROBS, PATTERN, RHYMES, HEAD)
