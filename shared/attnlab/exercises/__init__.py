"""Exercise checkers, one module per lesson: ``attnlab.exercises.l04.check_causal_mask(fn)``.

Each checker runs the student's code and prints feedback in the current language (what is
right, or a hint on the typical mistake, never the solution); it returns None. Its twin
``evaluate_x(fn)`` returns the verdict as a ``Feedback(ok, text)`` (ok: True, False, or
None while the exercise is not done yet) without printing. The words are in
``attnlab/messages/l0N.json``.
"""
from . import capstone, l01, l02, l03, l04, l05, l06, l07, l08, l10  # noqa: F401
from ._common import Feedback  # noqa: F401
