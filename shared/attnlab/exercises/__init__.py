"""Exercise checkers, one module per lesson: ``attnlab.exercises.l04.check_causal_mask(fn)``.

Each checker runs the student's code, prints feedback in the current language (what is
right, or a hint on the typical mistake, never the solution) and returns True/False, or
None while the exercise is not done yet.
"""
from . import l01, l02, l03, l04, l05, l06, l07  # noqa: F401
