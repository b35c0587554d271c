"""The scale benchmark's fit timing: serial and parallel runs of the same groups, budgets and pilots."""

from __future__ import annotations

import importlib.util

import pandas as pd
from conftest import ROOT

from analysis import data


def _scale():
    spec = importlib.util.spec_from_file_location("bench_scale_fit", ROOT / "bench" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scale = _scale()


def test_the_target_size_is_measured_whole_when_it_meets_the_target():
    assert scale.budget_for(1_000, 25.0) == 25.0
    assert scale.budget_for(10_000, 25.0) == scale.TARGET_BUDGET_S > scale.FIT_TARGET_S
    assert scale.budget_for(10_000, 120.0) == 120.0
    assert scale.pilot_size(100) == 100 and scale.pilot_size(1_000) == scale.MIN_PILOT
    assert scale.pilot_size(10_000) == 1_000


def test_serial_and_parallel_timings_fit_the_same_groups(monkeypatch):
    from analysis.scaling import workers

    points = data.load_points()
    blocks = scale.fittable_blocks(points[points["tool"] == points["tool"].mode()[0]].head(200))
    assert blocks
    table = scale.synthetic_table(blocks, 60)
    by = scale.fit_keys(table) + [scale.COPY]
    monkeypatch.setattr(workers, "MIN_GROUPS_PER_WORKER", 10)
    pilots: list = []
    kwargs = {"n_boot": 20}
    serial = scale.time_fit(table, by, kwargs, budget_s=60.0, jobs=1, pilot=20, keep=pilots)
    parallel = scale.time_fit(table, by, kwargs, budget_s=60.0, jobs=2, pilot=20, keep=pilots)
    assert serial["jobs"] == 1 and parallel["jobs"] == 2
    for r in (serial, parallel):
        assert r["groups"] == r["measured_groups"] == r["fitted"] == 60 and not r["projected"]
        assert r["per_group_s"] == r["seconds"] / 60 and r["cpu_s"] > 0
    assert len(pilots) == 2 and len(pilots[0].table) == 20 and scale.compare_fits(*pilots)
    changed = pilots[1].table.copy()
    changed.loc[0, "t0_ms"] *= 1 + 1e-12
    assert not scale.compare_fits(pilots[0], type(pilots[1])(changed, pilots[1].draws))
    assert pd.api.types.is_float_dtype(pilots[0].draws["t0_ms"])
