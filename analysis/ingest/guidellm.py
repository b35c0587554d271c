"""GuideLLM ``guidellm benchmark --output-path benchmarks.json|.yaml``: one report, one point per benchmark.

Two layouts are read (both written by ``GenerativeBenchmarksReport``, ``src/guidellm/benchmark/output.py`` and
``benchmark/objects.py`` in vllm-project/guidellm):

* **0.2-era** (2025, e.g. neuralmagic/guidellm ``tests/unit/entrypoints/assets/benchmarks_stripped.json``): each
  benchmark has ``args.strategy`` (``type_`` synchronous / concurrent / throughput / constant / poisson),
  ``run_stats`` and ``worker.backend_model``.
* **0.5** (``metadata.guidellm_version`` 0.5.x): a top-level ``metadata`` and ``args`` block; each benchmark has
  ``config.strategy`` (with ``streams`` / ``max_concurrency`` for a concurrent run), ``config.backend.model``,
  ``scheduler_state`` and ``scheduler_metrics``. Its head holds ``elapsed_time``, ``tokens_per_second`` and
  ``requests_per_second`` as the ``vllm bench throughput`` result does, so this reader runs before vLLM's.

``metrics`` is the same in both: each metric is ``{successful, errored, incomplete, total}``, each of those a
distribution ``{mean, median, …, percentiles: {p50?, p90, p99, …}}``. Only ``successful`` is used. Units: the
``*_ms`` metrics are ms, ``request_latency`` is seconds. Time per output token: GuideLLM's
``inter_token_latency_ms`` is ``(last token − first token) / (output_tokens − 1)`` (checked against the per-request
timings in the samples), what perfclaims (and vLLM) call TPOT, so it fills ``tpot_ms_*``; GuideLLM's own
``time_per_output_token_ms`` divides by every output token and, in 0.5, runs from the request's start (TTFT
included), so it is not used.
Throughputs are the means of GuideLLM's rate distributions (``output_tokens_per_second``, ``tokens_per_second``,
``requests_per_second``), the numbers its console table prints. Concurrency: the client's setting for a
synchronous (1) or concurrent (``streams``) run; for throughput / constant / poisson runs the measured mean of
``request_concurrency`` (flagged ``concurrency-achieved``) and the configured rate in ``request_rate``.
"""

from __future__ import annotations

import math
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, in_words, model_from_id, num
from analysis.ingest.jsonl_stream import read_json
from analysis.ingest.vllm import per_user
from analysis.schema import add_flag

PRIORITY = 20  # before vllm-throughput, whose detector a 0.5 report also satisfies

_KEEP = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
_COLUMNS = {"ttft": ("mean", "p50", "p90", "p99"), "tpot": ("mean", "p50", "p90", "p99"),
            "e2e": ("mean", "p50", "p99")}


def _detect_json(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"benchmarks"' in head
            and b'"generative_benchmark"' in head)


def _detect_yaml(path: Path, head: bytes) -> bool:
    text = head.lstrip()
    return (not text.startswith((b"{", b"[")) and b"benchmarks:" in head
            and b"type_: generative_benchmark" in head)


def _read_yaml(path: Path):
    import yaml

    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise Quarantine(f"invalid YAML: {getattr(err, 'problem', None) or err}",
                         line=mark.line + 1 if mark else None) from None


def _dist(metrics: dict, name: str) -> dict:
    """The ``successful`` distribution of one metric ({} when absent)."""
    block = metrics.get(name)
    if not isinstance(block, dict):
        return {}
    ok = block.get("successful")
    return ok if isinstance(ok, dict) else {}


def _stats(metrics: dict, name: str, prefix: str, *, scale: float = 1.0) -> dict:
    dist = _dist(metrics, name)
    if not dist:
        return {}
    pct = dist.get("percentiles") if isinstance(dist.get("percentiles"), dict) else {}
    out = {}
    for key, stat in _KEEP.items():
        if stat not in _COLUMNS[prefix]:
            continue
        value = dist.get(key) if key in ("mean", "median") else pct.get(key)
        if value is None or f"{prefix}_ms_{stat}" in out:
            continue
        x = num(value, f"metrics.{name}.successful.{key}", scale=scale)
        if x < 0:
            raise Quarantine(f"negative latency {x:g} ms", field=f"metrics.{name}.successful.{key}")
        out[f"{prefix}_ms_{stat}"] = x if x > 0 else math.nan
    return out


def _mean(metrics: dict, name: str) -> float:
    return num(_dist(metrics, name).get("mean"), f"metrics.{name}.successful.mean")


def _strategy(bench: dict) -> tuple[dict, str]:
    """(strategy block, layout): ``config.strategy`` (0.5) or ``args.strategy`` (0.2-era)."""
    config = bench.get("config")
    if isinstance(config, dict) and isinstance(config.get("strategy"), dict):
        return config["strategy"], "0.5"
    args = bench.get("args")
    if isinstance(args, dict) and isinstance(args.get("strategy"), dict):
        return args["strategy"], "0.2"
    return {}, "unknown"


def _model(report: dict, bench: dict) -> str | None:
    config = bench.get("config") if isinstance(bench.get("config"), dict) else {}
    backend = config.get("backend") if isinstance(config.get("backend"), dict) else {}
    worker = bench.get("worker") if isinstance(bench.get("worker"), dict) else {}
    args = report.get("args") if isinstance(report.get("args"), dict) else {}
    return model_from_id(backend.get("model") or worker.get("backend_model") or args.get("model"))


def benchmark_point(report: dict, bench: dict, index: int, run_id: str) -> dict:
    metrics = bench.get("metrics")
    if not isinstance(metrics, dict):
        raise Quarantine("benchmark has no metrics block", field=f"benchmarks[{index}].metrics")
    strategy, layout = _strategy(bench)
    kind = str(strategy.get("type_") or "unknown")
    meta = report.get("metadata") if isinstance(report.get("metadata"), dict) else {}
    # 0.5: metrics.request_totals; 0.2-era: the benchmark's own request_totals
    totals = next((t for t in (metrics.get("request_totals"), bench.get("request_totals")) if isinstance(t, dict)), {})
    row = {
        "run_id": f"{run_id}#{index + 1}",
        "tool_version": str(meta.get("guidellm_version") or f"{layout}-layout"),
        "model": _model(report, bench),
        "phase": "serving",
        "scenario": kind,
        "num_requests": num(totals.get("successful"), "request_totals.successful"),
        "failed_requests": num(totals.get("errored"), "request_totals.errored"),
        "isl": _mean(metrics, "prompt_token_count"),
        "osl": _mean(metrics, "output_token_count"),
        "output_tok_s": _mean(metrics, "output_tokens_per_second"),
        "total_tok_s": _mean(metrics, "tokens_per_second"),
        "request_s": _mean(metrics, "requests_per_second"),
        "flags": "",
    }
    if kind == "synchronous":
        row["concurrency"] = 1.0
    elif kind == "concurrent":
        row["concurrency"] = num(strategy.get("streams", strategy.get("max_concurrency")), "strategy.streams")
    else:  # throughput / constant / poisson: the load is a rate, the concurrency what it produced
        row["concurrency"] = _mean(metrics, "request_concurrency")
        row["flags"] = add_flag(row["flags"], "concurrency-achieved")
        if kind in ("constant", "poisson") and strategy.get("rate") is not None:
            row["request_rate"] = num(strategy.get("rate"), "strategy.rate")
    row.update(_stats(metrics, "time_to_first_token_ms", "ttft"))
    row.update(_stats(metrics, "inter_token_latency_ms", "tpot"))
    row.update(_stats(metrics, "request_latency", "e2e", scale=1000.0))
    if row["num_requests"] == 0:
        from analysis.ingest.vllm import fail_run

        fail_run(row)
    per_user(row)
    return row


def _parse_report(report, path: Path, sink: Sink) -> None:
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise Quarantine("expected a GuideLLM report: an object with a `benchmarks` list", field="benchmarks")
    for i, bench in enumerate(report["benchmarks"]):
        if not isinstance(bench, dict):
            sink.bad(f"benchmarks[{i}] is not an object", field=f"benchmarks[{i}]")
            continue
        try:
            sink.point(benchmark_point(report, bench, i, path.stem), line=None)
        except Exception as err:  # one bad benchmark is that benchmark's quarantine row, not the file's
            reason, field = in_words(err)
            sink.bad(f"benchmarks[{i}]: {reason}", field=field)


def _parse_json(path: Path, sink: Sink) -> None:
    _parse_report(read_json(path), path, sink)


def _parse_yaml(path: Path, sink: Sink) -> None:
    _parse_report(_read_yaml(path), path, sink)


FORMATS = [
    Format("guidellm-report", "guidellm", _detect_json, _parse_json,
           "JSON object with a `benchmarks` list of `generative_benchmark` objects (0.2-era `args`/`run_stats`, or "
           "0.5 `metadata`/`config`/`scheduler_state`)",
           "tests/data/formats/guidellm/v0.2_stripped/benchmarks_stripped.json"),
    Format("guidellm-report-yaml", "guidellm", _detect_yaml, _parse_yaml,
           "YAML with `benchmarks:` and `type_: generative_benchmark` (the same report as YAML)",
           "tests/data/formats/guidellm/v0.2_stripped/benchmarks_stripped.yaml"),
]
