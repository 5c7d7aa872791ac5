"""The bundled CJK font: coverage, fallback rendering without warnings, PDF/PS."""

import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import matplotlib
import pytest
from matplotlib import font_manager
from matplotlib.figure import Figure
from fontTools.ttLib import TTFont

from attnlab.course.fonts import (
    CJK_FAMILY,
    FONT_PATH,
    LATIN_FAMILY,
    unsupported_chars,
    use_course_fonts,
)

ZH = "注意力权重：我爱你，查询与键"
VI = "Trọng số chú ý: Tôi yêu bạn, khóa, truy vấn"


def _figure():
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    ax.imshow([[0.2, -0.5, 0.3], [0.1, 0.6, -0.3], [0.4, 0.4, 0.2]])
    ax.set_title(f"{ZH}\n{VI}")
    ax.set_xticks(range(3), ["我", "爱", "你"])
    ax.set_yticks(range(3), ["Tôi", "yêu", "bạn"])
    ax.set_xlabel("键（key）与值 “value” … −1 × 2")
    return fig


@pytest.fixture
def course_fonts():
    with matplotlib.rc_context():
        use_course_fonts()
        yield


def test_png_has_no_missing_glyph_warnings(course_fonts):
    use_course_fonts()  # idempotent
    assert sum(e.fname == str(FONT_PATH) for e in font_manager.fontManager.ttflist) == 1
    assert matplotlib.rcParams["font.family"][:2] == [LATIN_FAMILY, CJK_FAMILY]
    found = font_manager.findfont(font_manager.FontProperties(family=CJK_FAMILY),
                                  fallback_to_default=False)
    assert pathlib.Path(found) == FONT_PATH
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        buf = io.BytesIO()
        _figure().savefig(buf, format="png")
    assert buf.getvalue().startswith(b"\x89PNG")


@pytest.mark.parametrize("fmt", ["pdf", "ps"])
@pytest.mark.parametrize("fonttype", [3, 42])
def test_vector_output_embeds_bundled_font(course_fonts, fmt, fonttype):
    matplotlib.rcParams[f"{fmt}.fonttype"] = fonttype
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        buf = io.BytesIO()
        _figure().savefig(buf, format=fmt)
    data = buf.getvalue()
    assert data.startswith(b"%PDF" if fmt == "pdf" else b"%!PS")
    assert b"NotoSansSCAttnLab" in data and b"DejaVuSans" in data


# A fresh interpreter and MPLCONFIGDIR whose font manager knows only
# matplotlib's own fonts, as on Colab: Chinese must fail without
# use_course_fonts() and render cleanly with it.
_ISOLATED = textwrap.dedent(
    """
    import io, json, pathlib, sys, warnings
    import matplotlib
    from matplotlib import font_manager
    from matplotlib.figure import Figure

    mpl_fonts = pathlib.Path(matplotlib.get_data_path()).resolve()
    manager = font_manager.fontManager
    manager.ttflist = [e for e in manager.ttflist
                       if mpl_fonts in pathlib.Path(e.fname).resolve().parents]
    if sys.argv[1] == "course":
        from attnlab.course.fonts import use_course_fonts
        use_course_fonts()
    fig = Figure()
    ax = fig.subplots()
    ax.set_title(sys.argv[2])
    ax.set_xticks([0, 1], ["我", "你"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    extra = sorted({pathlib.Path(e.fname).name for e in manager.ttflist
                    if mpl_fonts not in pathlib.Path(e.fname).resolve().parents})
    print(json.dumps({"warnings": [str(w.message) for w in caught],
                      "extra_fonts": extra}))
    """
)


@pytest.fixture(scope="module")
def run_isolated(tmp_path_factory):
    config = tmp_path_factory.mktemp("mplconfig")
    env = dict(os.environ, MPLCONFIGDIR=str(config), MPLBACKEND="Agg")
    shared = str(pathlib.Path(__file__).resolve().parents[1] / "shared")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [shared, env.get("PYTHONPATH")]))

    def run(mode):
        proc = subprocess.run(
            [sys.executable, "-c", _ISOLATED, mode, f"{ZH} {VI}"],
            env=env, capture_output=True, text=True, timeout=300, check=True,
        )
        return json.loads(proc.stdout.strip().splitlines()[-1])

    return run


@pytest.mark.slow                      # a fresh Python process (torch's import): left out of make test-fast
def test_without_course_fonts_chinese_is_missing(run_isolated):
    result = run_isolated("plain")
    assert result["extra_fonts"] == []
    missing = [w for w in result["warnings"] if "missing from" in w]
    assert any("CJK UNIFIED IDEOGRAPH" in w for w in missing), result


@pytest.mark.slow                      # a fresh Python process (torch's import): left out of make test-fast
def test_with_course_fonts_no_warnings_on_bare_machine(run_isolated):
    result = run_isolated("course")
    assert result["warnings"] == []
    assert result["extra_fonts"] == [FONT_PATH.name]


def test_bundled_font_file():
    assert FONT_PATH.is_file()
    assert FONT_PATH.stat().st_size < 5 * 1024 * 1024
    assert (FONT_PATH.parent / "OFL.txt").is_file()
    font = TTFont(FONT_PATH)
    assert font["name"].getDebugName(1) == CJK_FAMILY
    assert "glyf" in font and "CFF " not in font  # TrueType outlines
    cmap = font.getBestCmap()
    for char in "我爱你注意力键值查询掩码，。：、（）“”—…·×−":
        assert ord(char) in cmap, char
    assert sum(0x4E00 <= cp <= 0x9FFF for cp in cmap) >= 6763


def test_unsupported_chars():
    # 😀 (U+1F600) is drawn by DejaVu Sans; 🤔 (U+1F914) by no course font.
    assert unsupported_chars("我爱你 🤔 Tôi") == ["🤔"]
    assert unsupported_chars("我爱你 😀 Tôi") == []
    assert unsupported_chars(f"{ZH} {VI}\t\n") == []
    assert unsupported_chars("𠀀a🤔𠀀 🤔") == ["𠀀", "🤔"]
    assert unsupported_chars("") == []


def _lesson_string_literals():
    """Every string literal in the lessons' code cells: titles, labels and printed words."""
    import ast
    root = pathlib.Path(__file__).resolve().parents[1]
    for nb_path in sorted(root.glob("lessons_*/*.ipynb")):
        cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    yield f"{nb_path.parent.name}/{nb_path.name} cell {i}", node.value


def test_lesson_strings_have_glyphs_in_the_course_fonts():
    """Any string a lesson may put in a figure is drawable with the bundled fonts (no empty boxes)."""
    missing = {(where, ch) for where, text in _lesson_string_literals() for ch in unsupported_chars(text)}
    assert not missing, sorted(missing)
