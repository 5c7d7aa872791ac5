"""Exercise checkers, one module per lesson: ``attnlab.exercises.l04.check_causal_mask(fn)``.

Each checker runs the student's code and prints feedback in the current language (what is
right, or a hint on the typical mistake, never the solution); it returns None. Its twin
``evaluate_x(fn, lang=None, *, seed=None)`` returns the verdict as a ``Feedback(ok, text, key,
seed)`` (ok: True, False, or None while the exercise is not done yet or the checker itself failed;
key: the message key of the verdict or hint) without printing. Each is a probe (runs the student's
code on inputs drawn from the seed, records plain data) and a judge (decides from that data alone):
``EXERCISES["l01.softmax"].probe`` / ``.judge``, for a grader that runs them in two processes
(docs/checkers.md). ``passed(name)`` says whether an exercise passed in this kernel, and
``reveal(name, text)`` prints an answer only then. The words are in ``attnlab/messages/lNN.json``;
the shared machinery in ``_common``. ``solutions/catalogue.py`` lists each exercise's reference and
typical wrong solutions.
"""
from . import capstone, capstone_steps, l01, l02, l03, l04, l05, l06, l07, l08, l10  # noqa: F401
from ._common import Exercise, Feedback, load_results, passed, reveal, save_results  # noqa: F401

#: Every exercise converted to the probe/judge split, by its registry key (``"l01.softmax"``).
EXERCISES: dict[str, Exercise] = {
    exercise.key: exercise
    for module in (l01, l02, l03, l04, l05, l06, l07, l08, capstone_steps, capstone, l10)
    for exercise in getattr(module, "EXERCISES", ())
}
