"""Build .venv-w7: the course environment with ipywidgets 7.7.1 (what Google Colab ships) in front.

    .venv/bin/python tools/make_w7_env.py [.venv-w7]

The new venv holds only ipywidgets 7.7.1 and its two 7.x companions; a .pth file lends it
every other package of the running environment (torch, matplotlib, the course package).
tests/test_explorer_ipywidgets7.py runs the explorer's tests in it (ATTNLAB_W7_PYTHON).
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import sysconfig

PINS = ["ipywidgets==7.7.1", "widgetsnbextension==3.6.10", "ipython_genutils==0.2.0"]


def main(target: str = ".venv-w7") -> int:
    venv = pathlib.Path(target).resolve()
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    lender = sysconfig.get_paths()["purelib"]
    (pathlib.Path(site) / "zz_course_env.pth").write_text(f"import site; site.addsitedir({lender!r})\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", *PINS], check=True)
    version = subprocess.run([str(python), "-c", "import ipywidgets, torch; print(ipywidgets.__version__)"],
                             check=True, capture_output=True, text=True).stdout.strip()
    print(f"{venv.name}: ipywidgets {version}")
    return 0 if version.startswith("7.7") else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
