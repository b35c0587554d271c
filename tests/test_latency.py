"""Latency distributions, goodput under SLOs and intervals, on the real per-request files shipped in
data/raw/per-request/ (AIPerf JSONL of two runs, LLMPerf individual responses), each checked against a hand
computation that reads the raw file itself."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pandas as pd
import pytest

from analysis import goodput as gp
from analysis import latency, uncertainty
from analysis.ingest import ingest

PER_REQUEST = "per-request"
SLO = "ttft_p99<=2s; tpot<=50ms"


@pytest.fixture(scope="module")
def shipped(raw_dir):
    result = ingest([raw_dir / PER_REQUEST], progress=False)
    return result.points, result.requests


def _point(points, folder):
    sel = points[points["source_file"].str.contains(folder, regex=False)]
    assert len(sel) == 1, sel["source_file"].tolist()
    return sel.index[0]


def _aiperf_records(path):
    """Profiling records of an AIPerf JSONL, read here without perfclaims: (ttft, tpot, e2e, osl, error)."""
    rows = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        meta = rec.get("metadata", {})
        if meta.get("benchmark_phase", meta.get("credit_phase")) != "profiling":
            continue
        m = rec.get("metrics", {})
        err = rec.get("error")

        def v(*names, m=m):
            for name in names:
                if name in m:
                    return float(m[name]["value"])
            return math.nan

        rows.append({"ttft": v("time_to_first_token", "ttft"), "tpot": v("inter_token_latency"),
                     "e2e": v("request_latency"), "osl": v("output_sequence_length"), "error": bool(err)})
    return pd.DataFrame(rows)


# --- per-request rows are shipped and read --------------------------------------------------------------
def test_the_shipped_suite_has_per_request_rows_joined_to_their_points(shipped, raw_dir):
    points, requests = shipped
    linked = latency.link_requests(points, requests)
    per_point = linked.groupby("point").size()
    assert per_point[_point(points, "inferencex-kimik2.7-tp4-conc1")] == 195  # 196 lines, the first a warm-up
    assert per_point[_point(points, "aiperf-examples-run1")] == 100
    board = json.loads((raw_dir / PER_REQUEST / "llmperf-leaderboard/raw_data/individual/groq_70b.json").read_text())
    assert per_point[_point(points, "llmperf-leaderboard")] == len(board) == 150
    # the leaderboard's individual/ file joins its summary's point instead of making a second point of that run
    assert (points["tool"] == "llmperf").sum() == 1
    assert len(points) == 3


def test_the_kimi_run_records_its_hardware_from_the_manifest(raw_points):
    p = raw_points[raw_points["source_file"].str.contains("inferencex-kimik2.7-tp4-conc1", regex=False)].iloc[0]
    assert (p["hardware"], p["n_gpus"], p["precision"], p["framework"]) == ("MI355X", 4, "fp4", "vllm")


def test_recomputed_percentiles_equal_the_tools_own(shipped, raw_dir):
    points, requests = shipped
    tails = latency.tail_table(points, requests)
    i = _point(points, "inferencex-kimik2.7-tp4-conc1")
    agg = json.loads((raw_dir / PER_REQUEST / "inferencex-kimik2.7-tp4-conc1/profile_export_aiperf.json").read_text())
    row = tails[(tails["point"] == i) & (tails["metric"] == "tpot_ms")].iloc[0]
    assert row["basis"] == "requests" and row["n"] == agg["inter_token_latency"]["count"] == 195
    for stat in ("p50", "p90", "p99"):
        assert row[stat] == pytest.approx(agg["inter_token_latency"][stat], rel=1e-9)
    # perfclaims' std is the sample std (ddof 1); AIPerf writes the population std (ddof 0)
    assert row["std"] == pytest.approx(agg["inter_token_latency"]["std"] * math.sqrt(195 / 194), rel=1e-9)
    ttft = tails[(tails["point"] == i) & (tails["metric"] == "ttft_ms")].iloc[0]
    assert ttft["tail_ratio"] == pytest.approx(agg["time_to_first_token"]["p99"] / agg["time_to_first_token"]["p50"])


# --- goodput against hand computations ------------------------------------------------------------------------
def test_goodput_share_and_tok_s_equal_a_hand_computation_on_the_aiperf_jsonl(shipped, raw_dir):
    points, requests = shipped
    folder = raw_dir / PER_REQUEST / "inferencex-kimik2.7-tp4-conc1"
    rec = _aiperf_records(folder / "profile_export.jsonl")
    agg = json.loads((folder / "profile_export_aiperf.json").read_text())
    good = ~rec["error"] & (rec["ttft"] <= 2000) & ((rec["tpot"] <= 50) | (rec["osl"] <= 1) & rec["tpot"].isna())
    expect_share = good.sum() / len(rec)
    expect_tok_s = agg["output_token_throughput"]["avg"] * rec.loc[good, "osl"].sum() / rec.loc[~rec["error"],
                                                                                                 "osl"].sum()
    expect_req_s = agg["request_throughput"]["avg"] * good.sum() / (~rec["error"]).sum()
    table = gp.goodput(points, requests, SLO)
    row = table[table["point"] == _point(points, "inferencex-kimik2.7-tp4-conc1")].iloc[0]
    assert row["basis"] == "requests"
    assert row["requests"] == len(rec) == 195 and row["met"] == good.sum() == 93
    assert row["share"] == pytest.approx(expect_share)
    assert row["goodput_tok_s"] == pytest.approx(expect_tok_s)
    assert row["goodput_req_s"] == pytest.approx(expect_req_s)
    assert row["gpus"] == 4 and row["goodput_tok_s_per_gpu"] == pytest.approx(expect_tok_s / 4)
    assert row["percentiles_met"] == 0.0  # its p99 TTFT is 93 s


def test_failed_requests_count_as_not_met(shipped, raw_dir):
    points, requests = shipped
    rec = _aiperf_records(raw_dir / PER_REQUEST / "aiperf-examples-run1" / "profile_export.jsonl")
    assert rec["error"].sum() == 11
    good = ~rec["error"] & (rec["ttft"] <= 3000) & (rec["tpot"] <= 30)
    row = gp.goodput(points, requests, "ttft<=3s; tpot<=30ms")
    row = row[row["point"] == _point(points, "aiperf-examples-run1")].iloc[0]
    assert row["requests"] == 100 and row["met"] == good.sum()
    assert row["share"] == pytest.approx(good.sum() / 100)  # the 11 cancelled requests are in the denominator
    assert 0 < row["met"] < 89


def test_goodput_on_llmperf_individual_responses_equals_a_hand_computation(shipped, raw_dir):
    points, requests = shipped
    board = json.loads((raw_dir / PER_REQUEST / "llmperf-leaderboard/raw_data/individual/groq_70b.json").read_text())
    summary = json.loads((raw_dir / PER_REQUEST / "llmperf-leaderboard/raw_data/summary/groq_70b.json").read_text())
    good = [r for r in board if r["error_code"] is None and r["ttft_s"] <= 0.25 and r["end_to_end_latency_s"] <= 0.85]
    row = gp.goodput(points, requests, "ttft<=250ms; e2e<=0.85s")
    row = row[row["point"] == _point(points, "llmperf-leaderboard")].iloc[0]
    assert row["met"] == len(good) and 0 < len(good) < 150
    out_tok_s = summary["results_mean_output_throughput_token_per_s"]
    assert row["goodput_tok_s"] == pytest.approx(out_tok_s * sum(r["number_output_tokens"] for r in good)
                                                 / sum(r["number_output_tokens"] for r in board))
    assert math.isnan(row["goodput_tok_s_per_gpu"])  # Groq's hardware: no GPU count, no per-GPU goodput


def test_summary_share_is_the_lower_bound_its_percentiles_allow(raw_points):
    pts = raw_points[(raw_points["format"] == "inferencex-api") & (raw_points["scope"] == "node")
                     & ~raw_points["disagg"].fillna(False).astype(bool)]
    p = pts.iloc[0]
    table = gp.goodput(pts.iloc[[0]], None, f"ttft<={p['ttft_ms_p99']}ms; tpot<={p['tpot_ms_p50']}ms")
    row = table.iloc[0]
    assert row["basis"] == "summary-lower-bound"
    assert row["share"] == pytest.approx(1 - (1 - 0.99) - (1 - 0.5))  # p99 within one limit, only p50 the other
    assert row["requests"] == 10 * p["concurrency"] and row["met"] == math.floor(row["share"] * row["requests"])


def test_capacity_is_the_largest_load_whose_share_stays_at_the_level():
    points = pd.DataFrame({"model": "m", "concurrency": [1.0, 2.0, 4.0, 8.0]}, index=[10, 11, 12, 13])
    table = pd.DataFrame({"point": [10, 11, 12, 13], "concurrency": [1.0, 2.0, 4.0, 8.0],
                          "share": [1.0, 0.95, 0.5, 0.97], "goodput_tok_s_per_gpu": [1.0, 2.0, 3.0, 4.0]})
    cap = gp.capacity(points, table, level=0.9, by=["model"]).iloc[0]
    assert cap["capacity_concurrency"] == 2 and cap["first_below"] == 4  # 8 meets again, but the share did not stay
    assert cap["goodput_tok_s_per_gpu"] == 2.0


@pytest.mark.parametrize("bad", ["", "ttft<=2", "ttfx<=2s", "ttft>=2s", "tpot<=fast"])
def test_an_slo_that_does_not_parse_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="--slo"):
        gp.parse_slo(bad)


def test_slo_units_and_percentile_suffix():
    slo = gp.parse_slo("TTFT_p99 <= 2s, tpot<50ms; e2el<=1.5e1s")
    assert [(t.metric, t.stat, t.limit_ms, t.strict) for t in slo.terms] == [
        ("ttft", "p99", 2000.0, False), ("tpot", None, 50.0, True), ("e2e", None, 15000.0, False)]


# --- intervals ------------------------------------------------------------------------------------------------
def test_bootstrap_interval_covers_the_files_own_p50(shipped, raw_dir):
    points, requests = shipped
    iv = uncertainty.point_intervals(points, requests)
    agg = json.loads((raw_dir / PER_REQUEST / "inferencex-kimik2.7-tp4-conc1/profile_export_aiperf.json").read_text())
    kimi = uncertainty.interval_of(iv, _point(points, "inferencex-kimik2.7-tp4-conc1"), "user")
    assert kimi.method == "bootstrap-requests" and kimi.contains(1000.0 / agg["inter_token_latency"]["p50"])
    assert kimi.lo < kimi.value < kimi.hi and kimi.rel_halfwidth < 0.05
    summary = json.loads((raw_dir / PER_REQUEST / "llmperf-leaderboard/raw_data/summary/groq_70b.json").read_text())
    groq = uncertainty.interval_of(iv, _point(points, "llmperf-leaderboard"), "user")
    assert groq.contains(summary["results_request_output_throughput_token_per_s_quantiles_p50"])
    gpu = uncertainty.interval_of(iv, _point(points, "inferencex-kimik2.7-tp4-conc1"), "gpu")
    assert gpu.method == "bootstrap-requests" and gpu.contains(agg["output_token_throughput"]["avg"] / 4)


def test_n_requests_from_requests_file_or_the_documented_default(shipped, raw_points):
    points, requests = shipped
    counts = uncertainty.request_counts(points, requests)
    assert (counts["n_requests_source"] == "requests").all()
    assert counts.loc[_point(points, "aiperf-examples-run1"), "n_requests"] == 89  # successful requests only
    api = raw_points[raw_points["format"] == "inferencex-api"]
    c = uncertainty.request_counts(api)
    single = ~api["disagg"].fillna(False).astype(bool) & api["scope"].isin(["node", "single-gpu"])
    assert single.sum() > 100 and (~single).sum() > 100
    assert (c.loc[single, "n_requests_source"] == "tool-default").all()
    assert (c.loc[single, "n_requests"] == 10 * api.loc[single, "concurrency"]).all()
    assert (c.loc[single, "n_requests_ref"] == uncertainty.INFERENCEX_DEFAULT).all()
    # multi-node runs use other launchers: their count is not claimed
    assert (c.loc[~single, "n_requests_source"] == "unknown").all() and c.loc[~single, "n_requests"].isna().all()


def test_the_inferencex_default_is_transcribed_from_its_primary_source():
    from tests.conftest import TEST_DATA

    source = (TEST_DATA / "published" / "inferencex-num-prompts.source.md").read_text()
    assert uncertainty.INFERENCEX_DEFAULT in source
    m = re.search(r"--num-prompts \$\(\( \$CONC \* (\d+) \)\)", source)
    assert m and int(m.group(1)) == uncertainty.INFERENCEX_PROMPTS_PER_CONCURRENCY


def test_summary_interval_of_the_median_follows_the_quantile_spacing(raw_points):
    p = raw_points[(raw_points["format"] == "inferencex-api") & raw_points["tpot_ms_p90"].notna()].iloc[0]
    n = 10 * p["concurrency"]
    iv = uncertainty.user_interval_from_summary(p, n)
    se = (p["tpot_ms_p90"] - p["tpot_ms_p50"]) / 0.4 / (2 * math.sqrt(n))
    assert iv.method == "median-spacing"
    assert iv.lo == pytest.approx(1000 / (p["tpot_ms_p50"] + 1.959964 * se), rel=1e-6)
    assert iv.contains(p["tok_s_per_user"])


def test_same_date_repeats_give_the_run_to_run_spread(raw_points):
    spread = uncertainty.repeat_spread(raw_points)
    s = uncertainty.repeat_summary(spread)
    assert s["groups"] >= 5
    # one group by hand: its runs' tok/s/GPU (all GPUs) max / min - 1
    grp = spread.dropna(subset=["gpu_spread"]).iloc[0]
    members = raw_points.loc[spread.index[spread["repeat_group"] == grp["repeat_group"]]]
    by_run = members.drop_duplicates("run_id")
    gpu = by_run["output_tok_s"] / by_run["n_gpus"]
    assert by_run["run_id"].nunique() == grp["n_repeats"] >= 2
    assert grp["gpu_spread"] == pytest.approx(gpu.max() / gpu.min() - 1)


def test_point_uncertainty_gives_every_point_its_count_interval_and_repeats(raw_points):
    from tests.conftest import RAW

    table = uncertainty.point_uncertainty(raw_points, ingest([RAW / PER_REQUEST], progress=False).requests)
    assert table.index.equals(raw_points.index)
    assert {"n_requests", "n_requests_source", "user_lo", "user_hi", "gpu_lo", "gpu_hi", "user_method",
            "n_repeats", "gpu_spread"} <= set(table.columns)
    known = table["user_method"] != "none"
    assert known.sum() > 1000 and (table.loc[known, "user_lo"] <= table.loc[known, "tok_s_per_user"]).all()
    assert (table.loc[known, "tok_s_per_user"] <= table.loc[known, "user_hi"]).all()
    assert (table["n_requests_source"] == "requests").sum() == 3


def test_within_noise_is_a_ratio_interval_that_includes_one():
    a = uncertainty.Interval(100.0, 95.0, 105.0)
    assert uncertainty.within_noise(uncertainty.ratio_interval(a, uncertainty.Interval(103.0, 98.0, 108.0)))
    far = uncertainty.ratio_interval(a, uncertainty.Interval(50.0, 48.0, 52.0))
    assert not uncertainty.within_noise(far) and uncertainty.ratio_verdict(far) == "higher"
    assert far.lo < 2.0 < far.hi
    unknown = uncertainty.ratio_interval(a, uncertainty.NO_INTERVAL)
    assert not uncertainty.within_noise(unknown) and uncertainty.ratio_verdict(unknown) == "unknown"


# --- the command line -------------------------------------------------------------------------------------------
def test_cli_goodput_json_from_the_requests_table(tmp_path, raw_dir):
    out = tmp_path / "processed"
    from analysis.ingest import write_outputs

    write_outputs(ingest([raw_dir / PER_REQUEST], progress=False), out)
    run = subprocess.run([sys.executable, "-m", "analysis.cli", "goodput", str(out / "requests.parquet"), "--slo",
                          SLO, "--json", "--capacity", "0.9"], capture_output=True, text=True, check=True)
    doc = json.loads(run.stdout)
    assert len(doc["points"]) == 3 and doc["capacity_share"] == 0.9
    for row in doc["points"]:
        assert {"source", "concurrency", "requests", "met", "share", "goodput_req_s", "goodput_tok_s",
                "slo"} <= set(row)
    kimi = next(r for r in doc["points"] if "kimik2.7" in r["source"])
    assert (kimi["requests"], kimi["met"], kimi["concurrency"]) == (195, 93, 1)
    bad = subprocess.run([sys.executable, "-m", "analysis.cli", "goodput", str(out / "points.parquet"), "--slo",
                          "ttft<=soon"], capture_output=True, text=True)
    assert bad.returncode == 2 and "cannot read 'ttft<=soon'" in bad.stderr


# --- the page ---------------------------------------------------------------------------------------------------
def test_latency_page_numbers(raw_points):
    from analysis.pages import latency as latency_page
    from tests.conftest import page_results

    page = latency_page.LatencyPage(points=raw_points, requests=ingest_requests())
    res = page_results(page)
    assert res["runs_with_requests"] == 3 and res["requests"] == 445
    assert res["summary_only_points"] == len(raw_points) - 3
    kimi = next(v for k, v in res["runs"].items() if k.startswith("Kimi"))
    assert (kimi["requests"], kimi["met"]) == (195, 93)
    assert res["growth_configurations"] > 10 and res["tpot_tail_high_median"] >= res["tpot_tail_low_median"]
    rows = latency_page.rows_read(raw_points, requests_path=None)
    assert set(page.runs["run_id"]) <= set(rows["run_id"])


def ingest_requests():
    from tests.conftest import RAW

    return ingest([RAW / PER_REQUEST], progress=False).requests
