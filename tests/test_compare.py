"""Matched precision pairs, confounders, step-timing pairs and scope comparisons on the shipped data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_frontier import brute_force_front, log_interp

from analysis import compare, compare_words, uncertainty
from analysis import frontier as fr
from analysis.pages import precision_scope as page
from analysis.schema import to_points

STRICT = ["hardware", "framework", "scope", "spec_decode"]


@pytest.fixture(scope="module")
def snapshot_1k1k(raw_points):
    return fr.select(raw_points, model="DeepSeek-R1-0528", isl=1024, osl=1024, source_format="inferencex-api")


def side_front(points, precision, **key):
    """Brute-force frontier (u, g) of one side of a pair, g = output tok/s ÷ all GPUs."""
    sel = points[(points["precision"] == precision) & points["output_tok_s"].notna()]
    for col, value in key.items():
        sel = sel[sel[col] == value]
    u, g = sel["tok_s_per_user"].to_list(), (sel["output_tok_s"] / sel["n_gpus"]).to_list()
    keep = sorted(brute_force_front(u, g))
    return [u[i] for i in keep], [g[i] for i in keep]


def test_every_fp4_fp8_pair_in_the_snapshot_is_compared(snapshot_1k1k):
    pairs = compare.precision_pairs(snapshot_1k1k)
    usable = snapshot_1k1k[snapshot_1k1k["output_tok_s"].notna()]
    both = usable.groupby(STRICT)["precision"].agg(lambda s: {"fp4", "fp8"} <= set(s))
    assert len(pairs) == int(both.sum()) == 21
    assert set(map(tuple, pairs[STRICT].to_numpy())) == set(both[both].index)
    with_ratio = pairs["ratio_median"].notna()
    assert with_ratio.sum() == 17
    assert pairs.loc[~with_ratio, "note"].str.startswith("no overlapping tok/s/user range").all()
    assert (pairs["confounders"] != "").all()


def test_pair_ratios_match_independent_frontier_interpolation(snapshot_1k1k):
    pairs = compare.precision_pairs(snapshot_1k1k, targets=[50, 100])
    checked = 0
    for _, row in pairs[pairs["ratio_median"].notna()].iterrows():
        key = {c: row[c] for c in STRICT}
        ua, ga = side_front(snapshot_1k1k, "fp4", **key)
        ub, gb = side_front(snapshot_1k1k, "fp8", **key)
        lo, hi = max(min(ua), min(ub)), min(max(ua), max(ub))
        assert row["overlap_tok_s_per_user_lo"] == pytest.approx(lo)
        assert row["overlap_tok_s_per_user_hi"] == pytest.approx(hi)
        assert row["ratio_fastest_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
        assert row["ratio_capacity_end"] == pytest.approx(log_interp(ua, ga, lo) / log_interp(ub, gb, lo))
        levels = np.geomspace(lo, hi, 25)[1:-1]
        ratios = [log_interp(ua, ga, t) / log_interp(ub, gb, t) for t in levels]
        assert row["ratio_min"] <= min(ratios) + 1e-9 and row["ratio_max"] >= max(ratios) - 1e-9
        for t in (50, 100):
            expected = log_interp(ua, ga, t) / log_interp(ub, gb, t) if lo <= t <= hi else math.nan
            assert row[f"ratio_at_{t}"] == pytest.approx(expected, nan_ok=True)
        checked += 1
    assert checked == 17


def test_confounders_name_what_else_differs():
    base = dict(model="m", hardware="H", framework="f", scope="node", isl=1024, osl=1024, spec_decode="none",
                n_gpus=8, n_decode_gpus=8, tp=8, ep=1, dp=1, date="2026-01-01", tool_version="img:1")
    rows = [
        {**base, "precision": "fp8", "tok_s_per_user": 100.0, "output_tok_s": 800.0, "concurrency": 8},
        {**base, "precision": "fp8", "tok_s_per_user": 50.0, "output_tok_s": 3200.0, "concurrency": 64},
        {**base, "precision": "fp4", "tok_s_per_user": 120.0, "output_tok_s": 1600.0, "concurrency": 8,
         "tp": 4, "n_gpus": 4, "n_decode_gpus": 4},
        {**base, "precision": "fp4", "tok_s_per_user": 60.0, "output_tok_s": 4000.0, "concurrency": 64,
         "tp": 4, "n_gpus": 4, "n_decode_gpus": 4, "date": "2026-02-01"},
    ]
    pair = compare.precision_pairs(to_points(rows), targets=[75]).iloc[0]
    assert pair["confounders"] == "tp, GPUs, decode GPUs, date"
    assert "tp 4 vs 8" in pair["confounder_detail"]
    assert "date 2026-01-01,2026-02-01 vs 2026-01-01" in pair["confounder_detail"]
    # fp4: 400 at 120, 1000 at 60; fp8: 100 at 100, 400 at 50; overlap 60..100
    fp4_at_75 = math.exp(np.interp(math.log(75), [math.log(60), math.log(120)], [math.log(1000), math.log(400)]))
    fp8_at_75 = math.exp(np.interp(math.log(75), [math.log(50), math.log(100)], [math.log(400), math.log(100)]))
    assert pair["ratio_at_75"] == pytest.approx(fp4_at_75 / fp8_at_75)
    assert (pair["overlap_tok_s_per_user_lo"], pair["overlap_tok_s_per_user_hi"]) == (60.0, 100.0)


def test_no_confounder_when_only_precision_differs():
    base = dict(model="m", hardware="H", framework="f", scope="node", isl=1, osl=1, spec_decode="none", n_gpus=8,
                tp=8, date="d", tool_version="i", concurrency=4)
    rows = [{**base, "precision": p, "tok_s_per_user": u, "output_tok_s": o}
            for p, u, o in [("fp8", 100.0, 800.0), ("fp8", 50.0, 1600.0), ("fp4", 100.0, 1600.0), ("fp4", 50.0, 3200.0)]]
    pair = compare.precision_pairs(to_points(rows)).iloc[0]
    assert pair["confounders"] == "none"
    assert pair["ratio_min"] == pytest.approx(2.0) and pair["ratio_max"] == pytest.approx(2.0)


def test_a_pair_whose_sides_drafted_different_tokens_per_step_is_not_clean():
    base = dict(model="m", hardware="H", framework="f", scope="node", isl=1, osl=1, spec_decode="mtp",
                spec_method="mtp", n_gpus=8, tp=8, date="d", tool_version="i", concurrency=4)
    rows = [{**base, "precision": p, "tok_s_per_user": u, "output_tok_s": o, "draft_tokens": d}
            for p, u, o, d in [("fp8", 100.0, 800.0, 3), ("fp8", 50.0, 1600.0, 3), ("fp4", 100.0, 1600.0, 1),
                               ("fp4", 50.0, 3200.0, 1)]]
    pair = compare.precision_pairs(to_points(rows)).iloc[0]
    assert pair["confounders"] == "drafts per step"
    assert pair["confounder_detail"] == "drafts per step 1 vs 3"
    assert compare.clean_pairs(compare.precision_pairs(to_points(rows))).empty
    same = [{**r, "draft_tokens": 3} for r in rows]
    assert compare.precision_pairs(to_points(same)).iloc[0]["confounders"] == "none"
    assert "drafted tokens per step (where known)" in page.held_equal_text()


def test_inferencex_mtp_rows_read_their_drafts_from_the_launch_recipe(raw_points):
    """InferenceX records no draft count: the B200 TensorRT-LLM MTP runs at ISL 8,192 / OSL 1,024 drafted 1 token
    per step on 4 GPUs with attention data-parallel and 3 on 8 GPUs without (data/specs/mtp-recipes.csv), and the
    page's pair names it beside the parallelism it already named."""
    sel = fr.select(raw_points, model="DeepSeek-R1-0528", isl=8192, osl=1024, source_format="inferencex-api")
    sel = sel[(sel["hardware"] == "B200") & (sel["framework"] == "trt") & (sel["spec_decode"] == "mtp")]
    filled = compare.with_draft_tokens(sel)
    assert sel["draft_tokens"].isna().all()
    drafts = filled.groupby("precision")["draft_tokens"].agg(lambda s: sorted(set(s.dropna())))
    assert 1.0 in drafts["fp4"] and drafts["fp8"] == [3.0]
    (pair,) = compare.precision_pairs(sel).to_dict("records")
    assert "drafts per step" in pair["confounders"].split(", ")
    assert "drafts per step 1" in pair["confounder_detail"]


def test_the_mi355x_atom_mtp_pair_that_drafted_1_against_3_is_no_longer_clean(raw_points):
    """MI355X ATOM MTP at ISL 8,192 / OSL 1,024: FP4 drafting 1 token per step (2026-05-20) against FP8 drafting 3
    (2026-06-02), 13 days apart on two images. Read as clean at 1.02x before the drafts were compared; now the
    8K/1K selection keeps one clean pair, and this one names what differs."""
    sel = fr.select(raw_points, model="DeepSeek-R1-0528", isl=8192, osl=1024, source_format="inferencex-api")
    pairs = compare.precision_pairs(sel)
    (atom,) = pairs[(pairs["hardware"] == "MI355X") & (pairs["framework"] == "atom")
                    & (pairs["spec_decode"] == "mtp")].to_dict("records")
    assert atom["confounders"] == "drafts per step, date, image"
    assert atom["confounder_detail"].startswith("drafts per step 1 vs 3; date 2026-05-20 vs 2026-06-02")
    assert atom["ratio_median"] == pytest.approx(1.02, abs=0.005)
    clean = compare.clean_pairs(pairs)
    assert len(clean) == 1 and not ((clean["hardware"] == "MI355X") & (clean["framework"] == "atom")).any()


def test_h200_fp8_is_slower_than_bf16_at_every_matched_batch(raw_points):
    pairs = compare.step_precision_pairs(raw_points)
    steps = raw_points[(raw_points["format"] == "h200-steps-jsonl") & (raw_points["phase"] == "decode")]
    keys = ["model", "framework", "batch_size", "context_len"]
    a = steps[steps["precision"] == "fp8"].set_index(keys)["step_ms"]
    b = steps[steps["precision"] == "bf16"].set_index(keys)["step_ms"]
    common = a.index.intersection(b.index)
    assert len(pairs) == len(common) == 34
    for _, row in pairs.iterrows():
        key = tuple(row[k] for k in keys)
        assert row["ratio"] == pytest.approx(b[key] / a[key])  # same batch, one GPU: tok/s ratio = step-time ratio
    assert (pairs["ratio"] < 1).all()
    summary = compare.summarize_step_pairs(pairs)
    graph70 = summary[(summary["model"] == "llama-3.1-70b-tp8-shard") & (summary["framework"] == "pytorch-cudagraph")]
    assert graph70["ratio_median"].iloc[0] == pytest.approx(
        np.median([b[k] / a[k] for k in common if k[0] == "llama-3.1-70b-tp8-shard" and k[1] == "pytorch-cudagraph"]))
    assert "slower than bf16 at every matched batch" in page.steps_text(summary)
    assert page.steps_title(pairs).endswith("fp8 slower at all 34 matched batches")
    # the sweep's unfused quantisation is named as its condition, not as the measured cause
    assert page.steps_title(pairs).startswith("One H200, bf16 against fp8 as the sweep ran it (activations quantised")
    assert "cost of unfused" not in page.steps_title(pairs) and "does not separate the two" in page.steps_text(summary)


def test_scope_capacity_marks_single_gpu_not_measured_and_reads_racks(snapshot_1k1k):
    cap = compare.scope_capacity(snapshot_1k1k, targets=[50, 100])
    single = cap[cap["scope"] == "single-gpu"]
    assert len(single) and (single["status"] == "not measured").all()
    rack = cap[(cap["hardware"] == "GB200 NVL72") & (cap["scope"] == "rack") & (cap["precision"] == "fp4")
               & (cap["target_tok_s_per_user"] == 50)]
    u, g = side_front(snapshot_1k1k, "fp4", hardware="GB200 NVL72", scope="rack")
    assert rack["tok_s_per_gpu"].iloc[0] == pytest.approx(log_interp(u, g, 50))
    assert set(cap.loc[cap["hardware"].isin(["GB200 NVL72", "B200"]), "gpu_family"]) == {"B200"}

    cmp = compare.scope_comparison(cap)
    row = cmp[(cmp["gpu_family"] == "B200") & (cmp["precision"] == "fp4") & (cmp["hardware"] == "GB200 NVL72")
              & (cmp["scope"] == "rack") & (cmp["target_tok_s_per_user"] == 50)].iloc[0]
    un, gn = side_front(snapshot_1k1k, "fp4", hardware="B200", scope="node")
    assert row["reference_over_scope"] == pytest.approx(log_interp(un, gn, 50) / log_interp(u, g, 50))
    assert row["status"] == "measured"
    # GPU counts along each frontier: the GB200 NVL72 "rack" frontier runs on 12 to 72 GPUs, the node on 4 to 8
    assert (row["n_gpus"], row["reference_n_gpus"]) == ("12–72", "4–8")
    h100 = cmp[cmp["gpu_family"] == "H100"]
    assert len(h100) and h100["status"].str.startswith("not measured").all()  # no single-node H100 rows


def test_denominator_effect_is_all_over_decode_gpus_of_frontier_points(snapshot_1k1k):
    fronts = fr.frontier(snapshot_1k1k, by=fr.REPORT_BY)
    effect = compare.denominator_effect(fronts)
    disagg = fronts[fronts["disagg"].astype(bool)]
    ratio = disagg["n_gpus"] / disagg["n_decode_gpus"]
    assert effect["decode_over_all_max"].max() == pytest.approx(ratio.max())
    assert effect["n_disaggregated"].sum() == len(disagg)
    node = effect[effect["scope"] == "node"]
    assert (node["decode_over_all_max"] == 1).all()


def test_scope_prose_says_which_side_is_better_per_gpu_only_as_far_as_its_interval_goes(snapshot_1k1k):
    """The rack and multi-node readings record no request count, so no scope ratio has an interval: none is called
    better per GPU, and each says which side lacks one. Given intervals, the same ratio's words follow them."""
    cap = compare.scope_capacity(snapshot_1k1k, targets=[50, 100])
    cmp = compare.scope_comparison(cap)
    text = page.scope_text(cmp, cap)
    row = cmp[(cmp["gpu_family"] == "B200") & (cmp["precision"] == "fp8") & (cmp["hardware"] == "B200")
              & (cmp["scope"] == "multi-node") & (cmp["target_tok_s_per_user"] == 100)].iloc[0]
    assert row["reference_over_scope"] == pytest.approx(3.36, abs=0.01)
    assert row["reference_over_scope_verdict"] == "unknown" and row["reference_over_scope_missing"] == "high"
    assert ("node ÷ multi-node = 3.36× (no interval: the multi-node reading has "
            "none: its points record no request count)") in text
    assert "node ÷ rack = 0.30× (no interval: the rack reading has none" in text
    assert "better per GPU here" not in text
    measured = cmp[cmp["status"] == "measured"]
    assert len(measured) and (measured["reference_over_scope_verdict"] == "unknown").all()
    wide = {**row.to_dict(), "reference_over_scope_lo": 0.9, "reference_over_scope_hi": 12.0,
            "reference_over_scope_verdict": "within-noise", "clean": True}
    assert "(within noise: neither is shown better per GPU)" in page._scope_line(pd.Series(wide), "node", page.text.esc)
    narrow = {**wide, "reference_over_scope_lo": 3.0, "reference_over_scope_hi": 3.7,
              "reference_over_scope_verdict": "higher"}
    assert ("node ÷ multi-node = 3.36×, 3.00–3.70× (higher) (the node is better per GPU here)"
            in page._scope_line(pd.Series(narrow), "node", page.text.esc))
    assert "keeps" not in text
    # every measured reading says what else differs: here the node runs aggregated, the multi-node disaggregated
    assert (cmp.loc[cmp["status"] == "measured", "confounders"] != "").all()
    assert "disaggregation" in row["confounders"]
    assert "disaggregation aggregated vs disaggregated" in row["confounder_detail"]
    assert text.count("Confounded by") == int((cmp["status"] == "measured").sum())
    # none is clean, so scope has no headline number
    headline = page.scope_headline(cmp)
    assert "no headline number" in headline and "÷ rack =" not in headline
    # B300 fp4 node starts at 52.6 tok/s/user: at 50 it is a lower bound, not a blank
    b300 = cap[(cap["hardware"] == "B300") & (cap["scope"] == "node") & (cap["precision"] == "fp4")
               & (cap["target_tok_s_per_user"] == 50)].iloc[0]
    assert np.isnan(b300["tok_s_per_gpu"]) and b300["reading"] == "lower bound"
    assert b300["lower_bound_tok_s_per_gpu"] == pytest.approx(786.95, abs=0.01)
    assert "≥ 787 tok/s/GPU (lower bound)" in b300["status"]


def test_widest_gap_and_close_levels_come_from_the_bracketing_points():
    a = pd.DataFrame({"tok_s_per_user": [10.0, 20.0, 100.0], "tok_s_per_gpu": [1000.0, 800.0, 50.0]})
    b = pd.DataFrame({"tok_s_per_user": [10.0, 30.0, 60.0, 100.0], "tok_s_per_gpu": [500.0, 300.0, 200.0, 100.0]})
    out = compare.compare_frontiers(a, b, targets=[15, 50], n_levels=25)
    assert out["widest_gap"] == pytest.approx(5.0)  # a's points at 20 and 100
    levels = fr.levels_in(10.0, 100.0, n=25)
    # above 20 every level is read across a's 5× gap, except 100 itself, which both sides measured
    close = levels[(levels <= 20.0) | (levels == 100.0)]
    ratios = fr.ratio_at(a, b, close)
    assert out["n_levels_close"] == len(close)
    assert out["ratio_min_close"] == pytest.approx(ratios.min()) and out["ratio_max_close"] == pytest.approx(ratios.max())
    assert out["ratio_at_15"] == pytest.approx(fr.capacity_at(a, [15])[0] / fr.capacity_at(b, [15])[0])


def test_precision_headline_is_the_clean_pairs_and_the_envelope_range_is_labelled_confounded(snapshot_1k1k):
    envelope = compare.precision_pairs(snapshot_1k1k, match=compare.ENVELOPE_MATCH)
    matched = compare.precision_pairs(snapshot_1k1k)
    summary = compare.precision_summary(envelope, matched)
    assert summary["ratio_min"] == pytest.approx(envelope["ratio_min"].min())
    assert summary["ratio_min"] == pytest.approx(0.2286, abs=1e-4)  # GB300 NVL72 rack
    assert summary["ratio_max"] == pytest.approx(envelope["ratio_max"].max())
    assert summary["ratio_max"] > 20
    assert summary["n_below_1"] == int((envelope["ratio_min"] < 1).sum()) == 4
    only_time = matched[matched["confounders"].isin(["date, image", "date", "image"]) & matched["ratio_median"].notna()]
    assert len(only_time) == 2  # B200 trt pools runs 198 days apart on several images: confounded in time
    clean = only_time[only_time["apart_in_time"] == ""]
    assert summary["n_clean"] == len(clean) == 1 and summary["n_apart_in_time"] == 1
    assert (summary["clean_min"], summary["clean_max"]) == (clean["ratio_median"].min(), clean["ratio_median"].max())
    assert summary["clean_median"] == pytest.approx(clean["ratio_median"].median())
    headline = page.precision_headline(summary, compare.clean_pairs(matched), model="DeepSeek-R1-0528", isl=1024,
                                       osl=1024, denominator_text="all GPUs")
    # one pair is named as one, not as a general factor, with the measured points its 25 levels are read between
    assert ("one clean pair only, MI355X · sglang · node · mtp, one hardware and engine, so no general fp4 ÷ fp8 "
            "factor: on it fp4 delivers 1.88× the tok/s/GPU of fp8 at equal tok/s/user (95% interval 1.81×–1.95×), "
            "the median of 25 levels over 68–86 tok/s/user, read between 2 measured fp4 and 2 measured fp8 frontier "
            "points (single levels 1.70× to 2.08×, every one of the 25 interpolated levels beyond noise)") in headline
    mi = compare.clean_pairs(matched).iloc[0]
    assert (mi["n_frontier_points_used_fp4"], mi["n_frontier_points_used_fp8"]) == (2, 2)
    assert "within 31 days of each other" in headline  # run dates and images are held close, not equal
    # both sides run MTP: the method is matched, its acceptance is not, and the headline says so
    assert headline.endswith("Both sides of a pair run the same speculative decoding (mtp), but a pair matches the "
                             "method, not its acceptance: a fp4 checkpoint that drafts or verifies differently from "
                             "the fp8 one is part of the ratio, not held equal.")
    assert "24.00" not in headline and "0.23" not in headline
    env = page.envelope_text(summary)
    assert env.startswith("Confounded, not an effect of precision")
    assert "runs from 0.23× to 24.00×" in env and "4 dip below 1× (fp8 ahead)" in env
    # every envelope goes beyond the roofline bytes ratio somewhere
    with_bytes = compare.with_bytes_ratio(envelope[envelope["ratio_median"].notna()])
    assert summary["n_beyond_bytes"] == int((with_bytes["ratio_max"] > with_bytes["bytes_ratio"]).sum()) == 8


def test_roofline_bytes_ratio_reads_fp4_as_the_vendors_format():
    assert compare.fp4_bytes_ratio("B200") == pytest.approx(8 / 4.5)        # NVFP4: 4-bit + FP8 scale per 16
    assert compare.fp4_bytes_ratio("GB200 NVL72") == pytest.approx(8 / 4.5)
    assert compare.fp4_bytes_ratio("MI355X") == pytest.approx(8 / 4.25)     # MXFP4: 4-bit + 8-bit scale per 32
    assert compare.fp4_bytes_ratio("no such GPU") == pytest.approx(8 / 4.5)
    # the compute-bound bound: dense tensor-core rates from the spec table
    assert compare.math_rate_ratio("B200") == pytest.approx(9000 / 4500)
    assert compare.math_rate_ratio("B300") == pytest.approx(14000 / 4500)
    assert np.isnan(compare.math_rate_ratio("H200 SXM"))  # no FP4 tensor cores
    pairs = compare.with_bytes_ratio(pd.DataFrame({"hardware": ["B200", "MI355X", "B200", "H200 SXM"],
                                                   "ratio_max": [1.9, 1.85, 2.1, 1.8]}))
    assert pairs["beyond_bytes"].tolist() == [True, False, True, True]
    assert pairs["beyond_roofline"].tolist() == [False, False, True, True]


def _two_precisions() -> pd.DataFrame:
    """One configuration at fp8 (100 and 40 tok/s/user) and fp4 (120 and 50): a shared range of 50-100."""
    base = dict(model="m", hardware="B200", framework="f", scope="node", isl=1, osl=1, spec_decode="none",
                n_gpus=8, tp=8, concurrency=4)
    rows = [{**base, "precision": p, "tok_s_per_user": u, "output_tok_s": o, "date": d}
            for p, u, o, d in [("fp8", 100.0, 800.0, "a"), ("fp8", 40.0, 1600.0, "a"),
                               ("fp4", 120.0, 1200.0, "b"), ("fp4", 50.0, 2400.0, "b")]]
    return to_points(rows)


def test_ratio_curves_read_each_pair_across_its_shared_range():
    points = _two_precisions()
    pairs = compare.precision_pairs(points)
    curves = compare.ratio_curves(points, pairs)
    assert len(curves) == 25 and set(curves["label"]) == {"B200 · f · node · none"}
    assert curves["tok_s_per_user"].min() == pytest.approx(50.0) and curves["tok_s_per_user"].max() == 100.0
    fp4 = fr.capacity_at(fr.frontier(points[points["precision"] == "fp4"], by=["model"]), curves["tok_s_per_user"])
    fp8 = fr.capacity_at(fr.frontier(points[points["precision"] == "fp8"], by=["model"]), curves["tok_s_per_user"])
    assert curves["ratio"].to_numpy() == pytest.approx(fp4 / fp8)
    assert np.median(curves["ratio"]) == pytest.approx(pairs["ratio_median"].iloc[0])


def test_measured_levels_mark_the_points_a_ratio_curve_is_read_between():
    """The clean-pair figure marks where each side was measured: inside the shared range (fp4 at 50 tok/s/user, fp8
    at 100) with the ratio there, and the nearest point of each side outside it (fp8 at 40, fp4 at 120), from which
    the curve is also read; four measurements behind a 25-level curve."""
    points = _two_precisions()
    pairs = compare.precision_pairs(points)
    m = compare.measured_levels(points, pairs)
    inside = m[m["inside"]].set_index("side")
    assert inside.loc["fp4", "tok_s_per_user"] == 50.0 and inside.loc["fp8", "tok_s_per_user"] == 100.0
    curves = compare.ratio_curves(points, pairs)
    ends = curves.set_index("tok_s_per_user")["ratio"]
    assert inside.loc["fp4", "ratio"] == pytest.approx(ends.loc[50.0])  # the curve's own ends, measured on one side
    assert inside.loc["fp8", "ratio"] == pytest.approx(ends.loc[100.0])
    outside = m[~m["inside"]].set_index("side")
    assert outside.loc["fp8", "tok_s_per_user"] == 40.0 and outside.loc["fp4", "tok_s_per_user"] == 120.0
    assert outside["ratio"].isna().all() and len(m) == 4


def _scope_points(rack_setup: dict) -> pd.DataFrame:
    node = dict(model="m", hardware="B200", scope="node", precision="fp8", isl=1, osl=1, framework="sglang",
                spec_decode="none", disagg=False, ep=1, tp=8, n_gpus=8)
    rack = {**node, "hardware": "GB200 NVL72", "scope": "rack", "n_gpus": 16, "tp": 16, **rack_setup}
    rows = []
    for side, scale in ((node, 1.0), (rack, 2.0)):
        for u, g in ((40.0, 400.0), (80.0, 100.0)):
            rows.append({**side, "tok_s_per_user": u, "output_tok_s": g * scale * side["n_gpus"],
                         "concurrency": g * scale * side["n_gpus"] / u})
    return to_points(rows)


def test_scope_reading_lists_framework_disaggregation_and_ep_width():
    points = _scope_points({"framework": "dynamo-trt", "disagg": True, "ep": 8})
    cap = compare.scope_capacity(points, targets=[60])
    cmp = compare.scope_comparison(cap)
    row = cmp[(cmp["hardware"] == "GB200 NVL72") & (cmp["status"] == "measured")].iloc[0]
    assert row["reference_over_scope"] == pytest.approx(0.5)  # the rack side has twice the tok/s/GPU everywhere
    assert row["confounders"] == "framework, disaggregation, EP width"
    assert row["confounder_detail"] == ("framework sglang vs dynamo-trt; disaggregation aggregated vs "
                                        "disaggregated; EP width 1 vs 8")
    assert not row["clean"]
    headline = page.scope_headline(cmp)
    assert "no headline number" in headline and "0.50" not in headline
    assert "Confounded by framework sglang vs dynamo-trt" in page.scope_text(cmp, cap)


def test_clean_scope_reading_reaches_the_headline():
    points = _scope_points({})
    cmp = compare.scope_comparison(compare.scope_capacity(points, targets=[60]))
    row = cmp[(cmp["hardware"] == "GB200 NVL72") & (cmp["status"] == "measured")].iloc[0]
    assert row["confounders"] == "none" and row["clean"]
    assert "B200 fp8 at 60 tok/s/user, node ÷ rack = 0.50×" in page.scope_headline(cmp)


def test_plotted_targets_drop_levels_that_are_mostly_not_measured():
    cap = pd.DataFrame({"target_tok_s_per_user": [50.0] * 4 + [200.0] * 4,
                        "tok_s_per_gpu": [1, 2, 3, np.nan, 1, np.nan, np.nan, np.nan]})
    kept, left_out = compare.plotted_targets(cap, targets=[50, 200], min_share=0.5)
    assert kept == [50.0]
    assert left_out == [compare.LeftOut(target=200.0, n_measured=1, n_bars=4)]  # the fact, then its sentence
    assert compare_words.left_out_note(left_out) == \
        "200 tok/s/user not plotted: only 1 of 4 bars measured there (see the table)."
    assert compare_words.left_out_note([]) == ""


def test_each_envelope_reading_names_the_speculative_decoding_of_its_two_sides(snapshot_1k1k):
    """Both GB300 NVL72 rack envelopes pool MTP and plain points, so 'spec decoding' is no pooled confounder; at
    100 tok/s/user, though, fp4 is read between plain points and fp8 between MTP points. The table says so."""
    env = compare.precision_pairs(snapshot_1k1k, match=compare.ENVELOPE_MATCH, targets=[50, 100])
    gb300 = env[(env["hardware"] == "GB300 NVL72") & (env["scope"] == "rack")].iloc[0]
    assert "spec decoding" not in gb300["confounders"]
    fp4 = fr.frontier(snapshot_1k1k[snapshot_1k1k["precision"] == "fp4"], by=["hardware", "scope"])
    fp8 = fr.frontier(snapshot_1k1k[snapshot_1k1k["precision"] == "fp8"], by=["hardware", "scope"])

    def spec_near(front, level):  # the two frontier points around the level, read independently
        f = front[(front["hardware"] == "GB300 NVL72") & (front["scope"] == "rack")].sort_values("tok_s_per_user")
        below, above = f[f["tok_s_per_user"] <= level].iloc[-1:], f[f["tok_s_per_user"] >= level].iloc[:1]
        return ", ".join(sorted(set(below["spec_decode"]) | set(above["spec_decode"])))

    assert gb300["spec_decode_at_100"] == f"{spec_near(fp4, 100)} vs {spec_near(fp8, 100)}" == "none vs mtp"
    table = page.envelope_table(compare.with_bytes_ratio(env), [50, 100])
    assert "spec decoding at 100 (fp4 vs fp8)" in table.columns


def test_scope_bars_read_across_a_wide_gap_carry_a_tilde(raw_points):
    """GB300 NVL72 fp4 and B200 multi-node fp4 at 50 tok/s/user are read between frontier points more than 3x apart:
    their bars say so, as the ratio labels of the precision chart do."""
    import matplotlib.pyplot as plt

    from analysis.plots import compare as compare_plots

    p = page.build(raw_points, model="DeepSeek-R1-0528", isl=1024, osl=1024, source_format="inferencex-api")
    rough = p.scope_bars[p.scope_bars["reading"] == "wide gap"] if "reading" in p.scope_bars else p.scope_bars[:0]
    axes = compare_plots.capacity_bars(p.scope_bars, x="where", hue="precision", ratio=None,
                                       targets=p.scope_targets, denominator="all", title="scope")
    marks = [t.get_text() for ax in np.ravel(axes) for t in ax.texts].count("~")
    plt.close("all")
    assert len(rough) >= 1 and marks == len(rough)


def test_apart_in_time_is_the_rule_the_claim_cards_use():
    from analysis import pairing
    from analysis.claims import pairs as claim_pairs

    assert claim_pairs.DATE_WINDOW_DAYS == pairing.DATE_WINDOW_DAYS == 31
    assert pairing.apart_in_time(["2026-01-01"], ["2026-02-01"]) == ""                       # 31 days: inside
    assert pairing.apart_in_time(["2026-01-01"], ["2026-02-02"]) == "dates 32 days apart"
    assert pairing.apart_in_time(["2026-01-01", "2026-05-01"], ["2026-05-02"]) == "dates 121 days apart"
    assert pairing.apart_in_time(["2026-01-01"], ["2026-05-02"], ["img:1"], ["img:1"]) == ""   # one image
    assert pairing.apart_in_time(["2026-01-01"], ["2026-05-02"], ["unknown"], ["unknown"]) == "dates 121 days apart"
    assert claim_pairs._unmatched({"concurrency": 1024, "date": "2026-01-01"}, {"concurrency": 4, "date": "2026-01-02"}
                                  ) == ["concurrency (1,024 against 4)"]


def test_shipped_clean_pairs_ran_within_the_window_and_the_headline_names_its_axis(raw_points):
    """On the shipped 1K/1K DeepSeek-R1-0528 data the B200 · trt · node pair pools fp4 runs of 2025-11-02 to
    2026-05-19 on several TensorRT-LLM images: 198 days, beyond the 31-day window. It was clean and pulled the
    headline to '1.53× to 1.88×'; now it is confounded in time and the one clean pair (MI355X, one day apart)
    is the estimate, read at equal tok/s/user."""
    p = page.build(raw_points, model="DeepSeek-R1-0528", isl=1024, osl=1024, source_format="inferencex-api")
    for _, r in p.clean.iterrows():  # every clean pair's dates, read back from its own 'what differs'
        dates = [d for part in r["confounder_detail"].split("; ") if part.startswith("date ")
                 for side in part[len("date "):].split(" vs ") for d in side.split(",")]
        if dates:
            span_days = (pd.Timestamp(max(dates)) - pd.Timestamp(min(dates))).days
            assert span_days <= 31, (compare.pair_label(r, page.PAIR_BY), dates)
    assert list(p.results()["clean_pairs"]) == ["MI355X · sglang · node · mtp"]
    assert p.summary["n_clean"] == 1 and p.summary["clean_median"] == pytest.approx(1.880, abs=5e-4)
    assert p.summary["axis"] == "at equal tok/s/user"
    apart = compare.apart_in_time_pairs(p.matched)
    assert [compare.pair_label(r, page.PAIR_BY) for _, r in apart.iterrows()] == ["B200 · trt · node · none"]
    assert apart["apart_in_time"].iloc[0] == "dates 198 days apart"
    assert "fp4 delivers 1.88× the tok/s/GPU of fp8 at equal tok/s/user" in p.plain["headline"]
    assert "1.53" not in p.plain["headline"]
    assert ("B200 · trt · node · none (dates 198 days apart, 1.53× higher (95% interval 1.50×–1.56×) at equal "
            "tok/s/user)") in p.plain["matched"]
    assert "batch-1 bytes bound (roofline, not measured)" in p.tables["clean"].columns


def test_every_precision_ratio_carries_the_interval_of_its_two_readings(raw_points):
    """The clean MI355X pair's ratios carry intervals propagated from the two frontiers' readings (each point's
    interval from its summary percentiles and InferenceX's default request count), recomputed here from the
    readings at the pair's fastest end; ratios whose points record no request count say so and are never called
    higher."""
    p = page.build(raw_points, model="DeepSeek-R1-0528", isl=1024, osl=1024, source_format="inferencex-api")
    r = p.clean.iloc[0]
    assert (r["ratio_median"], r["ratio_median_lo"], r["ratio_median_hi"]) == pytest.approx((1.880, 1.812, 1.950),
                                                                                            abs=5e-4)
    assert r["ratio_median_verdict"] == "higher" and r["n_levels_within_noise"] == 0
    # the fastest end, from the two frontiers' own readings there
    sel = fr.with_intervals(fr.select(raw_points, model="DeepSeek-R1-0528", isl=1024, osl=1024,
                                      source_format="inferencex-api"))
    fronts = fr.frontier(sel, by=compare.PRECISION_MATCH + ["precision"])
    pair = fronts[(fronts["hardware"] == "MI355X") & (fronts["framework"] == "sglang") & (fronts["scope"] == "node")
                  & (fronts["spec_decode"] == "mtp")]
    level = r["overlap_tok_s_per_user_hi"]
    a = fr.capacity_readings(pair[pair["precision"] == "fp4"], [level]).iloc[0]
    b = fr.capacity_readings(pair[pair["precision"] == "fp8"], [level]).iloc[0]
    assert a["reading"] == "measured" and b["reading"] == "interpolated"
    assert a["gpu_lo"] == pytest.approx(340.23, abs=0.01) and a["gpu_hi"] == pytest.approx(348.87, abs=0.01)
    iv = uncertainty.ratio_interval(uncertainty.Interval(a["tok_s_per_gpu"], a["gpu_lo"], a["gpu_hi"]),
                                    uncertainty.Interval(b["tok_s_per_gpu"], b["gpu_lo"], b["gpu_hi"]))
    assert (r["ratio_fastest_end"], r["ratio_fastest_end_lo"], r["ratio_fastest_end_hi"]) == pytest.approx(
        (iv.value, iv.lo, iv.hi))
    assert (iv.lo, iv.hi) == pytest.approx((2.009, 2.150), abs=5e-4)
    # never wider than the worst case lo4/hi8 – hi4/lo8, never narrower than either side alone
    assert a["gpu_lo"] / b["gpu_hi"] <= iv.lo and iv.hi <= a["gpu_hi"] / b["gpu_lo"]
    assert math.log(iv.hi / iv.lo) >= math.log(a["gpu_hi"] / a["gpu_lo"])
    assert p.tables["clean"]["median 95% interval"].iloc[0] == "1.81–1.95× (higher)"
    # multi-node pairs: no request count on either side, so no interval and no verdict
    matched = p.tables["matched"].set_index("pair (hardware · framework · scope · spec decoding)")
    assert matched.loc["B200 · dynamo-trt · multi-node · none", "median 95% interval"] == (
        "none (fp4, fp8: no n)")
    row = p.matched[(p.matched["hardware"] == "B200") & (p.matched["framework"] == "dynamo-trt")
                    & (p.matched["spec_decode"] == "none")].iloc[0]
    assert row["ratio_median_verdict"] == "unknown" and row["ratio_median_missing"] == "both"
    words = compare_words.ratio_words(row, "ratio_median")
    assert words.startswith("4.46×, not shown to be beyond noise (no interval: neither the fp4 nor the fp8 reading "
                            "has one: their points record no request count)") and "higher" not in words


def test_a_ratio_whose_interval_includes_one_is_within_noise_never_faster():
    """The words follow the interval: the same 1.05× is 'higher' with a narrow interval, 'within noise' with a
    wide one, on the page's cells and headline alike."""
    narrow = uncertainty.compare_readings(uncertainty.Interval(105.0, 104.0, 106.0),
                                          uncertainty.Interval(100.0, 99.0, 101.0))
    wide = uncertainty.compare_readings(uncertainty.Interval(105.0, 95.0, 115.0),
                                        uncertainty.Interval(100.0, 99.0, 101.0))
    assert narrow.verdict == "higher" and wide.verdict == "within-noise" and wide.lo < 1 < wide.hi

    def row(rr):
        return {"ratio_median": rr.ratio, **compare.ratio_interval_columns("ratio_median", rr)}

    assert compare_words.headline_ratio(row(wide), "ratio_median").startswith(
        "fp4 and fp8 deliver tok/s/GPU within noise of each other at equal tok/s/user (1.05×, 95% interval 0.95×")
    assert "delivers" not in compare_words.headline_ratio(row(wide), "ratio_median")
    assert compare_words.interval_cell(row(wide), "ratio_median").endswith("(within noise)")
    assert compare_words.headline_ratio(row(narrow), "ratio_median").startswith(
        "fp4 delivers 1.05× the tok/s/GPU of fp8 at equal tok/s/user (95% interval 1.04×–1.06×)")


def test_a_narrow_log_axis_gets_several_plain_ticks():
    """The clean pair's 68-86 tok/s/user range had one tick (70) on its log axis: now evenly spaced round values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.plots.compare import _plain_log_ticks

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    _plain_log_ticks(ax, np.array([68.0, 86.0]))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["68", "74", "80", "86"]
    _plain_log_ticks(ax, np.array([10.0, 500.0]))  # a wide range keeps the fixed list
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["10", "15", "20"]
    plt.close(fig)
