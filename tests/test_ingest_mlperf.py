"""MLPerf LoadGen readers: the real LoadGen 5.1 Offline/Server summaries (ASUSTeK 8xH200, TensorRT) and a
detail log written from the keys loadgen/results.cc LogDetail emits, placed in a closed/ submission path."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.ingest.mlperf import from_path
from analysis.schema import has_flag

DATA = Path(__file__).parent / "data" / "formats" / "mlperf"
OFFLINE = DATA / "ntuhpc_v5.1_ASUSTeK_ESC_N8_H200x8_TRT_llama2-70b-99_Offline" / "mlperf_log_summary.txt"
SERVER = DATA / "ntuhpc_v5.1_ASUSTeK_ESC_N8_H200x8_TRT_llama2-70b-99_Server" / "mlperf_log_summary.txt"
DETAIL = next(DATA.glob("closed/*/results/*/*/Server/performance/run_1/mlperf_log_detail.txt"))


def _value(text: str, label: str) -> float:
    return float(re.search(rf"^{re.escape(label)}\s*:\s*(\S+)", text, flags=re.M).group(1))


def test_offline_tokens_per_second_and_path_hardware():
    text = OFFLINE.read_text()
    p = ingest([OFFLINE]).points.iloc[0]
    assert p["output_tok_s"] == pytest.approx(_value(text, "Tokens per second"))
    assert p["request_s"] == pytest.approx(_value(text, "Samples per second"))
    assert p["scenario"] == "Offline" and p["phase"] == "offline"
    assert p["hardware"] == "H200 SXM" and p["n_gpus"] == 8 and p["scope"] == "node"
    assert p["tok_s_per_gpu"] == pytest.approx(_value(text, "Tokens per second") / 8)
    assert p["model"] == "Llama-2-70B" and p["framework"] == "tensorrt-llm"


def test_server_ttft_tpot_ns_to_ms():
    text = SERVER.read_text()
    p = ingest([SERVER]).points.iloc[0]
    assert p["output_tok_s"] == pytest.approx(_value(text, "Completed tokens per second"))
    assert p["ttft_ms_p99"] == pytest.approx(_value(text, "99.00 percentile first token latency (ns)") / 1e6)
    assert p["tpot_ms_p50"] == pytest.approx(_value(text, "50.00 percentile time to output token (ns)") / 1e6)
    assert p["e2e_ms_mean"] == pytest.approx(_value(text, "Mean latency (ns)") / 1e6)
    assert p["request_rate"] == _value(text, "target_qps")
    assert p["scenario"] == "Server" and p["flags"] == ""


def test_invalid_result_is_flagged(tmp_path):
    folder = tmp_path / SERVER.parent.name
    folder.mkdir()
    (folder / SERVER.name).write_text(SERVER.read_text().replace("Result is : VALID", "Result is : INVALID"))
    points = ingest([folder]).points
    assert has_flag(points, "invalid-result").all() and len(points) == 1


def test_detail_log_interactive_from_benchmark_name():
    events = {}
    for line in DETAIL.read_text().splitlines():
        event = json.loads(line[len(":::MLLOG "):])
        events[event["key"]] = event["value"]
    assert events["effective_sample_index_rng_seed"] > 2**63  # big ints survive
    p = ingest([DETAIL]).points.iloc[0]
    assert p["scenario"] == "Interactive"  # LoadGen says Server; the benchmark name says interactive
    assert p["output_tok_s"] == pytest.approx(events["result_completed_tokens_per_second"])
    assert p["output_tok_s"] != pytest.approx(events["result_token_throughput"])
    assert p["ttft_ms_p50"] == pytest.approx(events["result_first_token_50.00_percentile_latency_ns"] / 1e6)
    assert p["tpot_ms_p99"] == pytest.approx(events["result_time_per_output_token_99.00_percentile_ns"] / 1e6)
    assert p["tool_version"] == f"loadgen {events['loadgen_version']}"
    assert p["hardware"] == "H200 SXM" and p["n_gpus"] == 8


def test_detail_beside_summary_defers(tmp_path):
    shutil.copy(SERVER, tmp_path / "mlperf_log_summary.txt")
    shutil.copy(DETAIL, tmp_path / "mlperf_log_detail.txt")
    result = ingest([tmp_path])
    assert len(result.points) == 1 and result.points.iloc[0]["format"] == "mlperf-summary"


@pytest.mark.parametrize("path, hardware, gpus", [
    ("closed/NVIDIA/results/GB200-NVL72_GB200-186GB_aarch64x72_TRT/llama3.1-405b/Offline/performance/run_1/x",
     "GB200 NVL72", 72),
    ("closed/AMD/results/8xMI325X_2xEPYC/llama2-70b-99/Server/performance/run_1/x", None, None),
    ("closed/Dell/results/XE9680_H100_SXM_80GBx8_TRT/mixtral-8x7b/Server/performance/run_1/x", "H100 SXM", 8),
])
def test_system_names(path, hardware, gpus):
    info = from_path(Path("/") / path)
    assert info.get("hardware") == hardware and info.get("n_gpus") == gpus
