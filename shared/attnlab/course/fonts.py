"""Fonts for the course's matplotlib figures.

Latin and Vietnamese text uses DejaVu Sans (bundled with matplotlib); Chinese
falls back, glyph by glyph, to a bundled subset of Noto Sans CJK SC (SIL OFL
1.1, see ``fonts/OFL.txt``) renamed "Noto Sans SC AttnLab". Nothing needs to be
installed on the machine (e.g. Google Colab).
"""

from __future__ import annotations

import functools
import os
import pathlib

__all__ = [
    "FONT_PATH",
    "CJK_FAMILY",
    "LATIN_FAMILY",
    "use_course_fonts",
    "unsupported_chars",
]

FONT_PATH = pathlib.Path(__file__).resolve().parent.parent / "fonts" / "NotoSansSC-AttnLab-Subset.ttf"
CJK_FAMILY = "Noto Sans SC AttnLab"
LATIN_FAMILY = "DejaVu Sans"


def use_course_fonts() -> None:
    """Make matplotlib draw text with DejaVu Sans, falling back to the bundled CJK font.

    Idempotent; registers the font in memory only (no font-cache rebuild).
    """
    import matplotlib as mpl
    from matplotlib import font_manager

    manager = font_manager.fontManager
    path = os.fsdecode(FONT_PATH)
    if not any(entry.fname == path for entry in manager.ttflist):
        manager.addfont(path)

    families = [LATIN_FAMILY, CJK_FAMILY]
    mpl.rcParams["font.family"] = families
    mpl.rcParams["font.sans-serif"] = families + [
        name for name in mpl.rcParams["font.sans-serif"] if name not in families
    ]
    # Both fonts have U+2212 MINUS SIGN, so the typographic minus is safe.
    mpl.rcParams["axes.unicode_minus"] = True


@functools.lru_cache(maxsize=None)
def _coverage() -> frozenset[int]:
    import matplotlib as mpl
    from matplotlib.ft2font import FT2Font

    dejavu = pathlib.Path(mpl.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
    covered: set[int] = set()
    for path in (dejavu, FONT_PATH):
        covered.update(FT2Font(os.fsdecode(path)).get_charmap())
    return frozenset(covered)


def unsupported_chars(text: str) -> list[str]:
    """Distinct non-whitespace characters of *text* that no course font can draw.

    Returned in order of first appearance, e.g. ``["🤔"]`` for ``"我爱你 🤔 Tôi"``.
    """
    covered = _coverage()
    missing: dict[str, None] = {}
    for char in text:
        if not char.isspace() and ord(char) not in covered:
            missing.setdefault(char, None)
    return list(missing)
