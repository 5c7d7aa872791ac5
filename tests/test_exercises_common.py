"""Every student-facing checker prints its feedback and returns None (nothing for IPython 7 or
8 to echo), and prints exactly the line its ``evaluate_*`` twin returns."""
from __future__ import annotations

import functools
import inspect

import pytest
import torch

from attnlab import exercises
from attnlab.exercises import Feedback


@functools.lru_cache(maxsize=None)
def lesson_model(module: str):
    """The model a lesson hands its checkers (lesson 07: the tiny reverser, lesson 08: the translator)."""
    import attnlab
    if module.endswith("l10"):
        return attnlab.poet.load_pretrained("vi")
    return attnlab.reversal.load_pretrained() if module.endswith("l07") else attnlab.translator.load_pretrained("vi")


# Arguments that are the lesson's context, not the student's answer (as the notebooks pass them).
CONTEXT = {"corpus_lang": "vi", "low": 0.9, "high": 0.5}
UNTOUCHED = {"answer": None, "guess": None}       # my_head = None / my_guess = None  # TODO

MODULES = [getattr(exercises, name) for name in sorted(vars(exercises))
           if (name[:1] == "l" and name[1:].isdigit()) or name == "capstone"]
CHECKERS = [(m, name) for m in MODULES for name in sorted(vars(m)) if name.startswith("check_")]


def test_every_module_is_covered():
    assert len(MODULES) >= 8 and len(CHECKERS) >= 20


@pytest.mark.parametrize("module, name", CHECKERS, ids=[f"{m.__name__.rsplit('.', 1)[1]}.{n}" for m, n in CHECKERS])
def test_checkers_print_and_return_none(module, name, capsys):
    check = getattr(module, name)
    evaluate = getattr(module, name.replace("check_", "evaluate_", 1))
    assert check.evaluate is evaluate and check.__name__ == name
    # the untouched exercise: every student argument a stub that returns None (the TODO); a lesson
    # model, where the checker takes one, is a real one. tests/test_catalogue.py runs the notebooks' TODOs.
    params = [p for p in inspect.signature(evaluate).parameters.values() if p.default is inspect.Parameter.empty]
    def untouched(name):
        if name == "model":
            return lesson_model(module.__name__)
        if name in CONTEXT:
            return CONTEXT[name]
        return UNTOUCHED.get(name, lambda *a, **k: None)
    args = [untouched(p.name) for p in params]
    feedback = evaluate(*args, lang="en")
    assert isinstance(feedback, Feedback)
    assert check(*args, lang="en") is None
    assert capsys.readouterr().out == feedback.text + "\n"
    assert feedback.ok is None and feedback.text[0] == "⏳" and feedback.key is None


# ------------------------------------------------------------------------ who raised the error
from attnlab.exercises import _common  # noqa: E402
from attnlab.course.i18n import t  # noqa: E402


def _student(fn, *args):
    return lambda: (True, "l01.softmax.ok", {}) if _common.call_student(fn, *args) is not None else None


def test_an_error_in_the_students_code_is_the_students():
    fb = _common.evaluate("l01.ex.softmax", _student(lambda: {}["missing"]), "en")
    assert fb.ok is False and fb.key == "ex.error"
    assert fb.text == t("ex.error", "en", error="KeyError", message="'missing'")


def test_an_error_in_the_checker_is_the_checkers():
    """A bug of the checker (here after the student's code ran fine) never blames the student."""
    def buggy_checker():
        _common.call_student(lambda: 1)
        return {}["missing"]
    fb = _common.evaluate("l01.ex.softmax", buggy_checker, "en")
    assert fb.ok is None and fb.key is None
    assert fb.text == t("ex.checker_error", "en", error="KeyError", message="'missing'")
    assert "Your code" not in fb.text and fb.text.startswith("⚠️")
    for lang in ("vi", "zh"):
        assert _common.evaluate("l01.ex.softmax", buggy_checker, lang).text.startswith("⚠️")


def _raises(fn):
    try:
        fn()
    except Exception as err:                    # noqa: BLE001
        return err
    raise AssertionError("did not raise")


@pytest.mark.parametrize("mistake, cause", [
    (lambda: torch.nn.LayerNorm(4)((torch.zeros(2, 4), torch.zeros(2, 4))), "ex.cause.tuple"),   # x = block(x)
    (lambda: (torch.zeros(2, 4), None) + torch.zeros(2, 4), "ex.cause.tuple"),
    (lambda: torch.zeros(12).view(3, 12 / 3), "ex.cause.float_int"),                           # D / H
    (lambda: torch.zeros(5)[: 5 / 2], "ex.cause.float_int"),
    (lambda: torch.ones(2, 3, 12 / 4), "ex.cause.float_int"),
    (lambda: None.shape, "ex.cause.none"),
    (lambda: torch.zeros(2, 3) @ torch.zeros(2, 3), "ex.cause.shapes"),
    (lambda: torch.zeros(2, 3) + torch.zeros(2, 4), "ex.cause.shapes"),
    (lambda: torch.zeros(2, 3).transpose(-3, -1), "ex.cause.dim"),
    (lambda: undefined_name, "ex.cause.name"),                                                 # noqa: F821
], ids=["block-tuple", "tuple-plus", "view-float", "slice-float", "ones-float", "none", "matmul", "add", "dim", "name"])
def test_raw_python_errors_get_their_likely_cause_first(mistake, cause):
    err = _raises(mistake)
    assert _common.error_cause(err) == cause
    fb = _common.evaluate("l01.ex.softmax", _student(mistake), "en")
    assert (fb.ok, fb.key) == (False, cause)
    first, second = fb.text.split("\n")
    assert first == "❌ " + t(cause, "en") and type(err).__name__ in second


def test_no_cause_is_invented():
    assert _common.error_cause(ZeroDivisionError("division by zero")) is None
    assert _common.error_cause(ValueError("something else")) is None


def test_the_discussion_follows_a_pass_only():
    passed = _common.evaluate("l07.ex.head", lambda: (True, "l07.ok.head", {"layer": 2, "head": 1, "pct": 77}), "en",
                              discussion="l07.discuss.head")
    assert passed.text.endswith("\n" + t("ex.discussion", "en", text=t("l07.discuss.head", "en")))
    failed = _common.evaluate("l07.ex.head", lambda: (False, "l07.hint.head_layer", {"layer": 1}), "en",
                              discussion="l07.discuss.head")
    assert "💬" not in failed.text and failed.key == "l07.hint.head_layer"


def test_no_dead_helpers_left():
    assert not hasattr(_common, "run_check")
    for module, _ in CHECKERS:
        for copy in ("_verdict", "_evaluate", "_printing", "_torch_mha_agrees", "_own_random_state"):
            assert not hasattr(module, copy), (module.__name__, copy)
