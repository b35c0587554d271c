"""trtllm-bench console report (what users paste) read against the text itself.

The samples are reports pasted in NVIDIA/TensorRT-LLM threads, as far as the search tool returned them
(``tests/data/formats/PROVENANCE.md``): PR #7104 (DeepSeek-R1 NVFP4, TP4 EP4, PyTorch backend; cut off inside
PERFORMANCE OVERVIEW) and issue #6294 (Llama-3.1-8B FP8 on one H100; from ``Issue Rate`` on, no streaming).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.ingest import ingest

DATA = Path(__file__).parent / "data" / "formats" / "trtllm" / "console"
PR7104 = DATA / "issue7104_dsr1_fp4_tp4_excerpt.txt"
ISSUE6294 = DATA / "issue6294_llama31_8b_fp8_h100_excerpt.txt"


def _value(path: Path, label: str) -> float:
    m = re.search(rf"^{re.escape(label)}\s*:\s*([-\d.E+]+)\s*$", path.read_text(), re.MULTILINE)
    return float(m.group(1))


def _point(path: Path):
    result = ingest([path])
    assert result.files["format"].tolist() == ["trtllm-bench-console"]
    assert len(result.points) == 1
    return result.points.iloc[0], result.quarantine


def test_pr7104_report_numbers_and_configuration():
    p, quarantine = _point(PR7104)
    assert p["concurrency"] == pytest.approx(_value(PR7104, "Number of concurrent requests"))
    assert "concurrency-achieved" in p["flags"].split(";")
    assert p["output_tok_s"] == pytest.approx(_value(PR7104, "Total Output Throughput (tokens/sec)"))
    assert p["request_s"] == pytest.approx(_value(PR7104, "Request Throughput (req/sec)"))
    assert p["num_requests"] == _value(PR7104, "Number of requests") == 6144
    assert p["isl"] == p["osl"] == 1024
    assert (p["tp"], p["ep"], p["pp"], p["n_gpus"]) == (4, 4, 1, 4)
    assert p["precision"] == "fp4" and p["kv_dtype"] == "fp8"
    assert p["framework"] == "trtllm-pytorch" and p["tool_version"] == "1.1.0rc1"
    assert p["model"] == "DeepSeek-R1"
    # the paste ends on a label without its number: said, with the line, not silently read as 0
    assert quarantine["field"].tolist() == ["Total Token Throughput (tokens/sec)"]
    assert quarantine["line"].tolist() == [35]


def test_issue6294_report_numbers_without_streaming():
    p, quarantine = _point(ISSUE6294)
    assert quarantine.empty
    assert p["output_tok_s"] == pytest.approx(_value(ISSUE6294, "Total Output Throughput (tokens/sec)"))
    assert p["total_tok_s"] == pytest.approx(_value(ISSUE6294, "Total Token Throughput (tokens/sec)"))
    assert p["e2e_ms_p50"] == pytest.approx(_value(ISSUE6294, "[Latency] P50"))
    assert p["e2e_ms_p99"] == pytest.approx(_value(ISSUE6294, "[Latency] P99"))
    assert p["e2e_ms_mean"] == pytest.approx(_value(ISSUE6294, "Average request latency (ms)"))
    # no TTFT/TPOT in a non-streaming run: the tool's per-user figure, which includes the context phase
    assert p["tok_s_per_user"] == pytest.approx(_value(ISSUE6294, "Per User Output Throughput [w/ ctx] (tps/user)"))
    assert p["tok_s_per_user_def"] == "tool-per-user"
    assert "per-user-includes-ttft" in p["flags"].split(";")
    # world size from the report's own per-GPU figure (output / per-GPU output = 1)
    assert p["n_gpus"] == 1
    assert p["request_rate"] != p["request_rate"]  # issue rate 2.3e15 req/s: everything at once (NaN)
