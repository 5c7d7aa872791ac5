"""Which reference solution each converted exercise checks: the code that mutation testing mutates.

``TARGETS[registry key] = (module, names)``: ``names`` are the attributes of ``solutions.<module>``
passed to the exercise's probe, in order (``attnlab.exercises.EXERCISES[key].probe(*objects, seed=s)``).
A lesson whose probe also takes the lesson's context (07 and 08: the model) gives a third item, the
name of a function of ``solutions.targets`` that returns those extra arguments.

``tests/test_mutation_targets.py`` checks every target with its checker (the test mutmut runs for
each mutant: docs/checkers.md); ``tests/test_mutation_score.py`` checks that the score table in
docs/checkers.md and the list of equivalent mutants (``solutions/equivalent_mutants.json``) still
match a fresh run. To add an exercise: add its line here, run ``make mutation``, kill or explain each
survivor.
"""
from __future__ import annotations

import importlib

TARGETS: dict[str, tuple] = {
    "l01.softmax": ("l01", ("my_softmax",)),
    "l01.attention": ("l01", ("my_attention",)),
    "l01.dot_std": ("l01", ("dot_std",)),
    "l02.split_heads": ("l02", ("split_heads",)),
    "l02.merge_heads": ("l02", ("merge_heads",)),
    "l02.mha_size": ("l02", ("mha_size",)),
    "l03.sinusoidal_encoding": ("l03", ("my_sinusoidal_encoding",)),
    "l03.add_positional_encoding": ("l03", ("add_positional_encoding",)),
    "l03.predict_permuted_output": ("l03", ("predict_permuted_output",)),
    "l04.causal_mask": ("l04", ("causal_mask",)),
    "l04.padding_mask": ("l04", ("padding_mask",)),
    "l04.decoder_mask": ("l04", ("decoder_mask",)),
    "l04.mha_mask": ("l04", ("mha_mask",)),
    "l05.post_ln_block": ("l05", ("post_ln_block",)),
    "l05.pre_ln_block": ("l05", ("pre_ln_block",)),
    "l05.masks": ("l05", ("leaky_mask", "safe_mask")),
}

#: The probe seeds of a mutation run: a mutant is killed when its checker rejects it on any of them.
SEEDS = (0, 1, 2)


def objects(key: str) -> tuple:
    """The objects the probe of exercise ``key`` takes: the reference functions (and the context)."""
    module, names, *context = TARGETS[key]
    mod = importlib.import_module(f"solutions.{module}")
    extra = globals()[context[0]]() if context else ()
    return tuple(getattr(mod, name) for name in names) + tuple(extra)


def exercise_of(module: str, function: str) -> str | None:
    """The exercise whose reference is ``solutions.<module>.<function>`` (a method: ``Class.method``
    belongs to the exercise whose names include ``Class``), or None."""
    owner = function.split(".")[0]
    for key, (mod, names, *_) in TARGETS.items():
        if mod == module and owner in names:
            return key
    return None
