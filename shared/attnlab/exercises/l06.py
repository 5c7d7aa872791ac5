"""Exercise checkers for lesson 06 (encoder, decoder, GPT).

- ``check_block_params(fn)``: ``fn(d_model, num_heads, d_ff)`` -> parameters of one TransformerBlock.
- ``check_masks(fn)``: ``fn(src_ids, tgt_ids, pad_id)`` -> (encoder, decoder, cross-attention) masks
  in their full shapes (B, 1, S, S), (B, 1, T, T), (B, 1, T, S).
- ``check_greedy_step(fn)``: ``fn(model, ids, max_len)`` -> ids with one greedily chosen token appended.
"""
from __future__ import annotations

import functools
import math
import numbers

import torch
import torch.nn as nn

from ..block import TransformerBlock
from ..masks import causal_mask, decoder_mask, padding_mask
from ._common import (Draw, Exercise, Feedback, Msg, attempt, evaluate_exercise, is_tensor, judging, kind, number,
                      printing, raises, shape, value_of)


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


# ============================================================== exercise 2: masks

def _ids(d: Draw, B: int, L: int, pad: int, padded: bool, low: int = 1) -> torch.Tensor:
    """(B, L) token ids in [low, 12) other than ``pad``; with ``padded``, row 0 full and every other
    row ending in 1 to L - 1 pads (so the padding sits on the right, the usual case)."""
    ids = d.randint(low, 11, (B, L))
    ids[ids == pad] = 12                                           # a real token, never the pad id
    if low == 0:
        ids[0, 0] = 0                                              # token 0 is a real token here
    if padded:
        for b in range(1, B):
            ids[b, d.int(1, L - 1):] = pad
    return ids


def mask_cases(seed: int) -> list[tuple[torch.Tensor, torch.Tensor, int]]:
    """(src_ids (B, S), tgt_ids (B, T), pad_id), drawn from ``seed``: T != S with padding on both
    sides; one sentence with T > S and no padding; a pad_id other than 0 with 0 a real token."""
    d = Draw(seed, "l06.masks")
    B, B3 = d.int(2, 3), d.int(2, 3)
    S, T = d.sample(range(3, 8), 2)
    S2 = d.int(2, 4)
    T2 = S2 + d.int(1, 3)
    pad = d.int(1, 3)
    S3, T3 = d.int(3, 6), d.int(3, 6)
    return [
        (_ids(d, B, S, 0, True), _ids(d, B, T, 0, True), 0),
        (_ids(d, 1, S2, 0, False), _ids(d, 1, T2, 0, False), 0),
        (_ids(d, B3, S3, pad, True, low=0), _ids(d, B3, T3, pad, True, low=0), pad),
    ]


def reference_masks(src_ids: torch.Tensor, tgt_ids: torch.Tensor, pad_id: int = 0):
    """The three masks in full shape: encoder (B,1,S,S), decoder self (B,1,T,T), cross (B,1,T,S)."""
    B, S = src_ids.shape
    T = tgt_ids.shape[1]
    enc = padding_mask(src_ids, pad_id).expand(B, 1, S, S)
    dec = decoder_mask(tgt_ids, pad_id)
    cross = padding_mask(src_ids, pad_id).expand(B, 1, T, S)
    return enc, dec, cross


def _mask_mistakes(src, tgt, pad):
    """For each of the three masks: (hint key, extra fields, wrong mask) in full shape."""
    B, S = src.shape
    T = tgt.shape[1]
    src_keep, tgt_keep = src != pad, tgt != pad
    src_cols = lambda n: src_keep[:, None, None, :].expand(B, 1, n, S)             # noqa: E731
    tgt_cols = tgt_keep[:, None, None, :].expand(B, 1, T, T)
    src_rows = src_keep[:, None, :, None]
    tgt_rows = tgt_keep[:, None, :, None]
    causal_TT, causal_SS = causal_mask(T)[0, 0], causal_mask(S)[0, 0]
    causal_TS = torch.ones(T, S, dtype=torch.bool).tril()                            # top-left aligned
    causal_TS_br = torch.ones(T, S, dtype=torch.bool).tril(S - T)                    # bottom-right aligned
    all_ss = torch.ones(B, 1, S, S, dtype=torch.bool)
    all_tt = torch.ones(B, 1, T, T, dtype=torch.bool)
    all_ts = torch.ones(B, 1, T, S, dtype=torch.bool)
    upper = torch.ones(T, T, dtype=torch.bool).triu()
    strict = torch.ones(T, T, dtype=torch.bool).tril(-1)
    src0 = src != 0
    tgt0 = tgt != 0
    enc = [
        ("l06.masks.enc_causal", {}, src_cols(S) & causal_SS),
        ("l06.masks.enc_causal", {}, all_ss & causal_SS),
        ("l06.masks.pad_rows", {}, src_rows.expand(B, 1, S, S)),
        ("l06.masks.pad_rows_too", {}, src_rows & src_cols(S)),
        ("l06.masks.no_pad", {"side": "l06.masks.side.src"}, all_ss),
        ("l06.masks.pad_id", {}, src0[:, None, None, :].expand(B, 1, S, S)),
    ]
    dec = [
        ("l06.masks.dec_no_causal", {}, tgt_cols),
        ("l06.masks.no_pad", {"side": "l06.masks.side.tgt"}, all_tt & causal_TT),
        ("l06.masks.dec_upper", {}, tgt_cols & upper),
        ("l06.masks.dec_upper", {}, all_tt & upper),
        ("l06.masks.dec_diag", {}, tgt_cols & strict),
        ("l06.masks.dec_diag", {}, all_tt & strict),
        ("l06.masks.pad_rows", {}, tgt_rows & causal_TT),
        ("l06.masks.pad_rows_too", {}, tgt_rows & tgt_cols & causal_TT),
        ("l06.masks.dec_no_causal", {}, all_tt),
        ("l06.masks.pad_id", {}, causal_TT & tgt0[:, None, None, :]),
    ]
    cross = [
        ("l06.masks.cross_causal", {}, src_cols(T) & causal_TS),
        ("l06.masks.cross_causal", {}, src_cols(T) & causal_TS_br),
        ("l06.masks.cross_causal", {}, all_ts & causal_TS),
        ("l06.masks.cross_causal", {}, all_ts & causal_TS_br),
        ("l06.masks.cross_tgt_pad", {}, tgt_rows.expand(B, 1, T, S)),
        ("l06.masks.no_pad", {"side": "l06.masks.side.src"}, all_ts),
        ("l06.masks.pad_id", {}, src0[:, None, None, :].expand(B, 1, T, S)),
    ]
    return enc, dec, cross


def _diagnose_mask(name_key, got, want, mistakes):
    """None if ``got`` equals ``want``; else the hint for the first matching mistake (or a generic one)."""
    name = Msg(name_key)
    if not is_tensor(got):
        return "l06.masks.not_bool", {"name": name, "dtype": kind(got)}
    if got.dtype != torch.bool:
        return "l06.masks.not_bool", {"name": name, "dtype": str(got.dtype).replace("torch.", "")}
    B, _, rows, cols = want.shape
    if tuple(got.shape) != tuple(want.shape):
        got_s = shape(got)
        want_s = {"l06.masks.name.enc": "(B, 1, S, S)", "l06.masks.name.dec": "(B, 1, T, T)",
                  "l06.masks.name.cross": "(B, 1, T, S)"}[name_key]
        if name_key == "l06.masks.name.cross" and rows != cols and tuple(got.shape) == (B, 1, cols, rows):
            return "l06.masks.cross_shape", {"name": name}
        try:
            broadcasts = torch.broadcast_shapes(got.shape, want.shape) == want.shape
        except RuntimeError:
            broadcasts = False
        if broadcasts and got.dim() <= 4:
            return "l06.masks.expand", {"name": name, "got": got_s, "want": want_s}
        return "l06.masks.shape", {"name": name, "got": got_s, "want": want_s}
    got = got.cpu()
    if torch.equal(got, want):
        return None
    if torch.equal(got, ~want):
        return "l06.masks.inverted", {"name": name}
    for key, fields, wrong in mistakes:
        if wrong is not None and wrong.shape == want.shape and torch.equal(got, wrong) \
                and not torch.equal(wrong, want):
            return key, {"name": name, **{k: Msg(v) for k, v in fields.items()}}
    return "l06.masks.wrong", {"name": name}


MASK_NAMES = ("l06.masks.name.enc", "l06.masks.name.dec", "l06.masks.name.cross")


def probe_masks(fn, *, seed: int) -> dict:
    """The student's three masks for each case drawn from ``seed``."""
    results = {}
    for i, (src, tgt, pad) in enumerate(mask_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, src.clone(), tgt.clone(), pad)
        if _stop(outcome):
            break
    return results


@judging
def judge_masks(results: dict, *, seed: int):
    for i, (src, tgt, pad) in enumerate(mask_cases(seed)):
        got = value_of(results, f"case{i}")
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            return False, "l06.masks.not_three", {}
        wants = reference_masks(src, tgt, pad)
        for name_key, mine, want, mistakes in zip(MASK_NAMES, got, wants, _mask_mistakes(src, tgt, pad)):
            hint = _diagnose_mask(name_key, mine, want, mistakes)
            if hint is not None:
                return (False, *hint)
    return True, "l06.masks.ok", {}


MASKS = Exercise("l06.masks", "l06.ex.masks", ("make_masks",), probe_masks, judge_masks)


def evaluate_masks(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(src_ids (B, S), tgt_ids (B, T), pad_id)`` -> (encoder (B,1,S,S), decoder (B,1,T,T), cross (B,1,T,S))."""
    return evaluate_exercise(MASKS, (fn,), lang, seed)

check_masks = printing(evaluate_masks)


# ============================================================== exercise 3: greedy step

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

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T = ids.shape[1]
        self.seen.append(int(T))
        if T > self.max_len:
            raise ContextTooLong(f"sequence of {T} tokens, but the model has only max_len={self.max_len} positions")
        return self.table[ids] + self.pos[:T]                                        # (B, T, V)


def greedy_setup(seed: int) -> tuple[ToyLM, list[torch.Tensor]]:
    """The toy model and the id batches, drawn from ``seed``: max_len never the lesson's 16 nor a
    fixed number; one sequence first (B = 1, so an argmax over the wrong axis shows as a wrong shape,
    not a crash), a batch shorter than max_len, two batches longer (they must be cropped; the second
    more than twice max_len, so a crop to a fixed length shows), a single token.
    Each batch is drawn again until every row tells the mistakes apart: the first position's argmax
    and the first max_len tokens' argmax both differ from the right token."""
    d = Draw(seed, "l06.greedy_step")
    V, m = d.int(9, 15), d.choice((4, 5, 7, 8, 9))
    model = ToyLM(V, m, seed=d.int(0, 10 ** 6))
    B = d.int(2, 3)
    batches = []
    for size in [(1, d.int(2, m - 1)), (B, m - 1), (B, m + d.int(2, 4)), (1, 1), (B, 2 * m + 1)]:
        for _ in range(200):
            ids = d.randint(0, V - 1, size)
            with torch.no_grad():
                want = model(ids[:, -m:])[:, -1].argmax(-1)
                first = model(ids[:, -m:])[:, 0].argmax(-1)
                front = model(ids[:, :m])[:, -1].argmax(-1)
            if size[1] == 1 or (bool((first != want).all()) and (size[1] <= m or bool((front != want).all()))):
                break
        batches.append(ids)
    model.seen = []
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
        model.seen = []
        results[f"case{i}"] = attempt(fn, model, ids.clone(), m)
        results[f"seen{i}"] = list(model.seen)
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

check_greedy_step = printing(evaluate_greedy_step)

EXERCISES = (PARAMS, MASKS, GREEDY)
