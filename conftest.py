import os

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
    import pytest

    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
    rank = {}
    for item in items:
        path = str(item.fspath)
        long_test = any(item.get_closest_marker(m) for m in ("slow", "browser"))
        rank[path] = min(rank.get(path, 2), 0 if long_test else 1 if path.endswith(".ipynb") else 2)
    items.sort(key=lambda item: rank[str(item.fspath)])      # stable: each module keeps its order
