"""NVIDIA AIPerf (``ai-dynamo/aiperf``): aggregate JSON in three schema generations, the two-section CSV, and the
per-request ``profile_export.jsonl``.

Aggregates: (1) pre-1.0 ``{"records": {tag: {...}}}`` with tags ``ttft``/``ttst``; (2) flat top-level metric
objects (``export_models.py``); (3) 0.8.0 with ``schema_version``, ``count``/``sum`` and a separate
``warmup_metrics`` block, which is never read (the top-level metrics already exclude warm-up). AIPerf's
``inter_token_latency`` is per request ``(e2e - ttft)/(n - 1)``, so it lands in ``tpot_ms_*``; the chunk gaps
(``inter_chunk_latency``) land in ``itl_ms_*``. Model and concurrency live only in ``input_config``; no
hardware or GPU count is in any file (the manifest gives them). Speculative-decoding metrics (newer AIPerf, when
the engine reports acceptance): ``spec_decode_token_weighted_acceptance_length`` / ``spec_decode_acceptance_length``
give the measured acceptance length, ``total_draft_tokens`` ÷ ``total_spec_decode_steps`` the drafted tokens per step.

The JSONL is streamed (:mod:`analysis.ingest.jsonl_stream`): warm-up records are left out and counted,
errored requests are kept in the per-request table with their error and counted, and a point is built from the
requests only when no aggregate of the same run sits next to the file (otherwise the run would be counted
twice). By default each record's ``inter_chunk_latency`` array (~95% of the bytes) is cut out unparsed and only
its length is kept: the per-request gap mean is exact from it (the gaps sum to e2e − TTFT), and the run's pooled
ITL mean equals AIPerf's; per-request gap p50/p99 need every value and come only with ``itl_gaps=True``
(``perfclaims ingest --itl-gaps``). Run metadata (model, concurrency) for the JSONL and CSV comes from the sibling
JSON when there is one.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.ingest.base import Format, Quarantine, Sink, first, model_from_id, num
from analysis.ingest.jsonl_stream import LineError, duration, gap_stats, number, read_json, stream_jsonl
from analysis.schema import add_flag

PRIORITY = 30
TOOL = "aiperf"

# Metric tag -> (points-table prefix, statistics the points table keeps for it).
TIME_METRICS = {
    "time_to_first_token": ("ttft_ms", ("mean", "p50", "p90", "p99")),
    "ttft": ("ttft_ms", ("mean", "p50", "p90", "p99")),
    "inter_token_latency": ("tpot_ms", ("mean", "p50", "p90", "p99")),
    "inter_chunk_latency": ("itl_ms", ("mean", "p50", "p99")),
    "request_latency": ("e2e_ms", ("mean", "p50", "p99")),
}
STAT_KEYS = {"mean": "avg", "p50": "p50", "p90": "p90", "p99": "p99"}
TO_MS = {"ms": 1.0, "ns": 1e-6, "us": 1e-3, "s": 1000.0, "sec": 1000.0, "seconds": 1000.0}
# CSV display names that do not reduce to the JSON tag.
CSV_ALIASES = {
    "total_input_sequence_length": "total_isl",
    "total_output_sequence_length": "total_osl",
    "time_to_second_token": "time_to_second_token",
    # speculative-decoding metrics (aiperf/metrics/types/spec_decode_metrics.py headers)
    "acceptance_length": "spec_decode_acceptance_length",
    "token_weighted_acceptance_length": "spec_decode_token_weighted_acceptance_length",
}
GENERIC_ARTIFACT_DIRS = {"aiperf_artifacts", "artifacts", "results"}


# --- shared with GenAI-Perf (whose JSON AIPerf's was designed to mimic) -------------------------------
def latency_columns(metrics: dict, tags: dict, *, where: str = "") -> dict:
    """Points-table latency columns (ms) from ``{tag: {"unit", "avg", "p50", ...}}``; unit converted per metric."""
    row: dict[str, float] = {}
    for tag, (prefix, stats) in tags.items():
        stat_block = metrics.get(tag)
        if not isinstance(stat_block, dict):
            continue
        unit = str(stat_block.get("unit") or "ms").strip().lower()
        if unit not in TO_MS:
            raise Quarantine(f"unknown time unit {unit!r}", field=f"{where}{tag}.unit",
                             line=stat_block.get("_line"))
        for stat in stats:
            key = STAT_KEYS[stat]
            if key not in stat_block:
                continue
            value = checked(stat_block[key], f"{where}{tag}.{key}", line=stat_block.get("_line"))
            if value < 0:
                raise Quarantine(f"negative latency {value:g}", field=f"{where}{tag}.{key}",
                                 line=stat_block.get("_line"))
            row[f"{prefix}_{stat}"] = value * TO_MS[unit]
    return row


def stat(metrics: dict, tag: str, key: str = "avg", *, where: str = "") -> float:
    """One statistic of one metric, NaN when absent; Quarantine naming ``tag.key`` when it is not a number."""
    block = metrics.get(tag)
    if not isinstance(block, dict) or block.get(key) is None:
        return math.nan
    return checked(block[key], f"{where}{tag}.{key}", line=block.get("_line"))


def checked(value: Any, field: str, *, line: int | None = None) -> float:
    try:
        return num(value, field)
    except Quarantine as err:
        raise Quarantine(err.reason, field=err.field, line=line) from None


def csv_sections(text: str) -> list[list[tuple[int, list[str]]]]:
    """Blank-line separated tables of a CSV, each a list of (line number, cells)."""
    sections: list[list[tuple[int, list[str]]]] = [[]]
    for lineno, cells in enumerate(csv.reader(io.StringIO(text)), 1):
        if not any(c.strip() for c in cells):
            if sections[-1]:
                sections.append([])
            continue
        sections[-1].append((lineno, cells))
    return [s for s in sections if s]


def split_unit(name: str) -> tuple[str, str]:
    """``"Time to First Token (ms)"`` -> (``"time_to_first_token"``, ``"ms"``); no parentheses -> unit ``""``."""
    m = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", name.strip())
    base, unit = (m.group(1), m.group(2)) if m else (name.strip(), "")
    return re.sub(r"[^a-z0-9]+", "_", base.lower()).strip("_"), unit.strip()


def metrics_from_csv(text: str, *, aliases: dict | None = None) -> dict:
    """``{tag: {"unit", stat: value, "_line": n}}`` from a two-section summary CSV (stat table + Metric,Value)."""
    metrics: dict[str, dict] = {}
    for section in csv_sections(text):
        header_line, header = section[0]
        if not header or header[0].strip() != "Metric":
            continue
        keys = [h.strip() for h in header[1:]]
        if keys == ["Value"]:
            keys = ["avg"]
        for lineno, cells in section[1:]:
            if len(cells) > len(keys) + 1:
                raise Quarantine(f"row has {len(cells)} cells, the header {len(keys) + 1}", line=lineno,
                                 field=cells[0] if cells else None)
            tag, unit = split_unit(cells[0])
            tag = (aliases or {}).get(tag, tag)
            block = {"unit": unit, "_line": lineno, "_name": cells[0].strip()}
            for key, cell in zip(keys, cells[1:]):
                if cell.strip() != "":
                    block[key] = cell
            metrics[tag] = block
    if not metrics:
        raise Quarantine("no 'Metric,...' table found in the CSV")
    return metrics


def csv_truncation(text: str) -> str | None:
    """Why a two-section summary CSV (a statistics table, then ``Metric,Value``) looks cut off, or None.

    Both tools write every cell of a row (empty ones as ``,,``) and always end with the ``Metric,Value`` table, so
    a row shorter than its header or a missing second table means the file ends early."""
    sections = csv_sections(text)
    stats = values = False
    for section in sections:
        header = section[0][1]
        if not header or header[0].strip() != "Metric":
            continue
        if [h.strip() for h in header[1:]] == ["Value"]:
            values = True
        else:
            stats = True
        for lineno, cells in section[1:]:
            if len(cells) < len(header):
                return f"row at line {lineno} has {len(cells)} of {len(header)} cells: the file was cut off"
    if stats and not values:
        return "no 'Metric,Value' table after the statistics: the file was cut off"
    return None


def artifact_run_id(path: Path) -> str:
    """The artifact folder names the run; generic folder names get their parent folder's name in front."""
    parent = Path(path).resolve().parent
    if parent.name in GENERIC_ARTIFACT_DIRS and parent.parent.name:
        return f"{parent.parent.name}/{parent.name}"
    return parent.name


# --- aggregate JSON ---------------------------------------------------------------------------------------
def _detect_json(path: Path, head: bytes) -> bool:
    if not head.lstrip().startswith(b"{") or _detect_jsonl(path, head):
        return False
    if b'"aiperf_version"' in head:
        return True
    if b'"records"' in head and b'"tag"' in head and b'"header"' in head:
        return True
    # The flat generation: metric objects with units plus AIPerf-only keys.
    markers = (b'"inter_chunk_latency"', b'"benchmark_duration"', b'"min_request_timestamp"',
               b'"error_request_count"', b'"was_cancelled"', b'"error_summary"')
    return b'"unit"' in head and b'"request_latency"' in head and any(m in head for m in markers)


def _metrics_of(doc: dict) -> tuple[dict, str]:
    """The metric blocks and the schema generation they came in."""
    if isinstance(doc.get("records"), dict):
        return {tag: block for tag, block in doc["records"].items() if isinstance(block, dict)}, "records schema (pre-0.8)"
    metrics = {k: v for k, v in doc.items() if isinstance(v, dict) and "unit" in v}
    if "schema_version" in doc:
        return metrics, f"{doc.get('aiperf_version') or 'unknown'} (schema {doc['schema_version']})"
    return metrics, "flat schema (pre-0.8)"


def run_info(input_config: Any) -> dict:
    """Model, concurrency and request rate from ``input_config`` (all three schema generations nest alike)."""
    if not isinstance(input_config, dict):
        return {}
    endpoint = input_config.get("endpoint") or {}
    loadgen = input_config.get("loadgen") or {}
    names = endpoint.get("model_names") if isinstance(endpoint, dict) else None
    model = names[0] if isinstance(names, list) and names else first(input_config, "model", "model_name")
    info: dict[str, Any] = {"model": model_from_id(model)}
    if isinstance(loadgen, dict):
        info["concurrency"] = num(loadgen.get("concurrency"), "input_config.loadgen.concurrency")
        rate = loadgen.get("request_rate")
        if isinstance(rate, str) and rate.strip().lower() in {"inf", "infinity"}:
            info["flags"] = "request-rate-inf"
        elif rate is not None:
            info["request_rate"] = num(rate, "input_config.loadgen.request_rate")
    if input_config.get("scenario"):
        info["scenario"] = str(input_config["scenario"])
    return info


def aggregate_row(metrics: dict, *, where: str = "") -> dict:
    """Latency, throughput and load columns shared by the JSON and CSV aggregates."""
    row = latency_columns(metrics, TIME_METRICS, where=where)
    output_tok_s = stat(metrics, "output_token_throughput", where=where)
    total_tok_s = stat(metrics, "total_token_throughput", where=where)
    if math.isnan(total_tok_s):
        # total = output x (isl + osl) / osl keeps AIPerf's own measuring window, whichever version wrote it.
        total_isl, total_osl = stat(metrics, "total_isl", where=where), stat(metrics, "total_osl", where=where)
        if total_osl > 0 and total_isl >= 0 and output_tok_s >= 0:
            total_tok_s = output_tok_s * (total_isl + total_osl) / total_osl
    row.update(
        output_tok_s=output_tok_s,
        total_tok_s=total_tok_s,
        request_s=stat(metrics, "request_throughput", where=where),
        num_requests=stat(metrics, "request_count", where=where),
        isl=stat(metrics, "input_sequence_length", where=where),
        osl=stat(metrics, "output_sequence_length", where=where),
    )
    failed = stat(metrics, "error_request_count", where=where)
    if not math.isnan(failed):
        row["failed_requests"] = failed
    row.update(spec_decode_columns(metrics, where=where))
    return row


def spec_decode_columns(metrics: dict, *, where: str = "") -> dict:
    """Measured acceptance from AIPerf's speculative-decoding metrics (present only when the engine reported
    acceptance): the run-level ``spec_decode_token_weighted_acceptance_length`` (1 + Σ accepted ÷ Σ verify steps,
    the formula vLLM and the InferenceX golden curves use) before the per-request mean
    ``spec_decode_acceptance_length``; drafted tokens per step = ``total_draft_tokens`` ÷ ``total_spec_decode_steps``
    when that is a whole number."""
    accepted = stat(metrics, "spec_decode_token_weighted_acceptance_length", where=where)
    if not accepted > 0:
        accepted = stat(metrics, "spec_decode_acceptance_length", where=where)
    if not accepted > 0:
        return {}
    out = {"acceptance_length": accepted, "acceptance_source": "measured", "tokens_per_step": accepted}
    steps = stat(metrics, "total_spec_decode_steps", where=where)
    drafted = stat(metrics, "total_draft_tokens", where=where)
    per_step = drafted / steps if steps > 0 else math.nan
    if per_step >= 1 and abs(per_step - round(per_step)) < 0.01:
        out["draft_tokens"] = float(round(per_step))
    return out


def _parse_json(path: Path, sink: Sink) -> None:
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Quarantine("expected a JSON object with AIPerf metrics")
    metrics, version = _metrics_of(doc)
    if not metrics:
        raise Quarantine("no metric objects (with 'unit') found", field="records")
    where = "records." if "records" in doc else ""
    for required in ("request_latency", "request_count"):
        if required not in metrics:
            raise Quarantine(f"required metric {required!r} missing", field=f"{where}{required}")
    row = _base_row(path, version)
    row.update(aggregate_row(metrics, where=where))
    if "failed_requests" not in row:
        errors = doc.get("error_summary")
        if isinstance(errors, list):
            counts = [e.get("count") if isinstance(e, dict) else None for e in errors]
            if any(not isinstance(e, dict) for e in errors):
                raise Quarantine("error_summary entries must be objects with a 'count'", field="error_summary")
            row["failed_requests"] = float(sum(num(c, "error_summary.count") for c in counts if c is not None))
    row.update(_info_fields(run_info(doc.get("input_config"))))
    if isinstance(doc.get("start_time"), str):
        row["date"] = doc["start_time"][:10]
    flags = [row.pop("flags")] if row.get("flags") else []
    if doc.get("was_cancelled") is True:
        flags.append("was-cancelled")
    if not row.get("num_requests"):
        flags.append("failed-run")
    row["flags"] = ";".join(flags)
    sink.point(row, line=1)


def _base_row(path: Path, version: str) -> dict:
    return {"tool": TOOL, "tool_version": version, "run_id": artifact_run_id(path), "phase": "serving"}


def _info_fields(info: dict) -> dict:
    return {k: v for k, v in info.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}


# --- aggregate CSV ----------------------------------------------------------------------------------------
def _detect_csv(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].strip()
    return first_line.startswith(b"Metric,avg,min,max,") and b",p1," in first_line


def _parse_csv(path: Path, sink: Sink) -> None:
    sibling = _sibling_json(path)
    if sibling is not None:
        # The JSON next to it is the same run with more digits; one point per run.
        sink.count("deferred_to_json")
        sink.note(f"same run as {sibling.name} beside it: read there, not counted twice")
        return
    text = _read_text(path)
    metrics = metrics_from_csv(text, aliases=CSV_ALIASES)
    cut = csv_truncation(text)
    if "request_latency" not in metrics:
        raise Quarantine((f"truncated summary: {cut}; " if cut else "") + "required metric 'Request Latency' missing",
                         field="Request Latency (ms)")
    row = _base_row(path, "csv export")
    row.update(aggregate_row(metrics))
    row["flags"] = "" if row.get("num_requests") else "failed-run"
    if cut:
        row["flags"] = add_flag(row["flags"], "truncated")
        sink.bad(f"truncated summary: {cut}; the point is kept but left out of fits", field="file")
    sink.point(row, line=1)


def _sibling_json(path: Path) -> Path | None:
    """``<prefix>_aiperf.json`` for ``<prefix>_aiperf.csv`` or ``<prefix>.jsonl``, if present."""
    stem = path.name[: -len("_aiperf.csv")] if path.name.endswith("_aiperf.csv") else path.stem
    candidate = path.with_name(f"{stem}_aiperf.json")
    return candidate if candidate.exists() and candidate != path and candidate.stat().st_size else None


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None


# --- per-request JSONL ------------------------------------------------------------------------------------
# ``itl_gaps`` is the number of chunk gaps the request had: the weight of its ITL mean in the run's pooled mean.
REQUEST_STREAM_COLUMNS = [
    ("input_tokens", pa.float64()), ("output_tokens", pa.float64()), ("ttft_ms", pa.float64()),
    ("e2e_ms", pa.float64()), ("itl_ms_mean", pa.float64()), ("itl_ms_p50", pa.float64()),
    ("itl_ms_p99", pa.float64()), ("tpot_ms", pa.float64()), ("error", pa.string()),
    ("start_ns", pa.float64()), ("end_ns", pa.float64()), ("itl_gaps", pa.float64()),
]
GAPS_KEY = "inter_chunk_latency"
_NAN_TIMES = (math.nan,) * 8


def _detect_jsonl(path: Path, head: bytes) -> bool:
    line = head.lstrip().split(b"\n", 1)[0]
    return (line.startswith(b"{") and b'"metadata"' in line and b'"metrics"' in line
            and (b'"benchmark_phase"' in line or b'"credit_phase"' in line or b'"x_request_id"' in line))


def request_record(obj: Any) -> tuple | str:
    """One AIPerf JSONL record -> REQUEST_STREAM_COLUMNS values with per-request gap mean, p50 and p99, or
    ``"warmup"`` (left out, counted). Parses every gap; the ``itl_gaps=True`` path."""
    return _record(obj, None, True)


def request_record_skipping(obj: Any, n_gaps: int | None) -> tuple | str:
    """The default path: ``inter_chunk_latency`` was cut out unparsed (``n_gaps`` elements; None = parsed whole).

    The gap mean is exact without the values: AIPerf's gaps are the differences of consecutive response
    timestamps, so they sum to ``request_latency - time_to_first_token``. p50/p99 need the values and are NaN.
    """
    return _record(obj, n_gaps, False)


def _record(obj: Any, n_gaps: int | None, percentiles: bool) -> tuple | str:
    if obj.__class__ is not dict:
        raise LineError("expected a JSON object")
    meta = obj.get("metadata")
    if meta.__class__ is not dict:
        raise LineError("record without 'metadata'", "metadata")
    phase = meta.get("benchmark_phase") or meta.get("credit_phase")
    if phase == "warmup":
        return "warmup"
    metrics = obj.get("metrics")
    if metrics.__class__ is not dict:
        raise LineError("record without 'metrics'", "metrics")
    start = meta.get("request_start_ns")
    if start is None:
        start = meta.get("timestamp_ns")
    end = meta.get("request_end_ns")
    if end is None:
        end = _value(metrics, "max_response_timestamp")
    start, end = number(start, "metadata.request_start_ns"), number(end, "metadata.request_end_ns")
    error = obj.get("error")
    if error:
        text = (f"{error.get('code')} {error.get('type')}: {error.get('message')}"
                if error.__class__ is dict else str(error))
        return _NAN_TIMES + (text, start, end, math.nan)
    if "request_latency" not in metrics:
        raise LineError("successful record without request_latency", "metrics.request_latency")
    ttft_block = metrics.get("time_to_first_token") or metrics.get("ttft")
    ttft = _time(ttft_block, "time_to_first_token") if ttft_block is not None else math.nan
    e2e = _time(metrics["request_latency"], "request_latency")
    itl_mean = itl_p50 = itl_p99 = count = math.nan
    gaps = metrics.get(GAPS_KEY)
    if gaps is not None:
        values = gaps.get("value") if gaps.__class__ is dict else None
        if values.__class__ is not list:
            raise LineError("expected a list of gaps", f"metrics.{GAPS_KEY}.value")
        scale = _scale(gaps, GAPS_KEY)
        if n_gaps is not None:  # cut out unparsed: the values were plain non-negative decimals
            count = float(n_gaps)
            if n_gaps and e2e - ttft >= 0.0:
                itl_mean = (e2e - ttft) / n_gaps
        elif values:
            itl_mean, itl_p50, itl_p99 = gap_stats(values, f"metrics.{GAPS_KEY}.value")  # validates too
            itl_mean, itl_p50, itl_p99 = itl_mean * scale, itl_p50 * scale, itl_p99 * scale
            count = float(len(values))
            if not percentiles:
                itl_p50 = itl_p99 = math.nan
        else:
            count = 0.0
    return (
        number(_value(metrics, "input_sequence_length"), "metrics.input_sequence_length.value"),
        number(_value(metrics, "output_sequence_length"), "metrics.output_sequence_length.value"),
        ttft, e2e, itl_mean, itl_p50, itl_p99,
        _time(metrics.get("inter_token_latency"), "inter_token_latency"),
        None, start, end, count,
    )


def _value(metrics: dict, tag: str):
    block = metrics.get(tag)
    return block.get("value") if block.__class__ is dict else block


def _scale(block: dict, tag: str) -> float:
    unit = block.get("unit", "ms")
    if unit == "ms":
        return 1.0
    if unit in TO_MS:
        return TO_MS[unit]
    raise LineError(f"unknown time unit {unit!r}", f"metrics.{tag}.unit")


def _time(block: Any, tag: str) -> float:
    if block.__class__ is dict:  # the common case first, without building field names: finite ms >= 0
        value = block.get("value")
        if value.__class__ is float and 0.0 <= value < math.inf and block.get("unit", "ms") == "ms":
            return value
    elif block is None:
        return math.nan
    if block.__class__ is not dict:
        raise LineError("expected {'value': ..., 'unit': ...}", f"metrics.{tag}")
    return duration(block.get("value"), f"metrics.{tag}.value", _scale(block, tag))


def _parse_jsonl(path: Path, sink: Sink) -> None:
    if sink.options.get("itl_gaps"):
        result = stream_jsonl(path, request_record, columns=REQUEST_STREAM_COLUMNS)
    else:
        result = stream_jsonl(path, request_record_skipping, columns=REQUEST_STREAM_COLUMNS, skip_array=GAPS_KEY)
    for bad in result.bad:
        sink.bad(bad["reason"], line=bad["line"], field=bad["field"])
    for key, n in result.counts.items():
        sink.count(key, n)
    table = result.table
    if table.num_rows == 0:
        if result.bad:
            return
        raise Quarantine("no profiling records (only warm-up or nothing)")
    run_id = artifact_run_id(path)
    requests = requests_from_stream(run_id, table)
    errors = int(np.count_nonzero(table.column("error").is_valid().to_numpy(zero_copy_only=False)))
    sink.count("requests", table.num_rows)
    sink.count("errors", errors)
    requests = sink.requests(requests)  # checked: impossible requests are marked errored and left out below
    sibling = _sibling_json(path)
    if sibling is not None or path.with_name(f"{path.stem}_aiperf.csv").exists():
        sink.count("point_from_aggregate")
        sink.note(f"{table.num_rows} requests read; the run's point comes from its aggregate file beside it")
        return
    info = {}
    try:
        info = _directory_info(path)
    except Quarantine:
        pass
    row = _base_row(path, "jsonl export")
    row.update(_info_fields(info))
    row.update(point_from_requests(requests, table))
    sink.point(row, line=None)


def requests_from_stream(run_id: str, table: pa.Table) -> pa.Table:
    """The shared per-request table (``analysis.ingest.requests_table``) from the streamed columns."""
    from analysis.ingest.requests_table import REQUEST_COLUMNS, build_requests

    index = pc.subtract(table.column("line"), 1)
    columns = {name: table.column(name) for name in REQUEST_COLUMNS if name in table.column_names}
    columns["request_index"] = index
    return build_requests(run_id, pa.table(columns))


def point_from_requests(requests: pa.Table, stream: pa.Table) -> dict:
    """A point from ok requests: latency statistics, counts, and throughput over first start to last end.

    ``itl_ms_mean`` is the pooled mean of every chunk gap (each request's mean weighted by its gap count), which
    is what AIPerf's own aggregate reports; ITL percentiles would need every gap of the run and are not made here.
    """
    from analysis.ingest.requests_table import percentiles_from_requests

    frame = requests.to_pandas()
    ok = frame["error"].fillna("") == ""
    row: dict[str, Any] = dict(percentiles_from_requests(requests))
    means = frame["itl_ms_mean"].to_numpy(dtype=float)
    weights = stream.column("itl_gaps").to_numpy(zero_copy_only=False)
    use = ok.to_numpy() & np.isfinite(means) & np.isfinite(weights) & (weights > 0)
    if use.any():
        row["itl_ms_mean"] = float(np.sum(means[use] * weights[use]) / np.sum(weights[use]))
    row["num_requests"] = float(ok.sum())
    row["failed_requests"] = float((~ok).sum())
    row["isl"] = float(frame.loc[ok, "input_tokens"].mean()) if ok.any() else math.nan
    row["osl"] = float(frame.loc[ok, "output_tokens"].mean()) if ok.any() else math.nan
    starts = stream.column("start_ns").to_numpy(zero_copy_only=False)
    ends = stream.column("end_ns").to_numpy(zero_copy_only=False)
    ok_mask = ok.to_numpy()
    if ok_mask.any() and np.isfinite(starts[ok_mask]).all() and np.isfinite(ends[ok_mask]).all():
        window_s = (ends[ok_mask].max() - starts[ok_mask].min()) / 1e9
        if window_s > 0:
            out_tokens = frame.loc[ok, "output_tokens"].sum()
            in_tokens = frame.loc[ok, "input_tokens"].sum()
            row["output_tok_s"] = float(out_tokens / window_s)
            row["total_tok_s"] = float((out_tokens + in_tokens) / window_s)
            row["request_s"] = float(ok_mask.sum() / window_s)
    row["flags"] = "" if ok.any() else "failed-run"
    return row


def _directory_info(path: Path) -> dict:
    """Concurrency or request rate from AIPerf's default artifact folder name (``...-concurrency8``)."""
    m = re.search(r"-(concurrency|request_rate)(\d+(?:\.\d+)?)$", path.resolve().parent.name)
    if not m:
        return {}
    key = "concurrency" if m.group(1) == "concurrency" else "request_rate"
    return {key: float(m.group(2))}


FORMATS = [
    Format(
        name="aiperf-json",
        tool=TOOL,
        detect=_detect_json,
        parse=_parse_json,
        detected_by="JSON object with `aiperf_version`, or `records` of {tag, header, unit} (pre-0.8), or flat "
                    "metric objects with `unit` and AIPerf-only metrics (`inter_chunk_latency`, `benchmark_duration`…)",
        example="tests/data/formats/aiperf/inferencex_conc1/profile_export_aiperf.json",
    ),
    Format(
        name="aiperf-csv",
        tool=TOOL,
        detect=_detect_csv,
        parse=_parse_csv,
        detected_by="CSV whose first row is `Metric,avg,min,max,…,p1,…` (AIPerf's two-section export, CRLF)",
        example="tests/data/formats/aiperf/m1517_c16none/profile_export_aiperf.csv",
    ),
    Format(
        name="aiperf-jsonl",
        tool=TOOL,
        detect=_detect_jsonl,
        parse=_parse_jsonl,
        detected_by="JSON lines whose first object has `metadata` (with `benchmark_phase`, `credit_phase` or "
                    "`x_request_id`) and `metrics`",
        example="tests/data/formats/aiperf/inferencex_conc1/profile_export.jsonl",
        per_request=True,
    ),
]
