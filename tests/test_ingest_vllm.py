"""vLLM readers against raw files read independently here.

Fixtures: ``fork_*.json`` are real InferenceX ``utils/bench_serving/benchmark_serving.py`` (vLLM fork) results copied
from SemiAnalysisAI/InferenceX (see /work/shared/samples/PROVENANCE.md); ``upstream_stdout_conc32.log`` is a real
``vllm bench serve`` stdout; ``lambdalabs_v05_mistral7b_h100_len2000.json`` is a real vLLM 0.5.4
``benchmark_serving.py --save-result`` result with a zero-token request (tests/data/formats/PROVENANCE.md). No real
newest-upstream results exist, so ``bench_serve_detailed_spec.json`` and
``bench_serve_append.json`` follow ``vllm/benchmarks/serve.py @009e6d4a`` (``--save-detailed``, ``--append-result``,
``--metadata``, spec-decode keys, default percentiles "99" and metrics "ttft,tpot,itl": no e2el keys),
``bench_latency.json`` follows ``vllm/benchmarks/latency.py @00cae075`` and ``bench_throughput.json``
``vllm/benchmarks/throughput.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from analysis.ingest import detect, ingest
from analysis.ingest.base import HEAD_BYTES
from analysis.ingest.requests_table import percentiles_from_requests, pooled_itl_ms, request_columns
from analysis.schema import has_flag, usable_for_fits

DATA = Path(__file__).parent / "data" / "formats" / "vllm"
RAW = Path(__file__).resolve().parents[1] / "data" / "raw"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _one(name: str):
    result = ingest([DATA / name])
    assert len(result.points) == 1, result.quarantine
    return result, result.points.iloc[0]


def test_fork_result_maps_summary_keys():
    raw = _raw("fork_gptoss_conc4.json")
    result, p = _one("fork_gptoss_conc4.json")
    assert p["format"] == "vllm-serve" and p["tool"] == "vllm"
    assert p["output_tok_s"] == pytest.approx(raw["output_throughput"])
    assert p["total_tok_s"] == pytest.approx(raw["total_token_throughput"])
    assert p["request_s"] == pytest.approx(raw["request_throughput"])
    assert p["tpot_ms_p50"] == pytest.approx(raw["median_tpot_ms"])
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / raw["median_tpot_ms"])
    assert p["tok_s_per_user_def"] == "1000/tpot_ms_p50"
    assert p["ttft_ms_p99"] == pytest.approx(raw["p99_ttft_ms"])
    assert p["ttft_ms_p90"] == pytest.approx(raw["p90_ttft_ms"])
    assert p["e2e_ms_p50"] == pytest.approx(raw["median_e2el_ms"])
    assert p["itl_ms_p99"] == pytest.approx(raw["p99_itl_ms"])
    assert p["concurrency"] == raw["max_concurrency"]
    assert p["isl"] == pytest.approx(raw["total_input_tokens"] / raw["completed"])
    assert p["num_requests"] == raw["completed"] and p["failed_requests"] == 0
    assert p["model"] == "gpt-oss-120b"  # from the /models/models--openai--gpt-oss-120b/snapshots/... path
    assert p["date"] == "2026-04-28T10:57:48"
    assert p["framework"] == "unknown"  # backend "openai" names the API, not the engine
    assert raw["request_rate"] == "inf" and math.isnan(p["request_rate"])
    assert has_flag(result.points, "request-rate-inf").all()
    assert "request_goodput:" in raw  # the old key with the colon is read without complaint
    assert result.quarantine.empty


def test_failed_run_is_kept_flagged_with_nan_metrics():
    raw = _raw("fork_minimax_8k1k_conc64_failed.json")
    assert raw["completed"] == 0 and raw["median_tpot_ms"] == 0.0
    result, p = _one("fork_minimax_8k1k_conc64_failed.json")
    assert has_flag(result.points, "failed-run").all()
    for col in ("tpot_ms_p50", "ttft_ms_p99", "e2e_ms_p50", "output_tok_s", "tok_s_per_user", "isl"):
        assert math.isnan(p[col]), col  # 0.0 in the file is np.mean([] or 0), not a latency
    assert p["failed_requests"] == raw["num_prompts"] - raw["completed"]
    assert p["concurrency"] == raw["max_concurrency"]
    assert not usable_for_fits(result.points).any()


def test_mtp_run_keeps_tpot_and_itl_apart():
    raw = _raw("fork_kimi_mtp_conc32.json")
    _, p = _one("fork_kimi_mtp_conc32.json")
    assert raw["mean_itl_ms"] > 2 * raw["mean_tpot_ms"]  # chunks carry several tokens
    assert p["itl_ms_mean"] == pytest.approx(raw["mean_itl_ms"])
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / raw["median_tpot_ms"])
    assert p["osl"] == pytest.approx(raw["total_output_tokens"] / raw["completed"])


def test_upstream_stdout_log_is_read_by_the_console_reader():
    path = DATA / "upstream_stdout_conc32.log"
    assert detect(path, path.read_bytes()[:HEAD_BYTES]).name == "vllm-serve-console"
    result = ingest([path])
    assert len(result.points) == 1 and result.quarantine.empty


TRIMMED = sorted(RAW.glob("inferencex-repo/experimental/token_position_decode_slo/*/results/*.json"))[:1]


@pytest.mark.parametrize("path", [
    *[t.relative_to(RAW).as_posix() for t in TRIMMED],  # trimmed summary: seconds, good_completed
    "inferencex-samples/agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_"
    "MI355-gbt350-odcdh5-wbb3.json",
    "inferencex-samples/together_runner/baselines/b200/sglang/dsr1-fp4/1k1k/tuned/conc16.json",
])
def test_inferencex_derivatives_are_left_to_their_reader(path):
    file = RAW / path
    assert file.exists(), f"shipped sample moved: {path}"
    found = detect(file, file.read_bytes()[:HEAD_BYTES])
    assert found is None or found.tool != "vllm"


def test_detailed_newest_result_fills_missing_e2e_from_requests():
    raw = _raw("bench_serve_detailed_spec.json")
    assert "median_e2el_ms" not in raw  # upstream default --percentile-metrics is ttft,tpot,itl
    result, p = _one("bench_serve_detailed_spec.json")
    ok = [i for i, e in enumerate(raw["errors"]) if not e]
    lat_ms = np.array([raw["latencies"][i] for i in ok]) * 1000
    assert p["e2e_ms_p50"] == pytest.approx(np.median(lat_ms))
    assert p["e2e_ms_p99"] == pytest.approx(np.percentile(lat_ms, 99))
    assert p["e2e_ms_mean"] == pytest.approx(lat_ms.mean())
    # summary keys present in the file win over recomputation
    assert p["ttft_ms_p99"] == pytest.approx(raw["p99_ttft_ms"])
    # only p99 was written; p90 is computed from the per-request TTFTs of the ok requests
    ttft_ms = np.array([raw["ttfts"][i] for i in ok]) * 1000
    assert p["ttft_ms_p90"] == pytest.approx(np.percentile(ttft_ms, 90))
    assert p["tokens_per_step"] == pytest.approx(raw["spec_decode_acceptance_length"])
    assert raw["tp"] == "8" and p["tp"] == 8.0  # --metadata values are strings
    assert p["hardware"] == "B200" and p["precision"] == "fp8"
    assert p["failed_requests"] == raw["failed"] == 1
    assert p["model"] == "DeepSeek-R1-0528"
    assert p["tool_version"] == "bench-serve"


def test_detailed_arrays_become_a_request_table_matching_the_tool():
    raw = _raw("bench_serve_detailed_spec.json")
    result = ingest([DATA / "bench_serve_detailed_spec.json"])
    req = result.requests
    assert list(req.columns) == ["source_file"] + request_columns()
    assert len(req) == len(raw["ttfts"]) == raw["num_prompts"]
    bad = req[req["error"] != ""]
    assert len(bad) == raw["failed"] and bad["ttft_ms"].isna().all()
    # Recomputing from requests reproduces vLLM's own summary (its calculate_metrics, numpy percentiles).
    stats = percentiles_from_requests(req, itl_gaps_ms=pooled_itl_ms(raw["itls"], raw["errors"]))
    assert stats["tpot_ms_p50"] == pytest.approx(raw["median_tpot_ms"])
    assert stats["tpot_ms_p99"] == pytest.approx(raw["p99_tpot_ms"])
    assert stats["ttft_ms_mean"] == pytest.approx(raw["mean_ttft_ms"])
    assert stats["itl_ms_p50"] == pytest.approx(raw["median_itl_ms"])
    assert stats["itl_ms_p99"] == pytest.approx(raw["p99_itl_ms"])


def test_append_result_file_yields_one_point_per_object():
    lines = [json.loads(t) for t in (DATA / "bench_serve_append.json").read_text().splitlines() if t.strip()]
    result = ingest([DATA / "bench_serve_append.json"])
    pts = result.points.sort_values("source_line")
    assert len(pts) == len(lines) == 3
    assert pts["run_id"].nunique() == 3
    assert pts["concurrency"].tolist() == [r["max_concurrency"] for r in lines]
    assert pts["output_tok_s"].tolist() == pytest.approx([r["output_throughput"] for r in lines])
    assert pts["tok_s_per_user"].tolist() == pytest.approx([1000.0 / r["median_tpot_ms"] for r in lines])
    inf = has_flag(pts, "request-rate-inf").tolist()
    assert inf == [r["request_rate"] == "inf" for r in lines] == [True, True, False]
    assert pts["request_rate"].iloc[2] == lines[2]["request_rate"]
    # latencies survive without --save-detailed: e2e statistics come from them
    lat = np.array(lines[0]["latencies"]) * 1000
    assert pts["e2e_ms_p50"].iloc[0] == pytest.approx(np.median(lat))


def test_broken_record_in_append_file_is_reported_and_the_rest_read(tmp_path):
    text = (DATA / "bench_serve_append.json").read_text().splitlines()
    path = tmp_path / "appended.json"
    path.write_text("\n".join([text[0], '{"completed": 4, "output_throughput": ', text[2]]))
    result = ingest([path])
    assert len(result.points) == 2
    assert len(result.quarantine) == 1 and result.quarantine["line"].iloc[0] == 2


def test_bench_latency_seconds_to_ms_and_unknown_batch():
    raw = _raw("bench_latency.json")
    _, p = _one("bench_latency.json")
    assert p["format"] == "vllm-latency"
    assert p["e2e_ms_p50"] == pytest.approx(raw["percentiles"]["50"] * 1000)  # string key in JSON
    assert p["e2e_ms_p99"] == pytest.approx(raw["percentiles"]["99"] * 1000)
    assert p["e2e_ms_mean"] == pytest.approx(raw["avg_latency"] * 1000)
    assert math.isnan(p["batch_size"]) and math.isnan(p["osl"])  # not in the file
    assert p["tok_s_per_user_def"] == "osl/e2e" and math.isnan(p["tok_s_per_user"])


def test_bench_throughput_counts_input_plus_output():
    raw = _raw("bench_throughput.json")
    _, p = _one("bench_throughput.json")
    assert p["format"] == "vllm-throughput"
    assert p["total_tok_s"] == pytest.approx(raw["tokens_per_second"])
    assert math.isnan(p["output_tok_s"])
    assert p["num_requests"] == raw["num_requests"]


@pytest.mark.parametrize("key", ["median_ttft_ms", "p99_tpot_ms", "p99.9_itl_ms"])
def test_negative_latency_rejects_the_result_naming_the_key(tmp_path, key):
    """A negative statistic was never measured: quarantined, even where the table keeps no column for it."""
    raw = _raw("fork_kimi_mtp_conc32.json")
    raw[key] = -abs(raw[key])
    path = tmp_path / "fork_kimi_mtp_conc32.json"
    path.write_text(json.dumps(raw))
    result = ingest([path])
    assert result.points.empty
    q = result.quarantine.iloc[0]
    assert q["field"] == key and q["reason"] == f"negative latency {raw[key]:g} ms"


def test_negative_latency_in_appended_record_skips_only_that_record(tmp_path):
    lines = (DATA / "bench_serve_append.json").read_text().splitlines()
    second = json.loads(lines[1])
    second["mean_ttft_ms"] = -3.5
    lines[1] = json.dumps(second)
    path = tmp_path / "appended.json"
    path.write_text("\n".join(lines))
    result = ingest([path])
    assert len(result.points) == len(lines) - 1
    assert result.quarantine[["line", "field", "reason"]].values.tolist() == [
        [2, "mean_ttft_ms", "negative latency -3.5 ms"]]


def test_truncated_result_says_truncated(tmp_path):
    text = (DATA / "fork_kimi_mtp_conc32.json").read_text()
    path = tmp_path / "fork_kimi_mtp_conc32.json"
    path.write_text(text[: len(text) // 2])
    q = ingest([path]).quarantine
    assert len(q) == 1 and q["reason"].iloc[0].startswith("truncated JSON")
    assert q["line"].iloc[0] == text[: len(text) // 2].count("\n") + 1


# --- vllm bench sweep serve (real files: er0080/vllm-benchmarking fixtures, vLLM 0.25.1; PROVENANCE.md) --------------
SWEEP = DATA / "sweep_v0.25.1"
SEQS4 = SWEEP / "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"


def test_sweep_summary_alone_gives_one_point_per_run_with_the_files_numbers(tmp_path):
    folder = tmp_path / SEQS4.name
    folder.mkdir()
    (folder / "summary.json").write_bytes((SEQS4 / "summary.json").read_bytes())
    summary = folder / "summary.json"
    assert detect(summary, summary.read_bytes()[:HEAD_BYTES]).name == "vllm-sweep-summary"
    items = json.loads((SEQS4 / "summary.json").read_text())
    result = ingest([folder])
    pts = result.points.sort_values("run_id")
    assert pts["format"].unique().tolist() == ["vllm-sweep-summary"]
    assert pts["run_id"].tolist() == [f"{SEQS4.name}#run=0", f"{SEQS4.name}#run=1"]
    assert pts["scenario"].unique().tolist() == ["max_num_seqs=4"]
    assert pts["concurrency"].tolist() == [2.0, 2.0]
    assert pts["output_tok_s"].tolist() == pytest.approx([93.74767963046673, 199.36907134182283])
    assert pts["ttft_ms_p50"].tolist() == pytest.approx([44.92285849846667, 38.187976999324746])
    assert pts["tpot_ms_p50"].tolist() == pytest.approx([r["median_tpot_ms"] for r in items])
    assert pts["e2e_ms_p50"].tolist() == pytest.approx([r["median_e2el_ms"] for r in items])
    assert pts["model"].unique().tolist() == ["opt-125m"]


def test_sweep_folder_reads_each_run_once():
    result = ingest([SWEEP])
    pts = result.points
    assert len(pts) == 4 and pts["run_id"].nunique() == 4  # two combinations × two runs, no run counted twice
    assert set(pts["format"]) == {"vllm-serve"}  # the run=N.json files; the summaries say so and add nothing
    files = result.files.set_index("format")
    notes = result.files.loc[result.files["format"] == "vllm-sweep-summary", "note"].tolist()
    assert len(notes) == 2 and all("2 of 2 runs are read from the files beside this summary" in n for n in notes)
    assert (files.loc["vllm-sweep-summary", "points"] == 0).all()
    by = pts.set_index("run_id")
    seqs8 = "SERVE--max_num_seqs=8-BENCH--max_concurrency=2-num_prompts=8"
    assert by.loc[f"{seqs8}#run=0", "scenario"] == "max_num_seqs=8"
    run0 = json.loads((SWEEP / seqs8 / "run=0.json").read_text())
    assert by.loc[f"{seqs8}#run=0", "output_tok_s"] == pytest.approx(run0["output_throughput"])
    assert result.quarantine.empty


def test_sweep_summary_item_that_differs_from_its_run_file_is_read(tmp_path):
    folder = tmp_path / SEQS4.name
    folder.mkdir()
    items = json.loads((SEQS4 / "summary.json").read_text())
    (folder / "summary.json").write_bytes((SEQS4 / "summary.json").read_bytes())
    changed = dict(items[1], output_throughput=1.0)
    (folder / "run=1.json").write_text(json.dumps(changed))
    pts = ingest([folder]).points
    assert sorted(pts["format"]) == ["vllm-serve", "vllm-sweep-summary", "vllm-sweep-summary"]


def test_sweep_parameters_parse_from_the_folder_name():
    from analysis.ingest.vllm import sweep_params
    assert sweep_params("--max_num_seqs=4") == [("max_num_seqs", "4")]
    assert sweep_params("--max_concurrency=2-num_prompts=8") == [("max_concurrency", "2"), ("num_prompts", "8")]
    assert sweep_params("--model=org/name-7b-max_num_seqs=4") == [("model", "org/name-7b"), ("max_num_seqs", "4")]


def test_fork_latency_ms_keys_are_the_files_own_e2e_statistics(tmp_path):
    """Forks of benchmark_serving name end-to-end latency `mean_/median_/p99_latency_ms`; those, not a rebuild from
    TTFT + gaps, are the point's e2e. A real result with its e2el keys renamed that way (constructed variant)."""
    rec = json.loads((SEQS4 / "run=0.json").read_text())
    for stat in ("mean", "median", "std", "p99"):
        rec[f"{stat}_latency_ms"] = rec.pop(f"{stat}_e2el_ms")
    path = tmp_path / "fork.json"
    path.write_text(json.dumps(rec))
    pt = ingest([path]).points.iloc[0]
    assert pt["e2e_ms_p50"] == pytest.approx(166.47808399284258)
    assert pt["e2e_ms_mean"] == pytest.approx(340.3411977451469)
    assert pt["e2e_ms_p99"] == pytest.approx(876.8009717071254)


# --- a real vLLM 0.5.4 result with a zero-token request (LambdaLabsML/vllm-benchmark, see PROVENANCE.md) -------------
LAMBDA = "lambdalabs_v05_mistral7b_h100_len2000.json"


def _lambda_arrays() -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """The file, its TTFTs in ms, the time to each request's last chunk (TTFT + Σ gaps, ms: the file saves no
    latency) and a mask of the requests that produced tokens."""
    raw = _raw(LAMBDA)
    ttft = np.array(raw["ttfts"]) * 1000
    last_chunk = ttft + np.array([sum(g) for g in raw["itls"]]) * 1000
    return raw, ttft, last_chunk, np.array(raw["output_lens"]) > 0


def test_real_zero_token_request_is_errored_in_the_request_table():
    raw = _raw(LAMBDA)
    assert raw["completed"] == raw["num_prompts"] == 10 and set(raw["errors"]) == {""}  # the tool counted all ten
    zero = [i for i, n in enumerate(raw["output_lens"]) if n == 0]
    assert zero == [4] and raw["ttfts"][4] == 0.0 and raw["itls"][4] == [] and raw["generated_texts"][4] == ""
    result = ingest([DATA / LAMBDA])
    req = result.requests.set_index("request_index")
    assert len(req) == 10  # every request is kept
    assert req.loc[4, "error"] == "no output (zero tokens)"
    assert req.loc[4, "input_tokens"] == 375 and req.loc[4, "output_tokens"] == 0
    assert math.isnan(req.loc[4, "ttft_ms"]) and math.isnan(req.loc[4, "e2e_ms"])  # not the 0 the file holds
    assert (req.drop(index=4)["error"] == "").all()
    assert req.loc[6, "ttft_ms"] == pytest.approx(raw["ttfts"][6] * 1000)
    assert req.loc[6, "e2e_ms"] == pytest.approx((raw["ttfts"][6] + sum(raw["itls"][6])) * 1000)
    assert result.files["note"].iloc[0].startswith("1 of 10 requests counted completed returned no token")


def test_real_zero_token_request_is_left_out_of_ttft_and_e2e_statistics():
    raw, ttft, last_chunk, made_tokens = _lambda_arrays()
    result, p = _one(LAMBDA)
    assert has_flag(result.points, "zero-token-requests").iloc[0] and has_flag(result.points, "request-rate-inf").iloc[0]
    # the file's own TTFT statistics are those of all ten requests, the 0 s one included
    assert raw["mean_ttft_ms"] == pytest.approx(ttft.mean()) == pytest.approx(51.811695587821305)
    assert raw["median_ttft_ms"] == pytest.approx(np.median(ttft))
    # the point's are those of the nine that produced tokens
    assert p["ttft_ms_mean"] == pytest.approx(ttft[made_tokens].mean()) == pytest.approx(57.568550653134785)
    assert p["ttft_ms_p50"] == pytest.approx(np.median(ttft[made_tokens])) == pytest.approx(64.73432597704232)
    assert p["ttft_ms_p90"] == pytest.approx(np.percentile(ttft[made_tokens], 90))
    assert p["ttft_ms_p99"] == pytest.approx(np.percentile(ttft[made_tokens], 99))
    assert p["ttft_ms_p99"] != pytest.approx(raw["p99_ttft_ms"])
    # no e2e statistic and no latency array in the file: e2e is the time to the last chunk of the nine
    assert not any(k.endswith(("e2el_ms", "latency_ms")) for k in raw) and "latencies" not in raw
    assert p["e2e_ms_mean"] == pytest.approx(last_chunk[made_tokens].mean()) == pytest.approx(2271.642102756434)
    assert p["e2e_ms_p50"] == pytest.approx(np.median(last_chunk[made_tokens]))
    assert p["e2e_ms_p99"] == pytest.approx(np.percentile(last_chunk[made_tokens], 99))


def test_real_zero_token_run_keeps_the_files_own_rates_tpot_and_itl():
    raw = _raw(LAMBDA)
    _, p = _one(LAMBDA)
    assert p["output_tok_s"] == pytest.approx(raw["output_throughput"]) == pytest.approx(336.7347908982126)
    assert p["request_s"] == pytest.approx(raw["request_throughput"])  # 10 / duration: the tool's count
    assert raw["request_rate"] == "inf" and math.isnan(p["request_rate"])
    assert math.isnan(p["concurrency"])  # vLLM 0.5 writes no max_concurrency: all ten were sent at once
    for ours, theirs in (("tpot_ms_mean", "mean_tpot_ms"), ("tpot_ms_p50", "median_tpot_ms"),
                         ("tpot_ms_p99", "p99_tpot_ms"), ("itl_ms_mean", "mean_itl_ms"),
                         ("itl_ms_p50", "median_itl_ms"), ("itl_ms_p99", "p99_itl_ms")):
        assert p[ours] == pytest.approx(raw[theirs]), ours
    # the file's ITL statistics are those of the pooled gaps (the zero-token request has none)
    gaps = np.concatenate([g for g in raw["itls"] if g]) * 1000
    assert raw["mean_itl_ms"] == pytest.approx(gaps.mean()) and raw["p99_itl_ms"] == pytest.approx(
        np.percentile(gaps, 99))
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / raw["median_tpot_ms"])
    assert usable_for_fits(ingest([DATA / LAMBDA]).points).iloc[0]  # a warning, not an untrusted point


def test_real_zero_token_request_counts_as_failed_not_as_a_request():
    raw = _raw(LAMBDA)
    _, p = _one(LAMBDA)
    assert p["num_requests"] == raw["completed"] - 1 == 9
    assert p["failed_requests"] == 1 and p["num_requests"] + p["failed_requests"] == raw["num_prompts"]
    # lengths describe the same nine requests: the file's totals less request 4's 375 input and 0 output tokens
    assert raw["total_input_tokens"] == sum(raw["input_lens"]) == 1585
    assert raw["total_output_tokens"] == sum(raw["output_lens"]) == 2490
    assert p["isl"] == pytest.approx((1585 - 375) / 9)
    assert p["osl"] == pytest.approx(2490 / 9)
