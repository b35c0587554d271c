"""Hostile input, second round: a JSONL whose tail is a long run of NUL bytes (what a crashed run leaves) is
quarantined as binary data with its line number, read in bounded memory, and its good records are kept, in both
AIPerf modes (gap arrays skipped, the default, and ``--itl-gaps``)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

import analysis.ingest.jsonl_stream as js
from analysis.ingest import ingest

JSONL = Path(__file__).parent / "data" / "formats" / "aiperf" / "inferencex_conc1" / "profile_export.jsonl"
CAP = 1 << 20
TAIL = 6 << 20  # six times the cap: read whole, the tail alone would cost this much


def _traced(path: Path, itl_gaps: bool):
    tracemalloc.start()
    try:
        result = ingest([path], manifest=None, itl_gaps=itl_gaps)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("itl_gaps", [False, True])
def test_nul_tail_is_quarantined_with_its_line_in_bounded_memory(tmp_path, monkeypatch, itl_gaps):
    monkeypatch.setattr(js, "MAX_LINE_BYTES", CAP)
    good = JSONL.read_bytes()
    n_lines = good.count(b"\n")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "profile_export.jsonl").write_bytes(good + b'{"metadata": {"x_request_id": "cut' + b"\0" * TAIL)
    expected, clean_peak = _traced(JSONL, itl_gaps)
    result, peak = _traced(folder / "profile_export.jsonl", itl_gaps)
    assert peak < clean_peak + 2 * CAP  # the tail costs at most a cap's worth, never the six caps it holds
    q = result.quarantine
    assert list(q["line"]) == [n_lines + 1]
    assert q["reason"].iloc[0] == (f"binary data, not a record: a line of {TAIL + 34:,} bytes to the end of the "
                                   "file, NUL bytes from byte 35 (what a crash or a full disk leaves); not read")
    assert len(result.requests) == len(expected.requests) > 0
    assert result.requests["itl_ms_mean"].tolist() == expected.requests["itl_ms_mean"].tolist()


def test_records_after_an_overlong_line_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(js, "MAX_LINE_BYTES", CAP)
    lines = JSONL.read_bytes().splitlines(keepends=True)
    data = b"".join(lines[:3]) + b"\0" * (2 * CAP) + b"\n" + b"".join(lines[3:])  # past the detection head
    path = tmp_path / "profile_export.jsonl"
    path.write_bytes(data)
    for itl_gaps in (False, True):
        result = ingest([path], manifest=None, itl_gaps=itl_gaps)
        assert list(result.quarantine["line"]) == [4]
        assert "a line of 2,097,153 bytes before the next line" in result.quarantine["reason"].iloc[0]
        assert len(result.requests) == len(ingest([JSONL], manifest=None, itl_gaps=itl_gaps).requests) > 0
