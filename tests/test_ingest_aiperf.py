"""AIPerf readers against the raw files read independently: three aggregate schema generations, the CSV, and the
per-request JSONL (warm-up excluded, errors counted, point from requests equal to AIPerf's own aggregate), read
both by default (per-chunk gap arrays cut out unparsed) and with ``itl_gaps=True`` (every gap parsed)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from analysis.ingest import ingest
from analysis.ingest.aiperf import GAPS_KEY, REQUEST_STREAM_COLUMNS, request_record, request_record_skipping
from analysis.ingest.jsonl_stream import stream_jsonl
from analysis.ingest.requests_table import build_requests

DATA = Path(__file__).parent / "data" / "formats" / "aiperf"
CONC1 = DATA / "inferencex_conc1"
RUN1 = DATA / "run1_records"


def _raw_requests(path: Path):
    """Profiling, non-error records of an AIPerf JSONL, parsed with the standard library."""
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        phase = rec["metadata"].get("benchmark_phase", rec["metadata"].get("credit_phase"))
        if phase != "warmup" and not rec.get("error"):
            out.append(rec)
    return out


def _one(points, name):
    rows = points[points["source_file"].str.endswith(name)]
    assert len(rows) == 1, rows["source_file"].tolist()
    return rows.iloc[0]


def test_v080_json_ttft_p50_and_throughput_match_raw_file():
    raw = json.loads((CONC1 / "profile_export_aiperf.json").read_text())
    result = ingest([CONC1 / "profile_export_aiperf.json"])
    p = result.points.iloc[0]
    assert p["format"] == "aiperf-json" and p["tool_version"] == "0.8.0 (schema 1.2)"
    assert p["ttft_ms_p50"] == pytest.approx(raw["time_to_first_token"]["p50"])
    assert p["tpot_ms_p50"] == pytest.approx(raw["inter_token_latency"]["p50"])
    assert p["itl_ms_p50"] == pytest.approx(raw["inter_chunk_latency"]["p50"])
    assert p["output_tok_s"] == pytest.approx(raw["output_token_throughput"]["avg"])
    assert p["total_tok_s"] == pytest.approx(raw["total_token_throughput"]["avg"])
    assert p["model"] == raw["input_config"]["endpoint"]["model_names"][0].split("/")[-1]
    assert p["concurrency"] == raw["input_config"]["loadgen"]["concurrency"] == 1
    # warm-up metrics are a separate block and must not leak in
    assert raw["warmup_metrics"]["request_latency"]["p50"] != pytest.approx(p["e2e_ms_p50"])
    assert p["tok_s_per_user"] == pytest.approx(1000.0 / raw["inter_token_latency"]["p50"])


def test_old_records_schema_reads_ttft_tag_and_errors():
    raw = json.loads((RUN1 / "profile_export_aiperf.json").read_text())["records"]
    p = ingest([RUN1 / "profile_export_aiperf.json"]).points.iloc[0]
    assert p["tool_version"] == "records schema (pre-0.8)"
    assert p["ttft_ms_p50"] == pytest.approx(raw["ttft"]["p50"])
    assert p["num_requests"] == raw["request_count"]["avg"] == 89
    assert p["failed_requests"] == raw["error_request_count"]["avg"] == 11
    assert p["model"] == "gpt-oss-20b" and p["concurrency"] == 100
    # no total_token_throughput in this generation: output x (isl + osl) / osl
    expected_total = raw["output_token_throughput"]["avg"] * (raw["total_isl"]["avg"] + raw["total_osl"]["avg"]) \
        / raw["total_osl"]["avg"]
    assert p["total_tok_s"] == pytest.approx(expected_total)


def test_flat_export_models_generation(tmp_path):
    """Generation 2 (export_models.py @db4f6397): flat metric objects, None fields dropped, no count/sum."""
    old = json.loads((RUN1 / "profile_export_aiperf.json").read_text())
    rename = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}
    flat = {}
    for tag, block in old["records"].items():
        flat[rename.get(tag, tag)] = {k: v for k, v in block.items()
                                      if k not in ("tag", "header", "count") and v is not None}
    flat.update({k: old[k] for k in ("input_config", "was_cancelled", "error_summary", "start_time", "end_time")})
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(flat, indent=2))
    p = ingest([path]).points.iloc[0]
    assert p["format"] == "aiperf-json" and p["tool_version"] == "flat schema (pre-0.8)"
    assert p["ttft_ms_p50"] == pytest.approx(old["records"]["ttft"]["p50"])
    assert p["e2e_ms_p99"] == pytest.approx(old["records"]["request_latency"]["p99"])


def test_csv_alone_reads_both_sections_with_crlf(tmp_path):
    src = DATA / "m1517_c16none" / "profile_export_aiperf.csv"
    assert b"\r\n" in src.read_bytes()
    rows = {r[0]: r for r in csv.reader(src.read_text().splitlines()) if r}
    header = next(csv.reader([src.read_text().splitlines()[0]]))
    p = ingest([src]).points.iloc[0]
    assert p["format"] == "aiperf-csv"
    assert p["ttft_ms_p50"] == pytest.approx(float(rows["Time to First Token (ms)"][header.index("p50")]))
    assert p["output_tok_s"] == pytest.approx(float(rows["Output Token Throughput (tokens/sec)"][1]))
    assert p["num_requests"] == pytest.approx(float(rows["Request Count"][1]))


def test_csv_defers_to_json_of_same_run():
    result = ingest([CONC1])
    files = result.files.set_index(result.files["source_file"].str.rsplit("/", n=1).str[-1])
    assert files.loc["profile_export_aiperf.csv", "points"] == 0
    assert files.loc["profile_export_aiperf.csv", "n_deferred_to_json"] == 1
    assert files.loc["profile_export_aiperf.json", "points"] == 1
    assert len(result.points) == 1  # one run, one point, though three files describe it


def test_jsonl_excludes_warmup_and_builds_requests():
    raw = _raw_requests(CONC1 / "profile_export.jsonl")
    result = ingest([CONC1])
    files = result.files.set_index(result.files["source_file"].str.rsplit("/", n=1).str[-1])
    assert files.loc["profile_export.jsonl", "n_warmup"] == 1
    assert files.loc["profile_export.jsonl", "n_requests"] == len(raw) == 195
    req = result.requests
    assert len(req) == 195 and (req["error"] == "").all()
    first = raw[0]["metrics"]
    assert req.iloc[0]["ttft_ms"] == pytest.approx(first["time_to_first_token"]["value"])
    assert req.iloc[0]["tpot_ms"] == pytest.approx(first["inter_token_latency"]["value"])
    # default: the gap array is skipped, yet every request's gap mean is exact; gap percentiles are left NaN
    means = [np.mean(r["metrics"]["inter_chunk_latency"]["value"]) for r in raw]
    assert req["itl_ms_mean"].to_numpy() == pytest.approx(np.array(means), rel=1e-12)
    assert req["itl_ms_p50"].isna().all() and req["itl_ms_p99"].isna().all()


def test_itl_gaps_option_parses_gaps_for_percentiles():
    raw = _raw_requests(CONC1 / "profile_export.jsonl")
    full = ingest([CONC1], itl_gaps=True).requests
    default = ingest([CONC1]).requests
    gaps = [r["metrics"]["inter_chunk_latency"]["value"] for r in raw]
    assert full["itl_ms_p99"].to_numpy() == pytest.approx(np.array([np.percentile(g, 99) for g in gaps]))
    assert full["itl_ms_p50"].to_numpy() == pytest.approx(np.array([np.percentile(g, 50) for g in gaps]))
    assert full["itl_ms_mean"].to_numpy() == pytest.approx(default["itl_ms_mean"].to_numpy(), rel=1e-12)
    same = [c for c in default.columns if c not in ("itl_ms_p50", "itl_ms_p99", "itl_ms_mean")]
    assert full[same].equals(default[same])


def test_jsonl_alone_gives_point_matching_aiperf_aggregate(tmp_path):
    """Without the aggregate beside it, the point comes from the requests — and equals AIPerf's own numbers."""
    agg = json.loads((CONC1 / "profile_export_aiperf.json").read_text())
    shutil.copy(CONC1 / "profile_export.jsonl", tmp_path / "profile_export.jsonl")
    p = ingest([tmp_path]).points.iloc[0]
    assert p["format"] == "aiperf-jsonl"
    assert p["ttft_ms_p50"] == pytest.approx(agg["time_to_first_token"]["p50"])  # warm-up excluded
    assert p["tpot_ms_p50"] == pytest.approx(agg["inter_token_latency"]["p50"])
    assert p["e2e_ms_p99"] == pytest.approx(agg["request_latency"]["p99"])
    assert p["num_requests"] == agg["request_count"]["avg"] == 195
    # the run's ITL mean pools every gap, as AIPerf does, though the default never parses a gap
    assert p["itl_ms_mean"] == pytest.approx(agg["inter_chunk_latency"]["avg"], rel=1e-12)
    full = ingest([tmp_path], itl_gaps=True).points.iloc[0]
    for col in ("ttft_ms_p50", "tpot_ms_p50", "e2e_ms_p99", "itl_ms_mean", "output_tok_s"):
        assert full[col] == pytest.approx(p[col], rel=1e-12), col


def test_old_jsonl_counts_cancelled_requests(tmp_path):
    shutil.copy(RUN1 / "profile_export.jsonl", tmp_path / "profile_export.jsonl")
    agg = json.loads((RUN1 / "profile_export_aiperf.json").read_text())["records"]
    result = ingest([tmp_path])
    p = result.points.iloc[0]
    assert p["failed_requests"] == 11 and p["num_requests"] == 89
    assert p["ttft_ms_p50"] == pytest.approx(agg["ttft"]["p50"])
    assert p["output_tok_s"] == pytest.approx(agg["output_token_throughput"]["avg"])
    errors = result.requests[result.requests["error"] != ""]
    assert len(errors) == 11 and errors["error"].str.contains("RequestCancellationError").all()
    assert errors["ttft_ms"].isna().all()


def test_parallel_stream_equals_single_process():
    path = CONC1 / "profile_export.jsonl"
    one = stream_jsonl(path, request_record, columns=REQUEST_STREAM_COLUMNS, workers=1)
    two = stream_jsonl(path, request_record, columns=REQUEST_STREAM_COLUMNS, workers=2)
    assert one.counts == two.counts == {"warmup": 1}
    assert one.table.equals(two.table)
    assert one.table.column("line").to_pylist() == list(range(2, 197))


def test_parallel_stream_reports_file_line_numbers(tmp_path):
    lines = (CONC1 / "profile_export.jsonl").read_bytes().splitlines(keepends=True)
    lines[149] = lines[149][: len(lines[149]) // 2] + b"\n"  # truncate line 150 in the second half of the file
    path = tmp_path / "profile_export.jsonl"
    path.write_bytes(b"".join(lines))
    result = stream_jsonl(path, request_record, columns=REQUEST_STREAM_COLUMNS, workers=2)
    assert [b["line"] for b in result.bad] == [150]
    assert "truncated JSON line" in result.bad[0]["reason"]
    assert result.table.num_rows == 194


def test_skipping_stream_equals_full_parse_on_every_column_it_keeps():
    path = CONC1 / "profile_export.jsonl"
    full = stream_jsonl(path, request_record, columns=REQUEST_STREAM_COLUMNS, workers=1).table.to_pandas()
    for workers in (1, 2):
        cut = stream_jsonl(path, request_record_skipping, columns=REQUEST_STREAM_COLUMNS, workers=workers,
                           skip_array=GAPS_KEY).table.to_pandas()
        assert cut["line"].tolist() == list(range(2, 197))
        assert cut["itl_gaps"].tolist() == full["itl_gaps"].tolist()
        assert cut["itl_ms_mean"].to_numpy() == pytest.approx(full["itl_ms_mean"].to_numpy(), rel=1e-12)
        keep = [c for c in full.columns if c not in ("itl_ms_mean", "itl_ms_p50", "itl_ms_p99")]
        assert cut[keep].equals(full[keep])


def _lines_with(tmp_path, edits: dict) -> Path:
    lines = (CONC1 / "profile_export.jsonl").read_bytes().splitlines(keepends=True)
    for number, edit in edits.items():
        lines[number - 1] = edit(lines[number - 1])
    path = tmp_path / "profile_export.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def _gaps(line: bytes, new: str) -> bytes:
    head, rest = line.split(b'"inter_chunk_latency":{"value":[', 1)
    return head + b'"inter_chunk_latency":{"value":[' + new.encode() + rest[rest.index(b"]"):]


def test_skipped_array_that_is_not_plain_numbers_is_parsed_and_quarantined(tmp_path):
    """A gap array the default would skip but cannot vouch for is parsed whole: bad values still quarantine."""
    path = _lines_with(tmp_path, {
        3: lambda line: _gaps(line, "12.5,NaN,13.0"),
        5: lambda line: _gaps(line, "12.5,-0.25,13.0"),
        7: lambda line: _gaps(line, '12.5,"fast",13.0'),
        9: lambda line: _gaps(line, "12.5,[1.0],13.0"),
        11: lambda line: _gaps(line, "12.5, 13.5,1.4e1"),  # whitespace and an exponent: fine, just not cut
        13: lambda line: _gaps(line, ",".join(["12.345678"] * 8000)),  # 80 kB of gaps: cut, counted
    })
    result = stream_jsonl(path, request_record_skipping, columns=REQUEST_STREAM_COLUMNS, skip_array=GAPS_KEY)
    bad = {b["line"]: b for b in result.bad}
    assert sorted(bad) == [3, 5, 7, 9]
    assert "NaN or Infinity among inter-token gaps" in bad[3]["reason"]
    assert bad[3]["field"] == "metrics.inter_chunk_latency.value"
    assert "negative inter-token gap -0.25" in bad[5]["reason"]
    assert "must all be numbers" in bad[7]["reason"] and "must all be numbers" in bad[9]["reason"]
    table = result.table.to_pandas().set_index("line")
    assert table.loc[11, "itl_ms_mean"] == pytest.approx(np.mean([12.5, 13.5, 14.0]))
    assert table.loc[11, "itl_gaps"] == 3
    assert np.isnan(table.loc[11, "itl_ms_p99"])  # percentiles stay a --itl-gaps column, however parsed
    assert table.loc[13, "itl_gaps"] == 8000
    assert table.loc[13, "itl_ms_mean"] == pytest.approx((table.loc[13, "e2e_ms"] - table.loc[13, "ttft_ms"]) / 8000)
    assert len(table) == 195 - 4


def test_skipping_stream_reports_file_line_numbers(tmp_path):
    path = _lines_with(tmp_path, {150: lambda line: line[: len(line) // 2] + b"\n",  # cut inside the gaps
                                  40: lambda line: line.replace(b'"request_latency":{"value":',
                                                                b'"request_latency":{"value":-', 1)})
    result = stream_jsonl(path, request_record_skipping, columns=REQUEST_STREAM_COLUMNS, workers=2,
                          skip_array=GAPS_KEY)
    assert [(b["line"], b["field"]) for b in result.bad] == [(40, "metrics.request_latency.value"), (150, None)]
    assert "negative latency" in result.bad[0]["reason"]
    assert "truncated JSON line" in result.bad[1]["reason"]
    assert result.table.num_rows == 193


def test_vectorised_requests_table_equals_row_by_row():
    stream = stream_jsonl(RUN1 / "profile_export.jsonl", request_record, columns=REQUEST_STREAM_COLUMNS).table
    names = ["input_tokens", "output_tokens", "ttft_ms", "e2e_ms", "itl_ms_mean", "itl_ms_p50", "itl_ms_p99",
             "error"]
    columns = {n: stream.column(n).to_pylist() for n in names}
    columns["tpot_ms"] = [None] * stream.num_rows  # so tpot is derived both ways
    rows = build_requests("run", columns)
    vectorised = build_requests("run", pa.table({**{n: stream.column(n) for n in names},
                                                 "tpot_ms": pa.nulls(stream.num_rows, pa.float64())}))
    assert vectorised.schema.equals(rows.schema)
    assert vectorised.to_pandas().equals(rows.to_pandas())  # NaN-aware, unlike Table.equals
    frame = rows.to_pandas()
    ok = frame[frame["error"] == ""]
    assert len(ok) == 89 and ok["tpot_ms"].notna().all()
