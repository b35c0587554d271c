"""Evidence matching on small synthetic points tables with known answers: direct evidence gives the exact
interpolated value, another model is a proxy with no ratio, a latency limit excludes the points above it, an
FP4/FP8 pair differing in speculative decoding is listed with that confounder, and the JSON card round-trips."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis import claims
from analysis.claims.conditions import LatencyLimit, latency_limits, parse_latency_limits
from analysis.claims.pairs import precision_pairs
from analysis.schema import empty_points

CLAIM = """id: T1
value: 1000
unit: tok/s/GPU
kind: per-GPU
model: DeepSeek-R1
hardware: B200
n_gpus: 8
precision: fp4
isl_osl: 1024/1024
spec_decode: none
at_tok_s_per_user: 50
latency: {latency}
"""


def _points(rows: list[dict]) -> pd.DataFrame:
    base = {"format": "synthetic", "flags": "", "hardware": "B200", "n_gpus": 8, "scope": "node", "precision": "fp4",
            "framework": "trt", "disagg": False, "spec_decode": "none", "isl": 1024.0, "osl": 1024.0,
            "model": "DeepSeek-R1-0528", "gpu_denominator": "all", "phase": "decode",
            "tok_s_per_user_def": "1000/tpot_ms_p50"}
    out = []
    for i, r in enumerate(rows):
        row = {**base, **r, "source_file": "synthetic.csv", "source_line": i + 2}
        row["output_tok_s"] = row["tok_s_per_gpu"] * row["n_gpus"]
        row.setdefault("ttft_ms_p50", 100.0)
        row.setdefault("ttft_ms_p99", 500.0)
        row.setdefault("tpot_ms_p50", 1000.0 / row["tok_s_per_user"])
        row.setdefault("tpot_ms_p99", 1.2 * row["tpot_ms_p50"])
        out.append(row)
    frame = pd.DataFrame(out)
    full = empty_points()
    for col in full.columns:
        if col not in frame:
            frame[col] = pd.Series([None] * len(frame), dtype=full[col].dtype)
    return frame


def _claim(tmp_path, latency="not stated", **fields):
    text = CLAIM.format(latency=latency) + "".join(f"{k}: {v}\n" for k, v in fields.items())
    path = tmp_path / "T1.yaml"
    path.write_text(text)
    return path


TWO = [{"tok_s_per_user": 25.0, "tok_s_per_gpu": 2000.0}, {"tok_s_per_user": 100.0, "tok_s_per_gpu": 500.0}]


def _loglog(x, x0, y0, x1, y1):
    t = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))


def test_direct_evidence_gives_the_exact_interpolated_value(tmp_path):
    card = claims.claim_card(_claim(tmp_path), _points(TWO))
    row = card.checks.iloc[0]
    expected = _loglog(50, 25, 2000, 100, 500)      # 1,000: 50 is the log-midpoint of 25 and 100
    assert row["match"] == "direct" and row["differs"] == []
    assert row["measured_all"] == pytest.approx(expected, rel=1e-12) == pytest.approx(1000.0)
    assert row["measured_over_claimed"] == pytest.approx(expected / 1000.0, rel=1e-12)
    assert [e["source"] for e in row["evidence"]] == ["synthetic.csv:2", "synthetic.csv:3"]
    assert "= 100% of the claim" in card.headline and "[direct]" in card.headline


def test_a_model_of_the_same_architecture_is_same_model(tmp_path):
    # DeepSeek-V3 and DeepSeek-R1 share one config: V3 evidence answers an R1 claim as same-model, another checkpoint
    card = claims.claim_card(_claim(tmp_path), _points([{**r, "model": "DeepSeek-V3-0324"} for r in TWO]))
    row = card.checks.iloc[0]
    assert row["match"] == "same-model" and card.evidence_tier == "same-model"
    assert row["differs"] == ["model revision: DeepSeek-V3-0324 instead of DeepSeek-R1"]


def test_another_model_is_proxy_with_a_null_ratio(tmp_path):
    pts = _points([{**r, "model": "DeepSeek-V3.2-Exp"} for r in TWO])
    card = claims.claim_card(_claim(tmp_path), pts)
    row = card.checks.iloc[0]
    assert row["match"] == "proxy" and math.isnan(row["measured_over_claimed"])
    assert row["measured_all"] == pytest.approx(1000.0)            # the proxy's own value is still shown
    assert any(d.startswith("model: DeepSeek-V3.2-Exp") for d in row["differs"])
    js = card.to_json()
    assert js["comparisons"][0]["match"] == "proxy" and js["comparisons"][0]["ratio"] is None
    assert "% of the claim" not in card.headline and "proxy" in card.headline
    assert "proxy" in card.bottom_line and "no percentage of the claim" in card.bottom_line


def test_other_lengths_are_same_model_with_lengths_listed_and_no_ratio(tmp_path):
    pts = _points([{**r, "isl": 8192.0} for r in TWO])
    row = claims.claim_card(_claim(tmp_path), pts).checks.iloc[0]
    assert row["match"] == "same-model" and math.isnan(row["measured_over_claimed"])
    assert row["differs"] == ["lengths: ISL 8,192 / OSL 1,024 measured, 1024/1024 claimed"]


def test_a_latency_limit_excludes_the_points_above_it(tmp_path):
    rows = TWO + [{"tok_s_per_user": 30.0, "tok_s_per_gpu": 5000.0, "ttft_ms_p99": 9000.0}]
    pts = _points(rows)
    # Without a limit the point with a 9 s TTFT p99 is on the frontier: 50 tok/s/user reads between 30 and 100.
    free = claims.claim_card(_claim(tmp_path), pts).checks.iloc[0]
    assert free["measured_all"] == pytest.approx(_loglog(50, 30, 5000, 100, 500))
    limited = claims.claim_card(_claim(tmp_path, latency="TTFT p99 <= 2 s; TPOT p50 <= 60 ms"), pts)
    row = limited.checks.iloc[0]
    assert row["measured_all"] == pytest.approx(1000.0) and row["match"] == "direct"
    assert row["limits"].startswith("TTFT p99 ≤ 2 s; TPOT p50 ≤ 60 ms")
    assert "synthetic.csv:4" not in row["rows"] and "2 of 3 meet" in limited.checked_on
    # Every point over the limit: no reading, tier none.
    none = claims.claim_card(_claim(tmp_path, latency="TTFT p99 <= 0.1 s"), pts).checks.iloc[0]
    assert none["match"] == "none" and math.isnan(none["measured_all"])


def test_latency_limits_parse_and_mlperf_scenarios_apply(tmp_path):
    assert parse_latency_limits("TTFT p99 <= 2 s; TPOT p50 <= 20 ms") == [
        LatencyLimit("ttft", "p99", 2000.0), LatencyLimit("tpot", "p50", 20.0)]
    assert parse_latency_limits("TTFT 8.6 s at 128K prefill") == []      # a reported value is not a limit
    claim = claims.load_claim(_claim(tmp_path, scenario="MLPerf Server"))
    limits, where = latency_limits(claim)
    assert [(x.column, x.max_ms) for x in limits] == [("ttft_ms_p99", 2000.0), ("tpot_ms_p99", 80.0)]
    assert "MLPerf Server" in where


def test_a_pair_differing_in_spec_decoding_is_listed_with_that_confounder():
    pts = _points([
        {"precision": "fp4", "spec_decode": "mtp", "tok_s_per_user": 300.0, "tok_s_per_gpu": 100.0},
        {"precision": "fp4", "spec_decode": "none", "tok_s_per_user": 150.0, "tok_s_per_gpu": 100.0},
        {"precision": "fp8", "spec_decode": "none", "tok_s_per_user": 100.0, "tok_s_per_gpu": 100.0},
    ])
    clean, confounded = precision_pairs(pts)
    assert len(clean) == 1 and clean[0]["ratio"] == pytest.approx(1.5) and clean[0]["confounders"] == []
    assert len(confounded) == 1 and confounded[0]["ratio"] == pytest.approx(3.0)
    assert confounded[0]["confounders"] == ["speculative decoding"]
    assert confounded[0]["a"]["spec_decode"] == "mtp" and confounded[0]["b"]["spec_decode"] == "none"
    # 3.0x is above the roofline's FP4/FP8 ratio for DeepSeek-R1 (bytes per weight 1 / 0.5625 = 1.78x).
    assert confounded[0]["above_roofline"] and 1.7 < confounded[0]["roofline_ratio"] < 1.8


def test_json_round_trip(tmp_path, capsys):
    from analysis.cli import main

    pts_path = tmp_path / "points.parquet"
    _points(TWO).to_parquet(pts_path)
    assert main(["claim", str(_claim(tmp_path)), "--points", str(pts_path), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["id"] == "T1" and js["kind"] == "per-GPU" and js["bottom_line"].startswith("T1 claims")
    assert set(js["answers"]) == {"batch", "large_batch", "scope", "latency", "precision", "spec_decode"}
    for a in js["answers"].values():
        assert a["status"] in ("stated", "inferred", "not stated") and isinstance(a["evidence"], list)
    (comp,) = js["comparisons"]
    assert comp["claimed"] == 1000 and comp["measured"] == pytest.approx(1000.0) and comp["ratio"] == pytest.approx(1.0)
    assert comp["unit"] == "tok/s/GPU" and comp["at_tok_s_per_user"] == 50 and comp["match"] == "direct"
    assert comp["differs"] == []
    ev = comp["evidence"][0]
    assert set(ev) >= {"source", "model", "hardware", "precision", "isl", "osl", "spec_decode", "n_gpus",
                       "concurrency", "tok_s_per_user", "tok_s_per_gpu", "ttft_ms_p50", "ttft_ms_p99", "tpot_ms_p50"}
    assert ev["concurrency"] is None and ev["n_gpus"] == 8           # unknown is null, never NaN
    assert isinstance(js["precision_pairs"], list)


def test_ratio_claim_reads_both_sides_at_equal_tok_s_per_user(tmp_path):
    gb = [{"hardware": "GB200 NVL72", "scope": "rack", "n_gpus": 72, "tok_s_per_user": 25.0, "tok_s_per_gpu": 3000.0},
          {"hardware": "GB200 NVL72", "scope": "rack", "n_gpus": 72, "tok_s_per_user": 100.0, "tok_s_per_gpu": 750.0}]
    pts = _points(TWO + gb)
    path = tmp_path / "T2.yaml"
    path.write_text("id: T2\nvalue: 1.3\nunit: ratio\nkind: ratio\nmodel: DeepSeek-R1\nhardware: GB200 NVL72\n"
                    "precision: fp4\nisl_osl: 1024/1024\nspec_decode: none\n"
                    "parts:\n- kind: ratio\n  value: 1.3\n  text: 1.3x GB200 over B200 per GPU at 50 tok/s/user\n"
                    "  baseline: B200\n  axis: tok/s/GPU\n  at_tok_s_per_user: 50\n")
    (row,) = claims.claim_card(path, pts).checks.to_dict("records")
    assert row["measured_all"] == pytest.approx(1500.0 / 1000.0)   # both sides read at 50 tok/s/user
    assert row["match"] == "direct" and row["measured_over_claimed"] == pytest.approx(1.5 / 1.3)
    assert np.isclose(row["claimed"], 1.3)
