"""Train lesson 07's tiny reversal model from the fixed seed and save it as the package checkpoint.

    python tools/train_reversal_checkpoint.py [--out PATH]

Same recipe as ``attnlab.reversal.train`` with its defaults (seed, steps, batch, learning rate), run
on the CPU (``train`` uses one CPU thread), so the same machine always writes the same weights and
retraining in the lesson on a CPU reproduces them. The file
holds the float32 state_dict, the config and the recipe; ``attnlab.reversal.load_pretrained()``
reads it. Refuses to save a model below ``ACCURACY_THRESHOLD`` on the held-out set.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import torch

from attnlab import reversal


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=reversal.CHECKPOINT)
    args = parser.parse_args(argv)

    model = reversal.make_model(seed=reversal.TRAIN_SEED)
    start = time.perf_counter()
    history = reversal.train(model, device="cpu", progress=False)
    took = time.perf_counter() - start
    acc = reversal.accuracy(model)
    best = reversal.reversal_head(model)
    print(f"trained {reversal.STEPS} steps in {took:.1f} s; final loss {history[-1]:.4f}; "
          f"held-out accuracy {acc:.3f}; best head layer {best.layer} head {best.head} "
          f"(anti-diagonal mass {best.mass:.2f})")
    if acc < reversal.ACCURACY_THRESHOLD:
        print(f"not saved: accuracy below {reversal.ACCURACY_THRESHOLD}", file=sys.stderr)
        return 1
    recipe = {"seed": reversal.TRAIN_SEED, "steps": reversal.STEPS, "batch_size": reversal.BATCH_SIZE, "lr": reversal.LR,
              "warmup": reversal.WARMUP, "weight_decay": reversal.WEIGHT_DECAY, "heldout_seed": reversal.HELDOUT_SEED,
              "torch": str(torch.__version__)}
    path = reversal.save_checkpoint(model, args.out, recipe=recipe, heldout_accuracy=acc)
    print(f"saved {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
