"""Train lesson 10's verse GPT for one language, measure its loss ladder, save the package checkpoint.

    nice -n 10 python tools/train_poet_checkpoint.py vi [--steps N] [--ladder-steps N] [--out PATH]
    nice -n 10 python tools/train_poet_checkpoint.py zh
    nice -n 10 python tools/train_poet_checkpoint.py vi --samples-only   # step 4 on the shipped weights

On the CPU, one thread, fixed seeds: the same machine writes the same weights. Steps:

1. The loss ladder (``attnlab.poet.LADDER``): the counted bigram (the best any bigram model can
   do), then each network rung, from the trained bigram to the full GPT, trained with the same short recipe (``--ladder-steps`` steps, same batch, learning rate and seed), and
   the validation loss of each measured here.
2. The lesson's model (the last rung, the full GPT) trained ``--steps`` steps.
3. The checkpoint: float16 weights, the config, the recipe, the validation loss measured on the
   float16 weights as they load, and the ladder. ``attnlab.poet.load_pretrained(lang)`` reads it.
4. The verse samples (``SAMPLES``: texts of 120 characters after the lesson's prompt, 300 at
   temperature 0.8 and 150 at 0.3 and 1.5, seeded), written by the loaded checkpoint and stored in it as ``samples``, so that
   the lesson measures its verse on enough text without generating it (a minute of CPU); the
   tool prints the lesson's verse report on them (docs/poet.md). ``--samples-only`` does only
   this step on an existing checkpoint: its weights and every other stored figure stay as they are.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import torch

from attnlab import poet
from attnlab.poet import recipe, sample

STEPS = {"vi": 1200, "zh": 360}
# The stored samples: temperature -> (seed, how many). The lesson measures 0.8 (300 texts: about 190
# couplets for the rhyme); its exercise 4 compares the line length at 0.3 and 1.5.
SAMPLES = {"0.8": (2, 300), "0.3": (3, 150), "1.5": (3, 150)}
SAMPLE_LENGTH = 120
LADDER_STEPS = {"vi": 200, "zh": 120}


def measure_ladder(lang: str, corpus, steps: int) -> dict[str, float]:
    """The validation loss of each rung: the counted bigram, then each network trained ``steps`` steps."""
    ladder = {"bigram_counted": poet.bigram_loss(corpus.train_ids, corpus.val_ids, len(corpus.vocab))}
    print(f"[{lang}] bigram_counted: validation loss {ladder['bigram_counted']:.4f}", flush=True)
    for rung in poet.LADDER:
        start = time.perf_counter()
        model = poet.new_model(corpus, rung=rung)
        poet.train(model, corpus, steps=steps)
        ladder[rung] = poet.validation_loss(model, corpus)
        print(f"[{lang}] {rung}: {steps} steps in {time.perf_counter() - start:.0f} s, "
              f"validation loss {ladder[rung]:.4f}", flush=True)
    return ladder


def write_samples(lang: str, path: pathlib.Path) -> dict:
    """The stored samples of the checkpoint at ``path`` (as it loads: float16 weights), and their recipe."""
    model, corpus = poet.load_pretrained(lang, path), poet.load_corpus(lang)
    prompt, form = poet.PROMPTS[lang], poet.form(lang)
    texts = {}
    for temperature, (seed, n) in SAMPLES.items():
        start = time.perf_counter()
        texts[temperature] = [prompt + body for body in sample.generate(
            model, corpus.vocab, prompt, SAMPLE_LENGTH, temperature=float(temperature), seed=seed, num_samples=n)]
        report = form.report(texts[temperature])
        print(f"[{lang}] samples at temperature {temperature} (seed {seed}): {time.perf_counter() - start:.0f} s; "
              + "; ".join(f"{k} {m.hits}/{m.total} = {m.rate:.3f} (chance {m.chance if m.chance is None else round(m.chance, 3)})"
                          for k, m in report.items()), flush=True)
    real = form.report(poet.validation_texts(lang), skip=0)
    print(f"[{lang}] the validation text: " + "; ".join(
        f"{k} {m.hits}/{m.total} = {m.rate:.3f} (chance {m.chance if m.chance is None else round(m.chance, 3)})"
        for k, m in real.items()), flush=True)
    return {"samples": texts, "samples_recipe": {"prompt": prompt, "length": SAMPLE_LENGTH,
                                                 "seeds": {k: seed for k, (seed, _) in SAMPLES.items()},
                                                 "num_samples": {k: n for k, (_, n) in SAMPLES.items()},
                                                 "torch": str(torch.__version__)}}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lang", choices=poet.LANGS)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--ladder-steps", type=int, default=None)
    parser.add_argument("--out", type=pathlib.Path, default=None)
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="dropout in the blocks while training the lesson's model (not the ladder)")
    parser.add_argument("--ladder-from", type=pathlib.Path, default=None,
                        help="take the ladder from this checkpoint (measured by this tool, same recipe) "
                             "instead of measuring it again")
    parser.add_argument("--samples-only", action="store_true",
                        help="only (re)write the stored verse samples of the checkpoint (--out or the shipped one)")
    args = parser.parse_args(argv)
    lang, steps = args.lang, args.steps or STEPS[args.lang]
    ladder_steps = args.ladder_steps or LADDER_STEPS[lang]
    out = args.out or recipe.checkpoint_path(lang)
    corpus = poet.load_corpus(lang)
    torch.set_num_threads(1)

    if args.samples_only:
        ckpt = poet.read_checkpoint(lang, out)
        ckpt.update(write_samples(lang, out))
        torch.save(ckpt, out)                                  # the same weights and figures, new samples
        return _size_ok(out)

    if args.ladder_from is not None:
        old = torch.load(args.ladder_from, map_location="cpu", weights_only=True)
        ladder, ladder_steps = old["ladder"], old["ladder_recipe"]["steps"]
        print(f"[{lang}] ladder from {args.ladder_from}: {ladder}", flush=True)
    else:
        ladder = measure_ladder(lang, corpus, ladder_steps)

    start = time.perf_counter()
    model = poet.new_model(corpus, dropout=args.dropout)
    history = poet.train(model, corpus, steps=steps)
    took = time.perf_counter() - start
    meta = {
        "lang": lang,
        "recipe": {"seed": recipe.SEED, "steps": steps, "batch_size": recipe.BATCH_SIZE, "lr": recipe.LR,
                   "weight_decay": recipe.WEIGHT_DECAY, "dropout": args.dropout, "warmup": max(1, steps // 10), "threads": 1,
                   "torch": str(torch.__version__), "train_seconds": round(took, 1)},
        "ladder": ladder,
        "ladder_recipe": {"steps": ladder_steps, "batch_size": recipe.BATCH_SIZE, "lr": recipe.LR,
                          "seed": recipe.SEED, "bigram_alpha": 0.1},
        "train_loss_last50": sum(history[-50:]) / len(history[-50:]),
    }
    path = poet.save_checkpoint(model, out, **meta)
    val = poet.validation_loss(poet.load_pretrained(lang, path), corpus)     # on the float16 weights
    print(f"[{lang}] model: {steps} steps in {took:.0f} s, validation loss {val:.4f} (float16 weights)")
    poet.save_checkpoint(model, out, val_loss=val, **meta, **write_samples(lang, path))
    return _size_ok(path)


def _size_ok(path: pathlib.Path) -> int:
    print(f"saved {path} ({path.stat().st_size / 1024:.0f} KiB)")
    if path.stat().st_size >= 2 * 1024 * 1024:
        print("checkpoint over 2 MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
