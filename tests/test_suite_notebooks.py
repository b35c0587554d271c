"""Every suite notebook is stored clean, takes the common parameters, and is executed by some test."""

import json
import re

import pytest
import yaml
from conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
SUITE = yaml.safe_load((NOTEBOOKS / "suite.yml").read_text())["reports"]
SUITE_NAMES = sorted({entry["notebook"] for entry in SUITE})


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_notebook_is_stored_without_outputs_and_takes_common_parameters(name):
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and not c.get("execution_count") for c in code), "strip outputs"
    params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged 'parameters'"
    source = "".join(params[0]["source"])
    assert re.search(r"^points_path\s*=", source, re.M) and re.search(r"^results_path\s*=", source, re.M)
    assert "save_results" in "".join("".join(c["source"]) for c in code[-2:])


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_some_test_executes_the_notebook(name):
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py") if p.name != "test_suite_notebooks.py")
    # run directly, or read from the session's rendered suite (suite_results("<slug>"), executed by the runner)
    assert re.search(rf"""(notebook_runner|run_notebook|suite_results)\(\s*["']{re.escape(name)}""", tests), \
        f"no test runs notebooks/{name}.ipynb"


def test_suite_parameters_are_ones_the_notebooks_take():
    """A misspelt parameter in suite.yml would be injected and ignored; the runner's parser must see every name."""
    from analysis.report.suite import notebook_parameters

    for entry in SUITE:
        known = notebook_parameters(NOTEBOOKS / f"{entry['notebook']}.ipynb")
        assert {"points_path", "results_path"} <= known, entry["notebook"]
        wanted = set(entry.get("parameters") or {}) | ({"claim"} if entry.get("foreach") == "claims" else set())
        assert wanted <= known, (entry["notebook"], wanted - known)
