"""Lesson 08: a tiny encoder-decoder that writes numbers in words (Vietnamese or Chinese).

The task. The source is the digits of a number 0..99 999, the target its words
(``attnlab.numwords``)::

    source  1 0 5                 target  <s> một trăm linh năm </s>      (vi)
                                          <s> 一 百 零 五 </s>              (zh)

One model per language (``make_model(lang)``): each lesson trains only its own language inside
its time budget, the two vocabularies never compete for the same small model, and the heads of
a model have one job, which makes them easier to read.

Layout. Source ids: ``PAD = 0``, digit d -> d + 1, right-padded to the longest number of the
batch (``S`` ≤ 5). Target ids: ``PAD = 0``, ``BOS = 1``, ``EOS = 2``, then the words of
``numwords.VOCAB[lang]``; a row is ``BOS w_1 .. w_n EOS PAD ..``. Teacher forcing: the decoder
reads the target shifted right by one, ``tgt_in = tgt[:, :-1]`` (starting with BOS), and
predicts ``tgt_out = tgt[:, 1:]``; the loss skips PAD. Masks (bool, True = may attend):

- encoder self-attention: ``padding_mask(src)`` (B, 1, 1, S) — no query reads a padded digit;
- decoder self-attention: ``decoder_mask(tgt_in)`` (B, 1, T, T) — causal AND padding;
- cross-attention: ``padding_mask(src)`` (B, 1, 1, S) — target words never read padded digits.

Inference: greedy decoding (``generate``), with or without a KV cache. With the cache, each step
feeds only the newest token: its one query attends to the cached keys of every earlier position
and itself, all in its past, so the decoder self-attention needs no mask at all.

Held-out numbers come from ``HELDOUT_SEED`` (1 000 numbers of 3 to 5 digits) and are never in a
training batch. All 100 numbers below 100 are in training: they are the words of the language.

This module is the lesson's one place: its recipe and thresholds and its training
(``training.fit``), with every name of the lesson gathered from the modules that each have one
concern: the data (``attnlab.number_data``), the model and its checkpoints
(``attnlab.models.translator``), decoding and the KV cache (``attnlab.decoding``), the attention
analysis (``attnlab.translator_analysis``). Main entry points: ``make_model``, ``train``,
``accuracy``, ``generate``, ``translate``, ``alignment_mass``, ``aligned_head``,
``attention_maps``, ``load_pretrained``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .analysis import HeadScore  # noqa: F401  (the names below are this module's API)
from .decoding import (  # noqa: F401
    Generation, KVCache, accuracy, attend_step, cached_step, counting_products, generate, translate,
)
from .models.translator import (  # noqa: F401
    CHECKPOINT_DIR, Translator, TranslatorConfig, checkpoint_path, load_pretrained, make_model, save_checkpoint,
)
from .number_data import (  # noqa: F401
    BATCH_SIZE, BOS, EOS, HELDOUT_SEED, HELDOUT_SIZE, MAX_DIGITS, PAD, SRC_TOKENS, TRAIN_SEED, _check_number,
    alignment_map, decode_ids, draw_numbers, encode, encode_source, heldout, is_heldout, join_words,
    shift_right, target_tokens, training_numbers,
)
from .training import (  # noqa: F401
    default_device, device_of, eval_mode, fit, num_parameters, one_cpu_thread, warmup_cosine,
)
from .translator_analysis import (  # noqa: F401
    CONTEXT_GROUPS, CONTEXT_WORDS, TranslatorMaps, aligned_head, alignment_mass, attention_maps, context_mass,
    cross_attention, uniform_mass,
)

STEPS = 800
LR = 3e-3
WARMUP = 100
WEIGHT_DECAY = 0.01

ACCURACY_THRESHOLD = 0.95
ALIGNMENT_THRESHOLD = 0.6


def lr_at(step: int, steps: int = STEPS, lr: float = LR, warmup: int = WARMUP) -> float:
    """The recipe's learning rate at ``step`` (``training.warmup_cosine`` with its defaults)."""
    return warmup_cosine(step, steps, lr, warmup)


def translation_loss(model: Translator, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Teacher forcing: cross-entropy of the next word at every target position, PAD skipped."""
    tgt_in, tgt_out = shift_right(tgt)
    logits, _ = model(src, tgt_in)                                         # (B, T, V)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD)


def _batches(lang: str, batch_size: int, seed: int):
    for numbers in training_numbers(batch_size, seed):
        yield encode(numbers.tolist(), lang)                               # (src, tgt) on the CPU


def train(model: Translator, steps: int = STEPS, batch_size: int = BATCH_SIZE, lr: float = LR,
          seed: int = TRAIN_SEED, device=None, progress: bool = False, warmup: int = WARMUP,
          weight_decay: float = WEIGHT_DECAY, threads: int | None = 1) -> list[float]:
    """Train in place with teacher forcing and AdamW on seeded batches; returns the loss of every step.

    ``training.fit`` with the lesson's recipe and ``translation_loss``. ``device``: CUDA when
    present by default; batches are drawn on the CPU from ``seed`` either way. ``progress``: a
    progress bar (off by default, so a stored notebook never holds a half-finished one).
    ``threads``: CPU threads for torch during training. The model is left in eval mode, also
    when training is interrupted.
    """
    batches = _batches(model.lang, batch_size, seed)
    return fit(model, batches, translation_loss, steps, lr, warmup, weight_decay, device, progress, threads)
