"""Fitting groups in worker processes: the pooled result is the serial one, number for number, and the pool is
used only when every worker gets enough groups to pay for it."""

from __future__ import annotations

import os
import warnings

import pandas as pd
import pytest
from conftest import RAW

from analysis import data, scaling
from analysis.scaling import workers


def _fit(points, floors, jobs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", scaling.ScalingWarning)
        result = scaling.fit_with_draws(points, n_boot=40, seed=5, floors=floors, jobs=jobs)
    return result, [str(w.message) for w in caught if issubclass(w.category, scaling.ScalingWarning)]


def test_two_workers_give_the_serial_fits_draws_and_warnings_exactly(monkeypatch):
    points = data.load_points()
    floors = scaling.floor_inputs(data.load_calibration(RAW / "h200"), points=points)
    serial, serial_warnings = _fit(points, floors, jobs=1)
    monkeypatch.setattr(workers, "MIN_GROUPS_PER_WORKER", 20)  # the shipped table is below the real threshold
    assert workers.resolve_jobs(2, len(serial.table)) == 2
    pooled, pooled_warnings = _fit(points, floors, jobs=2)
    assert (serial.table["status"] == "fitted").sum() > 50 and len(serial.draws) > 50 * 30
    pd.testing.assert_frame_equal(pooled.table, serial.table, check_exact=True)
    pd.testing.assert_frame_equal(pooled.draws, serial.draws, check_exact=True)
    # Degenerate fits warn in the workers; the caller sees the same warnings in the same (group) order.
    assert serial_warnings and pooled_warnings == serial_warnings


def _pid(items):
    return [(item, os.getpid()) for item in items]


def test_chunks_run_in_other_processes_and_come_back_in_order(monkeypatch):
    monkeypatch.setattr(workers, "MIN_GROUPS_PER_WORKER", 10)
    out = workers.run(_pid, list(range(100)), {}, jobs=2)
    assert [item for item, _ in out] == list(range(100))
    pids = {pid for _, pid in out}
    # never the calling process; at most the two workers (a busy machine may let one worker take every chunk)
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_small_tables_are_fitted_in_the_calling_process():
    assert workers.resolve_jobs(None, workers.MIN_GROUPS_PER_WORKER * 2 - 1) == 1
    assert workers.resolve_jobs(8, workers.MIN_GROUPS_PER_WORKER * 3) == 3
    assert workers.resolve_jobs(1, 10**6) == 1
    assert [pid for _, pid in workers.run(_pid, list(range(5)), {}, jobs=2)] == [os.getpid()] * 5
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        workers.resolve_jobs(0, 1000)


def test_chunks_cover_every_item_once_in_order():
    items = list(range(1234))
    parts = workers.chunks(items, 2)
    assert [x for part in parts for x in part] == items
    assert len(parts) == 2 * workers.CHUNKS_PER_WORKER
    assert min(len(p) for p in parts) >= workers.MIN_GROUPS_PER_WORKER // 2


def test_cli_fit_jobs_gives_the_same_csv_and_states_its_threshold(tmp_path, monkeypatch, capsys):
    import argparse

    from analysis.cli import build_parser, main

    points_file = tmp_path / "points.parquet"
    data.load_points().to_parquet(points_file)
    monkeypatch.setattr(workers, "MIN_GROUPS_PER_WORKER", 20)
    csv = {}
    for jobs in ("1", "2"):
        assert main(["fit", str(points_file), "--n-boot", "20", "--step-logs", "", "--jobs", jobs]) == 0
        csv[jobs] = capsys.readouterr().out
    assert csv["1"].count("\n") > 300 and csv["2"] == csv["1"]
    assert main(["fit", str(points_file), "--jobs", "0"]) == 2
    assert "--jobs must be >= 1" in capsys.readouterr().err
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    jobs = next(a for a in sub.choices["fit"]._actions if a.dest == "jobs")
    monkeypatch.undo()
    assert f"fewer than {workers.MIN_GROUPS_PER_WORKER} groups per worker" in jobs.help


def _fail_on_13(items):
    if 13 in items:
        raise RuntimeError("item 13 failed")
    return list(items)


def test_a_failing_chunk_raises_in_the_caller(monkeypatch):
    monkeypatch.setattr(workers, "MIN_GROUPS_PER_WORKER", 10)
    with pytest.raises(RuntimeError, match="item 13 failed"):
        workers.run(_fail_on_13, list(range(100)), {}, jobs=2)
    assert workers._RUNS == {}
    assert workers.run(_fail_on_13, list(range(20, 120)), {}, jobs=2) == list(range(20, 120))
