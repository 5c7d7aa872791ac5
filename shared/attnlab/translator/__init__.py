"""Lesson 08: a tiny encoder-decoder that writes numbers in words (Vietnamese or Chinese).

The task. The source is the digits of a number 0..99 999, the target its words
(``attnlab.translator.numwords``)::

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

The lesson's modules, one concern each: ``data`` (numbers, words and their ids), ``numwords``
(the number words of each language), ``model`` (the encoder-decoder and its size), ``decoding``
(greedy decoding with and without the KV cache), ``recipe`` (training with ``training.fit``, the
thresholds, the checkpoints), ``analysis`` (cross-attention alignment, the explorer's maps). This
package gathers their names. Main entry points: ``make_model``, ``train``,
``accuracy``, ``generate``, ``translate``, ``alignment_mass``, ``aligned_head``,
``attention_maps``, ``load_pretrained``.
"""
from __future__ import annotations

from ..analysis import HeadScore  # noqa: F401  (the names below are this package's API)
from ..training import default_device, device_of, eval_mode, fit, num_parameters, one_cpu_thread, warmup_cosine  # noqa: F401
from . import numwords  # noqa: F401
from .analysis import (  # noqa: F401
    CONTEXT_GROUPS, CONTEXT_WORDS, TranslatorMaps, aligned_head, alignment_mass, attention_maps, context_mass,
    cross_attention, uniform_mass,
)
from .data import (  # noqa: F401
    BATCH_SIZE, BOS, EOS, HELDOUT_SEED, HELDOUT_SIZE, MAX_DIGITS, PAD, SRC_TOKENS, TRAIN_SEED, _check_number,
    alignment_map, decode_ids, draw_numbers, encode, encode_source, heldout, is_heldout, join_words,
    shift_right, target_tokens, training_numbers,
)
from .decoding import (  # noqa: F401
    Generation, KVCache, accuracy, attend_step, cached_step, counting_products, generate, translate,
)
from .model import Translator, TranslatorConfig, make_model  # noqa: F401
from .recipe import (  # noqa: F401
    ACCURACY_THRESHOLD, ALIGNMENT_THRESHOLD, CHECKPOINT_DIR, LR, STEPS, WARMUP, WEIGHT_DECAY, checkpoint_path,
    load_pretrained, lr_at, save_checkpoint, train, translation_loss,
)
