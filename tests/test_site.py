"""The course website (tools/website/build.py), built once per session and read in Debian's Chromium.

The site is built from the notebooks' stored outputs with every socket connection refused (the build
must be offline), served by http.server on 127.0.0.1 (ephemeral port) and opened in Chromium with
every request to another host aborted and counted as a failure. Checked on every page: no console
error, no broken link, image or fragment, no raw $…$ left, MathML rendered natively, no serious or
critical axe-core violation; on every lesson: the language switch lands on the same lesson; on a
Chinese page: the served web font is loaded and used; search finds the right lesson for Vietnamese
(with and without diacritics) and Chinese queries. The browser tests are SKIPPED (never passed)
without Playwright for Python or a Chromium at ATTNLAB_CHROMIUM (default
/usr/lib/chromium/chromium-headless-shell, Debian's chromium-headless-shell).
"""
from __future__ import annotations

import functools
import html
import http.server
import importlib.util
import json
import os
import pathlib
import re
import socket
import sys
import threading
import unicodedata
import urllib.parse
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
from browser_support import CHROMIUM  # noqa: E402  (one default: the headless shell)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-dev-shm-usage"]
FONT_FAMILY = "Noto Sans SC AttnLab"

try:
    from playwright.sync_api import sync_playwright
except ImportError:                                   # pragma: no cover
    sync_playwright = None

if sync_playwright is None:
    NO_BROWSER = "Playwright for Python is not installed"
elif not os.access(CHROMIUM, os.X_OK):
    NO_BROWSER = f"no Chromium at {CHROMIUM} (apt install chromium-headless-shell)"
else:
    NO_BROWSER = ""

pytestmark = pytest.mark.slow      # builds the whole website (and drives Chromium where marked `browser`)


def needs_browser(test):
    """Marked `browser` (left out of `make test-fast`) and skipped without Chromium."""
    return pytest.mark.browser(pytest.mark.skipif(bool(NO_BROWSER), reason=NO_BROWSER or "-")(test))


def load_builder():
    spec = importlib.util.spec_from_file_location("site_build", ROOT / "tools" / "website" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                    # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


build = load_builder()


# ----------------------------------------------------------------------------- build (no browser)

@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """Build the site once, with every outgoing connection refused; returns (folder, stats)."""
    out = tmp_path_factory.mktemp("site") / "site"
    attempts = []
    real_connect = socket.socket.connect

    def refuse(sock, address):
        attempts.append(address)
        raise OSError(f"network access during the site build: {address}")

    socket.socket.connect = refuse
    try:
        stats = build.build(out)
    finally:
        socket.socket.connect = real_connect
    assert attempts == []
    return out, stats


def lesson_stems(lang):
    return sorted(p.stem for p in (ROOT / f"lessons_{lang}").glob("*.ipynb"))


def test_build_has_every_page(site):
    out, stats = site
    for lang in ("vi", "zh"):
        for stem in lesson_stems(lang):
            assert (out / lang / f"{stem}.html").is_file(), f"{lang}/{stem}"
        assert (out / lang / "index.html").is_file() and (out / lang / "search.html").is_file()
    for page in ("index.html", "explorer.html", "glossary.html", "license.html", "assets/fonts/OFL.txt",
                 "assets/fonts/NotoSansSC-AttnLab.woff", "assets/search-index.js"):
        assert (out / page).is_file(), page
    # No bound on stats["seconds"]: a timed assertion fails on a busy machine and says nothing about
    # the code (the build's time is a figure for docs/website.md, not a test).


def html_pages(out):
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))


def test_no_resource_from_another_site(site):
    """Scripts, styles, images, fonts and frames are all local (links to GitHub/Colab may be external)."""
    out, _ = site
    for page in html_pages(out):
        text = (out / page).read_text(encoding="utf-8")
        for tag, attr, url in re.findall(r"<(script|link|img|iframe|source|video|audio)\b[^>]*?\b(src|href)=\"([^\"]*)\"", text):
            assert not re.match(r"^(https?:)?//", url), f"{page}: <{tag} {attr}={url}>"
        assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", text), page
    for css in (out / "assets").glob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", css.read_text(encoding="utf-8")), css.name


def test_one_archive_for_any_static_host(site, tmp_path):
    """`make site` also writes build/attnlab-site.zip (tools/website/archive.py): every file of the site,
    byte for byte, under one folder; every link is relative, so the folder can be served from any
    path of any static server (a university's web server, an intranet) with nothing from outside."""
    out, _ = site
    spec = importlib.util.spec_from_file_location("site_archive", ROOT / "tools" / "website" / "archive.py")
    archive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(archive)
    zip_path = tmp_path / "attnlab-site.zip"
    names = archive.archive(out, zip_path)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert names == [f"attnlab-site/{p.relative_to(out).as_posix()}" for p in files]
    with zipfile.ZipFile(zip_path) as zf:
        assert all(zf.read(f"attnlab-site/{p.relative_to(out).as_posix()}") == p.read_bytes() for p in files)
    assert archive.archive(out, tmp_path / "again.zip") == names
    assert (tmp_path / "again.zip").read_bytes() == zip_path.read_bytes()       # reproducible
    for page in html_pages(out):
        text = (out / page).read_text(encoding="utf-8")
        assert not re.search(r"\b(?:src|href)=\"/(?!/)", text), f"{page}: a root-relative link breaks in a subfolder"
    assert "tools/website/archive.py build/site build/attnlab-site.zip" in (ROOT / "Makefile").read_text()


def test_widget_outputs_replaced_by_a_note(site):
    out, _ = site
    for lang in ("vi", "zh"):
        for stem in lesson_stems(lang):
            nb = json.loads((ROOT / f"lessons_{lang}" / f"{stem}.ipynb").read_text(encoding="utf-8"))
            widgets = sum(build.WIDGET_MIME in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
            text = (out / lang / f"{stem}.html").read_text(encoding="utf-8")
            assert text.count('class="widget-note"') == widgets, f"{lang}/{stem}"
            assert "model_id" not in text and build.WIDGET_MIME not in text


def cell(kind, source):
    return {"cell_type": kind, "source": source, "metadata": {}}


def test_exercise_rule():
    cells = [
        cell("markdown", "# Bài 1: Tiêu đề"),
        cell("code", "x = 1"),
        cell("markdown", "## Bài tập\n\nMỗi bài một ô."),
        cell("code", "def f(): return None"),                        # under the heading, no checker call
        cell("markdown", "### Bài tập 2 — tiếp"),
        cell("code", "attnlab.exercises.l01.check_softmax(f)"),
        cell("markdown", "## Tiếp theo"),                             # closes the section
        cell("code", "print(1)"),
        cell("code", "from attnlab.exercises import l02\nl02.check(g)"),   # checker call anywhere
        cell("markdown", "## 练习"),
        cell("code", "y = 2"),
        cell("markdown", "# Exercises for later"),                    # level 1 closes, and is no section
        cell("code", "z = 3"),
        cell("markdown", "## Exercise sheet"),
        cell("markdown", "## Bài tập nhóm là chuyện khác? no: still Bài tập"),
        cell("markdown", "## Exercisesque"),                          # not the word itself
        cell("code", "w = 4"),
    ]
    assert build.exercise_flags(cells) == [False, False, True, True, True, True, False, False, True, True, True,
                                           False, False, True, True, False, False]


def test_exercise_cells_marked_in_every_lesson(site):
    """Every code cell calling a checker, and only cells under the exercise heading or calling one."""
    out, _ = site
    for lang in ("vi", "zh"):
        for stem in lesson_stems(lang):
            nb = json.loads((ROOT / f"lessons_{lang}" / f"{stem}.ipynb").read_text(encoding="utf-8"))
            calls = sum(c["cell_type"] == "code" and "attnlab.exercises" in "".join(c["source"]) for c in nb["cells"])
            text = (out / lang / f"{stem}.html").read_text(encoding="utf-8")
            marked = text.count('class="badge-exercise"')
            assert marked >= calls > 0, f"{lang}/{stem}: {marked} marked, {calls} checker calls"


def test_glossary_rows_carry_the_d2l_terms_and_avoid_lists():
    """Each row holds the concept's terms, its avoided words per language and the d2l term where it differs."""
    fake = type(sys)("fake_glossary")
    fake.GLOSSARY = {"key": {"en": "key", "vi": "khóa", "zh": "键"},
                     "mask": {"en": "mask", "vi": "mặt nạ", "zh": "掩码"},
                     "head": {"en": "head", "vi": "đầu", "zh": "头"}}
    fake.AVOID = {"vi": {"phím": "key"}, "zh": {"遮罩": "mask"}}
    fake.D2L = {"vi": {"mask": "mặt nạ che"}, "zh": {"key": "键值"}}
    rows, langs = build.glossary_rows(fake)
    assert langs == ["vi", "zh"]
    assert [r[3] for r in rows] == [{"zh": "键值"}, {"vi": "mặt nạ che"}, {}]
    assert rows[0][2] == {"vi": ["phím"], "zh": []} and rows[1][2] == {"vi": [], "zh": ["遮罩"]}
    fake.D2L = {}
    assert build.glossary_rows(fake)[1] == []


def test_fold_matches_the_javascript_rule():
    assert build.fold("Mã hóa VỊ TRÍ, Đầu đa") == "ma hoa vi tri, dau da"
    assert build.fold("位置编码") == "位置编码"


# ----------------------------------------------------------------------------- browser

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server(site):
    out, _ = site
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(out)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")   # closed before another module starts its own Playwright
def browser_context(server):
    if NO_BROWSER:
        pytest.skip(NO_BROWSER)
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1200, "height": 900})

        def guard(route):
            host = urllib.parse.urlsplit(route.request.url).hostname
            if host != "127.0.0.1":
                outside.append(route.request.url)
                route.abort()
            else:
                route.continue_()

        context.route("**/*", guard)
        context.outside = outside
        yield context
        context.close()
        browser.close()


@pytest.fixture
def page(browser_context):
    page = browser_context.new_page()
    page.errors = []
    page.on("console", lambda msg: page.errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda err: page.errors.append(f"page error: {err}"))
    page.on("requestfailed", lambda req: page.errors.append(f"request failed: {req.url}"))
    page.on("response", lambda resp: page.errors.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
    yield page
    page.close()
    assert browser_context.outside == [], f"requests to other hosts: {browser_context.outside}"


IMAGES_OK = """() => Promise.all([...document.images].map(img => {
    img.loading = 'eager';
    return img.decode().then(() => img.naturalWidth > 0 ? null : img.src, () => img.src);
})).then(bad => bad.filter(x => x))"""

VISIBLE_TEXT = """() => {
    const body = document.body.cloneNode(true);
    body.querySelectorAll('pre, code, math, script, style').forEach(e => e.remove());
    return body.textContent;
}"""

MATH_RENDERED = """() => [...document.querySelectorAll('math')].filter(m => {
    const d = getComputedStyle(m).display, r = m.getBoundingClientRect();
    return !(d.includes('math') && r.width > 0 && r.height > 0);
}).length"""


@needs_browser
def test_every_page_loads_clean(site, server, page):
    out, _ = site
    pages = html_pages(out)
    checked_links: dict[str, bool] = {}
    ids_of: dict[str, set] = {}
    problems = []
    for rel in pages:
        page.errors.clear()
        page.goto(server + rel, wait_until="load")
        problems += [f"{rel}: {e}" for e in page.errors]
        problems += [f"{rel}: broken image {src}" for src in page.evaluate(IMAGES_OK)]
        ids_of[rel] = set(page.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)"))
        text = page.evaluate(VISIBLE_TEXT)
        raw = re.findall(r"\$[^$\s][^$]{0,80}\$|\\(?:frac|sqrt|text|mathrm|begin)\b", text)
        problems += [f"{rel}: raw LaTeX {r!r}" for r in raw]
        if page.evaluate(MATH_RENDERED):
            problems.append(f"{rel}: {page.evaluate(MATH_RENDERED)} formulas not laid out as MathML")
        for href in page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)"):
            if not href.startswith(server):
                assert href.startswith(("https://", "mailto:")), f"{rel}: odd link {href}"
                continue
            target = href[len(server):].split("#")[0].split("?")[0] or "index.html"
            if target not in checked_links:
                resp = page.request.get(server + target)
                checked_links[target] = resp.ok
            if not checked_links[target]:
                problems.append(f"{rel}: broken link {href}")
    # fragments, once every page's ids are known
    for rel in pages:
        for href in re.findall(r'href="((?:[^"#:]*\.html)?)#([^"]+)"', (out / rel).read_text(encoding="utf-8")):
            target = urllib.parse.urljoin("/" + rel, href[0]).lstrip("/") if href[0] else rel
            if urllib.parse.unquote(html.unescape(href[1])) not in ids_of.get(target, set()):
                problems.append(f"{rel}: missing anchor {target}#{href[1]}")
    # every search result's link, too
    index = (out / "assets" / "search-index.js").read_text(encoding="utf-8")
    docs = json.loads(re.search(r"window\.ATTN_SEARCH = (.*?);\n", index).group(1))
    for doc in docs:
        target, _, frag = doc["u"].partition("#")
        if target not in ids_of or (frag and frag not in ids_of[target]):
            problems.append(f"search index: broken link {doc['u']}")
    assert problems == []
    assert len(pages) >= 2 * len(lesson_stems("vi")) + 7


@needs_browser
def test_lessons_have_rendered_math(site, server, page):
    for lang in ("vi", "zh"):
        for stem in lesson_stems(lang):
            nb = (ROOT / f"lessons_{lang}" / f"{stem}.ipynb").read_text(encoding="utf-8")
            page.goto(server + f"{lang}/{stem}.html")
            n = page.locator("math").count()
            assert (n > 0) == ("$" in nb), f"{lang}/{stem}: {n} formulas"


@needs_browser
def test_language_switch_lands_on_the_same_lesson(server, page):
    for lang, other, other_tag in (("vi", "zh", "zh-Hans"), ("zh", "vi", "vi")):
        for stem in lesson_stems(lang):
            page.goto(server + f"{lang}/{stem}.html")
            assert page.evaluate("document.documentElement.lang") == {"vi": "vi", "zh": "zh-Hans"}[lang]
            page.locator(".lesson-tools a.lang-button").click()
            page.wait_for_load_state("load")
            assert page.url == server + f"{other}/{stem}.html", (lang, stem)
            assert page.evaluate("document.documentElement.lang") == other_tag
            assert page.locator("main").get_attribute("data-lesson") == stem
    assert page.errors == []


@needs_browser
def test_lesson_page_parts(server, page):
    """Colab/Binder buttons from the repository setting, previous/next, exercises, copy buttons."""
    course = build._load_module("course")
    stems = lesson_stems("vi")
    page.goto(server + f"vi/{stems[1]}.html")
    assert page.locator("a.colab").first.get_attribute("href") == course.colab_url(f"lessons_vi/{stems[1]}.ipynb")
    assert course.REPO in page.locator("a.binder").first.get_attribute("href")
    assert page.locator(".pager a.prev").get_attribute("href") == f"{stems[0]}.html"
    assert page.locator(".pager a.next").get_attribute("href") == f"{stems[2]}.html"
    badge = page.locator(".cell.exercise .badge-exercise").first
    assert badge.is_visible() and badge.inner_text() == "Bài tập"
    assert page.locator(".copy-button").count() == page.locator(".code-wrap").count() > 0


@needs_browser
def test_copy_button_copies_the_code(browser_context, server, page):
    browser_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.rstrip("/"))
    page.goto(server + f"zh/{lesson_stems('zh')[0]}.html")
    wrap = page.locator(".cell.code:not(.setup) .code-wrap").first
    code = wrap.locator("pre").inner_text()
    wrap.locator(".copy-button").click()
    page.wait_for_function("() => document.querySelector('.cell.code:not(.setup) .copy-button').textContent === '已复制'")
    assert page.evaluate("navigator.clipboard.readText()") == code


@needs_browser
def test_chinese_uses_the_served_font(server, page):
    page.goto(server + f"zh/{lesson_stems('zh')[0]}.html")
    page.evaluate("document.fonts.ready")
    faces = page.evaluate("""() => document.fonts.ready.then(fs => [...fs].map(f => [f.family.replace(/"/g, ''), f.status]))""")
    assert [FONT_FAMILY, "loaded"] in faces, faces
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "main h1"})["nodeId"]
    assert re.search(r"[\u4e00-\u9fff]", page.locator("main h1").inner_text())
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    used = [f for f in fonts if f["familyName"] == FONT_FAMILY and f.get("isCustomFont")]
    assert used and used[0]["glyphCount"] > 0, fonts


@needs_browser
@pytest.mark.parametrize("lang, query, stem", [
    ("vi", "mã hóa vị trí", "03_positional_encoding"),
    ("vi", "ma hoa vi tri", "03_positional_encoding"),
    ("vi", "MAT NA NHAN QUA", "04_attention_masks"),
    ("zh", "位置编码", "03_positional_encoding"),
    ("zh", "因果掩码", "04_attention_masks"),
])
def test_search_finds_the_lesson(server, page, lang, query, stem):
    page.goto(server + f"{lang}/search.html?q=" + urllib.parse.quote(query))
    first = page.locator("#search-results > li > a.result-page").first
    first.wait_for()
    assert first.get_attribute("href").endswith(f"{lang}/{stem}.html"), first.get_attribute("href")
    page.locator("#search-results a.result-page").first.click()
    page.wait_for_load_state("load")
    assert page.url == server + f"{lang}/{stem}.html"


@needs_browser
@pytest.mark.parametrize("query, not_first, marks", [
    ("mất mát", "04_attention_masks", {"mất mát", "mất", "mát"}),      # "mặt" (mask) folds to the same letters
    ("chú ý", None, {"chú ý", "chú", "ý"}),                            # not "chữ", "chủ"
    ("nhiệt độ", None, {"nhiệt độ", "nhiệt", "độ"}),                    # not "đo", "đồ"
])
def test_search_exact_vietnamese_marks_rank_first_and_are_highlighted(server, page, query, not_first, marks):
    """Syllables typed with their marks: the sections that have them exactly rank first, and they are
    what is highlighted; the same query without marks still finds the pages (folded)."""
    page.goto(server + "vi/search.html?q=" + urllib.parse.quote(query))
    first = page.locator("#search-results > li > a.result-page").first
    first.wait_for()
    if not_first:
        assert not first.get_attribute("href").endswith(f"vi/{not_first}.html"), first.get_attribute("href")
    shown = [unicodedata.normalize("NFC", m).lower() for m in page.locator("#search-results mark").all_inner_texts()]
    assert shown and set(shown) <= marks, sorted(set(shown) - marks)
    first_page = first.get_attribute("href")
    first_text = unicodedata.normalize("NFC", page.locator("#search-results > li").first.inner_text()).lower()
    assert query in first_text, first_text[:300]
    folded = "".join(c for c in unicodedata.normalize("NFD", query) if not unicodedata.combining(c)).replace("đ", "d")
    page.goto(server + "vi/search.html?q=" + urllib.parse.quote(folded))
    pages = page.locator("#search-results > li > a.result-page")
    pages.first.wait_for()
    assert first_page in pages.evaluate_all("links => links.map(a => a.getAttribute('href'))")


@needs_browser
def test_search_form_in_the_header(server, page):
    page.goto(server + "vi/index.html")
    page.locator("header #q").fill("chuan hoa tang")
    page.locator("header .search-form button").click()
    page.wait_for_load_state("load")
    assert "search.html?q=chuan+hoa+tang" in page.url
    first = page.locator("#search-results > li > a.result-page").first
    first.wait_for()
    assert first.get_attribute("href").endswith("vi/05_transformer_block.html")


def axe_source() -> str:
    spec = importlib.util.find_spec("axe_playwright_python")
    if spec is None:
        pytest.skip("axe-playwright-python (which ships axe-core) is not installed")
    return (pathlib.Path(spec.origin).parent / "axe.min.js").read_text(encoding="utf-8")


@needs_browser
def test_accessibility_axe(site, server, page):
    out, _ = site
    source = axe_source()
    bad = []
    for rel in html_pages(out):
        page.goto(server + rel)
        page.add_script_tag(content=source)
        result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
        for v in result["violations"]:
            if v["impact"] in ("serious", "critical"):
                bad.append(f"{rel}: {v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}")
    assert bad == []


# ----------------------------------------------------------------------------- on a phone (issue 20)

def test_plus_at_the_start_of_a_prose_line_is_not_a_list():
    assert build.keep_plus_lines("a = b\n+ c") == "a = b\n\\+ c"
    assert build.keep_plus_lines("text\n\n+ item\n+ item") == "text\n\n+ item\n+ item"      # a real list
    assert build.keep_plus_lines("```\nx\n+ y\n```") == "```\nx\n+ y\n```"                 # code
    html_ = build.markdown(build.Site.__new__(build.Site), "the sum\n+ the bias", "", "x.html")
    assert "<li>" not in html_ and "+ the bias" in html_


def test_tables_are_wrapped_to_scroll_in_their_own_box():
    html_ = build.markdown(build.Site.__new__(build.Site), "| a | b |\n|---|---|\n| 1 | 2 |", "", "x.html")
    assert html_.count('<div class="table-wrap" tabindex="0"><table>') == 1


def test_figure_alt_text_says_what_it_shows(site):
    """Every figure: a link to the full-size image and an alt text with the prose before it."""
    out, _ = site
    words = json.loads((ROOT / "tools" / "website" / "ui.json").read_text(encoding="utf-8"))["figure_alt"]
    for lang in ("vi", "zh"):
        for stem in lesson_stems(lang):
            text = (out / lang / f"{stem}.html").read_text(encoding="utf-8")
            for n, (href, src, alt) in enumerate( re.findall(r'<a class="figure-link" href="([^"]+)"[^>]*><img src="([^"]+)" alt="([^"]*)"', text), 1):
                assert href == src
                prefix = words[lang].format(n=n)
                alt = html.unescape(alt)                                  # "Figure n: …", then what it shows
                assert alt.startswith(prefix) and len(alt) > len(prefix) + 15, (stem, alt)
            assert text.count("<img ") == text.count('class="figure-link"'), f"{lang}/{stem}: a figure without its link"


PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1366, "height": 768}
WIDER_THAN_SCREEN = """() => {
    const w = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll('main *')].filter(e => {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.right <= w + 1) return false;
        for (let p = e.parentElement; p; p = p.parentElement) {           // inside a box that scrolls: fine
            const o = getComputedStyle(p).overflowX;
            if ((o === 'auto' || o === 'scroll') && p.getBoundingClientRect().right <= w + 1) return false;
        }
        return true;
    });
    return {scroll: document.documentElement.scrollWidth, width: w,
            wide: wide.slice(0, 5).map(e => e.tagName + '.' + e.className + ': ' + (e.textContent || '').slice(0, 40))};
}"""


@needs_browser
@pytest.mark.parametrize("viewport", [PHONE, WIDE], ids=["390x844", "1366x768"])
def test_no_page_wider_than_the_screen(site, browser_context, server, viewport):
    """Every page at 390 px (a phone) and 1366 px: nothing wider than the screen; tables, formulas and wide
    outputs scroll in their own box. On a phone, each lesson's title is on the first screen."""
    out, _ = site
    context = browser_context.browser.new_context(viewport=viewport, device_scale_factor=2 if viewport is PHONE else 1)
    try:
        page = context.new_page()
        bad, title_tops = [], {}
        for rel in html_pages(out):
            page.goto(server + rel, wait_until="load")
            got = page.evaluate(WIDER_THAN_SCREEN)
            if got["scroll"] > got["width"] or got["wide"]:
                bad.append((rel, got))
            if rel.split("/")[-1][:2].isdigit():
                title_tops[rel] = page.locator("main h1").first.evaluate("e => e.getBoundingClientRect().bottom")
        print(f"\npages: {len(html_pages(out))}, lesson title bottoms (px) at {viewport['width']}:", title_tops)
        assert bad == []
        assert len(title_tops) == 2 * len(lesson_stems("vi"))
        assert max(title_tops.values()) <= viewport["height"], title_tops
    finally:
        context.close()


@needs_browser
def test_phone_reading_details(site, browser_context, server):
    """At 390 px: the copy button covers no code, the table of contents numbers each heading once,
    the lesson list is folded; without JavaScript a figure's link opens the full-size PNG."""
    context = browser_context.browser.new_context(viewport=PHONE, device_scale_factor=2)
    try:
        page = context.new_page()
        for lang in ("vi", "zh"):
            for stem in lesson_stems(lang):
                page.goto(server + f"{lang}/{stem}.html", wait_until="load")
                overlap = page.evaluate("""() => [...document.querySelectorAll('.code-wrap')].filter(w => {
                    const b = w.querySelector('.copy-button').getBoundingClientRect(), p = w.querySelector('pre').getBoundingClientRect();
                    return b.bottom > p.top + 1 && b.top < p.bottom - 1 && b.right > p.left && b.left < p.right;
                }).length""")
                assert overlap == 0, f"{lang}/{stem}: {overlap} copy buttons over the code"
                toc = page.evaluate("""() => [...document.querySelectorAll('details.toc li')].map(li =>
                    [getComputedStyle(li).listStyleType, /^\\s*\\d/.test(li.textContent)])""")
                assert all(style == "none" for style, numbered in toc if numbered), (lang, stem, toc[:3])
                assert not page.locator("details.lesson-nav").evaluate("d => d.open")
    finally:
        context.close()
    context = browser_context.browser.new_context(viewport=PHONE, device_scale_factor=2, java_script_enabled=False)
    try:                                                # without JavaScript a figure's link opens the PNG itself
        page = context.new_page()
        page.goto(server + f"vi/{lesson_stems('vi')[0]}.html", wait_until="load")
        link = page.locator("a.figure-link").nth(1)
        img = link.locator("img")
        natural = img.evaluate("i => i.naturalWidth")
        src = img.get_attribute("src")
        link.click()
        page.wait_for_load_state("load")
        assert page.url.endswith(src.lstrip("./").split("/", 1)[-1])
        assert page.evaluate("() => document.images[0].naturalWidth") == natural   # the full-size PNG
    finally:
        context.close()


# The figures are 80-dpi PNGs whose text is 10 pt: 10 * 80 / 72 = 11.1 image pixels.
FIGURE_TEXT_PX = 10 * 80 / 72
READABLE_PX = 9


@needs_browser
@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_phone_figure_opens_full_screen_at_a_readable_size(site, browser_context, server, lang):
    """At 390 px (DPR 3, touch), a tap on a figure whose text is under 9 CSS px in the page opens it
    full-screen with its text at >= 9 CSS px, in a box that scrolls; Escape closes it (the page stays)."""
    context = browser_context.browser.new_context(viewport=PHONE, device_scale_factor=3, has_touch=True,
                                                  is_mobile=True)
    try:
        page = context.new_page()
        opened = []
        for stem in lesson_stems(lang)[:4]:
            url = server + f"{lang}/{stem}.html"
            page.goto(url, wait_until="load")
            links = page.locator("a.figure-link")
            for k in range(min(2, links.count())):
                img = links.nth(k).locator("img")
                img.scroll_into_view_if_needed()
                shown, natural = img.evaluate("i => i.decode().then(() => [i.getBoundingClientRect().width, i.naturalWidth])")
                if FIGURE_TEXT_PX * shown / natural >= READABLE_PX:
                    continue                              # readable in the page already
                links.nth(k).tap()
                viewer = page.locator("dialog.figure-viewer[open]")
                viewer.wait_for()
                box = viewer.evaluate("d => { const r = d.getBoundingClientRect(), i = d.querySelector('img'); "
                                      "return [r.left, r.top, r.width, r.height, i.getBoundingClientRect().width, i.naturalWidth]; }")
                left, top, width, height, big, big_natural = box
                assert (left, top) == (0, 0) and width >= PHONE["width"] - 1 and height >= PHONE["height"] - 1, box
                text_px = FIGURE_TEXT_PX * big / big_natural
                assert text_px >= READABLE_PX, (stem, k, text_px)
                page.keyboard.press("Escape")
                viewer.wait_for(state="detached" if viewer.count() == 0 else "hidden")
                assert page.url == url
                opened.append((stem, k, round(FIGURE_TEXT_PX * shown / natural, 1), round(text_px, 1)))
        assert len(opened) >= 4, opened
        print(f"\nfigure text on the phone ({lang}), page -> viewer (CSS px):", opened)
    finally:
        context.close()


@needs_browser
@pytest.mark.parametrize("viewport", [PHONE, {"width": 360, "height": 740}], ids=["390x844", "360x740"])
def test_phone_glossary_shows_every_chinese_term_whole(site, browser_context, server, viewport):
    """On a phone the glossary's 中文 column is on screen, every term whole (it was cut mid-word, the
    table 799 px wide in a 334 px box)."""
    context = browser_context.browser.new_context(viewport=viewport, device_scale_factor=3)
    try:
        page = context.new_page()
        page.goto(server + "glossary.html", wait_until="load")
        cut = page.evaluate("""() => { const w = document.documentElement.clientWidth;
            return [...document.querySelectorAll('table.glossary tbody td[lang="zh-Hans"]:nth-child(3)')].filter(td => {
                const r = td.getBoundingClientRect();
                return r.left < 0 || r.right > w + 1 || td.scrollWidth > td.clientWidth + 1;
            }).map(td => td.textContent); }""")
        cells = page.locator('table.glossary tbody td[lang="zh-Hans"]:nth-child(3)').count()
        assert cells > 20 and cut == [], cut[:10]
    finally:
        context.close()


@needs_browser
def test_no_search_box_without_javascript(site, browser_context, server):
    context = browser_context.browser.new_context(java_script_enabled=False, viewport=WIDE)
    try:
        page = context.new_page()
        for rel in ("vi/index.html", f"zh/{lesson_stems('zh')[0]}.html", "vi/search.html"):
            page.goto(server + rel, wait_until="load")
            assert page.locator("form[role=search]").count() >= 1
            assert not any(f.is_visible() for f in page.locator("form[role=search]").all()), rel
        page.goto(server + "vi/search.html", wait_until="load")
        assert page.locator("noscript").count() == 1
    finally:
        context.close()


@needs_browser
def test_vietnamese_search_matches_whole_syllables(server, page):
    page.goto(server + "vi/search.html")
    docs = [{"l": "vi", "u": "a.html", "p": "A", "t": "train", "x": "we train the model and do math"},
            {"l": "vi", "u": "b.html", "p": "B", "t": "bên trái", "x": "mặt nạ bên trái của ma trận"},
            {"l": "zh", "u": "c.html", "p": "C", "t": "因果掩码", "x": "因果掩码的作用"}]
    found = lambda q, lang: page.evaluate("([d, q, l]) => attnSearch.search(d, q, l).map(p => p.url)", [docs, q, lang])
    assert found("trái", "vi") == ["b.html"] and found("trai", "vi") == ["b.html"]
    assert found("mặt nạ", "vi") == ["b.html"] and found("math", "vi") == ["a.html"]
    assert found("掩码", "zh") == ["c.html"] and found("掩", "zh") == ["c.html"]      # Chinese: substrings
    # The real index: no Vietnamese result for "trái" is a page that has only "train".
    results = page.evaluate("() => attnSearch.search(window.ATTN_SEARCH, 'trái', 'vi').flatMap(p => p.sections.map(s => s.doc.x + ' ' + s.doc.t))")
    fold = build.fold
    assert all(re.search(r"(?<![a-z0-9_])trai(?![a-z0-9_])", fold(x)) for x in results)


VI_LETTERS = "ăâđêôơưàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợùúủũụừứửữựỳýỷỹỵ"


@needs_browser
def test_code_font_draws_vietnamese_letters_whole(server, page):
    """Vietnamese in code is drawn by one font that has every precomposed letter (not DejaVu Sans Mono,
    which lacks 46 and builds them from pieces: "sô´"), each letter about one cell wide."""
    page.goto(server + f"vi/{lesson_stems('vi')[0]}.html")
    page.evaluate("document.fonts.ready")
    letters = VI_LETTERS + VI_LETTERS.upper()
    page.evaluate("""letters => { const s = document.createElement('pre'); s.className = 'code'; s.id = 'vi-probe';
                                  s.textContent = letters; document.querySelector('main').appendChild(s); }""", letters)
    widths = page.evaluate("""letters => {
        const st = getComputedStyle(document.getElementById('vi-probe')), size = parseFloat(st.fontSize);
        const c = document.createElement('canvas').getContext('2d');
        c.font = `${st.fontSize} ${st.fontFamily}`;
        return [...letters].map(ch => c.measureText(ch).width / size);
    }""", letters)
    assert max(widths) < 0.8 and min(widths) > 0.2, dict(zip(letters, widths))     # no letter built from pieces
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "#vi-probe"})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    print("\nfonts used for Vietnamese code:", fonts)
    assert len(fonts) == 1 and "DejaVu" not in fonts[0]["familyName"], fonts
