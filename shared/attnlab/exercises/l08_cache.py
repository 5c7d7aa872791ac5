"""Lesson 08, exercise 1: one decoding step of self-attention with a KV cache (``l08.check_cache_step``).

``fn(q, k_cache, v_cache, k_new, v_new) -> (out, k, v)``: append the new key and value (``k_cache`` is
None at the first step), attend with the single query to every key, no mask. The probe calls the step
at sizes drawn per run (d_k never the lesson model's 16), then decodes numbers with it inside the
lesson's model; the judge compares with attnlab and with recomputing the prefix, and measures the
number a wrong scale divides by.
"""
from __future__ import annotations

import math

import torch

from .. import translator as tr
from ..attention import scaled_dot_product_attention
from ._common import (Draw, Exercise, Feedback, Verdict, attempt, call_student, evaluate_exercise, is_tensor,
                      judging, kind, raises, value_of)
from ._common import close, shape
from ._models import model_data, translator_from
from ._outcomes import numpy_returned, returned, typed_attempt

CACHE_NUMBERS = [7, 21, 105, 1005, 10010, 99999, 24005, 31415]


def cache_cases(seed: int) -> list[tuple[torch.Tensor, ...]]:
    """(q, k_cache, v_cache, k_new, v_new): two sizes with different d_k (never 16, the lesson model's
    d_k, nor its square root 4) and cache lengths, B != H; t + 1 != d_k, so that the weights (B, H, 1,
    t + 1) returned instead of the output (B, H, 1, d_k) show by their shape."""
    d = Draw(seed, "l08.cache_step")
    cases, lengths = [], []
    for d_k in d.sample((3, 5, 6, 7, 8, 12), 2):
        t = d.choice([n for n in range(2, 8) if n + 1 != d_k and n not in lengths])
        lengths.append(t)
        B, H = d.sample((1, 2, 3, 5), 2)
        q, k_new, v_new = (d.randn(B, H, 1, d_k) for _ in range(3))
        k_cache, v_cache = d.randn(B, H, t, d_k), d.randn(B, H, t, d_k)
        cases.append((q, k_cache, v_cache, k_new, v_new))
    return cases


class _StepBroke(Exception):
    """The student's step returned the wrong shapes during the decoding."""


def _decode(fn, model) -> torch.Tensor:
    """(B, steps, V): the logits of decoding CACHE_NUMBERS greedily with ``fn`` as the self-attention step."""
    src = tr.encode_source(CACHE_NUMBERS)

    def attend(q, kc, vc, kn, vn):
        result = call_student(fn, q, kc, vc, kn, vn)
        want = (kn.shape[0], kn.shape[1], (0 if kc is None else kc.shape[2]) + 1, kn.shape[3])
        if not (isinstance(result, (tuple, list)) and len(result) == 3 and all(map(is_tensor, result))
                and tuple(result[1].shape) == want and result[0].shape == q.shape):
            raise _StepBroke("the step returned other shapes while decoding")
        return result[0], None, result[1], result[2]

    with torch.no_grad():
        memory, _ = model.encode(src)
        cache = tr.KVCache.start(model, memory, src)
        fed = torch.full((len(CACHE_NUMBERS),), tr.BOS)
        logits = []
        for _ in range(model.config.max_tgt - 1):
            step = tr.cached_step(model, fed, cache, attend=attend)
            logits.append(step)
            fed = step[:, tr.EOS:].argmax(-1) + tr.EOS
    return torch.stack(logits, 1)


def probe_cache_step(fn, model=None, *, seed: int) -> dict:
    """The step on each drawn case, on the first step (no cache yet), then inside the model's decoding."""
    model = (tr.load_pretrained("vi") if model is None else model).cpu().float().eval()
    results = {"model": model_data(model)}
    for i, case in enumerate(cache_cases(seed)):
        results[f"case{i}"] = outcome = typed_attempt(fn, *(x.clone() for x in case))
        if "value" not in outcome or outcome["value"] is None:
            return results
    q, _, _, k_new, v_new = cache_cases(seed)[0]
    results["first"] = attempt(fn, q.clone(), None, None, k_new.clone(), v_new.clone())
    results["decode"] = attempt(_decode, fn, model)
    return results


def _cache_error(kc):
    def hint(error):
        if raises(error, "RuntimeError") and "must match" in error["message"]:     # torch.cat along the wrong axis
            return False, "l08.hint.cache_dim", {"want": str(tuple(kc.shape[:2]) + (kc.shape[2] + 1, kc.shape[3]))}
        if raises(error, "RuntimeError") and "invalid for input of size" in error["message"]:
            return False, "l08.hint.cache_sizes", {}                                  # a size written as a number
        return None
    return hint


def _divisor(q, k, v, out) -> float | None:
    """√n if ``out`` is attention with the scores divided by √n for an integer n (1 to 256), else None."""
    for n in range(1, 257):
        if close(out, scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(n))[0], atol=1e-5):
            return math.sqrt(n)
    return None


def _cache_case(results, i, case):
    q, kc, vc, kn, vn = case
    result = value_of(results, f"case{i}", errors=_cache_error(kc))
    if isinstance(result, (tuple, list)) and len(result) != 3:
        raise Verdict(False, "l08.hint.cache_return_count", count=len(result))
    if not (isinstance(result, (tuple, list)) and all(map(is_tensor, result))) or numpy_returned(results, f"case{i}"):
        raise Verdict(False, "l08.hint.cache_return", got=returned(results, f"case{i}") or kind(result))
    out, k, v = result
    k_ref, v_ref = torch.cat([kc, kn], dim=2), torch.cat([vc, vn], dim=2)
    out_ref, w_ref = scaled_dot_product_attention(q, k_ref, v_ref)
    if tuple(out.shape) == tuple(w_ref.shape) and tuple(out.shape) != tuple(out_ref.shape):
        raise Verdict(False, "l08.hint.cache_weights")
    if tuple(k.shape) != tuple(k_ref.shape) or tuple(v.shape) != tuple(v_ref.shape):
        if tuple(k.shape) == tuple(kc.shape):
            raise Verdict(False, "l08.hint.cache_no_append")
        raise Verdict(False, "l08.hint.cache_dim", want=str(tuple(k_ref.shape)))
    if tuple(out.shape) != tuple(out_ref.shape):
        raise Verdict(False, "l08.hint.cache_shape", got=shape(out), want=shape(out_ref))
    # Without a mask, attention does not care about the order of the keys: only the cache shows it.
    if close(k, torch.cat([kn, kc], dim=2)) or close(v, torch.cat([vn, vc], dim=2)):
        raise Verdict(False, "l08.hint.cache_order")
    if not (close(k, k_ref) and close(v, v_ref)):
        raise Verdict(False, "l08.hint.cache_kv")
    if close(out, out_ref, atol=1e-5):
        return
    if close(out, scaled_dot_product_attention(q, kn, vn)[0], atol=1e-5):
        raise Verdict(False, "l08.hint.cache_ignored")
    if close(out, scaled_dot_product_attention(q, kc, vc)[0], atol=1e-5):
        raise Verdict(False, "l08.hint.cache_attend_old")        # attended before appending: not itself
    divisor = _divisor(q, k_ref, v_ref, out)
    if divisor is not None and abs(divisor - 1) < 1e-9:
        raise Verdict(False, "l08.hint.cache_scale")
    if divisor is not None:
        d_k = q.shape[-1]
        raise Verdict(False, "l08.hint.cache_scale_fixed", divisor=divisor, sqrt_dk=math.sqrt(d_k), d_k=d_k)
    raise Verdict(False, "l08.hint.cache_values")


@judging
def judge_cache_step(results: dict, *, seed: int):
    model = translator_from(results.get("model"))
    cases = cache_cases(seed)
    for i, case in enumerate(cases):
        _cache_case(results, i, case)
    first = value_of(results, "first", errors=lambda error: (False, "l08.hint.cache_first", {}))
    if not (isinstance(first, (tuple, list)) and len(first) == 3 and all(map(is_tensor, first))) \
            or first[1].dim() != 4 or first[1].shape[2] != 1:
        return False, "l08.hint.cache_first", {}
    mine = value_of(results, "decode", errors=lambda error: (False, "l08.hint.cache_sizes", {}))
    ref = tr.generate(model, tr.encode_source(CACHE_NUMBERS), use_cache=False).logits
    if not is_tensor(mine) or mine.dim() != 3 or mine.shape[0] != ref.shape[0] or mine.shape[1] < ref.shape[1] \
            or mine.shape[2] != ref.shape[2]:
        raise Verdict(False, "ex.no_result")
    if not close(mine[:, :ref.shape[1]], ref, rtol=0.0, atol=1e-5):
        return False, "l08.hint.cache_values", {}
    return True, "l08.ok.cache", {"count": len(CACHE_NUMBERS)}


CACHE_STEP = Exercise("l08.cache_step", "l08.ex.cache", ("my_attend_step",), probe_cache_step, judge_cache_step,
                      args=("my_attend_step", "model"))


def evaluate_cache_step(fn, model=None, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """One decoding step of self-attention with a KV cache; see the module docstring."""
    return evaluate_exercise(CACHE_STEP, (fn, model), lang, seed)
