"""Exercise checkers for lesson 08 (the number translator). Words in messages/l08.json.

- ``check_cache_step(fn, model)``: ``fn(q, k_cache, v_cache, k_new, v_new) -> (out, k, v)``, one step
  of decoder self-attention with a KV cache: append the new key and value (``k_cache`` is None at the
  first step), attend with the single query to every key, no mask. The probe calls the step at sizes
  drawn per run (d_k never the lesson model's 16), then decodes numbers with it inside the lesson's
  model; the judge compares with attnlab and with recomputing the prefix.
- ``check_aligned_head(model, answer)``: ``answer = (layer, head)`` counted from 1, read off the
  figure of the lesson's example (1 021): right if, in that figure, the head's brightest cell sits on
  the digit the word reads in at least three rows out of four (``FIGURE_SHARE``). The student is
  graded on what they see, not on numbers they cannot see.
- ``check_seven_digits(model, answer)``: ``answer`` is "A", "B" or "C" (what happens to a 7-digit
  number); on a right answer it shows what the model writes.

Each is a probe and a judge (``probe_x`` / ``judge_x``); the model travels as data (``_models``).
"""
from __future__ import annotations

import dataclasses
import math

import torch

from .. import translator as tr
from ..attention import scaled_dot_product_attention
from ..translator import numwords
from ._common import (Draw, Exercise, Feedback, Verdict, attempt, call_student, evaluate_exercise, is_tensor,
                      judging, kind, printing, raises, value_of)
from ._common import close, shape
from ._models import model_data, translator_from
from ._typed import numpy_returned, returned, typed_attempt
from .l07 import answer_outcome, pair

CACHE_NUMBERS = [7, 21, 105, 1005, 10010, 99999, 24005, 31415]


# ---------------------------------------------------------------------------------- cache step
def cache_cases(seed: int) -> list[tuple[torch.Tensor, ...]]:
    """(q, k_cache, v_cache, k_new, v_new): two sizes with different d_k (never 16, the lesson model's
    d_k, nor its square root 4) and cache lengths, B != H."""
    d = Draw(seed, "l08.cache_step")
    cases = []
    for d_k, t in zip(d.sample((3, 5, 6, 7, 8, 12), 2), d.sample(range(2, 8), 2)):
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


check_cache_step = printing(evaluate_cache_step)


# ---------------------------------------------------------------------------------- aligned head
FIGURE_NUMBER = 1021       # the lesson's example: the cross-attention figure the student reads
FIGURE_SHARE = 0.75        # rows whose brightest cell is on the word's digit, for an aligned head


@dataclasses.dataclass(frozen=True)
class FigureHead:
    """How one decoder head looks in the figure of FIGURE_NUMBER: in how many of its rows (the words,
    </s> left out) the brightest cell is the digit the word reads; the first row where it is not."""
    layer: int
    head: int
    hits: int
    rows: int
    miss: tuple | None             # (word, digit lit, its position, digit read, its position)

    @property
    def aligned(self) -> bool:
        return self.hits >= FIGURE_SHARE * self.rows


def figure(model) -> list[FigureHead]:
    """Every decoder head, as the student sees it in the lesson's figure (teacher-forced on the right words)."""
    lang = model.lang
    words = numwords.words(FIGURE_NUMBER, lang)
    digits = str(FIGURE_NUMBER)
    heads = []
    for layer, w in enumerate(tr.cross_attention(model, [FIGURE_NUMBER])):     # (1, H, T, S) per layer
        for head in range(w.shape[1]):
            lit = w[0, head].argmax(-1)                                         # (T,) brightest digit per row
            hits, miss = 0, None
            for row, (word, aligned) in enumerate(zip(words.tokens, words.align)):
                if int(lit[row]) == aligned:
                    hits += 1
                elif miss is None:
                    miss = (word, digits[int(lit[row])], int(lit[row]), digits[aligned], aligned)
            heads.append(FigureHead(layer + 1, head + 1, hits, len(words.tokens), miss))
    return heads


def figure_heads(model) -> list[tuple[int, int]]:
    """The (layer, head) pairs, from 1, that the checker accepts: aligned in the lesson's figure."""
    ranked = sorted((h for h in figure(model) if h.aligned), key=lambda h: -h.hits)
    return [(h.layer, h.head) for h in ranked]


def probe_aligned_head(model, answer, *, seed: int) -> dict:
    return {"answer": answer_outcome(answer), "model": model_data(model)}


@judging
def judge_aligned_head(results: dict, *, seed: int):
    got = pair(value_of(results, "answer"))
    if got is None:
        return False, "l08.hint.head_format", {}
    model = translator_from(results.get("model"))
    c = model.config
    heads = {(h.layer, h.head): h for h in figure(model)}
    layer, head = got
    if (layer + 1, head + 1) in heads and heads[layer + 1, head + 1].aligned and \
            not (heads.get((layer, head)) and heads[layer, head].aligned):
        return False, "l08.hint.head_zero", {}                    # counted from 0, like Python indices
    if layer == 0 or head == 0:
        return False, "l08.hint.head_zero", {}
    if (layer, head) not in heads:
        return False, "l08.hint.head_range", {"layers": c.dec_layers, "heads": c.num_heads}
    h = heads[layer, head]
    fields = {"layer": layer, "head": head, "hits": h.hits, "rows": h.rows, "number": FIGURE_NUMBER,
              "need": math.ceil(FIGURE_SHARE * h.rows)}
    if not h.aligned:
        word, lit, lit_pos, read, read_pos = h.miss
        return False, "l08.hint.head_weak", {**fields, "word": word, "lit": lit, "lit_pos": lit_pos,
                                             "read": read, "read_pos": read_pos}
    mass = tr.alignment_mass(model)                                 # the held-out numbers: for the discussion
    return True, "l08.ok.head", {**fields, "mass": round(100 * float(mass[layer - 1, head - 1])),
                                 "count": len(tr.heldout())}


ALIGNED_HEAD = Exercise("l08.aligned_head", "l08.ex.head", ("my_head",), probe_aligned_head, judge_aligned_head,
                        args=("model", "my_head"), discussion="l08.discuss.head")


def evaluate_aligned_head(model, answer, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``answer = (layer, head)`` of the decoder, counted from 1."""
    return evaluate_exercise(ALIGNED_HEAD, (model, answer), lang, seed)


check_aligned_head = printing(evaluate_aligned_head)


# ---------------------------------------------------------------------------------- seven digits
SEVEN = 1234567
# The right answer, word by word (numwords stops at 99 999): to say which limit stops the model.
SEVEN_WORDS = {"vi": "một triệu hai trăm ba mươi tư nghìn năm trăm sáu mươi bảy".split(),
               "zh": list("一百二十三万四千五百六十七")}


def seven_digit_words(model) -> list[str]:
    """What the model writes for 1 234 567, fed as digit ids (``translate`` refuses it)."""
    src = torch.tensor([[int(d) + 1 for d in str(SEVEN)]], device=next(model.parameters()).device)   # (1, 7)
    gen = tr.generate(model, src, use_cache=True)
    return tr.decode_ids(gen.tokens[0], model.lang)


def probe_seven_digits(model, answer, *, seed: int) -> dict:
    return {"answer": answer_outcome(answer), "model": model_data(model)}


@judging
def judge_seven_digits(results: dict, *, seed: int):
    answer = value_of(results, "answer")
    model = translator_from(results.get("model"))
    if not isinstance(answer, str) or answer.strip().upper() not in ("A", "B", "C"):
        return False, "l08.hint.seven_format", {}
    choice = answer.strip().upper()
    fields = _seven_limits(model)
    if choice == "A":
        return False, "l08.hint.seven_right_vocab" if fields["missing"] else "l08.hint.seven_right", fields
    if choice == "C":
        return False, "l08.hint.seven_error", fields
    words = tr.join_words(seven_digit_words(model), model.lang)
    return True, "l08.ok.seven" if fields["missing"] else "l08.ok.seven_length", {**fields, "number": SEVEN,
                                                                                 "words": words}


def _seven_limits(model) -> dict:
    """What stops the model, computed: words missing from the vocabulary, the length limit, the positions."""
    c = model.config
    right = SEVEN_WORDS[model.lang]
    missing = [w for w in dict.fromkeys(right) if w not in numwords.VOCAB[model.lang]]
    return {"missing": ", ".join(missing), "n_words": len(right), "max_tgt": c.max_tgt,
            "max_new": c.max_tgt - 1, "max_src": c.max_src, "digits": len(str(SEVEN)),
            "table": max(c.max_src, c.max_tgt)}                  # the positional table (Translator.pos)


SEVEN_DIGITS = Exercise("l08.seven_digits", "l08.ex.seven", ("my_guess",), probe_seven_digits, judge_seven_digits,
                        args=("model", "my_guess"), discussion="l08.discuss.seven")


def evaluate_seven_digits(model, answer, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``answer`` in "A", "B", "C"; see the lesson."""
    return evaluate_exercise(SEVEN_DIGITS, (model, answer), lang, seed)


check_seven_digits = printing(evaluate_seven_digits)

EXERCISES = (CACHE_STEP, ALIGNED_HEAD, SEVEN_DIGITS)
