"""trtllm-bench ``--report_json`` reader against the raw JSON read independently here.

No real report JSON was found committed, so the fixtures follow the source: ``report_streaming.json`` the dict
built by ``ReportUtility.get_statistics_dict`` in ``tensorrt_llm/bench/dataclasses/reporting.py @02499765``
(PyTorch backend, ``machine`` block, streaming metrics, MTP decoding stats); ``report_nonstreaming_trt.json`` the
older ``@2787769c`` shape for a TRT engine without streaming (no ``machine``, percentiles without ``p90``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.ingest.trtllm import precision_of
from analysis.schema import has_flag

DATA = Path(__file__).parent / "data" / "formats" / "trtllm"


def _one(name: str):
    raw = json.loads((DATA / name).read_text())
    result = ingest([DATA / name])
    assert len(result.points) == 1 and result.quarantine.empty
    return raw, result.points.iloc[0]


def test_streaming_report_configuration_from_the_file():
    raw, p = _one("report_streaming.json")
    assert p["format"] == "trtllm-bench-report"
    assert p["n_gpus"] == raw["world_info"]["world_size"]
    assert p["tp"] == raw["world_info"]["tp_size"] and p["ep"] == raw["world_info"]["ep_size"]
    assert raw["engine"]["quantization"] == "NVFP4" and p["precision"] == "fp4"
    assert p["kv_dtype"] == "fp8"
    assert p["model"] == "DeepSeek-R1-0528-FP4"
    assert p["hardware"] == "B200"
    assert p["framework"] == "trtllm-pytorch" and p["tool_version"] == raw["engine"]["version"]
    assert p["scope"] == "node"


def test_streaming_report_numbers():
    raw, p = _one("report_streaming.json")
    perf, stream = raw["performance"], raw["streaming_metrics"]
    assert p["concurrency"] == pytest.approx(raw["request_info"]["avg_num_concurrent_requests"])
    assert "concurrency-achieved" in p["flags"].split(";")
    assert p["output_tok_s"] == pytest.approx(perf["system_output_throughput_tok_s"])
    assert p["tok_s_per_gpu"] == pytest.approx(perf["output_throughput_per_gpu_tok_s"], rel=1e-4)
    assert p["tpot_ms_p50"] == pytest.approx(stream["tpot_percentiles"]["p50"])
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / stream["tpot_percentiles"]["p50"])
    assert p["tok_s_per_user_def"] == "1000/tpot_ms_p50"
    assert p["ttft_ms_p99"] == pytest.approx(stream["ttft_percentiles"]["p99"])
    assert p["ttft_ms_mean"] == pytest.approx(stream["avg_ttft_ms"])
    assert p["e2e_ms_p50"] == pytest.approx(perf["request_latency_percentiles_ms"]["p50"])
    assert p["tokens_per_step"] == pytest.approx(raw["decoding_stats"]["acceptance_length_percentiles"]["average"])
    assert p["isl"] == raw["request_info"]["avg_input_length"]
    assert math.isnan(p["request_rate"])  # issue_rate 1e13 req/s: everything issued at once


def test_non_streaming_report_keeps_tool_per_user_with_its_definition():
    raw, p = _one("report_nonstreaming_trt.json")
    assert "streaming_metrics" not in raw
    assert math.isnan(p["tpot_ms_p50"]) and math.isnan(p["ttft_ms_p50"])
    assert p["tok_s_per_user"] == pytest.approx(raw["performance"]["output_throughput_per_user_tok_s"])
    assert p["tok_s_per_user_def"] == "tool-per-user"
    assert "per-user-includes-ttft" in p["flags"].split(";")
    assert p["e2e_ms_p99"] == pytest.approx(raw["performance"]["request_latency_percentiles_ms"]["p99"])
    assert p["precision"] == "fp8" and p["framework"] == "trtllm-trt"
    assert math.isnan(p["ep"])  # null in the file
    assert p["n_gpus"] == 1 and p["scope"] == "single-gpu"


@pytest.mark.parametrize("quant, dtype, expected", [
    ("NVFP4", "bfloat16", "fp4"), ("FP8_BLOCK_SCALES", "bfloat16", "fp8"), ("W4A16_AWQ", "float16", "int4"),
    ("W8A8_SQ_PER_CHANNEL", "float16", "int8"), (None, "bfloat16", "bf16"), ("NO_QUANT", "float16", "fp16"),
])
def test_precision_from_quant_algo(quant, dtype, expected):
    assert precision_of(quant, dtype) == expected


def test_truncated_report_is_quarantined(tmp_path):
    text = (DATA / "report_streaming.json").read_text()
    path = tmp_path / "report.json"
    path.write_text(text[: len(text) // 2])
    result = ingest([path])
    assert result.points.empty
    assert result.quarantine["reason"].str.startswith("truncated JSON: the document ends before it is complete").all()
    assert has_flag(result.points, "failed-run").sum() == 0
