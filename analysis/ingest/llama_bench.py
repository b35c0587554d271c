"""llama.cpp ``llama-bench -o json`` (a JSON array) and ``-o jsonl`` (one object per line): one point per test.

Each object is one test run ``-r`` times (``tools/llama-bench/llama-bench.cpp`` in ggml-org/llama.cpp, the
``json_printer`` / ``jsonl_printer``): ``n_prompt`` prompt tokens then ``n_gen`` generated tokens at a context
already ``n_depth`` long, one sequence at a time (no server, no batching across requests); ``avg_ts`` is the mean
over repetitions of tokens per second and ``avg_ns`` the mean time of one repetition. Three kinds of test:

* **tg** (``n_prompt`` 0, ``n_gen`` > 0): token generation of one stream, read as a **decode** point at batch 1:
  ``output_tok_s`` = ``tok_s_per_user`` = ``avg_ts``, ``step_ms`` = 1000 / ``avg_ts`` (one decode step of the
  whole batch of one), ``context_len`` = ``n_depth`` + ``n_gen``/2 (the middle of the generated span).
* **pp** (``n_prompt`` > 0, ``n_gen`` 0): prompt processing, read as a **prefill** point at batch 1:
  ``total_tok_s`` = ``avg_ts`` (prompt tokens per second), ``step_ms`` = ``avg_ns`` in ms (the whole prompt),
  ``context_len`` = ``n_depth`` + ``n_prompt``. No per-user speed.
* **pg** (both > 0): prompt then generation in one timing; ``avg_ts`` counts both, so it is read as an
  **offline** point with ``total_tok_s`` and ``e2e_ms_mean`` = ``avg_ns`` in ms, and no per-user speed.

The device is ``gpu_info`` (else ``cpu_info``); the model is the GGUF file name; the build is
``build_commit`` / ``build_number``. Older builds (2023) write ``cuda``/``metal`` booleans instead of ``backends``
and no ``n_depth`` (read as 0).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, in_words, num
from analysis.ingest.vllm import json_documents

PRIORITY = 30
_KEYS = (b'"avg_ts"', b'"n_prompt"', b'"n_gen"', b'"build_commit"')


def _detect_json(path: Path, head: bytes) -> bool:
    return head.lstrip().startswith(b"[") and all(k in head for k in _KEYS)


def _detect_jsonl(path: Path, head: bytes) -> bool:
    line = head.lstrip().split(b"\n", 1)[0]
    return line.startswith(b"{") and all(k in line for k in _KEYS)


def _model(filename) -> str | None:
    if not filename:
        return None
    name = Path(str(filename)).name
    return re.sub(r"\.gguf$", "", name, flags=re.IGNORECASE) or None


def _device(rec: dict) -> str | None:
    for key in ("gpu_info", "cpu_info"):
        text = str(rec.get(key) or "").strip()
        if text:
            return re.sub(r"^NVIDIA\s+", "", text)
    return None


def bench_point(rec: dict, *, run_id: str) -> dict:
    n_prompt = num(rec.get("n_prompt"), "n_prompt")
    n_gen = num(rec.get("n_gen"), "n_gen")
    depth = num(rec.get("n_depth", 0), "n_depth")
    depth = 0.0 if math.isnan(depth) else depth
    rate = num(rec.get("avg_ts"), "avg_ts")
    seconds = num(rec.get("avg_ns"), "avg_ns", scale=1e-9)
    if rate < 0 or seconds < 0:
        raise Quarantine("negative rate or duration", field="avg_ts" if rate < 0 else "avg_ns")
    reps = rec.get("samples_ts")
    base = {
        "run_id": run_id,
        "tool_version": f"{rec.get('build_commit')} (build {rec.get('build_number')})",
        "date": rec.get("test_time"),
        "model": _model(rec.get("model_filename")),
        "hardware": _device(rec),
        "framework": "llama.cpp",
        "scenario": str(rec.get("model_type") or "") or None,
        "batch_size": 1.0,
        "concurrency": 1.0,
        "num_requests": float(len(reps)) if isinstance(reps, list) else math.nan,  # repetitions
        "flags": "",
    }
    if n_prompt == 0 and n_gen > 0:
        return {**base, "phase": "decode", "osl": n_gen, "context_len": depth + n_gen / 2,
                "output_tok_s": rate, "step_ms": 1000.0 / rate if rate > 0 else math.nan,
                "tok_s_per_user": rate, "tok_s_per_user_def": "1000/step_ms"}
    if n_prompt > 0 and n_gen == 0:
        return {**base, "phase": "prefill", "isl": n_prompt, "context_len": depth + n_prompt,
                "total_tok_s": rate, "step_ms": 1000.0 * seconds, "tok_s_per_user_def": "unknown"}
    if n_prompt > 0 and n_gen > 0:
        return {**base, "phase": "offline", "scenario": f"pg{n_prompt:g},{n_gen:g}", "isl": n_prompt, "osl": n_gen,
                "context_len": depth + n_prompt + n_gen / 2, "total_tok_s": rate, "e2e_ms_mean": 1000.0 * seconds,
                "tok_s_per_user_def": "unknown"}
    raise Quarantine(f"a test with n_prompt {n_prompt:g} and n_gen {n_gen:g} measures nothing", field="n_gen")


def _parse(path: Path, sink: Sink) -> None:
    n = 0
    for line, doc in json_documents(path, sink):
        records = doc if isinstance(doc, list) else [doc]
        for rec in records:
            n += 1
            at = line if not isinstance(doc, list) else None
            if not isinstance(rec, dict) or "avg_ts" not in rec:
                sink.bad(f"test {n} is not a llama-bench result (no 'avg_ts')", line=at)
                continue
            try:
                sink.point(bench_point(rec, run_id=f"{path.stem}#{n}"), line=at if at else n)
            except Exception as err:  # one bad test is that test's quarantine row, not the file's
                reason, field = in_words(err)
                sink.bad(f"test {n}: {reason}", line=at, field=field)


FORMATS = [
    Format("llama-bench-json", "llama-bench", _detect_json, _parse,
           "JSON array of objects with `build_commit`, `n_prompt`, `n_gen`, `avg_ts` (`llama-bench -o json`)",
           "tests/data/formats/llama_bench/readme_b5163_rtx4080.json"),
    Format("llama-bench-jsonl", "llama-bench", _detect_jsonl, _parse,
           "JSON lines, each with `build_commit`, `n_prompt`, `n_gen`, `avg_ts` (`llama-bench -o jsonl`)",
           "tests/data/formats/llama_bench/readme_b5163_rtx4080.jsonl"),
]
