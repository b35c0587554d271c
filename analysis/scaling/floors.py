"""Physical lower bounds of the per-sequence coefficients t1 and t2.

The coefficients are times, so their lower bounds are physical: 0, or — when the model geometry and the GPU's
measured ceilings are known (:func:`floor_inputs`, from the step logs' ``model`` and ``calibration`` records that
:func:`analysis.data.load_calibration` gives) — the time one more sequence must add at best: its KV cache read at
the measured copy bandwidth plus its matmul FLOPs at the measured matmul rate (:func:`sequence_floors`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import physics, schema
from analysis.perfmodel import step as st
from analysis.scaling.inputs import Rows

# Kernels launched one by one from Python: the GPU idles between launches, so added GPU work first fills those
# gaps and the step's per-sequence cost is not bounded below by GPU time.
HOST_BOUND_FRAMEWORKS = st.HOST_BOUND_FRAMEWORKS
_NOT_GEOMETRY = ("kind", "shape", "precision", "t_wall_s", "source_file")


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def floor_inputs(calibration, *, points: pd.DataFrame | None = None) -> dict:
    """Model geometry and measured ceilings from the step logs' records.

    ``calibration``: the table :func:`analysis.data.load_calibration` returns (or a path it reads). Returns
    ``{"models": {shape: geometry}, "ceilings": {hardware: {"copy_tb_s", "matmul_tflop_s": {precision: rate},
    "source"}}}``. A log's ceilings belong to the hardware its points carry in ``points`` (the manifest names it;
    the log only says ``gpu``), else to the log's ``env`` GPU name.
    """
    if calibration is None:
        return {"models": {}, "ceilings": {}}
    if isinstance(calibration, (str, Path)):
        from analysis import data

        calibration = data.load_calibration(calibration)
    models, ceilings = {}, {}
    if calibration.empty or "kind" not in calibration.columns:
        return {"models": models, "ceilings": ceilings}
    for rec in calibration[calibration["kind"] == "model"].to_dict(orient="records"):
        if _present(rec.get("shape")):
            models.setdefault(str(rec["shape"]), {}).update(
                {k: v for k, v in rec.items() if k not in _NOT_GEOMETRY and _present(v)})
    for source, recs in calibration.groupby("source_file", sort=True):
        cal = recs[recs["kind"] == "calibration"]
        if cal.empty:
            continue
        env_gpu = recs.loc[recs["kind"] == "env", "gpu"].dropna() if "gpu" in recs.columns else pd.Series([])
        hardware = _hardware_of(str(source), points) or (str(env_gpu.iloc[0]) if len(env_gpu) else "unknown")
        entry = ceilings.setdefault(hardware, {"copy_tb_s": math.nan, "matmul_tflop_s": {}, "source": str(source)})
        for c in cal.to_dict(orient="records"):
            what = str(c.get("what", ""))
            if what.endswith("copy") and _present(c.get("tb_s")) and c["tb_s"]:
                entry["copy_tb_s"] = float(c["tb_s"])
            elif what.startswith("matmul_") and _present(c.get("tflop_s")) and c["tflop_s"]:
                entry["matmul_tflop_s"][schema.normalize_precision(what.split("_", 1)[1])] = float(c["tflop_s"])
    return {"models": models, "ceilings": ceilings}


def _hardware_of(name: str, points: pd.DataFrame | None) -> str | None:
    if points is None or "source_file" not in points.columns or "hardware" not in points.columns:
        return None
    same = points["source_file"].astype(str).map(lambda s: Path(s).name == name)
    hw = points.loc[same, "hardware"].dropna()
    return str(hw.iloc[0]) if len(hw) else None


def matmul_params_per_token(geo: dict) -> float:
    """Weights every token multiplies: MoE from the log's counts, dense from the layer shapes (lm_head included,
    the embedding lookup not: it is a gather, no FLOPs)."""
    if geo.get("always_read_params") and geo.get("params_per_expert") and geo.get("top_k") and geo.get("layers"):
        return float(geo["always_read_params"]) + geo["layers"] * geo["top_k"] * float(geo["params_per_expert"])
    need = ("layers", "hidden", "q_heads", "kv_heads", "head_dim", "intermediate", "vocab")
    if not all(geo.get(k) for k in need):
        return math.nan
    h, d = geo["hidden"], geo["head_dim"]
    per_layer = h * (geo["q_heads"] + 2 * geo["kv_heads"]) * d + geo["q_heads"] * d * h + 3 * h * geo["intermediate"]
    return float(geo["layers"] * per_layer + geo["vocab"] * h)


def sequence_floors(g: pd.DataFrame | Rows, floors: dict | None, *, t2_identified: bool) -> tuple[float, float, str]:
    """Lower bounds (ms) of t1 and t2 for one group, and where they come from (``""`` and 0 when unknown).

    One more sequence in a decode step adds, at best, its attention kernel — reading its KV cache at the measured
    copy bandwidth (its attention FLOPs overlap that read inside the same kernel, so the larger of the two) — and
    its token's share of every matmul at the measured matmul rate. The two are added, not overlapped: within a
    layer the projections and FFN consume the attention output, so those kernels run one after the other. With two
    or more contexts the KV part bounds t2 (per token of context) and the matmul part t1; with one context both
    bound t1. No geometry, no measured bandwidth, or host-bound launches (eager): the bound stays 0.
    ``floors["combine"] = "max"`` instead assumes the two overlap perfectly (kept to show what that assumption
    would give; a decode step's data dependencies do not allow it).
    """
    if not floors:
        return 0.0, 0.0, ""
    g = Rows.of(g)
    framework = g.first("framework")
    if framework in HOST_BOUND_FRAMEWORKS:
        return 0.0, 0.0, f"none: {framework} launches are host-bound, GPU work hides in launch gaps"
    ceil = floors.get("ceilings", {}).get(g.first("hardware"))
    if not ceil or not np.isfinite(ceil.get("copy_tb_s", math.nan)):
        return 0.0, 0.0, ""
    geo = floors.get("models", {}).get(g.first("model"), {})
    precision = g.first("precision")
    rates = ceil.get("matmul_tflop_s", {})
    # Unknown precision: the fastest measured rate keeps the bound a lower bound.
    tflop_s = rates.get(precision, max(rates.values(), default=math.nan))
    kv_dtype = g.first("kv_dtype", "bf16")
    if all(geo.get(k) for k in ("layers", "kv_heads", "head_dim")):
        dtype = kv_dtype if kv_dtype in physics.KV_BYTES_PER_VALUE else "bf16"
        kv_per_token = physics.kv_bytes_per_token(layers=geo["layers"], kv_heads=geo["kv_heads"],
                                                  head_dim=geo["head_dim"], kv_dtype=dtype)
        kv_from = "geometry"
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            per = np.asarray(g.col("kv_bytes_read"), float) / (np.asarray(g["batch"], float)
                                                             * np.asarray(g["context"], float))
        kv_per_token = float(np.nanmedian(per)) if not np.isnan(per).all() else math.nan
        kv_from = "kv_bytes_read"
    if not np.isfinite(kv_per_token):
        return 0.0, 0.0, ""
    attn_flops = 4.0 * geo["q_heads"] * geo["head_dim"] * geo["layers"] if geo.get("q_heads") else 0.0
    matmul_flops = 2.0 * matmul_params_per_token(geo)
    has_rate = np.isfinite(tflop_s) and tflop_s > 0
    attn_ms = max(kv_per_token / (ceil["copy_tb_s"] * 1e12),
                  attn_flops / (tflop_s * 1e15) if has_rate else 0.0) * 1e3
    matmul_ms = matmul_flops / (tflop_s * 1e12) * 1e3 if has_rate and np.isfinite(matmul_flops) else 0.0
    flops_text = (f" + {matmul_flops / 1e9:.2f} GFLOP/token matmul at {tflop_s:.0f} TFLOP/s ({precision})"
                  if matmul_ms > 0 else " (matmul FLOPs unknown: not bounded)")
    contexts = np.asarray(g["context"], float)
    context = float(np.nanmedian(contexts)) if not np.isnan(contexts).all() else 0.0
    if floors.get("combine", "sum") == "max":
        if t2_identified:  # the larger term bounds its own coefficient alone
            return (matmul_ms, 0.0, "") if matmul_ms > attn_ms else (0.0, attn_ms, "")
        return max(attn_ms * context, matmul_ms), 0.0, "max(KV read, matmul FLOPs): perfect overlap assumed"
    if t2_identified:
        return matmul_ms, attn_ms, (f"KV {kv_per_token / 1e3:.1f} kB per context token ({kv_from}) at "
                                    f"{ceil['copy_tb_s']:.2f} TB/s{flops_text}")
    return attn_ms * context + matmul_ms, 0.0, (
        f"KV {kv_per_token * context / 1e6:.1f} MB/seq at L={context:g} ({kv_from}) at {ceil['copy_tb_s']:.2f} "
        f"TB/s{flops_text}")
