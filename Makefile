# Two entry points for a fresh clone:
#   make demo   -> create .venv if missing, install, run `sklearn-papers reproduce --quick`
#   make test   -> create .venv if missing, install with the test extra, run the test suite
#
# torch is installed first, from TORCH_SPEC, so that pip never pulls a multi-GB CUDA build
# on its own. Override for a GPU machine, e.g.
#   make test TORCH_SPEC="torch==2.13.0" TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cu128"
# or for the CPU wheel from PyTorch's own index:
#   make test TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
PYTEST_ARGS ?=
REPRODUCE_ARGS ?= --quick
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: demo test reproduce docs bench clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.torch: | $(BIN)/python
	$(PIP) install --quiet $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	touch $@

# the package alone (what `make demo` needs), then the test extra on top (`make test`)
$(VENV)/.core: pyproject.toml $(VENV)/.torch
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.core
	$(PIP) install --quiet -e ".[test]"
	touch $@

venv: $(VENV)/.installed

demo: $(VENV)/.core
	$(BIN)/sklearn-papers reproduce $(REPRODUCE_ARGS)

# the full protocols; experiments that keep text records of their parts (duvenaud) keep
# them in records/, committed, so a run continues on the next machine
reproduce: $(VENV)/.core
	$(BIN)/sklearn-papers reproduce --records records

test: $(VENV)/.installed
	$(BIN)/python -m pytest $(PYTEST_ARGS)

$(VENV)/.docs: pyproject.toml $(VENV)/.installed
	$(PIP) install --quiet -e ".[test,docs]"
	touch $@

# The build runs every example of the gallery (each sized to well under a minute of CPU;
# `make docs SKLEARN_PAPERS_DOCS_PLOT=False` renders them unrun). The HTML is then checked
# as a reader meets it: every internal link, anchor and image of every page, and seven
# pages opened in a headless Chromium at a desktop and a phone width when one is installed
# (apt-get install chromium-headless-shell)
docs: export OMP_NUM_THREADS ?= 1
docs: $(VENV)/.docs
	$(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html
	$(BIN)/python docs/check_html.py docs/_build/html

# The peers are installed without their own pins: scikit-fingerprints pins an older RDKit
# and chemprop pulls packages we do not need; torch stays as installed. chemprop 2.3 imports
# cuik_molmaker (cuik-molmaker-pin), a compiled module built against one RDKit release, so
# pip installs the RDKit release that cuik-molmaker-pin names beside it: after `make bench` the
# venv's RDKit is the one chemprop's featurizer was built for.
BENCH_PEERS ?= scikit-fingerprints chemprop pytorch-metric-learning
BENCH_PEER_DEPS ?= descriptastorus e3fp huggingface-hub mordredcommunity lightning torchmetrics \
	lightning-utilities astartes multiprocess dill psutil rich configargparse six \
	cuik-molmaker-pin myerson
$(VENV)/.bench: pyproject.toml $(VENV)/.installed
	$(PIP) install --quiet --no-deps $(BENCH_PEERS)
	$(PIP) install --quiet $(BENCH_PEER_DEPS)
	touch $@

bench: $(VENV)/.bench
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info docs/_build reports
