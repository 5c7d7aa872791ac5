"""Exercise checkers for lesson 10 (a GPT that writes verse).

- ``check_probs(fn)``: ``fn(logits (V,), temperature, top_k) -> probabilities (V,)``: softmax of
  logits / temperature, only the top_k most likely kept (None: all), renormalised.
- ``check_units(fn, lang)``: ``fn(line, lang) -> list[str]``: the syllables (vi) or characters
  (zh) of a verse line, punctuation left out (``attnlab.poet.verse.units``).
- ``check_head(model, lang, answer)``: ``answer = (layer, head)`` counted from 1; right if that
  head puts at least ``HEAD_SHARE`` of the best head's weight on the line-break relation
  (``attnlab.poet.heads.BREAK``: from the first syllable (vi) or character (zh) of a line to the
  punctuation that ends the line before).
- ``check_guess(guess, low, high)``: the predict-then-run question (ungraded: it says whether
  the guess matched the measurement).

Each checker recognises the typical mistakes and prints a hint for the first one it meets,
never the solution. ``_diagnose_*`` return ``(ok, message key, fields)`` for the tests.
"""
from __future__ import annotations

import numbers
import unicodedata

import torch

from ..poet import heads, verse
from ..poet.sample import next_token_probs
from ._common import Feedback, NotDone, call_student, close, evaluate, printing

HEAD_SHARE = 0.8

# ------------------------------------------------------------------------------------ probs
def _logit_cases() -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(10)
    return [torch.randn(12, generator=g) * 2, torch.randn(40, generator=g), torch.linspace(3.0, -2.0, 7)]


SETTINGS = [(1.0, None), (0.5, None), (2.0, None), (1.0, 3), (0.7, 1), (1.5, 5)]


def _variants(logits, temperature, top_k):
    """The typical mistakes, as (hint key, what they would return)."""
    V = logits.shape[-1]
    soft = torch.softmax(logits / temperature, -1)
    out = [("l10.hint.temp_multiply", next_token_probs(logits * temperature, 1.0, top_k)),
           ("l10.hint.temp_ignored", next_token_probs(logits, 1.0, top_k))]
    if top_k is not None and top_k < V:
        kth = soft.topk(top_k).values[-1]
        out.append(("l10.hint.not_normalised", torch.where(soft >= kth, soft, 0.0)))
        smallest = soft.topk(top_k, largest=False).values[-1]
        kept = torch.where(soft <= smallest, soft, 0.0)
        out.append(("l10.hint.topk_smallest", kept / kept.sum()))
        for k in (top_k - 1, top_k + 1):
            if 1 <= k <= V:
                out.append(("l10.hint.topk_off_by_one", next_token_probs(logits, temperature, k)))
        if top_k == 1:
            kept = torch.where(soft > kth, soft, 0.0)           # nothing kept: strictly above the top
            out.append(("l10.hint.topk_off_by_one", kept))
        out.append(("l10.hint.topk_ignored", soft))
    return out


def _diagnose_probs(fn):
    for logits in _logit_cases():
        for temperature, top_k in SETTINGS:
            got = call_student(fn, logits.clone(), temperature, top_k)
            if not isinstance(got, torch.Tensor):
                return False, "l10.hint.not_tensor", {"got": type(got).__name__}
            got = got.detach().float()
            if tuple(got.shape) != tuple(logits.shape):
                return False, "l10.hint.probs_shape", {"got": tuple(got.shape), "expected": tuple(logits.shape)}
            want = next_token_probs(logits, temperature, top_k)
            if close(got, want):
                continue
            fields = {"temperature": temperature, "top_k": "None" if top_k is None else top_k}
            for key, variant in _variants(logits, temperature, top_k):
                if close(got, variant):
                    return False, key, fields
            if (got < 0).any() or abs(float(got.sum()) - 1) > 1e-4:
                return False, "l10.hint.not_normalised", fields
            return False, "l10.hint.probs_values", fields
    return True, "l10.ok.probs", {}


def evaluate_probs(fn, lang: str | None = None) -> Feedback:
    """``fn(logits (V,), temperature, top_k) -> (V,)`` probabilities."""
    return evaluate("l10.ex.probs", lambda: _diagnose_probs(fn), lang)

check_probs = printing(evaluate_probs)


# ------------------------------------------------------------------------------------ units
UNIT_CASES = {
    "vi": ["Trăm năm trong cõi người ta,", "Chữ tài chữ mệnh khéo là ghét nhau.",
           "Ngọn đèn khi tỏ khi mờ", "Rằng:  Hồng nhan tự thuở xưa,", "Bây giờ ... ai biết ai đâu!",
           "  Đã lòng hiển hiện cho xem,  "],
    "zh": ["白日依山尽，", "黄河入海流。", "欲穷千里目", "春眠，不觉晓。", "  更上一层楼。  "],
}


def _diagnose_units(fn, lang):
    for line in UNIT_CASES[lang]:
        got = call_student(fn, line, lang)
        if isinstance(got, numbers.Integral):
            return False, "l10.hint.units_count", {}
        if not isinstance(got, (list, tuple)) or not all(isinstance(u, str) for u in got):
            return False, "l10.hint.units_type", {"got": type(got).__name__}
        got = [unicodedata.normalize("NFC", u) for u in got]
        want = verse.units(line, lang)
        if got == want:
            continue
        fields = {"line": line.strip()}
        if "" in got or any(u.isspace() for u in got):
            return False, "l10.hint.units_empty", fields
        if any(c in verse.PUNCTUATION for u in got for c in u):
            return False, "l10.hint.units_punct", fields
        if lang == "vi" and len(got) > len(want) and all(len(u) == 1 for u in got):
            return False, "l10.hint.units_chars", fields
        if lang == "zh" and len(got) < len(want):
            return False, "l10.hint.units_words", fields
        return False, "l10.hint.units_values", {**fields, "got": len(got), "expected": len(want)}
    return True, "l10.ok.units", {}


def evaluate_units(fn, corpus_lang: str, lang: str | None = None) -> Feedback:
    """``fn(line, corpus_lang) -> list[str]``: the units of a verse line of the corpus ``corpus_lang``
    ('vi' or 'zh'); ``lang``: the language of the feedback (default: the current one)."""
    return evaluate("l10.ex.units", lambda: _diagnose_units(fn, corpus_lang), lang)

check_units = printing(evaluate_units)


# ------------------------------------------------------------------------------------- head
def _diagnose_head(model, lang, answer):
    if answer is None or answer is Ellipsis:
        raise NotDone
    if (not isinstance(answer, (tuple, list)) or len(answer) != 2
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in answer)):
        return False, "l10.hint.head_format", {"got": repr(answer)}
    layer, head = (int(v) for v in answer)
    m = heads.attention_mass(model, lang)
    L, H = m.mass.shape
    need = HEAD_SHARE * float(m.mass.max())

    def good(l, h):
        return 1 <= l <= L and 1 <= h <= H and float(m.mass[l - 1, h - 1]) >= need

    if not (1 <= layer <= L and 1 <= head <= H):
        if 0 in (layer, head) and good(layer + 1, head + 1):
            return False, "l10.hint.head_zero_based", {}
        return False, "l10.hint.head_range", {"layers": L, "heads": H, "layer": layer, "head": head}
    mass = float(m.mass[layer - 1, head - 1])
    fields = {"layer": layer, "head": head, "mass": round(mass, 3), "uniform": round(m.uniform, 3)}
    if good(layer, head):
        return True, "l10.ok.head", fields
    if good(layer + 1, head + 1):                 # a strong head, counted from 0
        return False, "l10.hint.head_zero_based", {}
    return False, "l10.hint.head_weak", fields


def evaluate_head(model, corpus_lang: str, answer, lang: str | None = None) -> Feedback:
    """``answer = (layer, head)``, counted from 1: a head that looks at the previous line's
    punctuation (``heads.BREAK``) in the model of the corpus ``corpus_lang``."""
    return evaluate("l10.ex.head", lambda: _diagnose_head(model, corpus_lang, answer), lang)

check_head = printing(evaluate_head)


# ------------------------------------------------------------------------------------ guess
def evaluate_guess(guess, low: float, high: float, lang: str | None = None) -> Feedback:
    """The predict-then-run question: ``guess`` is True if the student expects the low temperature
    to give more well-formed lines than the high one. ``low``/``high``: the measured fractions."""
    def check():
        if guess is None or guess is Ellipsis:
            raise NotDone
        if not isinstance(guess, bool):
            return False, "l10.hint.guess_format", {"got": repr(guess)}
        fields = {"low": round(100 * low), "high": round(100 * high)}
        right = guess == (low > high)
        return right, "l10.ok.guess" if right else "l10.hint.guess_other", fields
    return evaluate("l10.ex.guess", check, lang)

check_guess = printing(evaluate_guess)
