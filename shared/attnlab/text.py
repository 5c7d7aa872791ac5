"""Turning a sentence into tokens for the figures: Vietnamese/English split on spaces,
Chinese one character per token (punctuation is its own token)."""
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
