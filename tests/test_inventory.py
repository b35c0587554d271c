"""The tables behind the 01-ingest report, tested directly (not only through the notebook): counts per tool and
format, per configuration, quarantine grouped by reason, flag counts with meanings, files without points."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import inventory, schema, text
from analysis.ingest import ingest, write_outputs

TEST_DATA = Path(__file__).parent / "data"
JSONL_RUN = TEST_DATA / "formats" / "aiperf" / "inferencex_conc1"
DUPLICATE = TEST_DATA / "malformed" / "mlperf_duplicate_a" / "mlperf_log_summary.txt"


@pytest.fixture
def processed(tmp_path) -> Path:
    """A real ingest: an AIPerf run (aggregate + JSONL + CSV), an MLPerf summary twice, one unreadable file."""
    raw = tmp_path / "raw"
    shutil.copytree(JSONL_RUN, raw / "aiperf_run")
    for name in ("a", "b"):
        (raw / name).mkdir()
        shutil.copyfile(DUPLICATE, raw / name / "mlperf_log_summary.txt")
    (raw / "notes.txt").write_text("nothing a reader knows\n")
    out = tmp_path / "processed"
    write_outputs(ingest([raw], manifest=None), out)
    return out


def test_load_processed_reads_what_ingest_wrote(processed, tmp_path):
    tables = inventory.load_processed(processed)
    assert set(tables) == {"points", "quarantine", "files"}
    assert len(tables["files"]) == 6 and len(tables["points"]) == len(pd.read_parquet(processed / "points.parquet"))
    with pytest.raises(FileNotFoundError, match="run `perfclaims ingest`"):
        inventory.load_processed(tmp_path / "empty")


def test_by_tool_counts_files_points_and_quarantine(processed):
    t = inventory.load_processed(processed)
    table = inventory.by_tool(t["files"], t["quarantine"]).set_index(["tool", "format"])
    assert table["files"].sum() == 6 and table["quarantined"].sum() == len(t["quarantine"]) == 2
    assert table.loc[("mlperf-loadgen", "mlperf-summary"), "files"] == 1  # the duplicate is logged under no format
    assert table.loc[("mlperf-loadgen", "mlperf-summary"), "points"] == 1
    assert table.loc[("none", "none"), "quarantined"] == 2  # the duplicate run and the unknown file
    assert table["points"].sum() == len(t["points"])
    assert list(inventory.by_tool(pd.DataFrame(), pd.DataFrame()).columns) == [
        "tool", "format", "files", "points", "quarantined"]


def test_quarantine_reasons_group_by_the_words_before_the_colon(processed):
    t = inventory.load_processed(processed)
    reasons = inventory.quarantine_reasons(t["quarantine"]).set_index("reason")
    assert reasons.loc["duplicate run", "records"] == 1
    assert reasons.loc["duplicate run", "example_file"].endswith("b/mlperf_log_summary.txt")
    assert reasons.loc["unknown format", "records"] == 1


def test_files_without_points_say_why(processed):
    t = inventory.load_processed(processed)
    rows = inventory.files_without_points(t["files"]).set_index("source_file")
    names = {Path(s).name: status for s, status in rows["status"].items()}
    assert names["notes.txt"] == "quarantined"
    assert names["profile_export.jsonl"] == "requests"
    assert names["profile_export_aiperf.csv"] == "same run read elsewhere"
    assert not any(str(s).startswith("points") for s in rows["status"])
    assert list(rows.reset_index().columns) == ["source_file", "format", "status", "note"]


def test_by_configuration_gives_points_models_tools_and_load_range():
    points = pd.DataFrame({
        "hardware": ["H200", "H200", "H200", "B200"], "scope": ["node"] * 4, "precision": ["fp8"] * 4,
        "model": ["m1", "m2", "m1", "m1"], "tool": ["vllm", "sglang", "vllm", "vllm"],
        "batch_size": [None, 8.0, None, 1.0], "concurrency": [4.0, 64.0, 32.0, 2.0],
    })
    table = inventory.by_configuration(points).set_index("hardware")
    assert table.loc["H200", "points"] == 3 and table.loc["H200", "models"] == 2
    assert table.loc["H200", "tools"] == "sglang, vllm"
    assert (table.loc["H200", "load_min"], table.loc["H200", "load_max"]) == (4.0, 32.0)  # batch before concurrency
    assert (table.loc["B200", "load_min"], table.loc["B200", "load_max"]) == (1.0, 1.0)
    assert inventory.by_configuration(pd.DataFrame()).empty


def test_flag_counts_split_flags_and_explain_them():
    points = pd.DataFrame({"flags": ["failed-run;derived-from-e2e", "", None, "derived-from-e2e", "new-flag"]})
    counts = inventory.flag_counts(points).set_index("flag")
    assert counts["points"].to_dict() == {"derived-from-e2e": 2, "failed-run": 1, "new-flag": 1}
    # meanings and kinds come from the one flag registry; an unknown flag says it is not one of perfclaims'
    assert counts.loc["failed-run", "meaning"] == schema.FLAGS["failed-run"].meaning
    assert counts.loc["failed-run", "left_out_of_fits"] == "yes" and counts.loc["derived-from-e2e", "kind"] == "note"
    assert counts.loc["new-flag", "meaning"].startswith("not a flag perfclaims defines")


def test_count_words():
    assert text.count(1, "record") == "1 record"
    assert text.count(1234, "file") == "1,234 files"
    assert text.count(0, "point") == "0 points"
