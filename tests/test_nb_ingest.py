"""01-ingest executed under papermill on a small input; numbers read back and checked."""

from analysis.ingest import ingest, write_outputs

from conftest import RAW


def test_ingest_notebook_reports_counts_and_quarantine(notebook_runner, tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    (src / "sweep.jsonl").write_text((RAW / "h200" / "moe_sweep_run1.jsonl").read_text())
    (src / "empty.json").write_text("")
    result = ingest([src])
    write_outputs(result, tmp_path / "processed")
    results = notebook_runner("01-ingest", processed_dir=str(tmp_path / "processed"))
    assert results["points"] == len(result.points) == 9
    assert results["quarantined"] == 1
    assert results["quarantine_reasons"] == {"empty file": 1}
    assert results["points_by_tool"] == {"h200-steps": 9}
