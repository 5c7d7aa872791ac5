# Two commands on a fresh Linux or macOS machine:
#   make lab    set everything up and open JupyterLab on the course
#   make test   set everything up and run every test (the command CI runs)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
W7     := .venv-w7
NB     ?=
PYTEST_ARGS ?= -n 2 --dist loadscope

.PHONY: setup lab test test-fast execute sync bench voila clean

$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=24"
	$(BIN)/python -m pip install -q -c constraints.txt -r requirements-dev.txt -e .
	touch $(STAMP)

setup: $(STAMP)

$(W7)/.installed-stamp: $(STAMP) tools/make_w7_env.py
	$(BIN)/python tools/make_w7_env.py $(W7)
	touch $@

lab: setup
	$(BIN)/jupyter lab --notebook-dir=.

test: setup $(W7)/.installed-stamp     ## also runs the explorer's tests under ipywidgets 7.7 (Colab's)
	ATTNLAB_W7_PYTHON=$(CURDIR)/$(W7)/bin/python OMP_NUM_THREADS=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

execute: setup                 ## re-run notebooks and store their outputs (NB=path to pick one)
	OMP_NUM_THREADS=1 $(BIN)/python tools/execute_notebooks.py $(NB)

sync: setup                    ## write the setup cell (from attnlab/course.py) into every notebook
	$(BIN)/python tools/sync_notebooks.py

bench: setup
	$(BIN)/python benchmarks/bench_attention.py

voila: setup
	$(BIN)/voila notebooks/attention_explorer.ipynb --no-browser

.PHONY: site
site: setup                    ## the course website from the notebooks' stored outputs -> build/site
	$(BIN)/python tools/website/build.py --out build/site

clean:
	rm -rf $(VENV) $(W7) .pytest_cache
