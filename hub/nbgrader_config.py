"""nbgrader's settings for the course on a JupyterHub (docs/grading.md, "With the hub"; docs/hub.md).

On the course's hub, hub/student_env.py installs this file as ``STATE/env/etc/jupyter/
nbgrader_config.py``, a folder of Jupyter's config path for every student's server and kernel (a
config loaded by the hub itself would reach no student), and the hub sets ``ATTNLAB_EXCHANGE``
to its exchange, ``STATE/exchange``, which student_env.py prepares with nbgrader's modes.
Elsewhere copy it to /etc/jupyter/nbgrader_config.py. Students need only the course id and the
exchange; the instructor's nbgrader commands (generate_assignment, release_assignment, collect,
autograde) also use the grading settings below, which repeat tools/assignments/settings.py (a
test compares). Environment: ATTNLAB_EXCHANGE (default /srv/nbgrader/exchange; nbgrader's own
default, when no config names one, is /usr/local/share/nbgrader/exchange), ATTNLAB_NBGRADER_COURSE
(default ~/attnlab-course: the instructor's nbgrader course folder).
"""
import os
import sys

c = get_config()  # noqa: F821 (nbgrader's config loader defines it)

# nbgrader runs `alembic` (its gradebook's migrations) as a command: find it next to the Python that
# runs nbgrader, also when nbgrader is started as .venv/bin/nbgrader without an activated venv.
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

c.CourseDirectory.course_id = "attnlab"
c.Exchange.root = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")
# The instructor's nbgrader course folder. Not ATTNLAB_COURSE_DIR: on the course hub that names each
# user's pulled copy of the lessons (hub/singleuser.py), a relative path.
c.CourseDirectory.root = os.environ.get("ATTNLAB_NBGRADER_COURSE", os.path.expanduser("~/attnlab-course"))

# Grading settings, as `make grade` uses them. Note: `nbgrader autograde` runs each notebook as the
# instructor, in the instructor's kernel: for grades that count, collect, then `make grade
# SUBMISSIONS=<course folder>/submitted` (each submission sandboxed, its verdict decided outside it).
c.GenerateAssignment.preprocessors = [     # nbgrader's default without ClearSolutions: the TODO cells stay
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
c.Execute.timeout = 60                      # seconds per cell: an infinite loop gets 0 points, not a stuck batch
c.OverwriteCells.add_missing_cells = True   # a deleted test cell is put back and graded
c.Autograde.create_student = True
