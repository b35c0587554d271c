"""vLLM benchmark results: ``vllm bench serve --save-result`` / ``benchmarks/benchmark_serving.py`` JSON (one object, or
newline-separated objects with ``--append-result``), ``vllm bench latency --output-json`` and ``vllm bench throughput
--output-json``.

Serving results are one point per object: summary statistics are already in ms (``*_ms`` keys, percentile keys parsed
generically), per-request arrays (seconds) go to the per-request table and fill the statistics the summary lacks
(upstream writes no e2e statistics by default). A run with ``completed: 0`` is kept and flagged ``failed-run`` with
its metrics NaN: the 0.0 the tool writes is ``np.mean([] or 0)``, not a latency. A statistic of exactly 0 ms is
likewise treated as missing (no streaming, or no request with more than one token); a negative one cannot be measured
and rejects the record. ``spec_decode_acceptance_length`` (newer ``bench serve``, with the ``spec_decode_num_drafts``
/ ``_draft_tokens`` / ``_accepted_tokens`` counters) is the run's measured acceptance length and its drafted tokens
per step. A trimmed copy (vLLM forks, dashboards) that keeps ``model_id`` and the ``*_ms`` latency summary but drops
``completed`` and the throughputs is read for its latencies, with a note. Forks' ``mean_/median_/pNN_latency_ms`` are
the end-to-end latency. A request the file counts completed with zero output tokens (vLLM 0.5–0.6: TTFT 0, no gaps) is
errored in the request table, counted in ``failed_requests`` and left out of ``num_requests``, ``isl``/``osl`` and the
TTFT and e2e statistics (flag ``zero-token-requests``); the file's rates, TPOT and ITL statistics stay as written.
``vllm bench sweep serve`` folders (``SERVE--…-BENCH--…/run=N.json`` and ``summary.json``) give one point per run,
each counted once. The serving helpers here are shared with the SGLang reader, whose summaries use the same key style.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, finite_or_nan, in_words, model_from_id, num
from analysis.ingest.jsonl_stream import json_error_reason, replace_lone_surrogates
from analysis.ingest.requests_table import ZERO_TOKENS, from_serving_arrays, percentiles_from_requests, pooled_itl_ms
from analysis.schema import ACCEPTANCE_SOURCES, COLUMNS, add_flag, normalize_spec_method

PRIORITY = 30
TOOL_PER_USER_DEF = "1000/tpot_ms_p50"

# stat_metric_ms: mean_ttft_ms, median_tpot_ms, p99.9_itl_ms, p90_e2el_ms, p99_e2e_latency_ms (SGLang)
# `latency` (mean_latency_ms …): the request latency of benchmark_serving forks, the same end-to-end time
STAT_KEY = re.compile(r"^(mean|median|std|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2el|e2e_latency|latency)_ms$")
_METRIC = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e", "e2e_latency": "e2e", "latency": "e2e"}
# Statistics the points table has a column for.
KEEP = {"ttft": ("mean", "p50", "p90", "p99"), "tpot": ("mean", "p50", "p90", "p99"),
        "itl": ("mean", "p50", "p99"), "e2e": ("mean", "p50", "p99")}
# `backend` values that name a serving engine (others, e.g. "openai", "openai-chat", name only the API).
ENGINE_BACKENDS = {
    "vllm": "vllm", "vllm-chat": "vllm", "sglang": "sglang", "sglang-oai": "sglang", "sglang-native": "sglang",
    "tgi": "tgi", "lmdeploy": "lmdeploy", "deepspeed-mii": "deepspeed-mii", "tensorrt-llm": "trtllm",
    "trt": "trtllm", "scalellm": "scalellm", "llama.cpp": "llama.cpp",
}
# --metadata KEY=VALUE pairs (always strings) that name points-table columns, plus common spellings.
METADATA_ALIASES = {"tensor_parallel_size": "tp", "tp_size": "tp", "pipeline_parallel_size": "pp",
                    "expert_parallel_size": "ep", "data_parallel_size": "dp", "gpu": "hardware",
                    "num_gpus": "n_gpus", "gpus": "n_gpus", "dtype": "precision", "quantization": "precision"}
_METADATA_SKIP = {"source_file", "source_line", "tool", "format", "run_id", "date", "flags", "model",
                  "tok_s_per_user", "tok_s_per_user_def", "concurrency", "request_rate", "num_requests"}
_SUMMARY_KEY = re.compile(rb'"(mean|median|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|latency)_ms"')


# --- reading one or many JSON objects --------------------------------------------------------------
def json_documents(path: Path, sink: Sink) -> Iterator[tuple[int, object]]:
    """(line, object) for every top-level JSON value in the file: one object, newline-separated objects
    (``--append-result``, JSONL) or concatenated pretty-printed objects. ``Infinity``/``NaN`` are accepted as
    Python's json does (SGLang writes a bare ``Infinity`` request rate). A broken record after a good one is
    reported and skipped to the next line that starts an object; a broken first record rejects the file.
    """
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    if "\\u" in text:
        text = replace_lone_surrogates(text)
    decoder = json.JSONDecoder()
    pos, n, found = 0, len(text), 0
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            return
        line = text.count("\n", 0, pos) + 1
        try:
            obj, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as err:
            if not isinstance(err, json.JSONDecodeError):  # 4300-digit integer, or nested too deeply
                err = json.JSONDecodeError(in_words(err)[0] if isinstance(err, RecursionError) else str(err),
                                           text, pos)
            if not found:  # "truncated JSON …" when the text ends mid-document, else "invalid JSON … at line:col"
                raise Quarantine(json_error_reason(err, text), line=err.lineno) from None
            sink.bad(f"{json_error_reason(err, text)} (record starting at line {line})", line=line)
            nxt = text.find("\n{", pos)
            if nxt < 0:
                return
            pos = nxt + 1
            continue
        found += 1
        yield line, obj
        pos = end


def iso_date(text) -> str | None:
    """``20260428-105748`` → ``2026-04-28T10:57:48``; anything else as written."""
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})", str(text or ""))
    return f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}" if m else (str(text) if text else None)


# --- shared serving helpers (vLLM and SGLang) ------------------------------------------------------
def latency_stats(rec: dict) -> dict:
    """Points-table latency columns from ``mean_/median_/pNN_<metric>_ms`` keys.

    0 ms is missing (NaN): the tools write it for a failed run or a metric without streaming. A negative latency
    cannot have been measured, so it raises Quarantine naming the key rather than vanishing into NaN.
    """
    row: dict[str, float] = {}
    for key, value in rec.items():
        m = STAT_KEY.match(key)
        if not m:
            continue
        if value.__class__ in (int, float) and value < 0:  # also in statistics the table does not keep
            raise Quarantine(f"negative latency {value:g} ms", field=key)
        if m.group(1) == "std":
            continue
        metric = _METRIC[m.group(3)]
        stat = "mean" if m.group(1) == "mean" else "p50" if m.group(1) == "median" else f"p{m.group(2)}"
        if stat not in KEEP[metric]:
            continue
        if stat == "p50" and m.group(1) != "median" and f"{metric}_ms_p50" in row:
            continue  # an explicit median wins over a p50 percentile (they are the same number)
        x = num(value, key)
        if x < 0:  # a number written as text ("-1.5"); plain numbers were checked above
            raise Quarantine(f"negative latency {x:g} ms", field=key)
        row[f"{metric}_ms_{stat}"] = x if x > 0 else math.nan
    return row


def request_rate(value, row: dict) -> None:
    """``request_rate`` column and flag: ``"inf"`` (vLLM), ``Infinity`` (SGLang) → NaN + ``request-rate-inf``."""
    if isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}:
        value = math.inf
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isinf(value):
        row["request_rate"] = math.nan
        row["flags"] = add_flag(row.get("flags"), "request-rate-inf")
    elif isinstance(value, str) and not _is_number(value):
        row["request_rate"] = math.nan  # "trace" (SGLang trace replay): arrival times from a file
        row["scenario"] = value
    else:
        row["request_rate"] = num(value, "request_rate")


def details_to_requests(run_id: str, rec: dict, row: dict, sink: Sink) -> None:
    """Per-request table from detail arrays (seconds) and the statistics the summary lacks, computed from it."""
    if not any(isinstance(rec.get(k), list) for k in ("ttfts", "latencies", "itls")):
        return
    try:
        table = from_serving_arrays(
            run_id,
            input_lens=rec.get("input_lens"), output_lens=rec.get("output_lens"),
            ttfts_s=rec.get("ttfts"), itls_s=rec.get("itls"), latencies_s=rec.get("latencies"),
            errors=rec.get("errors"),
        )
    except (ValueError, TypeError) as err:
        sink.bad(f"per-request arrays unusable: {err}", field="ttfts")
        return
    table = sink.requests(table)  # checked: impossible requests are marked errored and left out below
    sink.count("requests", table.num_rows)
    errors = table.column("error").to_pylist()
    gaps = pooled_itl_ms(rec["itls"], errors) if isinstance(rec.get("itls"), list) else None
    filled = percentiles_from_requests(table, itl_gaps_ms=gaps)
    zero = errors.count(ZERO_TOKENS)
    for key, value in filled.items():
        current = row.get(key, math.nan)
        # the summary's own statistic wins, except TTFT and e2e when zero-token requests sit in it as 0 ms
        if current != current or (zero and key.startswith(("ttft_ms", "e2e_ms"))):
            row[key] = value
    if zero:
        _count_zero_token_requests(rec, row, table, zero, sink)


def _count_zero_token_requests(rec: dict, row: dict, table, zero: int, sink: Sink) -> None:
    """A request the file counts completed with no token is a failed request of the point: num_requests, isl and osl
    describe the requests that produced tokens (the file's token totals less those requests' lengths), and the file's
    rates stay as written (the request rate counts them; they add no output token)."""
    row["flags"] = add_flag(row.get("flags"), "zero-token-requests")
    counted = row.get("num_requests", math.nan) - zero
    zero_rows = [e == ZERO_TOKENS for e in table.column("error").to_pylist()]
    input_left_out = sum(n for n, z in zip(table.column("input_tokens").to_pylist(), zero_rows) if z and n == n)
    row["num_requests"] = counted
    row["failed_requests"] = row.get("failed_requests", math.nan) + zero
    if counted > 0:
        row["isl"] = (num(rec.get("total_input_tokens"), "total_input_tokens") - input_left_out) / counted
        row["osl"] = num(rec.get("total_output_tokens"), "total_output_tokens") / counted
    own = rec.get("mean_ttft_ms")
    sink.note(f"{zero} of {len(zero_rows)} requests counted completed returned no token (TTFT 0, no gaps): kept in "
              "the request table as errored and counted in failed_requests; num_requests, isl, osl and the TTFT and "
              "e2e statistics describe the other requests"
              + (f" (the file's own mean TTFT {own:.4g} ms includes the 0 ms)" if isinstance(own, (int, float))
                 else ""))


def per_user(row: dict) -> None:
    """tok/s/user in the default definition, 1000/tpot_ms_p50."""
    tpot = row.get("tpot_ms_p50", math.nan)
    row["tok_s_per_user"] = 1000.0 / tpot if tpot == tpot and tpot > 0 else math.nan
    row["tok_s_per_user_def"] = TOOL_PER_USER_DEF


def measured_acceptance(acceptance: float, *, drafted=None, drafts=None) -> dict:
    """Speculative-decoding columns of a run that counted its own acceptance: the acceptance length (tokens committed
    per verify step, bonus included) as measured, and tokens drafted per step = draft tokens ÷ drafts when both
    counts are there (vLLM: ``spec_decode_draft_tokens`` / ``spec_decode_num_drafts``, "Draft tokens" / "Drafts")."""
    out = {"acceptance_length": acceptance, "acceptance_source": "measured"}
    drafted, drafts = finite_or_nan(drafted), finite_or_nan(drafts)
    per_step = drafted / drafts if drafts > 0 else math.nan
    if per_step >= 1 and abs(per_step - round(per_step)) < 0.01:  # a varying draft length gives no one number
        out["draft_tokens"] = float(round(per_step))
    return out


def fail_run(row: dict) -> None:
    """A run that completed no request: keep the point, flag it, blank every measured value."""
    row["flags"] = add_flag(row.get("flags"), "failed-run")
    row.pop("acceptance_source", None)  # nothing was measured
    for key in list(row):
        if key.startswith(("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")) or key in (
                "output_tok_s", "total_tok_s", "request_s", "tok_s_per_user", "isl", "osl", "tokens_per_step",
                "acceptance_length"):
            row[key] = math.nan


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --- bench serve / benchmark_serving.py ------------------------------------------------------------
def _detect_serve(path: Path, head: bytes) -> bool:
    text = head.lstrip()
    if not text.startswith(b"{") or b'"e2e_latency_ms"' in head or b'"metrics"' in head:
        return False
    if b'"completed"' not in head or b'"output_throughput"' not in head:
        # trimmed copies (vLLM forks, dashboards) keep the ms latency summary and the model id only
        return (b'"completed"' not in head and b"e2e_latency" not in head and b'"model_id"' in head
                and len(_SUMMARY_KEY.findall(head)) >= 3)
    # Summary keys in ms, or per-request arrays plus a model id: with --save-detailed the summary comes after the
    # arrays (maybe past the head), and with --skip-tokenizer-init there is no ttft/tpot/itl summary at all.
    arrays = b'"ttfts"' in head or b'"latencies"' in head
    return bool(_SUMMARY_KEY.search(head)) or (arrays and b'"model_id"' in head)


def _metadata(rec: dict, row: dict, sink: Sink, line: int) -> None:
    known = {"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "best_of",
             "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed"}
    for key, value in rec.items():
        if key in known or not isinstance(value, str):
            continue
        col = METADATA_ALIASES.get(key, key)
        if col not in COLUMNS or col in _METADATA_SKIP:
            continue
        if col == "precision":
            from analysis.schema import normalize_precision
            if normalize_precision(value) == "unknown":
                sink.bad(f"metadata precision {value!r} not recognised; left unknown", line=line, field=key)
                continue
        if col == "spec_method" and normalize_spec_method(value) == "unknown" and value.strip().lower() != "unknown":
            sink.bad(f"metadata spec_method {value!r} not recognised; left unknown", line=line, field=key)
            continue
        if col == "acceptance_source" and value.strip().lower() not in ACCEPTANCE_SOURCES:
            sink.bad(f"metadata acceptance_source {value!r} is not one of {', '.join(ACCEPTANCE_SOURCES)}; ignored",
                     line=line, field=key)
            continue
        row[col] = value


def check_duration(rec: dict) -> None:
    """A benchmark cannot run for negative time: such a summary gives no point (Quarantine naming ``duration``)."""
    duration = num(rec.get("duration"), "duration")
    if duration < 0:
        raise Quarantine(f"negative benchmark duration {duration:g} s", field="duration")
    completed = finite_or_nan(rec.get("completed"))
    if duration == 0 and completed > 0:  # its rates would be n / 0
        raise Quarantine(f"benchmark duration 0 s with {completed:g} completed requests: no rate can be right",
                         field="duration")


def serving_point(rec: dict, *, run_id: str, sink: Sink, line: int) -> dict:
    check_duration(rec)
    completed = num(rec.get("completed"), "completed")
    trimmed = "completed" not in rec and any(STAT_KEY.match(k) for k in rec)
    if math.isnan(completed) and not trimmed:
        raise Quarantine("no 'completed' count", field="completed")
    failed = num(rec.get("failed"), "failed")
    n_prompts = num(rec.get("num_prompts"), "num_prompts")
    if math.isnan(failed) and not math.isnan(n_prompts):
        failed = max(n_prompts - completed, 0.0)  # older key set: lists hold every prompt, failures included
    if n_prompts >= 0 and failed + (completed if completed >= 0 else 0.0) > n_prompts:
        raise Quarantine(f"{failed:g} failed and {completed:g} completed of {n_prompts:g} prompts sent: the counts "
                         "cannot all be right", field="failed")
    backend = str(rec.get("backend") or rec.get("endpoint_type") or "")
    row = {
        "run_id": run_id,
        "tool_version": "bench-serve" if ("failed" in rec or "endpoint_type" in rec) else "benchmark_serving",
        "date": iso_date(rec.get("date")),
        "model": model_from_id(rec.get("model_id")),
        "framework": ENGINE_BACKENDS.get(backend.lower()),
        "phase": "serving",
        "concurrency": num(rec.get("max_concurrency"), "max_concurrency"),
        "num_requests": completed,
        "failed_requests": failed,
        "isl": num(rec.get("total_input_tokens"), "total_input_tokens") / completed if completed else math.nan,
        "osl": num(rec.get("total_output_tokens"), "total_output_tokens") / completed if completed else math.nan,
        "output_tok_s": num(rec.get("output_throughput"), "output_throughput"),
        "total_tok_s": num(rec.get("total_token_throughput"), "total_token_throughput"),
        "request_s": num(rec.get("request_throughput"), "request_throughput"),
        "flags": "",
    }
    request_rate(rec.get("request_rate"), row)
    if rec.get("label"):
        row["scenario"] = str(rec["label"])
    _metadata(rec, row, sink, line)
    row.update(latency_stats(rec))
    acceptance = finite_or_nan(rec.get("spec_decode_acceptance_length"))
    if acceptance > 0:
        row["tokens_per_step"] = acceptance
        for key, value in measured_acceptance(acceptance, drafted=rec.get("spec_decode_draft_tokens"),
                                              drafts=rec.get("spec_decode_num_drafts")).items():
            row.setdefault(key, value)  # `--metadata acceptance_source=forced` (the run's own word) wins
    if completed > 0:
        details_to_requests(run_id, rec, row, sink)
    if completed == 0:
        fail_run(row)
    if trimmed:
        sink.note("trimmed summary: no 'completed' count or throughputs, latencies read as written")
    per_user(row)
    return row


def _parse_serve(path: Path, sink: Sink) -> None:
    docs = list(json_documents(path, sink))
    multi = len(docs) > 1
    sweep = sweep_run(path)
    for i, (line, rec) in enumerate(docs):
        if not isinstance(rec, dict):
            sink.bad("expected a JSON object", line=line)
            continue
        if "completed" not in rec and not any(STAT_KEY.match(k) for k in rec):
            sink.bad("record is not a serving result (no 'completed', no latency summary)", line=line)
            continue
        run_id = f"{path.stem}#{i + 1}" if multi else path.stem
        if sweep and not multi:  # run=N.json of a `vllm bench sweep` folder: the folder names the combination
            run_id = f"{sweep[0]}#{path.stem}"
        try:
            row = serving_point(rec, run_id=run_id, sink=sink, line=line)
            if sweep and sweep[1]:
                row.setdefault("scenario", sweep[1])
            sink.point(row, line=line)
        except Exception as err:  # one bad record is that record's quarantine row, not the file's
            reason, field = in_words(err)
            if not multi:
                raise Quarantine(reason, line=line, field=field) from None
            sink.bad(reason, line=line, field=field)


# --- bench sweep serve: <combination folder>/summary.json and run=N.json ---------------------------------
# vllm/benchmarks/sweep/serve.py writes, per combination of server and bench parameters, a folder
# ``SERVE--<k>=<v>[-<k>=<v>…]-BENCH--<k>=<v>…`` holding ``run=N.json`` (one `bench serve` result each, with
# ``run_number`` and the combination's parameters added) and ``summary.json`` (the list of those results).
_SWEEP_FOLDER = re.compile(r"^SERVE-(?P<serve>.*?)-BENCH-(?P<bench>.*)$")
_SWEEP_PARAM = re.compile(r"-?-?([A-Za-z_][A-Za-z0-9_.]*)=(.*?)(?=-{1,2}[A-Za-z_][A-Za-z0-9_.]*=|$)")


def sweep_params(text: str) -> list[tuple[str, str]]:
    """``--max_num_seqs=4-num_prompts=8`` → ``[("max_num_seqs", "4"), ("num_prompts", "8")]``."""
    return [(m[1], m[2]) for m in _SWEEP_PARAM.finditer(text)]


def sweep_run(path: Path) -> tuple[str, str] | None:
    """(folder name, server parameters as ``k=v, …``) when ``path`` sits in a `bench sweep serve` combination
    folder; None otherwise. The server parameters are the point's scenario: the bench parameters (concurrency,
    prompts) are the record's own columns already."""
    m = _SWEEP_FOLDER.match(path.parent.name)
    if not m:
        return None
    return path.parent.name, ", ".join(f"{k}={v}" for k, v in sweep_params(m["serve"]))


def _detect_sweep_summary(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"[") and b'"run_number"' in head and b'"completed"' in head
            and b'"output_throughput"' in head)


def _same_run(item: dict, sibling: Path) -> bool:
    """Whether ``sibling`` (a run=N.json beside the summary) holds the same record as the summary's item."""
    try:
        return json.loads(sibling.read_text(encoding="utf-8")) == item
    except (OSError, ValueError):
        return False


def _parse_sweep_summary(path: Path, sink: Sink) -> None:
    docs = list(json_documents(path, sink))
    if len(docs) != 1 or not isinstance(docs[0][1], list):
        raise Quarantine("expected one JSON array of `bench serve` results")
    line, items = docs[0]
    sweep = sweep_run(path)
    folder = sweep[0] if sweep else path.parent.name
    read_beside = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            sink.bad(f"item {i} is not a JSON object", line=line)
            continue
        run = item.get("run_number", i)
        sibling = path.with_name(f"run={run}.json")
        if sibling.exists() and _same_run(item, sibling):
            read_beside.append(sibling.name)  # the same record is that file's point; reading it twice counts it twice
            continue
        try:
            row = serving_point(item, run_id=f"{folder}#run={run}", sink=sink, line=line)
        except Exception as err:  # one bad item is that item's quarantine row
            reason, field = in_words(err)
            sink.bad(f"item {i} (run_number {run}): {reason}", line=line, field=field)
            continue
        if sweep and sweep[1]:
            row.setdefault("scenario", sweep[1])
        sink.point(row, line=line)
    if read_beside:
        sink.note(f"{len(read_beside)} of {len(items)} runs are read from the files beside this summary "
                  f"({', '.join(read_beside)}), which hold the same records")


# --- bench latency ----------------------------------------------------------------------------------
def _detect_latency(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"avg_latency"' in head and b'"percentiles"' in head
            and b'"latencies"' in head)


def _parse_latency(path: Path, sink: Sink) -> None:
    for line, rec in json_documents(path, sink):
        if not isinstance(rec, dict) or "avg_latency" not in rec:
            sink.bad("expected a `vllm bench latency` object with avg_latency", line=line)
            continue
        pct = rec.get("percentiles") or {}
        if not isinstance(pct, dict):
            raise Quarantine("percentiles must be an object", line=line, field="percentiles")
        # Percentile keys are strings ("50", "99") after json.dump; values are seconds for one whole batch.
        by_p = {float(k): v for k, v in pct.items() if _is_number(str(k))}
        lats = rec.get("latencies") if isinstance(rec.get("latencies"), list) else []
        row = {
            "run_id": path.stem,
            "tool_version": "bench-latency",
            "phase": "offline",
            "scenario": "latency",
            "framework": "vllm",
            "num_requests": float(len(lats)) if lats else math.nan,  # iterations, each one batch
            "e2e_ms_mean": num(rec.get("avg_latency"), "avg_latency", scale=1000.0),
            "e2e_ms_p50": num(by_p.get(50.0), "percentiles.50", scale=1000.0),
            "e2e_ms_p99": num(by_p.get(99.0), "percentiles.99", scale=1000.0),
            # Batch size and lengths are not in the file (manifest); per-user speed = osl / batch latency.
            "tok_s_per_user_def": "osl/e2e",
            "flags": "per-user-includes-ttft",
        }
        sink.point(row, line=line)


# --- bench throughput -------------------------------------------------------------------------------
def _detect_throughput(path: Path, head: bytes) -> bool:
    return (head.lstrip().startswith(b"{") and b'"elapsed_time"' in head and b'"tokens_per_second"' in head
            and b'"requests_per_second"' in head)


def _parse_throughput(path: Path, sink: Sink) -> None:
    for line, rec in json_documents(path, sink):
        if not isinstance(rec, dict) or "tokens_per_second" not in rec:
            sink.bad("expected a `vllm bench throughput` object with tokens_per_second", line=line)
            continue
        row = {
            "run_id": path.stem,
            "tool_version": "bench-throughput",
            "phase": "offline",
            "scenario": "throughput",
            "framework": "vllm",
            "num_requests": num(rec.get("num_requests"), "num_requests"),
            # tokens_per_second counts input + output tokens; output tok/s is only printed, not saved.
            "total_tok_s": num(rec.get("tokens_per_second"), "tokens_per_second"),
            "request_s": num(rec.get("requests_per_second"), "requests_per_second"),
            "tok_s_per_user_def": "unknown",
        }
        sink.point(row, line=line)


FORMATS = [
    Format("vllm-serve", "vllm", _detect_serve, _parse_serve,
           "JSON object(s) with `completed`, `output_throughput` and `mean_/median_/pNN_<ttft|tpot|itl|e2el>_ms` "
           "keys (or `ttfts` detail arrays); `--append-result` files hold one object per line",
           "data/raw/inferencex-samples/local-results/minimax-eagle3-conc64/minimaxm2.5_1k1k_conc64.json",
           per_request=True),
    Format("vllm-sweep-summary", "vllm", _detect_sweep_summary, _parse_sweep_summary,
           "JSON array of `bench serve` results with `run_number` (`vllm bench sweep serve` summary.json); runs "
           "whose run=N.json sits beside it are read from that file",
           "tests/data/formats/vllm/sweep_v0.25.1/SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8/"
           "summary.json"),
    Format("vllm-latency", "vllm", _detect_latency, _parse_latency,
           "JSON object with `avg_latency`, `latencies` and string-keyed `percentiles` (seconds)",
           "tests/data/formats/vllm/bench_latency.json"),
    Format("vllm-throughput", "vllm", _detect_throughput, _parse_throughput,
           "JSON object with `elapsed_time`, `requests_per_second`, `tokens_per_second` (input+output)",
           "tests/data/formats/vllm/bench_throughput.json"),
]
