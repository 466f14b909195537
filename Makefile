# Two entry points: `make run` and `make test`. Both create .venv on first use.
# `make bench` times the routing core against networkx (several minutes: the reference is slow).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# An editable install does not precompile the package (a normal pip install does); compileall
# writes the bytecode so that each start does not recompile trnsim.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m compileall -q trnsim
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q trnsim
	touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(BIN)/trnsim topo list
	$(BIN)/trnsim topo show nl72x2
	$(BIN)/trnsim collective allreduce --sku nl72x2

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check trnsim tests benchmarks
	$(BIN)/ruff format --check trnsim tests benchmarks

test: lint
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
