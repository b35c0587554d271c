"""30-precision-scope executed under papermill (ratios, step pairs and scope numbers recomputed here), and its page
module on small synthetic tables with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from test_compare import side_front
from test_frontier import log_interp

from analysis.pages import precision_scope
from analysis.schema import to_points


def test_precision_scope_notebook_numbers(suite_results, raw_points):
    results = suite_results("30-precision-scope")  # as the suite runs it: its own parameters, data/processed
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
    assert f"between {min(medians):.2f}× and {max(medians):.2f}×" in results["envelope_text"]
    # the envelopes' full range (values below 1 included) is labelled confounded and stays out of the headline
    lows = [v["ratio_min"] for v in results["precision_envelope"].values() if v["ratio_min"] is not None]
    highs = [v["ratio_max"] for v in results["precision_envelope"].values() if v["ratio_max"] is not None]
    assert min(lows) < 1
    assert f"runs from {min(lows):.2f}× to {max(highs):.2f}×" in results["envelope_text"]
    assert results["envelope_text"].startswith("Confounded, not an effect of precision")
    assert f"{max(highs):.2f}" not in results["headline"] and f"{min(lows):.2f}" not in results["headline"]
    # the headline is the clean pairs: equal in everything but date and image
    clean = [p["ratio_median"] for p in results["matched_pairs"].values()
             if p["ratio_median"] is not None and set(p["confounders"].split(", ")) <= {"date", "image", "none"}]
    assert len(clean) == 2 == len(results["clean_pairs"])
    # two clean pairs: their range is the estimate (a median of two would only be their mean)
    assert f"fp4 delivers {min(clean):.2f}× to {max(clean):.2f}× the tok/s/GPU of fp8" in results["headline"]
    for label, pair in results["clean_pairs"].items():  # two pairs: named with their medians, the range
        assert f"{label} {pair['ratio_median']:.2f}×" in results["headline"]
    assert f"{min(clean):.2f}×" in results["headline"] and f"{max(clean):.2f}×" in results["headline"]
    assert "speculative decoding, disaggregation" in results["headline_detail"]
    # a clean ratio above the roofline's bytes ratio is pointed out: B200 trt reaches 3.04×, above 8/4.5 and
    # above the 2× FP4/FP8 tensor-core rate of a B200
    b200 = results["clean_pairs"]["B200 · trt · node · none"]
    assert b200["bytes_ratio"] == pytest.approx(8 / 4.5) and b200["beyond_bytes"] and b200["beyond_roofline"]
    assert b200["math_ratio"] == pytest.approx(2.0)
    assert (f"B200 · trt · node · none reaches {b200['ratio_max']:.2f}×, above its roofline bytes ratio of 1.78×"
            in results["headline_detail"])
    assert "neither fewer bytes nor faster math explains it" in results["headline_detail"]
    assert results["title"] == "FP4 vs FP8 and node vs rack: DeepSeek-R1-0528 1024/1024"
    assert results["model"] == "DeepSeek-R1-0528"
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
    assert results["h200_n_batches"] == len(ratio) == 34 and results["h200_n_fp8_slower"] == int((ratio < 1).sum())
    assert results["h200_title"].endswith("fp8 slower at all 34 matched batches")
    assert "clean precision pair" not in results["h200_title"]

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
    # ... with its confounders, and out of the headline: no scope reading in the snapshot is clean
    assert row["confounders"] == "framework, disaggregation, EP width, spec decoding" and not row["clean"]
    assert not any(r["clean"] for r in results["scope"])
    assert "Scope has no headline number" in results["scope_headline"]
    assert "÷ rack =" not in results["headline"] + results["scope_headline"]
    not_measured = [r for r in results["scope"] if r["status"] != "measured"]
    assert not_measured and all(r["reference_over_scope"] is None for r in not_measured)
    assert results["single_gpu_measured"] is False
    assert results["denominator"] == "all"


# --- the page module on synthetic tables with known answers ---------------------------------------------------
def _pair_rows(hardware: str, ratio: float, *, fp4_setup: dict | None = None, model: str = "m") -> list[dict]:
    """fp8 and fp4 sweeps of one configuration; fp4 has ``ratio`` × fp8's tok/s/GPU at every tok/s/user."""
    base = dict(model=model, hardware=hardware, framework="sglang", scope="node", isl=1024, osl=1024,
                spec_decode="none", disagg=False, tp=8, ep=1, dp=1, n_gpus=8, n_decode_gpus=8, tool_version="img:1",
                date="2026-01-01", format="inferencex-api")
    rows = []
    for precision, scale, setup in (("fp8", 1.0, {}), ("fp4", ratio, fp4_setup or {})):
        side = {**base, "precision": precision, **setup}
        for u, g in ((20.0, 2000.0), (50.0, 800.0), (120.0, 150.0)):
            rows.append({**side, "tok_s_per_user": u, "output_tok_s": g * scale * side["n_gpus"],
                         "concurrency": g * scale * side["n_gpus"] / u})
    return rows


def test_headline_is_the_clean_pair_ratio_and_a_confounded_pair_stays_out():
    rows = (_pair_rows("B200", 1.6, fp4_setup={"date": "2026-02-01", "tool_version": "img:2"})    # clean
            + _pair_rows("MI355X", 5.0, fp4_setup={"tp": 4, "n_gpus": 4, "n_decode_gpus": 4}))  # parallelism differs
    page = precision_scope.build(to_points(rows), model="m", targets=[50], source_format=None)
    results = page.results()
    assert list(results["clean_pairs"]) == ["B200 · sglang · node · none"]
    assert results["clean_pairs"]["B200 · sglang · node · none"]["ratio_median"] == pytest.approx(1.6)
    assert results["matched_pairs"]["MI355X · sglang · node · none"]["confounders"] == "tp, GPUs, decode GPUs"
    assert results["matched_pairs"]["MI355X · sglang · node · none"]["ratio_median"] == pytest.approx(5.0)
    headline = results["headline"]
    assert "fp4 delivers 1.60× the tok/s/GPU of fp8 at equal tok/s/user (one clean pair" in headline
    assert headline.endswith("differs only in run date and container image: B200 · sglang · node · none 1.60×).")
    assert "5.00" not in headline and "MI355X" not in headline
    assert "date 2026-02-01 vs 2026-01-01; image img:2 vs img:1" in page.tables["clean"]["what differs"].iloc[0]
    assert results["precision_summary"]["n_clean_beyond_bytes"] == 0  # 1.6 is below 8/4.5
    assert "No clean pair goes beyond its roofline bytes ratio." in results["headline_detail"]
    # the MI355X pair is in the confounded table with what differs
    matched = page.tables["matched"].set_index("pair (hardware · framework · scope · spec decoding)")
    assert matched.loc["MI355X · sglang · node · none", "confounders"] == "tp, GPUs, decode GPUs"


def test_without_a_clean_pair_the_headline_says_there_is_no_estimate():
    rows = _pair_rows("B200", 3.0, fp4_setup={"framework": "sglang", "ep": 8})  # EP width differs
    results = precision_scope.build(to_points(rows), model="m", targets=[50], source_format=None).results()
    assert results["clean_pairs"] == {}
    assert "there is no clean fp4/fp8 estimate" in results["headline"] and "3.00" not in results["headline"]
    assert results["matched_pairs"]["B200 · sglang · node · none"]["confounders"] == "ep"


def test_data_derived_words_are_escaped_on_the_page_and_plain_in_results():
    model = "m*<b>x</b>"
    rows = _pair_rows("B200", 2.0, fp4_setup={"date": "2026-02-01"}, model=model)
    page = precision_scope.build(to_points(rows), model=model, targets=[50], source_format=None)
    assert "<b>" not in page.md["headline"] and "m&#42;&#60;b&#62;x" in page.md["headline"]
    assert page.results()["headline"].startswith(model)
    assert page.results()["title"].endswith(f"{model} 1024/1024")


def test_many_clean_pairs_are_summarised_by_their_range():
    rows = []
    for hardware, ratio in (("B200", 1.2), ("B300", 1.4), ("MI355X", 1.6), ("H200 SXM", 1.8)):
        rows += _pair_rows(hardware, ratio, fp4_setup={"date": "2026-02-01"})
    results = precision_scope.build(to_points(rows), model="m", targets=[50], source_format=None).results()
    assert len(results["clean_pairs"]) == 4
    assert ("fp4 delivers 1.50× the tok/s/GPU of fp8 at equal tok/s/user (median of 4 clean pairs, which differ "
            "only in run date and container image; range 1.20× to 1.80×)") in results["headline"]
