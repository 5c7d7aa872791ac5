"""The browser tests' plumbing (tests/test_browser*.py, benchmarks/bench_explorer_browser.py): servers
on 127.0.0.1 in a throwaway HOME, Debian's Chromium through Playwright, and helpers that drive the
explorer in a page and time its changes.

A module of plain functions: each test module makes its own module-scoped fixtures from them (one
Playwright per module: test_site.py starts another one after these are closed).
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
import subprocess
import sys
import time
import urllib.request

import pytest

import attnlab_server
from attnlab.course import NOTEBOOK_DIRS

try:
    from playwright.sync_api import sync_playwright
except ImportError:                                   # pragma: no cover
    sync_playwright = None

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXPLORER_NOTEBOOK = "notebooks/attention_explorer.ipynb"


# Debian's chromium-headless-shell: Chromium's headless shell, the build Playwright itself runs for headless
# tests, with the same Blink and V8 as the full browser but without its window and UI layers (a quarter
# less CPU for the website's tests: docs/performance.md). The full browser: ATTNLAB_CHROMIUM=/usr/bin/chromium.
DEFAULT_CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
CHROMIUM = os.environ.get("ATTNLAB_CHROMIUM", DEFAULT_CHROMIUM)


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-dev-shm-usage"]


TIMEOUT_MS = 120_000


STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


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


# The course's launchers (`make lab`, `make voila`: notebooks/voila.json) serve kernels with
# attnlab_server's connection (TCP_NODELAY); the tests use the same servers.
STOCK_CONNECTION = "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection"


def start_lab(sandbox, connection: str = attnlab_server.CONNECTION_CLASS, course_settings: bool = True):
    """A JupyterLab server on the sandbox, as ``make lab`` starts it: the course's kernel connection,
    settings and style (``attnlab_server.lab_args()``; ``course_settings=False``: JupyterLab's own).
    ATTNLAB_LAB_PYTHON: the python of another environment to run JupyterLab from (the course's shortcut
    overrides under JupyterLab 4.5: tests/test_browser_room.py::test_lab_keys_typed_in_an_output_control_stay_there).
    A generator: yields the server, stops it when closed."""
    port, token = free_port(), secrets.token_hex(16)
    if course_settings:                                # as `make lab` does before it starts JupyterLab
        attnlab_server.seed_user_settings(sandbox["env"]["JUPYTERLAB_SETTINGS_DIR"])
    python = os.environ.get("ATTNLAB_LAB_PYTHON") or sys.executable   # another environment's JupyterLab (4.5: below)
    server = Server([python, "-m", "jupyterlab", "--no-browser", "--allow-root",
                     "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                     f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={sandbox['root']}",
                     f"--ServerApp.kernel_websocket_connection_class={connection}",
                     f"--LabApp.workspaces_dir={sandbox['home'] / 'lab-workspaces'}",
                     "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True",
                     *(attnlab_server.lab_args(sandbox["env"]["JUPYTERLAB_SETTINGS_DIR"]) if course_settings else [])],
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


def start_voila(sandbox, connection: str | None = None, culling: dict | None = None):
    """Voilà on the dashboard with notebooks/voila.json (``connection``: another kernel connection class;
    ``culling``: MappingKernelManager settings that replace the file's, e.g. shorter culling times)."""
    port, token = free_port(), secrets.token_hex(16)
    extra = [f"--Voila.kernel_websocket_connection_class={connection}"] if connection else []
    extra += [f"--MappingKernelManager.{key}={value}" for key, value in (culling or {}).items()]
    server = Server([sys.executable, "-m", "voila", "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}",
                     "--Voila.port_retries=0", f"--token={token}", "--Voila.config_file_paths=notebooks",
                     *extra, EXPLORER_NOTEBOOK],
                    cwd=sandbox["root"], env=sandbox["env"], log=sandbox["base"] / "voila.log", port=port, token=token)
    try:
        server.wait_until_listening()
        yield server
    finally:
        server.stop()


# The clock starts at the event that makes the change, as the page sees it (capture phase: before the
# widget's own handlers): "click" for a checkbox (not "mousedown": the time a finger holds the button
# is not the explorer's), "input"/"change" for a dropdown, "keydown" for Enter or an arrow key. So
# Playwright's actionability checks are not counted; the page's clock is used.
# It stops when the frame that shows the change has been rendered: the first DOM change, then the
# next animation frame (style, layout and paint run right after its callbacks), then a task queued
# from that callback, which runs once the frame's rendering is done.
WATCH = """el => {
    window.__attnlabChanged = null;
    window.__attnlabPainted = null;
    window.__attnlabInput = null;
    if (!window.__attnlabListening) {
        window.__attnlabListening = true;
        for (const type of ["click", "keydown", "input", "change"]) {
            document.addEventListener(type, () => { window.__attnlabInput ??= performance.now(); }, true);
        }
    }
    const observer = new MutationObserver(() => {
        window.__attnlabChanged = performance.now(); observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => { window.__attnlabPainted = performance.now(); }, 0));
    });
    observer.observe(el, {childList: true, subtree: true, characterData: true});
    return performance.now();
}"""


DIGEST = "el => { let h = 0; const s = el.innerHTML; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0; return s.length + ':' + h; }"


MODEL_INDEX = {"random": 0, "trained": 1}     # order of attnlab.explorer.MODELS


def heatmap(explorer):
    return explorer.locator(".attnlab-heatmap .widget-html-content, .attnlab-heatmap").first


def timed(page, explorer, action, where: str = ".attnlab-heatmap") -> float:
    """Run ``action()``, wait until the heatmap's DOM changes (or ``where``'s: "" for the whole explorer)
    and the frame showing it is rendered; the latency in ms from the page's input event (from the
    call, for changes made without one)."""
    target = explorer.locator(where) if where else explorer
    start = target.evaluate(WATCH)
    action()
    page.wait_for_function("() => window.__attnlabPainted !== null", timeout=TIMEOUT_MS)
    return page.evaluate("start => window.__attnlabPainted - (window.__attnlabInput ?? start)", start)


def reveal(explorer, control: str) -> None:
    """Large-font mode keeps the secondary settings behind "More settings": open it if needed."""
    widget = explorer.locator(f".attnlab-control-{control}")
    if not widget.is_visible():
        more = explorer.locator(".attnlab-more")
        more.click()
        widget.wait_for(state="visible")


def next_option(explorer, control: str):
    reveal(explorer, control)
    select = explorer.locator(f".attnlab-control-{control} select")
    n = select.locator("option").count()
    index = (select.evaluate("s => s.selectedIndex") + 1) % n
    return lambda: select.select_option(index=index)


def toggle(explorer, control: str):
    reveal(explorer, control)
    box = explorer.locator(f".attnlab-control-{control} input[type=checkbox]")
    return lambda: box.click()


def assert_no_warning(explorer, what=""):
    box = explorer.locator(".attnlab-message")
    if box.count():
        assert "⚠" not in box.inner_text(), (what, box.inner_text())


def widget_errors(page) -> list[str]:
    """Uncaught page errors from the widgets (the apps' own start-up noise is not ours to judge)."""
    return [e for e in page.errors if re.search(r"widget|attnlab", e, re.IGNORECASE)]


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


def require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -r requirements-dev.txt)")


def shutdown_kernels(server: Server) -> None:
    url = f"{server.url}/api/kernels?token={server.token}"
    for kernel in json.load(urllib.request.urlopen(url, timeout=30)):
        request = urllib.request.Request(f"{server.url}/api/kernels/{kernel['id']}?token={server.token}",
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=30)


def select_value(explorer, control: str, label: str) -> None:
    """Choose the option labelled ``label`` (ipywidgets writes its spaces as no-break spaces)."""
    reveal(explorer, control)
    select = explorer.locator(f".attnlab-control-{control} select")
    texts = [t.replace("\xa0", " ") for t in select.evaluate("s => [...s.options].map(o => o.text)")]
    index = texts.index(label.replace("\xa0", " "))
    if select.evaluate("s => s.selectedIndex") != index:
        timed(explorer.page, explorer, lambda: select.select_option(index=index))


def set_checkbox(explorer, control: str, on: bool) -> None:
    reveal(explorer, control)
    box = explorer.locator(f".attnlab-control-{control} input[type=checkbox]")
    if box.is_checked() != on:
        timed(explorer.page, explorer, lambda: box.click())


def label_height(explorer) -> float:
    """On-screen height (CSS px) of the font of the query labels."""
    return explorer.locator(".attnlab-svg .q").first.evaluate(
        "e => parseFloat(getComputedStyle(e.ownerSVGElement).fontSize) * e.ownerSVGElement.getScreenCTM().a")


def kernels_of(server: Server) -> list[int]:
    """Pids of the kernels the server started, from /proc: its child processes running ipykernel
    (jupyter_client starts each kernel in a session of its own, so the session does not find them)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:                                # gone meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # fields after "(comm)": state ppid pgrp session
        if parent == server.proc.pid and "ipykernel" in cmdline:
            found.append(int(entry.name))
    return found


def make_sandbox(base: pathlib.Path) -> dict:
    """Copies of the notebooks in ``base`` and a throwaway HOME with quiet JupyterLab settings."""
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
def sandbox(tmp_path_factory):
    return make_sandbox(tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")
def lab(sandbox):
    yield from start_lab(sandbox)


@pytest.fixture(scope="module")
def voila_app(sandbox):
    yield from start_voila(sandbox)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
