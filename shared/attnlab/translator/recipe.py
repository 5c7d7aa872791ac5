"""Lesson 08's recipe: the training settings and thresholds, ``train`` (``training.fit`` with
teacher forcing) and the checkpoints (``checkpoint_path``, ``save_checkpoint``, ``load_pretrained``)."""
from __future__ import annotations

import dataclasses
import pathlib

import torch
import torch.nn.functional as F

from ..training import fit, warmup_cosine
from .data import BATCH_SIZE, PAD, TRAIN_SEED, _check_lang, encode, shift_right, training_numbers
from .model import Translator, TranslatorConfig

CHECKPOINT_DIR = pathlib.Path(__file__).resolve().parent

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


# ----------------------------------------------------------------------------- the checkpoints
def checkpoint_path(lang: str) -> pathlib.Path:
    _check_lang(lang)
    return CHECKPOINT_DIR / f"checkpoint_{lang}.pt"


def save_checkpoint(model: Translator, path=None, **extra) -> pathlib.Path:
    """float16 weights (the file stays small; loaded back as float32) and the config."""
    path = pathlib.Path(path or checkpoint_path(model.lang))
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().half().clone() for k, v in model.state_dict().items()}
    torch.save({"config": dataclasses.asdict(model.config), "state_dict": state, **extra}, path)
    return path


def load_pretrained(lang: str = "vi", path=None, device=None) -> Translator:
    """The model of ``lang`` trained by tools/train_translator_checkpoint.py, in eval mode."""
    _check_lang(lang)
    ckpt = torch.load(path or checkpoint_path(lang), map_location="cpu", weights_only=True)
    model = Translator(TranslatorConfig(**ckpt["config"]))
    model.load_state_dict({k: v.float() for k, v in ckpt["state_dict"].items()})
    return model.to(device or "cpu").eval()
