"""What a reader of the website sees where the platform's fonts differ, and how a reader without
Colab gets the course. (The rest of the site's checks are tests/test_site.py.)

- The glossary's "Avoid" column shows words, never the regular expressions the language tests
  lint with (the glossary data's display form, tests/test_glossary_shown.py).
- Every lesson page links to its language's section of install.html (docs/install-pypi.md).
- The served font covers every CJK character of every page and of the search index.
- Chinese formulas stretch their brackets and join their root bars exactly as the Vietnamese ones
  do, in Debian's Chromium with fonts-noto-cjk installed (what .ci/run installs): under
  lang="zh-Hans" the generic `math`/`serif` families resolve to Noto Serif CJK SC, which has no
  MATH table. Checked twice: with this machine's fonts, and with a fontconfig that has only
  DejaVu's core fonts and Noto CJK (no math font at all). Skipped without Chromium/Playwright.
"""
from __future__ import annotations

import functools
import html
import http.server
import json
import pathlib
import re
import socket
import threading

import pytest

from attnlab.course import glossary
from test_site import CHROMIUM, CHROMIUM_ARGS, NO_BROWSER, load_builder, needs_browser

pytestmark = pytest.mark.slow      # builds the whole website

ROOT = pathlib.Path(__file__).resolve().parents[1]
REGEX_SYNTAX = re.compile(r"\(\?|\\[dswbDSWB]|[|\[\]{}^$]|\)[?*+]")
build = load_builder()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("reader-site") / "site"
    real_connect = socket.socket.connect
    socket.socket.connect = lambda sock, address: (_ for _ in ()).throw(OSError(f"network during the build: {address}"))
    try:
        build.build(out)
    finally:
        socket.socket.connect = real_connect
    return out


def test_the_glossary_shows_words_never_patterns(site):
    page = (site / "glossary.html").read_text(encoding="utf-8")
    cells = re.findall(r'<td class="avoid">(.*?)</td>', page, re.S)
    shown = [html.unescape(w) for cell in cells for w in re.findall(r"<s [^>]*>(.*?)</s>", cell)]
    assert len(shown) > 100
    assert [w for w in shown if REGEX_SYNTAX.search(w)] == []
    for lang, concept, word in (("vi", "layer_norm", "LayerNorm"), ("zh", "to_mask", "遮"), ("zh", "seed", "种子"),
                                ("vi", "layer", "hai lớp"), ("zh", "layer_head_label", "层 2 · 头 3")):
        assert word in glossary.shown_avoid(lang, concept) and word in shown, word
    # the d2l header names its language in that language's own font
    assert re.search(r'<th scope="col">d2l \(<span lang="zh-Hans">中文</span>\)</th>', page)


def test_every_lesson_page_links_to_its_languages_install_section(site):
    install = (site / "install.html").read_text(encoding="utf-8")
    ids = dict(re.findall(r'<section class="install" lang="([^"]+)">\s*<h2 id="([^"]+)"', install))
    assert set(ids) == {"en", "vi", "zh-Hans"}, ids
    text = html.unescape(re.sub(r"<[^>]+>", "", install))           # the code blocks are highlighted
    for command in ("python3 -m venv ~/attnlab-env", "pip install attnlab-course jupyterlab",
                    "attnlab-lessons attention-course", 'pip install "attnlab-course[app]"'):
        assert text.count(command) >= 3, command                   # in each language
    for lang, hl in (("vi", "vi"), ("zh", "zh-Hans")):
        for page in sorted((site / lang).glob("[0-9][0-9]_*.html")):
            link = re.search(r'<a class="button pip" href="([^"]+)">', page.read_text(encoding="utf-8"))
            assert link and link.group(1) == f"../install.html#{ids[hl]}", page.name
    assert 'href="install.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_the_served_font_covers_every_cjk_character_of_the_site(site):
    import importlib.util

    from fontTools.ttLib import TTFont
    spec = importlib.util.spec_from_file_location("make_font_subset", ROOT / "tools" / "make_font_subset.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    text = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*") if p.suffix in (".html", ".js"))
    chars = set(tool.CJK.findall(html.unescape(text))) - tool.NOT_IN_SOURCE
    cmap = TTFont(site / "assets" / "fonts" / "NotoSansSC-AttnLab.woff").getBestCmap()
    missing = sorted(c for c in chars if ord(c) not in cmap)
    assert not missing, "".join(missing)
    assert {"頭", "機", "櫂"} <= chars


# ---- formulas in a real browser ---------------------------------------------------------------

FORMULA = """() => {
  const math = [...document.querySelectorAll('math[display=block]')].find(m => m.querySelector('msqrt') && m.querySelector('mfrac'));
  const box = e => e.getBoundingClientRect();
  const parens = [...math.querySelectorAll('mo')].filter(o => o.textContent.trim() === '(');
  return {alt: math.getAttribute('alttext'), fraction: box(math.querySelector('mfrac')).height,
          parens: parens.map(o => box(o).height), root: box(math.querySelector('msqrt')).height};
}"""


def fontconfig_without_math_fonts(tmp: pathlib.Path) -> pathlib.Path | None:
    """A fontconfig file that sees only DejaVu's core fonts and Noto CJK (a bare Debian with
    fonts-noto-cjk): no font with a MATH table."""
    dejavu, cjk = pathlib.Path("/usr/share/fonts/truetype/dejavu"), pathlib.Path("/usr/share/fonts/opentype/noto")
    picked = sorted(dejavu.glob("DejaVuSerif*.ttf")) + sorted(dejavu.glob("DejaVuSans*.ttf")) + sorted(cjk.glob("Noto*CJK-Regular.ttc"))
    if not any("CJK" in p.name for p in picked) or not any("Serif" in p.name for p in picked):
        return None
    fonts = tmp / "fonts"
    fonts.mkdir()
    for p in picked:
        (fonts / p.name).symlink_to(p)
    conf = tmp / "fonts.conf"
    conf.write_text(f"""<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>{fonts}</dir>
  <cachedir>{tmp / "cache"}</cachedir>
  <include ignore_missing="yes">/etc/fonts/conf.d</include>
</fontconfig>
""", encoding="utf-8")
    return conf


@pytest.fixture(scope="module")
def served(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def formula_in(served: str, env: dict | None) -> dict:
    """The geometry and fonts of lesson 01's first displayed formula with a root and a fraction,
    on the Vietnamese and on the Chinese page."""
    from playwright.sync_api import sync_playwright
    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, env=env)
        page = browser.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(served) else route.abort())
        for lang in ("vi", "zh"):
            page.goto(served + f"{lang}/01_self_attention.html")
            page.evaluate("document.fonts.ready")
            found = page.evaluate(FORMULA)
            cdp = page.context.new_cdp_session(page)
            cdp.send("DOM.enable")
            cdp.send("CSS.enable")
            root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
            nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "math[display=block] mo"})["nodeIds"]
            found["fonts"] = sorted({f["familyName"] for n in nodes[:40]
                                     for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": n})["fonts"]})
            out[lang] = found
        browser.close()
    return out


def check_formulas(found: dict) -> None:
    vi, zh = found["vi"], found["zh"]
    assert vi["alt"] == zh["alt"] and "sqrt" in vi["alt"], found
    assert not [f for f in zh["fonts"] if "CJK" in f], f"Chinese formulas drawn with {zh['fonts']}"
    assert zh["fonts"] == vi["fonts"], found
    # the bracket around the fraction stretches over it, as on the Vietnamese page
    assert max(zh["parens"]) >= 0.95 * zh["fraction"] and abs(max(zh["parens"]) - max(vi["parens"])) < 1, found
    assert abs(zh["root"] - vi["root"]) < 1, found


@needs_browser
def test_chinese_formulas_render_like_vietnamese_ones(served):
    """This machine's fonts (fonts-noto-cjk installed, as .ci/run does)."""
    if not any(pathlib.Path("/usr/share/fonts/opentype/noto").glob("Noto*CJK*")):
        pytest.skip("fonts-noto-cjk is not installed: the case this checks does not arise")
    check_formulas(formula_in(served, None))


@needs_browser
def test_chinese_formulas_render_like_vietnamese_ones_without_any_math_font(served, tmp_path):
    """Only DejaVu's core fonts and Noto CJK: the formulas fall back to DejaVu Serif on both pages."""
    conf = fontconfig_without_math_fonts(tmp_path)
    if conf is None:
        pytest.skip("DejaVu Serif or Noto CJK is not installed here")
    import os
    found = formula_in(served, dict(os.environ, FONTCONFIG_FILE=str(conf)))
    check_formulas(found)
    assert "DejaVu Serif" in found["zh"]["fonts"], found
