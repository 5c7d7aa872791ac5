"""Small helpers shared by the course's trainable models (lesson 07's tiny model, lesson 08's translator)."""
from __future__ import annotations

import contextlib
import functools
import math

import torch
import torch.nn as nn


def num_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def device_of(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def warmup_cosine(step: int, steps: int, lr: float, warmup: int) -> float:
    """Learning rate at ``step``: linear warm-up for ``warmup`` steps, then a cosine decay from ``lr`` to 0."""
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr * 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


@contextlib.contextmanager
def cpu_threads(n: int | None = 1):
    """Run torch's CPU ops on ``n`` threads inside the block (None: leave the setting alone).

    The course's models are so small that extra threads only wait for each other (on a busy
    2-core machine a 0.3 s evaluation takes seconds with 2 threads), and one thread makes every
    CPU run of a training recipe give the same weights, those of the saved checkpoints.
    The caller's thread count is restored, even on an error.
    """
    before = torch.get_num_threads()
    if n is not None and n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


@contextlib.contextmanager
def eval_mode(model: nn.Module):
    """``model.eval()`` inside the block; the caller's train/eval mode is restored, even on an error."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def one_cpu_thread(fn):
    """Decorator: run ``fn`` inside ``cpu_threads(1)``."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with cpu_threads(1):
            return fn(*args, **kwargs)
    return wrapper
