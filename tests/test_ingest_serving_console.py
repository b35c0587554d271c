"""Console summaries of `vllm bench serve` and SGLang `bench_serving` (the "Serving Benchmark Result" block).

``vllm/upstream_stdout_conc32.log`` is a real upstream stdout (see /work/shared/samples/PROVENANCE.md);
``sglang/bench_serving_console.log`` is a two-run sweep laid out with bench_serving's own print format strings
(``"{:<40} {:<10}"`` lines, dashed section titles, a closing line of 50 ``=``), numbers made up but consistent.
"""

from __future__ import annotations

import math
import re

import pytest
from conftest import RAW, TEST_DATA

from analysis.ingest import HEAD_BYTES, detect, ingest
from analysis.schema import has_flag, trusted

VLLM_LOG = TEST_DATA / "formats" / "vllm" / "upstream_stdout_conc32.log"
SGLANG_LOG = TEST_DATA / "formats" / "sglang" / "bench_serving_console.log"


def _printed(text: str, label: str, nth: int = 0) -> float:
    return float(re.findall(rf"^{re.escape(label)}:\s+(\S+)", text, flags=re.M)[nth])


def test_vllm_console_block_gives_the_printed_numbers():
    text = VLLM_LOG.read_text()
    p = ingest([VLLM_LOG]).points.iloc[0]
    assert p["format"] == "vllm-serve-console" and p["tool"] == "vllm"
    assert p["model"] == "MiniMax-M2.5"  # from the Namespace(... model='MiniMaxAI/MiniMax-M2.5' ...) dump
    assert p["num_requests"] == _printed(text, "Successful requests") == 200
    assert p["failed_requests"] == 0 and p["concurrency"] == 32
    assert p["output_tok_s"] == _printed(text, "Output token throughput (tok/s)")
    assert p["total_tok_s"] == _printed(text, "Total token throughput (tok/s)")
    assert p["request_s"] == _printed(text, "Request throughput (req/s)")
    assert p["isl"] == pytest.approx(_printed(text, "Total input tokens") / 200)
    assert p["osl"] == pytest.approx(_printed(text, "Total generated tokens") / 200)
    assert p["ttft_ms_mean"] == _printed(text, "Mean TTFT (ms)") and p["ttft_ms_p99"] == _printed(text, "P99 TTFT (ms)")
    assert p["tpot_ms_p50"] == _printed(text, "Median TPOT (ms)")
    assert p["itl_ms_mean"] == _printed(text, "Mean ITL (ms)") and p["itl_ms_p99"] == _printed(text, "P99 ITL (ms)")
    assert p["tokens_per_step"] == _printed(text, "Acceptance length")
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / _printed(text, "Median TPOT (ms)"))
    assert p["tok_s_per_user_def"] == "1000/tpot_ms_p50"
    assert math.isnan(p["request_rate"]) and has_flag(ingest([VLLM_LOG]).points, "request-rate-inf").all()


def test_sglang_console_sweep_gives_one_point_per_block():
    text = SGLANG_LOG.read_text()
    assert detect(SGLANG_LOG, SGLANG_LOG.read_bytes()[:HEAD_BYTES]).name == "sglang-serving-console"
    result = ingest([SGLANG_LOG])
    pts = result.points
    assert result.quarantine.empty and list(pts["format"]) == ["sglang-serving-console"] * 2
    assert list(pts["concurrency"]) == [8, 32] and list(pts["framework"]) == ["sglang", "sglang"]
    assert list(pts["model"]) == ["Llama-3.1-8B-Instruct"] * 2
    assert list(pts["source_line"]) == [9, 50]  # the block headers
    for i, p in enumerate(pts.to_dict("records")):
        assert p["output_tok_s"] == _printed(text, "Output token throughput (tok/s)", i)
        assert p["total_tok_s"] == _printed(text, "Total token throughput (tok/s)", i)
        assert p["e2e_ms_p50"] == _printed(text, "Median E2E Latency (ms)", i)
        assert p["e2e_ms_mean"] == _printed(text, "Mean E2E Latency (ms)", i)
        assert p["tpot_ms_p99"] == _printed(text, "P99 TPOT (ms)", i)
        assert p["tok_s_per_user"] == pytest.approx(1000.0 / _printed(text, "Median TPOT (ms)", i))
    assert trusted(pts).all()


def test_a_block_cut_off_before_its_closing_line_is_kept_flagged_truncated(tmp_path):
    text = SGLANG_LOG.read_text()
    path = tmp_path / "sweep.log"
    path.write_text(text[: text.rindex("P99 ITL (ms)")])
    result = ingest([path])
    assert has_flag(result.points, "truncated").tolist() == [False, True]
    assert trusted(result.points).tolist() == [True, False]
    row = result.quarantine.iloc[0]
    assert row["line"] == 50 and "no closing '=====' line" in row["reason"]


def test_one_bad_block_is_its_own_quarantine_row(tmp_path):
    text = SGLANG_LOG.read_text()
    first_end = text.index("=" * 50 + "\n", text.index("Max ITL")) + 51
    bad = text[:first_end].replace("Output token throughput (tok/s):", "Output throughput:")
    path = tmp_path / "sweep.log"
    path.write_text(bad + text[first_end:])
    result = ingest([path])
    assert list(result.points["concurrency"]) == [32]
    row = result.quarantine.iloc[0]
    assert row["line"] == 9 and "Output token throughput" in row["reason"]
    path.write_text(text[:first_end].replace("40.00     \n", "-40.00    \n", 1) + text[first_end:])
    row = ingest([path]).quarantine.iloc[0]
    assert row["reason"] == "negative benchmark duration -40 s" and row["field"] == "Benchmark duration (s)"


def test_lines_pasted_with_a_comment_prefix_are_read(tmp_path):
    path = tmp_path / "notes.log"
    path.write_text("".join("# " + line + "\n" for line in VLLM_LOG.read_text().splitlines()))
    p = ingest([path]).points.iloc[0]
    assert p["output_tok_s"] == ingest([VLLM_LOG]).points.iloc[0]["output_tok_s"] and p["concurrency"] == 32


def test_shipped_vllm_console_log_is_no_longer_quarantined():
    log = next(RAW.rglob("vllm_bench_serve_conc32.log"))
    result = ingest([log])
    assert len(result.points) == 1 and result.quarantine.empty
