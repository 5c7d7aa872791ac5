"""The nbgrader settings of the course, in one place (the builder, the grader; hub/nbgrader_config.py
repeats them for nbgrader's own commands and tests/test_assignments.py checks that it does)."""
from __future__ import annotations

import os
import sys

from traitlets.config import Config

COURSE_ID = "attnlab"
LANGUAGES = ("vi", "zh")
CELL_TIMEOUT = 60          # seconds per cell when grading (an infinite loop costs this much, then 0 points)
POINTS = 1                 # per exercise, all or nothing: the checker's verdict is correct or not

# nbgrader's default list without ClearSolutions: the student cells are the lesson's own TODO cells
# (there is no solution region to clear; the reference solutions live in solutions/).
GENERATE_PREPROCESSORS = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.CheckCellMetadata",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.SaveCells",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbgrader.preprocessors.ClearMarkScheme",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.CheckCellMetadata",
]


def assignment_id(stem: str, lang: str) -> str:
    """One nbgrader assignment per lesson and language: ``01_self_attention_vi``."""
    return f"{stem}_{lang}"


def split_assignment_id(assignment: str) -> tuple[str, str]:
    stem, _, lang = assignment.rpartition("_")
    return stem, lang


def config(course_root, timeout: int = CELL_TIMEOUT) -> Config:
    c = Config()
    c.CourseDirectory.root = str(course_root)
    c.CourseDirectory.course_id = COURSE_ID
    c.GenerateAssignment.preprocessors = GENERATE_PREPROCESSORS
    c.Execute.timeout = timeout
    c.OverwriteCells.add_missing_cells = True     # a deleted test cell comes back (and is graded)
    c.Autograde.create_student = True
    return c


def generate_assignments(course_root, aids) -> None:
    """nbgrader's generate_assignment for each id in ``aids`` (the course folder's source/ to its
    gradebook and release/); stops with nbgrader's log when one fails."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    cfg = config(course_root)
    api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
    for aid in aids:
        result = api.generate_assignment(aid)
        if not result["success"]:
            raise SystemExit(f"nbgrader generate_assignment {aid} failed:\n{result.get('log', '')}\n"
                             f"{result.get('error', '')}")


def use_venv_tools() -> None:
    """nbgrader runs ``alembic`` as a command: find it next to this Python (call from a CLI's main)."""
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
