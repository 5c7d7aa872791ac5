"""The student's pip path, as docs/install-pypi.md writes it, run command by command.

Fast checks: the three language sections give the same commands (comments may differ), the
README's and the lesson READMEs' commands are the page's, Windows and Linux differ only where
they must, and every address in a command is one this test knows how to stand in for.

Slow (`test_the_linux_commands_run_in_order_with_no_network`): a local folder plays the mirrors —
filled once with `pip download` (the course's wheel, built once for this and tests/test_wheel.py,
and what it, JupyterLab and Voila need, at constraints.txt's versions; torch is this machine's CPU
wheel, never a CUDA download) — and every Linux command of the English section runs in order in a
network namespace with only loopback (`unshare -n`), with no pip configuration but what the
commands write, each mirror address replaced by that folder: the venv, the mirror setting, the
torch lines (the first for real, the others `--dry-run`), the version checks, the course, the copy,
JupyterLab answering, lesson 01 (zh) executed by the student's own Jupyter (no error, no stderr,
as many PASS lines as stored), the update (with an edited lesson kept), Voila serving the explorer.
Skipped, saying why, without a network namespace, without this machine's CPU torch wheel for
this Python, or when the wheels cannot be downloaded. Not run at all: `sudo`, the mirrors.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

from venv_helpers import built_dist, offline_prefix, run, shared_tmp

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "install-pypi.md"
SECTIONS = {"en": "## English", "vi": "## Tiếng Việt", "zh": "## 中文"}
# Every address a command names, and what stands in for it here (a folder of the local mirror).
STAND_INS = {
    "https://pypi.tuna.tsinghua.edu.cn/simple": "simple",                  # a PyPI mirror (PEP 503 index)
    "https://mirrors.aliyun.com/pytorch-wheels/cpu/": "torch-files",       # a flat list of files (-f)
    "https://mirrors.nju.edu.cn/pytorch/whl/cpu": "torch-index",           # indexes laid out like PyTorch's
    "https://mirror.sjtu.edu.cn/pytorch-wheels/cpu": "torch-index",
    "https://download.pytorch.org/whl/cpu": "torch-index",
}
URL = re.compile(r"https?://[^\s\"']+")


def section(lang: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTIONS[lang] + "\n")
    later = [text.index(h + "\n") for h in SECTIONS.values() if text.index(h + "\n") > start]
    return text[start:min(later) if later else len(text)]


def commands(text: str, kind: str = "bash") -> list[str]:
    """The command lines of the ```kind blocks of ``text``, in order, comments dropped, `a && b` split."""
    out = []
    for block in re.findall(rf"^```{kind}\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            out += [part.strip() for part in line.split("&&") if part.strip()]
    return out


def test_every_language_gives_the_same_commands():
    for kind in ("bash", "powershell"):
        english = commands(section("en"), kind)
        assert english, kind
        for lang in ("vi", "zh"):
            assert commands(section(lang), kind) == english, f"{lang}: the {kind} commands differ from the English ones"


def test_windows_differs_only_in_making_and_activating_the_venv():
    linux, windows = commands(section("en")), commands(section("en"), "powershell")
    assert windows[:2] == [r"py -m venv $HOME\attnlab-env", r"& $HOME\attnlab-env\Scripts\Activate.ps1"]
    assert linux[1:3] == ["python3 -m venv ~/attnlab-env", "source ~/attnlab-env/bin/activate"]
    assert windows[2:] == [c for c in linux if c.startswith("pip config")]


def test_the_readmes_give_the_pages_commands():
    """README.md's pip section (also the PyPI description) and each lesson README (also in the
    student's copied folder) name only commands of the page, and name the ones that matter."""
    page = set(commands(section("en"))) | set(commands(section("en"), "powershell"))
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Install with pip")
    readme = commands(text[start:text.index("\n## ", start + 1)])
    assert set(readme) <= page, sorted(set(readme) - page)
    for needed in ("python3 -m venv ~/attnlab-env", "pip install attnlab-course jupyterlab",
                   "attnlab-lessons attention-course", "jupyter lab attention-course"):
        assert needed in readme, needed
    for lang in ("vi", "zh"):
        text = (ROOT / f"lessons_{lang}" / "README.md").read_text(encoding="utf-8")
        spans = {s for s in re.findall(r"`([^`]+)`", text) if re.match(r"(pip|attnlab-lessons|jupyter|source|&) ", s)}
        assert spans and spans <= page, (lang, sorted(spans - page))
        assert {"pip install -U attnlab-course", "attnlab-lessons attention-course"} <= spans
        assert "](../" not in text, f"lessons_{lang}/README.md: a relative link out of the folder is dead in a copy"


def test_every_address_in_a_command_has_a_stand_in():
    for lang in SECTIONS:
        for kind in ("bash", "powershell"):
            for line in commands(section(lang), kind):
                for url in URL.findall(line):
                    assert url in STAND_INS, f"{lang}: {url} — add it to STAND_INS so that the test covers it"


# ---- the slow run ----------------------------------------------------------------------------

def torch_pin() -> str:
    """'2.13.0+cpu', from the page's first Linux torch line."""
    line = next(c for c in commands(section("en")) if "torch==" in c)
    return re.search(r"torch==([^\"\s]+)", line).group(1)


def cpu_torch_wheel(version: str) -> pathlib.Path | None:
    """This machine's CPU torch wheel for this Python, from pip's find-links (never downloaded)."""
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    places = os.environ.get("PIP_FIND_LINKS", "").split()
    listed = run([sys.executable, "-m", "pip", "config", "list"]).stdout
    places += [v.strip("'\" ") for k, _, v in (line.partition("=") for line in listed.splitlines())
               if k.endswith("find-links") for v in v.split()]
    for place in places:
        found = sorted(pathlib.Path(place).glob(f"torch-{version}-{tag}-{tag}-*linux*_x86_64.whl")) \
            if pathlib.Path(place).is_dir() else []
        if found:
            return found[0]
    return None


def write_index(root: pathlib.Path, wheels: list[pathlib.Path]) -> None:
    """A PEP 503 simple index of ``wheels`` under ``root`` (what a PyPI mirror serves)."""
    by_name: dict[str, list[pathlib.Path]] = {}
    for wheel in wheels:
        name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        by_name.setdefault(name, []).append(wheel)
    for name, files in by_name.items():
        links = "".join(f'<a href="{f.resolve().as_uri()}">{f.name}</a><br>\n' for f in sorted(files))
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n", encoding="utf-8")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory) -> pathlib.Path:
    offline = offline_prefix()
    if offline is None:
        pytest.skip("no network namespace here (needs root, unshare and ip): the commands would reach the network")
    version = torch_pin()
    torch = cpu_torch_wheel(version)
    if torch is None:
        pytest.skip(f"no torch-{version} wheel for this Python in pip's find-links: the test never downloads "
                    "PyPI's CUDA build (several GB)")
    dist = built_dist(ROOT, shared_tmp(tmp_path_factory) / "attnlab-dist")
    if isinstance(dist, str):
        pytest.skip(dist)
    course = next(dist.glob("*.whl"))
    # Third-party wheels, downloaded once per constraints.txt and Python (build/ is git-ignored).
    digest = hashlib.sha256((ROOT / "constraints.txt").read_bytes() + version.encode()).hexdigest()[:12]
    key = f"py{sys.version_info[0]}{sys.version_info[1]}-{digest}"
    wheels = ROOT / "build" / "install-docs-wheels" / key
    if not (wheels / "done").is_file():
        shutil.rmtree(wheels, ignore_errors=True)
        pins = wheels.parent / f"{key}-torch.txt"
        pins.parent.mkdir(parents=True, exist_ok=True)
        pins.write_text(f"torch=={version}\n", encoding="utf-8")
        r = run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(wheels),
                 "-c", str(ROOT / "constraints.txt"), "-c", str(pins), "-f", str(torch.parent),
                 str(course), "jupyterlab", "voila"], timeout=1800)
        if r.returncode != 0:
            pytest.skip(f"cannot fill the local mirror (pip download failed): {r.stderr.strip()[-400:]}")
        (wheels / course.name).unlink(missing_ok=True)
        (wheels / "done").write_text("")
    root = tmp_path_factory.mktemp("mirror")
    files = root / "files"
    files.mkdir()
    for wheel in [*wheels.glob("*.whl"), course]:
        if not wheel.name.startswith("torch-"):
            os.link(wheel, files / wheel.name) if wheel.stat().st_dev == files.stat().st_dev else shutil.copy2(wheel, files)
    write_index(root / "simple", sorted(files.glob("*.whl")))                  # the PyPI mirror: no torch
    (root / "torch-files").mkdir()
    os.symlink(torch, root / "torch-files" / torch.name)                         # the flat mirror: torch only
    write_index(root / "torch-index", [root / "torch-files" / torch.name])     # the index mirrors: torch only
    return root


def student_env(home: pathlib.Path, shims: pathlib.Path) -> dict[str, str]:
    """A shell with nothing of this machine's pip setup: no PIP_* but the version check, no pip.conf."""
    return {"PATH": f"{shims}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
            "XDG_CONFIG_DIRS": str(home / "no-system-config"), "XDG_CONFIG_HOME": str(home / ".config"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
            "TMPDIR": str(home / "tmp")}


# Start a server (the command and its arguments follow the script), wait until `url` answers, save
# the answer, stop the server. A server that dies first fails at once.
WAIT_FOR = r'''
"$@" & server=$!
for i in $(seq {seconds}); do
  kill -0 $server 2>/dev/null || {{ echo "the server stopped" >&2; exit 1; }}
  if python -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('{url}', timeout=300).read().decode())" > "{out}" 2>/dev/null; then
    kill $server; wait $server || true; exit 0
  fi
  sleep 1
done
kill $server; exit 1
'''
# Jupyter's servers refuse to start as root without this (CI runs as root; a student is no root).
AS_ROOT = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


@pytest.mark.slow                  # a venv, ~100 wheels installed, JupyterLab, a lesson, Voila: minutes
def test_the_linux_commands_run_in_order_with_no_network(mirror, tmp_path):
    offline = offline_prefix()
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").symlink_to(sys._base_executable if hasattr(sys, "_base_executable") else sys.executable)
    env = student_env(home, shims)
    state: list[str] = []            # the `source` and `cd` lines run so far: every later command runs after them
    version = torch_pin()
    done, torch_lines = [], 0
    log = []

    def shell(command: str, timeout: int = 1200, script: str | None = None, args=()) -> subprocess.CompletedProcess:
        body = "set -e\n" + "\n".join(state) + "\n" + (script if script is not None else command)
        start = time.perf_counter()
        r = run([*offline, "bash", "-c", body, "bash", *args], cwd=home, env=env, timeout=timeout)
        log.append(f"$ {command}  ({time.perf_counter() - start:.0f} s)\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
        print(f"{time.perf_counter() - start:6.1f} s  {command}")             # shown with -s: the cost of each step
        return r

    def ok(r, what):
        assert r.returncode == 0, "\n".join(log[-3:]) + f"\n{what} failed"

    for command in commands(section("en")):
        for url in URL.findall(command):
            command = command.replace(url, (mirror / STAND_INS[url]).as_uri() + ("/" if url.endswith("/") else ""))
        if command.startswith("sudo "):
            continue                                        # a system package: not ours to install here
        if command.startswith(("source ", "cd ")):
            ok(shell(command), command)
            state.append(command)
        elif command.startswith("pip install") and "torch==" in command:
            torch_lines += 1
            if torch_lines == 1:
                ok(shell(command), command)
                r = shell("python -c 'import torch; print(torch.__version__)'")
                assert r.stdout.strip() == version, r.stdout + r.stderr
            else:                                           # the other mirrors: would they give the same file?
                r = shell(command + " --dry-run --ignore-installed --no-deps")
                ok(r, command)
                assert f"Would install torch-{version}" in r.stdout, r.stdout
        elif command.startswith("pip index versions torch"):
            r = shell(command)
            ok(r, command)
            assert re.search(rf"^torch \({re.escape(version)}\)", r.stdout, re.M), r.stdout
        elif command == "jupyter lab attention-course":
            out = tmp_path / "api.json"
            r = shell(command, script=WAIT_FOR.format(seconds=240, url="http://127.0.0.1:8888/api", out=out),
                      args=[*command.split(), "--no-browser", "--port=8888", *AS_ROOT])
            ok(r, "JupyterLab answering on 127.0.0.1:8888")
            assert "version" in json.loads(out.read_text()), out.read_text()
            lesson_runs_in_the_students_jupyter(shell, home)
        elif command.startswith("voila "):
            out = tmp_path / "voila.html"
            r = shell(command, timeout=900, script=WAIT_FOR.format(seconds=600, url="http://127.0.0.1:8866/", out=out),
                      args=[*command.split(), "--no-browser", "--port=8866"])
            ok(r, "Voila serving the explorer on 127.0.0.1:8866")
            page = out.read_text(encoding="utf-8")
            assert "attention" in page.lower() and "Traceback" not in page, page[-3000:]
        elif command == "attnlab-lessons attention-course":
            r = shell(command)
            ok(r, command)
            if "attnlab-lessons attention-course" not in done:     # the first copy: everything
                assert re.match(r"attention-course: \d+ files copied, 0 updated", r.stdout), r.stdout
                edited = home / "attention-course" / "lessons_vi" / "01_self_attention.ipynb"
                edited.write_text(edited.read_text(encoding="utf-8").replace('"cells": [', '"cells": [ ', 1), encoding="utf-8")
            else:                                                   # again, after the update
                assert "0 files copied" in r.stdout and "lessons_vi/01_self_attention.ipynb: you changed it" in r.stdout, r.stdout
        else:
            ok(shell(command), command)
            if command.startswith("pip config"):
                listed = shell("pip config list").stdout      # the machine's own settings play no part
                where = [line for line in listed.splitlines() if re.search(r"index|find-links|constraint|no-index", line)]
                assert where == [f"global.index-url='{(mirror / 'simple').as_uri()}'"], listed
        done.append(command)
    expected = {"python3 -m venv ~/attnlab-env", "pip install attnlab-course jupyterlab", "jupyter lab attention-course",
                "pip install -U attnlab-course", 'pip install "attnlab-course[app]"'}
    assert expected <= set(done) and torch_lines == 4, done
    r = shell("pip check")
    ok(r, "pip check")


def lesson_runs_in_the_students_jupyter(shell, home: pathlib.Path) -> None:
    """Lesson 01 (zh) executed by nbconvert from the student's venv: no error, no stderr, PASS as stored."""
    sys.path.insert(0, str(ROOT / "tools"))
    import matrix
    import nbformat
    lesson = "attention-course/lessons_zh/01_self_attention.ipynb"
    r = shell(f"jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 --output-dir {home}/ran {lesson}",
              timeout=1500)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    ran = nbformat.read(home / "ran" / "01_self_attention.ipynb", as_version=4)
    stored = nbformat.read(ROOT / "lessons_zh" / "01_self_attention.ipynb", as_version=4)
    passes, fails = matrix.verdict_words()
    count = lambda nb: sum(matrix.check_lines(matrix.printed(c), passes, fails)[0] for c in nb.cells if c.cell_type == "code")  # noqa: E731
    problems = [o for c in ran.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")]
    assert not problems, problems[:3]
    assert count(ran) == count(stored) > 0


def test_the_page_reads_as_the_readmes_do():
    """The page is also the website's install.html: no line break inside a Chinese sentence (a browser
    shows it as a space), and the same vi/zh typography as the READMEs."""
    from language_sources import cjk_soft_breaks
    assert cjk_soft_breaks(DOC.read_text(encoding="utf-8")) == []
    zh = section("zh")
    assert not re.search(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]", re.sub(r"`[^`]*`|```.*?```|\(http[^)]*\)", "", zh, flags=re.S)), \
        "a half-width space between Chinese and Latin letters or digits"
    assert '"' not in re.sub(r"`[^`]*`|```.*?```", "", zh, flags=re.S) and '"' not in re.sub(r"`[^`]*`|```.*?```", "", section("vi"), flags=re.S)
