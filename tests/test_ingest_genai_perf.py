"""GenAI-Perf readers. No real profile_export_genai_perf.* is published, so the JSON/CSV fixtures were written
from the source of genai-perf at triton-inference-server/perf_analyzer@4cc7650c (metrics/statistics.py,
export_data/json_exporter.py and csv_exporter.py: ms, thousands separators, CRLF, the "requests/sec" unit bug)
and in the early-2024 shape FORMATS.md §3a documents (ns, string values, num_output_token). The analyze CSV is
real (perf_analyzer@96a4379b)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from analysis.ingest import ingest

DATA = Path(__file__).parent / "data" / "formats" / "genai_perf"
V4CC = DATA / "v4cc7650c_concurrency8"


def test_json_output_throughput_and_latencies_match_raw():
    raw = json.loads((V4CC / "profile_export_genai_perf.json").read_text())
    p = ingest([V4CC / "profile_export_genai_perf.json"]).points.iloc[0]
    assert p["format"] == "genai-perf-json"
    assert p["output_tok_s"] == pytest.approx(raw["output_token_throughput"]["avg"])
    assert p["ttft_ms_p50"] == pytest.approx(raw["time_to_first_token"]["p50"])
    assert p["tpot_ms_p90"] == pytest.approx(raw["inter_token_latency"]["p90"])
    assert p["osl"] == pytest.approx(raw["output_sequence_length"]["avg"])  # despite its "requests/sec" unit
    assert p["model"] == "Meta-Llama-3-8B-Instruct" and p["concurrency"] == 8


def test_early_2024_ns_string_values_convert_to_ms():
    raw = json.loads((DATA / "early2024_ns_strings" / "profile_export_genai_perf.json").read_text())
    assert isinstance(raw["time_to_first_token"]["p50"], str) and raw["time_to_first_token"]["unit"] == "ns"
    p = ingest([DATA / "early2024_ns_strings"]).points.iloc[0]
    assert p["ttft_ms_p50"] == pytest.approx(float(raw["time_to_first_token"]["p50"]) / 1e6)
    assert p["output_tok_s"] == pytest.approx(float(raw["output_token_throughput"]["avg"]))
    assert p["osl"] == pytest.approx(float(raw["num_output_token"]["avg"]))
    assert p["tool_version"].startswith("early 2024")


def test_csv_alone_parses_thousands_separators(tmp_path):
    src = V4CC / "profile_export_llm_genai_perf.csv"
    text = src.read_bytes()
    assert b'"2,' in text and b"\r\n" in text
    shutil.copy(src, tmp_path / src.name)
    rows = {r[0]: r for r in csv.reader(text.decode().splitlines()) if r}
    p = ingest([tmp_path]).points.iloc[0]
    assert p["format"] == "genai-perf-csv"
    header = next(csv.reader(text.decode().splitlines()))
    expected = float(rows["Request Latency (ms)"][header.index("p99")].replace(",", ""))
    assert expected > 1000 and p["e2e_ms_p99"] == pytest.approx(expected)
    assert p["output_tok_s"] == pytest.approx(float(rows["Output Token Throughput (per sec)"][1]))


def test_csv_beside_json_defers():
    result = ingest([V4CC])
    assert len(result.points) == 1 and result.points.iloc[0]["format"] == "genai-perf-json"


def test_analyze_sweep_one_point_per_config():
    src = DATA / "analyze" / "analyze_export_genai_perf.csv"
    table = list(csv.reader(src.read_text().splitlines()))
    header, body = table[0], table[1: table.index([])]
    result = ingest([src])
    points = result.points.set_index("run_id")
    assert len(points) == len(body) == 5
    for row in body:
        p = points.loc[row[0]]
        assert p["output_tok_s"] == pytest.approx(float(row[header.index("Avg. Output Token Throughput (tokens/sec)")]))
        assert p["ttft_ms_p99"] == pytest.approx(float(row[header.index("p99 Time To First Token (ms)")]))
        assert p["request_s"] == pytest.approx(float(row[header.index("Request Throughput (requests/sec)")]))
        assert p["concurrency"] == 32 and p["model"] == "gpt2"
    assert result.quarantine.empty
