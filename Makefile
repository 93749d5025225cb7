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

# The demo's preflight step runs a small PyTorch model: the CPU build pinned in constraints.txt.
$(VENV)/.installed-torch: $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e ".[torch]"
	touch $@ $(VENV)/.installed

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml $(CONSTRAINTS)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e ".[dev,torch,dask,spark,polars,hf]"
	touch $@ $(VENV)/.installed $(VENV)/.installed-torch

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The planted table must fail (exit 1) and the clean one pass (exit 0); anything else stops make.
demo: $(VENV)/.installed-torch
	@mkdir -p reports
	@echo "== datavet audit sample_data/planted_train.csv --test sample_data/planted_test.csv --target label"
	@$(BIN)/datavet audit sample_data/planted_train.csv --test sample_data/planted_test.csv \
		--target label; test $$? -eq 1
	@$(BIN)/datavet audit sample_data/planted_train.parquet --test sample_data/planted_test.parquet \
		--target label --output reports/sample_audit.txt; test $$? -eq 1
	@$(BIN)/datavet audit sample_data/planted_train.parquet --test sample_data/planted_test.parquet \
		--target label --format json --output reports/sample_audit.json \
		--html reports/sample_audit.html; test $$? -eq 1
	@$(BIN)/datavet audit sample_data/clean_train.parquet --test sample_data/clean_test.parquet \
		--target label --format json --output reports/clean_audit.json
	@echo "== datavet audit sample_data/images/train.npz --test sample_data/images/test.npz"
	@$(BIN)/datavet audit sample_data/images/train.npz --test sample_data/images/test.npz \
		--format json --output reports/images_audit.json --html reports/images_audit.html; \
		test $$? -eq 1
	@echo "== datavet curves sample_data/curves/lr_too_high.csv"
	@$(BIN)/datavet curves sample_data/curves/lr_too_high.csv --html reports/curves_audit.html; \
		test $$? -eq 1
	@echo "== datavet preflight sample_data/sample_model.py:factory --train sample_data/clean_train.parquet"
	@if $(BIN)/python -c "import torch" 2>/dev/null; then \
		$(BIN)/datavet preflight sample_data/sample_model.py:factory \
			--train sample_data/clean_train.parquet --test sample_data/clean_test.parquet \
			--target label --html reports/preflight.html; \
	else echo "(needs PyTorch: pip install 'datavet[torch]')"; fi
	@echo "== reports written:" && ls reports/*.txt reports/*.json reports/*.html

# The checks first (lint, the import layering of pyproject.toml, the public API's types), then
# the suite.
test: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/bench_compare.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
.PHONY: fuzz  # the long fuzz, 100,000 cases (FUZZ_ITERATIONS overrides; CI: tests/hardening/test_fuzz.py)
fuzz: $(VENV)/.installed-dev
	$(BIN)/python bench/fuzz.py --iterations $${FUZZ_ITERATIONS:-100000} $${FUZZ_ARGS}
.PHONY: docs  # the generated rule reference (a test fails when it is stale)
docs: $(VENV)/.installed
	$(BIN)/python -m datavet.docs > docs/rules.md
