"""Find a lesson's exercises, and the cells they need, in its notebook (no nbgrader here).

An exercise cell is a code cell with a top-level call ``<attnlab.exercises.lNN or lNN>.check_x(...)``;
the statements above the call are what the student writes (the TODO part), the call is what grades it.
Each ``check_x`` has an unprinted twin (``check_x.evaluate``, see attnlab/exercises/_common.py),
which the hidden test calls: the lessons' checkers are the one source of truth for the grade.
"""
from __future__ import annotations

import ast
import builtins
import importlib
from dataclasses import dataclass, field

# Names an exercise needs that the lesson makes by a slow cell (training): the assignment loads
# the package checkpoint instead, trained with the same recipe (tools/train_*_checkpoint.py).
CONTEXT = {
    "07_train_tiny_transformer": "model = tiny.load_pretrained()",
    "08_number_translator": "model = tr.load_pretrained(LANG)",
}


@dataclass
class Exercise:
    module: str            # "l01", "capstone": attnlab.exercises.<module>
    check: str             # "check_softmax"
    evaluate: str          # "evaluate_softmax"
    answer: str            # the student's part of the lesson cell (may be "")
    call: str              # the checker call, as in the lesson
    args: str              # the call's arguments, as in the lesson: "my_softmax"
    base: str              # how the lesson names the module: "attnlab.exercises.l01" or "l08"
    markdown: list = field(default_factory=list)   # the instructions above it

    @property
    def key(self) -> str:
        return f"{self.module}.{self.check.removeprefix('check_')}"

    @property
    def grade_id(self) -> str:
        return self.key.replace(".", "-")

    @property
    def evaluate_path(self) -> str:
        return f"attnlab.exercises.{self.module}:{self.evaluate}"


@dataclass
class Lesson:
    stem: str
    title: list            # markdown cells before the setup cell
    setup: str
    language: str
    context: str           # imports + what the exercises need
    exercises: list
    license: list          # the closing licence cell(s)


class LessonError(ValueError):
    """The lesson notebook does not have the shape the builder expects (the message says how)."""


def _checker_call(stmt: ast.stmt, aliases: dict) -> tuple[str, str, str] | None:
    """(module, check name, base text) if ``stmt`` is a top-level call of an exercise checker."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    func = stmt.value.func
    if not (isinstance(func, ast.Attribute) and func.attr.startswith("check_")):
        return None
    base = ast.unparse(func.value)
    if base.startswith("attnlab.exercises."):
        module = base.removeprefix("attnlab.exercises.")
    elif base in aliases:
        module = aliases[base]
    else:
        return None
    return module, func.attr, base


def _lines(source: str, first: int, last: int) -> str:
    return "\n".join(source.splitlines()[first - 1:last])


def _names(tree: ast.AST) -> tuple[set, set]:
    """(names read, names bound) anywhere in ``tree``."""
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return read, bound


def _evaluate_name(module: str, check: str) -> str:
    fn = getattr(importlib.import_module(f"attnlab.exercises.{module}"), check, None)
    twin = getattr(fn, "evaluate", None)
    if twin is None:
        raise LessonError(f"attnlab.exercises.{module}.{check} has no unprinted twin "
                          f"(check_x = printing(evaluate_x)): the grader needs evaluate_x")
    return twin.__name__


def read_lesson(nb, stem: str) -> Lesson:
    """Split a lesson notebook (nbformat v4) into the parts an assignment needs."""
    cells = nb.cells
    code = [i for i, c in enumerate(cells) if c.cell_type == "code"]
    if len(code) < 2 or "setup_notebook" not in cells[code[0]].source \
            or "set_language" not in cells[code[1]].source:
        raise LessonError(f"{stem}: the first two code cells must be the setup cell and the language cell")
    setup_at, lang_at = code[0], code[1]

    aliases, imports, assigns, exercises = {}, [], {}, []
    pending_md: list = []
    first_ex = None
    for i in code[2:]:
        src = cells[i].source
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            raise LessonError(f"{stem}, cell {i}: {e}") from None
        found = [(s, _checker_call(s, aliases)) for s in tree.body]
        calls = [(s, c) for s, c in found if c]
        if not calls:
            if first_ex is not None:
                raise LessonError(f"{stem}, cell {i}: a code cell between exercises (not supported)")
            for s in tree.body:
                text = _lines(src, s.lineno, s.end_lineno)
                if isinstance(s, (ast.Import, ast.ImportFrom)):
                    imports += [text] if text not in imports else []
                    if isinstance(s, ast.ImportFrom) and s.module == "attnlab.exercises":
                        aliases.update({a.asname or a.name: a.name for a in s.names})
                elif isinstance(s, ast.Assign):
                    for target in s.targets:
                        for name in _names(target)[1]:
                            assigns[name] = (len(assigns), text, s)
            continue
        if len(calls) != 1 or tree.body[-1] is not calls[0][0]:
            raise LessonError(f"{stem}, cell {i}: an exercise cell must end with its one checker call")
        stmt, (module, check, base) = calls[0]
        first_ex = i if first_ex is None else first_ex
        answer = _lines(src, 1, stmt.lineno - 1).rstrip()
        markdown = [cells[j] for j in range(i - 1, -1, -1) if cells[j].cell_type == "markdown"]
        exercises.append(Exercise(module, check, _evaluate_name(module, check), answer,
                                  _lines(src, stmt.lineno, stmt.end_lineno),
                                  ", ".join(ast.unparse(a) for a in stmt.value.args), base))
    if not exercises:
        raise LessonError(f"{stem}: no exercise cell (a cell ending with attnlab.exercises.lNN.check_x(...))")

    # the instructions: the markdown run above each exercise (the first one back to its "## " heading)
    ex_cells = [i for i in code if any(_checker_call(s, aliases) for s in ast.parse(cells[i].source).body)]
    for n, (ex, i) in enumerate(zip(exercises, ex_cells)):
        j = i
        while j - 1 > lang_at and cells[j - 1].cell_type == "markdown":
            j -= 1
            if n == 0 and cells[j].source.startswith("## "):
                break
        ex.markdown = cells[j:i]

    context = _context(stem, imports, assigns, exercises, [cells[i].source for i in ex_cells])
    title = [c for c in cells[:setup_at] if c.cell_type == "markdown"]
    license = [c for c in cells[ex_cells[-1] + 1:] if "LICENSE-CONTENT" in c.source]
    return Lesson(stem, title, cells[setup_at].source, cells[lang_at].source, context, exercises, license)


def _context(stem: str, imports: list, assigns: dict, exercises: list, sources: list) -> str:
    """The lesson's imports, then the assignments the exercise cells read (CONTEXT first)."""
    extra = CONTEXT.get(stem, "")
    have = {"attnlab"} | set(dir(builtins)) | _names(ast.parse("\n".join(imports)))[1]
    have |= _names(ast.parse(extra))[1]
    todo = set()
    for src in sources + [extra]:
        read, bound = _names(ast.parse(src))
        todo |= read - bound
    picked: dict = {}
    while todo - have:
        name = sorted(todo - have)[0]
        if name not in assigns:
            raise LessonError(f"{stem}: the exercises read `{name}`, which no import or top-level assignment "
                              f"before them defines (add it to CONTEXT in tools/assignments/lesson_cells.py)")
        index, text, node = assigns[name]
        picked[index] = text
        have |= _names(node)[1]
        todo |= _names(node.value)[0]
    order = [picked[k] for k in sorted(picked)]       # the lesson's order; CONTEXT last (it may read them)
    parts = ["\n".join(imports)] + (["\n".join(order)] if order else []) + ([extra] if extra else [])
    return "\n\n".join(parts)
