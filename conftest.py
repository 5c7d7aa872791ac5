import os

# One thread per process, as in `make test` and `make execute`: nbval's kernels inherit it, so
# notebooks print exactly what was stored, and two xdist workers share the two CI cores cleanly.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(config, items):
    """Every nbval item (a notebook's cell) is marked `notebooks`, so `-m "not notebooks"` leaves
    them out (`make test-fast`)."""
    import pytest

    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
