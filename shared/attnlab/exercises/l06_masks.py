"""Lesson 06, exercise 2: the three masks of an encoder–decoder (``l06.check_masks``).

``fn(src_ids (B, S), tgt_ids (B, T), pad_id)`` -> (encoder (B, 1, S, S), decoder self-attention
(B, 1, T, T), cross-attention (B, 1, T, S)), bool, True = may attend. The cases are drawn per run
(T != S with padding on both sides, T > S without padding, a pad_id other than 0 with 0 a real
token); a wrong mask is matched against the typical mistakes, one hint each.
"""
from __future__ import annotations

import torch

from ..masks import causal_mask, decoder_mask, padding_mask
from ._common import (Draw, Exercise, Feedback, Msg, attempt, evaluate_exercise, is_tensor, judging, kind, raises,
                      shape, value_of)


def _stop(outcome: dict) -> bool:
    """The probe stops at the first call that did not return a value (the judge stops there too)."""
    return "value" not in outcome or outcome["value"] is None


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
            return results
    src, tgt, _ = mask_cases(seed)[0]                                 # pad_id = 0: the signature's default
    results["default"] = attempt(fn, src.clone(), tgt.clone())
    return results


def _default_error(error: dict):
    if raises(error, "TypeError") and "pad_id" in error["message"]:
        return False, "l06.masks.default", {}
    return None


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
    src, tgt, pad = mask_cases(seed)[0]
    got = value_of(results, "default", errors=_default_error)
    if not isinstance(got, (tuple, list)) or len(got) != 3 \
            or not all(is_tensor(m) and m.shape == w.shape and torch.equal(m, w) for m, w in zip(got, reference_masks(src, tgt, pad))):
        return False, "l06.masks.default", {}
    return True, "l06.masks.ok", {}


MASKS = Exercise("l06.masks", "l06.ex.masks", ("make_masks",), probe_masks, judge_masks)


def evaluate_masks(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(src_ids (B, S), tgt_ids (B, T), pad_id)`` -> (encoder (B,1,S,S), decoder (B,1,T,T), cross (B,1,T,S))."""
    return evaluate_exercise(MASKS, (fn,), lang, seed)
