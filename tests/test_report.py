"""The suite runner: HTML with code hidden, an index with status, failures reported without stopping the rest."""

import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from analysis import config, report
from analysis.ingest import ingest, write_outputs

from conftest import RAW


@pytest.fixture
def suite(tmp_path, monkeypatch):
    processed = tmp_path / "processed"
    write_outputs(ingest([RAW / "h200"]), processed)
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    (nb_dir / "01-ingest.ipynb").write_text((config.NOTEBOOKS_DIR / "01-ingest.ipynb").read_text())
    broken = new_notebook(cells=[new_code_cell("results_path = None", metadata={"tags": ["parameters"]}),
                                 new_code_cell("raise RuntimeError('no points for this group')")])
    broken.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(broken, str(nb_dir / "99-broken.ipynb"))
    suite_file = nb_dir / "suite.yml"
    suite_file.write_text(f"""reports:
  - notebook: 01-ingest
    title: What was read
    parameters: {{processed_dir: "{processed}"}}
  - notebook: 99-broken
    title: A report that fails
""")
    monkeypatch.setattr(config, "NOTEBOOKS_DIR", nb_dir)
    return suite_file


def test_suite_writes_reports_and_index_and_fails_loudly(suite, tmp_path):
    out = tmp_path / "reports"
    code = report.run_suite(suite, out=out, date="2026-01-01")
    assert code == 1  # one notebook failed
    index = (out / "index.html").read_text()
    assert 'href="2026-01-01/01-ingest.html"' in index
    assert "What was read" in index and "processed_dir" in index
    assert re.search(r'class="ok">ok', index) and re.search(r'class="failed">failed', index)
    assert "RuntimeError: no points for this group" in index
    html = (out / "2026-01-01" / "01-ingest.html").read_text()
    assert "data:image/png;base64," in html  # embedded figure
    assert "Traceback" not in html
    assert "inventory.load_processed" not in html  # code hidden
    assert "cdnjs" not in html and "require.min.js" not in html  # opens offline
    assert "89 points read from 2 files" in html


def test_missing_suite_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="suite file not found"):
        report.run_suite(tmp_path / "nope.yml", out=tmp_path)
