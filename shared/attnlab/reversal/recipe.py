"""Lesson 07's recipe: the training settings and thresholds, ``train`` (``training.fit`` with the
reversal loss) and the checkpoint (``save_checkpoint``, ``load_pretrained``)."""
from __future__ import annotations

import dataclasses
import pathlib

import torch
import torch.nn.functional as F

from ..training import fit, warmup_cosine
from .data import BATCH_SIZE, TRAIN_SEED, loss_mask, split, training_batches
from .model import TinyConfig, TinyTransformer

CHECKPOINT = pathlib.Path(__file__).resolve().parent / "checkpoint.pt"

# ----------------------------------------------------------------------------- the recipe
STEPS = 800
LR = 5e-3
WARMUP = 80               # steps of linear warm-up, then a cosine decay to zero
WEIGHT_DECAY = 0.01

CHEAT_STEPS = 300         # lesson 07 trains a model without the causal mask this long

ACCURACY_THRESHOLD = 0.95         # held-out sequences reversed exactly (greedy decoding)
ANTI_DIAGONAL_THRESHOLD = 0.5     # attention mass of the best head on the mirror position


# ----------------------------------------------------------------------------- training
def lr_at(step: int, steps: int = STEPS, lr: float = LR, warmup: int = WARMUP) -> float:
    """The recipe's learning rate at ``step`` (``training.warmup_cosine`` with its defaults)."""
    return warmup_cosine(step, steps, lr, warmup)


def reversal_loss(model: TinyTransformer, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy on the target positions only (``loss_mask``)."""
    logits, _ = model(inputs)                                                # (B, T, vocab)
    mask = loss_mask(inputs, targets)                                        # (B, T)
    return F.cross_entropy(logits[mask], targets[mask])


def train(model: TinyTransformer, steps: int = STEPS, batch_size: int = BATCH_SIZE, lr: float = LR,
          seed: int = TRAIN_SEED, device=None, progress: bool = True, weight_decay: float = WEIGHT_DECAY,
          warmup: int = WARMUP, threads: int | None = 1) -> list[float]:
    """Train ``model`` in place with AdamW on seeded batches; returns the loss of every step.

    ``training.fit`` with the lesson's recipe and ``reversal_loss``: the batches are drawn on the
    CPU from ``seed`` (``training_batches``), ``device`` defaults to CUDA when present. The model
    stays on ``device``, in eval mode, also when training is interrupted. ``progress=False``: no
    progress bar at all. ``threads``: CPU threads for torch during training (None: unchanged).
    """
    batches = (split(ids) for ids in training_batches(batch_size, seed, model.config))
    return fit(model, batches, reversal_loss, steps, lr, warmup, weight_decay, device, progress, threads)


# ----------------------------------------------------------------------------- the checkpoint
def save_checkpoint(model: TinyTransformer, path=CHECKPOINT, **extra) -> pathlib.Path:
    """Save the float32 state_dict and the config (plain types, loadable with weights_only=True)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().float().cpu().clone() for k, v in model.state_dict().items()}
    torch.save({"config": dataclasses.asdict(model.config), "state_dict": state, **extra}, path)
    return path


def load_pretrained(path=CHECKPOINT, device=None) -> TinyTransformer:
    """The model trained by tools/train_tiny_checkpoint.py (same seed and recipe as ``train``), in eval mode."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyTransformer(TinyConfig(**ckpt["config"]))
    model.load_state_dict(ckpt["state_dict"])
    return model.to(device or "cpu").eval()
