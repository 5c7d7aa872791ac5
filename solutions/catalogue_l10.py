"""Wrong-solution catalogue for lesson 10, in the interface of ``solutions/catalogue.py``.

``EXERCISES``: one entry per graded exercise: its key (the registry key, ``attnlab.exercises.EXERCISES``),
the lesson, the checker (``module:evaluate_x``), the names the TODO cell defines, ``call``: the
checker's arguments in order (the student's names, and ``model`` — the lesson's checkpoint,
``attnlab.poet.load_pretrained(LANG)`` — or ``LANG``, the corpus language, which the runner puts in the
namespace before it runs a source), ``langs``: the corpus languages to check an entry in (a wrong
entry may narrow them), ``reference``: the reference solution's source (per language where the
exercise depends on it: a dict), and plausible wrong solutions, each with the hint key its checker
must give. The predict-then-run question (``my_guess``, ``graded=False``) is not graded and not in
the registry; its entry checks its hints, with ``LOW``/``HIGH`` the line-shape rates the lesson
measures on the checkpoint's stored samples at temperatures 0.3 and 1.5.
``tests/test_catalogue_l10.py`` runs every entry on several seeds.
"""
from __future__ import annotations

import inspect
import textwrap

from . import l10


def _as(fn, name: str, prelude: str = "") -> str:
    """The source of a reference solution of ``solutions/l10.py``, renamed to the notebook's name."""
    src = textwrap.dedent(inspect.getsource(fn)).replace(f"def {fn.__name__}(", f"def {name}(", 1)
    return prelude + src


_PRELUDE = "import unicodedata\n\nimport torch\n\nfrom attnlab.poet import forms, jinti, luc_bat\n\n" \
           "TONE_MARKS = {'\\u0300', '\\u0301', '\\u0303', '\\u0309', '\\u0323'}\nOBLIQUE_MARKS = TONE_MARKS - {'\\u0300'}\n" \
           "VOWELS = 'aăâeêioôơuưy'\nform = forms.form(LANG)\n\n"
_HEAD_REF = '''\
from attnlab.poet import heads

_best = heads.best_head(model, LANG)
my_head = (_best.layer, _best.head)
'''


def _probs(body: str) -> str:
    return "import torch\n\ndef my_probs(logits, temperature, top_k):\n" + body


def _pattern(body: str) -> str:
    return _PRELUDE + "def my_pattern(line):\n" + body


def _rhymes_with(*changes: tuple[str, str]) -> str:
    """The reference vần chính test changed in one place (a typical slip)."""
    src = _as(l10.rhymes_vi, "my_rhymes", _PRELUDE)
    for old, new in changes:
        assert old in src, old
        src = src.replace(old, new)
    return src


_TOPK = ("    if top_k is not None:\n"
         "        kth = p.topk(top_k).values[..., -1:]\n"
         "        p = torch.where(p >= kth, p, 0.0)\n"
         "        p = p / p.sum(-1, keepdim=True)\n"
         "    return p\n")
_TONE_OF = ("    out = []\n"
            "    for s in form.units(line):\n"
            "        marks = set(unicodedata.normalize('NFD', s))\n")
_LEVEL = ("    out = []\n"
          "    for c in form.units(line):\n"
          "        groups = jinti.groups(c)\n")

EXERCISES = [
    dict(key="l10.probs", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_probs",
         names=("my_probs",), call=("my_probs",), langs=("vi",), reference=_as(l10.probs, "my_probs", "import torch\n\n"),
         wrong=[
             dict(label="multiplies by the temperature", hint="l10.hint.temp_multiply",
                  source=_probs("    p = torch.softmax(logits * temperature, dim=-1)\n" + _TOPK)),
             dict(label="ignores the temperature", hint="l10.hint.temp_ignored",
                  source=_probs("    p = torch.softmax(logits, dim=-1)\n" + _TOPK)),
             dict(label="the square root of the temperature", hint="l10.hint.temp_wrong",
                  source=_probs("    p = torch.softmax(logits / temperature ** 0.5, dim=-1)\n" + _TOPK)),
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
                 "    if top_k is not None:\n"
                 "        kth = p.topk(top_k).values[..., -1:]\n"
                 "        p = torch.where(p > kth, p, 0.0)\n"
                 "        p = p / p.sum(-1, keepdim=True)\n"
                 "    return p\n")),
             dict(label="compares with the largest, not the k-th", hint="l10.hint.topk_kth", source=_probs(
                 "    p = torch.softmax(logits / temperature, dim=-1)\n"
                 "    if top_k is not None:\n"
                 "        kth = p.topk(top_k).values[0]\n"
                 "        p = torch.where(p >= kth, p, 0.0)\n"
                 "        p = p / p.sum(-1, keepdim=True)\n"
                 "    return p\n")),
             dict(label="exactly k kept: ties dropped (the student report)", hint="l10.hint.topk_ties", source=_probs(
                 "    z = logits / temperature\n"
                 "    if top_k is not None:\n"
                 "        idx = z.topk(top_k).indices\n"
                 "        keep = torch.zeros_like(z, dtype=torch.bool)\n"
                 "        keep[idx] = True\n"
                 "        z = z.masked_fill(~keep, float('-inf'))\n"
                 "    return torch.softmax(z, dim=-1)\n")),
             dict(label="top_k=None unhandled (the student report)", hint="l10.hint.topk_none", source=_probs(
                 "    z = logits / temperature\n"
                 "    kth = z.topk(top_k).values[-1]\n"
                 "    return torch.softmax(torch.where(z >= kth, z, -torch.inf), dim=-1)\n")),
             dict(label="forgets top-k", hint="l10.hint.topk_ignored", source=_probs(
                 "    return torch.softmax(logits / temperature, dim=-1)\n")),
             dict(label="returns the scaled logits (the student report)", hint="l10.hint.no_softmax", source=_probs(
                 "    return logits / temperature\n")),
             dict(label="returns log_softmax", hint="l10.hint.no_softmax", source=_probs(
                 "    return torch.log_softmax(logits / temperature, dim=-1)\n")),
             dict(label="keeps a batch dimension", hint="l10.hint.probs_shape", source=_probs(
                 "    return torch.softmax(logits / temperature, dim=-1)[None]\n")),
             dict(label="the probabilities sorted, not by character", hint="l10.hint.probs_values", source=_probs(
                 "    p = torch.softmax(logits / temperature, dim=-1)\n" + _TOPK.replace(
                     "    return p\n", "    return p.sort(descending=True).values\n"))),
             dict(label="returns a list", hint="l10.hint.not_tensor", source=_probs(
                 "    return torch.softmax(logits / temperature, dim=-1).tolist()\n")),
             dict(label="calls the package", hint="l10.hint.forbidden", source=(
                 "from attnlab.poet import sample\n\n"
                 "def my_probs(logits, temperature, top_k):\n"
                 "    return sample.next_token_probs(logits, temperature, top_k)\n")),
         ]),
    dict(key="l10.pattern", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_pattern",
         names=("my_pattern",), call=("my_pattern", "LANG"), langs=("vi", "zh"),
         reference={"vi": _as(l10.pattern_vi, "my_pattern", _PRELUDE), "zh": _as(l10.pattern_zh, "my_pattern", _PRELUDE)},
         wrong=[
             dict(label="huyền counted as trắc", hint="l10.hint.huyen", langs=("vi",), source=_pattern(
                 _TONE_OF + "        out.append('T' if marks & TONE_MARKS else 'B')\n    return out\n")),
             dict(label="only sắc and nặng are trắc", hint="l10.hint.oblique_tones", langs=("vi",), source=_pattern(
                 _TONE_OF + "        out.append('T' if marks & {'\\u0301', '\\u0323'} else 'B')\n    return out\n")),
             dict(label="every combining mark but huyền is a tone", hint="l10.hint.vowel_marks", langs=("vi",), source=_pattern(
                 _TONE_OF + "        out.append('T' if any(unicodedata.combining(m) and m != '\\u0300' for m in marks) else 'B')\n"
                 "    return out\n")),
             dict(label="composed letters only, own split: no NFD", hint="l10.hint.nfd", langs=("vi",), source=_pattern(
                 "    oblique = set('áắấéếíóốớúứýảẳẩẻểỉỏổởủửỷãẵẫẽễĩõỗỡũữỹạặậẹệịọộợụựỵ')\n"
                 "    words = [w.strip(',.;:!?') for w in line.split()]\n"
                 "    return ['T' if set(w.lower()) & oblique else 'B' for w in words if w]\n")),
             dict(label="split(' ') keeps the empty strings and the dots", hint="l10.hint.pattern_length", langs=("vi",),
                  source=_pattern(
                 "    out = []\n"
                 "    for s in line.split(' '):\n"
                 "        marks = set(unicodedata.normalize('NFD', s))\n"
                 "        out.append('T' if marks & OBLIQUE_MARKS else 'B')\n"
                 "    return out\n")),
             dict(label="a string, not a list", hint="l10.hint.pattern_string", langs=("vi",), source=_pattern(
                 _TONE_OF + "        out.append('T' if marks & OBLIQUE_MARKS else 'B')\n    return ''.join(out)\n")),
             dict(label="words for labels", hint="l10.hint.pattern_labels", langs=("vi",), source=_pattern(
                 _TONE_OF + "        out.append('trắc' if marks & OBLIQUE_MARKS else 'bằng')\n    return out\n")),
             dict(label="the mark looked for on the last letter only", hint="l10.hint.pattern_values", langs=("vi",),
                  source=_pattern(
                 "    out = []\n"
                 "    for s in form.units(line):\n"
                 "        marks = set(unicodedata.normalize('NFD', s[-1]))\n"
                 "        out.append('T' if marks & OBLIQUE_MARKS else 'B')\n"
                 "    return out\n")),
             dict(label="a set of classes", hint="l10.hint.pattern_type", langs=("vi", "zh"), source=_pattern(
                 "    return {form.units(line)[0]}\n")),
             dict(label="两读 left out as None", hint="l10.hint.pattern_values", langs=("zh",), source=_pattern(
                 _LEVEL + "        kinds = {'平声' in g for g in groups}\n"
                 "        out.append('平' if kinds == {True} else '仄' if kinds == {False} else None)\n"
                 "    return out\n")),
             dict(label="calls the package", hint="l10.hint.forbidden", langs=("vi", "zh"), source=_pattern(
                 "    return [form.tone_class(u) for u in form.units(line)]\n")),
             dict(label="上平声 read as 上声", hint="l10.hint.shangping", langs=("zh",), source=_pattern(
                 _LEVEL + "        kinds = {('平' in g and '上' not in g) for g in groups}\n"
                 "        out.append(None if not kinds else '平' if kinds == {True} else '仄' if kinds == {False} else '两读')\n"
                 "    return out\n")),
             dict(label="only the first group", hint="l10.hint.either", langs=("zh",), source=_pattern(
                 _LEVEL + "        out.append(None if not groups else '平' if '平声' in groups[0] else '仄')\n    return out\n")),
             dict(label="入声 counted as level", hint="l10.hint.rusheng", langs=("zh",), source=_pattern(
                 _LEVEL + "        kinds = {('平声' in g or g.startswith('入')) for g in groups}\n"
                 "        out.append(None if not kinds else '平' if kinds == {True} else '仄' if kinds == {False} else '两读')\n"
                 "    return out\n")),
             dict(label="a missing character called 仄", hint="l10.hint.missing_char", langs=("zh",), source=_pattern(
                 _LEVEL + "        kinds = {'平声' in g for g in groups}\n"
                 "        out.append('平' if kinds == {True} else '两读' if kinds == {True, False} else '仄')\n"
                 "    return out\n")),
             dict(label="a CJK-range filter (the engineering report: 䪥, 𦶟)", hint="l10.hint.cjk_range", langs=("zh",),
                  source=_pattern(
                 "    out = []\n"
                 "    for c in [ch for ch in line if '\\u4e00' <= ch <= '\\u9fff']:\n"
                 "        kinds = {'平声' in g for g in jinti.groups(c)}\n"
                 "        out.append(None if not kinds else '平' if kinds == {True} else '仄' if kinds == {False} else '两读')\n"
                 "    return out\n")),
         ]),
    dict(key="l10.rhymes", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_rhymes",
         names=("my_rhymes",), call=("my_rhymes", "LANG"), langs=("vi", "zh"),
         reference={"vi": _as(l10.rhymes_vi, "my_rhymes", _PRELUDE),
                    "zh": _as(l10.rhymes_zh, "my_rhymes", _PRELUDE)},
         wrong=[
             dict(label="the tone ignored", hint="l10.hint.tone_ignored", langs=("vi",), source=_rhymes_with(
                 ("return flat and rime(a) == rime(b)", "return rime(a) == rime(b)"))),
             dict(label="the medial kept", hint="l10.hint.medial", langs=("vi",), source=_rhymes_with(
                 ("s = s[1:]                                    # the medial", "pass"))),
             dict(label="vần thông accepted", hint="l10.hint.thong", langs=("vi",), source=_rhymes_with(
                 ("return flat and rime(a) == rime(b)",
                  "near = lambda s: rime(s).replace('â', 'a').replace('ô', 'o').replace('ư', 'u')\n"
                  "    return flat and near(a) == near(b)"))),
             dict(label="gi always a two-letter onset", hint="l10.hint.gi_qu", langs=("vi",), source=_rhymes_with(
                 ("s = s[1:]                                    # gì, gìn: the i is the rime's", "s = s[2:] or s[1:]"))),
             dict(label="y not read as i", hint="l10.hint.y_i", langs=("vi",), source=_rhymes_with(
                 ('return "i" + s[1:] if s.startswith("y") else s', "return s"))),
             dict(label="the whole syllables compared", hint="l10.hint.onset", langs=("vi",), source=_rhymes_with(
                 ("return flat and rime(a) == rime(b)", "return flat and a.lower() == b.lower()"))),
             dict(label="calls the package", hint="l10.hint.forbidden", langs=("vi", "zh"), source=(
                 "def my_rhymes(a, b):\n"
                 "    return form.rhymes(a, b)\n")),
             dict(label="only the same character rhymes", hint="l10.hint.rhymes_values", langs=("zh",), source=(
                 "def my_rhymes(a, b):\n"
                 "    return a == b\n")),
             dict(label="returns a number", hint="l10.hint.rhymes_type", langs=("zh",), source=(
                 _PRELUDE + "def my_rhymes(a, b):\n"
                 "    return len({g for g in jinti.groups(a) if '平声' in g} & {g for g in jinti.groups(b) if '平声' in g})\n")),
             dict(label="any shared group, oblique ones too", hint="l10.hint.ze_groups", langs=("zh",), source=(
                 _PRELUDE + "def my_rhymes(a, b):\n"
                 "    return bool(set(jinti.groups(a)) & set(jinti.groups(b)))\n")),
             dict(label="only the first groups compared", hint="l10.hint.first_group", langs=("zh",), source=(
                 _PRELUDE + "def my_rhymes(a, b):\n"
                 "    ga, gb = jinti.groups(a), jinti.groups(b)\n"
                 "    return bool(ga and gb) and ga[0] == gb[0] and '平声' in ga[0]\n")),
             dict(label="a missing character compared by itself", hint="l10.hint.rhyme_missing", langs=("zh",), source=(
                 _PRELUDE + "def my_rhymes(a, b):\n"
                 "    if not jinti.groups(a) or not jinti.groups(b):\n"
                 "        return True\n"
                 "    return bool({g for g in jinti.groups(a) if '平声' in g} & {g for g in jinti.groups(b) if '平声' in g})\n")),
         ]),
    dict(key="l10.head", lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_head",
         names=("my_head",), call=("model", "LANG", "my_head"), langs=("vi", "zh"), reference=_HEAD_REF, wrong=[
             dict(label="counted from 0", hint="l10.hint.head_zero_based", source=(
                 "from attnlab.poet import heads\n\n"
                 "_best = heads.best_head(model, LANG)\n"
                 "my_head = (_best.layer - 1, _best.head - 1)\n")),
             dict(label="a head that does not exist", hint="l10.hint.head_range", source="my_head = (9, 1)\n"),
             dict(label="a string (the student report: the format hint gave (2, 3))", hint="l10.hint.head_format",
                  source='my_head = "(2, 3)"\n'),
             dict(label="floats", hint="l10.hint.head_format", source="my_head = (2.0, 3.0)\n"),
             dict(label="three numbers", hint="l10.hint.head_format", source="my_head = (2, 3, 0.56)\n"),
             dict(label="the lesson's example", hint="l10.hint.head_weak", source="my_head = (4, 2)\n"),
             dict(label="the weakest head", hint="l10.hint.head_weak", source=(
                 "from attnlab.poet import heads\n\n"
                 "_m = heads.attention_mass(model, LANG).mass\n"
                 "_l, _h = divmod(int(_m.argmin()), _m.shape[1])\n"
                 "my_head = (_l + 1, _h + 1)\n")),
         ]),
    dict(key="l10.guess", graded=False, lesson="10_poet_gpt", evaluate="attnlab.exercises.l10:evaluate_guess",
         names=("my_guess",), call=("my_guess", "LOW", "HIGH"), langs=("vi", "zh"), reference="my_guess = True\n",
         wrong=[
             dict(label="the other guess", hint="l10.hint.guess_other", source="my_guess = False\n"),
             dict(label="a string", hint="l10.hint.guess_format", source='my_guess = "True"\n'),
             dict(label="a number", hint="l10.hint.guess_format", source="my_guess = 1\n"),
         ]),
]
