"""Exercise checkers for lesson 06 (encoder, decoder, GPT).

- ``check_block_params(fn)``: ``fn(d_model, num_heads, d_ff)`` -> parameters of one TransformerBlock
  (here, on five configurations drawn per run).
- ``check_masks(fn)``: ``fn(src_ids, tgt_ids, pad_id)`` -> (encoder, decoder, cross-attention) masks
  in their full shapes (B, 1, S, S), (B, 1, T, T), (B, 1, T, S) (``l06_masks``).
- ``check_greedy_step(fn)``: ``fn(model, ids, max_len)`` -> ids with one greedily chosen token appended
  (``l06_greedy``).

Each is a probe and a judge (``probe_x`` / ``judge_x``); this module keeps the names the lesson calls.
"""
from __future__ import annotations

import functools
import math
import numbers

import torch

from ..block import TransformerBlock
from ._common import Draw, Exercise, Feedback, Msg, attempt, evaluate_exercise, judging, kind, number, printing, value_of
from .l06_greedy import (GREEDY, ContextTooLong, ToyLM, evaluate_greedy_step, greedy_setup,  # noqa: F401
                         judge_greedy_step, probe_greedy_step, reference_greedy_step)
from .l06_masks import MASKS, evaluate_masks, judge_masks, mask_cases, probe_masks, reference_masks  # noqa: F401


# ============================================================== exercise 1: parameter count

N_CONFIGS = 5


def param_configs(seed: int) -> list[tuple[int, int, int]]:
    """Five (d_model, num_heads, d_ff), drawn from ``seed``: heads 2-12 (never 1, where a count per
    head is the same), d_k odd and even, d_ff never 4 * d_model (where assuming it is harmless)."""
    d = Draw(seed, "l06.block_params")
    configs = [(512, 8, 2048)]                               # the paper's base model: one familiar figure
    while len(configs) < N_CONFIGS:
        h, d_k = d.int(2, 12), d.int(3, 96)
        f = d.int(h * d_k // 2 + 1, 6 * h * d_k)
        if f != 4 * h * d_k and (h * d_k, h, f) not in configs:
            configs.append((h * d_k, h, f))
    return [configs[i] for i in d.perm(N_CONFIGS)]


@functools.lru_cache(maxsize=None)
def true_block_params(d_model: int, num_heads: int, d_ff: int) -> int:
    """Parameters of attnlab.TransformerBlock, counted on the meta device (no memory used)."""
    with torch.device("meta"):
        block = TransformerBlock(d_model, num_heads, d_ff)
    return sum(p.numel() for p in block.parameters())


def _lin(n_in: int, n_out: int, bias: bool = True) -> int:
    return n_in * n_out + (n_out if bias else 0)


# Typical wrong formulas -> hint key. A student's function that agrees with one of them on every
# configuration gets that hint. (d, h, f) = (d_model, num_heads, d_ff).
PARAM_MISTAKES = (
    ("l06.params.no_bias_no_norm", lambda d, h, f: 4 * d * d + 2 * d * f),
    ("l06.params.no_bias", lambda d, h, f: 4 * d * d + 2 * d * f + 4 * d),
    ("l06.params.no_norm", lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + _lin(f, d)),
    ("l06.params.norm_half", lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + _lin(f, d) + 2 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + _lin(d, 4 * d) + _lin(4 * d, d) + 4 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + 4 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + 2 * _lin(d, f) + 4 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + 2 * d * f + 2 * d + 4 * d),
    ("l06.params.per_head", lambda d, h, f: 4 * h * _lin(d, d) + _lin(d, f) + _lin(f, d) + 4 * d),
    ("l06.params.per_head", lambda d, h, f: 4 * h * d * d + 4 * d + _lin(d, f) + _lin(f, d) + 4 * d),
    ("l06.params.proj", lambda d, h, f: 3 * _lin(d, d) + _lin(d, f) + _lin(f, d) + 4 * d),
)


def _as_count(value):
    """An int from an int, an integral float or a one-element tensor; None otherwise."""
    value = number(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def _stop(outcome: dict) -> bool:
    """The probe stops at the first call that did not return a value (the judge stops there too)."""
    return "value" not in outcome or outcome["value"] is None


def probe_block_params(fn, *, seed: int) -> dict:
    """The student's count for each configuration drawn from ``seed``."""
    results = {}
    for i, cfg in enumerate(param_configs(seed)):
        results[f"case{i}"] = outcome = attempt(fn, *cfg)
        if _stop(outcome):
            break
    return results


@judging
def judge_block_params(results: dict, *, seed: int):
    configs = param_configs(seed)
    answers = {}
    for i, cfg in enumerate(configs):
        got = value_of(results, f"case{i}")
        answers[cfg] = _as_count(got)
        if answers[cfg] is None:
            return False, "l06.params.not_int", {"kind": kind(got)}
    wrong = [cfg for cfg in configs if answers[cfg] != true_block_params(*cfg)]
    if not wrong:
        return True, "l06.params.ok", {"n": len(configs)}
    for key, formula in PARAM_MISTAKES:
        if all(answers[cfg] == formula(*cfg) for cfg in configs):
            return False, key, {}
    d, h, f = wrong[0]
    direction = "l06.too_small" if answers[wrong[0]] < true_block_params(d, h, f) else "l06.too_large"
    return False, "l06.params.off", {"d_model": d, "num_heads": h, "d_ff": f, "direction": Msg(direction)}


PARAMS = Exercise("l06.block_params", "l06.ex.params", ("block_params",), probe_block_params, judge_block_params)


def evaluate_block_params(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(d_model, num_heads, d_ff)`` must return the parameter count of TransformerBlock(d_model, num_heads, d_ff)."""
    return evaluate_exercise(PARAMS, (fn,), lang, seed)

check_block_params = printing(evaluate_block_params)

check_masks = printing(evaluate_masks)
check_greedy_step = printing(evaluate_greedy_step)

EXERCISES = (PARAMS, MASKS, GREEDY)
