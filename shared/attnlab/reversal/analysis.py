"""Lesson 07's evaluation and attention analysis: greedy reversal and its accuracy, the maps of
where a target query should look (the anti-diagonal, the next token), the attention mass on them,
the reversal head, and one sequence's attention for the explorer."""
from __future__ import annotations

from typing import Sequence

import torch

from ..analysis import HeadScore, best_head, mass_on
from ..training import device_of, eval_mode
from .data import TOKENS, encode, heldout, lengths, loss_mask, split
from .model import TinyTransformer


@torch.no_grad()
def greedy_reverse(model: TinyTransformer, ids: torch.Tensor) -> torch.Tensor:
    """Rows of one length n: feed 's_1..s_n SEP', append the argmax n times; returns (B, n) predictions."""
    n = int(lengths(ids[:1])[0])
    cur = ids[:, : n + 1]
    for _ in range(n):
        logits, _ = model(cur)
        cur = torch.cat([cur, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return cur[:, n + 1:]


@torch.no_grad()
def accuracy(model: TinyTransformer, ids: torch.Tensor | None = None, mode: str = "greedy") -> float:
    """Fraction of sequences whose whole reversed part is right (exact match), held-out rows by default.

    ``mode="greedy"``: the model writes its answer one token at a time, each prediction fed back in
    (what it would do for real). ``mode="teacher"``: one pass over the true rows, every position
    predicted from the true tokens before it (teacher forcing, as in training). Under a causal mask
    the two give the same exact-match accuracy; without one, teacher forcing lets the model read
    the answer.
    """
    if mode not in ("greedy", "teacher"):
        raise ValueError(f"mode must be 'greedy' or 'teacher', got {mode!r}")
    ids = (heldout(model.config) if ids is None else ids).to(device_of(model))
    n = lengths(ids)
    correct = 0
    with eval_mode(model):
        if mode == "teacher":
            inputs, targets = split(ids)
            logits, _ = model(inputs)
            right = (logits.argmax(-1) == targets) | ~loss_mask(inputs, targets)
            correct = int(right.all(dim=1).sum())
        else:
            for k in n.unique().tolist():
                rows = ids[n == k]
                correct += int((greedy_reverse(model, rows) == rows[:, k + 1: 2 * k + 1]).all(dim=1).sum())
    return correct / ids.shape[0]


@torch.no_grad()
def reverse_digits(model: TinyTransformer, digits: Sequence[int]) -> list[int]:
    """The model's greedy answer for one digit sequence."""
    ids = torch.tensor([encode(digits)], device=device_of(model))
    with eval_mode(model):
        return greedy_reverse(model, ids)[0].tolist()


def reversal_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool over the inputs (T = L - 1): True at (query t, key 2n - 1 - t) for t = n .. 2n - 1.

    The position each target query must read: the anti-diagonal of the target x source block.
    """
    n = lengths(ids).to(ids.device)[:, None, None]                           # (B, 1, 1)
    T = ids.shape[1] - 1
    q = torch.arange(T, device=ids.device)[None, :, None]                   # (1, T, 1)
    k = torch.arange(T, device=ids.device)[None, None, :]                   # (1, 1, T)
    return (q >= n) & (q < 2 * n) & (q + k == 2 * n - 1)


@torch.no_grad()
def attention_weights(model: TinyTransformer, ids: torch.Tensor) -> list[torch.Tensor]:
    """Per layer, the (B, H, T, T) attention weights on the inputs of full rows ``ids``, on the CPU."""
    inputs, _ = split(ids.to(device_of(model)))
    with eval_mode(model):
        _, weights = model(inputs, need_weights=True)
    return [w.float().cpu() for w in weights]


def lookahead_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool: True at (query t, key t + 1) for the target queries t = n .. 2n - 1.

    Key t + 1 holds exactly the token that query t must predict: a model without a causal
    mask can read its answer there.
    """
    n = lengths(ids).to(ids.device)[:, None, None]
    T = ids.shape[1] - 1
    q = torch.arange(T, device=ids.device)[None, :, None]
    k = torch.arange(T, device=ids.device)[None, None, :]
    return (q >= n) & (q < 2 * n) & (k == q + 1)


def attention_mass(model: TinyTransformer, where=reversal_map, ids: torch.Tensor | None = None) -> torch.Tensor:
    """(layers, heads): average weight that a target query puts on the keys marked by ``where(ids)``.

    ``where`` maps full rows (B, L) to a (B, T, T) bool map (``reversal_map``, ``lookahead_map``).
    Averaged over every marked (query, key) pair of every row, held-out rows by default.
    """
    ids = heldout(model.config) if ids is None else ids.cpu()
    return mass_on(attention_weights(model, ids), where(ids)[:, None].float())   # marked: (B, 1, T, T)


def antidiagonal_mass(model: TinyTransformer, ids: torch.Tensor | None = None) -> torch.Tensor:
    """(layers, heads): average weight that a target query puts on its mirror key (1 = perfect reversal).

    Averaged over the target queries of every row (held-out rows by default). Uniform attention
    over the visible keys would give about 0.1.
    """
    return attention_mass(model, reversal_map, ids)


def reversal_head(model: TinyTransformer, ids: torch.Tensor | None = None) -> HeadScore:
    """The (layer, head), counted from 1, with the most attention mass on the anti-diagonal."""
    return best_head(antidiagonal_mass(model, ids))


@torch.no_grad()
def attention_for(model: TinyTransformer, digits: Sequence[int]):
    """For the explorer: ``(tokens, [weights (H, T, T) per layer])`` for one digit sequence.

    The input is the full example minus its last token, 's_1..s_n | s_n..s_2' (the true answer,
    as in training), so row t of each matrix shows where position t looks to predict token t + 1.
    """
    digits = [int(d) for d in digits]
    n_max = model.config.max_len
    if not 1 <= len(digits) <= n_max:
        raise ValueError(f"the model reads 1 to {n_max} digits, got {len(digits)}")
    ids = torch.tensor([encode(digits)])
    tokens = [TOKENS[i] for i in ids[0, :-1].tolist()]
    return tokens, [w[0] for w in attention_weights(model, ids)]
