"""The shared setup cell makes `attnlab` importable from a clone, after the README setup, and on
Colab (simulated: a fake google.colab module, a local git repository standing in for the remote,
and Colab's packages already installed, which must not be replaced).

Portable: venv paths come from the venv's own interpreter (bin/ or Scripts\\). The Colab test lends
this environment's packages through symbolic links (copying torch is not an option); where the
OS refuses them (Windows without Developer Mode) it is skipped and says why."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import textwrap

import pytest

from attnlab.course import SETUP_CELL, setup_cell
from venv_helpers import SITE, clean_env, fresh_venv_with_lent_packages, own_site, run, symlinks_allowed

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow      # builds Python environments and starts fresh processes


def test_installed_package_is_used_as_is(tmp_path):
    """After the README setup (this environment): the cell only imports the package."""
    code = "import sys; before = list(sys.path)\n" + SETUP_CELL + \
        "\nassert sys.path == before, 'sys.path changed'\nprint(attnlab.__file__)"
    r = run([sys.executable, "-c", code], cwd=ROOT / "lessons_vi")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def test_clone_without_installing(tmp_path):
    """No install: the kernel starts in lessons_xx/ and the package comes from ../shared."""
    # `python -S` skips .pth files, so the editable install of attnlab is invisible; torch etc. stay importable.
    code = f"import sys; sys.path.append({str(SITE)!r})\nimport importlib.util\n" \
           "assert importlib.util.find_spec('attnlab') is None\n" + SETUP_CELL + "\nprint(attnlab.__file__)"
    for d in ("lessons_vi", "lessons_zh", "notebooks"):
        r = run([sys.executable, "-S", "-c", code], cwd=ROOT / d, env=clean_env())
        assert r.returncode == 0, r.stderr
        assert pathlib.Path(r.stdout.strip()).resolve() == (ROOT / "shared" / "attnlab" / "__init__.py").resolve()


def make_remote(tmp: pathlib.Path) -> pathlib.Path:
    """A local git repository with the working tree's files, standing in for GitHub."""
    remote = tmp / "remote"
    listed = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT)
    files = listed.stdout.split() if listed.returncode == 0 and listed.stdout else None
    if files is None:
        pytest.skip("not a git checkout: cannot stand in for the remote repository")
    for f in files:
        src = ROOT / f
        if src.is_file() and not f.endswith(".ipynb"):
            (remote / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, remote / f)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "course"]):
        r = run(cmd, cwd=remote, env=env)
        assert r.returncode == 0, r.stderr
    return remote


def make_fake_colab_python(tmp: pathlib.Path) -> pathlib.Path:
    """A venv whose 'preinstalled' packages (torch, matplotlib, ipywidgets, pip, ...) are this
    environment's, minus attnlab (tests/venv_helpers.py)."""
    return fresh_venv_with_lent_packages(tmp, "colab-venv")


VERSIONS = """
import importlib.metadata as m, json, sys
names = ["torch", "matplotlib", "ipywidgets", "numpy", "tqdm", "traitlets", "pillow"]
print(json.dumps({n: (m.version(n), str(m.distribution(n).locate_file(""))) for n in names}))
"""


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_colab_installs_from_the_repository_and_replaces_nothing(tmp_path):
    reason = symlinks_allowed(tmp_path)
    if reason:
        pytest.skip(reason)
    remote = make_remote(tmp_path)
    python = make_fake_colab_python(tmp_path)
    before = json.loads(run([str(python), "-c", VERSIONS], env=clean_env()).stdout)
    site = own_site(python)
    own_before = set(os.listdir(site))

    script = textwrap.dedent("""
        import sys, types
        google = types.ModuleType("google"); colab = types.ModuleType("google.colab")
        google.colab = colab
        sys.modules.update({"google": google, "google.colab": colab})   # what Colab's kernel has
    """) + setup_cell(f"file://{remote}") + textwrap.dedent("""
        import pathlib, attnlab, attnlab.course.fonts
        assert "colab-venv" in attnlab.__file__, attnlab.__file__
        assert attnlab.course.fonts.FONT_PATH.is_file()
        print("imported", attnlab.__version__)
    """)
    content = tmp_path / "content"       # Colab's working directory: no ../shared there
    content.mkdir()
    r = run([str(python), "-c", script], cwd=content, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "imported" in r.stdout

    after = json.loads(run([str(python), "-c", VERSIONS], env=clean_env()).stdout)
    assert after == before, "a preinstalled package was replaced"
    added = set(os.listdir(site)) - own_before
    # The course's one distribution: attnlab and attnlab_server (the server setting, imported by no notebook).
    assert {a.split("-")[0] for a in added} <= {"attnlab", "attnlab_server", "attnlab_course", "__pycache__"}, (
        f"installed more than the course's distribution: {added}")
