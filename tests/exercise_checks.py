"""Helpers shared by the exercise-checker tests."""
from attnlab.course.i18n import t

#: The probes' seeds the tests use: every verdict must hold on each (sizes are drawn from the seed).
SEEDS = (0, 1, 2)


def graded(check, *args, **kwargs):
    """What ``check(*args)`` shows a student, as a test sees it: prints the same feedback line
    (through ``check.evaluate``, the checker's unprinted twin) and returns its verdict
    (True, False, or None while not done). ``test_checkers_print_and_return_none`` shows that
    ``check`` itself prints exactly this line and returns None."""
    if kwargs.get("seed", 0) is None:           # a fresh seed: the checker's default
        del kwargs["seed"]
    feedback = check.evaluate(*args, **kwargs)
    print(feedback.text)
    return feedback.ok


def assert_hint(check, diagnose, fn, key, capsys, seed=None):
    """``diagnose`` picks the hint ``key``; ``check`` prints exactly that hint and says wrong.
    ``seed``: for a checker split into probe and judge, ``diagnose(fn, seed=seed)`` and the same seed
    for ``check`` (``diagnose = EXERCISE.diagnose``)."""
    ok, got_key, fields = diagnose(fn) if seed is None else diagnose(fn, seed=seed)
    assert (ok, got_key) == (False, key), (seed, got_key, fields)
    assert graded(check, fn, seed=seed) is False
    assert capsys.readouterr().out == t("ex.wrong", "en", detail=t(key, "en", **fields)) + "\n"


def todo(*args):
    # TODO: the untouched exercise
    return None
