"""GuideLLM report reader against the real files, read independently here with json / yaml.

``v0.2_stripped/benchmarks_stripped.{json,yaml}`` are GuideLLM's own test assets (a real synchronous run against a
vLLM server, requests stripped to one sample) in the 0.2-era layout; ``v0.5_concurrent4/…benchmarks.json`` is a
0.5.0.dev0 report committed by a user (concurrent, 4 streams, Qwen3-4B on TP4). Provenance:
``tests/data/formats/PROVENANCE.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from analysis.ingest import detect, formats, ingest
from analysis.ingest.base import HEAD_BYTES

DATA = Path(__file__).parent / "data" / "formats" / "guidellm"
OLD_JSON = DATA / "v0.2_stripped" / "benchmarks_stripped.json"
OLD_YAML = DATA / "v0.2_stripped" / "benchmarks_stripped.yaml"
NEW = DATA / "v0.5_concurrent4" / "Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json"


def _point(path: Path):
    result = ingest([path])
    assert result.quarantine.empty, result.quarantine.to_dict("records")
    assert len(result.points) == 1
    return result.points.iloc[0]


def _ok(metrics: dict, name: str) -> dict:
    return metrics[name]["successful"]


@pytest.mark.parametrize("path,raw", [(OLD_JSON, lambda p: json.loads(p.read_text())),
                                      (OLD_YAML, lambda p: yaml.safe_load(p.read_text())),
                                      (NEW, lambda p: json.loads(p.read_text()))])
def test_points_are_the_files_own_numbers(path, raw):
    report = raw(path)
    bench = report["benchmarks"][0]
    m = bench["metrics"]
    p = _point(path)
    assert p["tool"] == "guidellm"
    assert p["output_tok_s"] == pytest.approx(_ok(m, "output_tokens_per_second")["mean"])
    assert p["total_tok_s"] == pytest.approx(_ok(m, "tokens_per_second")["mean"])
    assert p["ttft_ms_p50"] == pytest.approx(_ok(m, "time_to_first_token_ms")["median"])
    assert p["ttft_ms_mean"] == pytest.approx(_ok(m, "time_to_first_token_ms")["mean"])
    assert p["ttft_ms_p99"] == pytest.approx(_ok(m, "time_to_first_token_ms")["percentiles"]["p99"])
    # perfclaims' TPOT (decode only, per gap) is GuideLLM's inter_token_latency_ms
    assert p["tpot_ms_p50"] == pytest.approx(_ok(m, "inter_token_latency_ms")["median"])
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / _ok(m, "inter_token_latency_ms")["median"])
    assert p["e2e_ms_p50"] == pytest.approx(1000.0 * _ok(m, "request_latency")["median"])
    assert p["osl"] == pytest.approx(_ok(m, "output_token_count")["mean"])


def test_old_layout_synchronous_run_is_concurrency_one():
    bench = json.loads(OLD_JSON.read_text())["benchmarks"][0]
    assert bench["args"]["strategy"]["type_"] == "synchronous"
    p = _point(OLD_JSON)
    assert p["concurrency"] == 1.0 and p["scenario"] == "synchronous"
    assert p["num_requests"] == bench["request_totals"]["successful"] == 46
    assert p["model"] == "example_model"


def test_new_layout_concurrent_run_reads_streams_model_and_version():
    report = json.loads(NEW.read_text())
    bench = report["benchmarks"][0]
    p = _point(NEW)
    assert p["concurrency"] == bench["config"]["strategy"]["streams"] == 4
    assert p["tool_version"] == report["metadata"]["guidellm_version"] == "0.5.0.dev0"
    assert p["model"] == "Qwen3-4B-Thinking-2507"
    assert p["num_requests"] == bench["metrics"]["request_totals"]["successful"] == 4
    assert "inconsistent-throughput" not in p["flags"]


def test_inter_token_latency_is_decode_time_per_gap_in_the_files_own_requests():
    """Why GuideLLM's ITL, not its TPOT, is perfclaims' TPOT: checked on a real request record."""
    req = json.loads(NEW.read_text())["benchmarks"][0]["requests"]["successful"][0]
    t = req["info"]["timings"]
    decode_ms = (t["last_token_iteration"] - t["first_token_iteration"]) * 1000.0
    assert req["inter_token_latency_ms"] == pytest.approx(decode_ms / (req["output_tokens"] - 1))
    # GuideLLM's own TPOT runs from the request's start (TTFT included) over every output token
    with_ttft_ms = (t["last_token_iteration"] - t["request_start"]) * 1000.0
    assert req["time_per_output_token_ms"] == pytest.approx(with_ttft_ms / req["output_tokens"])


def test_new_layout_is_not_taken_for_vllm_bench_throughput():
    """A 0.5.0 report's head can hold `elapsed_time`, `tokens_per_second` and `requests_per_second` (its
    scheduler constraints and metrics), all the vLLM throughput detector asks for: GuideLLM is tried first."""
    head = NEW.read_bytes()[:HEAD_BYTES]
    assert detect(NEW, head).name == "guidellm-report"
    names = [f.name for f in formats()]
    assert names.index("guidellm-report") < names.index("vllm-throughput")
