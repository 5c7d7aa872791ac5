"""Train lesson 08's number translators from the fixed seed and save them as package checkpoints.

    python tools/train_translator_checkpoint.py [--lang vi zh] [--out-dir DIR]

Same recipe as ``attnlab.translator.train`` with its defaults (seed, steps, batch, learning rate),
on the CPU with one thread, so the same machine always writes the same weights and retraining in
the lesson on a CPU reproduces them (up to the float16 rounding of the saved file). Each file holds
the float16 state_dict, the config and the recipe; ``translator.load_pretrained(lang)`` reads it.
Refuses to save a model that, once loaded back, is below ``ACCURACY_THRESHOLD`` on the held-out
numbers or whose best last-layer head is below ``ALIGNMENT_THRESHOLD``.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import torch

from attnlab import translator as tr
from attnlab.course.languages import COURSE_LANGUAGES


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", nargs="+", default=list(COURSE_LANGUAGES), choices=COURSE_LANGUAGES)
    parser.add_argument("--out-dir", type=pathlib.Path, default=tr.CHECKPOINT_DIR)
    args = parser.parse_args(argv)
    status = 0
    for lang in args.lang:
        model = tr.make_model(lang, seed=tr.TRAIN_SEED)
        start = time.perf_counter()
        history = tr.train(model, device="cpu")
        took = time.perf_counter() - start
        recipe = {"seed": tr.TRAIN_SEED, "steps": tr.STEPS, "batch_size": tr.BATCH_SIZE, "lr": tr.LR,
                  "warmup": tr.WARMUP, "weight_decay": tr.WEIGHT_DECAY, "heldout_seed": tr.HELDOUT_SEED,
                  "torch": str(torch.__version__)}
        path = args.out_dir / tr.checkpoint_path(lang).name
        tr.save_checkpoint(model, path, recipe=recipe)
        loaded = tr.load_pretrained(lang, path)
        acc = tr.accuracy(loaded)
        best = tr.aligned_head(loaded)
        print(f"{lang}: trained {tr.STEPS} steps in {took:.1f} s; final loss {history[-1]:.4f}; "
              f"held-out accuracy (saved weights) {acc:.3f}; best last-layer head {best.head} "
              f"(alignment mass {best.mass:.2f}); {path} ({path.stat().st_size / 1024:.0f} KiB)")
        if acc < tr.ACCURACY_THRESHOLD or best.mass < tr.ALIGNMENT_THRESHOLD:
            print(f"{lang}: below the thresholds, removing {path}", file=sys.stderr)
            path.unlink()
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
