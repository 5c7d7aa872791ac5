"""Exercise checkers for lesson 08 (the number translator). Words in messages/l08.json.

- ``check_cache_step(fn, model)``: ``fn(q, k_cache, v_cache, k_new, v_new) -> (out, k, v)``, one step
  of decoder self-attention with a KV cache (``l08_cache``).
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
from ..translator import numwords
from ._common import Exercise, Feedback, evaluate_exercise, judging, printing, value_of
from ._models import model_data, translator_from
from ._outcomes import answer_outcome, pair
from .l08_cache import CACHE_NUMBERS, CACHE_STEP, evaluate_cache_step, judge_cache_step, probe_cache_step  # noqa: F401

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
