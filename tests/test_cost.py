"""Energy and cost per output token: checked by hand against raw InferenceX rows and the shipped price table."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from conftest import RAW

from analysis import cost
from analysis.schema import to_points


@pytest.fixture(scope="module")
def raw_rows():
    return json.loads((RAW / "inferencex" / "benchmarks.json").read_text())


@pytest.fixture(scope="module")
def api_points(raw_points):
    return raw_points[raw_points["format"] == "inferencex-api"]


@pytest.fixture(scope="module")
def prices():
    return cost.load_prices()


def _raw(rows, **want):
    hits = [r for r in rows if all(r.get(k) == v for k, v in want.items())]
    assert len(hits) == 1, want
    return hits[0]


def _point(points, **want):
    hit = points
    for k, v in want.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, want
    return hit


# --- units against raw rows, by hand ----------------------------------------------------------------------
def test_energy_units_match_a_raw_inferencex_row_by_hand(raw_rows, api_points):
    # MI355X fp4, 1k/1k, TP4 on 4 GPUs, concurrency 4: avg_power_w is one GPU's average power (628.9 W) and
    # output_tput_per_gpu is output tok/s per GPU (98.99), so J/output token = 628.907 / 98.988 = 6.3533 J,
    # which is the row's own joules_per_output_token.
    raw = _raw(raw_rows, hardware="mi355x", precision="fp4", isl=1024, osl=1024, conc=4, framework="sglang")
    m = raw["metrics"]
    assert raw["num_decode_gpu"] == 4 and not raw["disagg"]
    by_hand = m["avg_power_w"] / m["output_tput_per_gpu"]
    assert by_hand == pytest.approx(m["joules_per_output_token"], rel=1e-5)
    assert by_hand == pytest.approx(6.3533, abs=1e-4)
    point = _point(api_points, hardware="MI355X", precision="fp4", isl=1024.0, osl=1024.0, concurrency=4.0,
                   n_gpus=4.0)
    for denominator in ("all", "decode"):
        j = cost.j_per_output_token(point, denominator=denominator).iloc[0]
        assert j == pytest.approx(by_hand, rel=1e-5)
        # tok/s per MW = 1e6 W / (J per token): 157,397 output tok/s per MW of GPU power
        assert cost.tok_s_per_mw(point, denominator=denominator).iloc[0] == pytest.approx(1e6 / by_hand, rel=1e-5)
    assert 1e6 / by_hand == pytest.approx(157_397, rel=1e-5)


def test_disaggregated_energy_all_gpus_against_inferencex_decode_only_figure(raw_rows, api_points):
    # MI355X fp8 8k/1k, 16 prefill + 8 decode GPUs, concurrency 2048. InferenceX's joules_per_output_token
    # (0.685 J) is the decode workers' power over output tok/s per decode GPU: 812.882 W / 1186.25 tok/s.
    # Counting every GPU's power, it is avg_power_w × 24 / output tok/s = 907.773 × 24 / (1186.25 × 8) = 2.296 J.
    raw = _raw(raw_rows, hardware="mi355x", precision="fp8", isl=8192, osl=1024, conc=2048, disagg=True)
    m = raw["metrics"]
    decode_power = [w["avg_power_w"] for w in raw["workers"] if w["role"] == "decode"]
    assert decode_power[0] / m["output_tput_per_gpu"] == pytest.approx(m["joules_per_output_token"], rel=1e-4)
    n_gpus = raw["num_prefill_gpu"] + raw["num_decode_gpu"]
    output_tok_s = m["output_tput_per_gpu"] * raw["num_decode_gpu"]
    all_gpus = m["avg_power_w"] * n_gpus / output_tok_s
    assert all_gpus == pytest.approx(2.2957, abs=1e-4)
    # avg_power_w is the all-GPU average: InferenceX's joules_per_total_token uses the same power
    assert m["avg_power_w"] * n_gpus / (m["tput_per_gpu"] * n_gpus) == pytest.approx(m["joules_per_total_token"],
                                                                                    rel=1e-4)
    point = _point(api_points, hardware="MI355X", precision="fp8", isl=8192.0, osl=1024.0, concurrency=2048.0)
    assert cost.j_per_output_token(point, denominator="all").iloc[0] == pytest.approx(all_gpus, rel=1e-5)
    assert cost.j_per_output_token(point, denominator="decode").iloc[0] == pytest.approx(0.685255, rel=1e-6)
    assert cost.gpu_count(point, denominator="decode").iloc[0] == 8 and cost.gpu_count(point).iloc[0] == 24


def test_usd_per_million_tokens_recomputed_by_hand_from_one_row(raw_rows, api_points, prices):
    # B200 fp8 1k/1k: price $1.95 per GPU-hour (SemiAnalysis TCO, from the shipped table). $/M output tokens =
    # 1.95 × 1e6 / (3600 × output tok/s per GPU).
    row = _raw(raw_rows, hardware="b200", precision="fp8", isl=1024, osl=1024, conc=64, framework="sglang",
               spec_method="none", disagg=False, decode_tp=8)
    per_gpu = row["metrics"]["output_tput_per_gpu"]
    by_hand = 1.95 * 1_000_000 / (3600 * per_gpu)
    point = _point(api_points[(api_points["framework"] == "sglang") & (api_points["spec_decode"] == "none")
                              & (api_points["tp"] == 8)],
                   hardware="B200", precision="fp8", isl=1024.0, osl=1024.0, concurrency=64.0, n_gpus=8.0)
    out = cost.with_efficiency(point, prices).iloc[0]
    assert out["usd_per_gpu_hour"] == 1.95
    assert out["usd_per_mtok"] == pytest.approx(by_hand, rel=1e-6)
    assert "SemiAnalysis" in out["price_basis"] and out["price_source"].startswith("https://inferencex.semianalysis")
    assert cost.usd_per_mtok(per_gpu, 1.95) == pytest.approx(by_hand)
    # 1000 tok/s/GPU at $3.60/GPU-hour is exactly $1 per million output tokens
    assert cost.usd_per_mtok(1000.0, 3.6) == pytest.approx(1.0)


def test_decode_denominator_counts_only_decode_gpus_in_the_cost():
    pts = to_points([dict(format="inferencex-api", hardware="B200", n_gpus=24, n_prefill_gpus=16, n_decode_gpus=8,
                          disagg=True, output_tok_s=8000.0, tok_s_per_user=20.0)])
    prices = cost.load_prices(overrides={"B200": 3.6})
    all_gpus = cost.with_efficiency(pts, prices, denominator="all").iloc[0]["usd_per_mtok"]
    decode = cost.with_efficiency(pts, prices, denominator="decode").iloc[0]["usd_per_mtok"]
    assert all_gpus == pytest.approx(3.6 * 24 / (8000 * 3600) * 1e6)  # 3.00 $/M
    assert decode == pytest.approx(3.6 * 8 / (8000 * 3600) * 1e6)  # 1.00 $/M


def test_a_tool_that_gives_only_tok_s_per_gpu_still_gets_a_cost_under_its_own_denominator():
    pts = to_points([dict(format="x", hardware="B200", n_gpus=8, tok_s_per_gpu=500.0, gpu_denominator="all",
                          tok_s_per_user=40.0)])
    assert pts["output_tok_s"].isna().all()
    prices = cost.load_prices()
    assert cost.with_efficiency(pts, prices).iloc[0]["usd_per_mtok"] == pytest.approx(1.95e6 / (3600 * 500.0))
    # ... but not under the other denominator, which that figure does not have
    assert math.isnan(cost.with_efficiency(pts, prices, denominator="decode").iloc[0]["usd_per_mtok"])


# --- no power, no energy; no price, no cost ------------------------------------------------------------------
def test_a_point_without_power_gets_no_energy_figure(api_points, prices):
    b200 = api_points[api_points["hardware"] == "B200"]
    assert b200["power_w"].isna().all() and b200["joules_per_output_token"].isna().all()
    out = cost.with_efficiency(b200, prices)
    assert out["j_per_output_token"].isna().all() and out["tok_s_per_mw"].isna().all()
    assert (out["power_scope"] == "").all()
    # ... while every one of them has a cost figure (B200 has a price)
    assert out["usd_per_mtok"].notna().all()
    # the 17 MI355X rows that carry power are the only ones with an energy figure
    every = cost.with_efficiency(api_points, prices)
    assert every["j_per_output_token"].notna().sum() == 17
    assert set(every.loc[every["j_per_output_token"].notna(), "hardware"]) == {"MI355X"}
    assert set(every.loc[every["j_per_output_token"].notna(), "power_scope"]) == {"GPU power only"}


def test_a_runner_power_total_becomes_per_gpu_power_and_its_energy_figure(raw_points):
    # The InferenceX runner record gives gpu.total_avg_power_w (3437.5 W for 8 B200s); the points table holds power
    # per GPU everywhere (430 W), so J/token under "all" GPUs is 430 W x 8 / output tok/s, the runner's own total.
    runner = raw_points[(raw_points["format"] == "inferencex-runner") & raw_points["power_w"].notna()]
    assert len(runner) >= 1 and runner["power_w"].iloc[0] == pytest.approx(3437.5 / 8)
    row = runner.iloc[[0]]
    expected = 3437.5 / float(row["output_tok_s"].iloc[0])
    assert cost.j_per_output_token(row).iloc[0] == pytest.approx(expected)


def test_a_missing_price_gives_no_cost_figure_and_a_message_naming_the_hardware(api_points, prices):
    out = cost.with_efficiency(api_points, prices)
    mi355x = out[out["hardware"] == "MI355X"]
    assert len(mi355x) == 90 and mi355x["usd_per_mtok"].isna().all() and mi355x["usd_per_gpu_hour"].isna().all()
    assert (mi355x["price_source"] == "").all()
    assert cost.price_for(prices, "MI355X") is None
    missing = cost.missing_prices(prices, api_points["hardware"])
    assert missing == ["B300", "MI300X", "MI325X", "MI355X"]
    message = cost.no_price_message(missing)
    assert all(name in message for name in missing) and "no cost figure" in message


# --- prices are data, and the user can add or override them ---------------------------------------------------
def test_shipped_prices_carry_basis_source_and_date(prices, shared_dir):
    shared = pd.read_csv(shared_dir / "specs" / "prices.csv")
    assert prices["hardware"].tolist() == shared["hardware"].tolist()
    np.testing.assert_allclose(prices["usd_per_gpu_hour"], shared["usd_per_gpu_hour"])
    p = cost.price_for(prices, "gb300  nvl72")  # case and spacing do not matter
    assert p.usd_per_gpu_hour == 2.65 and p.date == "2026" and "TCO" in p.basis
    assert p.text().startswith("$2.65/GPU-hour (total cost of ownership")


def test_user_prices_add_and_override_and_name_their_source(tmp_path):
    mine = tmp_path / "my_prices.csv"
    mine.write_text("hardware,usd_per_gpu_hour\nMI355X,2.10\nB200,2.50\n")
    table = cost.load_prices(extra=mine, overrides={"B300": {"usd_per_gpu_hour": 2.4, "source": "my quote",
                                                             "basis": "rental"}, "H100 SXM": "1.10"})
    assert cost.price_for(table, "MI355X") == cost.Price("MI355X", 2.10, cost.USER_BASIS, str(mine), "")
    assert cost.price_for(table, "B200").usd_per_gpu_hour == 2.50  # the user's row wins over the shipped one
    b300 = cost.price_for(table, "B300")
    assert (b300.usd_per_gpu_hour, b300.source, b300.basis) == (2.4, "my quote", "rental")
    h100 = cost.price_for(table, "H100 SXM")
    assert (h100.usd_per_gpu_hour, h100.source) == (1.10, cost.USER_SOURCE)
    assert cost.price_for(table, "GB200 NVL72").usd_per_gpu_hour == 2.21  # untouched
    assert cost.parse_price_args(["MI355X=2.1", "GB200 NVL72 = 3"]) == {
        "MI355X": {"usd_per_gpu_hour": 2.1, "source": "--price"},
        "GB200 NVL72": {"usd_per_gpu_hour": 3.0, "source": "--price"}}
    for bad in ("MI355X", "=2", "MI355X=free", "MI355X=-1"):
        with pytest.raises(ValueError, match="MI355X|HARDWARE"):
            cost.parse_price_args([bad])
    with pytest.raises(FileNotFoundError, match="price table not found"):
        cost.load_prices(extra=tmp_path / "nope.csv")


def test_unknown_metric_and_denominator_are_refused():
    with pytest.raises(ValueError, match="metric must be one of"):
        cost.check_metric("watts")
    with pytest.raises(ValueError, match="denominator"):
        cost.gpu_count(pd.DataFrame({"n_gpus": [1.0]}), denominator="prefill")
    assert cost.lower_is_better("usd_per_mtok") and not cost.lower_is_better("tok_s_per_mw")
    assert math.isclose(cost.usd_per_mtok(500.0, 1.8), 1.0)
