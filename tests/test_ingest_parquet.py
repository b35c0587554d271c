"""Ingest's Parquet for other tools: row groups of ROW_GROUP_ROWS rows, and with ``partition=True`` Hive-partitioned
points/ and requests/ datasets (tool, day) that read back to the same rows, stay inside their folder whatever the
values, and leave no stale partition behind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from analysis.ingest import ROW_GROUP_ROWS, IngestResult, ingest, write_outputs

JSONL_RUN = Path(__file__).parent / "data" / "formats" / "aiperf" / "inferencex_conc1"


def _result(points: pd.DataFrame, requests: pd.DataFrame | None = None, files: pd.DataFrame | None = None):
    return IngestResult(points=points, requests=requests if requests is not None else pd.DataFrame(),
                        quarantine=pd.DataFrame(columns=["source_file", "line", "field", "reason", "format"]),
                        files=files if files is not None else pd.DataFrame())


def _read(folder: Path) -> pd.DataFrame:
    return ds.dataset(folder, format="parquet", partitioning="hive").to_table().to_pandas()


def test_large_tables_are_written_in_row_groups(tmp_path):
    n = 2 * ROW_GROUP_ROWS + 1000
    requests = pd.DataFrame({"source_file": "run.jsonl", "request_index": np.arange(n), "ttft_ms": np.ones(n)})
    paths = write_outputs(_result(pd.DataFrame({"tool": ["x"], "date": ["2026-01-01"]}), requests), tmp_path)
    meta = pq.ParquetFile(paths["requests"]).metadata
    assert meta.num_rows == n and meta.num_row_groups == 3
    assert meta.row_group(0).num_rows == ROW_GROUP_ROWS
    assert "points_dataset" not in paths and not (tmp_path / "points").exists()  # only with partition=True


def test_partitioned_points_read_back_to_the_same_rows(tmp_path):
    points = pd.DataFrame({
        "tool": ["vllm", "vllm", "aiperf", "../escape", "vllm"],
        "date": ["2026-02-13T08:03:39", "2026-02-13", "2025-12-01", "2026-01-01", None],
        "tok_s_per_user": [10.0, 20.0, 30.0, 40.0, 50.0],
    })
    paths = write_outputs(_result(points), tmp_path, partition=True)
    folder = paths["points_dataset"]
    assert folder == tmp_path / "points"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet"))
    assert "tool=vllm/day=2026-02-13/part-0.parquet" in files and len(files) == 4
    assert all(p.resolve().is_relative_to(folder.resolve()) for p in folder.rglob("*"))  # '../' stays a name
    back = _read(folder).sort_values("tok_s_per_user").reset_index(drop=True)
    assert list(back["tok_s_per_user"]) == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert list(back["tool"]) == ["vllm", "vllm", "aiperf", "../escape", "vllm"]
    assert list(back["date"].iloc[:4]) == list(points["date"].iloc[:4])  # the full date, time included, is kept
    assert list(back["day"].iloc[:4]) == ["2026-02-13", "2026-02-13", "2025-12-01", "2026-01-01"]
    assert back["day"].iloc[4] == "unknown"

    # a second write with fewer rows leaves no stale partition
    write_outputs(_result(points.iloc[:1]), tmp_path, partition=True)
    assert [p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")] == [
        "tool=vllm/day=2026-02-13/part-0.parquet"]


def test_partitioned_requests_take_the_tool_and_date_of_their_file(tmp_path):
    result = ingest([JSONL_RUN], manifest=None)
    assert len(result.requests) == 195
    paths = write_outputs(result, tmp_path, partition=True)
    back = _read(paths["requests_dataset"])
    assert len(back) == 195 and set(back["tool"]) == {"aiperf"}
    # the JSONL's point comes from the aggregate JSON beside it: the requests take that run's date
    run_dates = result.points.loc[result.points["source_file"].str.startswith(
        result.requests["source_file"].iloc[0].rpartition("/")[0]), "date"]
    assert len(run_dates) >= 1 and set(back["day"]) == {str(run_dates.iloc[0])[:10]} != {"unknown"}
    np.testing.assert_allclose(np.sort(back["ttft_ms"].to_numpy()), np.sort(result.requests["ttft_ms"].to_numpy()))
    pd.testing.assert_frame_equal(_read(paths["points_dataset"])[["tok_s_per_user"]].reset_index(drop=True),
                                  result.points[["tok_s_per_user"]].reset_index(drop=True), check_dtype=False)


def test_a_points_folder_perfclaims_did_not_write_is_left_alone(tmp_path):
    mine = tmp_path / "points"
    mine.mkdir()
    (mine / "notes.md").write_text("keep me")
    points = pd.DataFrame({"tool": ["vllm"], "date": ["2026-01-01"], "tok_s_per_user": [1.0]})

    with pytest.raises(ValueError, match="not a dataset perfclaims wrote"):
        write_outputs(_result(points), tmp_path, partition=True)
    assert (mine / "notes.md").read_text() == "keep me"
