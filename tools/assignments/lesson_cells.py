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
    "07_train_tiny_transformer": "model = reversal.load_pretrained()",
    "08_number_translator": "model = tr.load_pretrained(LANG)",
    "10_poet_gpt": "model = poet.load_pretrained(LANG)",
}

# Checkers without points of their own: a predict-then-run question the lesson calls ungraded (l10's
# docstring), and lesson 09's check of the student's block inside lesson 07's model, whose answer is
# exercise 2's block (graded there). The assignment keeps them and their checker, locked, without points.
UNGRADED = {"l10.guess", "capstone_steps.in_tiny_model"}


@dataclass
class Exercise:
    module: str            # "l01", "capstone": attnlab.exercises.<module>
    check: str             # "check_softmax"
    evaluate: str          # "evaluate_softmax"
    answer: str            # the student's part: the TODO lines above the call, or the TODO cell before it (may be "")
    call: str              # the checker call, as in the lesson
    args: str              # the call's arguments, as in the lesson: "my_softmax"
    base: str              # how the lesson names the module: "attnlab.exercises.l01" or "l08"
    markdown: list = field(default_factory=list)   # the instructions above it
    prelude: str = ""      # lesson code above the call that is not the student's (run, locked, with the call)
    between: list = field(default_factory=list)    # markdown between a separate TODO cell and the checker cell

    @property
    def graded(self) -> bool:
        return self.key not in UNGRADED

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


def _defines(stmt: ast.stmt) -> tuple[set, set] | None:
    """(names bound, names read from outside) of a top-level definition the context may need, else None."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and getattr(stmt, "value", None) is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        bound = set().union(*(_names(t)[1] for t in targets))
        return bound, _names(stmt.value)[0] | (bound if isinstance(stmt, ast.AugAssign) else set())
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        read, bound = _names(stmt)
        return {stmt.name}, read - (bound - {stmt.name})
    return None


def _top_bound(src: str) -> set:
    """The names a cell binds at top level (what the next cells can read)."""
    names = set()
    for stmt in ast.parse(src).body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= _names(stmt)[1]
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif not isinstance(stmt, ast.Expr):
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return names


def read_lesson(nb, stem: str) -> Lesson:
    """Split a lesson notebook (nbformat v4) into the parts an assignment needs.

    Code cells that are not exercises (before the first one or between them) are lesson code: their
    imports go into the context cell, and of their top-level definitions only those the exercises
    read (directly or through one another) are kept, in the lesson's order; the rest (plots,
    printouts, training) is left out. A TODO cell without a checker right before an exercise cell is
    that exercise's answer cell; the exercise cell's own lines above the call then run, locked, with it."""
    cells = nb.cells
    code = [i for i, c in enumerate(cells) if c.cell_type == "code"]
    if len(code) < 2 or "setup_notebook" not in cells[code[0]].source \
            or "set_language" not in cells[code[1]].source:
        raise LessonError(f"{stem}: the first two code cells must be the setup cell and the language cell")
    setup_at, lang_at = code[0], code[1]

    aliases, imports, defs, exercises, ex_cells = {}, [], [], [], []
    todo_cell = None                   # (index, source) of the last code cell: a TODO cell without a checker
    for i in code[2:]:
        src = cells[i].source
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            raise LessonError(f"{stem}, cell {i}: {e}") from None
        found = [(s, _checker_call(s, aliases)) for s in tree.body]
        calls = [(s, c) for s, c in found if c]
        if not calls:
            for s in tree.body:
                text = _lines(src, s.lineno, s.end_lineno)
                if isinstance(s, (ast.Import, ast.ImportFrom)):
                    imports += [text] if text not in imports else []
                    if isinstance(s, ast.ImportFrom) and s.module == "attnlab.exercises":
                        aliases.update({a.asname or a.name: a.name for a in s.names})
                elif (d := _defines(s)) is not None:
                    defs.append((i, text, *d))
            todo_cell = (i, src) if "TODO" in src else None
            continue
        if len(calls) != 1 or tree.body[-1] is not calls[0][0]:
            raise LessonError(f"{stem}, cell {i}: an exercise cell must end with its one checker call")
        stmt, (module, check, base) = calls[0]
        above = _lines(src, 1, stmt.lineno - 1).rstrip()
        answer, prelude, answer_at = above, "", i
        if "TODO" not in above and todo_cell is not None:
            answer_at, answer = todo_cell[0], todo_cell[1].rstrip()
            prelude = above
        elif "TODO" not in above:
            answer, prelude = "", above
        exercises.append(Exercise(module, check, _evaluate_name(module, check), answer,
                                  _lines(src, stmt.lineno, stmt.end_lineno),
                                  ", ".join(ast.unparse(a) for a in stmt.value.args), base, prelude=prelude))
        ex_cells.append((answer_at, i))
        todo_cell = None
    if not exercises:
        raise LessonError(f"{stem}: no exercise cell (a cell ending with attnlab.exercises.lNN.check_x(...))")

    # the instructions: the markdown run above each exercise, back to a "## " heading if it has one
    for ex, (a, i) in zip(exercises, ex_cells):
        j = a
        while j - 1 > lang_at and cells[j - 1].cell_type == "markdown":
            j -= 1
            if cells[j].source.startswith("## "):
                break
        ex.markdown = cells[j:a]
        ex.between = [cells[k] for k in range(a + 1, i) if cells[k].cell_type == "markdown"]

    sources = [(a, cells[a].source if a != i else "") for a, i in ex_cells] + [(i, cells[i].source) for _, i in ex_cells]
    context = _context(stem, imports, defs, sources)
    title = [c for c in cells[:setup_at] if c.cell_type == "markdown"]
    license = [c for c in cells[ex_cells[-1][1] + 1:] if "LICENSE-CONTENT" in c.source]
    return Lesson(stem, title, cells[setup_at].source, cells[lang_at].source, context, exercises, license)


def _context(stem: str, imports: list, defs: list, sources: list) -> str:
    """The lesson's imports, then the definitions the exercise cells read (CONTEXT last).

    ``defs``: (cell index, text, names bound, names read) of the lesson code's top-level definitions;
    ``sources``: (cell index, source) of the exercises' cells. A name is resolved to its last
    definition before the cell that reads it; names an exercise cell binds are the student's."""
    extra = CONTEXT.get(stem, "")
    have = {"attnlab"} | set(dir(builtins)) | _names(ast.parse("\n".join(imports)))[1]
    have |= _names(ast.parse(extra))[1]
    have |= set().union(*(_top_bound(src) for _, src in sources))
    first = min(at for at, _ in sources)
    todo = []                          # (name, read before this cell index)
    for at, src in sources + [(first, extra)]:
        read, bound = _names(ast.parse(src))
        todo += [(name, at) for name in sorted(read - bound)]
    picked: dict = {}
    while todo:
        name, at = todo.pop()
        if name in have:
            continue
        found = [k for k, d in enumerate(defs) if name in d[2] and d[0] < at]
        if not found:
            raise LessonError(f"{stem}: the exercises read `{name}`, which no import or top-level definition "
                              f"before them defines (add it to CONTEXT in tools/assignments/lesson_cells.py)")
        k = found[-1]
        if k not in picked:
            picked[k] = defs[k][1]
            todo += [(n, defs[k][0] + 1) for n in sorted(defs[k][3])]
    body = ""                                         # the lesson's order; CONTEXT last (it may read them)
    for k in sorted(picked):
        block = picked[k].lstrip().startswith(("def ", "class ", "@"))
        body += ("\n\n\n" if body and (block or was_block) else "\n" if body else "") + picked[k]
        was_block = block
    parts = ["\n".join(imports)] + ([body] if body else []) + ([extra] if extra else [])
    return "\n\n".join(parts)
