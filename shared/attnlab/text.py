"""Turning a sentence into tokens for the figures: Vietnamese/English split on spaces,
Chinese one character per token (punctuation is its own token); and the width of a text in a
monospace font (``display_width``, ``pad``), to line up printed tables in every script."""
from __future__ import annotations

import unicodedata


def is_cjk(ch: str) -> bool:
    """Han characters and CJK punctuation / full-width forms."""
    o = ord(ch)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x3000 <= o <= 0x303F
            or 0xFF00 <= o <= 0xFFEF or 0xF900 <= o <= 0xFAFF)


def tokenize(text: str) -> list[str]:
    """'Tôi yêu bạn' -> ['Tôi', 'yêu', 'bạn']; '我爱你' -> ['我', '爱', '你'];
    mixed text splits on spaces and around every CJK character."""
    tokens: list[str] = []
    word = ""
    for ch in unicodedata.normalize("NFC", text):
        if ch.isspace() or is_cjk(ch):
            if word:
                tokens.append(word)
                word = ""
            if not ch.isspace():
                tokens.append(ch)
        else:
            word += ch
    if word:
        tokens.append(word)
    return tokens


def display_width(text: str) -> int:
    """How many columns ``text`` takes in a monospace font: a wide or full-width character (Han,
    full-width punctuation, ｅ) two, a combining mark none, any other character one."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (``display_width``), so that columns line
    up in a printed table whatever the script: ``f"{pad(name, 20)} {value}"``."""
    return text + " " * max(0, width - display_width(text))
