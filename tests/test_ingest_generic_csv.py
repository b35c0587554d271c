"""Typed-in CSV reader: points-table column names as the header, unknown names rejected."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from analysis.ingest import detect, ingest
from analysis.schema import COLUMNS

DATA = Path(__file__).parent / "data" / "formats" / "generic_csv"


def _rows(name: str) -> list[dict]:
    text = "\n".join(t for t in (DATA / name).read_text().splitlines() if not t.startswith("#"))
    return list(csv.DictReader(text.splitlines()))


def test_typed_in_rows_become_points_and_bad_rows_are_quarantined():
    raw = _rows("claims_typed_in.csv")
    result = ingest([DATA / "claims_typed_in.csv"])
    pts = result.points.sort_values("source_line")
    good = [r for r in raw if r["model"] and r["precision"] != "fp7"]
    assert len(pts) == len(good) == 3
    assert pts["model"].tolist() == [r["model"] for r in good]
    q = result.quarantine.set_index("field")
    assert q.loc["precision", "line"] == 6 and "fp7" in q.loc["precision", "reason"]
    assert q.loc["model", "line"] == 7
    first = pts.iloc[0]
    assert first["tok_s_per_user"] == pytest.approx(1000.0 / float(good[0]["tpot_ms_p50"]))
    assert first["tok_s_per_user_def"] == "1000/tpot_ms_p50"
    second = pts.iloc[1]
    assert second["tok_s_per_gpu"] == pytest.approx(float(good[1]["output_tok_s"]) / float(good[1]["n_gpus"]))
    claim = pts.iloc[2]
    assert claim["tok_s_per_user"] == pytest.approx(float(good[2]["tok_s_per_user"].replace(",", "")))
    assert claim["tok_s_per_user_def"] == "tool-per-user"
    assert claim["flags"] == "per-user-includes-ttft"
    assert pts["source_line"].tolist() == [3, 4, 5]


def test_unknown_columns_quarantine_the_file_naming_them():
    result = ingest([DATA / "bad_columns.csv"])
    assert result.points.empty
    reason = result.quarantine["reason"].iloc[0]
    assert "tpot_ms_median" in reason and "tokens_per_sec" in reason
    assert result.quarantine["line"].iloc[0] == 1


def test_other_tools_csv_is_not_claimed(tmp_path):
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_text("Metric,avg,min,max,p50,p99\nTime to First Token (ms),10,5,20,9,19\n")
    assert detect(path, path.read_bytes()) is None


def test_points_table_round_trips_through_csv(tmp_path):
    source = ingest([DATA / "claims_typed_in.csv"]).points
    keep = [c for c in COLUMNS if c not in ("step_ms_samples", "source_file", "source_line", "tool", "format")]
    path = tmp_path / "points.csv"
    source[keep].to_csv(path, index=False)
    back = ingest([path]).points
    assert back["tpot_ms_p50"].tolist() == pytest.approx(source["tpot_ms_p50"].tolist(), nan_ok=True)
    assert back["tok_s_per_user"].tolist() == pytest.approx(source["tok_s_per_user"].tolist())
    assert back["model"].tolist() == source["model"].tolist()
