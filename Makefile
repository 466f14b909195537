# Two entry points: `make run` and `make test`. Both create .venv on first use.
# `make bench` runs benchmarks/bench.py: every speed figure against its reference (the import floor,
# igraph and rustworkx, the goals), this checkout beside the commit before (about half an hour).
# `make fuzz` fuzzes the CLI (tests/test_fuzz.py) with random seeds: FUZZ_EXAMPLES per test (2,000+
# runs in all), every failure class recorded, a report with reproducers in $(FUZZ_REPORT).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint bench fuzz docs clean

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

# one pytest worker per core (pytest-xdist): the suite is CPU-bound and its tests share no files
test: lint
	$(BIN)/python -m pytest -n auto

FUZZ_EXAMPLES ?= 400
FUZZ_REPORT   ?= build/fuzz/report.txt
fuzz: $(VENV)/.installed-dev
	TRNSIM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) TRNSIM_FUZZ_RANDOM=1 TRNSIM_FUZZ_KEEP_GOING=1 \
	TRNSIM_FUZZ_REPORT=$(FUZZ_REPORT) $(BIN)/python -m pytest tests/test_fuzz.py

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@

# NO_MKDOCS_2_WARNING: Material's banner about MkDocs' future, printed on every build
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site

# igraph and rustworkx: the graph libraries the benchmark compares with (trnsim never imports them)
$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $@

bench: $(VENV)/.installed $(VENV)/.installed-bench
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache
