"""MLPerf Inference LoadGen (LLM benchmarks): ``mlperf_log_summary.txt`` and ``mlperf_log_detail.txt``.

Latencies are **ns** (converted to ms). Throughput: Offline ``Tokens per second``, Server ``Completed tokens per
second`` (written twice with different spacing; the same number). ``result_token_throughput`` in the detail log
is not tokens/s (it mixes ns) and is never read. TPOT is "Time to Output Token" in the summary and
``result_time_per_output_token_<p>_percentile_ns`` / ``result_time_to_output_token_mean`` in the detail log.
Offline sample latencies measure time since the single query was issued, not a request's e2e, so they are not
stored. GPT-J (v3.x) is scored in samples per second with no token counts: its point keeps samples/s and latencies
and says so; v4.x adds ``Completed tokens per second (inferred)`` (samples/s × a fixed factor), flagged
``tokens-inferred``. "Interactive" is not a LoadGen scenario: it is known from the benchmark name (``…-interactive…``) and run
as Server. ``Result is : INVALID`` keeps the point, flagged ``invalid-result``.

Nothing about the system is in the logs: hardware, GPU count, framework and benchmark come from the submission
path — ``closed/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/`` or a flat folder such
as ``…_ESC_N8_H200x8_TRT_llama2-70b-99_Offline`` — where the system name carries ``<GPU>…x<count>``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, num

PRIORITY = 30
TOOL = "mlperf-loadgen"
SCENARIOS = ("Offline", "Server", "SingleStream", "MultiStream", "Interactive")
GPUS = {
    "gb300": "GB300 NVL72", "gb200": "GB200 NVL72", "b300": "B300", "b200": "B200", "h200": "H200 SXM",
    "h100": "H100 SXM", "h20": "H20", "a100": "A100", "l40s": "L40S", "l4": "L4",
    "mi355x": "MI355X", "mi325x": "MI325X", "mi300x": "MI300X", "gaudi3": "Gaudi 3",
}
RACK_DOMAIN = {"GB300 NVL72": 72, "GB200 NVL72": 72}
FRAMEWORKS = {"trt": "tensorrt-llm", "trtllm": "tensorrt-llm", "vllm": "vllm", "sglang": "sglang"}
MODELS = {
    "llama2-70b": "Llama-2-70B", "llama3.1-405b": "Llama-3.1-405B", "llama3.1-8b": "Llama-3.1-8B",
    "mixtral-8x7b": "Mixtral-8x7B", "deepseek-r1": "DeepSeek-R1", "gptj": "GPT-J-6B",
}
PERCENTILES = {"50.00": "p50", "90.00": "p90", "99.00": "p99"}


# --- the submission path --------------------------------------------------------------------------------
def from_path(path: Path) -> dict:
    """Hardware, GPU count, framework, benchmark, model and scenario readable from a submission path."""
    parts = Path(path).resolve().parts
    out: dict = {}
    system = benchmark = scenario = None
    if "results" in parts:
        i = len(parts) - 1 - parts[::-1].index("results")
        tail = parts[i + 1:]
        if len(tail) >= 3:
            system, benchmark, scenario = tail[0], tail[1], tail[2]
    if system is None:
        folder = Path(path).resolve().parent.name
        m = re.match(rf"^(?P<system>.*)_(?P<bench>[^_]+)_(?P<scenario>{'|'.join(SCENARIOS)})$", folder)
        if m:
            system, benchmark, scenario = m.group("system"), m.group("bench"), m.group("scenario")
    if system:
        gpu = re.search(r"(?i)(?<![a-z0-9])(" + "|".join(sorted(GPUS, key=len, reverse=True)) + r")(?=[-_x]|$)"
                        r"[-\w]*?x(\d+)(?![0-9])", system)
        if gpu:
            out["hardware"] = GPUS[gpu.group(1).lower()]
            out["n_gpus"] = float(gpu.group(2))
            if out["hardware"] in RACK_DOMAIN:
                out["scale_up_domain"] = float(RACK_DOMAIN[out["hardware"]])
        suffix = system.rsplit("_", 1)[-1].lower()
        if suffix in FRAMEWORKS:
            out["framework"] = FRAMEWORKS[suffix]
    if benchmark:
        out["run_id"] = f"{system}/{benchmark}/{scenario}" if system else benchmark
        base = re.sub(r"(-interactive)?(-99(\.9)?)?$", "", benchmark.lower())
        base = re.sub(r"-interactive", "", base)
        out["model"] = MODELS.get(base, base)
        if "interactive" in benchmark.lower():
            out["scenario"] = "Interactive"
    if scenario and "scenario" not in out:
        out["path_scenario"] = scenario
    return out


def _row(path: Path, values: dict, scenario: str | None, valid: str | None, version: str) -> dict:
    """The point shared by summary and detail readers; ``values`` already in points-table columns."""
    info = from_path(path)
    path_scenario = info.pop("path_scenario", None)
    scenario = info.pop("scenario", None) or scenario or path_scenario
    if scenario is None:
        raise Quarantine("no scenario in the log", field="Scenario")
    row = {"tool": TOOL, "tool_version": version, "run_id": info.pop("run_id", Path(path).parent.name),
           "scenario": scenario, "phase": "offline" if scenario == "Offline" else "serving"}
    row.update(info)
    row.update(values)
    if scenario == "Offline":
        for key in [k for k in row if k.startswith("e2e_ms_")]:
            del row[key]
    no_tokens = "output_tok_s" not in row or math.isnan(row["output_tok_s"])
    if no_tokens and math.isnan(row.get("request_s", math.nan)):
        raise Quarantine("no result: neither tokens per second nor samples per second in the log",
                         field="Tokens per second")
    flags = ["failed-run"] if row.get("output_tok_s") == 0 or (no_tokens and row.get("request_s") == 0) else []
    if valid is None:
        flags.append("validity-unknown")
    elif valid.strip().upper() != "VALID":
        flags.append("invalid-result")
    row["flags"] = ";".join(flags)
    return row


# --- mlperf_log_summary.txt -----------------------------------------------------------------------------------
_SUMMARY_KEYS = {
    "tokens per second": "output_tok_s",
    "completed tokens per second": "output_tok_s",
    "completed tokens per second (inferred)": "output_tok_s",  # GPT-J (v4.x): samples/s × fixed tokens/sample
    "samples per second": "request_s",
    "completed samples per second": "request_s",
    "mean latency (ns)": "e2e_ms_mean",
    "mean first token latency (ns)": "ttft_ms_mean",
    "mean time to output token (ns)": "tpot_ms_mean",
}


# Section titles every LoadGen summary has, in order; the last one missing means the file was cut off.
SUMMARY_SECTIONS = ("Additional Stats", "Test Parameters Used")


def _detect_summary(path: Path, head: bytes) -> bool:
    return b"MLPerf Results Summary" in head[:4096]


def _summary_column(key: str) -> str | None:
    key = key.strip().lower()
    if key in _SUMMARY_KEYS:
        return _SUMMARY_KEYS[key]
    m = re.match(r"^(\d+\.\d+) percentile (latency|first token latency|time to output token) \(ns\)$", key)
    if m and m.group(1) in PERCENTILES:
        prefix = {"latency": "e2e_ms", "first token latency": "ttft_ms", "time to output token": "tpot_ms"}[m.group(2)]
        stat = PERCENTILES[m.group(1)]
        if prefix == "e2e_ms" and stat == "p90":
            return None  # the points table keeps e2e mean/p50/p99 only
        return f"{prefix}_{stat}"
    return None


def _parse_summary(path: Path, sink: Sink) -> None:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    values: dict[str, float] = {}
    scenario = valid = None
    target_qps = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if ":" not in line:
            continue
        key, _, raw = line.partition(":")
        key, raw = key.strip(), raw.strip()
        if key == "Scenario":
            scenario = raw
        elif key == "Result is":
            valid = raw
        elif key == "target_qps":
            target_qps = (lineno, raw)
        column = _summary_column(key)
        if column is None or column in values:
            continue  # the second "Completed tokens per second" repeats the first
        try:
            value = num(raw, key)
        except Quarantine as err:
            raise Quarantine(err.reason, line=lineno, field=key) from None
        if math.isnan(value):
            raise Quarantine("value missing", line=lineno, field=key)
        if value < 0:
            raise Quarantine(f"must be >= 0, got {value:g}", line=lineno, field=key)
        values[column] = value * (1e-6 if "(ns)" in key else 1.0)
    if scenario is None:
        raise Quarantine("no 'Scenario :' line: truncated summary?", field="Scenario")
    row = _row(path, values, scenario, valid, "loadgen (summary)")
    _say_tokens(text, row, sink)
    if scenario == "Server" and target_qps:
        row["request_rate"] = num(target_qps[1], "target_qps")
    missing = [title for title in SUMMARY_SECTIONS if not re.search(rf"(?m)^{title}\s*$", text)]
    if missing:
        row["flags"] = ";".join(f for f in (row["flags"], "truncated") if f)
        sink.bad(f"truncated summary: no '{missing[0]}' section (LoadGen always writes it); the point is kept "
                 "but left out of fits", field=missing[0])
    sink.point(row, line=1)


def _say_tokens(text: str, row: dict, sink: Sink) -> None:
    """Benchmarks scored in samples, not tokens (GPT-J): the point keeps samples/s and latencies, and says so.

    LoadGen counts no generated tokens for GPT-J: v3.x summaries hold samples per second only; v4.x adds
    ``Completed tokens per second (inferred)``, samples per second × a fixed tokens-per-sample factor (LoadGen's
    ``token_latency_scaling_factor``), flagged ``tokens-inferred``."""
    if re.search(r"(?mi)^\s*completed tokens per second \(inferred\)\s*:", text):
        row["flags"] = ";".join(f for f in (row["flags"], "tokens-inferred") if f)
    elif row.get("output_tok_s") is None or math.isnan(row.get("output_tok_s", math.nan)):
        sink.note("no token counts: this benchmark is scored in samples (queries) per second, so the point has "
                  "samples/s and latencies but no tokens/s")


# --- mlperf_log_detail.txt ------------------------------------------------------------------------------------
_DETAIL_KEYS = {
    "result_completed_tokens_per_second": "output_tok_s",
    "result_tokens_per_second": "output_tok_s",
    "result_completed_samples_per_sec": "request_s",
    "result_samples_per_second": "request_s",
    "result_mean_latency_ns": "e2e_ms_mean",
    "result_first_token_mean_latency_ns": "ttft_ms_mean",
    "result_time_to_output_token_mean": "tpot_ms_mean",
}
PREFIX = ":::MLLOG "


def _detect_detail(path: Path, head: bytes) -> bool:
    return head.lstrip().startswith(PREFIX.encode())


def _detail_column(key: str) -> str | None:
    if key in _DETAIL_KEYS:
        return _DETAIL_KEYS[key]
    m = re.match(r"^result_(first_token_|time_per_output_token_)?(\d+\.\d+)_percentile_(latency_)?ns$", key)
    if m and m.group(2) in PERCENTILES:
        prefix = {None: "e2e_ms", "first_token_": "ttft_ms", "time_per_output_token_": "tpot_ms"}[m.group(1)]
        stat = PERCENTILES[m.group(2)]
        return None if prefix == "e2e_ms" and stat == "p90" else f"{prefix}_{stat}"
    return None


def _parse_detail(path: Path, sink: Sink) -> None:
    if path.with_name("mlperf_log_summary.txt").exists():
        sink.count("point_from_summary")  # same run; the summary is the submission's headline
        return
    values: dict[str, float] = {}
    events: dict[str, object] = {}
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.startswith(PREFIX):
                continue
            try:
                # stdlib json: keeps integers beyond 2**63 (rng seeds) exact, where orjson would refuse them
                event = json.loads(line[len(PREFIX):])
            except json.JSONDecodeError as err:
                sink.bad(f"invalid JSON after ':::MLLOG': {err.msg} at column {err.colno + len(PREFIX)}",
                         line=lineno)
                continue
            except (ValueError, RecursionError) as err:  # 4300-digit integer, nesting too deep
                why = err if isinstance(err, ValueError) else "nested too deeply"
                sink.bad(f"unreadable JSON after ':::MLLOG': {why}", line=lineno)
                continue
            key = event.get("key") if isinstance(event, dict) else None
            if not isinstance(key, str):
                sink.bad("MLLOG event without a 'key'", line=lineno, field="key")
                continue
            events[key] = event.get("value")
            column = _detail_column(key)
            if column is None:
                continue
            try:
                value = num(event.get("value"), key)
            except Quarantine as err:
                sink.bad(err.reason, line=lineno, field=key)
                continue
            if value < 0:
                sink.bad(f"must be >= 0, got {value:g}", line=lineno, field=key)
                continue
            values[column] = value * (1e-6 if key.endswith("_ns") or "time_to_output_token" in key else 1.0)
    scenario = events.get("effective_scenario") or events.get("requested_scenario")
    if "output_tok_s" not in values and "result_token_throughput_with_loadgen_overhead" in events:
        # older LoadGen logs Server token throughput only this way (tokens over the issue window)
        values["output_tok_s"] = num(events["result_token_throughput_with_loadgen_overhead"],
                                     "result_token_throughput_with_loadgen_overhead")
        sink.count("throughput_with_loadgen_overhead")
    row = _row(path, values, str(scenario) if scenario else None, events.get("result_validity"),
               f"loadgen {events.get('loadgen_version') or 'unknown'}")
    if row["scenario"] in ("Server", "Interactive") and events.get("requested_server_target_qps") is not None:
        row["request_rate"] = num(events["requested_server_target_qps"], "requested_server_target_qps")
    sink.point(row, line=None)


FORMATS = [
    Format(
        name="mlperf-summary",
        tool=TOOL,
        detect=_detect_summary,
        parse=_parse_summary,
        detected_by="text containing `MLPerf Results Summary` (LoadGen's mlperf_log_summary.txt)",
        example="tests/data/formats/mlperf/ntuhpc_v5.1_ASUSTeK_ESC_N8_H200x8_TRT_llama2-70b-99_Server/"
                "mlperf_log_summary.txt",
    ),
    Format(
        name="mlperf-detail",
        tool=TOOL,
        detect=_detect_detail,
        parse=_parse_detail,
        detected_by="lines starting `:::MLLOG {json}` (LoadGen's mlperf_log_detail.txt)",
        example="tests/data/formats/mlperf/closed/ExampleCo/results/ESC_N8_H200-SXM-141GBx8_TRT/"
                "llama2-70b-interactive-99/Server/performance/run_1/mlperf_log_detail.txt",
    ),
]
