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

.PHONY: help install ingest report share test bench lock clean FORCE

help:
	@echo "make report   set up .venv, ingest data/raw, run the notebook suite -> reports/index.html"
	@echo "make share    the newest run as one HTML file to send (reports/latest/perfclaims-DATE.html)"
	@echo "make test     run the whole test suite (executes every suite notebook)"
	@echo "make bench    ingest speed and memory against pandas, printed side by side"
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

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/ingest_speed.py

lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -e '.[test]'
	(echo "# Exact versions that \`make\` installs into .venv (Python 3.11). Regenerate with \`make lock\`."; \
	 .lock-venv/bin/python -m pip freeze --exclude-editable | grep -v '^perfclaims') > requirements.lock
	rm -rf .lock-venv

# Only what the project writes: the tables ingest writes, dated run folders, the index, latest, the history.
clean:
	rm -f $(addprefix $(PROCESSED)/,$(GENERATED)) $(RAW_STAMP)
	rm -rf reports/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] reports/history
	rm -f reports/index.html reports/latest reports/.perfclaims-run.lock
