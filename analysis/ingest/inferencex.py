"""InferenceX (ex-InferenceMAX) results: API rows, per-point ``agg_*.json``, AgentX and multi-turn aggregates, trimmed
summaries.

All four store latencies in **seconds** (converted to ms here) and ``intvty = 1000/TPOT_ms``, whose ``p99`` is
the slow tail (the 1st percentile of interactivity): rows that carry it are flagged ``percentile-inverted`` and
perfclaims never reads it. GPU accounting follows InferenceX ``utils/process_result.py``: a single-node point
divides by ``tp`` (×pp), a disaggregated point serves output from its decode GPUs and counts prefill + decode
GPUs in ``n_gpus``. ``output_tok_s`` is rebuilt as system-wide output tokens/s so that any denominator
(``all``, ``decode``) can be applied later.

Speculative decoding: ``spec_method`` (API rows) and ``spec_decoding`` (``agg_*.json``, AgentX; else the
``_spec-<word>_`` part of the file name) name the method. No InferenceX result records its acceptance: the
fixed-sequence lane measures it on random-token prompts without saving it, and the AgentX lane may pin it to a
golden curve through synthetic acceptance set at launch (``SYNTHETIC_ACCEPTANCE``, injected into the recipe), so
acceptance stays unknown unless the manifest gives it or names the recipe (``launch_settings``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, first, in_words, model_from_id, num
from analysis.ingest.jsonl_stream import read_json
from analysis.schema import normalize_spec_method, scope_for

PRIORITY = 20

MODEL_PREFIXES = {
    "dsr1": "DeepSeek-R1-0528",
    "dsv4": "DeepSeek-V4",
    "gptoss": "gpt-oss-120b",
    "kimik2.5": "Kimi-K2.5",
    "kimik2.7": "Kimi-K2.7",
    "minimaxm2.5": "MiniMax-M2.5",
    "glm5": "GLM-5",
}
RACK_HARDWARE = {"gb200": 72, "gb300": 72}
HARDWARE_NAMES = {
    "gb200": "GB200 NVL72", "gb300": "GB300 NVL72", "b200": "B200", "b300": "B300", "h100": "H100 SXM",
    "h200": "H200 SXM", "mi300x": "MI300X", "mi325x": "MI325X", "mi355x": "MI355X",
}
_LAT_STATS = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
_LAT_METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e"}
_KEEP = {
    "ttft": ("mean", "p50", "p90", "p99"), "tpot": ("mean", "p50", "p90", "p99"),
    "itl": ("mean", "p50", "p99"), "e2e": ("mean", "p50", "p99"),
}


def hardware_name(raw: str | None) -> tuple[str, float]:
    """Display name and scale-up domain size for an InferenceX hardware key (``gb200``, ``cluster:mi355x-x``)."""
    if not raw:
        return "unknown", math.nan
    key = str(raw).lower().split(":")[-1]
    key = re.split(r"[-_]", key)[0]
    key = {"mi355": "mi355x"}.get(key, key)
    return HARDWARE_NAMES.get(key, key.upper()), float(RACK_HARDWARE.get(key, 8))


def _latencies_seconds(metrics: dict) -> dict:
    """``median_tpot`` (s) and friends → ``tpot_ms_p50`` (ms)."""
    row = {}
    for key, value in metrics.items():
        m = re.fullmatch(r"(mean|median|p50|p90|p99)_(ttft|tpot|itl|e2el)", key)
        if not m:
            continue
        metric = _LAT_METRICS[m.group(2)]
        stat = _LAT_STATS[m.group(1)]
        if stat in _KEEP[metric]:
            row[f"{metric}_ms_{stat}"] = num(value, key, scale=1000.0)
    return row


def _bool(value) -> bool:
    return str(value).strip().lower() in {"true", "1", "yes"}


def _model(prefix: str | None, model_id: str | None) -> str:
    if prefix and prefix in MODEL_PREFIXES:
        return MODEL_PREFIXES[prefix]
    return model_from_id(model_id) or prefix or "unknown"


def _common(path: Path, rec: dict, *, hw, n_gpus: float, multinode: bool = False) -> dict:
    """Columns every InferenceX record kind fills the same way."""
    hardware, domain = hardware_name(hw)
    return {
        "tool": "inferencex",
        "run_id": path.stem,
        "model": _model(rec.get("infmax_model_prefix"), rec.get("model")),
        "hardware": hardware,
        "scale_up_domain": domain,
        "n_gpus": n_gpus,
        "scope": scope_for(n_gpus, domain, multinode),
        "precision": rec.get("precision"),
        "framework": rec.get("framework"),
        "phase": "serving",
        "scenario": "fixed-seq",
        "tool_version": rec.get("image"),
    }


# --- API rows (benchmarks.json: a list of rows with a `metrics` dict) -------------------------------
def _detect_api(path: Path, head: bytes) -> bool:
    text = head.lstrip()
    return (text.startswith(b"[") and b'"metrics"' in head and b'"decode_tp"' in head and b'"hardware"' in head
            and not _detect_api_history(path, head))


def _detect_api_history(path: Path, head: bytes) -> bool:
    """Rows of the API's dated history (``/api/v1/benchmarks/history``): the same row shape without ``image``.
    A format of their own, so reports that read the latest snapshot do not count its re-dated rows twice."""
    text = head.lstrip()
    return (text.startswith(b"[") and b'"metrics"' in head and b'"decode_tp"' in head and b'"date"' in head
            and b'"image"' not in head)


def _workers(value) -> float:
    """``decode_num_workers`` as a count (NaN when absent, zero, negative or not a number)."""
    try:
        n = float(value)
    except (TypeError, ValueError):
        return math.nan
    return n if math.isfinite(n) and n >= 1 else math.nan


def _api_row(rec: dict) -> dict:
    metrics = rec.get("metrics")
    if not isinstance(metrics, dict):
        raise Quarantine("row without a metrics object", field="metrics")
    hardware, domain = hardware_name(rec.get("hardware"))
    disagg = bool(rec.get("disagg"))
    multinode = bool(rec.get("is_multinode"))
    tp = num(rec.get("decode_tp"), "decode_tp")
    n_prefill = num(rec.get("num_prefill_gpu"), "num_prefill_gpu")
    n_decode = num(rec.get("num_decode_gpu"), "num_decode_gpu")
    out_per_gpu = num(metrics.get("output_tput_per_gpu"), "metrics.output_tput_per_gpu")
    tput_per_gpu = num(metrics.get("tput_per_gpu"), "metrics.tput_per_gpu")
    in_per_gpu = num(metrics.get("input_tput_per_gpu"), "metrics.input_tput_per_gpu")
    flags = []
    if disagg:
        n_gpus = n_prefill + n_decode
        output_tok_s = out_per_gpu * n_decode
        total_tok_s = tput_per_gpu * n_gpus
        # process_result.py: total/(P+D), output/D, input/P. Rows that break this used another accounting.
        if math.isfinite(in_per_gpu) and total_tok_s > 0:
            rebuilt = output_tok_s + in_per_gpu * n_prefill
            if abs(rebuilt - total_tok_s) > 0.05 * total_tok_s:
                flags.append("gpu-accounting-uncertain")
        n_prefill_gpus, n_decode_gpus = n_prefill, n_decode
    else:
        # num_prefill_gpu/num_decode_gpu can be tp*ep on single-node rows; the GPU count is tp.
        n_gpus = tp
        output_tok_s = out_per_gpu * n_gpus
        total_tok_s = tput_per_gpu * n_gpus
        n_prefill_gpus = n_decode_gpus = n_gpus
    scope = scope_for(n_gpus, domain, disagg or multinode)
    if "p99_intvty" in metrics:
        flags.append("percentile-inverted")
    row = {
        "tool": "inferencex",
        "run_id": str(rec.get("run_url") or "").rsplit("/runs/", 1)[-1] or None,
        "date": rec.get("date"),
        "model": _model(rec.get("model"), None),
        "hardware": hardware,
        "scale_up_domain": domain,
        "n_gpus": n_gpus,
        "scope": scope,
        "precision": rec.get("precision"),
        "framework": rec.get("framework"),
        "tp": tp,
        "ep": num(rec.get("decode_ep"), "decode_ep"),
        "dp": 1.0 if not _bool(rec.get("decode_dp_attention")) else tp,
        "disagg": disagg,
        "n_prefill_gpus": n_prefill_gpus,
        "n_decode_gpus": n_decode_gpus,
        # separate decode workers (each TP×EP its own collective group); 0 or absent on aggregated rows
        "n_workers": _workers(rec.get("decode_num_workers")) if disagg else math.nan,
        "spec_decode": rec.get("spec_method") or "none",
        "spec_method": normalize_spec_method(rec.get("spec_method") or "none"),
        "phase": "serving",
        "scenario": "fixed-seq",
        "concurrency": num(rec.get("conc"), "conc"),
        "isl": num(rec.get("isl"), "isl"),
        "osl": num(rec.get("osl"), "osl"),
        "output_tok_s": output_tok_s,
        "total_tok_s": total_tok_s,
        "tok_s_per_gpu": output_tok_s / n_gpus if n_gpus > 0 else math.nan,
        "gpu_denominator": "all",
        "power_w": num(metrics.get("avg_power_w"), "metrics.avg_power_w"),
        "joules_per_output_token": num(metrics.get("joules_per_output_token"), "metrics.joules_per_output_token"),
        "flags": ";".join(flags),
        "tool_version": rec.get("image"),
    }
    row.update(_latencies_seconds(metrics))
    return row


def _parse_api_history(path: Path, sink: Sink) -> None:
    """Dated re-runs: every row flagged ``dated-history`` (read by the history report, kept out of the frontiers,
    fits and claim checks, which describe the newest measurement of each configuration)."""
    _parse_api(path, sink, flag="dated-history")


def _parse_api(path: Path, sink: Sink, flag: str | None = None) -> None:
    rows = read_json(path)
    if not isinstance(rows, list):
        raise Quarantine("expected a JSON array of InferenceX rows")
    for i, rec in enumerate(rows):
        if not isinstance(rec, dict):
            sink.bad(f"row {i} is not an object", line=i + 1)
            continue
        try:
            row = _api_row(rec)
            if flag:
                row["flags"] = ";".join(f for f in (row["flags"], flag) if f)
            sink.point(row, line=i + 1)  # line = 1-based row index in the array
        except Exception as err:  # one bad row is that row's quarantine record, not the file's
            reason, field = in_words(err)
            sink.bad(f"row {i}: {reason}", line=i + 1, field=field)


# --- agg_*.json (one point, utils/process_result.py output) --------------------------------------
_NAME_FIELDS = re.compile(
    r"_tp(?P<tp>\d+)(?:-pp(?P<pp>\d+))?(?:-dcp\d+)?(?:-pcp\d+)?-ep(?P<ep>\d+)-dpa(?P<dpa>true|false)"
    r"_disagg-(?P<disagg>true|false)_spec-(?P<spec>[a-z0-9]+)_conc(?P<conc>\d+)_(?P<runner>.+)$"
)


def decode_result_filename(name: str) -> dict:
    """Fields InferenceX encodes in RESULT_FILENAME (tp, pp, ep, dp-attention, disagg, spec, conc, runner)."""
    m = _NAME_FIELDS.search(Path(name).stem)
    return m.groupdict() if m else {}


def _detect_agg(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"hw"' in head and b'"conc"' in head
            and b'"tput_per_gpu"' in head and b'"request_metrics"' not in head)


def _parse_agg(path: Path, sink: Sink) -> None:
    rec = read_json(path)
    if not isinstance(rec, dict):
        raise Quarantine("expected a JSON object")
    from_name = decode_result_filename(path.name)
    tp = num(first(rec, "tp", default=from_name.get("tp")), "tp")
    pp = num(first(rec, "pp", default=from_name.get("pp") or 1), "pp")
    multinode = _bool(rec.get("is_multinode"))
    disagg = _bool(first(rec, "disagg", default=from_name.get("disagg")))
    if multinode:
        n_prefill = num(rec.get("num_prefill_gpu"), "num_prefill_gpu")
        n_decode = num(rec.get("num_decode_gpu"), "num_decode_gpu")
        n_gpus = n_prefill + n_decode
        output_tok_s = num(rec.get("output_tput_per_gpu"), "output_tput_per_gpu") * n_decode
    else:
        n_gpus = tp * pp
        n_prefill = n_decode = n_gpus
        output_tok_s = num(rec.get("output_tput_per_gpu"), "output_tput_per_gpu") * n_gpus
    total_tok_s = num(rec.get("tput_per_gpu"), "tput_per_gpu") * n_gpus
    flags = ["percentile-inverted"] if "p99_intvty" in rec else []
    row = _common(path, rec, hw=rec.get("hw") or from_name.get("runner"), n_gpus=n_gpus, multinode=multinode)
    row.update({
        "tp": tp,
        "pp": pp,
        "ep": num(first(rec, "ep", default=from_name.get("ep")), "ep"),
        "dp": tp if _bool(first(rec, "dp_attention", default=from_name.get("dpa"))) else 1.0,
        "disagg": disagg,
        "n_prefill_gpus": n_prefill,
        "n_decode_gpus": n_decode,
        "spec_decode": first(rec, "spec_decoding", default=from_name.get("spec")) or "none",
        "spec_method": normalize_spec_method(first(rec, "spec_decoding", default=from_name.get("spec")) or "none"),
        "concurrency": num(first(rec, "conc", default=from_name.get("conc")), "conc"),
        "isl": num(rec.get("isl"), "isl"),
        "osl": num(rec.get("osl"), "osl"),
        "output_tok_s": output_tok_s,
        "total_tok_s": total_tok_s,
        "tok_s_per_gpu": output_tok_s / n_gpus,
        "gpu_denominator": "all",
        "flags": ";".join(flags),
    })
    row.update(_latencies_seconds(rec))
    sink.point(row, line=1)


# --- AgentX aggregate (agentic trace replay through AIPerf) --------------------------------------
def _detect_agentx(path: Path, head: bytes) -> bool:
    return head.lstrip().startswith(b"{") and b'"request_metrics"' in head and b'"scenario_type"' in head


def _parse_agentx(path: Path, sink: Sink) -> None:
    rec = read_json(path)
    if not isinstance(rec, dict) or not isinstance(rec.get("request_metrics"), dict):
        raise Quarantine("expected an object with request_metrics", field="request_metrics")
    metrics = rec["request_metrics"]
    tp = num(rec.get("tp"), "tp")
    n_gpus = tp * num(rec.get("pp", 1), "pp")
    throughput = metrics.get("throughput") or {}
    output_tok_s = num((throughput.get("output") or {}).get("tokens_per_second"),
                       "request_metrics.throughput.output.tokens_per_second")
    total_tok_s = num((throughput.get("total") or {}).get("tokens_per_second"),
                      "request_metrics.throughput.total.tokens_per_second")
    latency = metrics.get("latency") or {}
    row = _common(path, rec, hw=rec.get("hw"), n_gpus=n_gpus, multinode=_bool(rec.get("is_multinode")))
    row.update({
        "tp": tp,
        "ep": num(rec.get("ep"), "ep"),
        "disagg": _bool(rec.get("disagg")),
        "spec_decode": rec.get("spec_decoding") or "none",
        "spec_method": normalize_spec_method(rec.get("spec_decoding") or "none"),
        "scenario": rec.get("scenario_type") or "agentic",
        "concurrency": num(rec.get("conc"), "conc"),
        "num_requests": num(rec.get("num_requests_successful"), "num_requests_successful"),
        "failed_requests": num((rec.get("request_accounting") or {}).get("records_error_dropped"),
                               "request_accounting.records_error_dropped"),
        "output_tok_s": output_tok_s,
        "total_tok_s": total_tok_s,
        "tok_s_per_gpu": output_tok_s / n_gpus,
        "gpu_denominator": "all",
        "flags": "percentile-inverted",
    })
    for name, metric in _LAT_METRICS.items():
        stats = latency.get(name) or {}
        for stat in _KEEP[metric]:
            key = {"p50": "p50", "mean": "mean", "p90": "p90", "p99": "p99"}[stat]
            if key in stats:
                row[f"{metric}_ms_{stat}"] = num(stats[key], f"request_metrics.latency.{name}.{key}", scale=1000.0)
    dropped = (rec.get("request_accounting") or {}).get("records_warmup_dropped")
    if dropped:
        sink.count("warmup_dropped", int(dropped))
    sink.point(row, line=1)


# --- multi-turn aggregate (agentic trace replay, `users` instead of `conc`) ---------------------
def _detect_multiturn(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"users"' in head and b'"hw"' in head
            and b'"mean_ttlt"' in head and b'"conc"' not in head)


def _parse_multiturn(path: Path, sink: Sink) -> None:
    """``agg_<RESULT_FILENAME>.json`` of ``utils/process_agentic_result.py`` (InferenceX @7181314, multi-turn
    agentic lane): ``users`` simulated users, each sending its turns one after another, is the client concurrency;
    latencies are seconds over successful requests: ``ttft``, ``ttlt`` (time to last token, end to end) and ``itl``,
    one value per request, which InferenceX's own analysis plots as TPOT (``utils/agentic-benchmark/analysis/
    plot_pareto.py``: ``"tpot_ms": df["itl"] * 1000``), so it fills ``tpot_ms_*``. Throughputs are tokens over the
    span from the first request's start to the last one's end."""
    rec = read_json(path)
    if not isinstance(rec, dict):
        raise Quarantine("expected a JSON object")
    tp = num(rec.get("tp"), "tp")
    n_gpus = tp * num(rec.get("pp", 1), "pp")
    output_tok_s = num(rec.get("output_tput_tps"), "output_tput_tps")
    total = num(rec.get("num_requests_total"), "num_requests_total")
    ok = num(rec.get("num_requests_successful"), "num_requests_successful")
    row = _common(path, rec, hw=rec.get("hw"), n_gpus=n_gpus, multinode=_bool(rec.get("is_multinode")))
    row.update({
        "tp": tp,
        "ep": num(rec.get("ep"), "ep"),
        "dp": tp if _bool(rec.get("dp_attention")) else 1.0,
        "spec_decode": rec.get("spec_decoding") or "none",
        "spec_method": normalize_spec_method(rec.get("spec_decoding") or "none"),
        "scenario": rec.get("scenario_type") or "agentic",
        "concurrency": num(rec.get("users"), "users"),
        "num_requests": ok,
        "failed_requests": total - ok if total >= ok else math.nan,
        "isl": num(rec.get("mean_input_tokens"), "mean_input_tokens"),
        "osl": num(rec.get("mean_output_tokens_actual"), "mean_output_tokens_actual"),
        "output_tok_s": output_tok_s,
        "total_tok_s": num(rec.get("total_tput_tps"), "total_tput_tps"),
        "tok_s_per_gpu": output_tok_s / n_gpus if n_gpus > 0 else math.nan,
        "gpu_denominator": "all",
        "flags": "",
    })
    names = {"ttft": "ttft", "ttlt": "e2e", "itl": "tpot"}
    for key, value in rec.items():
        m = re.fullmatch(r"(mean|median|p90|p99)_(ttft|ttlt|itl)", key)
        if not m:
            continue
        metric, stat = names[m.group(2)], _LAT_STATS[m.group(1)]
        if stat in _KEEP[metric]:
            row[f"{metric}_ms_{stat}"] = num(value, key, scale=1000.0)
    tpot = row.get("tpot_ms_p50", math.nan)
    row["tok_s_per_user"] = 1000.0 / tpot if tpot > 0 else math.nan
    row["tok_s_per_user_def"] = "1000/tpot_ms_p50"
    if ok == 0:
        row["flags"] = "failed-run"
    sink.point(row, line=1)


# --- trimmed summaries (experimental token-position sweeps: latencies in seconds) ----------------
def _detect_trimmed(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"good_completed"' in head and b'"median_tpot"' in head
            and b'_ms"' not in head)


_TRIMMED_NAME = re.compile(r"_(?P<prec>fp8|fp4|bf16|int4)?_?(?P<fw>vllm|sglang|trt)?_(?P<par>[a-z]*?)(?P<tp>\d+)"
                           r"_isl(?P<isl>\d+)_osl(?P<osl>\d+)_conc(?P<conc>\d+)$")


def _parse_trimmed(path: Path, sink: Sink) -> None:
    rec = read_json(path)
    if not isinstance(rec, dict):
        raise Quarantine("expected a JSON object")
    completed = num(rec.get("completed"), "completed")
    name = _TRIMMED_NAME.search(path.stem)
    fields = name.groupdict() if name else {}
    n_prompts = num(rec.get("num_prompts"), "num_prompts")
    row = {
        "tool": "inferencex",
        "run_id": path.stem,
        "date": _date(rec.get("date")),
        "model": model_from_id(rec.get("model_id")),
        "precision": fields.get("prec"),
        "framework": fields.get("fw"),
        "tp": num(fields.get("tp"), "tp"),
        "phase": "serving",
        "scenario": "fixed-seq",
        "concurrency": num(rec.get("max_concurrency"), "max_concurrency"),
        "request_rate": math.nan,
        "num_requests": completed,
        "failed_requests": n_prompts - completed if math.isfinite(n_prompts) else math.nan,
        "isl": num(rec.get("total_input_tokens"), "total_input_tokens") / completed if completed else math.nan,
        "osl": num(rec.get("total_output_tokens"), "total_output_tokens") / completed if completed else math.nan,
        "output_tok_s": num(rec.get("output_throughput"), "output_throughput"),
        "total_tok_s": num(rec.get("output_throughput"), "output_throughput")
        + num(rec.get("input_throughput"), "input_throughput"),
        "request_s": num(rec.get("request_throughput"), "request_throughput"),
        "flags": "request-rate-inf" if str(rec.get("request_rate")).lower() in {"inf", "infinity"} else "",
    }
    if not completed:
        row["flags"] = ";".join(f for f in (row["flags"], "failed-run") if f)
        for key in ("output_tok_s", "total_tok_s", "request_s"):
            row[key] = math.nan
    else:
        row.update(_latencies_seconds(rec))
    sink.point(row, line=1)


# --- runner records (hw/cluster + metrics in ms + gpu power) ----------------------------------------
def _detect_runner(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"hw"' in head and b'"metrics"' in head
            and b'"median_tpot_ms"' in head and b'"gpu"' in head)


def _parse_runner(path: Path, sink: Sink) -> None:
    rec = read_json(path)
    metrics = rec.get("metrics") if isinstance(rec, dict) else None
    if not isinstance(metrics, dict):
        raise Quarantine("expected an object with metrics", field="metrics")
    gpu = rec.get("gpu") or {}
    tp = num(rec.get("tp"), "tp")
    n_gpus = num(gpu.get("n_gpus"), "gpu.n_gpus")
    n_gpus = n_gpus if math.isfinite(n_gpus) else tp
    output_tok_s = num(metrics.get("output_token_throughput"), "metrics.output_token_throughput")
    row = _common(path, rec, hw=rec.get("hw"), n_gpus=n_gpus)
    row.update({
        "date": rec.get("ts"),
        "model": model_from_id(rec.get("model")),
        "tp": tp,
        "ep": num(rec.get("ep"), "ep"),
        "concurrency": num(rec.get("conc"), "conc"),
        "isl": num(rec.get("isl"), "isl"),
        "osl": num(rec.get("osl"), "osl"),
        "num_requests": num(metrics.get("successful_requests"), "metrics.successful_requests"),
        "output_tok_s": output_tok_s,
        "total_tok_s": num(metrics.get("total_token_throughput"), "metrics.total_token_throughput"),
        "request_s": num(metrics.get("request_throughput"), "metrics.request_throughput"),
        "ttft_ms_p50": num(metrics.get("median_ttft_ms"), "metrics.median_ttft_ms"),
        "ttft_ms_p99": num(metrics.get("p99_ttft_ms"), "metrics.p99_ttft_ms"),
        "tpot_ms_p50": num(metrics.get("median_tpot_ms"), "metrics.median_tpot_ms"),
        "tpot_ms_p99": num(metrics.get("p99_tpot_ms"), "metrics.p99_tpot_ms"),
        "itl_ms_p50": num(metrics.get("median_itl_ms"), "metrics.median_itl_ms"),
        "e2e_ms_p50": num(metrics.get("median_e2el_ms"), "metrics.median_e2el_ms"),
        "e2e_ms_p99": num(metrics.get("p99_e2el_ms"), "metrics.p99_e2el_ms"),
        # power_w is the average power of one GPU everywhere in the points table; the runner records the sum.
        "power_w": num(gpu.get("total_avg_power_w"), "gpu.total_avg_power_w") / n_gpus
        if math.isfinite(n_gpus) and n_gpus > 0 else math.nan,
        "tool_version": rec.get("image"),
    })
    sink.point(row, line=1)


# --- shared ---------------------------------------------------------------------------------------
def _date(text) -> str | None:
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})", str(text or ""))
    return f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}" if m else (str(text) if text else None)


FORMATS = [
    Format("inferencex-api", "inferencex", _detect_api, _parse_api,
           "JSON array of rows with `hardware`, `decode_tp` and a `metrics` object (InferenceX API / app fixtures)",
           "data/raw/inferencex/benchmarks.json"),
    Format("inferencex-api-history", "inferencex", _detect_api_history, _parse_api_history,
           "JSON array of API rows with `date` and `metrics` but no `image` (InferenceX benchmark history)",
           "data/raw/inferencex-history/benchmarks-history.json"),
    Format("inferencex-agg", "inferencex", _detect_agg, _parse_agg,
           "JSON object with `hw`, `conc`, `tput_per_gpu` (utils/process_result.py output, agg_*.json)",
           "data/raw/inferencex-samples/agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_"
           "MI355-gbt350-odcdh5-wbb3.json"),
    Format("inferencex-agentx", "inferencex", _detect_agentx, _parse_agentx,
           "JSON object with `request_metrics` and `scenario_type` (AgentX aggregate)",
           "data/raw/inferencex-samples/agentx_aggregate/"),
    Format("inferencex-multiturn", "inferencex", _detect_multiturn, _parse_multiturn,
           "JSON object with `hw`, `users` (no `conc`) and second-valued `mean_ttlt` (multi-turn agentic aggregate)",
           "tests/data/formats/inferencex/multiturn_users/agg_dsr1_tp4_users16_offloadoff_fp4_vllm_tp4-ep4-dpafalse_"
           "disagg-false_spec-none_conc16_b200-dgxc-slurm_5.json"),
    Format("inferencex-trimmed", "inferencex", _detect_trimmed, _parse_trimmed,
           "JSON object with `good_completed` and second-valued `median_tpot` (experimental sweeps)",
           "data/raw/inferencex-repo/experimental/token_position_decode_slo/glm-5/results/"),
    Format("inferencex-runner", "inferencex", _detect_runner, _parse_runner,
           "JSON object with `hw`, `metrics.median_tpot_ms` and a `gpu` block (benchmark runner records)",
           "data/raw/inferencex-samples/together_runner/baselines/b200/sglang/dsr1-fp4/1k1k/tuned/conc16.json"),
]
