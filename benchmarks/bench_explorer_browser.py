"""The explorer's latency in a real browser: control change -> new heatmap painted.

    python benchmarks/bench_explorer_browser.py [--changes 50] [--ui voila,lab] [--connection course,stock]

Starts JupyterLab (the dashboard notebook, run all) and Voilà on 127.0.0.1, drives Debian's
Chromium with Playwright, and makes ``--changes`` changes of each kind. A change is timed in
the page from the event that makes it (click, keydown, input or change) until the frame showing
the new heatmap has been rendered (tests/browser_support.py ``timed``: first DOM change, next
animation frame, then a task queued from it). Hover: from the mouse move until the cell's tip is displayed and that frame rendered.
``--connection``: "course" serves kernels as ``make lab`` / ``make voila`` do (attnlab_server,
TCP_NODELAY), "stock" with Jupyter Server's default connection (Nagle's algorithm on).
Prints median and p95 per kind; goals p95 <= 50 ms for display-only changes and <= 100 ms for
changes that recompute. Nothing is asserted.
"""
from __future__ import annotations

import argparse
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


def report(where: str, samples: dict[str, list[float]]) -> None:
    print(f"\n{where}: change -> heatmap repainted (ms)")
    print(f"{'kind':12s} {'group':10s} {'n':>4s} {'median':>7s} {'p95':>7s} {'goal':>5s}", flush=True)
    for kind, ms in samples.items():
        group = "display" if kind in DISPLAY else "recompute"
        p95 = percentile(ms, 0.95)
        print(f"{kind:12s} {group:10s} {len(ms):4d} {statistics.median(ms):7.1f} {p95:7.1f} {GOALS[group]:5d} "
              f"{'PASS' if p95 <= GOALS[group] else 'MISS'}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--ui", default="voila,lab")
    parser.add_argument("--connection", default="course", help="course, stock or course,stock")
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
                    report(f"{name}, {connection} server connection", run_changes(page, explorer, args.changes))
                    context.close()
                finally:
                    gen.close()


if __name__ == "__main__":
    main()
