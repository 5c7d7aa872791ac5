"""Readable from the back of the room (issue 33), in a real browser (Debian's Chromium, Playwright).

* Projector: in Voilà at 1024x768, 1280x720 and 1920x1080, large font, every label of the heatmap
  (tokens, axis and head titles, the figure's title and legend) is at least 2.5 % of the screen's
  height, for every model (random weights with 1, 2, 4, 8 heads; lesson 07's reversal model; lesson
  08's translator; lesson 10's verse GPT in both corpora), all heads (their first page) and one
  head; everything is on screen; large font never makes a label smaller than normal font.
* JupyterLab with the file browser open (as ``make lab`` opens it), large font: the figure never
  overflows the output area to the right (the hover hint wraps).
* Keyboard: every control of the explorer, reached with Tab, works with the arrows, Space and Enter
  in Voilà and in JupyterLab, and the focus stays on it (JupyterLab: the notebook's command-mode
  shortcuts do not take the keys; the course's settings, ``attnlab_server.LAB_SETTINGS_DIR``).
  Every command-mode key typed on a focused control in a stored output leaves the notebook as it
  was, under the pinned JupyterLab and (``ATTNLAB_LAB_PYTHON``) under 4.5.
* Fonts: JupyterLab draws lesson 10's Vietnamese letters in its code and output font with real
  precomposed glyphs (not a base letter plus marks): every font Chromium used for them has them all,
  and a screenshot of the output equals one of the same text drawn in the first font the course's
  settings name that the machine has (CI: Noto Sans Mono CJK SC, Debian's fonts-noto-cjk).
* Kernels: a Voilà page that goes away without ``beforeunload`` (closed browser context) frees its
  kernel within the culler's timeout + interval. notebooks/voila.json says at most two minutes and
  never a connected page's kernel (checked); this module's Voilà runs the same culler with shorter
  times (CULLING), so the test does not wait two minutes.

Servers on 127.0.0.1 (stopped by the fixtures), one Voilà and one JupyterLab for the module.
SKIPPED (never passed) without Playwright for Python or Chromium.
"""
from __future__ import annotations

import json
import os
import pathlib
import secrets
import subprocess
import time
import unicodedata

import pytest

import attnlab_server
from attnlab.course.i18n import t
from browser_support import (CHROMIUM, EXPLORER_NOTEBOOK, ROOT, RUN_ALL, TIMEOUT_MS, WATCH, kernels_of, require,
                             run_all_cells, select_value, set_checkbox, start_voila, sync_playwright)
from browser_support import browser, lab, sandbox  # noqa: F401  (module-scoped fixtures)

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:                                   # pragma: no cover
    PlaywrightTimeout = TimeoutError

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(sync_playwright is None, reason="Playwright for Python is not installed"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"no Chromium at {CHROMIUM} (apt install chromium-headless-shell)"),
]

SCREENS = {"1024x768": (1024, 768), "1280x720": (1280, 720), "1920x1080": (1920, 1080)}
LEGIBLE = 0.025                     # of the screen's height: 10' of arc from six screen-heights
MODEL_NAMES = json.loads((ROOT / "shared" / "attnlab" / "messages" / "explorer.json").read_text(encoding="utf-8"))
# (model, head count of the random weights, one head?): every model and head count with all heads (their
# first page), and one head where that is another picture.
CASES = (("random", 1, False), ("random", 2, False), ("random", 4, False), ("random", 8, False), ("random", 8, True),
         ("trained", None, False), ("trained", None, True), ("translator-vi", None, True),
         ("poet-vi", None, False), ("poet-vi", None, True), ("poet-zh", None, False), ("poet-zh", None, True))
LABELS = """root => {
    const svg = root.querySelector('.attnlab-svg'), scale = svg.getScreenCTM().a;
    const texts = [...svg.querySelectorAll('text')].filter(e => !e.matches('.t, .v'));    // not the tips, not the numbers
    const html = [...root.querySelectorAll('.attnlab-title, .attnlab-legend > span')];
    const boxes = texts.map(e => e.getBoundingClientRect()).concat(html.map(e => e.getBoundingClientRect()));
    return {svg: Math.min(...texts.map(e => parseFloat(getComputedStyle(e).fontSize) * scale)),
            html: Math.min(...html.map(e => parseFloat(getComputedStyle(e).fontSize))),
            bottom: Math.max(...boxes.map(b => b.bottom)), right: Math.max(...boxes.map(b => b.right)),
            left: Math.min(...boxes.map(b => b.left)), title: root.querySelector('.attnlab-title').textContent,
            width: document.scrollingElement.scrollWidth};
}"""


def open_voila(browser, voila_app, width: int, height: int, query: str = "lang=vi"):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{voila_app.url}/?token={voila_app.token}&{query}")
    explorer = page.locator(".attnlab-explorer")
    explorer.wait_for()
    page.wait_for_selector(".attnlab-svg")
    return context, page, explorer


def show(explorer, model: str, heads: int | None, one_head: bool, lang: str = "vi") -> None:
    select_value(explorer, "model", MODEL_NAMES[f"explorer.model.{model}"][lang])
    if heads is not None:
        select_value(explorer, "num_heads", str(heads))
    head = explorer.locator(".attnlab-control-head select")
    if head.locator("option").count() > 2:          # one head: "all heads" and "head 1" are the same picture
        select_value(explorer, "head", t("plot.head", lang, i=1) if one_head else head.locator("option").first.inner_text())
    assert "⚠" not in explorer.locator(".attnlab-notes").inner_text(), (model, heads, one_head)


# ----------------------------------------------------------------------------- kernels (started first, checked last)

CLOSED: dict = {}                   # kernels of the pages closed without beforeunload, and when
# This module's Voilà culls sooner than notebooks/voila.json says (90 s idle, checked every 30 s), so that
# test_z_... finds the kernels gone instead of waiting two minutes: the same culler, shorter times. The
# file's own settings are checked in test_a_... (a minute or two, and never a connected page's kernel).
CULLING = {"cull_idle_timeout": 20, "cull_interval": 5}


@pytest.fixture(scope="module")
def voila_app(sandbox):  # noqa: F811  (this module's Voilà: browser_support's, with CULLING)
    yield from start_voila(sandbox, culling=CULLING)


def test_a_voila_pages_closed_without_beforeunload(request, browser):
    """Two dashboards whose browser contexts are closed (no beforeunload, as a closed browser, a crash
    or a dropped network): their kernels are checked at the end of the module (test_z_...)."""
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    config = json.loads((ROOT / "notebooks" / "voila.json").read_text(encoding="utf-8"))["MappingKernelManager"]
    # "A minute or two": culled when idle and disconnected for cull_idle_timeout, checked every cull_interval.
    assert config["cull_connected"] is False and config["cull_idle_timeout"] + config["cull_interval"] <= 120, config
    assert set(CULLING) < set(config), (CULLING, config)   # the settings this module's Voilà replaces
    before = set(kernels_of(voila_app))
    for _ in range(2):
        context, page, explorer = open_voila(browser, voila_app, 1280, 720)
        context.close()                                    # no beforeunload: the page just goes
    deadline = time.monotonic() + 60
    while len(set(kernels_of(voila_app)) - before) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    CLOSED.update(kernels=set(kernels_of(voila_app)) - before, at=time.monotonic(), config={**config, **CULLING})
    assert len(CLOSED["kernels"]) == 2, CLOSED


# ----------------------------------------------------------------------------- projector

@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_voila_large_font_labels_are_legible_on_a_projector(request, browser, screen):
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    width, height = SCREENS[screen]
    context, page, explorer = open_voila(browser, voila_app, width, height)
    sizes, problems = {}, []
    try:
        for large in (False, True):
            set_checkbox(explorer, "large", large)
            for model, heads, one_head in CASES:
                show(explorer, model, heads, one_head)
                m = explorer.evaluate(LABELS)
                where = f"{model}{'' if heads is None else f' {heads} heads'} {'one head' if one_head else 'all heads'}"
                sizes[where, large] = (round(m["svg"], 1), round(m["html"], 1))
                if m["bottom"] > height or m["right"] > width or m["left"] < 0 or m["width"] > width:
                    problems.append(f"{where} large={large}: not on screen {m}")
                if large and min(m["svg"], m["html"]) < LEGIBLE * height:
                    problems.append(f"{where}: labels {m['svg']:.1f} px, title/legend {m['html']:.1f} px: "
                                    f"under {LEGIBLE * height:.1f} px ({m['title']})")
        print(f"\nsmallest SVG label / title-legend (px) at {screen}, normal -> large font:",
              {w: f"{sizes[w, False]} -> {sizes[w, True]}" for w, large in sizes if large})
        problems += [f"{w}: large font {sizes[w, True]} px < normal {sizes[w, False]} px (SVG, HTML)"
                     for w, large in sizes if large and min(b - a for a, b in zip(sizes[w, False], sizes[w, True])) < 0]
        assert not problems, "\n".join(problems)
    finally:
        context.close()


# ----------------------------------------------------------------------------- keyboard

FOCUSED = """() => { const e = document.activeElement, w = e && e.closest('[class*=attnlab-control-], .attnlab-more');
    return w ? ([...w.classList].find(c => c.startsWith('attnlab-control-')) || 'more').replace('attnlab-control-', '') : null; }"""


def comes_true(page, test: str, arg=None, timeout_ms: int = 30_000) -> bool:
    """Whether the JavaScript function ``test`` (of ``arg``) comes to return true within the time."""
    try:
        page.wait_for_function(test, arg=arg, timeout=timeout_ms)
        return True
    except PlaywrightTimeout:
        return False


def press(page, explorer, key: str, timeout_ms: int = 30_000) -> bool:
    """Press ``key`` (on the focused element); whether the explorer's DOM changed and was painted."""
    explorer.evaluate(WATCH)
    page.keyboard.press(key)
    return comes_true(page, "() => window.__attnlabPainted !== null", timeout_ms=timeout_ms)


def focus_on(page, name: str, timeout_ms: int = 30_000) -> bool:
    """Whether the focus is (again, once the redraw is done) on the control ``name``. The wait is
    press's: a new sentence recomputes every head, which on CI's two busy cores (xdist) once took
    longer than 5 s before the focus came back."""
    return comes_true(page, f"() => ({FOCUSED})() === {name!r}", timeout_ms=timeout_ms)


def shows_query(page, word: str, shown: bool, timeout_ms: int = 30_000) -> bool:
    """Whether the heatmap comes to show (or no longer show) the query ``word``: the redraw for a
    new sentence is finished, not only begun (press's first change can be another widget's)."""
    test = f"[...document.querySelectorAll('.attnlab-svg text.q')].some(t => t.textContent.trim() === {word!r})"
    return comes_true(page, f"() => {'' if shown else '!'}({test})", timeout_ms=timeout_ms)


# What a reader sees of the explorer: the heatmap, and which controls are shown (the hidden ones keep
# options of the models visited, and the order of a style's properties varies: not part of it).
VIEW = """e => JSON.stringify([e.querySelector('.attnlab-heatmap')?.innerHTML ?? null,
    [...e.querySelectorAll('[class*=attnlab-control-], .attnlab-more')].map(w => w.offsetParent !== null)])"""
MARK_START = f"e => {{ window.__attnlabStart = ({VIEW})(e); }}"


def same_as_start(page, explorer, timeout_ms: int = 30_000) -> bool:
    """Whether the explorer comes to show again what MARK_START recorded."""
    if comes_true(page, f"e => ({VIEW})(e) === window.__attnlabStart", explorer.element_handle(), timeout_ms):
        return True
    print("not as before; the first difference (before, now):", explorer.evaluate(f"""e => {{
            const a = window.__attnlabStart, b = ({VIEW})(e); let i = 0;
        while (i < a.length && a[i] === b[i]) i++; return [a.slice(Math.max(0, i - 200), i + 200), b.slice(Math.max(0, i - 200), i + 200)]; }}"""))
    return False


def texts_equal(box, text: str, timeout_ms: int = 30_000) -> bool:
    """Whether the text box comes to hold ``text``."""
    return comes_true(box.page, "([b, t]) => b.value === t", [box.element_handle(), text], timeout_ms)


def keyboard_walk(page, explorer, stray_cells=None) -> dict:
    """Tab from the first control through every control: each one changes the explorer from the
    keyboard (and is set back), and keeps the focus. ``stray_cells``: a function giving (active cell,
    cell count) of the notebook, which must not change."""
    done, steps = {}, {}
    first_text = explorer.locator(".attnlab-control-sentence input").input_value()
    explorer.locator(".attnlab-control-model select").focus()
    before = stray_cells() if stray_cells else None
    for _ in range(40):
        name = page.evaluate(FOCUSED)
        if name is None or name in done:
            break
        control = explorer.locator(f".attnlab-control-{name}" if name != "more" else ".attnlab-more")
        explorer.evaluate(MARK_START)
        if name == "sentence":                            # a text box: typing, then Enter redraws
            box = control.locator("input")
            # The model step before went to the next model and back: the box gets the first model's
            # own text again in a message of its own, which can come after the redraw press() waited
            # for (a clean `.ci/run` once typed into the other model's text, then saw it replaced).
            settled = texts_equal(box, first_text)
            explorer.evaluate(MARK_START)                 # what the step must come back to
            before_text = box.input_value()
            page.keyboard.press("End")
            page.keyboard.type(" x")
            typed = box.input_value() == before_text + " x"
            changed = settled and typed and press(page, explorer, "Enter") and shows_query(page, "x", True)
            for _ in range(2):
                page.keyboard.press("Backspace")
            typed_back = box.input_value() == before_text
            back = typed_back and press(page, explorer, "Enter") and shows_query(page, "x", False)
            done[name] = changed and back
            steps[name] = dict(settled=settled, typed=typed, changed=changed, typed_back=typed_back, back=back)
        elif name == "pad":                               # the slider's handle: the arrows move it
            done[name] = press(page, explorer, "ArrowRight") and press(page, explorer, "ArrowLeft")
            page.keyboard.press("Tab")                    # the slider's editable readout, then on
        elif name == "more" or control.locator("input[type=checkbox]").count():
            key = "Enter" if name == "more" else "Space"  # a button, a checkbox
            done[name] = press(page, explorer, key) and press(page, explorer, key)
        else:                                             # a dropdown: ↓ picks the next option, ↑ comes back
            select = control.locator("select")
            last = select.evaluate("s => s.selectedIndex === s.options.length - 1")
            there, back = ("ArrowUp", "ArrowDown") if last else ("ArrowDown", "ArrowUp")
            done[name] = press(page, explorer, there) and focus_on(page, name) and press(page, explorer, back)
        # Set back means the explorer is again what it was: every message of the change back has come
        # (press() returns at the first painted change; a clean `.ci/run` once pressed on while "More settings" was
        # still to be hidden by the step before, and its focus then went with it).
        as_before = same_as_start(page, explorer)
        focused = focus_on(page, name)
        steps.setdefault(name, {}).update(as_before=as_before, focused=focused)
        done[name] = done[name] and as_before and focused
        if stray_cells:
            assert stray_cells() == before, (name, "the notebook took the key")
        page.keyboard.press("Tab")
    failed = {name: steps[name] for name, ok in done.items() if not ok}
    print("keyboard walk, the steps that failed:", failed or "none")
    return done


def test_voila_every_control_from_the_keyboard(request, browser):
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    context, page, explorer = open_voila(browser, voila_app, 1280, 720, "lang=en")
    try:
        done = keyboard_walk(page, explorer)
        visible = explorer.evaluate("""e => [...e.querySelectorAll('[class*=attnlab-control-]')]
            .filter(w => w.offsetParent !== null && !w.querySelector(':disabled'))
            .map(w => [...w.classList].find(c => c.startsWith('attnlab-control-')).slice(16))""")
        assert set(visible) <= set(done) and all(done.values()), (visible, done)
        set_checkbox(explorer, "large", True)              # large font: "More settings", a button
        explorer.locator(".attnlab-more").focus()
        page.keyboard.press("Enter")
        explorer.locator(".attnlab-control-pad").wait_for(state="visible", timeout=30_000)
    finally:
        context.close()


LAB_PATH = "/lab/workspaces/{workspace}/tree/{notebook}"
CELLS = """() => { const n = window.jupyterapp.shell.currentWidget.content;
    return [n.activeCellIndex, n.widgets.length]; }"""


@pytest.fixture(scope="module")
def lab_page(request, browser):
    """The dashboard notebook run in JupyterLab (file browser open), 1024x768, kept for the module."""
    require("jupyterlab")
    lab = request.getfixturevalue("lab")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})   # the toolbar's kernel status shown
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{lab.url}{LAB_PATH.format(workspace='r' + secrets.token_hex(4), notebook=EXPLORER_NOTEBOOK)}"
              f"?token={lab.token}")
    run_all_cells(page)
    page.set_viewport_size({"width": 1024, "height": 768})
    explorer = page.locator(".attnlab-explorer").first
    explorer.locator(".attnlab-svg").wait_for()
    yield page, explorer
    context.close()


def test_lab_every_control_from_the_keyboard(lab_page):
    """↓ on a focused dropdown changes it (it used to move the notebook's active cell)."""
    page, explorer = lab_page
    explorer.evaluate("e => e.scrollIntoView({block: 'start'})")
    select_value(explorer, "lang", "English")
    done = keyboard_walk(page, explorer, stray_cells=lambda: page.evaluate(CELLS))
    assert {"model", "sentence", "mask", "num_heads", "head", "pad", "lang", "large"} <= set(done), done
    assert all(done.values()), done


# A markdown cell, then a code cell whose stored output holds a focusable control (nothing is run).
PROBE = {"nbformat": 4, "nbformat_minor": 5,
         "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
         "cells": [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["probe"]},
                   {"cell_type": "code", "id": "c", "execution_count": 1, "metadata": {}, "source": ["1 + 1"],
                    "outputs": [{"output_type": "display_data", "metadata": {}, "data": {
                        "text/html": "<select class='probe'><option>a</option><option>b</option></select>",
                        "text/plain": "probe"}}]}]}
NOTEBOOK_STATE = """() => { const n = window.jupyterapp.shell.currentWidget.content;
    return [n.activeCellIndex, n.mode, n.widgets.map(c => [c.model.type, c.model.sharedModel.getSource()])]; }"""
# Every single key of the default command-mode shortcuts that would change the notebook.
COMMAND_KEYS = ["1", "2", "3", "4", "5", "6", "m", "y", "r", "a", "b", "x", "d", "d", "Shift+m", "z"]


def test_lab_keys_typed_in_an_output_control_stay_there(request, browser, sandbox):
    """On a focused control in a cell's output, the command-mode keys (the headings 1-6 too, which
    JupyterLab 4.1-4.5 bind to any focused element) leave the notebook as it was; on a focused
    markdown cell, 2 still makes a heading (the pinned release's binding, once). Run under JupyterLab
    4.5 as well (docs/explorer.md): ATTNLAB_LAB_PYTHON=<a venv with jupyterlab==4.5.11 and ipykernel>."""
    require("jupyterlab")
    lab = request.getfixturevalue("lab")
    name = f"probe-{secrets.token_hex(4)}.ipynb"
    (sandbox["root"] / name).write_text(json.dumps(PROBE), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{lab.url}{LAB_PATH.format(workspace='k' + secrets.token_hex(4), notebook=name)}?token={lab.token}")
        control = page.locator(".jp-OutputArea-output select.probe")
        control.wait_for()
        page.evaluate("""() => { const n = window.jupyterapp.shell.currentWidget.content;
            n.activeCellIndex = 1; n.mode = 'command'; }""")
        before = page.evaluate(NOTEBOOK_STATE)
        assert before == [1, "command", [["markdown", "probe"], ["code", "1 + 1"]]], before
        control.focus()
        for key in COMMAND_KEYS:                       # a command runs within the keydown handler
            page.keyboard.press(key)
            assert page.evaluate(NOTEBOOK_STATE) == before, (key, page.evaluate(NOTEBOOK_STATE))
            assert control.evaluate("e => e === document.activeElement"), key
        page.wait_for_timeout(300)
        assert page.evaluate(NOTEBOOK_STATE) == before
        page.evaluate("""() => { window.__ran = [];
            window.jupyterapp.commands.commandExecuted.connect((_, a) => window.__ran.push(a.id)); }""")
        page.locator(".jp-MarkdownCell").first.click()          # selected, command mode, the cell focused
        page.keyboard.press("2")
        page.wait_for_function("""() => window.jupyterapp.shell.currentWidget.content.widgets[0]
            .model.sharedModel.getSource() !== 'probe'""")
        page.wait_for_timeout(300)
        assert page.evaluate("() => window.__ran") == ["notebook:change-cell-to-heading-2"]   # once
        after = page.evaluate(NOTEBOOK_STATE)
        assert after[2] == [["markdown", "## probe"], ["code", "1 + 1"]], after
    finally:
        context.close()


def test_lab_large_font_never_overflows_to_the_right(lab_page):
    page, explorer = lab_page
    set_checkbox(explorer, "large", True)
    try:
        for width in (1024, 1280):
            page.set_viewport_size({"width": width, "height": 768 if width == 1024 else 720})
            for model, heads, one_head in CASES[3:]:         # 8 heads, then each trained model
                if one_head:
                    continue
                show(explorer, model, heads, one_head=False, lang="en")
                # The review's case: the hint, unwrapped, made the figure 927 px wide in a 592 px output area.
                sizes = explorer.evaluate("""e => { const o = e.closest('.jp-OutputArea-output'),
                    f = e.querySelector('.attnlab-fig'); return [o.scrollWidth, o.clientWidth, f.scrollWidth, f.clientWidth]; }""")
                out_scroll, out_width, fig_scroll, fig_width = sizes
                assert out_scroll <= out_width + 1 and fig_scroll <= fig_width + 1 and fig_width <= out_width, \
                    (width, model, sizes)
    finally:
        set_checkbox(explorer, "large", False)


# ----------------------------------------------------------------------------- Vietnamese in JupyterLab's code font

def vietnamese_letters(notebook: pathlib.Path) -> str:
    """Every precomposed letter with a diacritic in a notebook's sources and text outputs."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) + "".join("".join(o.get("text", "")) for o in c.get("outputs", []))
                   for c in cells)
    return "".join(sorted({ch for ch in unicodedata.normalize("NFC", text)
                           if ch.isalpha() and ord(ch) > 0x7F and unicodedata.decomposition(ch)}))


def font_file(family: str) -> pathlib.Path | None:
    """The file fontconfig has for a font family (None if it has none by that name)."""
    out = subprocess.run(["fc-match", "-f", "%{file}|%{family}", family], capture_output=True, text=True)
    path, _, found = out.stdout.partition("|")
    return pathlib.Path(path) if out.returncode == 0 and family in found.split(",") else None


def has_glyphs(path: pathlib.Path, text: str) -> bool:
    from fontTools.ttLib import TTCollection, TTFont

    fonts = TTCollection(str(path)).fonts if path.suffix.lower() == ".ttc" else [TTFont(str(path))]
    return any(all(ord(ch) in font.getBestCmap() for ch in text) for font in fonts)


def test_lab_draws_lesson_10_vietnamese_with_whole_letters(request, lab_page, sandbox):
    page, _ = lab_page
    letters = vietnamese_letters(ROOT / "lessons_vi" / "10_poet_gpt.ipynb")
    assert len(letters) > 40 and "ủ" in letters and "ế" in letters, letters
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "letters", "metadata": {},
                           "outputs": [], "source": [f"# {letters}\n", f"print({letters!r})"]}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (sandbox["root"] / "vi_letters.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'vi_letters.ipynb'})")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget?.context?.path === 'vi_letters.ipynb'")
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.evaluate(RUN_ALL)                                 # the new tab's kernel, once it is idle
    output = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output pre").last
    output.wait_for(timeout=240_000)
    assert output.inner_text().strip() == letters
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    problems = []
    for what, element in (("output", output),
                          ("code", page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .cm-line").first)):
        element.evaluate("e => e.id = 'attnlab-font-probe'")
        root = session.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
        node = session.send("DOM.querySelector", {"nodeId": root, "selector": "#attnlab-font-probe"})["nodeId"]
        used = [f["familyName"] for f in session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]
        element.evaluate("e => e.removeAttribute('id')")
        for family in used:
            path = font_file(family)
            if path is None or not has_glyphs(path, letters.replace("#", "")):
                problems.append(f"{what}: drawn with {family} ({path}), which lacks some of {letters}")
    # The screenshot: the output as JupyterLab draws it equals the same text in the first font the
    # course's settings name that the machine has.
    themes = attnlab_server.USER_SETTINGS / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
    families = json.loads(themes.read_text(encoding="utf-8"))["overrides"]["code-font-family"]
    family = next(f for f in (f.strip().strip('"') for f in families.split(",")) if font_file(f))
    output.evaluate("""(e, family) => { const r = e.cloneNode(true); r.id = 'attnlab-reference';
        r.style.fontFamily = `"${family}"`; e.after(r); }""", family)
    shot, ref = output.screenshot(), page.locator("#attnlab-reference").screenshot()
    page.evaluate("() => document.getElementById('attnlab-reference').remove()")
    (sandbox["base"] / "lab_vi_letters.png").write_bytes(shot)
    if shot != ref:
        problems.append(f"the output is not drawn like the same text in {family} (the course's font)")
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- kernels, the end

def test_z_voila_kernels_of_closed_pages_are_freed(request, browser):
    require("voila")
    voila_app = request.getfixturevalue("voila_app")
    if not CLOSED:                                         # run on its own (-k): close the pages now
        test_a_voila_pages_closed_without_beforeunload(request, browser)
    config = CLOSED["config"]
    deadline = CLOSED["at"] + config["cull_idle_timeout"] + config["cull_interval"] + 20
    while CLOSED["kernels"] & set(kernels_of(voila_app)) and time.monotonic() < deadline:
        time.sleep(1)
    left = CLOSED["kernels"] & set(kernels_of(voila_app))
    assert not left, f"{len(left)} kernels of closed pages still running: {voila_app.tail()}"
    print(f"\nkernels of closed pages: none left {time.monotonic() - CLOSED['at']:.0f} s after closing")
