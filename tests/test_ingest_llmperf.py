"""LLMPerf readers: the real leaderboard summary (seconds, string-typed ints) and an individual-responses file
written with the keys token_benchmark_ray.py @f1d6bed4 writes (two errored requests)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from analysis.ingest import ingest
from analysis.schema import has_flag

DATA = Path(__file__).parent / "data" / "formats" / "llmperf"
SUMMARY = DATA / "leaderboard_summary" / "groq_70b.json"
INDIVIDUAL = DATA / "individual" / "llama2-70b-4096_550_150_individual_responses.json"


def test_summary_mean_ttft_seconds_to_ms():
    raw = json.loads(SUMMARY.read_text())
    assert isinstance(raw["results_number_input_tokens_min"], str)  # the default=str pitfall is in the file
    p = ingest([SUMMARY]).points.iloc[0]
    assert p["ttft_ms_mean"] == pytest.approx(raw["results_ttft_s_mean"] * 1000)
    assert p["e2e_ms_p99"] == pytest.approx(raw["results_end_to_end_latency_s_quantiles_p99"] * 1000)
    assert p["output_tok_s"] == pytest.approx(raw["results_mean_output_throughput_token_per_s"])
    assert p["concurrency"] == raw["num_concurrent_requests"] == 5


def test_summary_itl_includes_ttft_is_flagged_not_tpot():
    raw = json.loads(SUMMARY.read_text())
    points = ingest([SUMMARY]).points
    p = points.iloc[0]
    assert has_flag(points, "per-user-includes-ttft").all()
    assert np.isnan(p["tpot_ms_p50"])
    assert p["itl_ms_p50"] == pytest.approx(raw["results_inter_token_latency_s_quantiles_p50"] * 1000)
    assert p["tok_s_per_user"] == pytest.approx(raw["results_request_output_throughput_token_per_s_quantiles_p50"])
    assert p["tok_s_per_user_def"] == "osl/e2e"


def test_individual_responses_requests_and_point(tmp_path):
    raw = json.loads(INDIVIDUAL.read_text())
    ok = [r for r in raw if r["error_code"] is None]
    result = ingest([INDIVIDUAL])
    req = result.requests
    assert len(req) == len(raw) == 20
    assert (req["error"] != "").sum() == 2 and req.loc[req["error"] != "", "e2e_ms"].isna().all()
    p = result.points.iloc[0]
    assert p["ttft_ms_mean"] == pytest.approx(np.mean([r["ttft_s"] for r in ok]) * 1000)
    tpot = [(r["end_to_end_latency_s"] - r["ttft_s"]) / (r["number_output_tokens"] - 1) * 1000 for r in ok]
    assert p["tpot_ms_p50"] == pytest.approx(np.percentile(tpot, 50))
    assert p["num_requests"] == 18 and p["failed_requests"] == 2
    assert p["model"] == "llama2-70b-4096" and p["isl"] == 550


def test_individual_beside_summary_gives_requests_only(tmp_path):
    shutil.copy(SUMMARY, tmp_path / "llama2-70b-4096_550_150_summary.json")
    shutil.copy(INDIVIDUAL, tmp_path / INDIVIDUAL.name)
    result = ingest([tmp_path])
    assert len(result.points) == 1 and result.points.iloc[0]["format"] == "llmperf-summary"
    assert len(result.requests) == 20
