"""Capstone exercise 1: multi-head attention from scratch (``capstone.check_multihead(cls)``).

``cls(d_model, num_heads)`` with ``nn.Linear`` submodules ``q_proj, k_proj, v_proj, out_proj``;
``forward(query, key=None, value=None, mask=None)`` returns ``(out (B, T, D), weights (B, H, T, S))``.

The probe builds the student's class at two sizes drawn from the seed (numbers of heads and d_k
never the lesson's 3 and 4, and different from each other), copies attnlab's weights into it and
records its answers on self- and cross-attention (distinct key and value, S != T, B != T; padding
and causal masks). The judge rebuilds attnlab's layer from the seed and compares; a wrong answer is
matched against the typical mistakes: those that change the attention weights are recognised on the
weights, those that change only the output on the output; a scale other than √d_k is measured.
The helpers that copy weights into a student's module are in capstone_weights.
"""
from __future__ import annotations

import math

import torch

from ..masks import causal_mask
from ..multihead import MultiHeadAttention
from ._common import Draw, Exercise, Feedback, attempt, call_student, evaluate_exercise, is_tensor, judging, raises, seeded
from ._common import max_diff, value_of
from .capstone_weights import _close, build, built, load, mismatched, state_shapes  # noqa: F401

MHA_NAMES = ("q_proj", "k_proj", "v_proj", "out_proj")


# ------------------------------------------------------------------------ sizes and cases
def mha_configs(seed: int) -> list[tuple[int, int, int, int, int]]:
    """Two (B, T, S, heads, d_k): heads and d_k never the lesson's 3 and 4, different from each other
    (odd and even), B != T, S != T; heads != d_k and d_model = heads * d_k never 4 or 16, so that √d_model
    is neither d_k nor a number of the lesson (2, 4): a measured divisor names one mistake only."""
    d = Draw(seed, "capstone.multihead")
    while True:
        heads, d_ks = d.sample((2, 4, 5, 6), 2), d.sample((2, 3, 5, 6, 7), 2)
        if all(H != d_k and H * d_k not in (4, 16) for H, d_k in zip(heads, d_ks)):
            break
    configs = []
    for H, d_k in zip(heads, d_ks):
        B, T = d.int(2, 3), d.int(4, 7)
        configs.append((B, T, T + d.int(1, 3), H, d_k))
    return configs


def reference_mha(seed: int, i: int, d_model: int, num_heads: int) -> MultiHeadAttention:
    with seeded(seed * 7 + i):
        return MultiHeadAttention(d_model, num_heads).eval()


def mha_cases(seed: int, i: int):
    """(query, key, value, mask) for config ``i``: self-attention with and without masks, then
    cross-attention where key is given and value defaults to it (S = T, so a wrong default still runs),
    and where key and value are different tensors with S != T, with and without a padding mask."""
    B, T, S, H, d_k = mha_configs(seed)[i]
    D = H * d_k
    d = Draw(seed, f"capstone.multihead/{i}")
    x, memory_t, memory, values = d.randn(B, T, D), d.randn(B, T, D), d.randn(B, S, D), d.randn(B, S, D)
    pad = torch.ones(B, 1, 1, T, dtype=torch.bool)
    pad[1:, ..., d.int(2, T - 1):] = False                                 # (B, 1, 1, T): rows 1.. padded
    pad_s = torch.ones(B, 1, 1, S, dtype=torch.bool)
    pad_s[1:, ..., d.int(2, S - 1):] = False
    return [(x, None, None, None), (x, None, None, pad), (x, None, None, causal_mask(T)),
            (x, memory_t, None, None), (x, memory, values, None), (x, memory, values, pad_s)]


# ------------------------------------------------------------------------ the typical mistakes
def mha_variant(ref, query, key, value, mask, *, scale=True, split_t=True, merge_t=True, mask_mode="ok",
                softmax_dim=-1, kv_from_query=False, value_from="value", value_default="key", out_proj=True):
    """attnlab's computation with one typical mistake switched on: (out (B, T, D), weights)."""
    given_key = key
    key = query if key is None or kv_from_query else key
    if kv_from_query:
        value = query
    elif value is None:
        value = query if value_default == "query" else key
    if value_from == "key":                                               # v_proj(key): value ignored
        value = key if given_key is not None else query
    B, T, D = query.shape
    S, H = key.shape[1], ref.num_heads
    d_k = D // H

    def split(x, L):
        return x.view(B, L, H, d_k).transpose(1, 2) if split_t else x.view(B, H, L, d_k)   # (B, H, L, d_k)

    q, k, v = split(ref.q_proj(query), T), split(ref.k_proj(key), S), split(ref.v_proj(value), S)
    scores = q @ k.transpose(-2, -1)                                      # (B, H, T, S)
    if scale:
        scores = scores / math.sqrt(D if scale == "d_model" else d_k)
    if mask is not None and mask_mode in ("ok", "inverted", "zero"):
        keep = ~mask if mask_mode == "inverted" else mask
        scores = scores.masked_fill(~keep, 0.0 if mask_mode == "zero" else float("-inf"))
    w = torch.softmax(scores, dim=softmax_dim)
    if mask is not None and mask_mode == "after_softmax":
        w = w.masked_fill(~mask, 0.0)
    if mask_mode == "scores":                                             # the scores returned as weights
        w = scores if mask is None else scores.masked_fill(~mask, float("-inf"))
    out = w @ v                                                           # (B, H, T, d_k)
    out = out.transpose(1, 2).reshape(B, T, D) if merge_t else out.reshape(B, T, D)
    return (ref.out_proj(out) if out_proj else out), w


# (hint, the mistake): weights-changing mistakes first (recognised on the weights), then the ones
# that change only the output (recognised on the output).
MHA_MISTAKES = (
    ("capstone.hint.split_heads", {"split_t": False}),
    ("capstone.hint.split_heads", {"split_t": False, "merge_t": False}),
    ("capstone.hint.mask_inverted", {"mask_mode": "inverted"}),
    ("capstone.hint.mask_zero", {"mask_mode": "zero"}),
    ("capstone.hint.mask_ignored", {"mask_mode": "ignored"}),
    ("capstone.hint.mask_after_softmax", {"mask_mode": "after_softmax"}),
    ("capstone.hint.weights_scores", {"mask_mode": "scores"}),
    ("capstone.hint.weights_scores", {"mask_mode": "scores", "scale": False}),
    ("capstone.hint.softmax_dim", {"softmax_dim": -2}),
    ("capstone.hint.kv_from_query", {"kv_from_query": True}),
    ("capstone.hint.merge_heads", {"merge_t": False}),
    ("capstone.hint.no_out_proj", {"out_proj": False}),
    ("capstone.hint.value_ignored", {"value_from": "key"}),
    ("capstone.hint.value_default", {"value_default": "query"}),
)


def scale_divisor(ref, query, key, mask, w) -> float | None:
    """The number the student's scores were divided by, if their weights are softmax(QKᵀ / c) for
    one c (measured on the weights, then checked); None otherwise."""
    key = query if key is None else key
    B, T, D = query.shape
    S, H = key.shape[1], ref.num_heads
    raw = (ref.q_proj(query).view(B, T, H, D // H).transpose(1, 2)
           @ ref.k_proj(key).view(B, S, H, D // H).transpose(1, 2).transpose(-2, -1)).double()
    w = w.double()
    keep = torch.ones_like(raw, dtype=torch.bool) if mask is None else mask.expand_as(raw)
    usable = keep & (w > 1e-12)
    if usable.sum() < 2:
        return None
    logw = torch.where(usable, w.clamp_min(1e-300).log(), torch.zeros_like(w))
    n = usable.sum(-1, keepdim=True).clamp_min(1)
    dl = torch.where(usable, logw - logw.sum(-1, keepdim=True) / n, torch.zeros_like(w))
    ds = torch.where(usable, raw - (raw * usable).sum(-1, keepdim=True) / n, torch.zeros_like(w))
    if float((ds * ds).sum()) == 0.0:
        return None
    c = float((dl * ds).sum() / (ds * ds).sum())
    if not math.isfinite(c) or c <= 0:
        return None
    scores = raw * c
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return 1 / c if _close(torch.softmax(scores, dim=-1), w, 1e-4) else None


def sizes_fixed(ref):
    """The hint for a class that works at one size only (a number of heads or a d_k written as a number)."""
    return False, "capstone.hint.sizes_fixed", {"d_model": ref.d_model, "heads": ref.num_heads,
                                                "d_k": ref.d_model // ref.num_heads}


def mha_mistake(ref, case, out, w):
    """The hint of the typical mistake the answer (out, w) matches, or None."""
    query, key, value, mask = case
    ref_out, ref_w = ref(query, key, value, mask)
    if w.dim() == 4 and w.shape[0] == ref_w.shape[0] and w.shape[1] != ref_w.shape[1] and w.shape[2:] == ref_w.shape[2:]:
        return sizes_fixed(ref)
    if w.shape == ref_w.shape and not _close(w, ref_w):
        divisor = scale_divisor(ref, query, key, mask, w)
        if divisor is not None:
            d_k = ref.d_model // ref.num_heads
            if abs(divisor - 1.0) < 1e-3:
                return False, "capstone.hint.no_scale", {}
            if abs(divisor - math.sqrt(ref.d_model)) < 1e-3:
                return False, "capstone.hint.scale_d_model", {}
            return False, "capstone.hint.scale_fixed", {"divisor": divisor, "sqrt_dk": math.sqrt(d_k), "d_k": d_k,
                                                        "d_model": ref.d_model, "heads": ref.num_heads}
    for hint, flags in MHA_MISTAKES:
        try:
            v_out, v_w = mha_variant(ref, query, key, value, mask, **flags)
        except RuntimeError:                  # a mistake that cannot run on this case (kv_from_query with S != T)
            continue
        changes_weights = not _close(v_w, ref_w)
        if changes_weights and _close(w, v_w):
            return False, hint, {}
        if not changes_weights and not _close(v_out, ref_out) and _close(w, ref_w) and _close(out, v_out):
            return False, hint, {}
    return None


# ------------------------------------------------------------------------ probe and judge
def probe_multihead(cls, *, seed: int) -> dict:
    """The student's class at each size drawn from ``seed``, with attnlab's weights, on every case."""
    results: dict = {}
    for i, (B, T, S, H, d_k) in enumerate(mha_configs(seed)):
        student, failure = build(cls, H * d_k, H)
        if failure is not None:
            results["build"] = failure
            return results
        results[f"names{i}"] = names = attempt(state_shapes, student)
        if "value" not in names:
            return results
        load(student, reference_mha(seed, i, H * d_k, H).state_dict())
        call_student(student.eval)
        with torch.no_grad():
            for j, (query, key, value, mask) in enumerate(mha_cases(seed, i)):
                results[f"c{i}.{j}"] = outcome = attempt(
                    student, query.clone(), None if key is None else key.clone(),
                    None if value is None else value.clone(), mask)
                if "value" not in outcome or outcome["value"] is None:
                    return results
    return results


def _size_error(ref, case):
    """view/reshape failing: on cross-attention with S != T, the query's T used for the keys; on
    self-attention, a size written as a number."""
    query, key, _, _ = case

    def hint(error):
        if not (raises(error, "RuntimeError") and "invalid for input of size" in error["message"]):
            return None
        if key is not None and key.shape[1] != query.shape[1]:
            return False, "capstone.hint.cross_sizes", {}
        return sizes_fixed(ref)
    return hint


@judging
def judge_multihead(results: dict, *, seed: int):
    built(results)
    for i, (B, T, S, H, d_k) in enumerate(mha_configs(seed)):
        ref = reference_mha(seed, i, H * d_k, H)
        if mismatched(value_of(results, f"names{i}"), ref.state_dict()):
            return False, "capstone.hint.names", {"names": ", ".join(MHA_NAMES)}
        with torch.no_grad():
            for j, case in enumerate(mha_cases(seed, i)):
                got = value_of(results, f"c{i}.{j}", errors=_size_error(ref, case))
                if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(map(is_tensor, got))):
                    return False, "capstone.hint.return_pair", {}
                out, w = got
                ref_out, ref_w = ref(*case)
                if _close(out, ref_out) and _close(w, ref_w):
                    continue
                if _close(out, ref_w) and _close(w, ref_out):
                    return False, "capstone.hint.return_order", {}
                mistake = mha_mistake(ref, case, out, w)
                if mistake:
                    return mistake
                if out.shape != ref_out.shape or w.shape != ref_w.shape:
                    return False, "capstone.hint.shapes", {"out": tuple(out.shape), "w": tuple(w.shape),
                                                           "want_out": tuple(ref_out.shape),
                                                           "want_w": tuple(ref_w.shape)}
                if _close(out, ref_out):                 # the output is right: only the weights differ
                    return False, "capstone.hint.weights_mismatch", {"diff": max_diff(w, ref_w)}
                return False, "capstone.hint.mha_mismatch", {"diff": max_diff(out, ref_out)}
    return True, "capstone.ok.multihead", {}


MULTIHEAD = Exercise("capstone.multihead", "capstone.ex.multihead", ("MultiHeadAttention",),
                     probe_multihead, judge_multihead)


def evaluate_multihead(cls, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Capstone 1: ``cls(d_model, num_heads)``, multi-head attention from scratch."""
    return evaluate_exercise(MULTIHEAD, (cls,), lang, seed)
