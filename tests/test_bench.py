"""The benchmark's own machinery: synthetic tables have the groups, rows and noise they claim, the time budget
projects from what it measured, and the [bench] extra is pinned like every other dependency."""

from __future__ import annotations

import importlib.util
import tomllib

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scale = _load("scale")


def _points() -> pd.DataFrame:
    """Two groups of one model: A has four batch sizes, B only two."""
    rows = []
    for fw, batches in (("A", [1, 2, 4, 8]), ("B", [1, 2])):
        for b in batches:
            rows.append({"model": "m", "hardware": "h", "precision": "fp8", "framework": fw, "phase": "decode",
                         "batch_size": float(b), "step_ms": 10.0 + 0.5 * b, "context_len": 1024.0,
                         "tok_s_per_user": 1000.0 / (10.0 + 0.5 * b), "tok_s_per_gpu": b * 1000.0 / (10.0 + 0.5 * b),
                         "ttft_ms_p50": 100.0})
    return pd.DataFrame(rows)


def test_noise_scales_latencies_up_and_throughputs_down_by_one_factor_per_row():
    pts = _points()
    noisy = scale.with_noise(pts, np.random.default_rng(3), sigma=0.1)
    factor = noisy["step_ms"] / pts["step_ms"]
    assert not np.allclose(factor, 1.0)
    np.testing.assert_allclose(noisy["ttft_ms_p50"] / pts["ttft_ms_p50"], factor)
    np.testing.assert_allclose(noisy["tok_s_per_user"] * factor, pts["tok_s_per_user"])
    np.testing.assert_allclose(noisy["tok_s_per_gpu"] * factor, pts["tok_s_per_gpu"])
    assert noisy["batch_size"].equals(pts["batch_size"])  # the configuration is not noise


def test_synthetic_table_cycles_blocks_into_distinct_groups():
    a, b = _points().iloc[:4], _points().iloc[4:]
    table = scale.synthetic_table([a, b], 5, seed=0)
    assert len(table) == 4 + 2 + 4 + 2 + 4
    assert table.groupby(["framework", scale.COPY]).ngroups == 5
    assert list(table.groupby(scale.COPY)["framework"].first()) == ["A", "B", "A", "B", "A"]
    again = scale.synthetic_table([a, b], 5, seed=0)
    pd.testing.assert_frame_equal(table, again)  # seeded
    assert not table.loc[table[scale.COPY] == 0, "step_ms"].equals(
        table.loc[table[scale.COPY] == 2, "step_ms"].set_axis(range(4)))


def test_fittable_blocks_keep_only_groups_with_three_batch_sizes():
    blocks = scale.fittable_blocks(_points())
    assert len(blocks) == 1 and set(blocks[0]["framework"]) == {"A"} and len(blocks[0]) == 4


def test_frontier_table_has_exactly_the_points_asked_for():
    pts = _points()
    table = scale.frontier_table(pts, 15)
    assert len(table) == 15 and table[scale.COPY].max() == 2  # 6 usable rows per copy


def test_budget_projects_from_the_units_it_ran():
    calls = []

    def work(units):  # 2 s per unit, 1 CPU s, one result each
        calls.append(len(units))
        return 2.0 * len(units), 1.0 * len(units), len(units)

    r = scale.in_budget(100, work, budget_s=30.0, pilot=4)
    assert r["projected"] and r["measured_units"] == sum(calls) < 100
    assert r["seconds"] == pytest.approx(200.0) and r["cpu_s"] == pytest.approx(100.0)
    assert sum(calls[:-1]) * 2.0 < 30.0 <= sum(calls) * 2.0 + 2.0
    calls.clear()
    r = scale.in_budget(10, work, budget_s=30.0, pilot=4)  # 20 s in all: the whole run is measured in one call
    assert not r["projected"] and r["measured_units"] == 10 and calls == [4, 10] and r["seconds"] == 20.0


def test_bench_extra_is_pinned_in_the_lock():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = {ln.split("==")[0].lower() for ln in (ROOT / "requirements.lock").read_text().splitlines()
            if ln and not ln.startswith("#")}
    assert set(project["optional-dependencies"]["bench"]) == {"msgspec", "polars"}
    assert {"msgspec", "polars"} <= lock


suite = _load("suite_speed")


def test_change_one_value_raises_the_first_ttft_by_one_percent(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('{"conc": 4, "mean_ttft": 0.25, "median_ttft": 0.5}')
    said = suite.change_one_value(path)
    import json

    doc = json.loads(path.read_text())
    assert doc == {"conc": 4, "mean_ttft": pytest.approx(0.2525), "median_ttft": 0.5}
    assert "mean_ttft 0.25 -> 0.2525" in said
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    suite.change_one_value(other)
    assert other.read_text() == '{"a": 1}\n'


def test_default_touched_file_has_a_ttft_to_change():
    assert suite.NUMBER.search((ROOT / "data" / "raw" / suite.DEFAULT_TOUCH).read_bytes())


def test_make_root_copies_inputs_and_nothing_computed(tmp_path):
    src = tmp_path / "src"
    for rel in ("data/raw/a.json", "data/specs/s.csv", "data/claims/C00.yaml", "notebooks/x.ipynb",
                "data/processed/points.parquet", "reports/index.html"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(rel)
    root = suite.make_root(tmp_path / "root", source=src)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == ["data/claims/C00.yaml", "data/raw/a.json", "data/specs/s.csv", "notebooks/x.ipynb"]
    assert (root / "data" / "processed").is_dir()


def test_progress_lines_of_the_runner_are_read():
    text = ("[1/4] 01-ingest ... ok (3 s)\n[2/4] 20-frontier ... failed (7 s)  ValueError: bad (2 s)\n"
            "[3/4] 50-claim-card-C00 ... warning from the kernel\nmore noise ok\nok (4 s)\n"
            "[4/4] 50-claim-card-C01 ... \n3 of 4 reports written; index: x\n")
    got = [(r["name"], r["status"], r["seconds"]) for r in suite.progress(text)]
    assert got[:3] == [("01-ingest", "ok", 3.0), ("20-frontier", "failed", 7.0), ("50-claim-card-C00", "ok", 4.0)]
    assert got[3][:2] == ("50-claim-card-C01", "unknown")
    other = "  10-batch-scaling unchanged since 2026-12-01 (0.1 s)\n  01-ingest ok (2.5 s)\n"
    assert [(r["name"], r["status"], r["seconds"]) for r in suite.progress(other)] == [
        ("10-batch-scaling", "unchanged", 0.1), ("01-ingest", "ok", 2.5)]
