"""The explorer's models, one module each, every one an ``ExplorerModel`` (``base``) named ``MODEL``:

* ``random_weights``: seeded random weights on a sentence (mask, heads, padding, scaling are free);
* ``reversal_model``: lesson 07's trained reversal model on digits;
* ``translator_model``: lesson 08's number translator (encoder, decoder, cross-attention);
* ``poet_model``: lesson 10's verse GPT on a verse.

A fifth model is one new module with its ``MODEL``, added to ``REGISTRY`` below.
"""
from __future__ import annotations

from . import poet_model, random_weights, reversal_model, translator_model
from .base import ExplorerModel

REGISTRY: tuple[ExplorerModel, ...] = (random_weights.MODEL, reversal_model.MODEL, translator_model.MODEL,
                                       poet_model.MODEL)
BY_NAME = {name: m for m in REGISTRY for name in m.names}
NAMES = tuple(BY_NAME)                  # the order of the model control


def get(name: str) -> ExplorerModel:
    """The model serving ``ExplorerState.model == name``; ValueError for an unknown name."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"model must be one of {NAMES}, got {name!r}") from None
