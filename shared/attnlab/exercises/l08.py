"""Exercise checkers for lesson 08 (the number translator). Words in messages/l08.json.

- ``check_cache_step(fn)``: ``fn(q, k_cache, v_cache, k_new, v_new) -> (out, k, v)``, one step of
  decoder self-attention with a KV cache: append the new key and value (``k_cache`` is None at the
  first step), attend with the single query to every key, no mask. The checker decodes held-out
  numbers with the student's step and compares tokens and logits with recomputing the prefix.
- ``check_aligned_head(model, answer)``: ``answer = (layer, head)`` counted from 1; right if that
  head's cross-attention puts at least ``ALIGNMENT_THRESHOLD`` of its weight on the aligned digit.
- ``check_seven_digits(model, answer)``: ``answer`` is "A", "B" or "C" (what happens to a 7-digit
  number); on a right answer it shows what the model writes.

Each exercise has ``_diagnose_x(...) -> (ok, message key, fields)`` (which hint was chosen, for the
tests), ``evaluate_x(...) -> Feedback`` (the verdict and the line the student reads, printed
nowhere: ``ok`` is True, False, or None while the TODO is untouched) and ``check_x(...)``, what
the notebook calls: it prints that line and returns None (``check_x.evaluate`` is ``evaluate_x``).
"""
from __future__ import annotations

import numbers

import torch

from ..translator import numwords
from .. import translator as tr
from ..attention import scaled_dot_product_attention
from ..course.i18n import num
from ._common import Feedback, NotDone, call_student, close, evaluate, printing, shape

CACHE_NUMBERS = [7, 21, 105, 1005, 10010, 99999, 24005, 31415]


# ---------------------------------------------------------------------------------- cache step
def _probe(seed: int = 0, t_cache: int = 3):
    g = torch.Generator().manual_seed(seed)
    B, H, d = 2, 4, 16
    q, k_new, v_new = (torch.randn(B, H, 1, d, generator=g) for _ in range(3))
    k_cache, v_cache = (torch.randn(B, H, t_cache, d, generator=g) for _ in range(2))
    return q, k_cache, v_cache, k_new, v_new


def _is_tensor(x) -> bool:
    return isinstance(x, torch.Tensor)


def _diagnose_cache_step(fn, model=None):
    q, kc, vc, kn, vn = _probe()
    try:
        result = call_student(fn, q.clone(), kc.clone(), vc.clone(), kn.clone(), vn.clone())
    except RuntimeError as err:          # torch.cat along the wrong axis: the sizes do not match
        if "must match" not in str(err):
            raise
        return False, "l08.hint.cache_dim", {"want": str(tuple(kc.shape[:2]) + (kc.shape[2] + 1, kc.shape[3]))}
    if isinstance(result, (tuple, list)) and len(result) != 3:
        return False, "l08.hint.cache_return_count", {"count": len(result)}
    if not (isinstance(result, (tuple, list)) and all(map(_is_tensor, result))):
        return False, "l08.hint.cache_return", {"got": type(result).__name__}
    out, k, v = result
    k_ref = torch.cat([kc, kn], dim=2)
    v_ref = torch.cat([vc, vn], dim=2)
    out_ref, w_ref = scaled_dot_product_attention(q, k_ref, v_ref)
    if tuple(out.shape) == tuple(w_ref.shape) and tuple(out.shape) != tuple(out_ref.shape):
        return False, "l08.hint.cache_weights", {}
    if tuple(k.shape) != tuple(k_ref.shape) or tuple(v.shape) != tuple(v_ref.shape):
        if tuple(k.shape) == tuple(kc.shape):
            return False, "l08.hint.cache_no_append", {}
        return False, "l08.hint.cache_dim", {"want": str(tuple(k_ref.shape))}
    if tuple(out.shape) != tuple(out_ref.shape):
        return False, "l08.hint.cache_shape", {"got": shape(out), "want": shape(out_ref)}
    # Without a mask, attention does not care about the order of the keys: only the cache shows it.
    if close(k, torch.cat([kn, kc], dim=2)) or close(v, torch.cat([vn, vc], dim=2)):
        return False, "l08.hint.cache_order", {}
    if not (close(k, k_ref) and close(v, v_ref)):
        return False, "l08.hint.cache_kv", {}
    only_new, _ = scaled_dot_product_attention(q, kn, vn)
    if torch.allclose(out, only_new, atol=1e-5):
        return False, "l08.hint.cache_ignored", {}
    only_old, _ = scaled_dot_product_attention(q, kc, vc)
    if torch.allclose(out, only_old, atol=1e-5):
        return False, "l08.hint.cache_no_append", {}
    unscaled, _ = scaled_dot_product_attention(q, k_ref, v_ref, scale=1.0)
    if torch.allclose(out, unscaled, atol=1e-5):
        return False, "l08.hint.cache_scale", {}
    if not torch.allclose(out, out_ref, atol=1e-5):
        return False, "l08.hint.cache_values", {}
    # the first step: no cache yet
    try:
        first = call_student(fn, q, None, None, kn, vn)
    except Exception:                                   # noqa: BLE001 - any failure here is this mistake
        return False, "l08.hint.cache_first", {}
    if not (isinstance(first, (tuple, list)) and len(first) == 3 and all(map(_is_tensor, first))) \
            or first[1].shape[2] != 1:
        return False, "l08.hint.cache_first", {}
    # the whole decoding, with the student's step, against recomputation
    model = model or tr.load_pretrained("vi")

    def attend(q, kc, vc, kn, vn):
        try:
            result = call_student(fn, q, kc, vc, kn, vn)
        except NotDone:
            raise _StepBroke from None
        except Exception as err:         # noqa: BLE001 - right on the probe, fails on other sizes
            raise _StepBroke from err
        want = (kn.shape[0], kn.shape[1], (0 if kc is None else kc.shape[2]) + 1, kn.shape[3])
        if not (isinstance(result, (tuple, list)) and len(result) == 3 and all(map(_is_tensor, result))
                and tuple(result[1].shape) == want and result[0].shape == q.shape):
            raise _StepBroke
        return result[0], None, result[1], result[2]

    training = model.training
    try:
        model.eval()
        return _decode_with(attend, model)
    finally:
        model.train(training)


def _decode_with(attend, model):
    """Decode CACHE_NUMBERS with ``attend`` as the self-attention step; compare with recomputing."""
    src = tr.encode_source(CACHE_NUMBERS).to(next(model.parameters()).device)
    ref = tr.generate(model, src, use_cache=False)
    with torch.no_grad():
        memory, _ = model.encode(src)
        cache = tr.KVCache.start(model, memory, src)
        fed = torch.full((len(CACHE_NUMBERS),), tr.BOS, device=src.device)
        logits = []
        for _ in range(ref.logits.shape[1]):
            try:
                step = tr.cached_step(model, fed, cache, attend=attend)
            except _StepBroke:                   # right on the probe, wrong shapes for other sizes
                return False, "l08.hint.cache_sizes", {}
            logits.append(step)
            fed = step[:, tr.EOS:].argmax(-1) + tr.EOS
    diff = (torch.stack(logits, 1) - ref.logits).abs().max().item()
    if diff > 1e-5:
        return False, "l08.hint.cache_values", {}
    return True, "l08.ok.cache", {"count": len(CACHE_NUMBERS)}


class _StepBroke(Exception):
    """The student's step returned the wrong shapes during the decoding."""


def evaluate_cache_step(fn, model=None, lang: str | None = None) -> Feedback:
    """One decoding step of self-attention with a KV cache; see the module docstring."""
    return evaluate("l08.ex.cache", lambda: _diagnose_cache_step(fn, model), lang)


check_cache_step = printing(evaluate_cache_step)


# ---------------------------------------------------------------------------------- aligned head
# A head is right if it is within HEAD_MARGIN of the best decoder head's alignment mass (and at
# least ALIGNMENT_THRESHOLD): on the lesson's CPU models 2 (vi) and 3 (zh) of the 8 heads pass;
# a bare 60% threshold let 6 of 8 pass.
HEAD_MARGIN = 0.05
def _diagnose_aligned_head(model, answer, mass=None):
    if answer is None or answer is Ellipsis:
        raise NotDone
    c = model.config
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2
            and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in answer)):
        return False, "l08.hint.head_format", {}
    layer, head = int(answer[0]), int(answer[1])
    if layer == 0 or head == 0:
        return False, "l08.hint.head_zero", {}
    if not (1 <= layer <= c.dec_layers and 1 <= head <= c.num_heads):
        return False, "l08.hint.head_range", {"layers": c.dec_layers, "heads": c.num_heads}
    mass = tr.alignment_mass(model) if mass is None else mass
    m = float(mass[layer - 1, head - 1])
    need = max(tr.ALIGNMENT_THRESHOLD, float(mass.max()) - HEAD_MARGIN)   # only the best head(s) pass
    fields = {"layer": layer, "head": head, "mass": round(100 * m), "pct": round(100 * need)}
    if m < need:
        return False, "l08.hint.head_weak", fields
    return True, "l08.ok.head", fields


def evaluate_aligned_head(model, answer, lang: str | None = None) -> Feedback:
    """``answer = (layer, head)`` of the decoder, counted from 1."""
    return evaluate("l08.ex.head", lambda: _diagnose_aligned_head(model, answer), lang,
                    discussion="l08.discuss.head")


check_aligned_head = printing(evaluate_aligned_head)


# ---------------------------------------------------------------------------------- seven digits
SEVEN = 1234567
# The right answer, word by word (numwords stops at 99 999): to say which limit stops the model.
SEVEN_WORDS = {"vi": "một triệu hai trăm ba mươi tư nghìn năm trăm sáu mươi bảy".split(),
               "zh": list("一百二十三万四千五百六十七")}


def seven_digit_words(model) -> list[str]:
    """What the model writes for 1 234 567, fed as digit ids (``translate`` refuses it)."""
    src = torch.tensor([[int(d) + 1 for d in str(SEVEN)]], device=next(model.parameters()).device)
    gen = tr.generate(model, src, use_cache=True)
    return tr.decode_ids(gen.tokens[0], model.lang)


def _diagnose_seven_digits(model, answer):
    if answer is None or answer is Ellipsis:
        raise NotDone
    if not isinstance(answer, str) or answer.strip().upper() not in ("A", "B", "C"):
        return False, "l08.hint.seven_format", {}
    choice = answer.strip().upper()
    fields = _seven_limits(model)
    if choice == "A":
        return False, "l08.hint.seven_right_vocab" if fields["missing"] else "l08.hint.seven_right", fields
    if choice == "C":
        return False, "l08.hint.seven_error", fields
    words = tr.join_words(seven_digit_words(model), model.lang)
    return True, "l08.ok.seven" if fields["missing"] else "l08.ok.seven_length", {**fields, "number": num(SEVEN),
                                                                                 "words": words}


def _seven_limits(model) -> dict:
    """What stops the model, computed: words missing from the vocabulary, the length limit, the positions."""
    c = model.config
    right = SEVEN_WORDS[model.lang]
    missing = [w for w in dict.fromkeys(right) if w not in numwords.VOCAB[model.lang]]
    return {"missing": ", ".join(missing), "n_words": len(right), "max_tgt": c.max_tgt,
            "max_new": c.max_tgt - 1, "max_src": c.max_src, "digits": len(str(SEVEN)),
            "table": max(c.max_src, c.max_tgt)}                  # the positional table (Translator.pos)


def evaluate_seven_digits(model, answer, lang: str | None = None) -> Feedback:
    """``answer`` in "A", "B", "C"; see the lesson."""
    return evaluate("l08.ex.seven", lambda: _diagnose_seven_digits(model, answer), lang,
                    discussion="l08.discuss.seven")


check_seven_digits = printing(evaluate_seven_digits)
