"""Exercise checkers for lesson 06 (encoder, decoder, GPT).

- ``check_block_params(fn)``: ``fn(d_model, num_heads, d_ff)`` -> parameters of one TransformerBlock.
- ``check_masks(fn)``: ``fn(src_ids, tgt_ids, pad_id)`` -> (encoder, decoder, cross-attention) masks
  in their full shapes (B, 1, S, S), (B, 1, T, T), (B, 1, T, S).
- ``check_greedy_step(fn)``: ``fn(model, ids, max_len)`` -> ids with one greedily chosen token appended.
"""
from __future__ import annotations

import functools
import numbers

import torch
import torch.nn as nn

from ..block import TransformerBlock
from ..masks import causal_mask, decoder_mask, padding_mask
from ._common import Feedback, Msg, call_student, evaluate, printing, shape


# ============================================================== exercise 1: parameter count

PARAM_CONFIGS = ((64, 8, 256), (512, 8, 2048), (768, 12, 3072), (10, 2, 7), (48, 6, 100))


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
        if value.numel() != 1:
            return None
        value = value.item()
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return int(value)
    return None


def evaluate_block_params(fn, lang: str | None = None) -> Feedback:
    """``fn(d_model, num_heads, d_ff)`` must return the parameter count of TransformerBlock(d_model, num_heads, d_ff)."""
    def check():
        answers = {}
        for cfg in PARAM_CONFIGS:
            raw = call_student(fn, *cfg)
            got = _as_count(raw)
            if got is None:
                return False, "l06.params.not_int", {"kind": type(raw).__name__}
            answers[cfg] = got
        wrong = [cfg for cfg in PARAM_CONFIGS if answers[cfg] != true_block_params(*cfg)]
        if not wrong:
            return True, "l06.params.ok", {"n": len(PARAM_CONFIGS)}
        for key, formula in PARAM_MISTAKES:
            if all(answers[cfg] == formula(*cfg) for cfg in PARAM_CONFIGS):
                return False, key, {}
        d, h, f = wrong[0]
        direction = "l06.too_small" if answers[wrong[0]] < true_block_params(d, h, f) else "l06.too_large"
        return False, "l06.params.off", {"d_model": d, "num_heads": h, "d_ff": f, "direction": Msg(direction)}
    return evaluate("l06.ex.params", check, lang)

check_block_params = printing(evaluate_block_params)


# ============================================================== exercise 2: masks

# (src_ids, tgt_ids, pad_id): T != S, padding on both sides; a case with T > S and no padding;
# a case with pad_id = 1 and token id 0 used as a real token.
MASK_CASES = (
    (torch.tensor([[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]]), torch.tensor([[1, 8, 9, 0], [1, 2, 3, 4]]), 0),
    (torch.tensor([[4, 5, 6]]), torch.tensor([[1, 7, 8, 9, 2, 3]]), 0),
    (torch.tensor([[0, 3, 1, 1], [4, 0, 6, 7]]), torch.tensor([[5, 0, 1], [5, 6, 0]]), 1),
)


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


def _diagnose_mask(name_key, got, want, mistakes, lang):
    """None if ``got`` equals ``want``; else the hint for the first matching mistake (or a generic one)."""
    name = Msg(name_key)
    if not isinstance(got, torch.Tensor):
        return "l06.masks.not_bool", {"name": name, "dtype": type(got).__name__}
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


def evaluate_masks(fn, lang: str | None = None) -> Feedback:
    """``fn(src_ids (B, S), tgt_ids (B, T), pad_id)`` -> (encoder (B,1,S,S), decoder (B,1,T,T), cross (B,1,T,S))."""
    names = ("l06.masks.name.enc", "l06.masks.name.dec", "l06.masks.name.cross")

    def check():
        for src, tgt, pad in MASK_CASES:
            result = call_student(fn, src.clone(), tgt.clone(), pad)
            if not isinstance(result, (tuple, list)) or len(result) != 3:
                return False, "l06.masks.not_three", {}
            wants = reference_masks(src, tgt, pad)
            for name_key, got, want, mistakes in zip(names, result, wants, _mask_mistakes(src, tgt, pad)):
                hint = _diagnose_mask(name_key, got, want, mistakes, lang)
                if hint is not None:
                    return (False, *hint)
        return True, "l06.masks.ok", {}
    return evaluate("l06.ex.masks", check, lang)

check_masks = printing(evaluate_masks)


# ============================================================== exercise 3: greedy step

class ContextTooLong(IndexError):
    """Raised by the checker's toy model when it gets more than max_len tokens."""


class ToyLM(nn.Module):
    """A fixed toy language model for the checker: logits[b, t] = table[ids[b, t]] + pos[t].

    Like TinyGPT it returns (B, T, V) logits and has only ``max_len`` positions.
    """

    def __init__(self, vocab_size: int = 11, max_len: int = 6, seed: int = 6):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("table", torch.randn(vocab_size, vocab_size, generator=g))
        self.register_buffer("pos", torch.randn(max_len, vocab_size, generator=g))
        self.max_len = max_len

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T = ids.shape[1]
        if T > self.max_len:
            raise ContextTooLong(f"sequence of {T} tokens, but the model has only max_len={self.max_len} positions")
        return self.table[ids] + self.pos[:T]                                        # (B, T, V)


# One sequence (B=1 first, so an argmax over the wrong axis shows up as a wrong shape, not a crash),
# a batch of 2 shorter than max_len=6, a batch of 2 longer (must crop), a single-token prompt.
GREEDY_CASES = (
    torch.tensor([[7, 2, 5]]),
    torch.tensor([[3, 1, 4, 1], [5, 9, 2, 6]]),
    torch.tensor([[2, 7, 1, 8, 2, 8, 1, 8, 2], [3, 1, 4, 1, 5, 9, 2, 6, 5]]),
    torch.tensor([[7]]),
)
GREEDY_MAX_LEN = 6


def reference_greedy_step(model, ids, max_len):
    with torch.no_grad():
        logits = model(ids[:, -max_len:])
    return torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)


def evaluate_greedy_step(fn, lang: str | None = None) -> Feedback:
    """``fn(model, ids (B, T), max_len)`` -> (B, T+1): ids plus the argmax of the last position's logits."""
    model = ToyLM(max_len=GREEDY_MAX_LEN)

    def check():
        for ids in GREEDY_CASES:
            B, T = ids.shape
            try:
                got = call_student(fn, model, ids.clone(), GREEDY_MAX_LEN)
            except ContextTooLong:
                return False, "l06.greedy.no_crop", {}
            except RuntimeError as e:       # torch.cat of tensors whose shapes do not fit together
                if "must match" in str(e) or "same number of dimensions" in str(e):
                    return False, "l06.greedy.cat", {}
                raise
            if not isinstance(got, torch.Tensor):
                return False, "l06.greedy.not_tensor", {"kind": type(got).__name__}
            got = got.detach().cpu()
            with torch.no_grad():
                logits = model(ids[:, -GREEDY_MAX_LEN:])
                first = logits[:, 0].argmax(-1)
                front = model(ids[:, :GREEDY_MAX_LEN])[:, -1].argmax(-1)
            want = reference_greedy_step(model, ids, GREEDY_MAX_LEN)
            if got.is_floating_point():
                return False, "l06.greedy.values", {}
            if tuple(got.shape) in ((B, 1), (B,)):
                return False, "l06.greedy.no_append", {}
            if T > GREEDY_MAX_LEN and tuple(got.shape) == (B, GREEDY_MAX_LEN + 1):
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
            if T > GREEDY_MAX_LEN and torch.equal(new, front):
                return False, "l06.greedy.crop_front", {}
            return False, "l06.greedy.wrong", {"shape": shape(ids)}
        return True, "l06.greedy.ok", {}
    return evaluate("l06.ex.greedy", check, lang)

check_greedy_step = printing(evaluate_greedy_step)
