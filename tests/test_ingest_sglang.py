"""SGLang readers against raw lines read independently here.

No real SGLang result file was found committed anywhere, so the fixtures follow the source as described in
/work/shared/docs/FORMATS.md §1: ``bench_serving.jsonl`` lines 1, 2 and 4 follow ``python/sglang/bench_serving.py
@0033168f`` (mid-2025 key set, only p99, bare ``Infinity`` rate; line 4 a run with no completed request), line 3 the
2026 ``python/sglang/benchmark/serving.py`` with ``--output-details`` (tag, server_info, p90/p95/p99, achieved
``concurrency``, ``accept_length``); ``one_batch.jsonl`` follows ``python/sglang/benchmark/one_batch.py`` and
``one_batch_server.jsonl`` ``python/sglang/benchmark/one_batch_server.py`` (``-1`` sentinels).
``one_batch_server_dsv4_flash_fp8_excerpt.jsonl`` holds four real ``bench_one_batch_server`` lines (sglang
v0.5.13.post1) copied verbatim from two published write-ups (provenance: tests/data/formats/PROVENANCE.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from analysis.ingest import ingest
from analysis.ingest.requests_table import percentiles_from_requests, pooled_itl_ms
from analysis.schema import has_flag

DATA = Path(__file__).parent / "data" / "formats" / "sglang"


def _lines(name: str) -> list[dict]:
    return [json.loads(t) for t in (DATA / name).read_text().splitlines() if t.strip()]


@pytest.fixture(scope="module")
def serving():
    result = ingest([DATA / "bench_serving.jsonl"])
    return result, result.points.sort_values("source_line").reset_index(drop=True)


def test_infinity_rate_is_read_and_flagged(serving):
    text = (DATA / "bench_serving.jsonl").read_text().splitlines()[0]
    assert '"request_rate": Infinity' in text
    with pytest.raises(ValueError):  # strict JSON rejects it; Python's json accepts it by default
        json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert math.isinf(json.loads(text)["request_rate"])
    _, pts = serving
    assert has_flag(pts, "request-rate-inf").all()
    assert pts["request_rate"].isna().all()


def test_appended_runs_become_points(serving):
    raw = _lines("bench_serving.jsonl")
    result, pts = serving
    assert len(pts) == len(raw) == 4
    assert result.quarantine.empty
    for (_, p), r in zip(pts.iterrows(), raw):
        if r["completed"]:
            assert p["output_tok_s"] == pytest.approx(r["output_throughput"])
            assert p["tok_s_per_user"] == pytest.approx(1000.0 / r["median_tpot_ms"])
            assert p["ttft_ms_p99"] == pytest.approx(r["p99_ttft_ms"])
            assert p["e2e_ms_p50"] == pytest.approx(r["median_e2e_latency_ms"])
            assert p["isl"] == pytest.approx(r["total_input_tokens"] / r["completed"])
    assert pts["concurrency"].iloc[0] == raw[0]["max_concurrency"] == 8
    assert pts["concurrency"].iloc[1] == raw[1]["max_concurrency"] == 32


def test_newest_line_uses_achieved_concurrency_and_details(serving):
    raw = _lines("bench_serving.jsonl")[2]
    result, pts = serving
    p = pts.iloc[2]
    assert raw["max_concurrency"] is None
    assert p["concurrency"] == pytest.approx(raw["concurrency"])
    assert "concurrency-achieved" in p["flags"].split(";")
    assert p["tokens_per_step"] == pytest.approx(raw["accept_length"])
    assert p["model"] == "DeepSeek-V3" and p["run_id"] == raw["tag"]
    assert p["ttft_ms_p90"] == pytest.approx(raw["p90_ttft_ms"])
    assert p["total_tok_s"] == pytest.approx(raw["total_throughput"])
    req = result.requests[result.requests["run_id"] == raw["tag"]]
    assert len(req) == len(raw["ttfts"])
    assert req["ttft_ms"].tolist() == pytest.approx([t * 1000 for t in raw["ttfts"]])
    stats = percentiles_from_requests(req, itl_gaps_ms=pooled_itl_ms(raw["itls"]))
    assert stats["tpot_ms_p50"] == pytest.approx(raw["median_tpot_ms"])
    assert stats["itl_ms_p99"] == pytest.approx(raw["p99_itl_ms"])
    assert stats["e2e_ms_mean"] == pytest.approx(raw["mean_e2e_latency_ms"])


def test_run_with_no_completed_request_is_flagged(serving):
    raw = _lines("bench_serving.jsonl")[3]
    _, pts = serving
    p = pts.iloc[3]
    assert raw["completed"] == 0 and raw["median_ttft_ms"] == 0.0
    assert "failed-run" in p["flags"].split(";")
    assert math.isnan(p["ttft_ms_p50"]) and math.isnan(p["tok_s_per_user"]) and math.isnan(p["output_tok_s"])


def test_one_batch_decode_step_and_prefill():
    raw = _lines("one_batch.jsonl")
    pts = ingest([DATA / "one_batch.jsonl"]).points
    decode = pts[pts["phase"] == "decode"].sort_values("batch_size")
    prefill = pts[pts["phase"] == "prefill"].sort_values("batch_size")
    with_decode = [r for r in raw if "median_decode_latency" in r]
    assert len(prefill) == len(raw) == 3 and len(decode) == len(with_decode) == 2
    assert decode["step_ms"].tolist() == pytest.approx([r["median_decode_latency"] * 1000 for r in with_decode])
    assert decode["tok_s_per_user"].tolist() == pytest.approx([1 / r["median_decode_latency"] for r in with_decode])
    assert (decode["tok_s_per_user_def"] == "1000/step_ms").all()
    assert decode["output_tok_s"].tolist() == pytest.approx([r["median_decode_throughput"] for r in with_decode])
    assert decode["context_len"].tolist() == pytest.approx([r["input_len"] + r["output_len"] / 2 for r in with_decode])
    assert prefill["step_ms"].tolist() == pytest.approx([r["prefill_latency"] * 1000 for r in raw])


def test_one_batch_server_sentinels_are_nan():
    raw = _lines("one_batch_server.jsonl")
    pts = ingest([DATA / "one_batch_server.jsonl"]).points.sort_values("batch_size")
    assert raw[0]["acc_length"] == -1 and math.isnan(pts["tokens_per_step"].iloc[0])
    assert pts["tokens_per_step"].iloc[1] == pytest.approx(raw[1]["acc_length"])
    assert pts["tok_s_per_user"].tolist() == pytest.approx([r["output_throughput"] / r["batch_size"] for r in raw])
    assert pts["tpot_ms_mean"].tolist() == pytest.approx(
        [1000 * r["batch_size"] / r["output_throughput"] for r in raw])
    assert np.all(pts["output_tok_s"].to_numpy() > 0)


# --- bench_one_batch_server: real pasted lines ----------------------------------------------------------------
# Four result lines as two benchmark write-ups (DeepSeek-V4-Flash FP8, 8× RTX PRO 6000, sglang v0.5.13.post1) pasted
# them, copied verbatim (provenance: tests/data/formats/PROVENANCE.md).
PASTED = DATA / "one_batch_server_dsv4_flash_fp8_excerpt.jsonl"


def test_real_lines_keep_the_files_decode_rate_where_it_is_possible():
    raw = _lines(PASTED.name)
    result = ingest([PASTED])
    assert result.quarantine.empty and len(result.points) == len(raw) == 4
    pts = result.points.sort_values("source_line")
    for (_, p), r in zip(pts.iterrows(), raw):
        b, i, o, lat, ttft = r["batch_size"], r["input_len"], r["output_len"], r["latency"], r["last_ttft"]
        # the file's own definitions, recomputed by hand from its fields (2-decimal rounding in the file)
        assert r["output_throughput"] == pytest.approx(b * o / (lat - ttft), abs=0.01)
        assert r["overall_throughput"] == pytest.approx(b * (i + o) / lat, abs=0.01)
        assert r["output_throughput"] < r["overall_throughput"]
        assert p["output_tok_s"] == r["output_throughput"]
        assert p["total_tok_s"] == r["overall_throughput"]
        assert p["tok_s_per_user"] == pytest.approx(r["output_throughput"] / b)
        assert p["tpot_ms_mean"] == pytest.approx(1000 * b / r["output_throughput"])
        assert not {"output-above-total", "derived-from-e2e"} & set(p["flags"].split(";"))
    first = pts.iloc[0]
    assert first["batch_size"] == 1016 and first["tok_s_per_user"] == pytest.approx(3412.91 / 1016)


def test_output_rate_above_the_total_is_restated_from_end_to_end_and_flagged(tmp_path):
    """The defect: where the last request's first token comes late (the batch ran in waves), the file's
    output_throughput divides by a window that is only the last wave. Constructed case: the first real line with
    ``last_ttft`` moved to 2400 s of its 2688.9 s and ``output_throughput`` recomputed by the tool's own formula;
    every other field as the file has it."""
    rec = _lines(PASTED.name)[0]
    rec["last_ttft"] = 2400.0
    rec["output_throughput"] = round(rec["batch_size"] * rec["output_len"] / (rec["latency"] - rec["last_ttft"]), 2)
    assert rec["output_throughput"] == pytest.approx(28808.54, abs=0.01)  # 8.3× the file's own total rate
    assert rec["output_throughput"] > rec["overall_throughput"] == 3482.25
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    p = ingest([path]).points.iloc[0]
    b, o, lat = rec["batch_size"], rec["output_len"], rec["latency"]
    assert p["output_tok_s"] == pytest.approx(b * o / lat) == pytest.approx(3095.33, abs=0.01)
    assert p["output_tok_s"] <= p["total_tok_s"] == rec["overall_throughput"]
    assert p["tok_s_per_user"] == pytest.approx(o / lat) == pytest.approx(3.0466, abs=1e-4)
    assert p["tok_s_per_user"] < rec["output_throughput"] / b / 9  # taken as is it would be 28.4 tok/s/user
    assert math.isnan(p["tpot_ms_mean"])
    assert {"output-above-total", "derived-from-e2e"} <= set(p["flags"].split(";"))


def test_output_above_total_is_flagged_for_any_reader():
    from analysis.schema import to_points

    pts = to_points([{"source_file": "x", "tool": "t", "format": "f", "output_tok_s": 5000.0, "total_tok_s": 4000.0},
                     {"source_file": "y", "tool": "t", "format": "f", "output_tok_s": 4000.0, "total_tok_s": 4000.0}])
    assert has_flag(pts, "output-above-total").tolist() == [True, False]
