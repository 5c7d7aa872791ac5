"""The explorer in a real browser: JupyterLab, Notebook 7 and Voilà, driven by Debian's Chromium.

Every notebook whose code calls the explorer (found from the notebooks' source) is opened in a
real JupyterLab server, run top to bottom, and each explorer's mask type and head count are
changed: the heatmap image must change and no error or stderr output may appear. The same for
the instructor's explorer notebook in Notebook 7 (same server) and served by Voilà. The
in-browser latency (control change -> new image) is printed at the end; it is not asserted.

Everything runs on 127.0.0.1 with token auth, on copies of the notebooks, with HOME and the
Jupyter/JupyterLab directories in a temporary folder. SKIPPED (never passed) without Playwright
for Python or a Chromium at ATTNLAB_CHROMIUM (default /usr/bin/chromium).
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK_DIRS = ("lessons_vi", "lessons_zh", "notebooks")
EXPLORER_NOTEBOOK = "notebooks/attention_explorer.ipynb"
EXPLORER_CALL = re.compile(r"\b(explore|AttentionExplorer)\s*\(")
CHROMIUM = os.environ.get("ATTNLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-dev-shm-usage"]
TIMEOUT_MS = 120_000
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'

try:
    from playwright.sync_api import sync_playwright
except ImportError:                                   # pragma: no cover
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(sync_playwright is None, reason="Playwright for Python is not installed"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason=f"no Chromium at {CHROMIUM} (apt install chromium)"),
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

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process in its own process group, logging to a file; stopped with SIGTERM."""

    def __init__(self, cmd: list[str], cwd: pathlib.Path, env: dict, log: pathlib.Path, port: int, token: str):
        self.port, self.token, self.log = port, token, log
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_until_listening(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"server not listening after {timeout:.0f} s:\n{self.tail()}")

    def tail(self, n: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)          # our own process group: server and kernels
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """Copies of the notebooks and a throwaway HOME with quiet JupyterLab settings."""
    base = tmp_path_factory.mktemp("browser")
    root, home = base / "root", base / "home"
    for d in NOTEBOOK_DIRS:
        if (ROOT / d).is_dir():
            shutil.copytree(ROOT / d, root / d, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = dict(os.environ, HOME=str(home), PYTHONHASHSEED="0",
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "lab-settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "lab-workspaces"))
    settings = {  # no news pop-ups; every cell in the DOM (no virtual scrolling)
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                            "checkForUpdates": False},
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }
    for rel, value in settings.items():
        path = home / "lab-settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    return {"root": root, "home": home, "env": env, "base": base}


@pytest.fixture(scope="module")
def lab(sandbox):
    port, token = free_port(), secrets.token_hex(16)
    server = Server([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                     "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                     f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={sandbox['root']}",
                     f"--LabApp.workspaces_dir={sandbox['home'] / 'lab-workspaces'}",
                     "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True"],
                    cwd=sandbox["root"], env=sandbox["env"], log=sandbox["base"] / "lab.log", port=port, token=token)
    try:
        server.wait_until_listening()
        deadline = time.monotonic() + 60
        while True:                                    # listening is not ready: wait for the REST API
            try:
                urllib.request.urlopen(f"{server.url}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def voila_app(sandbox):
    port, token = free_port(), secrets.token_hex(16)
    server = Server([sys.executable, "-m", "voila", "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}",
                     "--Voila.port_retries=0", f"--token={token}", EXPLORER_NOTEBOOK],
                    cwd=sandbox["root"], env=sandbox["env"], log=sandbox["base"] / "voila.log", port=port, token=token)
    try:
        server.wait_until_listening()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def latency(request):
    """Milliseconds from a control change to the new image, per place; reported at the end."""
    samples: dict[str, list[float]] = {}
    yield samples
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None or not samples:
        return
    with capture.global_and_fixture_disabled():         # straight to the terminal, with or without -s
        reporter.write_line("")
        reporter.write_sep("-", "explorer latency in the browser (control change -> new image)")
        for where, ms in samples.items():
            ms = sorted(ms)
            p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
            reporter.write_line(f"{where}: n={len(ms)} median {statistics.median(ms):.0f} ms, "
                                f"p95 {p95:.0f} ms, max {ms[-1]:.0f} ms")


# ----------------------------------------------------------------------------- the explorer in a page

WATCH_IMAGE = """img => {
    window.__attnlabChanged = null;
    const before = img.src;
    const observer = new MutationObserver(() => {
        if (img.src !== before) { window.__attnlabChanged = performance.now(); observer.disconnect(); }
    });
    observer.observe(img, {attributes: true, attributeFilter: ["src"]});
    return performance.now();
}"""

IMAGE_DIGEST = """async img => {
    const bytes = await (await fetch(img.src)).arrayBuffer();
    const digest = await crypto.subtle.digest("SHA-256", bytes);
    return Array.from(new Uint8Array(digest), b => b.toString(16).padStart(2, "0")).join("");
}"""


def change_control(page, explorer, control: str) -> float:
    """Select the next option of a Dropdown; wait for the new image. Returns the latency in ms."""
    select = explorer.locator(f".attnlab-control-{control} select")
    image = explorer.locator(".attnlab-image")
    n = select.locator("option").count()
    index = (select.evaluate("s => s.selectedIndex") + 1) % n
    start = image.evaluate(WATCH_IMAGE)
    select.select_option(index=index)
    page.wait_for_function("() => window.__attnlabChanged !== null", timeout=TIMEOUT_MS)
    return page.evaluate("() => window.__attnlabChanged") - start


def exercise_explorer(page, explorer, samples: list[float]) -> None:
    """(From the trained model to random weights first, where the explorer opens on it.) Change
    the mask type and the head count: each time a different image, no error message.
    Then switch to the trained model and back: a new image each time, the controls that the
    trained model fixes are disabled there only, and the sentence comes back."""
    image = explorer.locator(".attnlab-image")
    image.scroll_into_view_if_needed()
    page.wait_for_function("img => img.src.length > 0", arg=image.element_handle(), timeout=TIMEOUT_MS)
    previous = image.evaluate(IMAGE_DIGEST)
    model = explorer.locator(".attnlab-control-model select")
    if model.evaluate("s => s.selectedIndex") == MODEL_INDEX["trained"]:
        # An explorer that opens on the trained model (lesson 07): back to random weights first.
        start = image.evaluate(WATCH_IMAGE)
        model.select_option(index=MODEL_INDEX["random"])
        page.wait_for_function("() => window.__attnlabChanged !== null", timeout=TIMEOUT_MS)
        samples.append(page.evaluate("() => window.__attnlabChanged") - start)
        digest = image.evaluate(IMAGE_DIGEST)
        assert digest != previous, "the image did not change after switching to the random model"
        previous = digest
    for control in ("mask", "num_heads") * 6:
        samples.append(change_control(page, explorer, control))
        digest = image.evaluate(IMAGE_DIGEST)
        assert digest != previous, f"the image did not change after changing {control}"
        previous = digest
        message = explorer.locator(".attnlab-message").inner_text()
        assert "⚠" not in message, message
    sentence = explorer.locator(".attnlab-control-sentence input")
    text = sentence.input_value()
    for model, locked in (("trained", True), ("random", False)):
        start = image.evaluate(WATCH_IMAGE)
        explorer.locator(".attnlab-control-model select").select_option(index=MODEL_INDEX[model])
        page.wait_for_function("() => window.__attnlabChanged !== null", timeout=TIMEOUT_MS)
        samples.append(page.evaluate("() => window.__attnlabChanged") - start)
        digest = image.evaluate(IMAGE_DIGEST)
        assert digest != previous, f"the image did not change after switching to the {model} model"
        previous = digest
        for control in ("mask", "num_heads", "pad_side"):
            select = explorer.locator(f".attnlab-control-{control} select")
            assert select.is_disabled() == locked, (model, control)
        assert explorer.locator(".attnlab-control-layer select").is_disabled() != locked, model
        message = explorer.locator(".attnlab-message").inner_text()
        assert "⚠" not in message, message
    assert sentence.input_value() == text


MODEL_INDEX = {"random": 0, "trained": 1}     # order of attnlab.explorer.MODELS


def widget_errors(page) -> list[str]:
    """Uncaught page errors from the widgets (the apps' own start-up noise is not ours to judge)."""
    return [e for e in page.errors if re.search(r"widget|attnlab", e, re.IGNORECASE)]


def assert_no_error_output(page, allowed: set[int] = frozenset()) -> None:
    """No stderr, error or broken-widget output in any cell but those tagged raises-exception."""
    cells = page.evaluate(f"""() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map(cell => [
        ...[...cell.querySelectorAll('{STDERR}')].map(o => o.innerText.slice(0, 300)),
        ...[...cell.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText)
            .filter(t => /Error displaying widget|Error rendering|Traceback/.test(t)).map(t => t.slice(0, 300)),
    ])""")
    bad = {i: out for i, out in enumerate(cells) if out and i not in allowed}
    assert not bad, f"stderr/error output in cells {bad}"


RUN_ALL = """async () => {
    const app = window.jupyterapp;              // exposed by --*.expose_app_in_browser
    const panel = app.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    while (panel.sessionContext.session?.kernel?.status !== "idle") {
        await new Promise(resolve => setTimeout(resolve, 100));
    }
    await app.commands.execute("notebook:run-all-cells");
}"""


def run_all_cells(page) -> None:
    """Once the notebook's kernel is ready: run every cell, wait for all of them."""
    page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext !== undefined")
    page.wait_for_selector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]')
    page.evaluate(RUN_ALL)
    wait_for_all_cells(page)


def wait_for_all_cells(page, timeout_s: float = 240) -> None:
    """Every code cell executed ([n]: prompts, none pending) and the kernel idle."""
    page.wait_for_function("""() => {
        const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
        return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
    }""", timeout=timeout_s * 1000)
    page.wait_for_selector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]')


# ----------------------------------------------------------------------------- tests

UI_PATHS = {
    "JupyterLab": "/lab/workspaces/{workspace}/tree/{notebook}",  # a fresh workspace: no other tabs reopen
    "Notebook 7": "/notebooks/{notebook}",
}
CASES = [("JupyterLab", nb) for nb in explorer_notebooks()] + [("Notebook 7", EXPLORER_NOTEBOOK)]
NEEDS = {"JupyterLab": "jupyterlab", "Notebook 7": "notebook"}


def require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -r requirements-dev.txt)")


@pytest.mark.parametrize("ui,notebook", CASES, ids=[f"{ui}:{nb}" for ui, nb in CASES])
def test_explorer_in_jupyter(request, ui, notebook, latency):
    require(NEEDS[ui])
    lab, page = request.getfixturevalue("lab"), request.getfixturevalue("page")
    path = UI_PATHS[ui].format(workspace="t" + secrets.token_hex(4), notebook=notebook)
    page.goto(f"{lab.url}{path}?token={lab.token}")
    run_all_cells(page)
    explorers = page.locator(".attnlab-explorer")
    explorers.first.wait_for()
    assert explorers.count() >= 1
    for k in range(explorers.count()):
        exercise_explorer(page, explorers.nth(k), latency.setdefault(ui, []))
    assert_no_error_output(page, cells_allowed_to_fail(notebook))
    assert not widget_errors(page), widget_errors(page)
    shutdown_kernels(lab)


def shutdown_kernels(server: Server) -> None:
    url = f"{server.url}/api/kernels?token={server.token}"
    for kernel in json.load(urllib.request.urlopen(url, timeout=30)):
        request = urllib.request.Request(f"{server.url}/api/kernels/{kernel['id']}?token={server.token}",
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=30)


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
