"""The course package as a student installs it (`pip install attnlab-course`, e.g. through a
university's PyPI mirror), never from the source tree:

- built like a release (`python -m build`: the sdist from the tracked files, then the wheel from
  the sdist) from a copy of the repository, and checked with `twine check --strict`;
- installed (not editable) into a fresh venv whose dependencies are this environment's pinned
  packages, lent (tests/venv_helpers.py): pip resolves the wheel's requirements against them with
  no index at all, so it installs the course's distribution and nothing else;
- used from a folder outside the repository: every file of shared/attnlab and shared/attnlab_server
  is in the installed package, and every checkpoint, font, message file, glossary and corpus loads;
- lessons 01, 07 and 08 of both languages, copied out of the repository, pass nbval against the
  installed package, offline: in a network namespace with only loopback where the machine allows
  one (root, `unshare`; CI runs as root), otherwise online, which `test_lessons_ran_offline` says;
- the notebooks' setup cell, outside a clone and outside Colab, installs the package BY NAME from
  whatever index pip is configured with (here a local folder standing in for a mirror, with the
  repository URL unreachable); when pip cannot, it stops with one clear line.

Slow (a build, a venv and six notebooks: about 3 minutes on the 2-core CI machine).
"""
from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from attnlab.course import DISTRIBUTION, LESSON_DIRS, NOTEBOOK_DIRS, VERSION, setup_cell
from venv_helpers import clean_env, fresh_venv_with_lent_packages, own_site, run, symlinks_allowed

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
LESSONS = ("01_self_attention", "07_train_tiny_transformer", "08_number_translator")
PACKAGES = ("attnlab", "attnlab_server")


def offline_prefix() -> list[str] | None:
    """A command prefix that runs a program with no network but loopback, or None."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    prefix = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    probe = run([*prefix, sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9), 1)"],
                timeout=30)
    # Connection refused on loopback (not "permission denied" from unshare) means the namespace works.
    return prefix if "ConnectionRefusedError" in probe.stderr else None


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> pathlib.Path:
    """sdist and wheel built from a copy of the tracked files, as a release would be."""
    tmp = tmp_path_factory.mktemp("dist")
    listed = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot tell the tracked files")
    src = tmp / "src"
    for name in listed.stdout.splitlines():
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = tmp / "dist"
    r = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


def test_sdist_and_wheel_pass_twine_check(dist):
    files = sorted(p.name for p in dist.iterdir())
    assert files == [f"attnlab_course-{VERSION}-py3-none-any.whl", f"attnlab_course-{VERSION}.tar.gz"], files
    r = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())])
    assert r.returncode == 0, r.stdout + r.stderr


def test_distribution_name_is_the_one_the_setup_cell_installs(dist):
    normalized = DISTRIBUTION.replace("-", "_")          # the wheel's file name (PEP 427)
    assert next(dist.glob("*.whl")).name.startswith(f"{normalized}-{VERSION}-")
    assert f'"{DISTRIBUTION}=={VERSION}"' in setup_cell()


@pytest.fixture(scope="module")
def student(tmp_path_factory, dist):
    """A fresh venv with the wheel installed by pip, and a working folder outside the repository."""
    tmp = tmp_path_factory.mktemp("student")
    reason = symlinks_allowed(tmp)
    if reason:
        pytest.skip(reason)
    python = fresh_venv_with_lent_packages(tmp, "venv")
    wheel = next(dist.glob("*.whl"))
    r = run([str(python), "-m", "pip", "install", "--no-index", str(wheel)], env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    home = tmp / "home"
    home.mkdir()
    return python, home


INVENTORY = r"""
import importlib, json, pathlib, sys
report = {}
for name in %r:
    module = importlib.import_module(name)
    root = pathlib.Path(module.__file__).parent
    report[name] = {"root": str(root), "files": sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)}
print(json.dumps(report))
"""


def source_files(package: str) -> list[str]:
    root = ROOT / "shared" / package
    listed = run(["git", "ls-files", "-co", "--exclude-standard", "."], cwd=root).stdout.splitlines()
    return sorted(name for name in listed if (root / name).is_file())


def test_every_file_of_the_package_is_installed(student):
    python, home = student
    r = run([str(python), "-c", INVENTORY % (PACKAGES,)], cwd=home, env=clean_env())
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    site = own_site(python)
    for name in PACKAGES:
        assert pathlib.Path(report[name]["root"]).parent == site, f"{name} not imported from the wheel"
        missing = sorted(set(source_files(name)) - set(report[name]["files"]))
        assert not missing, f"files of shared/{name} missing from the wheel: {missing}"


LOAD_EVERYTHING = r"""
import json, pathlib, warnings
import torch
import attnlab
from attnlab.course import fonts, glossary, i18n

root = pathlib.Path(attnlab.__file__).parent
loaded = {}
# Checkpoints: each file through torch, then through the lesson's own loader.
for path in sorted(root.rglob("*.pt")):
    torch.load(path, map_location="cpu", weights_only=False)
    loaded.setdefault("checkpoints", []).append(str(path.relative_to(root)))
attnlab.reversal.load_pretrained()
for lang in ("vi", "zh"):
    attnlab.translator.load_pretrained(lang)
# Fonts: the bundled subset registers with matplotlib and draws Chinese.
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager
name = font_manager.FontProperties(fname=str(fonts.FONT_PATH)).get_name()
loaded["font"] = name
# Messages: every file is in the catalog, every key in every language.
files = i18n.load_message_files()
loaded["messages"] = len(files)
for path in files:
    for key, texts in json.loads(path.read_text(encoding="utf-8")).items():
        assert set(texts) >= {"vi", "zh", "en"}, key
# Glossary and corpora (plain text data files, UTF-8).
loaded["glossary"] = len(json.loads((root / "data" / "glossary.json").read_text(encoding="utf-8")))
for path in sorted((root / "data").rglob("*")):
    if path.is_file() and path.suffix in (".txt", ".tsv", ".md", ".json"):
        assert path.read_text(encoding="utf-8").strip(), path
        loaded.setdefault("data", []).append(str(path.relative_to(root / "data")))
print(json.dumps(loaded))
"""


def test_every_checkpoint_font_message_and_corpus_loads(student):
    python, home = student
    r = run([str(python), "-W", "error::DeprecationWarning", "-c", LOAD_EVERYTHING], cwd=home, env=clean_env())
    assert r.returncode == 0, r.stderr
    loaded = json.loads(r.stdout)
    package = ROOT / "shared" / "attnlab"
    shipped = sorted(str(p.relative_to(package)) for p in package.rglob("*.pt"))
    assert loaded["checkpoints"] == shipped
    assert "Noto Sans SC" in loaded["font"]
    assert loaded["messages"] == len(list((ROOT / "shared" / "attnlab" / "messages").glob("*.json")))


@pytest.fixture(scope="module")
def offline():
    return offline_prefix()


@pytest.fixture(scope="module")
def course(student):
    """`python -m attnlab.course.copy_lessons` run by the student: the notebooks out of the installed package."""
    python, home = student
    r = run([str(python), "-m", "attnlab.course.copy_lessons", "course", "--lang", "en"], cwd=home, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    return home / "course", r.stdout


def test_the_installed_package_gives_the_student_every_notebook(course, student):
    folder, printed = course
    notebooks = sorted(f"{d}/{p.name}" for d in NOTEBOOK_DIRS for p in (ROOT / d).glob("*.ipynb"))
    expected = sorted(notebooks + [f"{d}/README.md" for d in LESSON_DIRS] + ["notebooks/voila.json"])
    got = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert got == expected
    assert all((folder / name).read_bytes() == (ROOT / name).read_bytes() for name in got)
    assert f"{len(expected)} files copied, 0 already there" in printed
    # Run again after an edit: the edited notebook stays, nothing is copied twice.
    python, home = student
    edited = folder / "lessons_vi" / "01_self_attention.ipynb"
    edited.write_bytes(edited.read_bytes() + b"\n")
    r = run([str(python), "-m", "attnlab.course.copy_lessons", "course", "--lang", "en"], cwd=home, env=clean_env())
    assert r.returncode == 0 and "0 files copied" in r.stdout, r.stdout + r.stderr
    assert edited.read_bytes().endswith(b"\n\n")
    edited.write_bytes(edited.read_bytes()[:-1])


def test_lessons_run_against_the_installed_package(course, student, offline):
    """nbval on lessons 01, 07, 08 (vi, zh) as the student got them: outside the repository, the
    setup cell imports the installed package; the stored outputs come out the same."""
    python, home = student
    folder, _ = course
    assert not (folder / "shared").exists()          # no clone to fall back on
    copies = [f"{d}/{stem}.ipynb" for d in LESSON_DIRS for stem in LESSONS]
    shutil.copy2(ROOT / "nbval_sanitize.cfg", folder / "nbval_sanitize.cfg")
    cmd = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", "nbval_sanitize.cfg", "--nbval-cell-timeout=300", *copies]
    r = run([*(offline or []), *cmd], cwd=folder, env=clean_env(OMP_NUM_THREADS="1", PYTHONHASHSEED="0"),
            timeout=1800)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " failed" not in r.stdout and " error" not in r.stdout, r.stdout[-3000:]


def test_lessons_ran_offline(offline):
    if offline is None:
        pytest.skip("no network namespace here (needs root and unshare): the lessons above ran online")
    probe = ("import socket\ntry:\n    socket.create_connection(('192.0.2.1', 443), 3)\n    print('connected')\n"
             "except OSError:\n    print('no network')")
    r = run([*offline, sys.executable, "-c", probe], timeout=30)
    assert r.stdout.strip() == "no network", r.stdout + r.stderr


# The setup cell, outside a clone and outside Colab: pip by name, from pip's own configuration.
CELL_RUN = r"""
import attnlab, sysconfig
assert attnlab.__file__.startswith(sysconfig.get_paths()["purelib"]), attnlab.__file__
print("imported", attnlab.__version__)
"""


def test_setup_cell_installs_by_name_from_the_configured_index(tmp_path, dist):
    reason = symlinks_allowed(tmp_path)
    if reason:
        pytest.skip(reason)
    python = fresh_venv_with_lent_packages(tmp_path, "lone-venv")
    unreachable = "https://127.0.0.1:9/attnlab-course/attention-course"     # the repository cannot be reached
    cell = setup_cell(unreachable)
    work = tmp_path / "downloads"           # a notebook downloaded alone: no ../shared beside it
    work.mkdir()
    # The "mirror": a folder holding the wheel, given to pip the way a student configures a mirror.
    env = clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(dist))
    r = run([str(python), "-c", cell + "\n" + CELL_RUN], cwd=work, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"imported {VERSION}" in r.stdout
    assert "127.0.0.1:9" not in r.stdout + r.stderr


def test_setup_cell_says_what_failed_when_pip_cannot_install(tmp_path):
    reason = symlinks_allowed(tmp_path)
    if reason:
        pytest.skip(reason)
    python = fresh_venv_with_lent_packages(tmp_path, "offline-venv")
    work = tmp_path / "downloads"
    work.mkdir()
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    env = clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(empty))
    r = run([str(python), "-c", setup_cell()], cwd=work, env=env)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last == f"pip could not install {DISTRIBUTION}=={VERSION}: see “Install with pip” in the course README", r.stderr
