"""kubernetes-sigs/inference-perf lifecycle reports: ``stage_<N>_lifecycle_metrics.json`` (one load stage each) and
``summary_lifecycle_metrics.json`` (every stage pooled), one point per stage.

Written by ``summarize_requests`` in ``inference_perf/reportgen/base.py`` (read at 7ff81506, the November 2025
commit of the project's own KubeCon demo reports, and at 7de5ef2e, August 2026). The object is ``ResponsesSummary``:

* ``load_summary``: ``count`` (requests sent), ``schedule_delay``; in a stage file also ``send_duration``,
  ``requested_rate`` (the stage's configured QPS), ``achieved_rate`` (count ÷ send duration) and, since the
  concurrent load type (#263, November 2025), ``concurrency`` (the stage's ``concurrency_level``). In a concurrent
  stage ``requested_rate`` is not a rate the user set (the load generator fills it with the request count), so the
  point's load is ``concurrency`` and ``request_rate`` stays empty; in a rate stage the load is ``requested_rate``
  and ``concurrency`` is the measured mean in flight, requests/s × mean request latency (Little's law; flagged
  ``concurrency-achieved``).
* ``successes``: ``count``; ``latency`` with ``request_latency``, ``time_to_first_token``,
  ``time_per_output_token``, ``inter_token_latency``, ``normalized_time_per_output_token``, each a distribution
  ``{mean, min, p0.1 … p99.9, median, max}`` in **seconds** (``null`` when no request gave one); ``throughput``
  (``input/output/total_tokens_per_sec``, ``requests_per_sec``: successful tokens ÷ (last end − first start));
  ``prompt_len`` (older) or ``prompt_tokens`` (newer) and ``output_len`` distributions.
* ``failures``: ``count`` and the failed requests' latency and prompt distributions.

Per-token times, as the writer computes them: ``time_per_output_token`` = (last token − first token) ÷ (tokens −
1) per request (decode only: what perfclaims calls TPOT); ``inter_token_latency`` pools every gap between streamed
chunks (perfclaims' ITL); ``normalized_time_per_output_token`` divides the whole request latency (TTFT included) by
its output tokens and is not used. Newer reports (#430, April 2026) add ``benchmark_time_seconds``.

``stage_<N>_prometheus_metrics.json`` files beside them hold the model server's own Prometheus counters with the
same three top-level keys (``successes.rate``, ``queue_len``, no ``throughput``): they are recognised and noted,
not read as points (the client's lifecycle file for the same stage is).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, num
from analysis.ingest.jsonl_stream import read_json
from analysis.schema import add_flag

PRIORITY = 35
ERROR_RATE_FLAG = 0.05  # above this share of failed requests a point is flagged high-error-rate

_STAGE = re.compile(r"stage_(\d+)_lifecycle_metrics")
# perfclaims column prefix -> inference-perf latency name; statistics kept per prefix
_LATENCIES = {"ttft": "time_to_first_token", "tpot": "time_per_output_token", "itl": "inter_token_latency",
              "e2e": "request_latency"}
_STATS = {"ttft": ("mean", "p50", "p90", "p99"), "tpot": ("mean", "p50", "p90", "p99"),
          "itl": ("mean", "p50", "p99"), "e2e": ("mean", "p50", "p99")}
_KEY = {"mean": "mean", "p50": "median", "p90": "p90", "p99": "p99"}


def _head_is_report(head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"load_summary"' in head and b'"successes"' in head
            and b'"failures"' in head)


def _detect_lifecycle(path: Path, head: bytes) -> bool:
    return _head_is_report(head) and b'"throughput"' in head and b'"output_tokens_per_sec"' in head


def _detect_prometheus(path: Path, head: bytes) -> bool:
    return (_head_is_report(head) and b'"output_tokens_per_sec"' not in head and b'"queue_len"' in head
            and b'"time_to_first_token"' in head)


def _block(parent: dict, key: str, where: str) -> dict:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Quarantine(f"`{where}` is not an object", field=where)
    return value


def _latencies(latency: dict) -> dict:
    out = {}
    for prefix, name in _LATENCIES.items():
        dist = _block(latency, name, f"successes.latency.{name}")
        for stat in _STATS[prefix]:
            key = _KEY[stat]
            if dist.get(key) is None:
                continue
            x = num(dist[key], f"successes.latency.{name}.{key}", scale=1000.0)
            out[f"{prefix}_ms_{stat}"] = x
    return out


def _mean_len(successes: dict, *names: str) -> float:
    for name in names:
        dist = _block(successes, name, f"successes.{name}")
        if dist.get("mean") is not None:
            return num(dist["mean"], f"successes.{name}.mean")
    return math.nan


def report_point(report: dict, *, run_id: str, stage: int | None) -> dict:
    """One point from a lifecycle report (a stage, or the pooled summary when ``stage`` is None)."""
    if not isinstance(report, dict):
        raise Quarantine("expected an inference-perf lifecycle report: a JSON object")
    load = _block(report, "load_summary", "load_summary")
    successes = _block(report, "successes", "successes")
    failures = _block(report, "failures", "failures")
    if "count" not in successes:
        raise Quarantine("no `successes.count`", field="successes.count")
    throughput = _block(successes, "throughput", "successes.throughput")
    ok = num(successes.get("count"), "successes.count")
    failed = num(failures.get("count"), "failures.count")
    row = {
        "run_id": run_id,
        "tool_version": "lifecycle report" + ("" if "benchmark_time_seconds" in report else " (before #430)"),
        "phase": "serving",
        "scenario": f"stage {stage}" if stage is not None else "summary of all stages",
        "num_requests": ok,
        "failed_requests": failed,
        "isl": _mean_len(successes, "prompt_tokens", "prompt_len"),
        "osl": _mean_len(successes, "output_len", "output_tokens"),
        "output_tok_s": num(throughput.get("output_tokens_per_sec"), "successes.throughput.output_tokens_per_sec"),
        "total_tok_s": num(throughput.get("total_tokens_per_sec"), "successes.throughput.total_tokens_per_sec"),
        "request_s": num(throughput.get("requests_per_sec"), "successes.throughput.requests_per_sec"),
        "flags": "",
    }
    row.update(_latencies(_block(successes, "latency", "successes.latency")))
    concurrency = num(load.get("concurrency"), "load_summary.concurrency")
    if concurrency > 0:  # a concurrent stage: requested_rate is the request count, not a rate
        row["concurrency"] = concurrency
    else:
        rate = num(load.get("requested_rate"), "load_summary.requested_rate")
        if rate > 0:
            row["request_rate"] = rate
        e2e_s = row.get("e2e_ms_mean", math.nan) / 1000.0
        if row["request_s"] > 0 and e2e_s > 0:  # Little's law: mean requests in flight
            row["concurrency"] = row["request_s"] * e2e_s
            row["flags"] = add_flag(row["flags"], "concurrency-achieved")
    sent = ok + failed
    if sent > 0 and failed / sent > ERROR_RATE_FLAG:
        row["flags"] = add_flag(row["flags"], "high-error-rate")
    tpot = row.get("tpot_ms_p50", math.nan)
    row["tok_s_per_user"] = 1000.0 / tpot if tpot > 0 else math.nan
    row["tok_s_per_user_def"] = "1000/tpot_ms_p50"
    if ok == 0:
        from analysis.ingest.vllm import fail_run

        fail_run(row)
    return row


def _parse_lifecycle(path: Path, sink: Sink) -> None:
    report = read_json(path)
    match = _STAGE.search(path.name)
    stage = int(match.group(1)) if match else None
    folder = path.parent.name or "inference-perf"
    if stage is None and any(path.parent.glob("stage_*_lifecycle_metrics.json")):
        # the pooled summary mixes every stage's load: the stage files beside it are the points
        sink.note("summary of all stages (their loads mixed); the stage files beside it are read as the points")
        return
    run_id = f"{folder}/stage_{stage}" if stage is not None else f"{folder}/summary"
    sink.point(report_point(report, run_id=run_id, stage=stage), line=None)


def _parse_prometheus(path: Path, sink: Sink) -> None:
    read_json(path)  # a file that is not JSON is still quarantined with its reason
    sink.note("inference-perf server-side Prometheus summary: not read as a point (the client lifecycle report of "
              "the same stage is)")


FORMATS = [
    Format("inference-perf-lifecycle", "inference-perf", _detect_lifecycle, _parse_lifecycle,
           "JSON object with `load_summary`, `successes` (`latency`, `throughput`, `output_tokens_per_sec`) and "
           "`failures` (seconds)",
           "tests/data/formats/inference_perf/kubecon_na_2025_vllm/stage_0_lifecycle_metrics.json"),
    Format("inference-perf-prometheus", "inference-perf", _detect_prometheus, _parse_prometheus,
           "JSON object with `load_summary`, `successes` (`queue_len`, `time_to_first_token`) and `failures`; "
           "noted, not read (samples beside the lifecycle example)"),  # no example: it yields no point by design
]
