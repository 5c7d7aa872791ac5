"""The test of a mutation run (``make mutation``, docs/checkers.md): each exercise's reference
solution passes its own checker on the mutation seeds. On the real solutions it is a plain test
(every reference passes); run by mutmut with a mutant of a reference active, a failure here kills
that mutant. One test per exercise, which calls only that exercise's reference: mutmut maps each
mutant to the tests that reach it, so a mutant is judged by its own exercise's checker."""
from __future__ import annotations

import pytest

from attnlab.exercises import EXERCISES
from solutions import targets


@pytest.mark.parametrize("key", sorted(targets.TARGETS))
def test_the_reference_passes_its_checker(key):
    exercise = EXERCISES[key]
    for seed in targets.SEEDS:
        feedback = exercise.evaluate(*targets.objects(key), seed=seed, lang="en")
        assert feedback.ok is True, (key, seed, feedback.text)
