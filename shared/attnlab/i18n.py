"""A small message catalog: everything the package prints or shows, in vi, zh and en.

Modules add their own entries with ``register({...})``; ``t(key, **fields)`` formats one
in the current language (``set_language``) or an explicit ``lang=``.
"""
from __future__ import annotations

import string

LANGUAGES = ("vi", "zh", "en")
_current = "en"
CATALOG: dict[str, dict[str, str]] = {}


def set_language(lang: str) -> None:
    """Choose the language of printed messages and figure titles: 'vi', 'zh' or 'en'."""
    global _current
    _current = _normalize(lang)


def get_language() -> str:
    return _current


def _normalize(lang: str | None) -> str:
    if lang is None:
        return _current
    code = str(lang).lower().split("-")[0].split("_")[0]
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    return code


def register(entries: dict[str, dict[str, str]]) -> None:
    """Add messages; each key needs a text for every language, with the same {fields}."""
    for key, texts in entries.items():
        missing = [lang for lang in LANGUAGES if lang not in texts]
        if missing:
            raise ValueError(f"message {key!r} lacks {', '.join(missing)}")
        fields = {lang: _fields(texts[lang]) for lang in LANGUAGES}
        if len({frozenset(f) for f in fields.values()}) != 1:
            raise ValueError(f"message {key!r} uses different fields per language: {fields}")
        if key in CATALOG and CATALOG[key] != texts:
            raise ValueError(f"message {key!r} is registered twice with different texts")
        CATALOG[key] = dict(texts)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def t(key: str, lang: str | None = None, **fields) -> str:
    """The message ``key`` in ``lang`` (default: the current language), formatted with ``fields``."""
    try:
        texts = CATALOG[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in the catalog") from None
    return texts[_normalize(lang)].format(**fields)


register({
    "pass": {"vi": "ĐẠT", "zh": "通过", "en": "PASS"},
    "fail": {"vi": "CHƯA ĐẠT", "zh": "未通过", "en": "FAIL"},
    # The causality experiment (seed 000).
    "causality.title": {
        "vi": "=== Mặt nạ nhân quả có thật sự hoạt động? ===",
        "zh": "=== 因果掩码真的有效吗？ ===",
        "en": "=== Does the causal mask actually work? ===",
    },
    "causality.changed": {
        "vi": "  chỉ thay đổi token cuối cùng",
        "zh": "  只改动最后一个词元",
        "en": "  changed the last token only",
    },
    "causality.earlier": {
        "vi": "  thay đổi lớn nhất ở các vị trí 0..{last}: {drift:.2e}",
        "zh": "  位置 0..{last} 的最大变化：{drift:.2e}",
        "en": "  largest change in positions 0..{last}: {drift:.2e}",
    },
    "causality.last": {
        "vi": "  thay đổi lớn nhất ở vị trí cuối:  {drift:.4f}",
        "zh": "  最后一个位置的最大变化：{drift:.4f}",
        "en": "  largest change in the last position:  {drift:.4f}",
    },
    "causality.pass": {
        "vi": "  ĐẠT — các vị trí trước không đổi, vị trí cuối thì có.\n"
              "  Đó chính là tính nhân quả: quá khứ không nhìn thấy tương lai.",
        "zh": "  通过 —— 前面的位置纹丝不动，只有最后一个位置变了。\n"
              "  这就是因果性：过去看不到未来。",
        "en": "  PASS — earlier positions did not move, the last one did.\n"
              "  That is causality: the past cannot see the future.",
    },
    "causality.fail": {
        "vi": "  CHƯA ĐẠT — mặt nạ để lọt thông tin ngược thời gian.",
        "zh": "  未通过 —— 掩码把未来的信息泄露给了过去。",
        "en": "  FAIL — the mask is leaking information backwards in time.",
    },
    "causality.fail_last": {
        "vi": "  CHƯA ĐẠT — vị trí cuối không hề đổi: thí nghiệm không đo được gì.",
        "zh": "  未通过 —— 最后一个位置也没变：这个实验什么都没测到。",
        "en": "  FAIL — the last position did not move either: the experiment measured nothing.",
    },
    "causality.unmasked": {
        "vi": "\n  cùng thí nghiệm nhưng KHÔNG có mặt nạ: các vị trí trước đổi tới {drift:.4f}",
        "zh": "\n  同样的实验但不加掩码：前面的位置变化了 {drift:.4f}",
        "en": "\n  same experiment with NO mask: earlier positions moved by {drift:.4f}",
    },
    "causality.unmasked_ok": {
        "vi": "  Khác 0, đúng như dự đoán — nghĩa là phép thử ở trên đo đúng tác dụng của\n"
              "  mặt nạ, chứ không phải một sự tình cờ của kiến trúc.",
        "zh": "  不为零，符合预期 —— 说明上面的测试测的确实是掩码的作用，\n"
              "  而不是模型结构的某种巧合。",
        "en": "  Non-zero, as expected — which confirms the test above measures the mask\n"
              "  and not some accident of the architecture.",
    },
    "causality.unmasked_bad": {
        "vi": "  Bằng 0 — lạ: không có mặt nạ mà các vị trí trước vẫn không đổi, nên phép thử trên chưa chứng minh được gì.",
        "zh": "  为零 —— 奇怪：不加掩码前面的位置也不变，所以上面的测试什么也证明不了。",
        "en": "  Zero — odd: without a mask earlier positions still did not move, so the test above proves nothing.",
    },
})
