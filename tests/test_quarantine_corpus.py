"""Every file in tests/data/malformed/ ends in the quarantine with the right reason, line and field; good records
next to a bad one are still read; no reason is a traceback."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.ingest import ingest

CORPUS = Path(__file__).parent / "data" / "malformed"

# file -> (reason substring, line or None, field or None); None means "not asserted".
EXPECTED = {
    "aiperf_truncated.json": ("truncated JSON", 534, None),
    "aiperf_invalid.json": ("invalid JSON", 42, None),
    "aiperf_ttft_string.json": ("expected a number, got 'fast'", None, "time_to_first_token.p50"),
    "aiperf_nan_latency.json": ("NaN where a number is required", None, "request_latency.avg"),
    "aiperf_infinite_throughput.json": ("Infinity where a finite number", None, "output_token_throughput.avg"),
    "aiperf_negative_latency.json": ("negative latency", None, "request_latency.p50"),
    "aiperf_missing_request_latency.json": ("required metric 'request_latency' missing", None, "request_latency"),
    "aiperf_one_bad_line.jsonl": ("invalid JSON", 7, None),
    "aiperf_nan_in_line.jsonl": ("NaN where a number is required", 5, "metrics.time_to_first_token.value"),
    "aiperf_string_in_line.jsonl": ("expected a number, got '12.5ms'", 10, "metrics.request_latency.value"),
    "aiperf_negative_in_line.jsonl": ("negative latency", 3, "metrics.request_latency.value"),
    "aiperf_missing_key_in_line.jsonl": ("without request_latency", 15, "metrics.request_latency"),
    "aiperf_truncated_last_line.jsonl": ("truncated JSON line: the file ends mid-record", 20, None),
    "aiperf_only_warmup.jsonl": ("no profiling records", None, None),
    "aiperf_csv_word_in_cell.csv": ("expected a number, got 'abc'", 44, "time_to_first_token.p50"),
    "aiperf_csv_latin1.csv": ("not UTF-8", None, None),
    "genai_perf_unknown_unit.json": ("unknown time unit 'parsecs'", None, "time_to_first_token.unit"),
    "genai_perf_concurrency_word.json": ("expected a number, got 'eight'", None, "input_config.concurrency"),
    "genai_perf_analyze_bad_row.csv": ("expected a number, got 'lots'", 3,
                                       "Avg. Output Token Throughput (tokens/sec)"),
    "llmperf_nan_ttft_summary.json": ("NaN where a number is required", None, "results_ttft_s_mean"),
    "llmperf_negative_e2e_summary.json": ("negative latency", None, "results_end_to_end_latency_s_quantiles_p50"),
    "llmperf_missing_key_summary.json": ("required key 'results_end_to_end_latency_s_mean' missing", None,
                                         "results_end_to_end_latency_s_mean"),
    "llmperf-bad_550_150_individual_responses.json": ("expected a number, got 'slow'", None, "[3].ttft_s"),
    "mlperf_truncated/mlperf_log_summary.txt": ("no 'Scenario :' line", None, "Scenario"),
    "mlperf_negative_tokens/mlperf_log_summary.txt": ("must be >= 0", 8, "Tokens per second"),
    "mlperf_word_latency/mlperf_log_summary.txt": ("expected a number, got 'n0pe'", 37,
                                                   "50.00 percentile first token latency (ns)"),
    "mlperf_detail_bad_line/mlperf_log_detail.txt": ("invalid JSON after ':::MLLOG'", 6, None),
    "mlperf_duplicate_b/mlperf_log_summary.txt": ("duplicate run: identical to", None, None),
    "h200_one_bad_line.jsonl": ("invalid JSON", 8, None),
    "h200_zero_step.jsonl": ("must be > 0", 6, "step_ms_median"),
    "h200_string_step.jsonl": ("expected a number, got '6.0 ms'", 7, "step_ms_median"),
    "vllm_throughput_word.json": ("expected a number, got 'fast'", None, "output_throughput"),
    "vllm_truncated.json": ("truncated JSON", 1, None),
    "vllm_negative_ttft.json": ("negative latency -124.3 ms", 1, "median_ttft_ms"),
    "empty.json": ("empty file", None, None),
    "blank_lines.jsonl": ("empty file", None, None),
    "binary.parquet": ("binary file", None, None),
    "notes.txt": ("unknown format", None, None),
}
# Read in full and kept: the first of an identical pair.
KEPT = {"mlperf_duplicate_a/mlperf_log_summary.txt"}


@pytest.fixture(scope="module")
def result():
    return ingest([CORPUS])


def _name(source_file: str) -> str:
    return source_file.split("malformed/", 1)[1]


@pytest.fixture(scope="module")
def quarantine(result) -> pd.DataFrame:
    q = result.quarantine.copy()
    q["name"] = q["source_file"].map(_name)
    return q


def test_corpus_is_big_enough_and_fully_listed():
    files = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file() and p.name != "README.md"}
    assert len(files) >= 25
    assert files == set(EXPECTED) | KEPT


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_file_quarantined_with_reason_line_field(quarantine, name):
    reason, line, field = EXPECTED[name]
    rows = quarantine[quarantine["name"] == name]
    assert len(rows) == 1, rows[["line", "field", "reason"]].to_dict("records")
    row = rows.iloc[0]
    assert reason in row["reason"]
    if line is not None:
        assert row["line"] == line
    if field is not None:
        assert row["field"] == field


def test_no_reason_is_a_traceback(quarantine):
    assert not quarantine["reason"].str.contains("Traceback").any()
    assert not quarantine["reason"].str.contains(r"File \"/", regex=True).any()


def test_good_records_beside_a_bad_one_are_read(result):
    files = result.files.assign(name=result.files["source_file"].map(_name)).set_index("name")
    requests = result.requests.assign(name=result.requests["source_file"].map(_name))
    assert (requests["name"] == "aiperf_one_bad_line.jsonl").sum() == 19
    assert (requests["name"] == "llmperf-bad_550_150_individual_responses.json").sum() == 19
    assert files.loc["genai_perf_analyze_bad_row.csv", "points"] == 4
    assert files.loc["h200_one_bad_line.jsonl", "points"] == 6  # the 7 decode lines in the excerpt, less one
    assert files.loc["mlperf_detail_bad_line/mlperf_log_detail.txt", "points"] == 1
    assert files.loc["mlperf_duplicate_a/mlperf_log_summary.txt", "points"] == 1


def test_whole_file_rejections_leave_no_points(result):
    files = result.files.assign(name=result.files["source_file"].map(_name)).set_index("name")
    for name in ("aiperf_truncated.json", "aiperf_nan_latency.json", "llmperf_nan_ttft_summary.json",
                 "mlperf_negative_tokens/mlperf_log_summary.txt", "vllm_throughput_word.json"):
        assert files.loc[name, "points"] == 0, name


def test_negative_vllm_ttft_is_quarantined(quarantine, result):
    rows = quarantine[quarantine["name"] == "vllm_negative_ttft.json"]
    assert len(rows) == 1 and "negative" in rows.iloc[0]["reason"]
    files = result.files.assign(name=result.files["source_file"].map(_name)).set_index("name")
    assert files.loc["vllm_negative_ttft.json", "points"] == 0  # not kept with a NaN median
