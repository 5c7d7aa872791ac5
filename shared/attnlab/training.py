"""Training, shared by the course's trainable models (lesson 07's tiny model, lesson 08's translator):
one loop (``fit``), one learning-rate schedule (``warmup_cosine``), one ``eval_mode``."""
from __future__ import annotations

import contextlib
import functools
import math
from typing import Callable, Iterator, Sequence

import torch
import torch.nn as nn


def fit(model: nn.Module, batches: Iterator[Sequence[torch.Tensor]], loss_fn: Callable[..., torch.Tensor],
        steps: int, lr: float, warmup: int, weight_decay: float, device=None, progress: bool = False,
        threads: int | None = 1) -> list[float]:
    """Train ``model`` in place with AdamW and ``warmup_cosine``; returns the loss of every step.

    Each step takes the next tuple of CPU tensors from ``batches``, moves it to ``device`` (CUDA
    when present by default) and minimises ``loss_fn(model, *batch)``. ``threads``: CPU threads
    for torch during training (``cpu_threads``; None: unchanged), restored afterwards.
    ``progress``: a progress bar (tqdm: a widget in Jupyter, text elsewhere); False: none at all.
    The model is left on ``device`` in eval mode, also when training is interrupted.
    """
    device = torch.device(device) if device is not None else default_device()
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    history: list[float] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=steps, desc="train", leave=True)
    try:
        with cpu_threads(threads):
            for step in range(steps):
                for group in optimizer.param_groups:
                    group["lr"] = warmup_cosine(step, steps, lr, warmup)
                batch = [t.to(device) for t in next(batches)]
                loss = loss_fn(model, *batch)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                history.append(loss.item())
                if bar is not None:
                    bar.update()
                    if step % 20 == 0 or step == steps - 1:
                        bar.set_postfix(loss=f"{history[-1]:.4f}")
    finally:
        if bar is not None:
            bar.close()
        model.eval()
    return history


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

    ``fit`` trains on one thread by default (``threads=1``, an argument the caller sees): the
    course's models are so small that extra threads only wait for each other, and one thread
    makes every CPU run of a training recipe give the same weights, those of the saved
    checkpoints. The setting is process-wide, so nothing else in the package changes it: the
    evaluation functions run on the caller's threads (CI and ``make execute`` run with
    OMP_NUM_THREADS=1). The caller's thread count is restored, even on an error.
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
    """Decorator: run ``fn`` inside ``cpu_threads(1)`` (the explorer's computation, which must stay
    responsive next to the browser and the server on a 2-core machine)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with cpu_threads(1):
            return fn(*args, **kwargs)
    return wrapper
