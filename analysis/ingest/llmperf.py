"""Anyscale LLMPerf (``ray-project/llmperf`` ``token_benchmark_ray.py``): ``*_summary.json`` and
``*_individual_responses.json``.

Everything is in **seconds** (converted to ms here). The summary is a flattened dict
(``results_<metric>_quantiles_p50``, ``results_<metric>_mean`` …); ``json.dump(default=str)`` turns numpy ints
into strings (``"550"``), which are read as numbers. LLMPerf's ``inter_token_latency_s`` is
``sum(time_to_next_token)/n_out`` whose first gap *is* the TTFT — i.e. e2e/n, not decode-only TPOT — so it is
stored as ``itl_ms_*``, no TPOT is claimed, per-user speed is the tool's ``request_output_throughput`` (output
tokens over e2e) and the point is flagged ``per-user-includes-ttft``. Individual responses include errored
requests (``error_code`` set, latencies 0): they go to the per-request table with their error and NaN
latencies. A point is built from them (TPOT recomputed as ``(e2e - ttft)/(n - 1)``, flagged
``derived-from-e2e``) only when no summary of the same run sits beside the file.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, in_words, model_from_id, num
from analysis.ingest.jsonl_stream import read_json

PRIORITY = 30
TOOL = "llmperf"
ERROR_RATE_FLAG = 0.05  # above this share of errored requests a point is flagged high-error-rate
SUMMARY_METRICS = {
    "ttft_s": ("ttft_ms", ("mean", "p50", "p90", "p99")),
    "end_to_end_latency_s": ("e2e_ms", ("mean", "p50", "p99")),
    "inter_token_latency_s": ("itl_ms", ("mean", "p50", "p99")),
}
_NAME = re.compile(r"^(?P<model>.+)_(?P<isl>\d+)_(?P<osl>\d+)_(?:summary|individual_responses)$")


# --- summary ------------------------------------------------------------------------------------------
def _detect_summary(path: Path, head: bytes) -> bool:
    return head.lstrip().startswith(b"{") and b'"results_ttft_s_' in head and b'"num_concurrent_requests"' in head


def _parse_summary(path: Path, sink: Sink) -> None:
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Quarantine("expected a JSON object (LLMPerf summary)")
    for key in ("results_ttft_s_mean", "results_end_to_end_latency_s_mean", "num_concurrent_requests"):
        if key not in doc:
            raise Quarantine(f"required key {key!r} missing", field=key)
    row = {
        "tool": TOOL,
        "tool_version": str(doc.get("version") or "unknown"),
        "run_id": str(doc.get("name") or path.stem),
        "model": model_from_id(doc.get("model")),
        "framework": doc.get("framework"),
        "phase": "serving",
        "concurrency": num(doc["num_concurrent_requests"], "num_concurrent_requests"),
        "isl": _first_num(doc, "results_number_input_tokens_mean", "mean_input_tokens"),
        "osl": _first_num(doc, "results_number_output_tokens_mean", "mean_output_tokens"),
        "num_requests": num(doc.get("results_num_completed_requests"), "results_num_completed_requests"),
        "failed_requests": num(doc.get("results_number_errors"), "results_number_errors"),
        "output_tok_s": num(doc.get("results_mean_output_throughput_token_per_s"),
                            "results_mean_output_throughput_token_per_s"),
        "request_s": num(doc.get("results_num_completed_requests_per_min"),
                         "results_num_completed_requests_per_min") / 60.0,
        "tok_s_per_user": num(doc.get("results_request_output_throughput_token_per_s_quantiles_p50"),
                              "results_request_output_throughput_token_per_s_quantiles_p50"),
        "tok_s_per_user_def": "osl/e2e",
        "date": _date(doc.get("timestamp")),
    }
    for metric, (prefix, stats) in SUMMARY_METRICS.items():
        for stat in stats:
            key = f"results_{metric}_mean" if stat == "mean" else f"results_{metric}_quantiles_{stat}"
            if key in doc:
                value = num(doc[key], key, scale=1000.0)
                if value < 0:
                    raise Quarantine(f"negative latency {value / 1000:g} s", field=key)
                row[f"{prefix}_{stat}"] = value
    if math.isnan(row["tok_s_per_user"]):
        row.pop("tok_s_per_user_def")
    flags = ["per-user-includes-ttft"]
    if not row["num_requests"]:
        flags.append("failed-run")
    if num(doc.get("results_error_rate"), "results_error_rate") > ERROR_RATE_FLAG:
        flags.append("high-error-rate")
    row["flags"] = ";".join(flags)
    sink.point(row, line=1)


def _first_num(doc: dict, *keys: str) -> float:
    for key in keys:
        if doc.get(key) is not None:
            return num(doc[key], key)
    return math.nan


def _date(timestamp) -> str | None:
    if timestamp is None:
        return None
    seconds = num(timestamp, "timestamp")
    return datetime.fromtimestamp(seconds, tz=UTC).date().isoformat() if seconds > 0 else None


# --- individual responses -------------------------------------------------------------------------------
def _detect_individual(path: Path, head: bytes) -> bool:
    return head.lstrip().startswith(b"[") and b'"ttft_s"' in head and b'"end_to_end_latency_s"' in head


def _parse_individual(path: Path, sink: Sink) -> None:
    from analysis.ingest.requests_table import build_requests, percentiles_from_requests

    records = read_json(path)
    if not isinstance(records, list):
        raise Quarantine("expected a JSON list of per-request records")
    rows = []
    for i, rec in enumerate(records):
        where = f"[{i}]"
        if not isinstance(rec, dict):
            sink.bad("expected a JSON object per request", field=where)
            continue
        try:
            rows.append(_request(i, rec, where))
        except Exception as err:  # one bad request is that request's quarantine record
            reason, field = in_words(err)
            sink.bad(reason, field=field or where)
    if not rows:
        raise Quarantine("no usable request records")
    name = _NAME.match(path.stem)
    run_id = name.group("model") + f"_{name.group('isl')}_{name.group('osl')}" if name else path.stem
    summary = _summary_of(path)
    if summary is not None:  # the requests join the summary's point: the same run id as that point
        run_id = _summary_run_id(summary, run_id)
    table = sink.requests(build_requests(run_id, rows))  # checked: impossible requests are marked errored
    errors = sum(1 for e in table.column("error").to_pylist() if e)
    sink.count("requests", len(rows))
    sink.count("errors", errors)
    if summary is not None:
        sink.count("point_from_summary")
        return
    ok = len(rows) - errors
    row = {"tool": TOOL, "run_id": run_id, "phase": "serving", "num_requests": float(ok),
           "failed_requests": float(errors), "flags": "derived-from-e2e" if ok else "failed-run"}
    if name:
        row.update(model=model_from_id(name.group("model")))
    row.update(percentiles_from_requests(table))
    frame = table.to_pandas()
    good = frame["error"] == ""
    if good.any():
        row["isl"] = float(frame.loc[good, "input_tokens"].mean())
        row["osl"] = float(frame.loc[good, "output_tokens"].mean())
    sink.point(row, line=None)


def _summary_of(path: Path) -> Path | None:
    """The summary of the same run: beside the file under LLMPerf's own name (``<model>_<in>_<out>_summary.json``),
    or, in the LLMPerf leaderboard's layout, ``../summary/<same name>`` next to ``individual/``."""
    beside = path.with_name(path.name.replace("_individual_responses.json", "_summary.json"))
    if beside != path and beside.exists():
        return beside
    if path.parent.name == "individual":
        board = path.parent.parent / "summary" / path.name
        if board.exists():
            return board
    return None


def _summary_run_id(summary: Path, fallback: str) -> str:
    """The run id the summary reader gives that file's point (its ``name``, else its stem)."""
    try:
        doc = read_json(summary)
    except Exception:  # an unreadable summary is quarantined by its own reader; the requests keep their own id
        return fallback
    return str(doc.get("name") or summary.stem) if isinstance(doc, dict) else fallback


def _request(i: int, rec: dict, where: str) -> dict:
    def seconds(key: str) -> float:
        value = num(rec.get(key), f"{where}.{key}", scale=1000.0)
        if value < 0:
            raise Quarantine(f"negative latency {value / 1000:g} s", field=f"{where}.{key}")
        return value

    code = rec.get("error_code")
    row = {
        "request_index": i,
        "input_tokens": num(rec.get("number_input_tokens"), f"{where}.number_input_tokens"),
        "output_tokens": num(rec.get("number_output_tokens"), f"{where}.number_output_tokens"),
        "error": "",
    }
    if code is not None:
        row["error"] = f"{code}: {rec.get('error_msg') or ''}".strip()
        return row
    if "end_to_end_latency_s" not in rec:
        raise Quarantine("request without end_to_end_latency_s", field=f"{where}.end_to_end_latency_s")
    row.update(ttft_ms=seconds("ttft_s"), e2e_ms=seconds("end_to_end_latency_s"))
    return row


FORMATS = [
    Format(
        name="llmperf-summary",
        tool=TOOL,
        detect=_detect_summary,
        parse=_parse_summary,
        detected_by="JSON object with flattened `results_ttft_s_…` keys and `num_concurrent_requests`",
        example="tests/data/formats/llmperf/leaderboard_summary/groq_70b.json",
    ),
    Format(
        name="llmperf-individual",
        tool=TOOL,
        detect=_detect_individual,
        parse=_parse_individual,
        detected_by="JSON list of objects with `ttft_s` and `end_to_end_latency_s`",
        example="tests/data/formats/llmperf/individual/llama2-70b-4096_550_150_individual_responses.json",
        per_request=True,
    ),
]
