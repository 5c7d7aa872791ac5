"""Shared machinery of the exercise checkers: run the student's code, word the verdict in the
current language, never print the solution, never touch the caller's world.

Each exercise is split in two (docs/checkers.md):

    probe_x(student..., *, seed) -> dict           # next to the student's code: inputs drawn from
                                                   # the seed, the student's code called, plain data back
    judge_x(results, *, seed) -> (ok, key, fields) # pure and trusted: the same inputs from the seed,
                                                   # the references from the package; never student code
    evaluate_x(student..., lang=None, *, seed=None) -> Feedback   # both, worded (a fresh seed if None)
    check_x = printing(evaluate_x)                 # what a notebook calls: prints, returns None

The probe side (``Draw``, ``attempt``, ``call_student``, ``untouched``, ``source_of``) lives in
``_probe``, the judge side (``judging``, ``Verdict``, ``value_of``, ``forbidden_use``,
``save_results``/``load_results``) in ``_judge``; both are re-exported here. ``Exercise`` is one
entry of the registry ``attnlab.exercises.EXERCISES``. ``evaluate`` records each verdict, so that
``passed(name)`` and ``reveal(name, ...)`` can hold back a cell that would show an answer.

A diagnosis ``(ok, key, fields)`` has ok True (right), False (wrong: ``key`` names the hint) or
None (not done yet). A field may itself be a message key (``Msg("l06.masks.name.enc")``),
translated when worded. Every checker runs on a forked random state, seeded the same way each time,
and leaves torch's thread count as it found it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import torch

from ..course.i18n import t
from ._judge import (Diagnosis, Verdict, as_tensor, changed_inputs, check_plain, error_of, finite, forbidden_use,  # noqa: F401
                     is_tensor, judging, kind, load_results, number, outcome_of, raises, save_results,
                     student_error, value_of)
from ._errors import CAUSE_KEYS, error_cause  # noqa: F401
from ._probe import (Draw, NotDone, generator, torch_seed, ReturnedNone, attempt, call_student,  # noqa: F401
                     error_data, fresh_seed,
                     mark_student, opaque, raised_by_student, references, seeded, source_of, to_data,
                     untouched)


@dataclass(frozen=True)
class Feedback:
    """A checker's verdict: ``ok`` is True (correct), False (wrong) or None (not done yet, or the
    checker itself failed); ``text`` is what the student reads; ``key`` the message key of the
    verdict or hint (what a test or a grader compares), None while not done."""

    ok: bool | None
    text: str
    key: str | None = None
    seed: int | None = field(default=None, compare=False)


class Msg(str):
    """A message field whose value is a message key, translated when the verdict is worded."""




# --------------------------------------------------------------------------- comparing tensors
def close(a, b, rtol: float = 1e-4, atol: float = 1e-5, equal_nan: bool = False) -> bool:
    """Both tensors, the same shape and all values close (in float64; NaN matches only with equal_nan)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    return bool(torch.allclose(a.detach().cpu().double(), b.detach().cpu().double(), rtol=rtol, atol=atol,
                               equal_nan=equal_nan))


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest absolute difference (NaN counts as infinite); 0.0 for empty tensors."""
    d = (a.detach().cpu().double() - b.detach().cpu().double()).abs()
    return float(d.nan_to_num(nan=float("inf")).max()) if d.numel() else 0.0


def shape(x) -> str:
    """'(2, 3, 4)' for a tensor or a size."""
    size = x.shape if isinstance(x, torch.Tensor) else x
    return "(" + ", ".join(str(int(s)) for s in size) + ")"


def type_name(x) -> str:
    return type(x).__name__


def seed(n: int) -> None:
    """Seed the CPU generator only (``torch.manual_seed`` would also reseed CUDA, which evaluate's
    fork does not restore); the checkers build and run everything on the CPU."""
    torch.random.default_generator.manual_seed(torch_seed(n))


# --------------------------------------------------------------------------- student errors
def _first_line(err: BaseException) -> str:
    return str(err).splitlines()[0] if str(err) else ""


def _word(value, lang: str | None):
    return t(value, lang) if isinstance(value, Msg) else value


def wording(key: str, fields: dict, lang: str | None) -> str:
    """``t(key, **fields)`` with every ``Msg`` field translated first."""
    return t(key, lang, **{k: _word(v, lang) for k, v in fields.items()})


_PASSED: dict[str, bool] = {}            # exercise name key -> did its latest check pass (this kernel)


def word(name: str, diagnosis: Diagnosis, lang: str | None = None, *, discussion: str | None = None,
         seed: int | None = None) -> Feedback:
    """The Feedback a student reads for ``diagnosis = (ok, key, fields)`` of the exercise ``name``.

    ok None: not done yet (``key``: the message, ``ex.not_done`` by default, with ``{name}``);
    ``ex.error``: the student's exception, as it is; ``ex.cause.*`` with an ``error`` field: the
    likely cause of the student's exception first, then the exception; otherwise ✅/❌ and the
    hint. ``discussion``: a message key shown after a pass, with the same fields."""
    ok, key, fields = diagnosis
    if ok is None:
        return Feedback(None, wording(key or "ex.not_done", {"name": Msg(name), **fields}, lang), None, seed)
    if key == "ex.error":
        return Feedback(False, t("ex.error", lang, error=fields.get("error", ""), message=fields.get("message", "")),
                        key, seed)
    if key in CAUSE_KEYS and "error" in fields:
        return Feedback(False, t("ex.error_cause", lang, cause=t(key, lang), error=fields["error"],
                                 message=fields.get("message", "")), key, seed)
    text = t("ex.correct" if ok else "ex.wrong", lang, detail=wording(key, fields, lang))
    if ok and discussion:
        text += "\n" + t("ex.discussion", lang, text=wording(discussion, fields, lang))
    return Feedback(bool(ok), text, key, seed)


def evaluate(name: str, diagnose: Callable[[], Diagnosis], lang: str | None = None, *,
             discussion: str | None = None, seed: int | None = None) -> Feedback:
    """Run ``diagnose() -> (ok, key, fields)`` and word the verdict; ``name`` is the exercise's key.

    ``diagnose`` runs on a forked random state seeded with 0 (the notebook's random state is never
    touched, and the checker's draws never depend on it) and torch's thread count is restored.
    Raised inside it: NotDone (not done), ReturnedNone (a wrong answer: the function returns None),
    an exception marked as the student's (``call_student``: reported with its likely cause), any
    other exception (the checker's own failure, never the student's fault). The verdict is
    recorded for ``passed(name)``. ``seed``: only recorded in the Feedback.
    """
    threads = torch.get_num_threads()
    try:
        with torch.random.fork_rng(devices=[]):
            _common_seed(0)
            diagnosis = diagnose()
    except NotDone as err:
        diagnosis = (None, err.key, err.fields)
    except ReturnedNone:
        diagnosis = (False, "ex.returned_none", {})
    except NotImplementedError:
        diagnosis = (None, "ex.not_done", {})
    except Exception as err:
        if not raised_by_student(err):             # a bug of the checker: never the student's fault
            _PASSED[name] = False
            return Feedback(None, t("ex.checker_error", lang, error=type(err).__name__, message=_first_line(err)),
                            None, seed)
        diagnosis = student_error(error_data(err)).diagnosis
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    feedback = word(name, diagnosis, lang, discussion=discussion, seed=seed)
    _PASSED[name] = feedback.ok is True
    return feedback


# --------------------------------------------------------------------------- the registry
@dataclass(frozen=True)
class Exercise:
    """One exercise, callable by name (``attnlab.exercises.EXERCISES["l01.softmax"]``).

    ``key``: the registry key, ``<module>.<evaluate_x without "evaluate_">`` (``l04.causal_mask``
    for ``attnlab.exercises.l04.evaluate_causal_mask``: a grader derives it from the check call);
    ``title``: the message key of its display name (what ``evaluate``
    and ``passed`` use); ``names``: what the student defines in the notebook (a function, a class,
    a value); ``args``: what the probe takes, in order, looked up by name in the notebook's
    namespace (``names`` and the lesson's context, e.g. ``model``); ``probe(*args, seed) -> dict``
    and ``judge(results, seed) -> Diagnosis``: the two halves; ``discussion``: shown after a pass."""

    key: str
    title: str
    names: tuple[str, ...]
    probe: Callable[..., dict]
    judge: Callable[..., Diagnosis]
    args: tuple[str, ...] = ()
    discussion: str | None = None

    @property
    def name(self) -> str:
        """The message key ``evaluate`` takes (the grader's name for ``title``)."""
        return self.title

    @property
    def arguments(self) -> tuple[str, ...]:
        return self.args or self.names

    def probe_namespace(self, namespace: dict, *, seed: int) -> dict:
        """The probe on the objects of a notebook's namespace (a missing name: not done)."""
        return self.probe(*(namespace.get(a) for a in self.arguments), seed=seed)

    def evaluate(self, *objects, lang: str | None = None, seed: int | None = None) -> Feedback:
        """Probe and judge in this process (a fresh seed per call if None), worded."""
        s = fresh_seed() if seed is None else int(seed)
        return evaluate(self.title, lambda: self.judge(self.probe(*objects, seed=s), seed=s), lang,
                        discussion=self.discussion, seed=s)

    def diagnose(self, *objects, seed: int) -> Diagnosis:
        """Probe and judge in this process, unworded: ``(ok, key, fields)`` (for tests)."""
        with torch.random.fork_rng(devices=[]):
            return self.judge(self.probe(*objects, seed=seed), seed=seed)

    def verdict(self, results: dict, *, seed: int, lang: str | None = None) -> Feedback:
        """The judge alone on recorded results (the grader's side), worded."""
        return word(self.title, self.judge(results, seed=seed), lang, discussion=self.discussion, seed=seed)


def evaluate_exercise(exercise: Exercise, objects: tuple, lang: str | None = None, seed: int | None = None) -> Feedback:
    """``exercise.evaluate(*objects, lang=lang, seed=seed)``: what each ``evaluate_x`` returns."""
    return exercise.evaluate(*objects, lang=lang, seed=seed)


def _title(name: str) -> str:
    """The title key of exercise ``name`` (a registry key, or already a title key such as "l07.ex.head")."""
    from ..course.i18n import CATALOG
    from . import EXERCISES
    if name in EXERCISES:
        return EXERCISES[name].title
    if ".ex." in name and name in CATALOG:
        return name
    raise ValueError(f"no exercise {name!r}: use a key of attnlab.exercises.EXERCISES (e.g. 'l01.softmax') "
                     f"or an exercise's title key (e.g. 'l01.ex.softmax')")


def passed(name: str) -> bool:
    """Did the latest check of exercise ``name`` (its registry key, ``"l01.softmax"``, or its title
    key, ``"l01.ex.softmax"``) pass in this kernel?"""
    return _PASSED.get(_title(name), False)


def reveal(name: str, show, lang: str | None = None) -> None:
    """Show an answer only once the student's own answer to exercise ``name`` passed: ``show`` is
    a text to print or a function to call (it prints or draws); otherwise print which exercise to
    finish first. For the cells that would give an exercise's answer away ("which head is it?")."""
    if not passed(name):
        print(t("ex.reveal_locked", lang, name=t(_title(name), lang)))
        return
    if callable(show):
        show()
    else:
        print(show)


def printing(evaluate_fn: Callable[..., Feedback]) -> Callable[..., None]:
    """``check_x`` from ``evaluate_x``: the same arguments; prints the feedback, returns None."""
    @functools.wraps(evaluate_fn)
    def check(*args, **kwargs) -> None:
        print(evaluate_fn(*args, **kwargs).text)

    check.__name__ = check.__qualname__ = evaluate_fn.__name__.replace("evaluate_", "check_", 1)
    check.__annotations__ = {**evaluate_fn.__annotations__, "return": None}
    del check.__wrapped__                      # its signature is not evaluate's return type
    check.evaluate = evaluate_fn
    return check


_common_seed = seed
