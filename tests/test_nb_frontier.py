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
        slowest = min(front, key=lambda i: (u[i], -g[i]))
        out[f"{hw} · {prec} · {scope}"] = {
            "capacity": {f"{t}": log_interp([u[i] for i in front], [g[i] for i in front], t) for t in TARGETS},
            "lower_bound": {f"{t}": g[slowest] if t < u[slowest] else math.nan for t in TARGETS},
            "fastest_point": {"tok_s_per_user": u[fastest], "tok_s_per_gpu": g[fastest],
                              "concurrency": grp["concurrency"].iloc[fastest], "n_gpus": grp["n_gpus"].iloc[fastest],
                              "ttft_ms_p50": grp["ttft_ms_p50"].iloc[fastest]},
            "n_gpus_range": [grp["n_gpus"].iloc[front].min(), grp["n_gpus"].iloc[front].max()],
            "n_over_ttft": int((grp["ttft_ms_p50"].iloc[front] > 10_000).sum()),
            "n_frontier": len(front),
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
        for t, value in exp["lower_bound"].items():
            got = results["capacity_lower_bound"][label][t]
            if math.isnan(value):
                assert got is None, (label, t)
            else:
                assert got == pytest.approx(value) and results["capacity_reading"][label][t] == "lower bound"
        end = results["fastest_point"][label]
        for key in ("tok_s_per_user", "tok_s_per_gpu", "ttft_ms_p50"):
            assert end[key] == pytest.approx(exp["fastest_point"][key]), (label, key)
        assert end["concurrency"] == exp["fastest_point"]["concurrency"]
        assert end["n_gpus"] == exp["fastest_point"]["n_gpus"]
        assert results["n_gpus_range"][label] == exp["n_gpus_range"]
    n_over = sum(e["n_over_ttft"] for e in expected.values())
    n_front = sum(e["n_frontier"] for e in expected.values())
    assert results["n_frontier_over_ttft_limit"] == n_over and results["n_frontier_points"] == n_front
    assert f"{n_over} of {n_front} frontier points wait more than 10 s" in results["headline"]
    return reached


@pytest.fixture(scope="module")
def points_file(raw_points, tmp_path_factory):
    path = tmp_path_factory.mktemp("frontier") / "points.parquet"
    raw_points.to_parquet(path)
    return path


def test_frontier_notebook_tables_capacity_at_50_100_200_and_fastest_points(notebook_runner, raw_points,
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
    # B300 fp4 node starts at 52.6 tok/s/user: blank at 50 in the numbers, a lower bound in the prose
    assert results["capacity"]["B300 · fp4 · node"]["50"] is None
    assert results["capacity_reading"]["B300 · fp4 · node"]["50"] == "lower bound"
    assert "B300 · fp4 · node ≥ 787" in results["prose"]
    assert results["n_gpus_range"]["GB300 NVL72 · fp4 · rack"] == [12, 48]


def test_frontier_notebook_with_decode_denominator_8k1k(notebook_runner, raw_points, points_file):
    results = notebook_runner("20-frontier", points_path=str(points_file), isl=8192, osl=1024,
                              denominator="decode")
    expected = expected_groups(raw_points, isl=8192, osl=1024, denominator="decode")
    assert _check(results, expected) > 20
    assert "decode GPUs only" in results["headline"]
    # the fastest B200 fp8 multi-node point decodes at 154 tok/s/user but waits 79 s for its first token
    assert "B200 · fp8 · multi-node 154 tok/s/user at concurrency 256 with TTFT p50 79 s" in \
        results["fastest_points_prose"]


def test_frontier_notebook_ttft_max_ms_drops_long_waits(notebook_runner, raw_points, points_file):
    results = notebook_runner("20-frontier", points_path=str(points_file), isl=8192, osl=1024, ttft_max_ms=10_000)
    assert results["n_frontier_over_ttft_limit"] == 0
    end = results["fastest_point"]["B200 · fp8 · multi-node"]
    assert end["ttft_ms_p50"] <= 10_000 and end["tok_s_per_user"] < 154
