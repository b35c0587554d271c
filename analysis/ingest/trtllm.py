"""TensorRT-LLM ``trtllm-bench throughput|latency``: the ``--report_json`` object, or the console report it prints
(``trtllm-bench-console``, the same statistics as ``Label:  value`` lines); one point per report.

The report carries its own configuration: model, dtype, quantization and KV dtype under ``engine``, parallelism
and ``world_size`` (the GPU denominator) under ``world_info``, the GPU name under ``machine`` in newer versions.
Latencies are ms; percentile blocks are ``{p50, p90, p95, p99, minimum, maximum, average}`` (older versions have
no ``p90``). Concurrency is the measured ``avg_num_concurrent_requests`` (Σ latency / total time), not a setting,
so such points are flagged ``concurrency-achieved``. tok/s/user: 1000/tpot_ms_p50 when the run streamed; without
streaming there is no TTFT/TPOT and the tool's ``output_throughput_per_user_tok_s`` (which includes the context
phase) is kept as ``tool-per-user`` and flagged ``per-user-includes-ttft``. ``token_output_speed_tok_s``
(generation only, a mean over requests) is not a median and is not used when TPOT percentiles exist.
``decoding_stats`` (speculative decoding only): ``mode`` names the method (MTP, Eagle3, NGram, DraftTarget…) and
``acceptance_length_percentiles.average`` is the measured acceptance length (tokens per decoding iteration, the
bonus token included). Its draft-token counts are per request, not per step, so ``draft_tokens`` stays unknown; a
forced run (``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS``, an environment variable) is told by the manifest's
``launch_settings``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, finite_or_nan, model_from_id, num
from analysis.ingest.jsonl_stream import read_json
from analysis.schema import add_flag, normalize_precision, normalize_spec_method

PRIORITY = 30

# TensorRT-LLM QuantAlgo names → precision vocabulary (weights/math).
_QUANT = [
    (r"nvfp4|fp4|w4a4", "fp4"), (r"mxfp4", "fp4"), (r"fp8", "fp8"), (r"w8a8|int8_sq|sq_", "int8"),
    (r"w4a16|w4a8|int4|awq|gptq", "int4"), (r"w8a16|int8", "int8"), (r"mixed", "mixed"),
]


def precision_of(quantization, dtype) -> str | None:
    """Precision from ``engine.quantization`` (QuantAlgo) or, without quantization, ``engine.dtype``."""
    if quantization and str(quantization).lower() not in {"none", "null", "no_quant"}:
        q = str(quantization).lower()
        for pattern, prec in _QUANT:
            if re.search(pattern, q):
                return prec
        return None
    p = normalize_precision(dtype)
    return None if p == "unknown" else p


def _detect(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"engine"' in head and b'"world_info"' in head
            and b'"performance"' in head)


def _pct(block, prefix: str, field: str, which=("p50", "p90", "p99")) -> dict:
    """``{p50, p90, p99, average}`` (ms) → ``<prefix>_p50`` …, ``<prefix>_mean``."""
    if not isinstance(block, dict):
        return {}
    out = {}
    for key in which:
        if key in block:
            out[f"{prefix}_{key}"] = num(block[key], f"{field}.{key}")
    if "average" in block:
        out[f"{prefix}_mean"] = num(block["average"], f"{field}.average")
    return out


def _parse(path: Path, sink: Sink) -> None:
    rec = read_json(path)  # truncated / invalid at line:column / not UTF-8; a byte-order mark is accepted
    if not isinstance(rec, dict):
        raise Quarantine("expected a JSON object")
    engine = rec.get("engine") or {}
    world = rec.get("world_info") or {}
    req = rec.get("request_info") or {}
    perf = rec.get("performance")
    if not isinstance(perf, dict):
        raise Quarantine("no performance block", field="performance")
    stream = rec.get("streaming_metrics") if isinstance(rec.get("streaming_metrics"), dict) else None
    machine = rec.get("machine") if isinstance(rec.get("machine"), dict) else {}

    precision = precision_of(engine.get("quantization"), engine.get("dtype"))
    kv = engine.get("kv_cache_dtype")
    kv_dtype = precision_of(kv, None) if kv else None
    backend = str(engine.get("backend") or "").lower()
    world_size = num(world.get("world_size"), "world_info.world_size")
    row = {
        "run_id": path.stem,
        "tool_version": engine.get("version"),
        "model": model_from_id(engine.get("model")) or model_from_id(engine.get("model_path")),
        # torch device name, e.g. "NVIDIA B200"; the vendor prefix is dropped, the manifest can name it exactly
        "hardware": re.sub(r"^NVIDIA\s+", "", str(machine["name"])) if machine.get("name") else None,
        "n_gpus": world_size,
        "precision": precision,
        "kv_dtype": kv_dtype,
        "framework": f"trtllm-{backend}" if backend else "trtllm",
        "tp": num(world.get("tp_size"), "world_info.tp_size"),
        "ep": num(world.get("ep_size"), "world_info.ep_size"),
        "pp": num(world.get("pp_size"), "world_info.pp_size"),
        "phase": "serving",
        "concurrency": num(req.get("avg_num_concurrent_requests"), "request_info.avg_num_concurrent_requests"),
        "num_requests": num(req.get("num_requests"), "request_info.num_requests"),
        "isl": num(req.get("avg_input_length"), "request_info.avg_input_length"),
        "osl": num(req.get("avg_output_length"), "request_info.avg_output_length"),
        "output_tok_s": num(perf.get("system_output_throughput_tok_s"), "performance.system_output_throughput_tok_s"),
        "total_tok_s": num(perf.get("system_total_throughput_tok_s"), "performance.system_total_throughput_tok_s"),
        "request_s": num(perf.get("request_throughput_req_s"), "performance.request_throughput_req_s"),
        "e2e_ms_mean": num(perf.get("avg_request_latency_ms"), "performance.avg_request_latency_ms"),
        "flags": "concurrency-achieved",
    }
    issue_rate = finite_or_nan(world.get("issue_rate"))
    row["request_rate"] = issue_rate if issue_rate == issue_rate and issue_rate < 1e6 else math.nan
    lat = _pct(perf.get("request_latency_percentiles_ms"), "e2e_ms", "performance.request_latency_percentiles_ms",
               which=("p50", "p99"))
    lat.pop("e2e_ms_mean", None)  # avg_request_latency_ms is the same average
    row.update(lat)
    if stream:
        row.update(_pct(stream.get("ttft_percentiles"), "ttft_ms", "streaming_metrics.ttft_percentiles"))
        row.update(_pct(stream.get("tpot_percentiles"), "tpot_ms", "streaming_metrics.tpot_percentiles"))
        if math.isnan(row.get("ttft_ms_mean", math.nan)):
            row["ttft_ms_mean"] = num(stream.get("avg_ttft_ms"), "streaming_metrics.avg_ttft_ms")
        if math.isnan(row.get("tpot_ms_mean", math.nan)):
            row["tpot_ms_mean"] = num(stream.get("avg_tpot_ms"), "streaming_metrics.avg_tpot_ms")
    tpot = row.get("tpot_ms_p50", math.nan)
    if tpot > 0:
        row["tok_s_per_user"] = 1000.0 / tpot
        row["tok_s_per_user_def"] = "1000/tpot_ms_p50"
    else:
        # No streaming: the only per-user figure is the tool's, which counts the context phase too.
        row["tok_s_per_user"] = num(perf.get("output_throughput_per_user_tok_s"),
                                    "performance.output_throughput_per_user_tok_s")
        row["tok_s_per_user_def"] = "tool-per-user"
        row["flags"] = add_flag(row["flags"], "per-user-includes-ttft")
    decoding = rec.get("decoding_stats") or {}  # not an object: an "unexpected structure" quarantine row
    accept = decoding.get("acceptance_length_percentiles")
    if isinstance(accept, dict) and accept.get("average") is not None:
        row["tokens_per_step"] = num(accept["average"], "decoding_stats.acceptance_length_percentiles.average")
        row["spec_decode"] = str(decoding.get("mode") or "") or None
        # mean over requests of tokens per decoding iteration (bonus included): the run's measured acceptance
        row["acceptance_length"] = row["tokens_per_step"]
        row["acceptance_source"] = "measured"
        if decoding.get("mode"):
            row["spec_method"] = normalize_spec_method(decoding["mode"])
    if row["num_requests"] == 0:
        row["flags"] = add_flag(row["flags"], "failed-run")
    sink.point(row, line=1)


# --- the console report (what people paste) ---------------------------------------------------------
# ``ReportUtility.report_statistics`` prints the same statistics as the JSON, one ``Label:  value`` per line under
# ``= SECTION`` banners, and percentile blocks as ``[Latency] P50    : 123.4`` (also ``[TTFT]``, ``[TPOT]``).
_CONSOLE_KEYS = {
    "model": "model", "tensorrt-llm version": "tool_version", "tensorrt llm version": "tool_version",
    "dtype": "dtype", "kv cache dtype": "kv_dtype", "quantization": "quantization",
    "number of requests": "num_requests", "number of concurrent requests": "concurrency",
    "average input length (tokens)": "isl", "average output length (tokens)": "osl",
    "tp size": "tp", "pp size": "pp", "ep size": "ep", "issue rate (req/sec)": "issue_rate",
    "request throughput (req/sec)": "request_s", "total output throughput (tokens/sec)": "output_tok_s",
    "total token throughput (tokens/sec)": "total_tok_s", "average request latency (ms)": "e2e_ms_mean",
    "per user output throughput [w/ ctx] (tps/user)": "per_user_with_ctx",
    "per gpu output throughput (tps/gpu)": "per_gpu",
    "average time-to-first-token [ttft] (ms)": "ttft_ms_mean", "average time-per-output-token [tpot] (ms)":
        "tpot_ms_mean",
}
_TEXT_KEYS = {"model", "tool_version", "dtype", "kv_dtype", "quantization"}
_LINE = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_PCT_LINE = re.compile(r"^\s*\[(Latency|TTFT|TPOT)\]\s*(P50|P90|P99|AVERAGE)\s*:\s*(\S+)")
_PCT_COLUMN = {"Latency": "e2e_ms", "TTFT": "ttft_ms", "TPOT": "tpot_ms"}


def _detect_console(path: Path, head: bytes) -> bool:
    return (b"= PERFORMANCE OVERVIEW" in head and b"Request Throughput (req/sec)" in head
            and not head.lstrip().startswith((b"{", b"[")))


def _parse_console(path: Path, sink: Sink) -> None:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    found: dict = {}
    lines: dict = {}
    backend = None
    for n, line in enumerate(text.splitlines(), start=1):
        banner = re.match(r"^=\s*(PYTORCH|TRT|TENSORRT|_AUTODEPLOY)\s+BACKEND", line.strip(), re.IGNORECASE)
        if banner:
            backend = banner.group(1).lower()
        m = _PCT_LINE.match(line)
        if m:
            column = f"{_PCT_COLUMN[m.group(1)]}_{'mean' if m.group(2) == 'AVERAGE' else m.group(2).lower()}"
            found.setdefault(column, num(m.group(3), f"[{m.group(1)}] {m.group(2)}"))
            lines.setdefault(column, n)
            continue
        m = _LINE.match(line)
        if not m or m.group(1).lower() not in _CONSOLE_KEYS:
            continue
        key, value = _CONSOLE_KEYS[m.group(1).lower()], m.group(2)
        if key in found:
            continue  # the first occurrence (the run's own) wins over repeats further down
        if key in _TEXT_KEYS:
            found[key] = value or None
        elif value.strip().lower() in ("", "none", "n/a"):
            found[key] = math.nan
            if value.strip() == "":
                sink.bad(f"{m.group(1)!r} has no value (the report is cut off here?)", line=n, field=m.group(1))
        else:
            found[key] = num(value.rstrip("%"), m.group(1))
        lines[key] = n
    if "output_tok_s" not in found and "request_s" not in found:
        raise Quarantine("no PERFORMANCE OVERVIEW numbers (Request / Total Output Throughput)")
    tp, pp = found.get("tp", math.nan), found.get("pp", math.nan)
    n_gpus = tp * (pp if pp == pp else 1.0)
    per_gpu = found.get("per_gpu", math.nan)
    if not n_gpus > 0 and per_gpu > 0 and found.get("output_tok_s", math.nan) > 0:
        n_gpus = float(round(found["output_tok_s"] / per_gpu))  # the report divides by world size
    row = {
        "run_id": path.stem,
        "tool_version": found.get("tool_version"),
        "model": model_from_id(found.get("model")),
        "precision": precision_of(found.get("quantization"), found.get("dtype")),
        "kv_dtype": precision_of(found.get("kv_dtype"), None) if found.get("kv_dtype") else None,
        "framework": f"trtllm-{backend}" if backend else "trtllm",
        "n_gpus": n_gpus,
        "tp": tp, "pp": pp, "ep": found.get("ep", math.nan),
        "phase": "serving",
        "flags": "",
    }
    for key in ("num_requests", "concurrency", "isl", "osl", "request_s", "output_tok_s", "total_tok_s",
                "e2e_ms_mean", "e2e_ms_p50", "e2e_ms_p90", "e2e_ms_p99", "ttft_ms_mean", "ttft_ms_p50",
                "ttft_ms_p90", "ttft_ms_p99", "tpot_ms_mean", "tpot_ms_p50", "tpot_ms_p90", "tpot_ms_p99"):
        if key in found:
            row[key] = found[key]
    row.pop("e2e_ms_p90", None)  # the points table keeps mean/p50/p99 of e2e
    if "concurrency" in row:
        row["flags"] = add_flag(row["flags"], "concurrency-achieved")  # Σ latency / total time, as in the JSON
    issue = found.get("issue_rate", math.nan)
    row["request_rate"] = issue if issue == issue and issue < 1e6 else math.nan
    if row.get("tpot_ms_p50", math.nan) > 0:
        row["tok_s_per_user"] = 1000.0 / row["tpot_ms_p50"]
        row["tok_s_per_user_def"] = "1000/tpot_ms_p50"
    elif found.get("per_user_with_ctx", math.nan) == found.get("per_user_with_ctx", math.nan):
        row["tok_s_per_user"] = found["per_user_with_ctx"]
        row["tok_s_per_user_def"] = "tool-per-user"
        row["flags"] = add_flag(row["flags"], "per-user-includes-ttft")
    sink.point(row, line=lines.get("output_tok_s") or lines.get("request_s"))


FORMATS = [
    Format("trtllm-bench-report", "trtllm-bench", _detect, _parse,
           "JSON object with `engine`, `world_info`, `request_info` and `performance` blocks (`--report_json`)",
           "tests/data/formats/trtllm/report_streaming.json"),
    Format("trtllm-bench-console", "trtllm-bench", _detect_console, _parse_console,
           "text with `= PERFORMANCE OVERVIEW` and `Request Throughput (req/sec):` (the printed report, as pasted)",
           "tests/data/formats/trtllm/console/issue6294_llama31_8b_fp8_h100_excerpt.txt"),
]
