"""Public batch sweeps as points tables, to check the batch model on data it was not built on.

Splitwise (ISCA'24) profiles ``token_time``: the time of one decode step in ms, five repeats per point, so it
maps onto ``step_ms`` directly (context = prompt + half the generated tokens). LLM-Inference-Bench reports
``Latency``: end-to-end seconds for a whole static batch, prefill included, with input length = output length
``n``; the closest per-step figure is ``Latency/n``, which spreads the prefill over the decode steps. Its rows are
marked ``derived-from-e2e`` and ``per-user-includes-ttft`` and kept in phase ``offline``; llama.cpp rows are left
out because their throughput and latency do not scale with the batch (the batch is not decoded together).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis import schema

SPLITWISE_COLUMNS = ["model", "hardware", "prompt_size", "batch_size", "token_size", "token_time", "tensor_parallel"]
LIB_COLUMNS = ["Hardware", "Num of Hardware", "Framework", "Model", "Input Output Length", "Batch Size", "Latency"]
LIB_FRAMEWORKS = {"vLLM": "vllm", "TensorRT-LLM": "trt", "Deepspeed-MII": "deepspeed-mii", "Deepspeed": "deepspeed"}


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    df = pd.read_csv(path).dropna(how="all")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
    return df


def load_splitwise(path: str | Path) -> pd.DataFrame:
    """Splitwise ``perf_model.csv`` as decode points, one per (model, hardware, TP, prompt, output, batch)."""
    df = _read(path, SPLITWISE_COLUMNS)
    rows = []
    keys = ["model", "hardware", "tensor_parallel", "prompt_size", "token_size", "batch_size"]
    for (model, hw, tp, prompt, out, batch), g in df.groupby(keys, sort=True):
        samples = g["token_time"].astype(float).tolist()
        rows.append(schema.validate_row({
            "source_file": Path(path).name, "source_line": float(g.index.min() + 2), "tool": "splitwise-profile",
            "format": "splitwise-csv", "model": model, "hardware": hw, "n_gpus": tp, "tp": tp,
            "precision": "fp16", "phase": "decode", "spec_decode": "none", "tokens_per_step": 1.0,
            "batch_size": batch, "concurrency": batch, "isl": prompt, "osl": out,
            "context_len": prompt + out / 2.0, "step_ms": float(np.median(samples)), "step_ms_samples": samples,
            "gpu_denominator": "all",
        }))
    return schema.to_points(rows)


def load_llm_inference_bench(path: str | Path, *, frameworks=("vLLM", "TensorRT-LLM")) -> pd.DataFrame:
    """LLM-Inference-Bench result CSV as offline points with ``step_ms = 1000·Latency/n`` (prefill included)."""
    df = _read(path, LIB_COLUMNS)
    df = df[df["Framework"].isin(frameworks)]
    rows = []
    for line, r in df.iterrows():
        n = float(r["Input Output Length"])
        batch = float(r["Batch Size"])
        latency_ms = 1000.0 * float(r["Latency"])
        n_gpus = float(r["Num of Hardware"])
        rows.append(schema.validate_row({
            "source_file": Path(path).name, "source_line": float(line + 2), "tool": "llm-inference-bench",
            "format": "llm-inference-bench-csv", "model": str(r["Model"]).split("/")[-1],
            "hardware": str(r["Hardware"]), "n_gpus": n_gpus,
            "framework": LIB_FRAMEWORKS.get(r["Framework"], str(r["Framework"]).lower()),
            "phase": "offline", "spec_decode": "none", "batch_size": batch, "concurrency": batch,
            "isl": n, "osl": n, "context_len": 1.5 * n, "e2e_ms_mean": latency_ms, "step_ms": latency_ms / n,
            "output_tok_s": batch * n / (latency_ms / 1000.0), "tok_s_per_user": 1000.0 * n / latency_ms,
            "tok_s_per_user_def": "osl/e2e", "flags": "derived-from-e2e;per-user-includes-ttft",
            "tokens_per_step": 1.0, "gpu_denominator": "all",
        }))
    return schema.to_points(rows)
