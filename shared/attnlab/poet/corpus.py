"""The verse corpora of lesson 10, as characters: Truyện Kiều (vi) and Tang poems (zh).

Both files ship in the package (``attnlab/data/corpora/``, with PROVENANCE.md):

- ``truyen_kieu.txt``: Truyện Kiều (Nguyễn Du), 3,254 lines of lục bát, one verse line per
  line, NFC. Odd lines have 6 syllables, even lines 8.
- ``tang_jueju_lushi.txt``: 8,703 Tang poems of 4 or 8 lines of 5 or 7 characters, simplified
  Chinese, one verse line per line (each ends with ，or 。), a blank line between poems.

Tokens are characters (NFC): 130 of them in the Vietnamese text, 5,117 in the Chinese one.
The split is fixed: blocks of 40 lines (vi: 20 couplets) or single poems (zh), every tenth one
held out for validation, so the validation text comes from the whole work.
"""
from __future__ import annotations

import dataclasses
import functools
import pathlib
import unicodedata

import torch

from ..course.i18n import t

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "corpora"
FILES = {"vi": "truyen_kieu.txt", "zh": "tang_jueju_lushi.txt"}
LANGS = tuple(FILES)
VI_BLOCK = 40            # lines per validation block in Truyện Kiều (20 couplets)
HOLD_OUT_EVERY = 10      # every tenth block (vi) / poem (zh) is validation text


def _lang(lang: str) -> str:
    code = str(lang).lower()
    if code not in FILES:
        raise ValueError(t("poet.err.lang", got=repr(lang), langs=", ".join(LANGS)))
    return code


def read_text(lang: str) -> str:
    """The whole corpus of ``lang`` ('vi' or 'zh') as one NFC string (newline-terminated lines)."""
    return (DATA / FILES[_lang(lang)]).read_text(encoding="utf-8")


def poems(lang: str) -> list[list[str]]:
    """vi: the couplets of Truyện Kiều ([6-syllable line, 8-syllable line]); zh: the poems (lists of lines)."""
    text = read_text(lang)
    if _lang(lang) == "vi":
        lines = text.splitlines()
        return [lines[i:i + 2] for i in range(0, len(lines), 2)]
    return [p.splitlines() for p in text.strip("\n").split("\n\n")]


def _split(lang: str) -> tuple[str, str]:
    """(training text, validation text) of ``lang``."""
    if _lang(lang) == "vi":
        lines = read_text(lang).splitlines(keepends=True)
        blocks = [lines[i:i + VI_BLOCK] for i in range(0, len(lines), VI_BLOCK)]
        pick = [i % HOLD_OUT_EVERY == HOLD_OUT_EVERY - 1 for i in range(len(blocks))]
        join = lambda keep: "".join("".join(b) for b, v in zip(blocks, pick) if v == keep)  # noqa: E731
    else:
        units = ["\n".join(p) + "\n\n" for p in poems(lang)]
        pick = [i % HOLD_OUT_EVERY == HOLD_OUT_EVERY - 1 for i in range(len(units))]
        join = lambda keep: "".join(u for u, v in zip(units, pick) if v == keep)  # noqa: E731
    return join(False), join(True)


@dataclasses.dataclass(frozen=True)
class Vocab:
    """Characters <-> ids. ``chars`` is sorted, so the ids are the same on every machine."""
    chars: tuple[str, ...]

    @functools.cached_property
    def index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def unknown(self, text: str) -> list[str]:
        """The distinct characters of ``text`` (after NFC) that are not in the vocabulary, in order."""
        seen: dict[str, None] = {}
        for c in unicodedata.normalize("NFC", text):
            if c not in self.index:
                seen[c] = None
        return list(seen)

    def encode(self, text: str) -> list[int]:
        """NFC text -> ids; a character outside the vocabulary is refused, naming it."""
        text = unicodedata.normalize("NFC", text)
        missing = self.unknown(text)
        if missing:
            raise ValueError(t("poet.err.unknown_chars", chars=", ".join(repr(c) for c in missing)))
        return [self.index[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[i] for i in torch.as_tensor(ids).tolist())


class Corpus:
    """One language's corpus: the vocabulary, the training and validation ids."""

    def __init__(self, lang: str):
        self.lang = _lang(lang)
        self.text = read_text(self.lang)
        self.vocab = Vocab(tuple(sorted(set(self.text))))
        train, val = _split(self.lang)
        self.train_ids = torch.tensor(self.vocab.encode(train), dtype=torch.long)
        self.val_ids = torch.tensor(self.vocab.encode(val), dtype=torch.long)

    def __repr__(self) -> str:
        return (f"Corpus({self.lang!r}: {len(self.vocab)} characters, "
                f"{len(self.train_ids)} training / {len(self.val_ids)} validation tokens)")

    def batches(self, batch_size: int, context: int, seed: int):
        """Endless seeded batches (inputs (B, T), targets (B, T)) of random training windows."""
        g = torch.Generator().manual_seed(seed)
        data = self.train_ids
        offsets = torch.arange(context + 1)
        while True:
            start = torch.randint(0, len(data) - context - 1, (batch_size, 1), generator=g)
            rows = data[start + offsets]                                        # (B, T + 1)
            yield rows[:, :-1], rows[:, 1:]

    def val_windows(self, context: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Every non-overlapping validation window: (inputs (N, T), targets (N, T)), the same every time."""
        data = self.val_ids
        n = (len(data) - 1) // context
        x = data[: n * context].view(n, context)
        y = data[1: n * context + 1].view(n, context)
        return x, y


@functools.lru_cache(maxsize=None)
def load_corpus(lang: str) -> Corpus:
    """The corpus of ``lang`` ('vi' or 'zh'), read once per process."""
    return Corpus(_lang(lang))
