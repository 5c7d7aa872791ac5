"""The explorer's latency in a real browser: control change -> new heatmap painted.

    python benchmarks/bench_explorer_browser.py [--changes 50] [--ui voila,lab] [--connection course,stock]
                                                [--models trained,translator-vi,poet-vi,poet-zh]

Starts JupyterLab (the dashboard notebook, run all) and Voilà on 127.0.0.1, drives Debian's
Chromium with Playwright, and makes ``--changes`` changes of each kind. A change is timed in
the page from the event that makes it (click, keydown, input or change) until the frame showing
the new heatmap has been rendered (tests/browser_support.py ``timed``: first DOM change, next
animation frame, then a task queued from it). Hover: from the mouse move until the cell's tip is displayed and that frame rendered.
``--connection``: "course" serves kernels as ``make lab`` / ``make voila`` do (attnlab_server,
TCP_NODELAY), "stock" with Jupyter Server's default connection (Nagle's algorithm on).
``--models``: after the random-weight model's changes, each trained model's own: its layer, all
heads <-> one head, the window of positions (verse GPT) and the attention (translator); the first
switch to each model is timed too (it loads the model). Prints median and p95 per kind; goals
p95 <= 50 ms for display-only changes and <= 100 ms for changes that recompute (a layer or a head
of a trained model is a view of weights computed once per input). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import secrets
import statistics
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import browser_support as tb  # noqa: E402  (servers, helpers: one copy of the browser plumbing)

DISPLAY = ("head", "numbers", "large font", "language", "hover")
RECOMPUTE = ("mask", "heads", "sentence", "padding", "scaling")
GOALS = {"display": 50, "recompute": 100}
SENTENCES = ("The cat sat on the mat because it was tired", "Con mèo ngồi trên tấm thảm vì nó mệt")
CONNECTIONS = {"course": None, "stock": tb.STOCK_CONNECTION}
HOVER = """(cell, start) => new Promise((resolve, reject) => {
    const tip = cell.nextElementSibling;
    const poll = () => getComputedStyle(tip).display !== 'none'
        ? setTimeout(() => resolve(performance.now() - start), 0)       // after this frame's rendering
        : performance.now() - start > 5000 ? reject(new Error('no tip after 5 s')) : requestAnimationFrame(poll);
    requestAnimationFrame(poll);
})"""


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def run_changes(page, explorer, n: int) -> dict[str, list[float]]:
    samples = {kind: [] for kind in DISPLAY + RECOMPUTE}
    sentence = explorer.locator(".attnlab-control-sentence input")
    handle = explorer.locator(".attnlab-control-pad .noUi-handle, .attnlab-control-pad .ui-slider-handle").first
    lang = explorer.locator(".attnlab-control-lang select")
    for k in range(n):
        if explorer.locator(".attnlab-control-head option").count() > 2:   # one head: nothing to change
            samples["head"].append(tb.timed(page, explorer, tb.next_option(explorer, "head")))
        samples["numbers"].append(tb.timed(page, explorer, tb.toggle(explorer, "annotate"), ""))
        samples["large font"].append(tb.timed(page, explorer, tb.toggle(explorer, "large")))
        samples["language"].append(tb.timed(page, explorer, lambda: lang.select_option(index=(k + 1) % 3)))
        samples["mask"].append(tb.timed(page, explorer, tb.next_option(explorer, "mask")))
        samples["heads"].append(tb.timed(page, explorer, tb.next_option(explorer, "num_heads")))
        samples["scaling"].append(tb.timed(page, explorer, tb.toggle(explorer, "scaled")))
        new = SENTENCES[sentence.input_value() == SENTENCES[0]]          # the other one
        samples["sentence"].append(tb.timed(page, explorer, lambda: (sentence.fill(new), sentence.press("Enter"))))
        key = "ArrowRight" if k % 4 < 2 else "ArrowLeft"           # pad 2 -> 3 -> 4 -> 3 -> 2 ...
        samples["padding"].append(tb.timed(page, explorer, lambda: handle.press(key)))
        cells = explorer.locator(".attnlab-svg .row rect")
        cell = cells.nth((7 * k + 3) % cells.count())
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        page.mouse.move(1, 1)
        start = page.evaluate("() => performance.now()")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        samples["hover"].append(cell.element_handle().evaluate(f"cell => ({HOVER})(cell, {start})"))
    return samples


MODEL_NAMES = {"trained": 1, "translator-vi": 2, "translator-zh": 3, "poet-vi": 4, "poet-zh": 5}   # explorer.MODELS


def select_index(explorer, control: str, index: int):
    select = explorer.locator(f".attnlab-control-{control} select")
    return lambda: select.select_option(index=index)


def select_next(explorer, control: str):
    """The next option of a control (after the last: the first); always a change."""
    select = explorer.locator(f".attnlab-control-{control} select")
    index = select.evaluate("s => (s.selectedIndex + 1) % s.options.length")
    return lambda: select.select_option(index=index)


def run_model_changes(page, explorer, model: str, n: int) -> dict[str, list[float]]:
    """A trained model's changes: layer, all heads <-> one head, window of positions, attention."""
    samples = {f"{model}: first switch": [tb.timed(page, explorer, select_index(explorer, "model", MODEL_NAMES[model]))]}
    for kind in ("layer", "all <-> one head", "positions", "attention"):
        samples[f"{model}: {kind}"] = []
    head = explorer.locator(".attnlab-control-head select")
    for k in range(n):
        samples[f"{model}: layer"].append(tb.timed(page, explorer, select_next(explorer, "layer")))
        single = head.evaluate("s => [...s.options].findIndex(o => /\\d$/.test(o.text) && !o.text.includes('–'))")
        target = single if head.evaluate("s => s.selectedIndex") != single else 0
        samples[f"{model}: all <-> one head"].append(tb.timed(page, explorer, select_index(explorer, "head", target)))
        if explorer.locator(".attnlab-control-start select").is_visible():
            samples[f"{model}: positions"].append(tb.timed(page, explorer, select_next(explorer, "start")))
        if explorer.locator(".attnlab-control-attention select").is_visible():
            samples[f"{model}: attention"].append(tb.timed(page, explorer, select_next(explorer, "attention")))
    tb.timed(page, explorer, select_index(explorer, "model", 0))
    return {kind: ms for kind, ms in samples.items() if ms}


def report(where: str, samples: dict[str, list[float]]) -> None:
    print(f"\n{where}: change -> heatmap repainted (ms)")
    print(f"{'kind':30s} {'group':10s} {'n':>4s} {'median':>7s} {'p95':>7s} {'goal':>5s}", flush=True)
    for kind, ms in samples.items():
        group = "display" if kind in DISPLAY else "recompute"
        p95 = percentile(ms, 0.95)
        goal = f"{GOALS[group]:5d} {'PASS' if p95 <= GOALS[group] else 'MISS'}" if "first switch" not in kind else "    -"
        print(f"{kind:30s} {group:10s} {len(ms):4d} {statistics.median(ms):7.1f} {p95:7.1f} {goal}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--ui", default="voila,lab")
    parser.add_argument("--connection", default="course", help="course, stock or course,stock")
    parser.add_argument("--models", default="trained,translator-vi,poet-vi,poet-zh",
                        help="trained models to time after the random weights ('' for none)")
    args = parser.parse_args()
    base = pathlib.Path(tempfile.mkdtemp(prefix="attnlab-bench-"))

    sandbox = tb.make_sandbox(base)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=tb.CHROMIUM, args=tb.CHROMIUM_ARGS)
        for connection in args.connection.split(","):
            for ui in args.ui.split(","):
                if ui == "lab":
                    gen = tb.start_lab(sandbox, *([CONNECTIONS[connection]] if CONNECTIONS[connection] else []))
                else:
                    gen = tb.start_voila(sandbox, CONNECTIONS[connection])
                server = next(gen)
                try:
                    context = browser.new_context(viewport={"width": 1920, "height": 1080})
                    page = context.new_page()
                    page.set_default_timeout(tb.TIMEOUT_MS)
                    if ui == "lab":
                        page.goto(f"{server.url}/lab/workspaces/b{secrets.token_hex(4)}/tree/{tb.EXPLORER_NOTEBOOK}"
                                  f"?token={server.token}")
                        tb.run_all_cells(page)
                    else:
                        page.goto(f"{server.url}/?token={server.token}")
                    explorer = page.locator(".attnlab-explorer")
                    explorer.wait_for()
                    page.wait_for_selector(".attnlab-svg")
                    explorer.locator(".attnlab-heatmap").scroll_into_view_if_needed()
                    run_changes(page, explorer, 3)                 # warm up
                    name = {"lab": "JupyterLab", "voila": "Voilà"}[ui]
                    samples = run_changes(page, explorer, args.changes)
                    for model in filter(None, args.models.split(",")):
                        samples.update(run_model_changes(page, explorer, model, args.changes))
                    report(f"{name}, {connection} server connection (load {os.getloadavg()[0]:.1f} after)", samples)
                    context.close()
                finally:
                    gen.close()


if __name__ == "__main__":
    main()
