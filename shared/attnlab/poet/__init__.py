"""Lesson 10: a character-level GPT that writes verse — lục bát from Truyện Kiều (vi), Tang poems (zh).

- ``corpus``: the shipped corpora as characters, the fixed training/validation split.
- ``model``:  the GPT built from ``attnlab.TransformerBlock`` and the rungs of the loss ladder.
- ``recipe``: the training recipe, the validation loss, the checkpoints.
- ``sample``: sampling with temperature, top-k and top-p, reproducible with a seed.
- ``verse``:  the verse measures: line shape (6/8 syllables, 5/7 characters), poems, lục bát rhyme.
- ``heads``:  which attention heads look back at the rhyme (vi) or the line break (zh).
"""
from __future__ import annotations

from .corpus import LANGS, PROMPTS, Corpus, Vocab, load_corpus, poems, read_text, validation_texts
from .forms import Measure, form
from .report import report_table
from .model import LADDER, PoetConfig, PoetGPT, bigram_loss, make_model, uniform_loss
from .recipe import (LIVE_BATCH, LIVE_STEPS, load_pretrained, new_model, read_checkpoint, save_checkpoint,
                    train, validation_loss)

__all__ = [
    "LANGS", "PROMPTS", "Corpus", "Vocab", "load_corpus", "poems", "read_text", "validation_texts", "Measure", "form", "report_table", "LADDER", "PoetConfig", "PoetGPT",
    "bigram_loss", "make_model", "uniform_loss", "LIVE_BATCH", "LIVE_STEPS", "load_pretrained", "new_model",
    "read_checkpoint", "save_checkpoint", "train", "validation_loss",
]
