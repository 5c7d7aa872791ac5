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
from ._common import Diagnosis, Feedback, Msg, evaluate, printing, shape
from ._trial import attempt, failed, fresh_seed, generator, items, kind, pick, replay, tensor


# ============================================================== exercise 1: parameter count

N_CONFIGS = 5


def param_configs(seed: int) -> list[tuple[int, int, int]]:
    """Five (d_model, num_heads, d_ff), drawn from ``seed``: heads 2-12 (never 1, where a count per
    head is the same), d_k odd and even, d_ff never 4 * d_model (where assuming it is harmless)."""
    g = generator(seed, 61)
    configs = [(512, 8, 2048)]                               # the paper's base model: one familiar figure
    while len(configs) < N_CONFIGS:
        h, d_k = pick(g, range(2, 13)), pick(g, range(3, 97))
        d = h * d_k
        f = pick(g, range(d // 2 + 1, 6 * d))
        if f != 4 * d and (d, h, f) not in configs:
            configs.append((d, h, f))
    order = torch.randperm(N_CONFIGS, generator=g).tolist()
    return [configs[i] for i in order]


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
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_complex():
            return None
        value = value.item()
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def probe_block_params(fn, *, seed: int) -> dict:
    """The student's count for each configuration drawn from ``seed``."""
    answers = []
    for cfg in param_configs(seed):
        answers.append(attempt(fn, *cfg))
        if failed(answers[-1]):
            break
    return {"answers": answers}


def judge_block_params(results: dict, *, seed: int) -> Diagnosis:
    configs = param_configs(seed)
    raw = results.get("answers") if isinstance(results, dict) else None
    if not isinstance(raw, list) or not raw:
        return False, "l06.params.not_int", {"kind": kind(raw)}
    answers = {}
    for cfg, entry in zip(configs, raw):
        replay(entry)
        got = _as_count(entry)
        if got is None:
            return False, "l06.params.not_int", {"kind": kind(entry)}
        answers[cfg] = got
    if len(answers) < len(configs):
        return False, "l06.params.not_int", {"kind": "NoneType"}
    wrong = [cfg for cfg in configs if answers[cfg] != true_block_params(*cfg)]
    if not wrong:
        return True, "l06.params.ok", {"n": len(configs)}
    for key, formula in PARAM_MISTAKES:
        if all(answers[cfg] == formula(*cfg) for cfg in configs):
            return False, key, {}
    d, h, f = wrong[0]
    direction = "l06.too_small" if answers[wrong[0]] < true_block_params(d, h, f) else "l06.too_large"
    return False, "l06.params.off", {"d_model": d, "num_heads": h, "d_ff": f, "direction": Msg(direction)}


def evaluate_block_params(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(d_model, num_heads, d_ff)`` must return the parameter count of TransformerBlock(d_model, num_heads, d_ff)."""
    s = fresh_seed(seed)
    return evaluate("l06.ex.params", lambda: judge_block_params(probe_block_params(fn, seed=s), seed=s), lang)

check_block_params = printing(evaluate_block_params)


# ============================================================== exercise 2: masks

def _ids(g: torch.Generator, B: int, L: int, pad: int, padded: bool, low: int = 1) -> torch.Tensor:
    """(B, L) token ids in [low, 12) other than ``pad``; with ``padded``, row 0 full and every other
    row ending in 1 to L - 1 pads (so the padding sits on the right, the usual case)."""
    ids = torch.randint(low, 12, (B, L), generator=g)
    ids[ids == pad] = 12                                           # a real token, never the pad id
    if low == 0:
        ids[0, 0] = 0                                              # token 0 is a real token here
    if padded:
        for b in range(1, B):
            keep = int(torch.randint(1, L, (1,), generator=g))
            ids[b, keep:] = pad
    return ids


def mask_cases(seed: int) -> list[tuple[torch.Tensor, torch.Tensor, int]]:
    """(src_ids (B, S), tgt_ids (B, T), pad_id), drawn from ``seed``: T != S with padding on both
    sides; one sentence with T > S and no padding; a pad_id other than 0 with 0 a real token."""
    g = generator(seed, 62)
    B = pick(g, (2, 3))
    S = pick(g, range(3, 8))
    T = pick(g, [n for n in range(3, 8) if n != S])
    S2 = pick(g, range(2, 5))
    T2 = S2 + pick(g, range(1, 4))
    pad = pick(g, (1, 2, 3))
    B3 = pick(g, (2, 3))
    S3, T3 = pick(g, range(3, 7)), pick(g, range(3, 7))
    return [
        (_ids(g, B, S, 0, True), _ids(g, B, T, 0, True), 0),
        (_ids(g, 1, S2, 0, False), _ids(g, 1, T2, 0, False), 0),
        (_ids(g, B3, S3, pad, True, low=0), _ids(g, B3, T3, pad, True, low=0), pad),
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
    if not isinstance(got, torch.Tensor):
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
    cases = []
    for src, tgt, pad in mask_cases(seed):
        cases.append(attempt(fn, src.clone(), tgt.clone(), pad))
        if failed(cases[-1]):
            break
    return {"cases": cases}


def judge_masks(results: dict, *, seed: int) -> Diagnosis:
    cases = results.get("cases") if isinstance(results, dict) else None
    if not isinstance(cases, list) or not cases:
        return False, "l06.masks.not_three", {}
    for (src, tgt, pad), entry in zip(mask_cases(seed), cases):
        replay(entry)
        got = items(entry)
        if got is None or len(got) != 3:
            return False, "l06.masks.not_three", {}
        wants = reference_masks(src, tgt, pad)
        for name_key, mine, want, mistakes in zip(MASK_NAMES, got, wants, _mask_mistakes(src, tgt, pad)):
            hint = _diagnose_mask(name_key, mine, want, mistakes)
            if hint is not None:
                return (False, *hint)
    if len(cases) < len(mask_cases(seed)):
        return False, "l06.masks.not_three", {}
    return True, "l06.masks.ok", {}


def evaluate_masks(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(src_ids (B, S), tgt_ids (B, T), pad_id)`` -> (encoder (B,1,S,S), decoder (B,1,T,T), cross (B,1,T,S))."""
    s = fresh_seed(seed)
    return evaluate("l06.ex.masks", lambda: judge_masks(probe_masks(fn, seed=s), seed=s), lang)

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
    g = generator(seed, 63)
    V, m = pick(g, range(9, 16)), pick(g, (4, 5, 7, 8, 9))
    model = ToyLM(V, m, seed=int(torch.randint(10 ** 6, (1,), generator=g)))
    B = pick(g, (2, 3))
    batches = []
    sizes = [(1, pick(g, range(2, m))), (B, m - 1), (B, m + pick(g, range(2, 5))), (1, 1), (B, 2 * m + 1)]
    for size in sizes:
        for _ in range(200):
            ids = torch.randint(V, size, generator=g)
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
    cases = []
    for ids in batches:                          # every batch, even after an error: the crops tell apart
        model.seen = []
        cases.append({"out": attempt(fn, model, ids.clone(), m), "seen": list(model.seen)})
    return {"cases": cases}


def _seen(case) -> list[int]:
    seen = case.get("seen") if isinstance(case, dict) else None
    return [int(n) for n in seen if isinstance(n, int) and not isinstance(n, bool)] if isinstance(seen, list) else []


def judge_greedy_step(results: dict, *, seed: int) -> Diagnosis:
    model, batches = greedy_setup(seed)
    m = model.max_len
    cases = results.get("cases") if isinstance(results, dict) else None
    if not isinstance(cases, list) or not cases:
        return False, "l06.greedy.not_tensor", {"kind": kind(cases)}
    pairs = [(ids, case if isinstance(case, dict) else {}) for ids, case in zip(batches, cases)]
    for ids, case in pairs:                       # a crop of the wrong length, in any batch, comes first
        T, seen = ids.shape[1], _seen(case)
        if seen and min(T, m) not in seen and seen[-1] != T:
            return False, "l06.greedy.crop_length", {"got": seen[-1], "need": min(T, m), "T": T, "max_len": m}
    for ids, case in pairs:
        B, T = ids.shape
        got = case.get("out")
        if failed(got):
            error = got["error"]
            if error.get("type") == "ContextTooLong":
                return False, "l06.greedy.no_crop", {}
            if error.get("type") == "RuntimeError" and any(
                    w in str(error.get("message")) for w in ("must match", "same number of dimensions")):
                return False, "l06.greedy.cat", {}
            replay(got)
        got = tensor(got)
        if got is None:
            return False, "l06.greedy.not_tensor", {"kind": kind(case.get("out"))}
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
    if len(cases) < len(batches):
        return False, "l06.greedy.not_tensor", {"kind": "NoneType"}
    return True, "l06.greedy.ok", {}


def evaluate_greedy_step(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(model, ids (B, T), max_len)`` -> (B, T+1): ids plus the argmax of the last position's logits."""
    s = fresh_seed(seed)
    return evaluate("l06.ex.greedy", lambda: judge_greedy_step(probe_greedy_step(fn, seed=s), seed=s), lang)

check_greedy_step = printing(evaluate_greedy_step)
