"""The console summary of ``vllm bench serve`` (and ``benchmarks/benchmark_serving.py``) and of SGLang's
``python -m sglang.bench_serving``: the "Serving Benchmark Result" block people paste from a terminal or a job log.

One point per block; a log of a sweep holds several. Lines are ``Label: value`` with fixed labels (``Successful
requests:``, ``Output token throughput (tok/s):``, ``Median TPOT (ms):`` …), sections separated by dashed titles,
and the block closes with a line of ``=`` only: a block without it was cut off, so its point is kept but flagged
``truncated``. SGLang's block starts with ``Backend:`` and ``Traffic request rate:`` and adds ``Max request
concurrency:``, ``Input token throughput``, ``Concurrency:`` (achieved) and ``Accept length:``; vLLM's
``Speculative Decoding`` section gives ``Acceptance length:`` (tokens per verify step, bonus token included),
``Drafts:`` and ``Draft tokens:`` (their ratio is the tokens drafted per step); either length is the run's own
measured acceptance (``acceptance_source: measured``; launch settings in the manifest can say it was forced). The
method is not printed (the manifest names it). vLLM prints the
request rate and concurrency just above the block (and ``Maximum request concurrency:`` inside it in newer
versions) and the model only in its ``Namespace(... model='…' ...)`` argument dump. Latencies are ms; a statistic
of 0 ms is missing (no streaming), as in the JSON readers. Lines may carry a ``# `` prefix (logs pasted into
scripts). Nothing about hardware or GPU count is printed: the manifest gives them.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, in_words, model_from_id, num
from analysis.ingest.vllm import ENGINE_BACKENDS, KEEP, fail_run, measured_acceptance, per_user
from analysis.schema import add_flag

PRIORITY = 45
HEADER = re.compile(r"^=+\s*Serving Benchmark Result\s*=+$")
CLOSING = re.compile(r"^={10,}$")
LINE = re.compile(r"^(?P<label>[A-Za-z][^:]*?):\s*(?P<value>\S.*?)\s*$")
LATENCY = re.compile(r"^(?P<stat>Mean|Median|P(?P<p>\d+(?:\.\d+)?)) (?P<metric>TTFT|TPOT|ITL|E2EL|E2E Latency) \(ms\)$")
_METRIC = {"TTFT": "ttft", "TPOT": "tpot", "ITL": "itl", "E2EL": "e2e", "E2E Latency": "e2e"}
# Block labels (lower case) -> what they hold.
LABELS = {
    "successful requests": "completed",
    "failed requests": "failed_requests",
    "maximum request concurrency": "concurrency",
    "max request concurrency": "concurrency",
    "benchmark duration (s)": "duration",
    "total input tokens": "total_input",
    "total generated tokens": "total_output",
    "request throughput (req/s)": "request_s",
    "output token throughput (tok/s)": "output_tok_s",
    "total token throughput (tok/s)": "total_tok_s",
    "total throughput (tok/s)": "total_tok_s",
    "input token throughput (tok/s)": "input_tok_s",
    "traffic request rate": "request_rate",
    "concurrency": "achieved_concurrency",
    "accept length": "tokens_per_step",
    "acceptance length": "tokens_per_step",
    "drafts": "drafts",
    "draft tokens": "drafted",
    "backend": "backend",
}
_TEXT_LABELS = {"backend", "request_rate", "concurrency"}  # may be words: "sglang", "inf", "not set"
_MODEL_ARG = re.compile(r"""\bmodel=['"](?P<model>[^'"]+)['"]""")
_BACKEND_ARG = re.compile(r"""\bbackend=['"](?P<backend>[^'"]+)['"]""")


def _lines(text: str) -> list[str]:
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# "):
            line = line[2:].strip()
        out.append(line)
    return out


def _blocks(lines: list[str]) -> list[tuple[int, int, bool]]:
    """(header index, end index, closed) of every result block."""
    starts = [i for i, line in enumerate(lines) if HEADER.match(line)]
    blocks = []
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(lines)
        end = next((j for j in range(start + 1, stop) if CLOSING.match(lines[j])), None)
        blocks.append((start, end if end is not None else stop, end is not None))
    return blocks


def _is_sglang_block(head: str) -> bool:
    lines = _lines(head)
    for i, line in enumerate(lines):
        if HEADER.match(line):
            nxt = next((x for x in lines[i + 1:i + 3] if x), "")
            return nxt.lower().startswith("backend:")
    return False


def _detect_vllm(path: Path, head: bytes) -> bool:
    if b"Serving Benchmark Result" not in head:
        return False
    return not _is_sglang_block(head.decode("utf-8", errors="replace"))


def _detect_sglang(path: Path, head: bytes) -> bool:
    return b"Serving Benchmark Result" in head and _is_sglang_block(head.decode("utf-8", errors="replace"))


def _context(lines: list[str]) -> dict:
    """What the lines above a block say about its run: model and backend (argument dump), request rate and
    concurrency (vLLM prints them before the block). The nearest line above wins."""
    out: dict = {}
    for line in reversed(lines):
        if "model" not in out and (m := _MODEL_ARG.search(line)):
            out["model"] = m.group("model")
        if "backend" not in out and (m := _BACKEND_ARG.search(line)):
            out["backend"] = m.group("backend")
        m = LINE.match(line)
        if m:
            label = m.group("label").strip().lower()
            if label == "traffic request rate" and "request_rate" not in out:
                out["request_rate"] = m.group("value")
            elif label in ("maximum request concurrency", "max request concurrency") and "concurrency" not in out:
                out["concurrency"] = m.group("value")
    return out


def _block_point(lines: list[str], start: int, end: int, context: dict, *, tool: str, run_id: str) -> dict:
    values: dict = {}
    latency: dict[str, float] = {}
    for offset, line in enumerate(lines[start + 1:end], start + 2):
        m = LINE.match(line)
        if not m:
            continue
        label, raw = m.group("label").strip(), m.group("value").strip()
        lat = LATENCY.match(label)
        if lat:
            metric = _METRIC[lat.group("metric")]
            stat = "mean" if lat.group("stat") == "Mean" else "p50" if lat.group("stat") == "Median" \
                else f"p{lat.group('p')}"
            if stat not in KEEP[metric] or (stat == "p50" and lat.group("stat") != "Median"
                                            and f"{metric}_ms_p50" in latency):
                continue
            try:
                x = num(raw, label)
            except Quarantine as err:
                raise Quarantine(err.reason, field=label, line=offset) from None
            if x < 0:
                raise Quarantine(f"negative latency {x:g} ms", field=label, line=offset)
            latency[f"{metric}_ms_{stat}"] = x if x > 0 else math.nan
            continue
        key = LABELS.get(label.lower())
        if key is None or key in values:
            continue
        if key in _TEXT_LABELS:
            values[key] = raw
            continue
        try:
            values[key] = num(raw, label)
        except Quarantine as err:
            raise Quarantine(err.reason, field=label, line=offset) from None
    if "completed" not in values:
        raise Quarantine("result block without 'Successful requests'", field="Successful requests")
    if "output_tok_s" not in values:
        raise Quarantine("result block without 'Output token throughput (tok/s)'",
                         field="Output token throughput (tok/s)")
    completed = values["completed"]
    if values.get("duration", 0.0) < 0:
        raise Quarantine(f"negative benchmark duration {values['duration']:g} s", field="Benchmark duration (s)")
    backend = str(values.get("backend") or context.get("backend") or "")
    row = {
        "run_id": run_id,
        "tool_version": "console summary",
        "model": model_from_id(context.get("model")),
        "framework": ENGINE_BACKENDS.get(backend.lower(), "sglang" if tool == "sglang" else None),
        "phase": "serving",
        "num_requests": completed,
        "failed_requests": values.get("failed_requests", math.nan),
        "isl": values.get("total_input", math.nan) / completed if completed else math.nan,
        "osl": values.get("total_output", math.nan) / completed if completed else math.nan,
        "output_tok_s": values["output_tok_s"],
        "total_tok_s": values.get("total_tok_s", values.get("input_tok_s", math.nan) + values["output_tok_s"]),
        "request_s": values.get("request_s", math.nan),
        "flags": "",
    }
    concurrency = values.get("concurrency", context.get("concurrency"))
    row["concurrency"] = _number_or_nan(concurrency, "Maximum request concurrency")
    if math.isnan(row["concurrency"]) and values.get("achieved_concurrency") is not None:
        achieved = _number_or_nan(values["achieved_concurrency"], "Concurrency")
        if achieved > 0:
            row["concurrency"] = achieved
            row["flags"] = add_flag(row["flags"], "concurrency-achieved")
    rate = values.get("request_rate", context.get("request_rate"))
    if rate is not None and str(rate).strip().lower() in {"inf", "infinity"}:
        row["request_rate"] = math.nan
        row["flags"] = add_flag(row["flags"], "request-rate-inf")
    else:
        row["request_rate"] = _number_or_nan(rate, "Traffic request rate")
    if values.get("tokens_per_step", 0) > 0:
        row["tokens_per_step"] = values["tokens_per_step"]
        row.update(measured_acceptance(values["tokens_per_step"], drafted=values.get("drafted"),
                                       drafts=values.get("drafts")))
    row.update(latency)
    if not completed:
        fail_run(row)
    per_user(row)
    return row


def _number_or_nan(value, field: str) -> float:
    if value is None:
        return math.nan
    try:
        return num(value, field)
    except Quarantine:
        return math.nan  # "not set", "None": the tool's words for no cap


def _parse(path: Path, sink: Sink, *, tool: str) -> None:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        text = path.read_bytes().decode("utf-8", errors="replace")  # a log with stray bytes: names get U+FFFD
    lines = _lines(text)
    blocks = _blocks(lines)
    if not blocks:
        raise Quarantine("no 'Serving Benchmark Result' block in the log")
    previous_end = 0
    for i, (start, end, closed) in enumerate(blocks):
        run_id = f"{path.stem}#{i + 1}" if len(blocks) > 1 else path.stem
        try:
            row = _block_point(lines, start, end, _context(lines[previous_end:start]), tool=tool, run_id=run_id)
        except Exception as err:  # one bad block is that block's quarantine row
            reason, field = in_words(err)
            sink.bad(reason, line=getattr(err, "line", None) or start + 1, field=field)
            previous_end = end
            continue
        if not closed:
            row["flags"] = add_flag(row["flags"], "truncated")
            sink.bad("truncated summary: the result block has no closing '=====' line; the point is kept but left "
                     "out of fits", line=start + 1, field="Serving Benchmark Result")
        sink.point(row, line=start + 1)
        previous_end = end


def _parse_vllm(path: Path, sink: Sink) -> None:
    _parse(path, sink, tool="vllm")


def _parse_sglang(path: Path, sink: Sink) -> None:
    _parse(path, sink, tool="sglang")


FORMATS = [
    Format("vllm-serve-console", "vllm", _detect_vllm, _parse_vllm,
           "text with a '=== Serving Benchmark Result ===' block (the console summary of `vllm bench serve`)",
           "data/raw/inferencex-samples/local-results/mtp-fixed-ar-minimax-lcb-v8-20260529-092323/"
           "vllm_bench_serve_conc32.log"),
    Format("sglang-serving-console", "sglang", _detect_sglang, _parse_sglang,
           "text with a '=== Serving Benchmark Result ===' block starting 'Backend:' (SGLang bench_serving console)",
           "tests/data/formats/sglang/bench_serving_console.log"),
]
