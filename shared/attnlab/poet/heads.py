"""Which attention heads look back at the rhyme (vi) or at the line break (zh)?

vi: for each couplet of the validation text (a 6-syllable line, then an 8-syllable one), the
    **queries** are the positions that predict a character of syllable ``query`` of the
    8-syllable line (the space or newline before it and its characters but the last), the
    **keys** the characters of syllable ``key`` of the 6-syllable line (``key=0``: its final
    punctuation). The rhyme relation ``RHYME`` is query 6, key 6.
zh: for each line after the first of a validation poem, the query is the position of character
    ``query`` of the line, the key the position of character ``key`` of the line before
    (``key=0``: its punctuation, ，or 。).
The line-break relation ``BREAK`` (both languages) is query 1, key 0: from the start of a line
to the punctuation that ended the line before.

``attention_mass`` gives, for every (layer, head), the weight the queries put on the keys,
averaged over all query positions, and the uniform baseline: the same if every query spread its
weight evenly over the keys it can see (causal mask: positions 0..t).
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from ..course.fonts import unsupported_chars
from ..training import eval_mode, one_cpu_thread
from .corpus import load_corpus
from .model import PoetConfig
from .verse import PUNCTUATION

MAX_WINDOWS = 200          # couplets (vi) / poems (zh) of the validation text that are measured
RHYME = (6, 6)             # vi: (query, key) of the lục bát rhyme
BREAK = (1, 0)             # both: from a line's first syllable / character to the previous line's punctuation


def _spans(line: str) -> list[tuple[int, int]]:
    """Character spans [start, end) of the syllables of a Vietnamese line, punctuation excluded."""
    spans, i = [], 0
    for word in line.split(" "):
        core = [j for j, c in enumerate(word) if c not in PUNCTUATION]
        if core:
            spans.append((i + core[0], i + core[-1] + 1))
        i += len(word) + 1
    return spans


class Pair(NamedTuple):
    first: int                     # where the earlier line starts in the window
    second: int                    # where the later line starts
    lines: tuple[str, str]


class Window(NamedTuple):
    text: str                      # at most `context` characters
    pairs: tuple[Pair, ...]


def windows(lang: str, context: int) -> list[Window]:
    """vi: one window per 6-8 couplet (the couplet and what precedes it, up to ``context``
    characters); zh: one per poem (its first ``context`` characters), every pair of lines inside."""
    corpus = load_corpus(lang)
    val = corpus.vocab.decode(corpus.val_ids)
    out = []
    if lang == "vi":
        lines = val.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        for i in range(len(lines) - 1):
            a, b = lines[i], lines[i + 1]
            end = starts[i + 2]                                  # just after b's newline
            begin = max(0, end - context)
            if len(_spans(a)) == 6 and len(_spans(b)) == 8 and begin <= starts[i]:
                out.append(Window(val[begin:end], (Pair(starts[i] - begin, starts[i + 1] - begin, (a, b)),)))
    else:
        for poem in val.split("\n\n"):
            lines, pairs, pos = poem.split("\n"), [], 0
            for a, b in zip(lines, lines[1:]):
                second = pos + len(a) + 1
                if second + len(b) <= context:
                    pairs.append(Pair(pos, second, (a, b)))
                pos = second
            if pairs:
                out.append(Window((poem + "\n")[:context], tuple(pairs)))
    return out[:MAX_WINDOWS]


def _positions(pair: Pair, lang: str, query: int, key: int) -> tuple[list[int], list[int]]:
    a, b = pair.lines
    if lang == "vi":
        qs, qe = _spans(b)[query - 1]
        ks, ke = (len(a) - 1, len(a)) if key == 0 else _spans(a)[key - 1]     # key 0: the final punctuation
        return list(range(pair.second + qs - 1, pair.second + qe - 1)), list(range(pair.first + ks, pair.first + ke))
    k = len(a) - 1 if key == 0 else key - 1
    return [pair.second + query - 1], [pair.first + k]


def _check(lang: str, query: int, key: int) -> None:
    limits = {"vi": (8, 6), "zh": (5, 5)}[lang]
    if not (1 <= query <= limits[0] and 0 <= key <= limits[1]):
        raise ValueError(f"{lang}: query must be 1..{limits[0]} and key 0..{limits[1]} (0: the punctuation), "
                         f"got query={query}, key={key}")


@one_cpu_thread
@torch.no_grad()
def weights_on(model, lang: str) -> tuple[list[Window], torch.Tensor]:
    """The measured windows and every attention weight on them: (N, L, H, T, T), padded at the right."""
    wins = windows(lang, model.config.context)
    vocab = load_corpus(lang).vocab
    T = max(len(w.text) for w in wins)
    ids = torch.zeros(len(wins), T, dtype=torch.long)           # right padding: never seen (causal)
    for i, w in enumerate(wins):
        ids[i, : len(w.text)] = torch.tensor(vocab.encode(w.text))
    with eval_mode(model):
        _, weights = model.features(ids, need_weights=True)       # no output layer: not needed here
    return wins, torch.stack(weights, dim=1)


class HeadMass(NamedTuple):
    mass: torch.Tensor             # (layers, heads): mean weight of the queries on the keys
    uniform: float                 # the same for attention spread evenly over the visible keys
    queries: int                   # how many query positions were averaged


def attention_mass(model, lang: str, query: int | None = None, key: int | None = None,
                   weights=None) -> HeadMass:
    """Per (layer, head), the mean weight from query positions ``query`` to key positions ``key`` (see above).

    The default is the line-break relation ``BREAK``. ``weights``: the result of
    ``weights_on(model, lang)``, to measure several relations without running the model again.
    """
    query, key = BREAK if query is None and key is None else (query, key)
    _check(lang, query, key)
    wins, w = weights if weights is not None else weights_on(model, lang)
    total, uniform, n = 0.0, 0.0, 0
    for i, win in enumerate(wins):
        for pair in win.pairs:
            qs, ks = _positions(pair, lang, query, key)
            block = w[i][:, :, qs][..., ks]                          # (L, H, |q|, |k|)
            total = total + block.sum(-1).sum(-1)
            uniform += sum(len([k for k in ks if k <= q]) / (q + 1) for q in qs)
            n += len(qs)
    return HeadMass(total / n, uniform / n, n)


class HeadScore(NamedTuple):
    layer: int                     # 1-based, as in the figure titles
    head: int                      # 1-based
    mass: float
    uniform: float


def best_head(model, lang: str, query: int = BREAK[0], key: int = BREAK[1], weights=None) -> HeadScore:
    """The (layer, head), counted from 1, with the most weight from ``query`` to ``key`` (default: ``BREAK``)."""
    m = attention_mass(model, lang, query, key, weights)
    best = int(m.mass.argmax())
    layer, head = divmod(best, m.mass.shape[1])
    return HeadScore(layer + 1, head + 1, float(m.mass.flatten()[best]), m.uniform)


def controls(model, lang: str, layer: int, head: int, query: int = BREAK[0], key: int = BREAK[1],
             weights=None) -> dict[str, dict[int, float]]:
    """The head (1-based) on the other positions: ``by_query`` (the same key, every query) and
    ``by_key`` (the same query, every key; 0 is the punctuation), with the uniform baseline of each."""
    q0, k0 = query, key
    queries = range(1, 9) if lang == "vi" else range(1, 6)
    keys = range(0, 7) if lang == "vi" else range(0, 6)
    w = weights if weights is not None else weights_on(model, lang)
    by_query = {q: attention_mass(model, lang, q, k0, w) for q in queries}
    by_key = {k: attention_mass(model, lang, q0, k, w) for k in keys}
    pick = lambda m: float(m.mass[layer - 1, head - 1])  # noqa: E731
    return {"by_query": {q: pick(m) for q, m in by_query.items()},
            "by_key": {k: pick(m) for k, m in by_key.items()},
            "uniform_by_query": {q: m.uniform for q, m in by_query.items()},
            "uniform_by_key": {k: m.uniform for k, m in by_key.items()}}


def default_verse(lang: str, context: int = PoetConfig.context) -> str:
    """The explorer's verse, from the measured windows of the validation text (``windows``), every
    line ending with its line break as in the corpus: the first whose characters the course fonts
    draw (the lesson's static figure). vi: a 6-8 couplet (the line-break and the rhyme relation
    both fall inside it); zh: the lines of a poem that fit the context."""
    for win in windows(lang, context):
        if lang == "vi":
            lines = win.pairs[0].lines
        else:
            lines = [win.pairs[0].lines[0]] + [pair.lines[1] for pair in win.pairs]
        text = "".join(line + "\n" for line in lines)
        if not unsupported_chars(text):
            return text
    raise RuntimeError(f"no {lang} validation verse that the course fonts draw")


@one_cpu_thread
@torch.no_grad()
def attention_for(model, lang: str, text: str) -> tuple[list[str], list[torch.Tensor]]:
    """For an explorer: ``(characters, [weights (H, T, T) per layer])`` for one verse of at most
    ``context`` characters (the same shape of answer as ``attnlab.tiny.attention_for``)."""
    ids = torch.tensor([load_corpus(lang).vocab.encode(text)])
    with eval_mode(model):
        _, weights = model.features(ids, need_weights=True)
    return list(load_corpus(lang).vocab.decode(ids[0])), [w[0] for w in weights]
