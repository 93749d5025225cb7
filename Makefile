# Quick start: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
CONSTRAINTS := constraints.txt

.PHONY: demo test install install-dev bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e .
	touch $@

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e ".[dev,torch,dask]"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: $(VENV)/.installed
	$(BIN)/python sample_data/make_sample_data.py --check
	$(BIN)/python -m datavet.demo --out reports

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/bench_scan.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
