# perfclaims: `make report` sets everything up and renders the reports; `make test` runs the whole test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RAW    := $(shell find data/raw -type f 2>/dev/null)
READERS := $(wildcard analysis/ingest/*.py) analysis/schema.py

.PHONY: help install ingest report test bench lock clean

help:
	@echo "make report   set up .venv, ingest data/raw, run the notebook suite -> reports/index.html"
	@echo "make test     run the whole test suite (executes every suite notebook)"
	@echo "make bench    ingest, fit/frontier scale and suite timings side by side (BENCH_ARGS=--quick to try it)"
	@echo "make ingest   only rebuild data/processed/ from data/raw/"
	@echo "make lock     re-resolve requirements.lock from pyproject.toml"

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

data/processed/points.parquet: $(STAMP) $(RAW) $(READERS)
	$(BIN)/perfclaims ingest data/raw --out data/processed --quiet

ingest: data/processed/points.parquet

report: data/processed/points.parquet
	$(BIN)/perfclaims report

test: $(STAMP)
	$(BIN)/python -m pytest -q

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) requirements.lock pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[bench]'
	@touch $@

bench: $(BENCH_STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -e '.[test]'
	(echo "# Exact versions that \`make\` installs into .venv (Python 3.11). Regenerate with \`make lock\`."; \
	 .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^perfclaims') > requirements.lock
	rm -rf .lock-venv

clean:
	rm -rf data/processed reports/20* reports/index.html
