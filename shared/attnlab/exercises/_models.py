"""The lesson models (lesson 07's reversal model, lesson 08's translator) as plain data, for the
checkers whose exercise is read off the student's trained model ("which head?", the forward pass,
the KV-cache step). The probe records the model it was given (its config and float32 state dict);
the judge rebuilds it in clean torch, checking every name, shape and value first, so a hostile
record becomes a wrong answer ("no result"), never an exception. A grader may put the package's
checkpoint in its place (``checkpoint_data``), which is what its assignments load.
"""
from __future__ import annotations

import dataclasses
import math

import torch

from ._common import Verdict

_LIMITS = {"d_model": 512, "num_heads": 16, "num_layers": 8, "enc_layers": 8, "dec_layers": 8, "d_ff": 2048,
           "min_len": 64, "max_len": 64, "vocab_size": 64, "max_src": 64, "max_tgt": 64}


def model_data(model) -> dict:
    """{"config": the config's fields, "state_dict": float32 CPU copies} of a lesson model."""
    state = {k: v.detach().to("cpu", torch.float32, copy=True) for k, v in model.state_dict().items()}
    return {"config": dataclasses.asdict(model.config), "state_dict": state}


def _config(kind, data) -> object:
    config = data.get("config") if isinstance(data, dict) else None
    fields = {f.name for f in dataclasses.fields(kind)}
    if not isinstance(config, dict) or set(config) != fields:
        raise Verdict(False, "ex.no_result")
    for name, value in config.items():
        if name == "lang":
            if value not in ("vi", "zh"):
                raise Verdict(False, "ex.no_result")
        elif isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _LIMITS.get(name, 64):
            raise Verdict(False, "ex.no_result")
    try:
        return kind(**config)
    except (TypeError, ValueError):
        raise Verdict(False, "ex.no_result") from None


def _load(model, data) -> None:
    state = data.get("state_dict")
    want = model.state_dict()
    if not isinstance(state, dict) or set(state) != set(want):
        raise Verdict(False, "ex.no_result")
    for name, value in state.items():
        if type(value) is not torch.Tensor or value.shape != want[name].shape or not value.is_floating_point() \
                or not bool(torch.isfinite(value).all()):
            raise Verdict(False, "ex.no_result")
    model.load_state_dict({k: v.float() for k, v in state.items()})


def reversal_from(data):
    """Lesson 07's model rebuilt from ``model_data``, in eval mode (a Verdict for junk)."""
    from .. import reversal
    model = reversal.TinyTransformer(_config(reversal.TinyConfig, data))
    _load(model, data)
    return model.eval()


def translator_from(data):
    """Lesson 08's translator rebuilt from ``model_data``, in eval mode (a Verdict for junk)."""
    from .. import translator
    model = translator.Translator(_config(translator.TranslatorConfig, data))
    _load(model, data)
    return model.eval()


def checkpoint_data(lesson: str, lang: str = "vi") -> dict:
    """The package checkpoint of lesson "07" or "08" (in ``lang``) as ``model_data``: what a grader
    puts in ``results["model"]``, as the assignments load it."""
    from .. import reversal, translator
    model = reversal.load_pretrained() if lesson == "07" else translator.load_pretrained(lang)
    return model_data(model)


def finite_float(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)
