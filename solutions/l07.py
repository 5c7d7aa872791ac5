"""Reference solutions for lesson 07 (training a tiny Transformer). For instructors; no notebook imports this.

The task: rows 's_1..s_n SEP s_n..s_1 PAD..'; inputs = ids[:, :-1], targets = ids[:, 1:].
"""
from __future__ import annotations

import torch

from attnlab import causal_mask, reversal


def loss_mask(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(B, T) bool: True where the target is a reversed digit.

    The input at the separator predicts the first reversed digit, so the mask starts AT the
    separator in ``inputs`` (searching ``targets`` instead starts one position early, at the
    unpredictable separator). It stops where the target becomes padding. The source digits are
    random: a loss there cannot go below ln 10 and only adds noise.
    """
    from_sep = torch.cumsum(inputs == reversal.SEP, dim=1) > 0
    return from_sep & (targets != reversal.PAD)


def forward(model: reversal.TinyTransformer, ids: torch.Tensor) -> torch.Tensor:
    """The tiny model's forward pass by hand: embed -> positions -> blocks with the causal mask -> norm -> head.

    The mask is built here, not taken from the model: without it, position t could read the
    token t + 1, which is exactly its target (teacher forcing would look perfect, generation
    would fail).
    """
    T = ids.shape[1]
    mask = causal_mask(T, device=ids.device)          # (1, 1, T, T), True = may attend
    x = model.pos(model.embed(ids))
    for block in model.blocks:
        x, _ = block(x, mask=mask)
    return model.head(model.norm(x))


def reversal_head(model: reversal.TinyTransformer) -> tuple[int, int]:
    """(layer, head), counted from 1: the head with the most attention on the mirror position.

    The answer depends on the trained weights (the device and the CPU can change which of the
    similar heads wins), so it is computed, never hard-coded.
    """
    mass = reversal.antidiagonal_mass(model)              # (layers, heads)
    layer, head = divmod(int(mass.argmax()), mass.shape[1])
    return layer + 1, head + 1
