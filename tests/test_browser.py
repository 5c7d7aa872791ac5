"""The explorer in a real browser: JupyterLab, Notebook 7 and Voilà, driven by Debian's Chromium.

Every notebook whose code calls the explorer (found from the notebooks' source) is opened in a
real JupyterLab server, run top to bottom, and every control of each explorer is moved: the
SVG heatmap must change and no error or stderr output may appear; a hovered cell shows its tip,
a hovered or focused query label highlights its row in every head. The lessons share one
JupyterLab page, as a student works through them in one tab: each is opened in it, then closed
with its kernel before the next. The same for the
instructor's dashboard in Notebook 7 (same server) and served by Voilà, where the layout at
1280x720, the label sizes at 1920x1080 (devicePixelRatio 2), clipping of every label in vi, zh
and en, normal and large font, Chinese glyphs drawn with a CJK font, and lesson 08's translator
modes (rows, columns and labels of each attention, fixed controls) are checked too. The
in-browser latency (control change -> new heatmap rendered) is printed at the end; it is not
asserted (benchmarks/bench_explorer_browser.py measures it properly).

Everything runs on 127.0.0.1 with token auth, on copies of the notebooks, with HOME and the
Jupyter/JupyterLab directories in a temporary folder. SKIPPED (never passed) without Playwright
for Python or a Chromium at ATTNLAB_CHROMIUM (default /usr/lib/chromium/chromium-headless-shell).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import secrets
import statistics
import time

import pytest

from attnlab.course import NOTEBOOK_DIRS
from browser_support import (CHROMIUM, DIGEST, EXPLORER_NOTEBOOK, MODEL_INDEX, ROOT, STDERR, TIMEOUT_MS,
                             assert_no_warning, kernels_of, label_height, next_option, require, run_all_cells,
                             select_value, set_checkbox, shutdown_kernels, sync_playwright, timed, toggle,
                             widget_errors)
from browser_support import browser, lab, sandbox, voila_app  # noqa: F401  (module-scoped fixtures)
EXPLORER_CALL = re.compile(r"\b(explore|AttentionExplorer)\s*\(")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(sync_playwright is None, reason="Playwright for Python is not installed"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"no Chromium at {CHROMIUM} (apt install chromium-headless-shell)"),
]


def explorer_notebooks() -> list[str]:
    """Notebooks (relative paths) with a code cell that calls the explorer."""
    found = []
    for d in NOTEBOOK_DIRS:
        for path in sorted((ROOT / d).glob("*.ipynb")):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            if any(c["cell_type"] == "code" and EXPLORER_CALL.search("".join(c["source"])) for c in cells):
                found.append(path.relative_to(ROOT).as_posix())
    return found


def cells_allowed_to_fail(notebook: str) -> set[int]:
    cells = json.loads((ROOT / notebook).read_text(encoding="utf-8"))["cells"]
    return {i for i, c in enumerate(cells) if "raises-exception" in c.get("metadata", {}).get("tags", [])}


# ----------------------------------------------------------------------------- servers





def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return context, page


@pytest.fixture
def page(browser):
    context, page = new_page(browser)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def lab_page(browser, lab):
    """One JupyterLab page for every lesson, as a student works through them: loaded once (a fresh
    workspace, nothing open), each lesson opened from it and closed, with its kernel, after its test."""
    context, page = new_page(browser)
    try:
        page.goto(f"{lab.url}/lab/workspaces/t{secrets.token_hex(4)}?token={lab.token}")
        page.wait_for_function("() => window.jupyterapp?.started !== undefined")
        page.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")
        yield page
    finally:
        context.close()


OPEN_NOTEBOOK = """async path => {
    for (const widget of [...window.jupyterapp.shell.widgets("main")]) {
        widget.dispose();                      // what a failed test before this one left open
    }
    const panel = await window.jupyterapp.commands.execute("docmanager:open", {path, factory: "Notebook"});
    await panel.context.ready;
    await panel.sessionContext.ready;
}"""
CLOSE_NOTEBOOK = """async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.sessionContext.shutdown();
    panel.dispose();
}"""


@pytest.fixture(scope="module")
def latency(request):
    """Milliseconds from a control change to the new heatmap, per place; reported at the end."""
    samples: dict[str, list[float]] = {}
    yield samples
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None or not samples:
        return
    with capture.global_and_fixture_disabled():         # straight to the terminal, with or without -s
        reporter.write_line("")
        reporter.write_sep("-", "explorer latency in the browser (control change -> new heatmap)")
        for where, ms in samples.items():
            if not ms:
                continue
            ms = sorted(ms)
            p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
            reporter.write_line(f"{where}: n={len(ms)} median {statistics.median(ms):.0f} ms, "
                                f"p95 {p95:.0f} ms, max {ms[-1]:.0f} ms")


# ----------------------------------------------------------------------------- the explorer in a page















def check_hover_and_rows(page, explorer) -> None:
    """Hover a cell: its tip shows query, key and weight at once. Hover a query label: that row is
    outlined in every head shown, and no other; focus (a tap) keeps it outlined."""
    svg = explorer.locator(".attnlab-svg")
    cell = svg.locator(".row rect").nth(3)
    cell.hover(force=True)
    tip = cell.locator("xpath=following-sibling::*[1]")
    assert tip.evaluate("e => getComputedStyle(e).display") != "none"
    assert re.fullmatch(r"\S+ → \S+ · (\d\.\d{3}|\D+)", tip.text_content()), tip.text_content()
    outlined = """s => [...s.querySelectorAll('.row rect')].map(r => [r.parentNode.classList.contains('r1'),
                                                                    getComputedStyle(r).stroke !== 'none'])"""
    label = svg.locator(".q.q1").first
    label.hover(force=True)
    rows = svg.evaluate(outlined)
    in_row = [on for mine, on in rows if mine]
    assert in_row and all(in_row) and not any(on for mine, on in rows if not mine), "row 1 is not outlined alone"
    heads = svg.evaluate("s => s.querySelectorAll(':scope > rect[fill=none]').length")   # one frame per head
    keys = svg.evaluate("s => s.querySelectorAll('.row.r0 > rect').length") // heads
    assert heads >= 1 and len(in_row) == heads * keys          # the whole row, in every head shown
    label.focus()                                      # tap: focus keeps the row outlined
    page.mouse.move(0, 0)
    assert all(on for mine, on in svg.evaluate(outlined) if mine)
    label.evaluate("e => e.blur()")


CLIPPED = """root => [...root.querySelectorAll(
        '.widget-label, .widget-label-basic, .widget-label-basic span, .attnlab-title, .attnlab-legend span,'
        + ' .attnlab-note, .attnlab-message, .attnlab-prose')]
    .filter(e => e.offsetParent !== null && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1))
    .map(e => e.textContent.slice(0, 60))"""
CLIPPED_SELECTS = """root => {
    const c = document.createElement('canvas').getContext('2d');
    return [...root.querySelectorAll('select')].filter(s => s.offsetParent !== null).filter(s => {
        const st = getComputedStyle(s);
        c.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
        const need = Math.max(...[...s.options].map(o => c.measureText(o.text).width));
        return need + 20 > s.clientWidth;       // 20 px: the arrow and the padding
    }).map(s => s.options[s.selectedIndex]?.text);
}"""


def assert_nothing_clipped(explorer, where: str) -> None:
    assert explorer.evaluate(CLIPPED) == [], (where, explorer.evaluate(CLIPPED))
    assert explorer.evaluate(CLIPPED_SELECTS) == [], (where, explorer.evaluate(CLIPPED_SELECTS))


CJK_DRAWN = """label => {
    const family = getComputedStyle(label).fontFamily;
    const ink = ch => {
        const c = document.createElement('canvas'); c.width = c.height = 64;
        const x = c.getContext('2d'); x.font = `48px ${family}`; x.fillText(ch, 4, 52);
        return Array.from(x.getImageData(0, 0, 64, 64).data).join(',');
    };
    return ink(label.textContent.trim()[0]) !== ink('\\u{10FFFD}');   // not the empty box of a missing glyph
}"""


def exercise_explorer(page, explorer, samples: list[float]) -> None:
    """Move every control: each time a different heatmap and no error message. Then the model
    switch: the controls the trained model fixes show its settings, disabled, and come back."""
    target = explorer.locator(".attnlab-heatmap")
    target.scroll_into_view_if_needed()
    page.wait_for_function("el => el.querySelector('svg') !== null", arg=target.element_handle(), timeout=TIMEOUT_MS)
    model = explorer.locator(".attnlab-control-model select")
    if model.evaluate("s => s.selectedIndex") != MODEL_INDEX["random"]:      # opened on a model (07, 10)
        samples.append(timed(page, explorer, lambda: model.select_option(index=MODEL_INDEX["random"])))
    previous = target.evaluate(DIGEST) + explorer.evaluate(DIGEST)
    track = explorer.locator(".attnlab-control-pad .slider-container, .attnlab-control-pad .ui-slider").first
    track.scroll_into_view_if_needed()
    box = track.bounding_box()
    # Some pad tokens first (a click on the slider's track, which is on screen): then "pad on" changes the picture.
    samples.append(timed(page, explorer, lambda: page.mouse.click(box["x"] + 0.3 * box["width"],
                                                                  box["y"] + box["height"] / 2)))
    assert_no_warning(explorer, "pad")
    previous = target.evaluate(DIGEST) + explorer.evaluate(DIGEST)
    steps = [("mask", next_option), ("num_heads", next_option), ("head", next_option), ("pad_side", next_option),
             ("scaled", toggle), ("annotate", toggle), ("large", toggle), ("lang", next_option)]
    for control, how in steps * 2:
        if control == "head" and explorer.locator(".attnlab-control-head option").count() == 2:
            continue                                     # one head: "all heads" and "head 1" are the same picture
        # Numbers on several small heads: the heatmap stays, a note says why (the message area changes).
        where = "" if control == "annotate" else ".attnlab-heatmap"
        samples.append(timed(page, explorer, how(explorer, control), where))
        digest = target.evaluate(DIGEST) + explorer.evaluate(DIGEST)
        assert digest != previous, f"the heatmap did not change after changing {control}"
        previous = digest
        assert_no_warning(explorer, control)
    check_hover_and_rows(page, explorer)
    sentence = explorer.locator(".attnlab-control-sentence input")
    text = sentence.input_value()
    for name, locked in (("trained", True), ("random", False)):
        samples.append(timed(page, explorer, lambda: model.select_option(index=MODEL_INDEX[name])))
        for control in ("mask", "num_heads", "pad_side"):
            assert explorer.locator(f".attnlab-control-{control} select").is_disabled() == locked, (name, control)
        assert explorer.locator(".attnlab-control-layer select").is_disabled() != locked, name
        if locked:
            shown = explorer.locator(".attnlab-control-num_heads select").evaluate("s => s.options[s.selectedIndex].text")
            assert shown == "4", shown                   # the trained model's real head count
            samples.append(timed(page, explorer, next_option(explorer, "layer")))
        assert_no_warning(explorer, name)
    assert sentence.input_value() == text




def assert_no_error_output(page, allowed: set[int] = frozenset()) -> None:
    """No stderr, error or broken-widget output in any cell but those tagged raises-exception."""
    cells = page.evaluate(f"""() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => [
        ...[...cell.querySelectorAll('{STDERR}')].map(o => o.innerText.slice(0, 300)),
        ...[...cell.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText)
            .filter(t => /Error displaying widget|Error rendering|Traceback/.test(t)).map(t => t.slice(0, 300)),
    ])""")
    bad = {i: out for i, out in enumerate(cells) if out and i not in allowed}
    assert not bad, f"stderr/error output in cells {bad}"








# ----------------------------------------------------------------------------- tests

UI_PATHS = {"Notebook 7": "/notebooks/{notebook}"}       # JupyterLab: each lesson opened in lab_page
CASES = [("JupyterLab", nb) for nb in explorer_notebooks()] + [("Notebook 7", EXPLORER_NOTEBOOK)]
NEEDS = {"JupyterLab": "jupyterlab", "Notebook 7": "notebook"}




@pytest.mark.parametrize("ui,notebook", CASES, ids=[f"{ui}:{nb}" for ui, nb in CASES])
def test_explorer_in_jupyter(request, ui, notebook, latency):
    require(NEEDS[ui])
    lab = request.getfixturevalue("lab")
    if ui == "JupyterLab":                   # the page stays: open the lesson in it
        page = request.getfixturevalue("lab_page")
        page.errors.clear()
        page.evaluate(OPEN_NOTEBOOK, notebook)
    else:
        page = request.getfixturevalue("page")
        page.goto(f"{lab.url}{UI_PATHS[ui].format(notebook=notebook)}?token={lab.token}")
    run_all_cells(page)
    explorers = page.locator(".attnlab-explorer")
    explorers.first.wait_for()
    assert explorers.count() >= 1
    # Fits the screen in a lesson too: with the explorer scrolled to the top of the notebook, the whole
    # heatmap, its labels and its legend are in the window (the notebook is the CSS size container).
    first = explorers.first
    first.locator(".attnlab-svg").wait_for()
    first.evaluate("e => e.scrollIntoView({block: 'start'})")
    e = first.evaluate(EXTENT)
    assert e["bottom"] <= page.viewport_size["height"] and e["legend"] <= page.viewport_size["height"], e
    assert e["bottom"] - e["top"] > 200, e                       # and not squeezed into a strip
    for k in range(explorers.count()):
        exercise_explorer(page, explorers.nth(k), latency.setdefault(ui, []))
    assert_no_error_output(page, cells_allowed_to_fail(notebook))
    assert not widget_errors(page), widget_errors(page)
    if ui == "JupyterLab":
        page.evaluate(CLOSE_NOTEBOOK)
        assert page.locator(".jp-NotebookPanel").count() == 0      # the next lesson is the only one open
    shutdown_kernels(lab)




def test_explorer_in_voila(request, latency):
    require("voila")
    voila_app, page = request.getfixturevalue("voila_app"), request.getfixturevalue("page")
    page.goto(f"{voila_app.url}/?token={voila_app.token}")
    explorer = page.locator(".attnlab-explorer")
    explorer.wait_for()
    exercise_explorer(page, explorer, latency.setdefault("Voilà", []))
    assert page.locator(STDERR).count() == 0, page.locator(STDERR).all_inner_texts()
    assert "Traceback" not in page.inner_text("body")
    assert not widget_errors(page), widget_errors(page)


TRANSLATOR_INDEX = {"vi": 2, "zh": 3}          # order of attnlab.explorer.MODELS
ATTENTION_INDEX = {"enc_self": 0, "dec_self": 1, "cross": 2}    # order of attnlab.explorer.ATTENTION_KINDS


def svg_labels(explorer) -> tuple[list[str], list[str]]:
    """(query labels, key labels) of the heatmap now on the page."""
    svg = explorer.locator(".attnlab-svg")
    return ([s.strip() for s in svg.locator(".q").all_text_contents()],
            [s.strip() for s in svg.locator(".kl").all_text_contents()])


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_translator_in_voila(request, lang):
    """Lesson 08's translator in the dashboard: choose it, type a number, look at one head of each
    attention; the cross-attention has T target rows and S source-digit columns (T != S), the
    labels are the model's own tokens, the settings it fixes show its values, disabled."""
    require("voila")
    from attnlab import explorer as ex, translator

    assert ex.MODELS.index(f"translator-{lang}") == TRANSLATOR_INDEX[lang]
    assert list(ex.ATTENTION_KINDS) == list(ATTENTION_INDEX)
    maps = translator.attention_maps(translator.load_pretrained(lang), 105)
    src, tgt = maps.src_tokens, maps.tgt_tokens
    assert src == ["1", "0", "5"] and len(tgt) != len(src)
    voila_app, page = request.getfixturevalue("voila_app"), request.getfixturevalue("page")
    page.goto(f"{voila_app.url}/?token={voila_app.token}")
    explorer = page.locator(".attnlab-explorer")
    explorer.wait_for()
    page.wait_for_selector(".attnlab-svg")
    model = explorer.locator(".attnlab-control-model select")
    assert model.locator("option").count() == len(ex.MODELS), "no translator in the model list"
    timed(page, explorer, lambda: model.select_option(index=TRANSLATOR_INDEX[lang]))
    assert_no_warning(explorer, "model")
    sentence = explorer.locator(".attnlab-control-sentence input")
    timed(page, explorer, lambda: (sentence.fill("105"), sentence.press("Enter")))
    assert_no_warning(explorer, "number")
    timed(page, explorer, lambda: explorer.locator(".attnlab-control-head select").select_option(index=1))  # head 1
    attention = explorer.locator(".attnlab-control-attention select")
    assert attention.is_visible() and not attention.is_disabled()
    for kind, (rows, cols) in (("enc_self", (src, src)), ("dec_self", (tgt, tgt)), ("cross", (tgt, src))):
        if attention.evaluate("s => s.selectedIndex") != ATTENTION_INDEX[kind]:
            timed(page, explorer, lambda: attention.select_option(index=ATTENTION_INDEX[kind]))
        assert_no_warning(explorer, kind)
        svg = explorer.locator(".attnlab-svg")
        assert svg.locator(".row").count() == len(rows), kind
        assert svg.locator(".row rect").count() == len(rows) * len(cols), kind
        assert svg_labels(explorer) == (rows, cols), kind
        for control in ("mask", "num_heads", "pad_side"):
            assert explorer.locator(f".attnlab-control-{control} select").is_disabled(), (kind, control)
        shown = explorer.locator(".attnlab-control-num_heads select").evaluate("s => s.options[s.selectedIndex].text")
        assert shown == str(maps.cross[0].shape[0]), shown             # the model's real head count
    assert explorer.locator(".attnlab-svg .kl").first.text_content().strip() == "1"   # a source digit
    assert page.locator(STDERR).count() == 0, page.locator(STDERR).all_inner_texts()
    assert "Traceback" not in page.inner_text("body")
    assert not widget_errors(page), widget_errors(page)


VIEWPORTS = {"1280x720": dict(viewport={"width": 1280, "height": 720}),
             "1920x1080@2": dict(viewport={"width": 1920, "height": 1080}, device_scale_factor=2)}








@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_voila_dashboard_layout_sizes_languages(request, browser, size):
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    context = browser.new_context(**VIEWPORTS[size])
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{voila_app.url}/?token={voila_app.token}")
        explorer = page.locator(".attnlab-explorer")
        explorer.wait_for()
        page.wait_for_selector(".attnlab-svg")
        width = page.viewport_size["width"]
        # The dashboard: the explorer first (no static grid or prose above it), controls and heatmap on screen.
        assert page.evaluate("e => e.getBoundingClientRect().top", explorer.element_handle()) < 80
        controls_bottom = explorer.locator(".attnlab-controls").last.evaluate("e => e.getBoundingClientRect().bottom")
        svg_top = explorer.locator(".attnlab-svg").evaluate("e => e.getBoundingClientRect().top")
        assert controls_bottom < 720 and svg_top < 720 - 100, (controls_bottom, svg_top)
        assert page.locator("img").count() == 0                    # the static grid is left out of Voilà
        out = explorer.locator(".attnlab-heatmap").evaluate("e => e.getBoundingClientRect().width")
        grid = explorer.locator(".attnlab-svg").evaluate("e => e.getBoundingClientRect().width")
        assert grid >= 0.9 * out, (grid, out)
        prose = {}
        for lang, name in (("zh", "中文"), ("vi", "Tiếng Việt"), ("en", "English")):
            before = explorer.locator(".attnlab-prose").inner_text()
            select_value(explorer, "lang", name)
            # The heatmap comes first, the labels and the prose right after it: wait for the prose.
            page.wait_for_function("([e, before]) => e.innerText !== before",
                                   arg=[explorer.locator(".attnlab-prose").element_handle(), before])
            prose[lang] = explorer.locator(".attnlab-prose").inner_text()
            for large in (False, True):
                set_checkbox(explorer, "large", large)
                assert_nothing_clipped(explorer, f"{size} {lang} large={large}")
            set_checkbox(explorer, "large", False)
        assert len(set(prose.values())) == 3 and "注意力" in prose["zh"] and "chú ý" in prose["vi"]
        # Chinese labels are drawn with a CJK font, not as empty boxes.
        sentence = explorer.locator(".attnlab-control-sentence input")
        timed(page, explorer, lambda: (sentence.fill("小猫坐在垫子上"), sentence.press("Enter")))
        assert explorer.locator(".attnlab-svg .q").first.evaluate(CJK_DRAWN)
        if size == "1920x1080@2":
            # Large font: every label >= 2.5 % of 1080 px (27 px): 8 heads come in pages of heads side by side
            # (one row of panels), 32 tokens in windows of queries (tests/test_browser_room.py: every model).
            set_checkbox(explorer, "large", True)
            timed(page, explorer, lambda: (sentence.fill("The cat sat on the mat because it was tired"),
                                           sentence.press("Enter")))
            select_value(explorer, "num_heads", "8")
            select_value(explorer, "head", explorer.locator(".attnlab-control-head option").first.inner_text())
            assert explorer.locator(".attnlab-svg .q").count() == 12          # one row of panels
            assert explorer.locator(".attnlab-control-head option").first.inner_text().replace("\xa0", " ").startswith("heads 1–")
            sizes = {"12x8": label_height(explorer)}
            select_value(explorer, "head", "head 1")
            sizes["12x1"] = label_height(explorer)
            words = " ".join(f"w{i}" for i in range(30))
            timed(page, explorer, lambda: (sentence.fill(words), sentence.press("Enter")))
            shown = explorer.locator(".attnlab-svg .q").count()
            assert 8 <= shown < 32 and explorer.locator(".attnlab-control-start select").is_visible(), shown
            sizes["32x1"] = label_height(explorer)
            print("label heights (px):", sizes)
            assert min(sizes.values()) >= 27, sizes
            assert_nothing_clipped(explorer, "large, 32 tokens")
        assert page.locator(STDERR).count() == 0
        assert not [e for e in errors if re.search(r"widget|attnlab", e, re.IGNORECASE)], errors
    finally:
        context.close()




@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="counts kernels in /proc (Linux)")
def test_voila_close_and_reload_leave_no_kernel(request, browser):
    """Five loads of the dashboard, each closed (or reloaded) in a real browser: the page's kernel is
    shut down by the page itself (Voilà's beforeunload request, which needs the ``_xsrf`` cookie that
    attnlab_server.XsrfCookieIdentityProvider sets), not left to the 10-minute culler."""
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    before = set(kernels_of(voila_app))
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        for load in range(5):
            if load % 2 == 0:
                page.goto(f"{voila_app.url}/?token={voila_app.token}")
            else:
                page.reload()
            page.wait_for_selector(".attnlab-svg")
            assert set(kernels_of(voila_app)) - before, "no kernel seen for the page: the count would prove nothing"
            assert "_xsrf" in {c["name"] for c in context.cookies()}, "no _xsrf cookie: the shutdown is refused"
            if load % 2 == 0 and load < 4:
                continue                               # the next load is a reload of this page
            page.close(run_before_unload=True)
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
        page.close(run_before_unload=True)
        deadline = time.monotonic() + 30
        while len(set(kernels_of(voila_app)) - before) > 0 and time.monotonic() < deadline:
            time.sleep(0.5)
        left = set(kernels_of(voila_app)) - before
        assert len(left) <= 1, f"{len(left)} kernels left after 5 loads: {voila_app.tail()}"
    finally:
        context.close()


# ----------------------------------------------------------------------------- fits the screen (issue 20)

SCREENS = {"1024x768": (1024, 768), "1280x720": (1280, 720), "1920x1080": (1920, 1080)}
LANG_NAMES = {"vi": "Tiếng Việt", "zh": "中文", "en": "English"}
# What must be on screen at once: every label, the key labels, the axis titles, the legend.
EXTENT = """root => {
    const svg = root.querySelector('.attnlab-svg'), legend = root.querySelector('.attnlab-legend');
    const boxes = [...svg.querySelectorAll('text:not(.t)')].map(e => e.getBoundingClientRect())
        .concat([svg.getBoundingClientRect(), legend.getBoundingClientRect()]);
    const label = svg.querySelector('.q');
    return {bottom: Math.max(...boxes.map(b => b.bottom)), right: Math.max(...boxes.map(b => b.right)),
            left: Math.min(...boxes.map(b => b.left)), top: svg.getBoundingClientRect().top,
            label: parseFloat(getComputedStyle(svg).fontSize) * svg.getScreenCTM().a,
            legend: legend.getBoundingClientRect().bottom,
            controls: root.querySelector('.attnlab-controls').getBoundingClientRect().bottom,
            scroll: document.scrollingElement.scrollHeight - innerHeight};
}"""
FIT_CASES = (("1 head", 1), ("2 heads", 2), ("4 heads", 4), ("8 heads", 8), ("translator", None))


def show_case(explorer, case, lang: str) -> None:
    model = explorer.locator(".attnlab-control-model select")
    name, heads = case
    page = explorer.page
    if heads is None:
        timed(page, explorer, lambda: model.select_option(index=TRANSLATOR_INDEX["vi"]))
        select_value(explorer, "head", explorer.locator(".attnlab-control-head option").nth(1).inner_text())
        return
    if model.evaluate("s => s.selectedIndex") != MODEL_INDEX["random"]:
        timed(page, explorer, lambda: model.select_option(index=MODEL_INDEX["random"]))
    select_value(explorer, "head", explorer.locator(".attnlab-control-head option").first.inner_text())   # all heads
    select_value(explorer, "num_heads", str(heads))


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_voila_dashboard_fits_the_screen(request, browser, screen):
    """At 1024x768, 1280x720 and 1920x1080, in vi and zh, normal and large font: 1, 2, 4, 8 heads and one
    head of the translator have every label, the key labels and the legend on screen without scrolling;
    a note or a language switch does not move the heatmap; large font never makes the labels smaller."""
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    width, height = SCREENS[screen]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    figures = {}
    try:
        page.goto(f"{voila_app.url}/?token={voila_app.token}&lang=vi")
        explorer = page.locator(".attnlab-explorer")
        explorer.wait_for()
        page.wait_for_selector(".attnlab-svg")
        for lang in ("vi", "zh"):
            select_value(explorer, "lang", LANG_NAMES[lang])
            for large in (False, True):
                set_checkbox(explorer, "large", large)
                for case in FIT_CASES:
                    show_case(explorer, case, lang)
                    assert_no_warning(explorer, case)
                    e = explorer.evaluate(EXTENT)
                    where = f"{screen} {lang} large={large} {case[0]}"
                    figures[where] = (round(e["label"], 1), round(e["bottom"]))
                    assert e["bottom"] <= height and e["legend"] <= height, (where, e)
                    assert e["left"] >= 0 and e["right"] <= width, (where, e)
                    assert e["scroll"] <= 0 or e["bottom"] <= height, (where, e)
        print(f"\nlabel px, bottom px at {screen}:", figures)
        for lang in ("vi", "zh"):
            for case in FIT_CASES:
                small = figures[f"{screen} {lang} large=False {case[0]}"][0]
                big = figures[f"{screen} {lang} large=True {case[0]}"][0]
                assert big >= small, (screen, lang, case, small, big)     # large font never shrinks a label
        # No jump: a note (left padding + causal mask: queries that see no key) appears below the heatmap,
        # and the controls take as many rows in every language.
        set_checkbox(explorer, "large", False)
        show_case(explorer, FIT_CASES[3], "zh")
        top = explorer.evaluate(EXTENT)["top"]
        select_value(explorer, "pad_side", explorer.locator(".attnlab-control-pad_side option").nth(1).inner_text())
        select_value(explorer, "mask", explorer.locator(".attnlab-control-mask option").nth(3).inner_text())
        assert "⚠" not in explorer.locator(".attnlab-notes").inner_text()
        assert explorer.locator(".attnlab-message").count() == 1, "no note for queries that see no key"
        assert explorer.evaluate(EXTENT)["top"] == top
        tops = {}
        for lang in ("en", "vi", "zh"):
            select_value(explorer, "lang", LANG_NAMES[lang])
            page.wait_for_function("lang => document.querySelector('.attnlab-fig').lang.startsWith(lang)", arg=lang)
            tops[lang] = explorer.evaluate(EXTENT)["top"]
        assert len(set(tops.values())) == 1, tops
    finally:
        context.close()


def test_voila_opens_ready_for_the_room(request, browser):
    """``?lang=zh&large=1`` opens the dashboard in Chinese, large font, and a reload keeps it; the tab
    says what it is; Chinese text carries lang="zh-Hans" and a Simplified Chinese font; every control
    gets a 3 px focus ring from the keyboard; the example sentence is in the UI language."""
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        from attnlab.course.i18n import t

        page.goto(f"{voila_app.url}/?token={voila_app.token}&lang=zh&large=1")
        title = json.loads((ROOT / EXPLORER_NOTEBOOK).read_text(encoding="utf-8"))["metadata"]["title"]
        for load in range(2):
            explorer = page.locator(".attnlab-explorer")
            explorer.wait_for()
            page.wait_for_selector(".attnlab-svg")
            assert page.title() == title
            lang = explorer.locator(".attnlab-control-lang select")
            assert lang.evaluate("s => s.options[s.selectedIndex].text") == "中文", load
            assert explorer.locator(".attnlab-control-large input").is_checked(), load
            assert explorer.locator(".attnlab-control-sentence input").input_value() == t("example.long", "zh")
            for part in (".attnlab-fig", ".attnlab-prose"):
                assert explorer.locator(part).get_attribute("lang") == "zh-Hans", part
            label = explorer.locator(".attnlab-control-mask .widget-label")
            assert label.evaluate("e => getComputedStyle(e).fontFamily").startswith('"Noto Sans CJK SC"')
            if load == 0:
                page.reload()
        # Keyboard: Tab reaches every visible control, each with a 3 px ring.
        rings = {}
        page.locator("body").click(position={"x": 2, "y": 700})
        for _ in range(30):
            page.keyboard.press("Tab")
            focused = page.evaluate("""() => { const e = document.activeElement, w = e.closest('[class*=attnlab-control-], .attnlab-more');
                return w ? [[...w.classList].find(c => c.startsWith('attnlab-control-') || c === 'attnlab-more'),
                            getComputedStyle(e).outlineWidth, getComputedStyle(e).outlineStyle] : null; }""")
            if focused:
                rings[focused[0]] = focused[1:]
        visible = explorer.evaluate("""e => [...e.querySelectorAll('[class*=attnlab-control-], .attnlab-more')]
            .filter(w => w.offsetParent !== null && !w.querySelector(':disabled'))
            .map(w => [...w.classList].find(c => c.startsWith('attnlab-control-') || c === 'attnlab-more'))""")
        assert set(visible) <= set(rings), (visible, rings)
        assert all(r == ["3px", "solid"] for r in rings.values()), rings
    finally:
        context.close()
