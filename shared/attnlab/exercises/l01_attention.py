"""Lesson 01, exercise 2 (scaled dot-product attention): which typical mistake gives the weights and
the output a student's ``my_attention`` returned (the judge's side of ``l01.check_attention``).

A mistake in the scores or the softmax changes the weights, so it is matched on the weights: no
scaling, ÷ d_k, the softmax over the queries, ÷ √ of another size (which one: the tensor and the
index the student wrote), a transposed Q, K Qᵀ, or a fixed number. Where two of them give the same
weights on one case (÷ 2 is ÷ √T when T = 4), the other cases decide.
"""
from __future__ import annotations

import math

import torch

from ..attention import scaled_dot_product_attention
from ._common import Msg, is_tensor
from ._common import close as _close, max_diff as _max_diff, shape as _shape


def _attend(scores: torch.Tensor, v: torch.Tensor, dim: int = -1):
    w = torch.softmax(scores, dim=dim)
    return w @ v, w


def _attention_variants(q, k, v) -> list[tuple[str, object, tuple[torch.Tensor, torch.Tensor]]]:
    """(hint key, what exactly, (out, weights)) for each typical mistake that runs on these shapes.
    "What exactly" tells two mistakes with one hint apart across cases: for a division by the
    square root of another size, which size (the tensor and the index the student wrote)."""
    d_k = q.shape[-1]
    raw = q @ k.transpose(-2, -1)
    variants = [
        ("l01.attn.no_scale", None, _attend(raw, v)),
        ("l01.attn.scale_dk", None, _attend(raw / d_k, v)),
        ("l01.attn.softmax_dim", None, _attend(raw / math.sqrt(d_k), v, dim=-2)),
    ]
    for name, t in (("q", q), ("k", k), ("v", v)):
        for dim in range(-t.dim(), t.dim()):
            if t.shape[dim] != d_k:
                variants.append(("l01.attn.which_dk", (name, dim), _attend(raw / math.sqrt(t.shape[dim]), v)))
    for key, scores in (("l01.attn.transpose_q", lambda: q.transpose(-2, -1) @ k),
                        ("l01.attn.order", lambda: k @ q.transpose(-2, -1))):
        try:
            variants.append((key, None, _attend(scores() / math.sqrt(d_k), v)))
        except RuntimeError:                                       # shapes do not fit: it would have raised
            pass
    return variants


def _weight_mistakes(q, k, v, w: torch.Tensor) -> list[tuple[str, object, dict]]:
    """Every typical mistake that gives exactly the weights ``w`` on these inputs, in order of
    preference: (hint key, what exactly, fields); a fixed scale last (c: the number divided by)."""
    found = [(key, what, {}) for key, what, (_, v_w) in _attention_variants(q, k, v) if _close(w, v_w)]
    c = _fitted_scale(w, q @ k.transpose(-2, -1))
    if c is not None:
        found.append(("l01.attn.scale_fixed", c, {"c": c, "d_k": q.shape[-1], "want": math.sqrt(q.shape[-1])}))
    return found


def _explains(key: str, what, q, k, v, result) -> bool:
    """Does this mistake give the student's weights on another case too?"""
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and is_tensor(result[1])):
        return True                                                # nothing to compare there
    w = result[1]
    if key == "l01.attn.scale_fixed":
        c = _fitted_scale(w, q @ k.transpose(-2, -1))
        return c is not None and math.isclose(c, what, rel_tol=1e-3)
    if key == "l01.attn.which_dk":
        name, dim = what
        t = {"q": q, "k": k, "v": v}[name]
        return -t.dim() <= dim < t.dim() and _close(
            w, torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(t.shape[dim]), dim=-1))
    return any(key == key_ and _close(w, v_w) for key_, _, (_, v_w) in _attention_variants(q, k, v))


def _fitted_scale(w: torch.Tensor, raw: torch.Tensor) -> float | None:
    """The number c with w = softmax(raw / c) (least squares on the centred log-weights), or None
    if no single number fits: how a student's scores were scaled, whatever they divided by."""
    w, raw = w.detach().double(), raw.double()
    if w.shape != raw.shape or not torch.isfinite(w).all() or not (w > 0).all():
        return None
    log_w = w.log() - w.log().mean(dim=-1, keepdim=True)
    centred = raw - raw.mean(dim=-1, keepdim=True)
    denom = float((centred * log_w).sum())
    if denom <= 0:
        return None
    c = float((centred * centred).sum()) / denom
    return c if _close(torch.softmax(raw / c, dim=-1), w, rtol=1e-3, atol=1e-5) else None


def attention_problem(case: str, q, k, v, result, others=()) -> tuple[str, dict] | None:
    """None if ``result`` is right on this case, else (hint key, fields). ``others``: the other cases'
    (q, k, v, result), used to choose between mistakes that give the same weights here (dividing
    by 2 is dividing by √T when T = 4: the fixed 2 shows on the other cases)."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and all(is_tensor(r) for r in result)):
        return ("l01.attn.return_pair", {})
    out, w = result
    ref_out, ref_w = scaled_dot_product_attention(q, k, v)
    if _close(out, ref_out) and _close(w, ref_w):
        return None
    if _close(out, ref_w) and _close(w, ref_out):
        return ("l01.attn.swapped", {})
    # Mistakes in the scores or the softmax change the weights: matched on the weights.
    if not _close(w, ref_w):
        mistakes = _weight_mistakes(q, k, v, w)
        consistent = [m for m in mistakes if all(_explains(m[0], m[1], *other) for other in others)]
        if mistakes:
            key, _, fields = (consistent or mistakes)[0]
            return (key, fields)
        if _close(out, ref_out):
            return ("l01.attn.weights_not_softmax", {})
        if w.shape != ref_w.shape:
            return ("l01.attn.weights_shape", {"got": _shape(w), "want": _shape(ref_w)})
    # The weights are right (or unrecognisably wrong): look at the output.
    if _close(out, w) or _close(out, ref_w):
        return ("l01.attn.no_v", {})
    if out.shape != ref_out.shape:
        return ("l01.attn.out_shape", {"got": _shape(out), "want": _shape(ref_out)})
    if case == "batched":
        return ("l01.attn.batched", {"error": Msg("l01.attn.wrong_values")})
    return ("l01.attn.mismatch", {"diff": _max_diff(out, ref_out)})       # out differs here (else: returned)
