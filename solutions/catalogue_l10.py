"""Wrong-solution catalogue for lesson 10, in the interface of ``solutions/catalogue.py``.

``EXERCISES``: one entry per graded exercise: its key, the lesson, the checker
(``module:evaluate_x``), the names the TODO cell defines, the reference solution's source and
plausible wrong solutions, each with the hint key its checker must give. ``call`` lists the
checker's arguments in order: the student's names, and ``model`` (the lesson's checkpoint,
``attnlab.poet.load_pretrained(lang)``) or ``lang`` (the corpus language, "vi" or "zh"), which
the runner puts in the namespace before it runs a source; ``langs`` are the corpus languages to
check an entry in (a wrong entry may narrow them). The predict-then-run question
(``my_guess``) is not graded and has no entry. ``tests/test_catalogue_l10.py`` runs them all.
"""
from __future__ import annotations

_PROBS_REF = '''\
import torch

def my_probs(logits, temperature, top_k):
    p = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None:
        kth = p.topk(top_k).values[..., -1:]
        p = torch.where(p >= kth, p, 0.0)
        p = p / p.sum(-1, keepdim=True)
    return p
'''

_UNITS_REF = '''\
from attnlab.poet.verse import PUNCTUATION

def my_units(line, lang):
    if lang == "vi":
        words = ("".join(c for c in w if c not in PUNCTUATION) for w in line.split())
        return [w for w in words if w]
    return [c for c in line if c not in PUNCTUATION and not c.isspace()]
'''

_HEAD_REF = '''\
from attnlab.poet import heads

_best = heads.best_head(model, lang)
my_head = (_best.layer, _best.head)
'''


def _probs(body: str) -> str:
    return "import torch\n\ndef my_probs(logits, temperature, top_k):\n" + body


EXERCISES = [
    dict(key="l10.probs", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_probs",
         names=("my_probs",), call=("my_probs",), langs=("vi",), reference=_PROBS_REF, wrong=[
             dict(label="multiplies by the temperature", hint="l10.hint.temp_multiply", source=_probs(
                 "    p = torch.softmax(logits * temperature, dim=-1)\n"
                 "    if top_k is not None:\n"
                 "        kth = p.topk(top_k).values[..., -1:]\n"
                 "        p = torch.where(p >= kth, p, 0.0)\n"
                 "        p = p / p.sum(-1, keepdim=True)\n"
                 "    return p\n")),
             dict(label="ignores the temperature", hint="l10.hint.temp_ignored", source=_probs(
                 "    p = torch.softmax(logits, dim=-1)\n"
                 "    if top_k is not None:\n"
                 "        kth = p.topk(top_k).values[..., -1:]\n"
                 "        p = torch.where(p >= kth, p, 0.0)\n"
                 "        p = p / p.sum(-1, keepdim=True)\n"
                 "    return p\n")),
             dict(label="does not renormalise after top-k", hint="l10.hint.not_normalised", source=_probs(
                 "    p = torch.softmax(logits / temperature, dim=-1)\n"
                 "    if top_k is not None:\n"
                 "        kth = p.topk(top_k).values[..., -1:]\n"
                 "        p = torch.where(p >= kth, p, 0.0)\n"
                 "    return p\n")),
             dict(label="keeps the k smallest", hint="l10.hint.topk_smallest", source=_probs(
                 "    p = torch.softmax(logits / temperature, dim=-1)\n"
                 "    if top_k is not None:\n"
                 "        kth = p.topk(top_k, largest=False).values[..., -1:]\n"
                 "        p = torch.where(p <= kth, p, 0.0)\n"
                 "        p = p / p.sum(-1, keepdim=True)\n"
                 "    return p\n")),
             dict(label="strict > drops the k-th", hint="l10.hint.topk_off_by_one", source=_probs(
                 "    p = torch.softmax(logits / temperature, dim=-1)\n"
                 "    if top_k is not None and top_k > 1:\n"
                 "        kth = p.topk(top_k).values[..., -1:]\n"
                 "        p = torch.where(p > kth, p, 0.0)\n"
                 "        p = p / p.sum(-1, keepdim=True)\n"
                 "    elif top_k == 1:\n"
                 "        p = torch.where(p >= p.max(), p, 0.0)\n"
                 "        p = p / p.sum()\n"
                 "    return p\n")),
             dict(label="forgets top-k", hint="l10.hint.topk_ignored", source=_probs(
                 "    return torch.softmax(logits / temperature, dim=-1)\n")),
             dict(label="returns the scaled logits", hint="l10.hint.not_normalised", source=_probs(
                 "    return logits / temperature\n")),
             dict(label="returns a list", hint="l10.hint.not_tensor", source=_probs(
                 "    return torch.softmax(logits / temperature, dim=-1).tolist()\n")),
         ]),
    dict(key="l10.units", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_units",
         names=("my_units",), call=("my_units", "lang"), langs=("vi", "zh"), reference=_UNITS_REF, wrong=[
             dict(label="split(' ') keeps empty strings", hint="l10.hint.units_empty", langs=("vi",), source=(
                 "from attnlab.poet.verse import PUNCTUATION\n\n"
                 "def my_units(line, lang):\n"
                 "    return [\"\".join(c for c in w if c not in PUNCTUATION) for w in line.split(' ')]\n")),
             dict(label="punctuation kept", hint="l10.hint.units_punct", langs=("vi",), source=(
                 "def my_units(line, lang):\n"
                 "    return line.split()\n")),
             dict(label="letters instead of syllables", hint="l10.hint.units_chars", langs=("vi",), source=(
                 "def my_units(line, lang):\n"
                 "    return [c for c in line if c.isalpha()]\n")),
             dict(label="returns the count", hint="l10.hint.units_count", langs=("vi", "zh"), source=(
                 "def my_units(line, lang):\n"
                 "    return len(line.split()) if lang == 'vi' else len(line) - 1\n")),
             dict(label="punctuation counted as a character", hint="l10.hint.units_punct", langs=("zh",), source=(
                 "def my_units(line, lang):\n"
                 "    return [c for c in line.strip()]\n")),
             dict(label="split at spaces in Chinese", hint="l10.hint.units_words", langs=("zh",), source=(
                 "def my_units(line, lang):\n"
                 "    return [w.strip('，。') for w in line.split()]\n")),
         ]),
    dict(key="l10.head", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_head",
         names=("my_head",), call=("model", "lang", "my_head"), langs=("vi", "zh"), reference=_HEAD_REF, wrong=[
             dict(label="counted from 0", hint="l10.hint.head_zero_based", source=(
                 "from attnlab.poet import heads\n\n"
                 "_best = heads.best_head(model, lang)\n"
                 "my_head = (_best.layer - 1, _best.head - 1)\n")),
             dict(label="a head that does not exist", hint="l10.hint.head_range", source="my_head = (9, 1)\n"),
             dict(label="a string", hint="l10.hint.head_format", source='my_head = "2, 3"\n'),
             dict(label="floats", hint="l10.hint.head_format", source="my_head = (2.0, 3.0)\n"),
             dict(label="the weakest head", hint="l10.hint.head_weak", source=(
                 "from attnlab.poet import heads\n\n"
                 "_m = heads.attention_mass(model, lang).mass\n"
                 "_l, _h = divmod(int(_m.argmin()), _m.shape[1])\n"
                 "my_head = (_l + 1, _h + 1)\n")),
         ]),
]
