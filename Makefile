# perfclaims: `make report` sets everything up and renders the reports; `make test` runs the whole test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# One stamp stands for every raw log (names with spaces or colons included): rewritten only when they change.
RAW_STAMP := $(VENV)/.raw-inputs
READERS := $(wildcard analysis/ingest/*.py) analysis/schema.py
PROCESSED := data/processed
GENERATED := points.parquet requests.parquet quarantine.csv files.csv fits.csv

.PHONY: help install ingest report share test test-py312 lint bench lock clean FORCE

help:
	@echo "make report   set up .venv, ingest data/raw, run the notebook suite -> reports/index.html"
	@echo "make share    the newest run as one HTML file to send (reports/latest/perfclaims-DATE.html)"
	@echo "make test     run the whole test suite (executes every suite notebook)"
	@echo "make test-py312  the same test suite on Python 3.12 in .venv312 (skipped when no 3.12 is found)"
	@echo "make lint     ruff over the package, tests, benchmarks and notebooks (configured in pyproject.toml)"
	@echo "make bench    ingest, fit/frontier scale and suite timings side by side (BENCH_ARGS=--quick to try it)"
	@echo "make ingest   only rebuild data/processed/ from data/raw/"
	@echo "make lock     re-resolve requirements.lock from pyproject.toml"
	@echo "make clean    delete what make report generated (dated runs, index, history, processed tables)"

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

$(RAW_STAMP): FORCE | $(STAMP)
	@$(BIN)/python -m analysis.report.stamp $@ data/raw

$(PROCESSED)/points.parquet: $(STAMP) $(RAW_STAMP) $(READERS)
	$(BIN)/perfclaims ingest data/raw --out $(PROCESSED) --quiet

ingest: $(PROCESSED)/points.parquet

# e.g. make report REPORT_ARGS="--jobs 1 --force"
report: $(PROCESSED)/points.parquet
	$(BIN)/perfclaims report $(REPORT_ARGS)

share: $(STAMP)
	$(BIN)/perfclaims share

# two workers on two cores (pytest-xdist); the tests that read the rendered suite are one module (one worker), so it
# renders once. Files go to the workers slowest first (tests/conftest.py orders them; xdist keeps that order).
PYTEST_ARGS ?= -n auto --dist loadfile --no-loadscope-reorder
# PYTHONDONTWRITEBYTECODE (set on some machines) is cleared for the tests: pytest then keeps the test modules it
# rewrites for assertions in __pycache__ (git-ignored) instead of rewriting all of them in every worker (~1.5 s each).
test: $(PROCESSED)/points.parquet
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q $(PYTEST_ARGS)

# Python 3.12: from PY312, else python3.12 on PATH, else a pyenv 3.12; the same lock file, its own venv.
# (a pyenv shim on PATH may name python3.12 without being able to run it: the recipe checks that it runs)
PY312 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3) $(shell command -v python3.12 2>/dev/null))
test-py312:
	@if [ -z "$(PY312)" ] || ! $(PY312) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then \
	  echo "test-py312: no runnable Python 3.12 found (set PY312=...): skipped"; exit 0; fi; \
	set -e; test -x .venv312/bin/python || $(PY312) -m venv .venv312; \
	.venv312/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.lock; \
	.venv312/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .; \
	.venv312/bin/python --version; .venv312/bin/python -m pytest -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check analysis tests bench notebooks

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) requirements.lock pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[bench]'
	@touch $@

bench: $(BENCH_STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -e '.[test,bench]'
	(echo "# Exact versions that \`make\` installs into .venv (Python 3.11). Regenerate with \`make lock\`."; \
	 .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^perfclaims') > requirements.lock
	rm -rf .lock-venv

# Only what the project writes: the tables ingest writes, dated run folders, the index, latest, the history.
clean:
	rm -f $(addprefix $(PROCESSED)/,$(GENERATED)) $(RAW_STAMP)
	rm -rf reports/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] reports/history
	rm -f reports/index.html reports/latest reports/.perfclaims-run.lock
