"""NVIDIA GenAI-Perf (``perf_analyzer/genai-perf``): ``*_genai_perf.json``, the two-section ``*_genai_perf.csv``
and the ``genai-perf analyze`` sweep CSV (one point per run configuration).

Per metric the JSON holds ``{unit, avg, p25..p99, min, max, std}``; system metrics only ``avg``. Time metrics
are ms in current versions and ns in early-2024 ones, which also wrote every number as a string and named the
token counts ``num_output_token``/``num_input_token``. Units are trusted for time metrics only: a bug in
``Statistics._add_units`` (``key == "request_throughput" or "request_goodput"``) tags every other metric
``requests/sec``. GenAI-Perf's ``inter_token_latency`` is per request ``(latency - ttft)/(osl - 1)``, so it is
stored as ``tpot_ms_*`` (as for AIPerf). The CSV writes ``f"{x:,.2f}"`` — thousands separators, quoted — with
CRLF line endings and several tables separated by blank rows. Model and concurrency come from ``input_config``;
no hardware or GPU count is in any file.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from analysis.ingest.aiperf import (
    artifact_run_id,
    checked,
    csv_sections,
    csv_truncation,
    latency_columns,
    metrics_from_csv,
    split_unit,
    stat,
)
from analysis.ingest.base import Format, Quarantine, Sink, in_words, model_from_id, num
from analysis.ingest.jsonl_stream import read_json
from analysis.schema import add_flag

PRIORITY = 35  # after AIPerf, whose JSON imitates this one
TOOL = "genai-perf"

TIME_METRICS = {
    "time_to_first_token": ("ttft_ms", ("mean", "p50", "p90", "p99")),
    "inter_token_latency": ("tpot_ms", ("mean", "p50", "p90", "p99")),
    "request_latency": ("e2e_ms", ("mean", "p50", "p99")),
}
OLD_NAMES = {"num_output_token": "output_sequence_length", "num_input_token": "input_sequence_length"}
_AIPERF_ONLY = (b'"inter_chunk_latency"', b'"benchmark_duration"', b'"min_request_timestamp"',
                b'"error_request_count"', b'"aiperf_version"', b'"was_cancelled"', b'"records"')
# analyze CSV: statistic prefix -> points-table statistic; metric -> (column prefix, statistics kept).
ANALYZE_STATS = {"avg": "mean", "p50": "p50", "p90": "p90", "p99": "p99"}
ANALYZE_METRICS = {
    "time_to_first_token": ("ttft_ms", {"mean", "p50", "p90", "p99"}),
    "inter_token_latency": ("tpot_ms", {"mean", "p50", "p90", "p99"}),
    "request_latency": ("e2e_ms", {"mean", "p50", "p99"}),
}


# --- profile export JSON ----------------------------------------------------------------------------------
def _detect_json(path: Path, head: bytes) -> bool:
    text = head.lstrip()
    if not text.startswith(b"{") or any(m in head for m in _AIPERF_ONLY):
        return False
    first_line = text.split(b"\n", 1)[0]
    if b'"metadata"' in first_line and b'"metrics"' in first_line:
        return False
    has_metric = any(m in head for m in (b'"time_to_first_token"', b'"request_latency"', b'"num_output_token"'))
    return has_metric and b'"unit"' in head and b'"avg"' in head


def _parse_json(path: Path, sink: Sink) -> None:
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Quarantine("expected a JSON object with GenAI-Perf metrics")
    metrics = {OLD_NAMES.get(k, k): v for k, v in doc.items() if isinstance(v, dict) and "unit" in v}
    if "request_latency" not in metrics:
        raise Quarantine("required metric 'request_latency' missing", field="request_latency")
    old = any(str((metrics.get(t) or {}).get("unit", "")).lower() == "ns" for t in TIME_METRICS)
    row = {"tool": TOOL, "tool_version": "early 2024 (ns, string values)" if old else "unknown",
           "phase": "serving", "run_id": _run_id(path, doc.get("input_config"))}
    row.update(_row(metrics))
    row.update(_input_config(doc.get("input_config")))
    sink.point(row, line=1)


def _row(metrics: dict) -> dict:
    row = latency_columns(metrics, TIME_METRICS)
    row.update(
        output_tok_s=stat(metrics, "output_token_throughput"),
        request_s=stat(metrics, "request_throughput"),
        num_requests=stat(metrics, "request_count"),
        isl=stat(metrics, "input_sequence_length"),
        osl=stat(metrics, "output_sequence_length"),
    )
    row["flags"] = "failed-run" if row["num_requests"] == 0 or row["request_s"] == 0 else ""
    return row


def _input_config(config) -> dict:
    if not isinstance(config, dict):
        return {}
    model = config.get("model")
    if isinstance(model, list):
        model = model[0] if model else None
    out = {"model": model_from_id(model)}
    out["concurrency"] = num(config.get("concurrency"), "input_config.concurrency")
    rate = config.get("request_rate")
    if rate is not None:
        out["request_rate"] = num(rate, "input_config.request_rate")
    return {k: v for k, v in out.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}


def _run_id(path: Path, config) -> str:
    if isinstance(config, dict) and config.get("artifact_dir"):
        return Path(str(config["artifact_dir"])).name
    return artifact_run_id(path)


# --- profile export CSV -----------------------------------------------------------------------------------
def _detect_csv(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].strip()
    return first_line.startswith(b"Metric,avg,min,max,p99,p95,")


def _parse_csv(path: Path, sink: Sink) -> None:
    prefix = re.sub(r"(_llm)?_genai_perf\.csv$", "", path.name)
    if prefix != path.name and path.with_name(f"{prefix}_genai_perf.json").exists():
        sink.count("deferred_to_json")  # the JSON beside it is the same run, with model and concurrency
        sink.note("same run as the profile export JSON beside it: read there, not counted twice")
        return
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    metrics = {OLD_NAMES.get(k, k): v for k, v in metrics_from_csv(text).items()}
    cut = csv_truncation(text)
    if "request_latency" not in metrics:
        raise Quarantine((f"truncated summary: {cut}; " if cut else "") + "required metric 'Request Latency' missing",
                         field="Request Latency (ms)")
    row = {"tool": TOOL, "tool_version": "csv export", "phase": "serving", "run_id": artifact_run_id(path)}
    row.update(_row(metrics))
    if cut:
        row["flags"] = add_flag(row["flags"], "truncated")
        sink.bad(f"truncated summary: {cut}; the point is kept but left out of fits", field="file")
    sink.point(row, line=1)


# --- genai-perf analyze sweep CSV ---------------------------------------------------------------------------
def _detect_analyze(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    return first_line.startswith(b"Config Name,") and (b"Concurrency" in first_line or b"Request Rate" in first_line)


def _analyze_column(name: str) -> str | None:
    """Points-table column for one analyze header, e.g. ``p99 Time To First Token (ms)`` -> ``ttft_ms_p99``."""
    plain = {"Concurrency": "concurrency", "ISL": "isl", "OSL": "osl", "Request Rate": "request_rate"}
    if name in plain:
        return plain[name]
    m = re.match(r"^(avg\.?|p\d+)\s+(.*)$", name.strip(), flags=re.IGNORECASE)
    if not m:
        return None
    stat_name = ANALYZE_STATS.get(m.group(1).lower().rstrip("."))
    tag, unit = split_unit(m.group(2))
    if tag == "output_token_throughput" and stat_name == "mean":
        return "output_tok_s"
    if tag == "request_throughput" and stat_name is None and m.group(1).lower().startswith("avg"):
        return "request_s"
    if tag in ANALYZE_METRICS and stat_name in ANALYZE_METRICS[tag][1]:
        if unit not in ("ms", ""):
            return None
        return f"{ANALYZE_METRICS[tag][0]}_{stat_name}"
    return None


def _parse_analyze(path: Path, sink: Sink) -> None:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    table = csv_sections(text)[0]
    header = [h.strip() for h in table[0][1]]
    columns = {i: _analyze_column(h) for i, h in enumerate(header)}
    # "Request Throughput (requests/sec)" carries no statistic prefix.
    for i, h in enumerate(header):
        if split_unit(h)[0] == "request_throughput":
            columns[i] = "request_s"
    if not any(c in ("output_tok_s", "request_s") for c in columns.values()):
        raise Quarantine("analyze CSV without a throughput column", line=table[0][0])
    for lineno, cells in table[1:]:
        if len(cells) != len(header):
            sink.bad(f"row has {len(cells)} cells, the header {len(header)}", line=lineno)
            continue
        name = cells[0].strip()
        row = {"tool": TOOL, "tool_version": "analyze export", "phase": "serving", "run_id": name,
               "model": re.sub(r"_run_config_\d+$", "", name) or None}
        try:
            for i, col in columns.items():
                if col:
                    row[col] = checked(cells[i], header[i], line=lineno)
        except Exception as err:  # one bad row is that row's quarantine record
            reason, field = in_words(err)
            sink.bad(reason, line=lineno, field=field)
            continue
        sink.point(row, line=lineno)


FORMATS = [
    Format(
        name="genai-perf-json",
        tool=TOOL,
        detect=_detect_json,
        parse=_parse_json,
        detected_by="JSON object of metric objects with `unit` and `avg` (`time_to_first_token`, "
                    "`request_latency` or early `num_output_token`) and none of AIPerf's own keys",
        example="tests/data/formats/genai_perf/v4cc7650c_concurrency8/profile_export_genai_perf.json",
    ),
    Format(
        name="genai-perf-csv",
        tool=TOOL,
        detect=_detect_csv,
        parse=_parse_csv,
        detected_by="CSV whose first row is `Metric,avg,min,max,p99,p95,…` (descending percentiles)",
        example="tests/data/formats/genai_perf/v4cc7650c_concurrency8/profile_export_llm_genai_perf.csv",
    ),
    Format(
        name="genai-perf-analyze-csv",
        tool=TOOL,
        detect=_detect_analyze,
        parse=_parse_analyze,
        detected_by="CSV whose first row starts `Config Name,` and names Concurrency or Request Rate",
        example="tests/data/formats/genai_perf/analyze/analyze_export_genai_perf.csv",
    ),
]
