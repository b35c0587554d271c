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
    assert pair["ratio_single_user_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
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
    assert env["ratio_single_user_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
    medians = [v["ratio_median"] for v in results["precision_envelope"].values() if v["ratio_median"] is not None]
    assert f"{min(medians):.2f}–{max(medians):.2f}×" in results["headline"]

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
    assert row["reference_keeps"] == pytest.approx(log_interp(un, gn, 50) / log_interp(ur, gr, 50))
    assert row["status"] == "measured"
    not_measured = [r for r in results["scope"] if r["status"] != "measured"]
    assert not_measured and all(r["reference_keeps"] is None for r in not_measured)
    assert results["single_gpu_measured"] is False
    assert results["denominator"] == "all"
