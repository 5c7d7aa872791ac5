"""Shared machinery of the exercise checkers: run the student's code, report in the
current language, never print the solution."""
from __future__ import annotations

from typing import Callable

from ..i18n import register, t

register({
    "ex.not_done": {
        "vi": "⏳ Bài tập «{name}» chưa làm: hãy viết code vào chỗ TODO rồi chạy lại ô này.",
        "zh": "⏳ 练习「{name}」还没完成：请在 TODO 处写代码，然后重新运行这个单元格。",
        "en": "⏳ Exercise '{name}' is not done yet: write your code at the TODO and run this cell again.",
    },
    "ex.correct": {
        "vi": "✅ Đúng rồi! {detail}",
        "zh": "✅ 正确！{detail}",
        "en": "✅ Correct! {detail}",
    },
    "ex.wrong": {
        "vi": "❌ Chưa đúng. {detail}",
        "zh": "❌ 还不对。{detail}",
        "en": "❌ Not yet. {detail}",
    },
    "ex.error": {
        "vi": "❌ Code của bạn báo lỗi {error}: {message}",
        "zh": "❌ 你的代码报错 {error}：{message}",
        "en": "❌ Your code raised {error}: {message}",
    },
})


class NotDone(Exception):
    """The student has not written the exercise yet."""


def call_student(fn: Callable, *args, **kwargs):
    """Call the student's function; NotDone if it is missing, returns None/Ellipsis or
    raises NotImplementedError."""
    if fn is None:
        raise NotDone
    result = fn(*args, **kwargs)
    if result is None or result is Ellipsis:
        raise NotDone
    return result


def run_check(name: str, check: Callable[[], tuple[bool, str]], lang: str | None = None) -> bool | None:
    """Run ``check`` -> (ok, detail message); print the verdict. Returns True/False, or None if not done."""
    try:
        ok, detail = check()
    except (NotDone, NotImplementedError):
        print(t("ex.not_done", lang, name=t(name, lang)))
        return None
    except Exception as e:  # the student's code failed: say so briefly, no traceback
        print(t("ex.error", lang, error=type(e).__name__, message=str(e).splitlines()[0] if str(e) else ""))
        return False
    print(t("ex.correct" if ok else "ex.wrong", lang, detail=detail))
    return ok
