"""A tiny decoder-only Transformer that learns to reverse a sequence of digits (lesson 07).

The task. A sequence of 6 to 8 random digits, a separator, then the same digits reversed::

    3 1 4 1 5 9 | 9 5 1 4 1 3

The model reads left to right under a causal mask and predicts the next token. Before the
separator the digits are random, so nothing there can be predicted; after it every token is
determined: the output at step k is the source digit k places before the separator. The digits
are random, so the only way to find it is by *position*, which is what attention does: the
query of output position i (i = 0 at the separator) looks at source position n - 1 - i. In the
block of the attention matrix where the queries are the target positions and the keys the
source positions, a trained model draws an anti-diagonal.

The layout of one example, the inputs and targets, the loss mask and the held-out split are
described in ``attnlab.reversal.data``. Right padding needs no padding mask: under the causal
mask no real token can see the padding that follows it, and the loss skips the padding.

The lesson's modules: ``data`` (the task), ``model`` (the Transformer and its size), ``recipe``
(training with ``training.fit``, the thresholds, the checkpoint), ``analysis`` (accuracy, where
the heads look). This package gathers their names. Main entry points: ``make_model``, ``train``,
``accuracy``, ``antidiagonal_mass``, ``reversal_head``, ``attention_for``, ``load_pretrained``.
"""
from __future__ import annotations

from ..analysis import HeadScore, best_head, mass_on  # noqa: F401  (the names below are this package's API)
from ..training import default_device, device_of, eval_mode, fit, num_parameters, one_cpu_thread, warmup_cosine  # noqa: F401
from .analysis import (  # noqa: F401
    accuracy, antidiagonal_mass, attention_for, attention_mass, attention_weights, greedy_reverse, lookahead_map,
    reversal_head, reversal_map, reverse_digits,
)
from .data import (  # noqa: F401
    BATCH_SIZE, HELDOUT_SEED, HELDOUT_SIZE, MAX_LEN, MIN_LEN, PAD, SEP, TOKENS, TRAIN_SEED, VOCAB_SIZE, encode,
    heldout, is_heldout, lengths, loss_mask, make_batch, split, to_text, training_batches,
)
from .model import TinyConfig, TinyTransformer, make_model  # noqa: F401
from .recipe import (  # noqa: F401
    ACCURACY_THRESHOLD, ANTI_DIAGONAL_THRESHOLD, CHEAT_STEPS, CHECKPOINT, LR, STEPS, WARMUP, WEIGHT_DECAY,
    load_pretrained, lr_at, reversal_loss, save_checkpoint, train,
)
