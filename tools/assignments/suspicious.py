"""What in a submission looks like an attempt on the grading, for a note in grades.csv.

The grade never depends on this (the sandbox and the judge outside it make such code earn nothing);
the note tells the instructor which notebooks to read. Read from the notebook's JSON in the grader's
process, never by running it: the code cells the student wrote (not the locked ones, which are put
back anyway), parsed with ``ast``; and the stored outputs of the checker cells, compared with the
grader's own verdicts afterwards (``claims``).
"""
from __future__ import annotations

import ast

# Modules an exercise of this course never needs: their use is worth a look.
SYSTEM_MODULES = {"os", "sys", "subprocess", "shutil", "ctypes", "signal", "socket", "multiprocessing",
                  "threading", "pathlib", "importlib", "glob", "inspect", "gc", "builtins", "IPython", "site",
                  "pty", "fcntl", "resource", "atexit", "pickle", "marshal", "runpy", "tempfile", "io"}
TEXTS = ("/proc", ".ipython", "site-packages", "grades.csv", "submitted", "exercises", "solutions", "startup")
CALLS = {"setattr", "delattr", "exec", "eval", "compile", "__import__", "open", "globals", "get_ipython"}
CORRECT_MARK = "✅"                 # how every checker's verdict "correct" begins (attnlab messages ex.correct)


def _student_cells(nb) -> list[tuple[int, str]]:
    return [(i, c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("locked")]


def findings(nb) -> list[str]:
    """Short descriptions ("patches torch.allclose (cell 5)"), at most one per kind and cell."""
    found = []
    for i, src in _student_cells(nb):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        modules = {"builtins", "__builtins__"}
        seen = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    modules.add((a.asname or a.name).split(".")[0])
                    top = (node.module if isinstance(node, ast.ImportFrom) and node.module else a.name).split(".")[0]
                    if top in SYSTEM_MODULES:
                        seen.append(f"imports {top}")
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                root = t
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(root, ast.Name) and root.id in modules:
                    seen.append(f"patches {ast.unparse(t)}")
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else \
                    node.func.attr if isinstance(node.func, ast.Attribute) else ""
                if name in CALLS and not (name == "open" and _reads_only(node)):
                    seen.append(f"calls {name}()")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                seen += [f"mentions {t!r}" for t in TEXTS if t in node.value]
        for what in dict.fromkeys(seen):
            found.append(f"{what} (cell {i})")
    return found


def _reads_only(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return mode is None or (isinstance(mode, ast.Constant) and isinstance(mode.value, str) and
                            not set(mode.value) & set("wax+"))


def claims(nb, grade_ids) -> set:
    """The graded checker cells whose stored output (as handed in) shows the verdict "correct"."""
    found = set()
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in grade_ids and cell.cell_type == "code":
            text = "".join(str(o.get("text", "")) for o in cell.get("outputs", []) if isinstance(o, dict))
            if CORRECT_MARK in text:
                found.add(gid)
    return found
