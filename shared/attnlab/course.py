"""Course-wide settings: the repository URL (the one place it is configured), the
notebook setup cell built from it, Colab/Binder links, and the notebook defaults."""
from __future__ import annotations

REPO = "attnlab-course/attention-course"     # GitHub owner/name: change it here, then `make sync`
BRANCH = "main"
REPO_URL = f"https://github.com/{REPO}"

LESSON_DIRS = ("lessons_vi", "lessons_zh")
NOTEBOOK_DIRS = LESSON_DIRS + ("notebooks",)


def setup_cell(repo_url: str = REPO_URL) -> str:
    """The first code cell of every notebook, for a given repository URL."""
    return f'''\
# Setup (the same cell in every notebook): make the course package `attnlab` importable.
import importlib.util, pathlib, subprocess, sys

COURSE_REPO = "{repo_url}"
if importlib.util.find_spec("attnlab") is None:
    if "google.colab" in sys.modules:  # Colab: install the package only; Colab's torch, matplotlib, ipywidgets stay
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"git+{{COURSE_REPO}}"], check=True)
        importlib.invalidate_caches()
    else:  # a clone of the course: the package lives in ../shared
        sys.path.insert(0, str(pathlib.Path.cwd().parent / "shared"))

import attnlab
attnlab.setup_notebook()'''


SETUP_CELL = setup_cell()


def colab_url(path: str) -> str:
    """'Open in Colab' link for a notebook path relative to the repository root."""
    return f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/{path}"


def binder_url() -> str:
    return f"https://mybinder.org/v2/gh/{REPO}/{BRANCH}?urlpath=lab"


def setup_notebook(seed: int = 0) -> None:
    """Notebook defaults: seeded RNG, readable tensor printing, course fonts, fixed figure size."""
    import matplotlib
    import torch

    from .fonts import use_course_fonts

    torch.manual_seed(seed)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)
    use_course_fonts()
    matplotlib.rcParams.update({"figure.dpi": 80, "savefig.dpi": 80, "figure.figsize": (5, 4)})
