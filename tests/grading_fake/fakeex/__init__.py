"""A stand-in exercise registry for tests/test_grading_sandbox.py, shaped as /work/brief/CHECKERS.md
describes ``attnlab.exercises`` (EXERCISES, probe/judge, _common.save_results/load_results/evaluate),
for lesson 01's three exercises: the grader's harness is tested with it before (and independently
of) the real checkers. Not a checker to learn from: it knows one mistake per exercise at most."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import _common, l01


@dataclass(frozen=True)
class Exercise:
    name: str
    probe: Callable
    judge: Callable


EXERCISES = {
    "l01.softmax": Exercise("l01.softmax", l01.probe_softmax, l01.judge_softmax),
    "l01.attention": Exercise("l01.attention", l01.probe_attention, l01.judge_attention),
    "l01.dot_std": Exercise("l01.dot_std", l01.probe_dot_std, l01.judge_dot_std),
}
