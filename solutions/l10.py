"""Reference solutions for lesson 10 (a GPT that writes verse). For instructors; no notebook imports this."""
from __future__ import annotations

import torch

PUNCTUATION = set(",.;:!?…-–—\"'“”‘’()[]«»，。、；：！？")


def probs(logits, temperature, top_k):
    """Softmax of logits / temperature; with top_k, only the k most likely kept, renormalised."""
    p = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None:
        kth = p.topk(top_k).values[..., -1:]            # the k-th largest probability
        p = torch.where(p >= kth, p, 0.0)
        p = p / p.sum(-1, keepdim=True)
    return p


def units(line, lang):
    """vi: the syllables of the line (split at spaces, punctuation stripped, empty ones dropped);
    zh: its characters, punctuation and spaces left out."""
    if lang == "vi":
        words = ("".join(c for c in w if c not in PUNCTUATION) for w in line.split())
        return [w for w in words if w]
    return [c for c in line if c not in PUNCTUATION and not c.isspace()]


def head(model, lang):
    """(layer, head), from 1: computed here; in the lesson the student reads it off the table."""
    from attnlab.poet import heads
    best = heads.best_head(model, lang)
    return best.layer, best.head
