import os
import pathlib
import tempfile

import pytest

# One thread per process, as in `make test` and `make execute`: nbval's kernels inherit it, so
# notebooks print exactly what was stored, and two xdist workers share the two CI cores cleanly.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(config, items):
    """Every nbval item (a notebook's cell) is marked `notebooks`, so `-m "not notebooks"` leaves
    them out (`make test-fast`).

    Then the longest modules first: those with a `slow` or `browser` test (servers, sandboxes,
    fresh environments, the class graded: minutes each), then the notebooks, then the rest; the
    order within a module stays. `make test` runs `-n 2 --dist loadscope --no-loadscope-reorder`,
    which hands whole modules to the two workers in this order. xdist's own reordering (most tests
    first) sent the few-test, minutes-long modules last, where one worker ran them alone."""
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
    rank = {}
    for item in items:
        path = str(item.fspath)
        long_test = any(item.get_closest_marker(m) for m in ("slow", "browser"))
        rank[path] = min(rank.get(path, 2), 0 if long_test else 1 if path.endswith(".ipynb") else 2)
    items.sort(key=lambda item: rank[str(item.fspath)])      # stable: each module keeps its order


class SharedExecutions:
    """Each notebook executes once in a session: tests/test_wheel.py's lesson test runs nbval on its
    WHEEL_NOTEBOOKS against the installed wheel (the same stored outputs, sanitizer and cell
    timeout), so where that test is selected and can run here, the checkout's nbval items of those
    notebooks are deselected. Run without it (`pytest lessons_vi/07_...ipynb`, or `-m "not slow"`),
    a notebook's nbval items stay."""
    WHEEL_LESSONS = "tests/test_wheel.py::test_lessons_run_against_the_installed_package"

    @pytest.hookimpl(trylast=True)      # after -m, -k and --deselect: only a selected test takes them
    def pytest_collection_modifyitems(self, config, items):
        wheel = next((item for item in items if item.nodeid == self.WHEEL_LESSONS), None)
        if wheel is None:
            return
        with tempfile.TemporaryDirectory() as tmp:
            if wheel.module.why_the_lessons_cannot_run(pathlib.Path(tmp)) is not None:
                return                         # it will skip: the checkout's nbval runs them
        taken = set(wheel.module.WHEEL_NOTEBOOKS)
        gone = [item for item in items if item.nodeid.split("::")[0] in taken]
        if gone:
            items[:] = [item for item in items if item.nodeid.split("::")[0] not in taken]
            config.hook.pytest_deselected(items=gone)


def pytest_configure(config):
    config.pluginmanager.register(SharedExecutions(), "attnlab-shared-executions")
