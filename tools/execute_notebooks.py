"""Execute notebooks in place, top to bottom in one kernel, and store clean outputs.

    python tools/execute_notebooks.py [NOTEBOOK ...]     (default: every course notebook)

Stored outputs come only from here (``make execute``), run in the pinned environment.
Cells tagged ``raises-exception`` may fail; any other error, or any stderr output, fails the run.
"""
from __future__ import annotations

import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient

from attnlab.course import NOTEBOOK_DIRS

ROOT = pathlib.Path(__file__).resolve().parents[1]
DIRS = NOTEBOOK_DIRS                  # lessons_<lang> for each course language, then notebooks


def notebooks(args: list[str]) -> list[pathlib.Path]:
    if args:
        return [pathlib.Path(a).resolve() for a in args]
    return [p for d in DIRS for p in sorted((ROOT / d).glob("*.ipynb"))]


def execute(path: pathlib.Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            record_timing=False, store_widget_state=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    problems = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view:  # a widget's model id is random and its state is not stored: keep diffs quiet
                view["model_id"] = ""
            if out.output_type == "stream" and out.name == "stderr":
                problems.append(f"cell {i}: stderr: {out.text[:200]!r}")
            if out.output_type == "error" and "raises-exception" not in cell.metadata.get("tags", []):
                problems.append(f"cell {i}: error {out.ename}")
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata.setdefault("language_info", {}).pop("version", None)
    nbformat.write(nb, path)
    return problems


def main(argv: list[str]) -> int:
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.setdefault("OMP_NUM_THREADS", "1")   # the same threading as the nbval run (conftest.py)
    failed = 0
    for path in notebooks(argv):
        start = time.perf_counter()
        problems = execute(path)
        took = time.perf_counter() - start
        status = "ok" if not problems else "PROBLEMS"
        print(f"{status:8s} {took:5.1f}s  {path.relative_to(ROOT)}")
        for p in problems:
            print("         " + p)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
