"""Step-timing JSONL (the measured H200 sweep): one JSON object per line, told apart by ``kind``.

``decode`` records become decode points (``step_ms`` = median of the repeats, the repeats kept in
``step_ms_samples`` for bootstrap), ``prefill`` records prefill points; ``model`` records supply MoE geometry
and weight bytes to the points of the same shape and precision; ``calibration`` records (measured copy
bandwidth and matmul rates) are read by :func:`calibrations` for the roofline's achievable line; ``error`` records
are quarantined with their message.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink, in_words, num

PRIORITY = 10
KINDS = {"env", "calibration", "model", "decode", "prefill", "error", "note", "done"}
UNFUSED_PRECISIONS = {"fp8"}  # the sweep quantises activations for these with separate kernels (its README)
LAUNCH_FRAMEWORK = {"cuda_graph": "pytorch-cudagraph", "eager": "pytorch-eager"}


def _detect(path: Path, head: bytes) -> bool:
    line = head.split(b"\n", 1)[0].strip()
    if not line.startswith(b"{"):
        return False
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("kind") in KINDS and "t_wall_s" in obj


def _records(path: Path):
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as err:
                yield lineno, None, f"invalid JSON: {err.msg} at column {err.colno}"
                continue
            except (ValueError, RecursionError) as err:  # e.g. an integer beyond Python's 4300-digit limit
                yield lineno, None, f"unreadable JSON: {in_words(err)[0] if isinstance(err, RecursionError) else err}"
                continue
            if not isinstance(obj, dict):
                yield lineno, None, "expected a JSON object"
                continue
            yield lineno, obj, None


def _parse(path: Path, sink: Sink) -> None:
    models: dict[tuple, dict] = {}
    for lineno, rec, err in _records(path):
        if err:
            sink.bad(err, line=lineno)
            continue
        kind = rec.get("kind")
        if kind == "model":
            models[(rec.get("shape"), rec.get("precision"))] = rec
        sink.count(f"kind_{kind}")
        if kind not in ("decode", "prefill", "error"):
            continue
        if kind == "error":
            sink.bad(f"error record in the log: {rec.get('error') or rec.get('msg') or rec}", line=lineno)
            continue
        try:
            sink.point(_point(path, rec, models.get((rec.get("shape"), rec.get("precision")), {})), line=lineno)
        except Exception as err:  # one bad record is that record's quarantine row, not the file's
            reason, field = in_words(err)
            sink.bad(reason, line=lineno, field=field)


def deployment_gpus(shape: str) -> int:
    """GPUs of the deployment a shape stands for: ``llama-3.1-70b-tp8-shard`` is one GPU's slice of TP=8."""
    m = re.search(r"tp(\d+)-shard", shape or "")
    return int(m.group(1)) if m else 1


def _point(path: Path, rec: dict, model: dict) -> dict:
    for key in ("shape", "precision", "batch_size", "step_ms_median"):
        if key not in rec:
            raise Quarantine(f"{rec.get('kind')} record without {key!r}", field=key)
    samples = rec.get("step_ms")
    if not isinstance(samples, list) or not samples:
        raise Quarantine("step_ms must be a non-empty list of repeat timings", field="step_ms")
    step = num(rec["step_ms_median"], "step_ms_median")
    if not step > 0:
        raise Quarantine(f"must be > 0, got {step:g}", field="step_ms_median")
    row = {
        "tool": "h200-steps",
        "run_id": path.stem,
        "model": rec["shape"],
        "precision": rec["precision"],
        "framework": LAUNCH_FRAMEWORK.get(rec.get("launch"), f"pytorch-{rec.get('launch', 'unknown')}"),
        "batch_size": num(rec["batch_size"], "batch_size"),
        "concurrency": num(rec["batch_size"], "batch_size"),
        "step_ms": step,
        "step_ms_samples": [num(s, "step_ms") for s in samples],
        "weight_bytes": num(rec.get("weight_bytes", model.get("weight_bytes")), "weight_bytes"),
        "spec_decode": "none",
        "tokens_per_step": 1.0,
        "disagg": False,
    }
    # A TP shard is timed on one GPU, but the deployment it stands for has `tp` GPUs that all take the same step
    # and together emit batch_size tokens: per-GPU throughput divides by tp (the all-reduce is not timed).
    tp = deployment_gpus(rec["shape"])
    row.update(tp=float(tp), n_gpus=float(tp), scope="single-gpu" if tp == 1 else "node")
    # The sweep times stacks with random bf16 weights (its README): an MoE router then routes near-uniformly, as the
    # sweep's own experts-touched counts show (52 of 128 at batch 8, the uniform expectation 51.6).
    flags = ["shard-measured"] if tp > 1 else []
    flags.append("random-weights")
    # The sweep's README (shared/data/h200/README.md, "precision"): fp8 is e4m3 weights with a dynamic per-tensor
    # activation scale through torch._scaled_mm, the activation quantisation done by separate, unfused kernels.
    if str(rec["precision"]).lower() in UNFUSED_PRECISIONS:
        flags.append("quant-unfused")
    row["flags"] = ";".join(flags)
    if rec["kind"] == "decode":
        row.update(
            phase="decode",
            context_len=num(rec.get("context_len"), "context_len"),
            kv_bytes_read=num(rec.get("kv_bytes_read"), "kv_bytes_read"),
            experts_touched=num(rec.get("experts_touched_layer0"), "experts_touched_layer0"),
            moe_experts=num(model.get("experts"), "experts"),
            moe_top_k=num(model.get("top_k"), "top_k"),
            kv_dtype="bf16",
        )
    else:
        prompt = num(rec.get("prompt_len"), "prompt_len")
        row.update(
            phase="prefill",
            isl=prompt,
            context_len=prompt,
            total_tok_s=num(rec.get("prefill_tok_s"), "prefill_tok_s"),
        )
    return row


def calibrations(path: Path) -> list[dict]:
    """The measured ceilings in a step-timing log: ``what``, ``tb_s`` or ``tflop_s``."""
    return [rec for _, rec, err in _records(Path(path)) if not err and rec.get("kind") == "calibration"]


FORMATS = [
    Format(
        name="h200-steps-jsonl",
        tool="h200-steps",
        detect=_detect,
        parse=_parse,
        detected_by="JSON lines whose first object has `kind` (env/calibration/model/decode/prefill) and `t_wall_s`",
        example="data/raw/h200/decode_sweep_run1.jsonl",
    )
]
