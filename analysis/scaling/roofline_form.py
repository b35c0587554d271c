"""The roofline-shaped batch term for one configuration: fitted on its own points, for extrapolating in batch.

The linear batch model ``t0 + t1·B + t2·B·L`` is the in-range estimator; beyond the measured batches its slope,
read where small GEMMs cost more per row, keeps rising. This form is the performance model's equation
(:func:`analysis.perfmodel.step.step_time`): per-layer overhead + max(HBM bytes ÷ achieved bandwidth, FLOPs ÷
achieved rate) + measured collectives, with the bytes and FLOPs of the model at each point's batch and context
(:func:`analysis.perfmodel.step.terms`). Two parameters are fitted to the group's points — the overhead per layer
(≥ 0) and the achieved bandwidth share (≤ 1) — and the achieved compute share is the hardware's measured matmul
rate over its dense peak (hardware.csv / the H200 calibration records; 0.8 assumed where none is measured).
Physics anchors the extrapolation: at batch 1 the weight read bounds the bandwidth share from below, and
large batches turn compute-bound at the measured matmul rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from analysis import roofline, specs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import step as st
from analysis.text import plain, whole


@dataclass(frozen=True)
class RooflineFit:
    """One group's fitted overhead and bandwidth share, the fixed compute share, and how well it fits."""

    efficiency: st.Efficiency
    flop_share_source: str
    max_abs_rel_error: float
    n_points: int


def _terms(rows: pd.DataFrame) -> pd.DataFrame:
    out = []
    for rec in rows.to_dict(orient="records"):
        dep = cb.deployment(rec)
        tau, verify, _ = st.speculation(dep, assumed_tau=1.0)
        geo = st.geometry(dep, verify=verify)
        par = st.parallelism(dep)
        t = st.terms(geo, float(rec["batch"]) / par.workers)
        out.append({"memory_ms": float(t["memory_ms"][0]), "compute_ms": float(t["compute_ms"][0]),
                    "collectives_ms": float(t["collectives_ms"][0]), "layers": geo.layers,
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


def _predict(x, t: pd.DataFrame, share: float) -> np.ndarray:
    eff = st.Efficiency(bw_share=x[1], flop_share=share, overhead_ms_per_layer=x[0], overlap=1.0, comm_scale=1.0)
    return st.step_time(t["memory_ms"].to_numpy(), t["compute_ms"].to_numpy(), t["collectives_ms"].to_numpy(), eff,
                        t["layers"].to_numpy())["step_ms"] / t["per_token"].to_numpy()


def fit(rows: pd.DataFrame) -> tuple[RooflineFit, pd.DataFrame]:
    """Fit the roofline form to prepared rows of one group (``analysis.scaling.inputs.prepare``); the fit and the
    rows' terms (for :func:`predict`)."""
    t = _terms(rows)
    share, source = flop_share(str(rows["hardware"].iloc[0]), str(rows["precision"].iloc[0]))
    meas = rows["step_ms"].to_numpy(float)
    res = least_squares(lambda x: np.log(_predict(x, t, share) / meas), [0.05, 0.7], bounds=([0.0, 0.02], [2.0, 1.0]))
    eff = st.Efficiency(bw_share=float(res.x[1]), flop_share=share, overhead_ms_per_layer=float(res.x[0]), overlap=1.0,
                        comm_scale=1.0)
    err = float(np.max(np.abs(_predict(res.x, t, share) / meas - 1.0)))
    return RooflineFit(eff, source, err, len(rows)), t


def predict(fitted: RooflineFit, rows: pd.DataFrame) -> np.ndarray:
    """Step time per output token (ms) of ``fitted`` at prepared ``rows``' batches and contexts."""
    e = fitted.efficiency
    return _predict([e.overhead_ms_per_layer, e.bw_share], _terms(rows), e.flop_share)


def known(rows: pd.DataFrame) -> bool:
    """Whether the spec tables know the group's model and hardware (the form needs its bytes and FLOPs)."""
    return cb.known(rows["model"].iloc[0], rows["hardware"].iloc[0])
