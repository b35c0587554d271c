"""20-frontier executed under papermill on the InferenceX snapshot; every number read back and recomputed here."""

from __future__ import annotations

import math

import pytest

from test_frontier import brute_force_front, log_interp

TARGETS = [50, 100, 200]


def expected_groups(points, *, isl, osl, denominator):
    """Per hardware · precision · scope: brute-force frontier, tok/s/GPU at each target, the fastest point."""
    sel = points[(points["format"] == "inferencex-api") & (points["model"] == "DeepSeek-R1-0528")
                 & (points["isl"] == isl) & (points["osl"] == osl) & points["output_tok_s"].notna()
                 & ~points["flags"].str.contains("failed-run|inconsistent-throughput")]
    out = {}
    for (hw, prec, scope), grp in sel.groupby(["hardware", "precision", "scope"]):
        gpus = grp["n_gpus"]
        if denominator == "decode":
            gpus = gpus.where(~grp["disagg"].astype(bool), grp["n_decode_gpus"])
        u, g = grp["tok_s_per_user"].to_list(), (grp["output_tok_s"] / gpus).to_list()
        front = sorted(brute_force_front(u, g))
        fastest = max(range(len(u)), key=lambda i: u[i])
        out[f"{hw} · {prec} · {scope}"] = {
            "capacity": {f"{t}": log_interp([u[i] for i in front], [g[i] for i in front], t) for t in TARGETS},
            "single_user_end": {"tok_s_per_user": u[fastest], "tok_s_per_gpu": g[fastest],
                                "concurrency": grp["concurrency"].iloc[fastest]},
        }
    return out


def _check(results, expected):
    assert sorted(results["groups"]) == sorted(expected)
    reached = 0
    for label, exp in expected.items():
        for t, value in exp["capacity"].items():
            got = results["capacity"][label][t]
            if math.isnan(value):
                assert got is None, (label, t)
            else:
                assert got == pytest.approx(value, rel=1e-9), (label, t)
                reached += 1
        end = results["single_user_end"][label]
        assert end["tok_s_per_user"] == pytest.approx(exp["single_user_end"]["tok_s_per_user"])
        assert end["tok_s_per_gpu"] == pytest.approx(exp["single_user_end"]["tok_s_per_gpu"])
        assert end["concurrency"] == exp["single_user_end"]["concurrency"]
    return reached


@pytest.fixture(scope="module")
def points_file(raw_points, tmp_path_factory):
    path = tmp_path_factory.mktemp("frontier") / "points.parquet"
    raw_points.to_parquet(path)
    return path


def test_frontier_notebook_tables_capacity_at_50_100_200_and_single_user_ends(notebook_runner, raw_points,
                                                                             points_file):
    results = notebook_runner("20-frontier", points_path=str(points_file))
    expected = expected_groups(raw_points, isl=1024, osl=1024, denominator="all")
    assert len(expected) == 22
    reached = _check(results, expected)
    assert reached == 42  # groups × targets that the measured frontiers reach (20 + 18 + 4)
    assert results["denominator"] == "all" and results["targets"] == TARGETS
    assert "all GPUs (prefill + decode)" in results["headline"]
    # the headline's example: B200 fp4 node at 50 tok/s/user, between concurrency 128 and 64 points
    assert results["capacity"]["B200 · fp4 · node"]["50"] == pytest.approx(
        expected["B200 · fp4 · node"]["capacity"]["50"])


def test_frontier_notebook_with_decode_denominator_8k1k(notebook_runner, raw_points, points_file):
    results = notebook_runner("20-frontier", points_path=str(points_file), isl=8192, osl=1024,
                              denominator="decode")
    expected = expected_groups(raw_points, isl=8192, osl=1024, denominator="decode")
    assert _check(results, expected) > 20
    assert "decode GPUs only" in results["headline"]
