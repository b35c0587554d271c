"""Truncated text and CSV summaries are caught: the point is kept but flagged untrusted, with a quarantine row saying
what is missing, instead of becoming a partial point that looks complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TEST_DATA

from analysis.ingest import ingest
from analysis.schema import has_flag, trusted

AIPERF_CSV = TEST_DATA / "formats" / "aiperf" / "m1517_c16none" / "profile_export_aiperf.csv"
GENAI_CSV = TEST_DATA / "formats" / "genai_perf" / "v4cc7650c_concurrency8" / "profile_export_llm_genai_perf.csv"
MLPERF = (TEST_DATA / "formats" / "mlperf" / "ntuhpc_v5.1_ASUSTeK_ESC_N8_H200x8_TRT_llama2-70b-99_Server"
          / "mlperf_log_summary.txt")


def _cut(src: Path, dst: Path, keep) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(keep(src.read_bytes()))
    return dst


@pytest.mark.parametrize("src", [AIPERF_CSV, GENAI_CSV], ids=["aiperf", "genai-perf"])
def test_csv_summary_without_its_closing_table_is_flagged_truncated(tmp_path, src):
    whole = ingest([src]).points
    assert not has_flag(whole, "truncated").any()
    cut = _cut(src, tmp_path / "run" / src.name, lambda b: b[: b.index(b"Metric,Value")])
    result = ingest([cut])
    assert len(result.points) == 1 and has_flag(result.points, "truncated").all()
    assert not trusted(result.points).any()
    assert "no 'Metric,Value' table" in result.quarantine.iloc[0]["reason"]


def test_csv_summary_cut_mid_row_is_flagged_truncated_naming_the_line(tmp_path):
    text = AIPERF_CSV.read_bytes()
    lines = text.split(b"\n")
    cut_at = len(b"\n".join(lines[:43])) + 1 + lines[43].index(b",", 30)  # line 44 (TTFT), a few cells in
    cut = _cut(AIPERF_CSV, tmp_path / "run" / AIPERF_CSV.name, lambda b: b[:cut_at])
    result = ingest([cut])
    assert has_flag(result.points, "truncated").all()
    assert "row at line 44 has" in result.quarantine.iloc[0]["reason"]
    # cut before the one metric a point needs: the file is quarantined, and the reason says it was cut off
    early = _cut(AIPERF_CSV, tmp_path / "early" / AIPERF_CSV.name, lambda b: b[: len(b"\n".join(lines[:21]))])
    result = ingest([early])
    assert result.points.empty
    assert result.quarantine.iloc[0]["reason"].startswith("truncated summary: no 'Metric,Value' table")


def test_mlperf_summary_without_its_closing_sections_is_flagged_truncated(tmp_path):
    folder = tmp_path / MLPERF.parent.name
    assert trusted(ingest([MLPERF]).points).all()
    cut = _cut(MLPERF, folder / MLPERF.name, lambda b: b[: b.index(b"Test Parameters Used")])
    result = ingest([cut])
    assert len(result.points) == 1 and has_flag(result.points, "truncated").all()
    assert not trusted(result.points).any()
    row = result.quarantine.iloc[0]
    assert row["field"] == "Test Parameters Used" and row["reason"].startswith("truncated summary")


@pytest.mark.parametrize("src", [
    TEST_DATA / "formats" / "genai_perf" / "analyze" / "analyze_export_genai_perf.csv",
    TEST_DATA / "formats" / "generic_csv" / "claims_typed_in.csv",
    TEST_DATA / "formats" / "sglang" / "bench_serving.jsonl",
], ids=["genai-perf-analyze", "generic-csv", "sglang-jsonl"])
def test_a_file_cut_after_its_header_is_a_quarantine_row_not_a_silent_nothing(tmp_path, src):
    data = src.read_bytes()
    first = data.split(b"\n", 1)[0]
    head = first if not first.lstrip().startswith(b"{") else first[: len(first) // 2]  # JSONL: cut mid-record
    path = tmp_path / src.parent.name / src.name
    path.parent.mkdir()
    path.write_bytes(head)
    result = ingest([tmp_path])
    assert result.points.empty
    assert list(result.files["status"]) == ["quarantined"]
    assert result.quarantine["reason"].str.len().gt(10).all()
