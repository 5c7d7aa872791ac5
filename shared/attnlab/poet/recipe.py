"""Training, validation loss and checkpoints of lesson 10's GPT.

The recipe is fixed (seed, steps, batch, learning rate), runs on one CPU thread by default, and
returns the loss of every step; ``validation_loss`` scores every non-overlapping validation window.
Checkpoints store the weights in float16 (the Chinese model's embedding alone has 5,117 x 64
numbers) and load as float32; their validation loss is measured on the loaded weights.
"""
from __future__ import annotations

import dataclasses
import pathlib

import torch

from ..training import cpu_threads, eval_mode, num_parameters, one_cpu_thread, warmup_cosine  # noqa: F401
from .corpus import Corpus, load_corpus
from .model import PoetConfig, PoetGPT, loss_on, make_model

CHECKPOINTS = pathlib.Path(__file__).resolve().parent
SEED = 0
BATCH_SIZE = 32
LR = 3e-3
WEIGHT_DECAY = 0.01
# The lesson's live training (a fixed number of steps, so its outputs are deterministic). The
# Chinese model's 5,117-character output layer makes each of its tokens about three times dearer.
LIVE_STEPS = {"vi": 150, "zh": 100}
LIVE_BATCH = {"vi": 16, "zh": 8}


def checkpoint_path(lang: str) -> pathlib.Path:
    return CHECKPOINTS / f"checkpoint_{lang}.pt"


def new_model(corpus: Corpus, seed: int = SEED, **sizes) -> PoetGPT:
    """The lesson's GPT for ``corpus`` (vocabulary size from it), freshly initialised from ``seed``."""
    return make_model(PoetConfig(vocab_size=len(corpus.vocab), **sizes), seed=seed)


def train(model: PoetGPT, corpus: Corpus, steps: int, batch_size: int = BATCH_SIZE, lr: float = LR,
          warmup: int | None = None, seed: int = SEED, weight_decay: float = WEIGHT_DECAY,
          threads: int | None = 1) -> list[float]:
    """Train ``model`` in place with AdamW on seeded windows of the training text; the loss of every step.

    Linear warm-up (default: a tenth of the steps), then a cosine decay to zero. ``threads``: CPU
    threads during training (None: unchanged), restored afterwards. The model is left in eval mode.
    """
    warmup = max(1, steps // 10) if warmup is None else warmup
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    batches = corpus.batches(batch_size, model.config.context, seed)
    history = []
    try:
        with cpu_threads(threads):
            for step in range(steps):
                for group in optimizer.param_groups:
                    group["lr"] = warmup_cosine(step, steps, lr, warmup)
                inputs, targets = next(batches)
                loss = loss_on(model, inputs, targets)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                history.append(loss.item())
    finally:
        model.eval()
    return history


@one_cpu_thread
@torch.no_grad()
def validation_loss(model: PoetGPT, corpus: Corpus, chunk: int = 64, limit: int | None = None) -> float:
    """Mean cross-entropy (nats per character) over every non-overlapping validation window
    (``limit``: over the first ``limit`` windows only)."""
    x, y = corpus.val_windows(model.config.context)
    x, y = x[:limit], y[:limit]
    total = 0.0
    with eval_mode(model):
        for i in range(0, len(x), chunk):
            total += float(loss_on(model, x[i:i + chunk], y[i:i + chunk])) * len(x[i:i + chunk])
    return total / len(x)


def save_checkpoint(model: PoetGPT, path, **extra) -> pathlib.Path:
    """The float16 weights, the config and ``extra`` (plain types: loadable with weights_only=True)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().half().clone() for k, v in model.state_dict().items()}
    torch.save({"config": dataclasses.asdict(model.config), "state_dict": state, **extra}, path)
    return path


def read_checkpoint(lang: str, path=None) -> dict:
    """The raw checkpoint dict of ``lang`` (weights, config, recipe, measured losses and ladder)."""
    load_corpus(lang)                                   # refuses an unknown language, in the UI language
    return torch.load(path or checkpoint_path(lang), map_location="cpu", weights_only=True)


def load_pretrained(lang: str, path=None) -> PoetGPT:
    """The model trained by tools/train_poet_checkpoint.py for ``lang``, as float32, in eval mode."""
    ckpt = read_checkpoint(lang, path)
    with torch.random.fork_rng(devices=[]):          # the throw-away initialisation leaves the caller's RNG alone
        model = PoetGPT(PoetConfig(**ckpt["config"]))
    model.load_state_dict({k: v.float() for k, v in ckpt["state_dict"].items()})
    return model.eval()
