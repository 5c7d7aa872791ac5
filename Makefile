# Two commands on a fresh Linux or macOS machine (CPython 3.9-3.13):
#   make lab    set everything up and open JupyterLab on the course
#   make test   set everything up and run every test (the command CI runs)
#   make test-fast   the unit tests only: no browser, no notebooks, no retraining (markers in pyproject.toml)
#   make help   every target, with what it does
# Variables: PYTHON=python3.X (the interpreter), TORCH_INDEX=https://download.pytorch.org/whl/cpu
# (torch from PyTorch's CPU-only wheels on Linux), CONSTRAINTS=file|auto|none (auto: constraints.txt
# on Python 3.11, constraints-py3.X.txt on the others).
PYTHON ?= python3
TORCH_INDEX ?=
CONSTRAINTS ?= auto
MATRIX ?= 3.9 3.10 3.11 3.12 3.13 floor newest
MATRIX_ARGS ?=
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
W7     := .venv-w7
HUB_PROXY := hub/node_modules/.installed-stamp   # configurable-http-proxy (npm), for the hub
# the students' environment of the hub's tests (hub/student_env.py)
HUB_ENV   := .venv-hub
NB     ?=
PYTEST_ARGS ?= -n 2 --dist loadscope --no-loadscope-reorder   # modules in conftest.py's order: the longest first

.PHONY: setup lab test test-fast execute sync bench bench-import voila matrix dist clean help mutation mutation-check

# tools/venvs.py checks the Python and the constraints first (a clear message, not pip's
# ResolutionImpossible), removes the venv if the install fails, and writes the stamp last.
$(STAMP): requirements.txt requirements-dev.txt $(wildcard constraints*.txt) pyproject.toml tools/venvs.py
	$(PYTHON) tools/venvs.py $(VENV) --constraints $(CONSTRAINTS) $(if $(TORCH_INDEX),--torch-index $(TORCH_INDEX))

setup: $(STAMP)                ## the venv .venv with the course installed (editable) and the dev tools
	@$(PYTHON) tools/venvs.py --check $(VENV)

$(W7)/.installed-stamp: $(STAMP) tools/make_w7_env.py
	$(BIN)/python tools/make_w7_env.py $(W7)
	touch $@

# attnlab_server: kernel websockets with TCP_NODELAY (README, "Explorer latency in the browser").
SERVER_CONNECTION := attnlab_server.NoDelayKernelConnection
# The course's JupyterLab settings (attnlab_server.lab_args): keys kept in widgets, a code font with every
# Vietnamese letter (in the user settings of `make lab`, build/lab/user-settings, copied where missing).
LAB_USER_SETTINGS := $(CURDIR)/build/lab/user-settings
LAB_ARGS := --LabApp.app_settings_dir=$(CURDIR)/shared/attnlab_server/lab_settings \
	--LabApp.user_settings_dir=$(LAB_USER_SETTINGS)

lab: setup                     ## JupyterLab on the course
	$(BIN)/python -c "import attnlab_server, sys; attnlab_server.seed_user_settings(sys.argv[1])" $(LAB_USER_SETTINGS)
	$(BIN)/jupyter lab --notebook-dir=. --ServerApp.kernel_websocket_connection_class=$(SERVER_CONNECTION) $(LAB_ARGS)

test:                          ## every test (what CI runs); also runs the explorer's tests under ipywidgets 7.7 (Colab's)
	@$(MAKE) --no-print-directory -j3 test-envs
	ATTNLAB_W7_PYTHON=$(CURDIR)/$(W7)/bin/python OMP_NUM_THREADS=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

# The core's oracle tests against PyTorch (attention, masks, multi-head, blocks, KV cache, positional
# encoding, properties with gradients, input errors, causality): the inner loop for a change to the core.
CORE_TESTS := $(addprefix tests/test_,$(addsuffix .py,attention masks multihead block kv_cache positional \
	properties errors causality explicit_attention core_messages))

test-core: setup               ## the core's oracle tests against PyTorch only (about 30 s; docs/performance.md)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -p no:xdist -q -m "not slow" $(CORE_TESTS)

test-fast: setup               ## unit tests without the `slow`, `browser` and `notebooks` markers
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest $(PYTEST_ARGS) -m "not slow and not browser and not notebooks" tests

mutation: setup                ## mutation testing of the checkers (docs/checkers.md): mutmut over solutions/, scores -> docs
	OMP_NUM_THREADS=1 $(BIN)/python tools/mutation.py

mutation-check: setup          ## the same run; fails unless the stored scores are what it gives and every survivor is explained (CI)
	OMP_NUM_THREADS=1 $(BIN)/python tools/mutation.py --check

execute: setup                 ## re-run notebooks and store their outputs (NB=path to pick one)
	OMP_NUM_THREADS=1 $(BIN)/python tools/execute_notebooks.py $(NB)

sync: setup                    ## write the setup cell (from attnlab/course/__init__.py) into every notebook
	$(BIN)/python tools/sync_notebooks.py

bench: setup                   ## attention's speed and memory (benchmarks/bench_attention.py)
	$(BIN)/python benchmarks/bench_attention.py

bench-import: setup            ## import attnlab vs import torch, fresh processes
	$(BIN)/python benchmarks/bench_import.py

matrix:                        ## NOT part of `make test`: a venv per Python + the floor env (downloads GBs)
	$(PYTHON) tools/matrix.py $(MATRIX) $(MATRIX_ARGS)

voila: setup                   ## notebooks/voila.json sets the same connection class
	$(BIN)/voila --Voila.config_file_paths=notebooks notebooks/attention_explorer.ipynb --no-browser

.PHONY: site
site: setup                    ## the course website from the notebooks' stored outputs -> build/site + build/attnlab-site.zip
	$(BIN)/python tools/website/build.py --out build/site
	$(BIN)/python tools/website/archive.py build/site build/attnlab-site.zip

dist: setup                    ## the sdist and the wheel of the course package -> dist/, checked with twine
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/python -m twine check --strict dist/*

# ---- the course's JupyterHub on this machine (docs/hub.md), as root: each student is a system user.
# configurable-http-proxy from npm into hub/node_modules (npm ci: exactly hub/package-lock.json);
# hub/student_env.py: the folders under ATTNLAB_HUB_STATE (default /var/lib/attnlab-hub), the
# students' read-only environment, the published course; then the hub on 127.0.0.1:8000.
$(HUB_PROXY): hub/package.json hub/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make: the hub needs Node.js 20+ and npm (apt install nodejs npm)" >&2; exit 1; }
	cd hub && npm ci --no-audit --no-fund --loglevel=error
	touch $@

.PHONY: hub hub-proxy hub-install hub-publish hub-test-env hub-test-packages test-envs
hub-proxy: $(HUB_PROXY)

hub-install: setup $(HUB_PROXY)   ## as root: folders and modes, the students' environment, the course
	$(BIN)/python hub/student_env.py $(if $(TORCH_INDEX),--torch-index $(TORCH_INDEX))

hub-publish: setup             ## put the course (lessons_vi, lessons_zh, notebooks) where students pull it from
	$(BIN)/python hub/publish_course.py

hub: hub-install               ## JupyterHub for a class on 127.0.0.1:8000 (as root; docs/hub.md)
	$(BIN)/jupyterhub -f hub/jupyterhub_config.py

# The students' environment the hub's tests share (hub/student_env.py --env-only; quick when it is
# up to date). Without root the hub's tests fail (they make system users); the rest still runs.
# Its pinned packages need no venv of ours: `make test` installs them while it makes .venv (make -j).
hub-test-packages:
	@if [ "$$(id -u)" = 0 ]; then ATTNLAB_HUB_ENV=$(CURDIR)/$(HUB_ENV) $(PYTHON) hub/student_env.py --packages-only $(if $(TORCH_INDEX),--torch-index $(TORCH_INDEX)); fi

hub-test-env: setup hub-test-packages
	@if [ "$$(id -u)" = 0 ]; then ATTNLAB_HUB_ENV=$(CURDIR)/$(HUB_ENV) $(BIN)/python hub/student_env.py --env-only $(if $(TORCH_INDEX),--torch-index $(TORCH_INDEX)); \
	else echo "make: NOT root: the hub's tests (tests/test_hub*.py) will fail; run make test as root" >&2; fi

# What `make test` needs besides .venv, made at once where they do not depend on each other (-j3).
test-envs: setup $(W7)/.installed-stamp $(HUB_PROXY) hub-test-env

# The exercises as nbgrader assignments, and grading a class (docs/grading.md).
SUBMISSIONS ?=
GRADES ?= build/grades
UNSAFE ?=
FORCE ?=
.PHONY: assignments grade
assignments: setup             ## lessons' exercises -> assignments/source (nbgrader) and assignments/release (students)
	$(BIN)/python -m tools.assignments.build

# Each submission runs in a bubblewrap sandbox as a throw-away user (needs bubblewrap and root);
# UNSAFE=1 grades without it (written into grades.csv); FORCE=1 replaces GRADES/grades.csv instead of merging.
grade: setup                   ## SUBMISSIONS=dir (<student>/<assignment>/<notebook>.ipynb) -> $(GRADES)/grades.csv, feedback/, sandboxed
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=dir (one folder per student, see docs/grading.md)" >&2; exit 2; }
	OMP_NUM_THREADS=1 $(BIN)/python -m tools.assignments.grade "$(SUBMISSIONS)" --out "$(GRADES)" $(if $(UNSAFE),--unsafe) $(if $(FORCE),--force)

help:                          ## this list
	@sed -n '1,/^[^#]/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
	@echo
	@grep -E '^[a-zA-Z][a-zA-Z_-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([^:]+):.*## (.*)/  \1|\2/' | \
	  awk -F'|' '{ printf "  %-14s %s\n", $$1, $$2 }' | sed 's/^    /  /'

clean:                         ## remove the venvs, dist/, the hub's node_modules and its environment
	rm -rf $(VENV) $(W7) .pytest_cache dist hub/node_modules $(HUB_ENV) $(HUB_ENV)-python $(HUB_ENV).lock
