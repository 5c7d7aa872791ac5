import os

# One thread per process, as in `make test` and `make execute`: nbval's kernels inherit it, so
# notebooks print exactly what was stored, and two xdist workers share the two CI cores cleanly.
os.environ.setdefault("OMP_NUM_THREADS", "1")
