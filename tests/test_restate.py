"""Restating tok/s/user in one definition, on points read from the format fixtures (raw files read here too)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.restate import APPROX_FLAG, restate, restate_routes
from analysis.schema import has_flag, to_points

FORMATS = Path(__file__).parent / "data" / "formats"


@pytest.fixture(scope="module")
def points():
    files = [
        FORMATS / "vllm" / "fork_gptoss_conc4.json",
        FORMATS / "vllm" / "fork_minimax_8k1k_conc64_failed.json",
        FORMATS / "trtllm" / "report_nonstreaming_trt.json",
        FORMATS / "trtllm" / "report_streaming.json",
        FORMATS / "sglang" / "one_batch_server.jsonl",
        FORMATS / "sglang" / "one_batch.jsonl",
    ]
    return ingest(files).points.set_index("run_id", drop=False)


def _raw(rel: str) -> dict:
    return json.loads((FORMATS / rel).read_text())


def test_default_definition_exact_rows_unchanged(points):
    raw = _raw("vllm/fork_gptoss_conc4.json")
    out = restate(points)
    assert (out["tok_s_per_user_def"] == "1000/tpot_ms_p50").all()
    row = out.loc["fork_gptoss_conc4"]
    assert row["tok_s_per_user"] == pytest.approx(1000.0 / raw["median_tpot_ms"])
    assert APPROX_FLAG not in row["flags"].split(";")
    decode = out[(out["phase"] == "decode")]
    assert decode["tok_s_per_user"].tolist() == pytest.approx((1000.0 / decode["step_ms"]).tolist())
    assert not has_flag(decode, APPROX_FLAG).any()


def test_other_definitions_are_flagged_approximate(points):
    raw = _raw("trtllm/report_nonstreaming_trt.json")
    out = restate(points)
    trt = out.loc["report_nonstreaming_trt"]
    # No TPOT, no TTFT: the tool's per-user figure (context phase included) is the only stand-in.
    assert trt["tok_s_per_user"] == pytest.approx(raw["performance"]["output_throughput_per_user_tok_s"])
    assert APPROX_FLAG in trt["flags"].split(";")
    server = out[out["tool_version"] == "bench_one_batch_server"]
    assert has_flag(server, APPROX_FLAG).all()  # a mean TPOT stands in for the median
    assert server["tok_s_per_user"].tolist() == pytest.approx((1000.0 / server["tpot_ms_mean"]).tolist())


def test_failed_run_stays_empty(points):
    out = restate(points)
    failed = out.loc["fork_minimax_8k1k_conc64_failed"]
    assert math.isnan(failed["tok_s_per_user"]) and APPROX_FLAG not in failed["flags"]
    assert restate_routes(points).loc["fork_minimax_8k1k_conc64_failed", "route"] == "none"


def test_restating_twice_keeps_the_approximation_flag(points):
    once = restate(points)
    twice = restate(once)
    assert twice["flags"].tolist() == once["flags"].tolist()
    assert twice["tok_s_per_user"].tolist() == pytest.approx(once["tok_s_per_user"].tolist(), nan_ok=True)


def test_output_over_concurrency_target(points):
    raw = _raw("vllm/fork_gptoss_conc4.json")
    out = restate(points, definition="output/concurrency")
    row = out.loc["fork_gptoss_conc4"]
    assert row["tok_s_per_user"] == pytest.approx(raw["output_throughput"] / raw["max_concurrency"])
    assert APPROX_FLAG not in row["flags"].split(";")


def test_decode_window_route_from_e2e_and_ttft():
    rows = to_points([{"model": "m", "osl": 1024, "e2e_ms_p50": 9000.0, "ttft_ms_p50": 300.0, "flags": ""}])
    out = restate(rows)
    assert out["tok_s_per_user"].iloc[0] == pytest.approx(1000.0 * 1023 / (9000.0 - 300.0))
    assert has_flag(out, APPROX_FLAG).iloc[0]
    assert restate_routes(rows)["route"].iloc[0] == "(osl-1)/(e2e-ttft) p50"


def test_unknown_definition_is_an_error(points):
    with pytest.raises(ValueError, match="supported"):
        restate(points, definition="tokens per fortnight")
