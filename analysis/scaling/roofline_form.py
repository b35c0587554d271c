"""The roofline-shaped batch term for one configuration: fitted on its own points, for extrapolating in batch.

The linear batch model ``t0 + t1·B + t2·B·L`` is the in-range estimator; beyond the measured batches its slope,
read where small GEMMs cost more per row, keeps rising. This form is the performance model's equation
(:func:`analysis.perfmodel.step.step_time`) applied to each kind of kernel a decode step runs, with the bytes and
FLOPs of the model at each point's batch and context (:func:`analysis.perfmodel.step.terms`):

``step = layers·overhead + max(weight bytes ÷ bw_share·BW, GEMM FLOPs ÷ flop_share·peak)
+ max(KV bytes ÷ kv_bw_share·BW, attention FLOPs ÷ flop_share·peak) + collectives``

The GEMMs stream the weights and the attention kernels stream the KV cache; they are different kernels, run one
after the other, so the KV read does not hide under the GEMMs' compute at large batch, and each streams HBM at its
own achieved share. Each number comes from the measurement that identifies it:

- ``kv_bw_share``: from the group's own points at two contexts and the same batch (≤ the fit's largest batch): the
  step-time difference is the extra KV read (everything else in the step is the same), so the share is the extra
  KV bytes at the datasheet bandwidth over the measured extra time (:func:`kv_share_from_contexts`). A group
  measured at one context cannot tell its KV share from its other per-sequence costs; it takes the weights' share.
- ``bw_share`` (the weights'): a dense model reads the same weights at every batch, so its small batches cannot tell
  weight streaming from fixed per-layer cost (both are constant in batch). The weights are taken as streamed at
  the hardware's measured copy bandwidth (:func:`bandwidth_share`: the H200 calibration records' device-to-device
  copy; 0.8 of the datasheet assumed where nothing is measured) and the rest of the small-batch step is fitted as
  overhead per layer. An MoE model's touched experts grow with batch, so there the share is fitted.
- ``flop_share``: the model's own measured prefill rate where the points table holds its prefill step timings
  (:func:`prefill_flop_share`: its GEMM shapes at large M, unfused FP8 activation quantization included), else the
  hardware's measured dense matmul rate over the peak (:func:`flop_share`; 0.8 assumed where none is measured).
- ``overhead_ms_per_layer`` (≥ 0) is fitted to the group's points by least squares on log(predicted / measured).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import roofline, specs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import step as st
from analysis.text import fixed, plain, whole

BW_SHARE_BOUNDS = (0.02, 1.0)
OVERHEAD_BOUNDS = (0.0, 2.0)


@dataclass(frozen=True)
class RooflineFit:
    """One group's fitted overhead, its weights', KV and compute shares with where each came from, and how well it
    fits its own points."""

    efficiency: st.Efficiency     # bw_share: the weights' share
    kv_bw_share: float
    flop_share_source: str
    bw_share_source: str
    kv_bw_share_source: str
    max_abs_rel_error: float
    n_points: int


def _terms(rows: pd.DataFrame) -> pd.DataFrame:
    """Per row: the weights' and the KV cache's HBM time and the GEMMs' and attention's FLOP time, at the datasheet
    ceilings, with the collectives, layers and tokens per step."""
    out = []
    for rec in rows.to_dict(orient="records"):
        dep = cb.deployment(rec)
        tau, verify, _ = st.speculation(dep, assumed_tau=1.0)
        geo = st.geometry(dep, verify=verify)
        par = st.parallelism(dep)
        batch = float(rec["batch"]) / par.workers
        t = st.terms(geo, batch)
        kv_ms = batch * geo.kv_bytes_per_seq / (geo.bandwidth_tb_s * 1e12) * 1e3
        attention_ms = batch * geo.verify * geo.attention_ms_per_token
        out.append({"weights_ms": float(t["memory_ms"][0]) - kv_ms, "kv_ms": kv_ms,
                    "gemm_ms": float(t["compute_ms"][0]) - attention_ms, "attention_ms": attention_ms,
                    "collectives_ms": float(t["collectives_ms"][0]), "layers": geo.layers,
                    "moe": geo.n_experts > 0 and geo.expert_bytes > 0,
                    "per_token": float(rec.get("tau") or 1.0)})
    return pd.DataFrame(out, index=rows.index)


def flop_share(hardware: str, precision: str) -> tuple[float, str]:
    """Measured dense matmul rate over the datasheet peak at ``precision``'s math rate (0.8 assumed if none)."""
    hw = specs.hardware(hardware)
    math_p = roofline.MATH_PRECISION.get(str(precision).split(",")[0], "bf16")
    ach, peak = roofline.ceilings(hw, "achievable"), roofline.ceilings(hw, "datasheet")
    a, p = ach.tflops.get(math_p, math.nan), peak.tflops.get(math_p, math.nan)
    if hw.achievable_basis == "measured" and a == a and p == p and p > 0:
        return min(a / p, 1.0), f"measured {math_p} matmul {whole(a)} of {whole(p)} TF ({ach.source})"
    return roofline.ACHIEVABLE_FACTOR, f"assumed {plain(roofline.ACHIEVABLE_FACTOR)} of the {math_p} peak"


def bandwidth_share(hardware: str) -> tuple[float, str]:
    """The hardware's achievable HBM bandwidth over its datasheet peak (≤ 1): measured copy bandwidth where
    measured (the H200 calibration records), else 0.8 assumed."""
    hw = specs.hardware(hardware)
    ach = roofline.ceilings(hw, "achievable")
    share = min(ach.bandwidth_tb_s / hw.hbm_bandwidth_tb_s, 1.0)
    measured = hw.family in roofline.CALIBRATION_RECORDS or hw.achievable_basis == "measured"
    if measured:
        return share, (f"measured copy {fixed(ach.bandwidth_tb_s, 2)} of {plain(hw.hbm_bandwidth_tb_s)} TB/s "
                       f"({ach.source})")
    return share, f"assumed {plain(roofline.ACHIEVABLE_FACTOR)} of the datasheet bandwidth"


PREFILL_KEYS = ("model", "hardware", "precision", "n_gpus", "tp", "ep")


def prefill_rows(points: pd.DataFrame, group: pd.DataFrame) -> pd.DataFrame:
    """The step-timing prefill records of ``group``'s model on its hardware, precision and GPUs (any launch mode):
    ``phase == "prefill"`` rows of ``points`` with a step time, batch size and prompt length."""
    if "phase" not in points.columns or group.empty:
        return points.iloc[0:0]
    keep = points["phase"].astype(str).eq("prefill")
    for c in ("step_ms", "batch_size", "isl"):
        keep &= points[c].gt(0) if c in points.columns else False
    for k in PREFILL_KEYS:
        if k in points.columns and k in group.columns:
            v = group[k].iloc[0]
            keep &= points[k].isna() if pd.isna(v) else points[k].eq(v)
    return points[keep]


def prefill_flop_share(prefill: pd.DataFrame) -> tuple[float, str] | None:
    """The model's measured prefill rate over the datasheet peak, best over its prefill records (the ceiling its
    own GEMM shapes reached): the datasheet-rate FLOP time of one prompt token (every matmul plus attention over
    half the prompt in prefill's form, :func:`analysis.perfmodel.step.prefill_ms_per_token`) over the measured time
    per prompt token (step time ÷ batch × prompt length). None when there is no usable record."""
    best = None
    for rec in prefill.to_dict(orient="records"):
        dep = cb.deployment({**rec, "context_len": rec["isl"]})
        geo = st.geometry(dep, verify=1.0)
        per_gpu_ms = st.prefill_ms_per_token(geo, float(rec["isl"]))
        measured_ms = float(rec["step_ms"]) / (float(rec["batch_size"]) * float(rec["isl"]))
        share = per_gpu_ms / measured_ms
        if share > 0 and (best is None or share > best[0]):
            line, where = rec.get("source_line"), str(rec.get("source_file", ""))
            where += f":{whole(line)}" if line is not None and line == line else ""
            best = (share, f"measured prefill of this model: {whole(rec['batch_size'])} × {whole(rec['isl'])} "
                           f"tokens in {fixed(rec['step_ms'], 1)} ms ({where}), {fixed(share, 3)} of the datasheet FLOP rate")
    if best is None:
        return None
    return min(best[0], 1.0), best[1]


def kv_share_from_contexts(rows: pd.DataFrame, t: pd.DataFrame) -> tuple[float, str] | None:
    """The KV cache's achieved bandwidth share from the group's pairs of points at the same batch and different
    contexts: Σ extra KV time at the datasheet bandwidth ÷ Σ measured extra step time (each batch's points against
    its shortest context). Weights, overhead, GEMMs and collectives are the same at the same batch, so they cancel.
    None when no batch was measured at two contexts or the longer context was not slower."""
    step = rows["step_ms"].to_numpy(float) * t["per_token"].to_numpy(float)
    frame = pd.DataFrame({"batch": rows["batch"].to_numpy(float), "context": rows["context"].to_numpy(float),
                          "step": step, "kv": t["kv_ms"].to_numpy(float)}).dropna()
    d_kv = d_step = 0.0
    pairs = []
    for b, g in frame.groupby("batch"):
        if g["context"].nunique() < 2:
            continue
        base = g.loc[g["context"].idxmin()]
        longer = g[g["context"] > base["context"]]
        d_kv += float((longer["kv"] - base["kv"]).sum())
        d_step += float((longer["step"] - base["step"]).sum())
        pairs.append(b)
    if not pairs or d_step <= 0 or d_kv <= 0:
        return None
    share = float(np.clip(d_kv / d_step, *BW_SHARE_BOUNDS))
    contexts = ", ".join(whole(c) for c in sorted(frame["context"].unique()))
    return share, (f"measured: extra KV read over extra step time at contexts {contexts}, "
                   f"{len(pairs)} batches {whole(min(pairs))}–{whole(max(pairs))}")


def _predict(overhead: float, bw: float, kv_bw: float, share: float, t: pd.DataFrame) -> np.ndarray:
    gemm = st.Efficiency(bw_share=bw, flop_share=share, overhead_ms_per_layer=overhead, overlap=1.0, comm_scale=1.0)
    attention = st.Efficiency(bw_share=kv_bw, flop_share=share, overhead_ms_per_layer=0.0, overlap=1.0,
                              comm_scale=0.0)
    weights = st.step_time(t["weights_ms"].to_numpy(), t["gemm_ms"].to_numpy(), t["collectives_ms"].to_numpy(),
                           gemm, t["layers"].to_numpy())["step_ms"]
    kv = st.step_time(t["kv_ms"].to_numpy(), t["attention_ms"].to_numpy(), 0.0, attention, 0.0)["step_ms"]
    return (weights + kv) / t["per_token"].to_numpy()


def fit(rows: pd.DataFrame, prefill: pd.DataFrame | None = None) -> tuple[RooflineFit, pd.DataFrame]:
    """Fit the roofline form to prepared rows of one group (``analysis.scaling.inputs.prepare``); ``prefill``: the
    group's prefill records (:func:`prefill_rows`) for its compute share. The fit and the rows' terms (for
    :func:`predict`)."""
    t = _terms(rows)
    hardware = str(rows["hardware"].iloc[0])
    measured_prefill = prefill_flop_share(prefill) if prefill is not None and len(prefill) else None
    share, source = measured_prefill or flop_share(hardware, str(rows["precision"].iloc[0]))
    kv = kv_share_from_contexts(rows, t)
    meas = rows["step_ms"].to_numpy(float)
    if bool(t["moe"].any()):
        def shares(x):
            return x[1], (kv[0] if kv else x[1])
        x0, lo, hi = [0.05, 0.7], [OVERHEAD_BOUNDS[0], BW_SHARE_BOUNDS[0]], [OVERHEAD_BOUNDS[1], BW_SHARE_BOUNDS[1]]
        bw_source = "fitted (the touched experts' bytes grow with batch)"
    else:
        anchor, bw_source = bandwidth_share(hardware)

        def shares(x):
            return anchor, (kv[0] if kv else anchor)
        x0, lo, hi = [0.05], [OVERHEAD_BOUNDS[0]], [OVERHEAD_BOUNDS[1]]
    from scipy.optimize import least_squares  # here: importing the package (a claim card does) fits nothing

    res = least_squares(lambda x: np.log(_predict(x[0], *shares(x), share, t) / meas), x0, bounds=(lo, hi))
    bw, kv_bw = shares(res.x)
    kv_source = kv[1] if kv else "the weights' share (one context: KV not told apart from other per-sequence costs)"
    eff = st.Efficiency(bw_share=float(bw), flop_share=share, overhead_ms_per_layer=float(res.x[0]), overlap=1.0,
                        comm_scale=1.0)
    err = float(np.max(np.abs(_predict(res.x[0], bw, kv_bw, share, t) / meas - 1.0)))
    return RooflineFit(eff, float(kv_bw), source, bw_source, kv_source, err, len(rows)), t


def predict(fitted: RooflineFit, rows: pd.DataFrame) -> np.ndarray:
    """Step time per output token (ms) of ``fitted`` at prepared ``rows``' batches and contexts."""
    e = fitted.efficiency
    return _predict(e.overhead_ms_per_layer, e.bw_share, fitted.kv_bw_share, e.flop_share, _terms(rows))


def known(rows: pd.DataFrame) -> bool:
    """Whether the spec tables know the group's model and hardware (the form needs its bytes and FLOPs)."""
    return cb.known(rows["model"].iloc[0], rows["hardware"].iloc[0])
