"""`import attnlab` stays light: the front-end libraries load only when a lazy name is used."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import attnlab

HEAVY = ("ipywidgets", "IPython", "matplotlib", "matplotlib.pyplot")


def modules_after(code: str) -> set[str]:
    probe = code + f"\nimport sys, json; print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


@pytest.mark.slow                      # a fresh Python process (torch's import): left out of make test-fast
def test_import_attnlab_loads_no_front_end_library():
    assert modules_after("import attnlab") == set()


@pytest.mark.slow                      # a fresh Python process (torch's import): left out of make test-fast
def test_the_probe_sees_a_lazy_name_load_its_libraries():
    """The same probe does see the libraries once a lazy name is used (the test can fail)."""
    assert {"matplotlib", "matplotlib.pyplot"} <= modules_after("import attnlab; attnlab.plot_attention")
    assert "ipywidgets" in modules_after("import attnlab; attnlab.explore")


@pytest.mark.parametrize("name", sorted(attnlab._LAZY))
def test_every_lazy_name_resolves_and_is_listed(name):
    assert name in dir(attnlab)
    assert getattr(attnlab, name) is not None


def test_public_names_and_submodules():
    for name in attnlab.__all__:
        assert getattr(attnlab, name) is not None, name
    assert attnlab.exercises.l05.__name__ == "attnlab.exercises.l05"
    assert callable(attnlab.reversal.load_pretrained)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        attnlab.nope  # noqa: B018


@pytest.mark.slow                      # a fresh Python process (torch's import): left out of make test-fast
def test_t_finds_messages_of_a_lazily_imported_module():
    """Lessons print attnlab.t("plot.head", ...) before anything imported attnlab.plotting."""
    code = "import attnlab\nprint(attnlab.t('plot.head', lang='en', i=2))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() and "2" in r.stdout
