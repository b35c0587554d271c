"""SGLang benchmark JSONL: ``bench_serving`` (one run per line, appended), ``bench_one_batch`` (offline, one
line per batch-size case) and ``bench_one_batch_server`` (one line per case against a running server).

``bench_serving`` lines hold the same ``*_ms`` summary style as vLLM (``median_tpot_ms``, ``p99_e2e_latency_ms``)
and, with ``--output-details``, per-request arrays in seconds. Its default request rate is ``float("inf")``,
written by ``json.dumps`` as a bare ``Infinity`` — not strict JSON, but Python's json reads it — and flagged
``request-rate-inf``. ``max_concurrency`` is the configured cap; when it is null the achieved ``concurrency``
(Σ e2e / duration) is used instead and the point is flagged ``concurrency-achieved``. The one-batch tools write
seconds; ``bench_one_batch``'s ``median_decode_latency`` is one decode step of the whole batch (a decode point
with ``step_ms``), and ``bench_one_batch_server`` uses ``-1`` for values it could not get (read as NaN).

Speculative decoding: ``bench_serving``'s ``accept_length`` (else ``server_info.internal_states[].
avg_spec_accept_length``) and ``bench_one_batch_server``'s ``acc_length`` are the server's measured acceptance length
(tokens per verify step, bonus included); ``acc_length: -1`` means the server reported none, i.e. no speculative
decoding ran (``spec_method: none``). ``server_info`` also names the algorithm and the drafted tokens.
"""

from __future__ import annotations

import math
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, finite_or_nan, in_words, model_from_id, num
from analysis.ingest.vllm import (
    check_duration,
    details_to_requests,
    fail_run,
    json_documents,
    latency_stats,
    measured_acceptance,
    per_user,
    request_rate,
)
from analysis.schema import add_flag, normalize_spec_method

PRIORITY = 30


def _first_line(head: bytes) -> bytes:
    return head.lstrip().split(b"\n", 1)[0]


# --- speculative decoding: the server's own record (GET /server_info, saved in bench_serving's line) ---------
def server_accept_length(server: dict) -> float:
    """``internal_states[*].avg_spec_accept_length`` (tokens per verify step, bonus included), NaN when absent."""
    states = server.get("internal_states")
    if not isinstance(states, list):
        return math.nan
    values = [finite_or_nan(s.get("avg_spec_accept_length")) for s in states if isinstance(s, dict)]
    values = [v for v in values if v > 0]
    return values[-1] if values else math.nan


def server_spec(server: dict) -> dict:
    """Method and drafted tokens from the server arguments ``server_info`` repeats (``speculative_algorithm``,
    ``speculative_num_draft_tokens``, which counts the verified root too, ``speculative_num_steps``); forced
    acceptance (``SGLANG_SIMULATE_ACC_LEN``) is an environment variable the file does not hold (manifest
    ``launch_settings``)."""
    algorithm = server.get("speculative_algorithm")
    if algorithm is None:
        return {}
    if str(algorithm).strip().lower() in ("", "none", "null"):
        return {"spec_method": "none"}
    has_draft = bool(server.get("speculative_draft_model_path"))
    word = str(algorithm).strip().lower()
    out: dict = {"spec_method": "mtp" if word in ("eagle", "nextn") and not has_draft else normalize_spec_method(word)}
    drafts = finite_or_nan(server.get("speculative_num_draft_tokens"))
    steps = finite_or_nan(server.get("speculative_num_steps"))
    if drafts >= 2:
        out["draft_tokens"] = drafts - 1
    elif steps >= 1:
        out["draft_tokens"] = steps
    return out


# --- bench_serving ----------------------------------------------------------------------------------
def _detect_serving(path: Path, head: bytes) -> bool:
    line = _first_line(head)
    return (line.startswith(b"{") and b'"output_throughput"' in line and b'"completed"' in line
            and (b'"median_e2e_latency_ms"' in line or b'"mean_e2e_latency_ms"' in line))


def _serving_point(rec: dict, *, run_id: str, sink: Sink) -> dict:
    check_duration(rec)
    completed = num(rec.get("completed"), "completed")
    if math.isnan(completed):
        raise Quarantine("no 'completed' count", field="completed")
    # metrics.py's save_results dumps the dataclass: total_input / total_output instead of total_*_tokens.
    total_in = num(rec.get("total_input_tokens", rec.get("total_input")), "total_input_tokens")
    total_out = num(rec.get("total_output_tokens", rec.get("total_output")), "total_output_tokens")
    server = rec.get("server_info") if isinstance(rec.get("server_info"), dict) else {}
    row = {
        "run_id": str(rec.get("tag") or run_id),
        "tool_version": "bench_serving",
        "model": model_from_id(server.get("model_path") or server.get("tokenizer_path")),
        "framework": "sglang" if str(rec.get("backend", "")).startswith("sglang") else None,
        "phase": "serving",
        "concurrency": num(rec.get("max_concurrency"), "max_concurrency"),
        "num_requests": completed,
        "isl": total_in / completed if completed else math.nan,
        "osl": total_out / completed if completed else math.nan,
        "output_tok_s": num(rec.get("output_throughput"), "output_throughput"),
        "total_tok_s": num(rec.get("total_throughput"), "total_throughput"),
        "request_s": num(rec.get("request_throughput"), "request_throughput"),
        "flags": "",
    }
    if math.isnan(row["total_tok_s"]):
        inp = num(rec.get("input_throughput"), "input_throughput")
        row["total_tok_s"] = inp + row["output_tok_s"]
    if math.isnan(row["concurrency"]):
        achieved = num(rec.get("concurrency"), "concurrency")
        if achieved > 0:
            row["concurrency"] = achieved
            row["flags"] = add_flag(row["flags"], "concurrency-achieved")
    request_rate(rec.get("request_rate"), row)
    if rec.get("dataset_name"):
        row.setdefault("scenario", str(rec["dataset_name"]))
    row.update(latency_stats(rec))
    accept = finite_or_nan(rec.get("accept_length"))
    if not accept > 0:
        accept = server_accept_length(server)
    if accept > 0:
        row["tokens_per_step"] = accept
        row.update(measured_acceptance(accept))
    row.update(server_spec(server))
    errors = rec.get("errors")
    if isinstance(errors, list):
        row["failed_requests"] = float(sum(1 for e in errors if e))
    if completed > 0:
        details_to_requests(row["run_id"], rec, row, sink)
    else:
        fail_run(row)
    per_user(row)
    return row


def _parse_serving(path: Path, sink: Sink) -> None:
    for i, (line, rec) in enumerate(json_documents(path, sink)):
        if not isinstance(rec, dict) or "completed" not in rec:
            sink.bad("line is not a bench_serving result (no 'completed')", line=line)
            continue
        try:
            sink.point(_serving_point(rec, run_id=f"{path.stem}#{i + 1}", sink=sink), line=line)
        except Exception as err:  # one bad record is that record's quarantine row, not the file's
            reason, field = in_words(err)
            sink.bad(reason, line=line, field=field)


# --- bench_one_batch --------------------------------------------------------------------------------
def _detect_one_batch(path: Path, head: bytes) -> bool:
    line = _first_line(head)
    return (line.startswith(b"{") and b'"run_name"' in line and b'"batch_size"' in line
            and b'"prefill_latency"' in line)


def _parse_one_batch(path: Path, sink: Sink) -> None:
    for line, rec in json_documents(path, sink):
        if not isinstance(rec, dict) or "prefill_latency" not in rec:
            sink.bad("line is not a bench_one_batch result (no 'prefill_latency')", line=line)
            continue
        try:
            batch = num(rec.get("batch_size"), "batch_size")
            input_len = num(rec.get("input_len"), "input_len")
            output_len = num(rec.get("output_len"), "output_len")
            base = {
                "run_id": f"{rec.get('run_name') or path.stem}-bs{batch:g}-in{input_len:g}-out{output_len:g}",
                "tool_version": "bench_one_batch",
                "framework": "sglang",
                "scenario": str(rec.get("run_name") or "") or None,
                "batch_size": batch,
                "concurrency": batch,
                "isl": input_len,
                "osl": output_len,
            }
            prefill = {**base, "phase": "prefill", "context_len": input_len,
                       "step_ms": num(rec.get("prefill_latency"), "prefill_latency", scale=1000.0),
                       "total_tok_s": num(rec.get("prefill_throughput"), "prefill_throughput"),
                       "tok_s_per_user_def": "unknown"}
            sink.point(prefill, line=line)
            if rec.get("median_decode_latency") is None:
                continue  # output_len 1: no decode step was timed
            step = num(rec.get("median_decode_latency"), "median_decode_latency", scale=1000.0)
            decode = {**base, "phase": "decode",
                      # decode steps run from input_len to input_len + output_len: the median sits mid-way
                      "context_len": input_len + output_len / 2,
                      "step_ms": step,
                      "output_tok_s": num(rec.get("median_decode_throughput"), "median_decode_throughput"),
                      "tok_s_per_user": 1000.0 / step if step > 0 else math.nan,
                      "tok_s_per_user_def": "1000/step_ms"}
            sink.point(decode, line=line)
        except Exception as err:  # one bad record is that record's quarantine row, not the file's
            reason, field = in_words(err)
            sink.bad(reason, line=line, field=field)


# --- bench_one_batch_server ------------------------------------------------------------------------
def _detect_one_batch_server(path: Path, head: bytes) -> bool:
    line = _first_line(head)
    return (line.startswith(b"{") and b'"run_name"' in line and b'"batch_size"' in line
            and b'"overall_throughput"' in line and b'"prefill_latency"' not in line
            and (b'"last_ttft"' in line or b'"latency"' in line))


def _sentinel(value, field: str, *, scale: float = 1.0) -> float:
    """-1 (and other negatives) mean 'not available' in bench_one_batch_server."""
    x = num(value, field, scale=scale)
    return x if x >= 0 else math.nan


def one_batch_server_rates(rec: dict) -> dict:
    """Output tok/s, total tok/s and per-user speed of one ``bench_one_batch_server`` line, with how they were had.

    The file's ``output_throughput`` is batch × output_len ÷ (latency − ``last_ttft``), ``last_ttft`` being the
    time until the *last* request of the batch got its first token. That is a decode rate only when the whole batch
    was prefilled at once. When the server ran the batch in waves (batch above its running cap, or a KV pool too
    small: prefill, decode and prefill interleaved, sgl-project/sglang#9967), ``last_ttft`` lands near the end, the
    window shrinks to the last wave's decode, and the rate is inflated without bound; its ITL (1000 × batch ÷
    output_throughput) with it. The sign it left is an output rate above the file's own total rate (batch ×
    (input_len + output_len) ÷ latency), impossible over one window. There the rates are restated from end-to-end
    quantities: output = batch × output_len ÷ latency, per user = output_len ÷ latency (TTFT included), flagged
    ``derived-from-e2e`` and ``output-above-total`` (the run's timing is not believed)."""
    batch = num(rec.get("batch_size"), "batch_size")
    input_len = num(rec.get("input_len"), "input_len")
    output_len = num(rec.get("output_len"), "output_len")
    latency = _sentinel(rec.get("latency"), "latency")
    last_ttft = _sentinel(rec.get("last_ttft"), "last_ttft")
    file_out = _sentinel(rec.get("output_throughput"), "output_throughput")
    total = _sentinel(rec.get("overall_throughput"), "overall_throughput")
    if math.isnan(total) and latency > 0:
        total = batch * (input_len + output_len) / latency
    e2e_out = batch * output_len / latency if latency > 0 else math.nan
    impossible = file_out > 0 and total > 0 and file_out > total * (1 + 1e-3) + 0.01
    if (file_out > 0 and batch > 0 and not impossible
            and not (latency > 0 and last_ttft >= latency)):  # the file's own decode-window figure
        tpot = 1000.0 * batch / file_out  # SGLang's own report: ITL = 1000·batch/output_throughput
        return {"output_tok_s": file_out, "total_tok_s": total, "tpot_ms_mean": tpot,
                "tok_s_per_user": 1000.0 / tpot, "tok_s_per_user_def": "1000/tpot_ms_mean", "flags": ""}
    flags = add_flag("", "derived-from-e2e") if e2e_out > 0 else ""
    if impossible:
        flags = add_flag(flags, "output-above-total")
    return {"output_tok_s": e2e_out, "total_tok_s": total, "tpot_ms_mean": math.nan,
            "tok_s_per_user": output_len / latency if latency > 0 else math.nan,
            "tok_s_per_user_def": "output_len/latency", "flags": flags}


def _parse_one_batch_server(path: Path, sink: Sink) -> None:
    for line, rec in json_documents(path, sink):
        if not isinstance(rec, dict) or "batch_size" not in rec:
            sink.bad("line is not a bench_one_batch_server result (no 'batch_size')", line=line)
            continue
        try:
            batch = num(rec.get("batch_size"), "batch_size")
            row = {
                "run_id": f"{rec.get('run_name') or path.stem}-bs{batch:g}",
                "tool_version": "bench_one_batch_server",
                "framework": "sglang",
                "phase": "serving",
                "scenario": str(rec.get("run_name") or "") or None,
                "batch_size": batch,
                "concurrency": batch,
                "isl": num(rec.get("input_len"), "input_len"),
                "osl": num(rec.get("output_len"), "output_len"),
                "num_requests": batch,
                **one_batch_server_rates(rec),
            }
            acc = _sentinel(rec.get("acc_length"), "acc_length")
            if acc > 0:
                row["tokens_per_step"] = acc
                row.update(measured_acceptance(acc))
            elif rec.get("acc_length") is not None:
                # -1: the server reported no avg_spec_accept_length, which SGLang gives whenever a speculative
                # algorithm runs; so none ran (with --backend vllm it is always -1: the manifest can say otherwise)
                row["spec_method"] = "none"
            sink.point(row, line=line)
        except Exception as err:  # one bad record is that record's quarantine row, not the file's
            reason, field = in_words(err)
            sink.bad(reason, line=line, field=field)


FORMATS = [
    Format("sglang-bench-serving", "sglang", _detect_serving, _parse_serving,
           "JSONL, one run per line, with `completed`, `output_throughput` and `median_e2e_latency_ms` "
           "(ms; bare `Infinity` request rate)",
           "tests/data/formats/sglang/bench_serving.jsonl", per_request=True),
    Format("sglang-one-batch", "sglang", _detect_one_batch, _parse_one_batch,
           "JSONL with `run_name`, `batch_size`, `prefill_latency`, `median_decode_latency` (seconds)",
           "tests/data/formats/sglang/one_batch.jsonl"),
    Format("sglang-one-batch-server", "sglang", _detect_one_batch_server, _parse_one_batch_server,
           "JSONL with `run_name`, `batch_size`, `latency`, `last_ttft`, `overall_throughput` (seconds, -1 = n/a)",
           "tests/data/formats/sglang/one_batch_server.jsonl"),
]
