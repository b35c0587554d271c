"""30-precision-scope executed under papermill; ratios, step pairs and scope numbers recomputed here."""

from __future__ import annotations

import numpy as np
import pytest

from test_compare import side_front
from test_frontier import log_interp


@pytest.fixture(scope="module")
def points_file(raw_points, tmp_path_factory):
    path = tmp_path_factory.mktemp("precision") / "points.parquet"
    raw_points.to_parquet(path)
    return path


def test_precision_scope_notebook_numbers(notebook_runner, raw_points, points_file):
    results = notebook_runner("30-precision-scope", points_path=str(points_file))
    snap = raw_points[(raw_points["format"] == "inferencex-api") & (raw_points["model"] == "DeepSeek-R1-0528")
                      & (raw_points["isl"] == 1024) & (raw_points["osl"] == 1024)]

    # every strictly matched fp4/fp8 pair, with its ratios and confounders
    assert results["n_matched_pairs"] == len(results["matched_pairs"]) == 21
    assert results["n_matched_with_overlap"] == 17
    pair = results["matched_pairs"]["B200 · trt · node · none"]
    key = dict(hardware="B200", framework="trt", scope="node", spec_decode="none")
    ua, ga = side_front(snap, "fp4", **key)
    ub, gb = side_front(snap, "fp8", **key)
    lo, hi = max(min(ua), min(ub)), min(max(ua), max(ub))
    assert pair["ratio_fastest_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
    assert pair["ratio_capacity_end"] == pytest.approx(log_interp(ua, ga, lo) / log_interp(ub, gb, lo))
    grid = np.geomspace(lo, hi, 25)
    grid[0], grid[-1] = lo, hi
    ratios = [log_interp(ua, ga, t) / log_interp(ub, gb, t) for t in grid]
    assert pair["ratio_median"] == pytest.approx(np.median(ratios))
    assert pair["confounders"] == "date, image"
    for label, p in results["matched_pairs"].items():
        assert p["confounders"], label

    # hardware × scope envelopes: GB200 NVL72 rack fp4 against fp8
    env = results["precision_envelope"]["GB200 NVL72 · rack"]
    ua, ga = side_front(snap, "fp4", hardware="GB200 NVL72", scope="rack")
    ub, gb = side_front(snap, "fp8", hardware="GB200 NVL72", scope="rack")
    hi = min(max(ua), max(ub))
    assert env["ratio_fastest_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
    medians = [v["ratio_median"] for v in results["precision_envelope"].values() if v["ratio_median"] is not None]
    assert f"between {min(medians):.2f}× and {max(medians):.2f}×" in results["headline_detail"]
    # the headline quotes the full range, values below 1 included, and never says "fp4 gives"
    lows = [v["ratio_min"] for v in results["precision_envelope"].values() if v["ratio_min"] is not None]
    highs = [v["ratio_max"] for v in results["precision_envelope"].values() if v["ratio_max"] is not None]
    assert min(lows) < 1
    assert f"ranges from {min(lows):.2f}× to {max(highs):.2f}×" in results["headline"]
    assert "fp4 gives" not in results["headline"]
    clean = [p["ratio_median"] for p in results["matched_pairs"].values()
             if p["ratio_median"] is not None and set(p["confounders"].split(", ")) <= {"date", "image", "none"}]
    assert len(clean) == 2
    assert f"{min(clean):.2f}–{max(clean):.2f}× (median {np.median(clean):.2f}×)" in results["headline_detail"]
    # 200 tok/s/user has bars for only a few groups: no panel for it
    assert results["bar_targets"] == [50, 100] and results["scope_bar_targets"] == [50, 100]

    # H200: bf16 against fp8 at equal batch and context, fp8 slower everywhere
    steps = raw_points[(raw_points["format"] == "h200-steps-jsonl") & (raw_points["phase"] == "decode")]
    keys = ["model", "framework", "batch_size", "context_len"]
    fp8 = steps[steps["precision"] == "fp8"].set_index(keys)["step_ms"]
    bf16 = steps[steps["precision"] == "bf16"].set_index(keys)["step_ms"]
    ratio = (bf16 / fp8).dropna()
    eight = ratio.xs(("llama-3.1-8b", "pytorch-cudagraph", 1024.0), level=["model", "framework", "context_len"])
    h200 = results["h200_fp8_over_bf16"]["llama-3.1-8b · pytorch-cudagraph · 1024"]
    assert h200["ratio_median"] == pytest.approx(eight.median())
    assert h200["ratio_max"] == pytest.approx(eight.max()) and h200["ratio_max"] < 1
    assert h200["n_batches"] == len(eight) == 10
    assert all(v["ratio_max"] < 1 for v in results["h200_fp8_over_bf16"].values())

    # scope: what one B200 node keeps of the GB200 NVL72 rack at 50 tok/s/user, fp8
    row = next(r for r in results["scope"] if r["gpu_family"] == "B200" and r["precision"] == "fp8"
               and r["hardware"] == "GB200 NVL72" and r["scope"] == "rack" and r["target_tok_s_per_user"] == 50)
    ur, gr = side_front(snap, "fp8", hardware="GB200 NVL72", scope="rack")
    un, gn = side_front(snap, "fp8", hardware="B200", scope="node")
    assert row["reference_over_scope"] == pytest.approx(log_interp(un, gn, 50) / log_interp(ur, gr, 50))
    assert row["status"] == "measured"
    better = "node" if row["reference_over_scope"] > 1 else "rack deployment"
    assert f"node ÷ rack = {row['reference_over_scope']:.2f}× (the {better} is better per GPU here)" in \
        results["scope_prose"]
    not_measured = [r for r in results["scope"] if r["status"] != "measured"]
    assert not_measured and all(r["reference_over_scope"] is None for r in not_measured)
    assert results["single_gpu_measured"] is False
    assert results["denominator"] == "all"
