"""Reference solutions for lesson 10 (a GPT that writes verse). For instructors; no notebook imports this.

The verse exercises depend on the corpus language: ``pattern_vi`` / ``pattern_zh`` and
``rhymes_vi`` / ``rhymes_zh`` are what a Vietnamese or a Chinese student writes as ``my_pattern`` and
``my_rhymes``; each uses only what the lesson allows (``form.units``, ``jinti.groups``,
``luc_bat.ONSETS``), never the package's own tone and rhyme functions.
"""
from __future__ import annotations

import unicodedata

import torch

TONE_MARKS = {"\u0300", "\u0301", "\u0303", "\u0309", "\u0323"}      # huyền, sắc, ngã, hỏi, nặng
OBLIQUE_MARKS = TONE_MARKS - {"\u0300"}
VOWELS = "aăâeêioôơuưy"


def probs(logits, temperature, top_k):
    """Softmax of logits / temperature; with top_k, only the k most likely kept (ties too), renormalised."""
    p = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None:
        kth = p.topk(top_k).values[..., -1:]            # the k-th largest probability
        p = torch.where(p >= kth, p, 0.0)
        p = p / p.sum(-1, keepdim=True)
    return p


def pattern_vi(line):
    """"B" or "T" for each syllable, from its tone mark."""
    from attnlab.poet import forms
    out = []
    for syllable in forms.form("vi").units(line):
        marks = set(unicodedata.normalize("NFD", syllable))
        out.append("T" if marks & OBLIQUE_MARKS else "B")
    return out


def pattern_zh(line):
    """平, 仄 or 两读 for each character, from its 平水韵 groups (None if it has none)."""
    from attnlab.poet import forms, jinti
    out = []
    for char in forms.form("zh").units(line):
        level = {"平声" in g for g in jinti.groups(char)}
        out.append(None if not level else "平" if level == {True} else "仄" if level == {False} else "两读")
    return out


def rhymes_vi(a, b):
    """Vần chính: both bằng, and the same rime once the tone, the onset and the medial are gone."""
    from attnlab.poet import luc_bat

    def rime(syllable):          # the rime, spelt as the lesson says (a y at its start read as i)
        s = "".join(c for c in unicodedata.normalize("NFD", syllable.lower()) if c not in TONE_MARKS)
        s = unicodedata.normalize("NFC", s)
        if s.startswith("gi") and (len(s) == 2 or s[2] not in VOWELS):
            s = s[1:]                                    # gì, gìn: the i is the rime's
        else:
            for onset in sorted(luc_bat.ONSETS, key=len, reverse=True):
                if s.startswith(onset) and len(s) > len(onset):
                    s = s[len(onset):]                   # qu: q and the medial u together
                    break
        if (s[:1] == "o" and s[1:2] in ("a", "ă", "e")) or (s[:1] == "u" and s[1:2] in ("y", "ê", "â", "ơ")):
            s = s[1:]                                    # the medial
        return "i" + s[1:] if s.startswith("y") else s

    flat = all(not set(unicodedata.normalize("NFD", s)) & OBLIQUE_MARKS for s in (a, b))
    return flat and rime(a) == rime(b)


def rhymes_zh(a, b):
    """A shared 平声 group."""
    from attnlab.poet import jinti
    level = lambda c: {g for g in jinti.groups(c) if "平声" in g}  # noqa: E731
    return bool(level(a) & level(b))


def head(model, lang):
    """(layer, head), from 1: computed here; in the lesson the student reads it off the figures."""
    from attnlab.poet import heads
    best = heads.best_head(model, lang)
    return best.layer, best.head
