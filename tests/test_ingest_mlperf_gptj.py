"""MLPerf GPT-J Server summaries: scored in samples per second, once refused as "not an LLM run?".

Real NVIDIA DGX-H100 (8× H100 SXM, TensorRT) closed-division submissions, copied from mlcommons/inference_results_v3.1
and v4.1 (``tests/data/formats/PROVENANCE.md``): v3.1 holds samples per second and latencies only; v4.1 adds
``Completed tokens per second (inferred)``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.schema import FLAGS

DATA = Path(__file__).parent / "data" / "formats" / "mlperf"
TAIL = Path("closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/gptj-99/Server/performance/run_1/mlperf_log_summary.txt")
V31, V41 = DATA / "v3.1" / TAIL, DATA / "v4.1" / TAIL


def _value(path: Path, label: str) -> float:
    return float(re.search(rf"(?m)^{re.escape(label)}\s*:\s*(\S+)", path.read_text()).group(1))


def _read(path: Path):
    result = ingest([path])
    assert result.quarantine.empty, result.quarantine.to_dict("records")
    assert len(result.points) == 1
    return result.points.iloc[0], result.files.iloc[0]


def test_v31_summary_is_read_with_samples_and_latencies_and_says_why_no_tokens():
    p, entry = _read(V31)
    assert p["model"] == "GPT-J-6B" and p["scenario"] == "Server"
    assert p["hardware"] == "H100 SXM" and p["n_gpus"] == 8
    assert p["request_s"] == pytest.approx(_value(V31, "Completed samples per second"))
    assert p["e2e_ms_p50"] == pytest.approx(_value(V31, "50.00 percentile latency (ns)") / 1e6)
    assert p["e2e_ms_p99"] == pytest.approx(_value(V31, "99.00 percentile latency (ns)") / 1e6)
    assert p["e2e_ms_mean"] == pytest.approx(_value(V31, "Mean latency (ns)") / 1e6)
    assert p["output_tok_s"] != p["output_tok_s"]  # NaN: the log counts no tokens
    assert "samples (queries) per second" in entry["note"]


def test_v41_inferred_token_rate_is_read_and_flagged():
    p, _ = _read(V41)
    tokens = _value(V41, "Completed tokens per second (inferred)")
    samples = _value(V41, "Completed samples per second")
    assert p["output_tok_s"] == pytest.approx(tokens)
    assert p["request_s"] == pytest.approx(samples)
    assert tokens / samples == pytest.approx(69.0, abs=0.01)  # one fixed factor: inferred, not counted
    assert "tokens-inferred" in p["flags"].split(";") and "tokens-inferred" in FLAGS
    assert p["request_rate"] == pytest.approx(_value(V41, "target_qps"))
