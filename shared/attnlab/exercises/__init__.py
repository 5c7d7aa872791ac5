"""Exercise checkers, one module per lesson: ``attnlab.exercises.l04.check_causal_mask(fn)``.

Each checker runs the student's code and prints feedback in the current language (what is
right, or a hint on the typical mistake, never the solution); it returns None. Its twin
``evaluate_x(fn)`` returns the verdict as a ``Feedback(ok, text, key)`` (ok: True, False, or
None while the exercise is not done yet or the checker itself failed; key: the message key of
the verdict or hint) without printing. The words are in ``attnlab/messages/l0N.json``; the
shared machinery (running the student's code, the verdicts, the random state) in ``_common``.
``solutions/catalogue.py`` lists each exercise's reference and typical wrong solutions.
"""
from . import capstone, l01, l02, l03, l04, l05, l06, l07, l08, l10  # noqa: F401
from ._common import Feedback  # noqa: F401
