"""Which reference solution each converted exercise checks: the code that mutation testing mutates.

``TARGETS[registry key] = (module, names)``: ``names`` are the attributes of ``solutions.<module>``
passed to the exercise's probe, in order (``attnlab.exercises.EXERCISES[key].probe(*objects, seed=s)``).
A lesson whose probe also takes the lesson's context (07 and 08: the model) gives a third item, the
name of a function of ``solutions.targets`` that makes the probe's arguments from those objects.

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
    "l06.block_params": ("l06", ("block_params",)),
    "l06.masks": ("l06", ("make_masks",)),
    "l06.greedy_step": ("l06", ("greedy_step",)),
    "l07.loss_mask": ("l07", ("loss_mask",)),
    "l07.forward": ("l07", ("forward",), "_with_reversal_model"),
    "l07.reversal_head": ("l07", ("reversal_head",), "_reversal_answer"),
    "l08.cache_step": ("l08", ("attend_step",), "_with_translator"),
    "l08.aligned_head": ("l08", ("aligned_head",), "_translator_answer"),
    "capstone_steps.split": ("capstone_steps", ("split_heads",)),
    "capstone_steps.scores": ("capstone_steps", ("attention_scores",)),
    "capstone_steps.mask": ("capstone_steps", ("apply_mask",)),
    "capstone_steps.merge": ("capstone_steps", ("merge_heads",)),
    "capstone.multihead": ("capstone", ("MultiHeadAttention",)),
    "capstone.block": ("capstone", ("TransformerBlock",)),
}

#: The probe seeds of a mutation run: a mutant is killed when its checker rejects it on any of them.
SEEDS = (0, 1, 2)


def objects(key: str) -> tuple:
    """The objects the probe of exercise ``key`` takes: the reference functions, or, for an exercise
    with a context, what its context function makes of them (the lesson's model, an answer read off it)."""
    module, names, *context = TARGETS[key]
    mod = importlib.import_module(f"solutions.{module}")
    found = tuple(getattr(mod, name) for name in names)
    return globals()[context[0]](*found) if context else found


# Lessons 07 and 08: the probe also takes the lesson's model (the package checkpoint, loaded once);
# for "which head?" the answer is the reference function's output on that model.
_MODELS: dict = {}


def _model(lesson: str):
    if lesson not in _MODELS:
        from attnlab import reversal, translator
        _MODELS[lesson] = reversal.load_pretrained() if lesson == "07" else translator.load_pretrained("vi")
    return _MODELS[lesson]


def _with_reversal_model(forward):
    return forward, _model("07")


def _reversal_answer(reversal_head):
    return _model("07"), reversal_head(_model("07"))


def _with_translator(attend_step):
    return attend_step, _model("08")


def _translator_answer(aligned_head):
    return _model("08"), aligned_head(_model("08"))


def exercise_of(module: str, function: str) -> str | None:
    """The exercise whose reference is ``solutions.<module>.<function>`` (a method: ``Class.method``
    belongs to the exercise whose names include ``Class``), or None."""
    owner = function.split(".")[0]
    for key, (mod, names, *_) in TARGETS.items():
        if mod == module and owner in names:
            return key
    return None
