"""Shared fixtures: seeded randomness, closed figures, paths to real inputs, and a papermill runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
TEST_DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared"

os.environ.setdefault("MPLBACKEND", "Agg")

from analysis.lazy_imports import defer_iri_grammar  # noqa: E402

defer_iri_grammar()  # every papermill/nbconvert import in the tests skips building jsonschema's IRI grammar


@pytest.fixture(scope="session", autouse=True)
def _processed_tables():
    """The suite's notebooks read ``data/processed/`` by default: on a fresh clone (no `make ingest` yet) write it
    from the shipped ``data/raw`` once, as `make ingest` would, so `pytest` alone works as well as `make test`."""
    from analysis import config

    if not config.POINTS_FILE.exists():
        from analysis.ingest import ingest, write_outputs

        write_outputs(ingest([config.RAW_DATA_DIR], progress=False), config.PROCESSED_DATA_DIR)


@pytest.fixture(autouse=True)
def _seed_and_close():
    np.random.seed(0)
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    return RAW


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.exists():
        pytest.skip("../shared is not next to this checkout")
    return SHARED


@pytest.fixture(scope="session")
def raw_points(tmp_path_factory):
    """The shipped data/raw ingested once per test session."""
    from analysis.ingest import ingest

    return ingest([RAW]).points


def _execute_in_child(name: str, tmp_path: Path, parameters: dict) -> None:
    from analysis.report import execute

    nb, error, _ = execute.execute(ROOT / "notebooks" / f"{name}.ipynb", parameters, "inprocess",
                                   tmp_path / f".work-{name}", ROOT / "notebooks")
    if nb is not None:
        import nbformat

        nbformat.write(nb, str(tmp_path / f"{name}.ipynb"))
    if error:
        raise SystemExit(f"{name}: {error}")


def run_notebook(name: str, tmp_path: Path, **parameters) -> dict:
    """Execute ``notebooks/<name>.ipynb`` as the suite runner does (the in-process executor, in a process forked for
    it: no kernel start, nothing left in the test process); return what it saved with ``save_results``. The executed
    notebook is ``tmp_path/<name>.ipynb``. (The papermill executor is tested in test_report.py.)"""
    import multiprocessing

    results_path = tmp_path / f".work-{name}" / "results.json"  # where the executor has the notebook save them
    child = multiprocessing.get_context("fork").Process(target=_execute_in_child, args=(name, tmp_path, parameters))
    child.start()
    child.join()
    if child.exitcode != 0:
        pytest.fail(f"notebooks/{name}.ipynb failed (exit {child.exitcode}); see the output above")
    return json.loads(results_path.read_text())


def page_results(page) -> dict:
    """``page.results()`` exactly as a notebook's ``save_results`` writes it (JSON: NaN → null, numpy → Python):
    the package function behind a report, tested without a kernel (the notebooks themselves run in the rendered
    suite below)."""
    from analysis.report.results import _jsonable

    return json.loads(json.dumps(_jsonable(page.results()), sort_keys=True))


@pytest.fixture(scope="session")
def rendered_suite(tmp_path_factory) -> Path:
    """The shipped suite rendered once per test session by the suite runner, as `make report` renders it (the
    papermill reports each in its own kernel, the claim cards in process) over ``data/processed``; returns the run
    folder (pages, ``<slug>.results.json``, run manifest). Notebook tests with the suite's own parameters read their
    numbers here instead of executing the notebook again; the browser tests open these pages. Every test that reads
    it is in ``test_rendered_suite.py``: with ``--dist loadfile`` one worker renders it, once."""
    from analysis import config, report

    out = tmp_path_factory.mktemp("reports")
    report.run_suite(config.SUITE_FILE, out=out, date="2026-01-01")
    return out / "2026-01-01"


@pytest.fixture(scope="session")
def suite_results(rendered_suite):
    """``suite_results(slug)``: what that report of the rendered suite saved with ``save_results``."""
    def _read(slug: str) -> dict:
        path = rendered_suite / f"{slug}.results.json"
        if not path.is_file():
            pytest.fail(f"{slug} did not render ok in the session's suite run (see {rendered_suite / 'index.html'})")
        return json.loads(path.read_text())

    return _read


@pytest.fixture
def notebook_runner(tmp_path):
    def _run(name: str, **parameters) -> dict:
        return run_notebook(name, tmp_path, **parameters)

    return _run


# What a test does to execute a suite notebook (directly, through the suite runner, or through `perfclaims claim`).
_RUNS_A_NOTEBOOK = ("notebook_runner(", "run_notebook(", "execute_notebook(", "run_suite(", "run_job(",
                    "cli_claim(", '"claim", ', "suite_results(")


def runs_a_notebook(item) -> bool:
    """True for a test that starts a kernel: it uses ``notebook_runner``, lives in a ``test_nb_*`` module, or its
    own code calls a notebook-running entry point."""
    import inspect

    if "notebook_runner" in getattr(item, "fixturenames", ()) or item.path.name.startswith("test_nb_"):
        return True
    try:
        source = inspect.getsource(item.function)
    except (OSError, TypeError, AttributeError):
        return False
    return any(call in source for call in _RUNS_A_NOTEBOOK)


def pytest_collection_modifyitems(config, items):
    """Mark every notebook-executing test ``notebook`` (`pytest -m "not notebook"` runs the rest in seconds), then
    order the files slowest first (see :func:`_file_seconds`)."""
    for item in items:
        if runs_a_notebook(item) and item.get_closest_marker("notebook") is None:
            item.add_marker(pytest.mark.notebook)
    seconds = _file_seconds(config, items)
    items.sort(key=lambda item: -seconds[_file_of(item.nodeid)])  # stable: a file's tests stay together, in order


# --- slowest files first -----------------------------------------------------------------------------
# `make test` gives whole files to two xdist workers (--dist loadfile) in collection order (--no-loadscope-reorder):
# starting with the slowest files keeps one long file from starting last while the other worker idles. A file's
# time is what it took in the last run that ran it (.pytest_cache), else an estimate from its tests.
_SECONDS_KEY = "perfclaims/seconds-per-file"
_SPENT: dict[str, float] = {}


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _file_seconds(config, items) -> dict[str, float]:
    cache = getattr(config, "cache", None)
    recorded = cache.get(_SECONDS_KEY, {}) if cache is not None else {}
    estimate: dict[str, float] = {}
    for item in items:  # unknown file: a second per notebook-executing test, 20 ms per other test
        file = _file_of(item.nodeid)
        estimate[file] = estimate.get(file, 0.0) + (1.0 if item.get_closest_marker("notebook") else 0.02)
    return {file: float(recorded.get(file, guess)) for file, guess in estimate.items()}


def pytest_runtest_logreport(report):
    _SPENT[_file_of(report.nodeid)] = _SPENT.get(_file_of(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    """Record each file's time (in the xdist controller, or a run without workers), for the next run's order."""
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _SPENT:
        return
    cache.set(_SECONDS_KEY, {**cache.get(_SECONDS_KEY, {}), **{f: round(s, 2) for f, s in _SPENT.items()}})
