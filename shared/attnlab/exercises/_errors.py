"""A student's exception: marked as the student's where it was raised (``mark_student``, so that
``evaluate`` blames the student, not the checker), recorded as plain data (``error_data``), and given
its likely cause (``error_cause``: a tuple used as a tensor, a float where an int is needed, ...)."""
from __future__ import annotations

_STUDENT = "_attnlab_raised_by_student"


def mark_student(err: BaseException) -> BaseException:
    """Mark ``err`` as raised inside the student's code (``evaluate`` then blames the student)."""
    try:
        setattr(err, _STUDENT, True)
    except (AttributeError, TypeError):      # pragma: no cover - exceptions without a __dict__
        pass
    return err


def raised_by_student(err: BaseException) -> bool:
    return bool(getattr(err, _STUDENT, False))


# Where a raw Python error from the student's code has a likely cause: (type, any of these texts, key).
_CAUSES = (
    (TypeError, ("'tuple' object", "not tuple", "and 'tuple'", "'tuple' and", "concatenate tuple"), "ex.cause.tuple"),
    (TypeError, ("'float' object cannot be interpreted as an integer", "found element of type float",
                 "tuple of ints,but got float", "tuple of ints, but got float", "slice indices must be integers",
                 "must be int, not float", "not float"), "ex.cause.float_int"),
    (TypeError, ("'NoneType'", "NoneType"), "ex.cause.none"),
    (AttributeError, ("'NoneType'",), "ex.cause.none"),
    (AttributeError, ("'tuple' object",), "ex.cause.tuple"),
    (NameError, ("",), "ex.cause.name"),
    (IndexError, ("Dimension out of range",), "ex.cause.dim"),
    (RuntimeError, ("mat1 and mat2 shapes cannot be multiplied", "must match the size of tensor",
                    "Expected size for first two dimensions of batch2", "size mismatch"), "ex.cause.shapes"),
)


def error_cause(err: BaseException) -> str | None:
    """The message key of the likely cause of ``err``, or None where none is known."""
    text = str(err)
    for kind, needles, key in _CAUSES:
        if isinstance(err, kind) and any(n in text for n in needles):
            return key
    return None


CAUSE_KEYS = frozenset(key for *_, key in _CAUSES)


def error_data(err: BaseException) -> dict:
    """A student's exception as plain data: its type, the names of its classes, the first line."""
    text = str(err)
    return {"type": type(err).__name__, "types": [c.__name__ for c in type(err).__mro__],
            "message": text.splitlines()[0][:300] if text else "", "cause": error_cause(err)}
