"""Scaled dot-product attention that returns its weights, and the fused form without them.

``scaled_dot_product_attention`` checks its inputs and calls ``attend``; ``attend`` (the weights
path) and ``attend_fused`` (torch's fused kernel, no weights) take the same masks through one
helper, ``allowed_keys``: a mask by its content, causality only when ``is_causal=True`` says so.
"""
from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F

from ._checks import check_causal_sizes, check_float, check_mask, check_same, check_tensor, flag, probability, shape
from .course.i18n import t
from .masks import lower_triangle

LOW_PRECISION = (torch.float16, torch.bfloat16)


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None, dropout_p: float = 0.0,
                                 training: bool = True, scale: float | None = None, *, is_causal: bool = False):
    r"""Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, returning the weights too.

    Shapes: q (..., T, D), k (..., S, D), v (..., S, Dv), usually (B, H, T, D) with
    B batch, H heads, T queries, S keys. Returns ``(out (..., T, Dv), weights (..., T, S))``.

    ``mask`` is bool, **True = may attend**, with as many dimensions as the scores (..., T, S),
    each equal to the scores' or 1: ``padding_mask`` gives (B, 1, 1, S), ``causal_mask`` (1, 1, T, S).
    A mask is used by what it contains, nothing else. Masked scores are set to -inf before the
    softmax, so their weight is exactly 0. A query that may attend to no key at all gets
    all-zero weights and a zero output (as ``torch.nn.functional.scaled_dot_product_attention``
    does), with zero gradients.

    ``is_causal=True`` adds the causal rule: query i may attend to keys 0..i + (S - T), i.e.
    exactly ``mask=causal_mask(T, S)``. For T == S that is torch's ``is_causal=True``. For S > T
    the T queries are taken as the *last* T positions (bottom-right aligned: decoding with a KV
    cache of S - T earlier keys), as in ``torch.nn.attention.bias.causal_lower_right``; note that
    ``F.scaled_dot_product_attention(is_causal=True)`` aligns a non-square mask to the *top left*
    instead. S < T is refused. With a ``mask`` as well, a query may attend where both allow it
    (``mask & causal_mask(T, S)``; torch's function refuses the pair).

    ``dropout_p`` drops weights used for the output when ``training`` is True (as
    ``F.dropout(weights, dropout_p, training)``); the returned weights are taken before dropout.

    For float16/bfloat16 inputs (or under ``torch.autocast``) the scores, the softmax and the
    product with v are computed in float32 and rounded once at the end, so large scores do not
    overflow and the error stays that of the output's dtype.

    Reference::

        scores  = (q / sqrt(d_k)) @ k.transpose(-2, -1)        # (B, H, T, S)
        scores  = scores.masked_fill(~mask, -inf)
        weights = softmax(scores, dim=-1)                      # rows sum to 1
        out     = weights @ v                                  # (B, H, T, Dv)
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, x, ndim=(2, 3, 4))
        check_float(name, x)
    check_same(q=q, k=k, v=v)
    if not (q.dim() == k.dim() == v.dim()):
        raise ValueError(t("checks.qkv_ndim", q=shape(q), k=shape(k), v=shape(v)))
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(t("checks.qk_dk", q=shape(q), k=shape(k)))
    if q.shape[-1] == 0:
        raise ValueError(t("checks.dk_zero", q=shape(q)))
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(t("checks.kv_keys", k=shape(k), v=shape(v)))
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        raise ValueError(t("checks.qkv_leading", q=shape(q), k=shape(k), v=shape(v)))
    if mask is not None:
        check_mask(mask, (*q.shape[:-1], k.shape[-2]), q.device)
    if flag("is_causal", is_causal):
        check_causal_sizes(q.shape[-2], k.shape[-2])
    dropout_p = probability("dropout_p", dropout_p)
    flag("training", training)
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise TypeError(t("checks.scale_type", got=f"{type(scale).__name__} {scale!r}"))
    return attend(q, k, v, mask, dropout_p if training else 0.0, scale, is_causal=is_causal)


def autocast_dtype(device: torch.device) -> torch.dtype | None:
    """The dtype torch.autocast casts to on this device type, or None when autocast is off."""
    if device.type not in ("cpu", "cuda"):
        return None
    try:
        on = torch.is_autocast_enabled(device.type)
        return torch.get_autocast_dtype(device.type) if on else None
    except (TypeError, AttributeError):  # torch < 2.4
        if device.type == "cpu":
            return torch.get_autocast_cpu_dtype() if torch.is_autocast_cpu_enabled() else None
        return torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else None


def attend(q, k, v, mask=None, dropout_p: float = 0.0, scale: float | None = None, *, is_causal: bool = False):
    """The computation of ``scaled_dot_product_attention``, without the checks: ``(out, weights)``.

    The reference formula of its docstring, plus the two things attention needs here, as named
    steps: float32 inside for float16/bfloat16 (``_float32_inside``), and which keys each query
    may see, zeros for a query that may see none (``allowed_keys``, ``zero_empty_rows``).
    """
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    out_dtype, wide = _precisions(q, v)
    keep, seen, _ = allowed_keys(mask, is_causal, q.shape[-2], k.shape[-2], q.device)
    with _float32_inside(q.device, wide):
        if wide:
            q, k, v = q.float(), k.float(), v.float()
        scores = torch.matmul(q * scale, k.transpose(-2, -1))              # (B, H, T, S)
        if keep is not None:
            scores = _fill(scores, ~keep, -math.inf)                      # masked_fill(~mask, -inf)
        weights = torch.softmax(scores, dim=-1)                           # rows sum to 1
        weights = zero_empty_rows(weights, seen)
        dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
        out = torch.matmul(dropped, v)                                    # (B, H, T, Dv)
    return out.to(out_dtype), weights.to(out_dtype)


def attend_fused(q, k, v, mask=None, dropout_p: float = 0.0, scale: float | None = None, *,
                 is_causal: bool = False) -> torch.Tensor:
    """The same output as ``attend`` (no weights) from torch's fused kernel
    ``F.scaled_dot_product_attention``, with the same masks (``allowed_keys``): the square
    causal rule alone goes to the kernel as its own ``is_causal=True``, anything else as an
    explicit mask in which a query that sees no key is given every key (so the kernel never meets
    an empty row, whatever its version does with one), zeroed afterwards."""
    keep, seen, kernel_causal = allowed_keys(mask, is_causal, q.shape[-2], k.shape[-2], q.device, fused=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=dropout_p,
                                         is_causal=kernel_causal, scale=scale)    # (B, H, T, Dv)
    return zero_empty_rows(out, seen)


def allowed_keys(mask, is_causal: bool, T: int, S: int, device, *, fused: bool = False):
    """Which keys each query may attend to, as the attention needs it: the one place where a
    mask and causality meet, and where empty rows are handled. Returns ``(keep, seen, kernel_causal)``:

    - ``keep`` (bool, broadcastable to (.., T, S)) or None for "every key": ``mask``, AND the
      causal rule (``lower_triangle(T, S)``) if ``is_causal``. A query that sees no key at all
      gets every key here, so the softmax never meets a row of -inf (NaN);
    - ``seen`` ((.., T, 1), False for such a query) or None when every query sees some key: the
      caller multiplies its result by it (``zero_empty_rows``): zeros, with zero gradients;
    - ``kernel_causal``: True only with ``fused=True`` for the square causal rule without a mask,
      which torch's kernel applies itself (``is_causal=True``), so no mask tensor is built.

    With one query (T == 1, a decoding step) the causal rule allows every key: nothing to build.
    No host-device sync: nothing here reads a value back.
    """
    causal = is_causal and T > 1
    if mask is None:
        if not causal:
            return None, None, False
        if fused and T == S:
            return None, None, True
        return lower_triangle(T, S, device), None, False                # every row sees key 0
    if causal:
        mask = mask & lower_triangle(T, S, device)                        # (.., T, S)
    seen = mask.any(-1, keepdim=True)                                     # (.., T, 1): sees some key
    return mask >= seen, seen, False                                      # mask | ~seen


def zero_empty_rows(x: torch.Tensor, seen: torch.Tensor | None) -> torch.Tensor:
    """Zero the rows (weights or outputs) of queries that see no key; in place outside autograd."""
    if seen is None:
        return x
    return x * seen if x.requires_grad else x.mul_(seen)


def _fill(scores: torch.Tensor, where: torch.Tensor, value: float) -> torch.Tensor:
    """``scores.masked_fill(where, value)``, in place when autograd does not need the original."""
    return scores.masked_fill(where, value) if scores.requires_grad else scores.masked_fill_(where, value)


def _precisions(q: torch.Tensor, v: torch.Tensor) -> tuple[torch.dtype, bool]:
    """The dtype of the result (v's, or autocast's), and whether to compute in float32 inside:
    float16/bfloat16 scores overflow (|score| > 65504) and a softmax rounded twice drifts."""
    cast = autocast_dtype(q.device) if q.dtype != torch.float64 else None   # autocast leaves float64 alone
    return cast or v.dtype, cast is not None or q.dtype in LOW_PRECISION


def _float32_inside(device: torch.device, wide: bool):
    """Autocast off inside (it would round the scores back to float16); nothing to do otherwise."""
    return torch.autocast(device.type, enabled=False) if wide else contextlib.nullcontext()
