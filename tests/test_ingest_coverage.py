"""Every file of the shipped data, the test fixtures and the reference samples ends somewhere: points, per-request
rows, or the quarantine with a reason. None is silently skipped."""

import pytest
from conftest import RAW, SHARED, TEST_DATA

from analysis.ingest import ingest

ACCOUNTED = {"points", "points (some records quarantined)", "requests", "quarantined", "same run read elsewhere",
             "skipped"}


def check_every_file_accounted_for(result):
    files = result.files
    assert len(files)
    assert set(files["status"]) <= ACCOUNTED, files[~files["status"].isin(ACCOUNTED)]
    quarantined = set(result.quarantine["source_file"])
    for row in files.to_dict("records"):
        if row["status"] == "quarantined":
            assert row["source_file"] in quarantined
        if row["status"] in ("same run read elsewhere", "skipped"):
            assert row["note"]
    assert result.quarantine["reason"].str.len().gt(0).all()


def test_shipped_data():
    result = ingest([RAW])
    check_every_file_accounted_for(result)
    assert "quarantined" not in set(result.files["status"])  # the vLLM console log is read too


def test_format_fixtures():
    check_every_file_accounted_for(ingest([TEST_DATA / "formats"]))


def test_reference_samples():
    if not (SHARED / "samples").exists():
        pytest.skip("../shared/samples not beside this checkout")
    result = ingest([SHARED / "samples"])
    check_every_file_accounted_for(result)
    unknown = result.quarantine[result.quarantine["reason"].str.startswith("unknown format")]["source_file"]
    # Only files that are not tool results (command lines, console tables, stdout logs) are unknown.
    assert all(name.endswith((".txt", ".log")) for name in unknown)
    assert set(result.points["tool"]) >= {"aiperf", "genai-perf", "inferencex", "llmperf", "mlperf-loadgen", "vllm"}
