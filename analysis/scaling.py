"""The batch model: decode step time against batch size and context, fitted per configuration.

A decode step for ``B`` sequences at mean context ``L`` costs ``t(B, L) = t0 + t1·B + t2·B·L`` ms (dense: weights
once, per-sequence work, KV reads). The MoE-aware variant adds ``tm·C(B)`` where ``C(B) = E·(1 − (1 − k/E)^(B·τ))``
is the expected number of experts touched per layer under uniform routing (or the measured count, see
``coverage=``), because each touched expert's weights are read once per step. Coefficients are fitted per group
by bounded robust least squares on relative residuals. The coefficients are times, so their lower bounds are
physical: 0, or — when the model geometry and the GPU's measured ceilings are known (``floors=``, see
:func:`floor_inputs`) — the time one more sequence must add at best (its KV cache read at the measured copy
bandwidth plus its matmul FLOPs at the measured matmul rate; see :func:`sequence_floors`). The variant is chosen by
leave-one-batch-out cross-validation, and every derived number (single-user peak, capacity, asymptote, B½, the
batch where tok/s/user falls below a level) carries a bootstrap interval over points and over repeats.

Serving logs enter with ``B`` = the achieved decoding concurrency (the tool's batch size when it reports one,
else ``concurrency·(e2e − ttft)/e2e``: the share of each request's life spent decoding) and step time = TPOT.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq, least_squares, nnls

from analysis import config, schema

# Configuration columns that define one model instance; context is not among them: the model handles it via L.
DEFAULT_BY = ["model", "hardware", "precision", "framework", "scope", "n_gpus", "tp", "ep", "disagg",
              "spec_decode", "isl", "osl"]
VARIANTS = ("dense", "moe")
LEVELS_TOK_S_PER_USER = (100.0, 50.0, 20.0)
COEFS = ("t0_ms", "t1_ms", "t2_ms", "tm_ms")
MIN_BATCHES = 3
# Relative residual below which soft_l1 is quadratic: step timings repeat to ~1%, configurations differ by more.
F_SCALE = 0.05
STEP_PHASES = ("decode", "offline")
SERVING_PHASES = ("serving",)


class ScalingWarning(UserWarning):
    """A fit that is degenerate: a coefficient pinned at its bound, too few distinct batches, no MoE geometry."""


# --- points into model inputs ---------------------------------------------------------------------
def load_points(path=None):
    """The points table (see :func:`analysis.data.load_points`)."""
    from analysis import data

    return data.load_points(path)


def _col(points: pd.DataFrame, name: str) -> pd.Series:
    return points[name] if name in points.columns else pd.Series(np.nan, index=points.index)


def prepare(points: pd.DataFrame) -> pd.DataFrame:
    """Rows a fit can use, with ``batch``, ``context``, ``step_ms``, ``tau`` and where each came from.

    Step-timing rows (phase decode/offline) use ``step_ms`` and ``batch_size``. Serving rows use TPOT (p50, else
    mean) as the step time and the reported batch size, else the achieved decoding concurrency
    ``concurrency·(e2e − ttft)/e2e`` (Little's law: a request decodes for e2e − ttft of its e2e), else the nominal
    concurrency. Context is ``context_len``, else ``isl + osl/2`` (the mean context over the decode).
    """
    p = points.copy()
    if "flags" in p.columns and "tok_s_per_user" in p.columns:
        p = p[schema.usable_for_fits(p)]
    phase = _col(p, "phase").astype(str)
    step_rows = phase.isin(STEP_PHASES) & (_col(p, "step_ms") > 0)
    serving = phase.isin(SERVING_PHASES) & ~step_rows

    tpot = _col(p, "tpot_ms_p50").where(_col(p, "tpot_ms_p50") > 0, _col(p, "tpot_ms_mean"))
    step = _col(p, "step_ms").where(step_rows, tpot.where(serving))
    e2e = _col(p, "e2e_ms_mean").fillna(_col(p, "e2e_ms_p50"))
    ttft = _col(p, "ttft_ms_mean").fillna(_col(p, "ttft_ms_p50"))
    achieved = _col(p, "concurrency") * (e2e - ttft) / e2e
    batch = _col(p, "batch_size")
    source = pd.Series(np.where(batch.notna(), "reported", ""), index=p.index, dtype=object)
    derive = batch.isna() & serving & achieved.gt(0)
    batch = batch.where(~derive, achieved)
    source[derive] = "concurrency*(e2e-ttft)/e2e"
    nominal = batch.isna() & _col(p, "concurrency").gt(0)
    batch = batch.where(~nominal, _col(p, "concurrency"))
    source[nominal] = "concurrency"

    context = _col(p, "context_len").fillna(_col(p, "isl") + _col(p, "osl") / 2)
    # TPOT is already per output token, so serving rows take tau = 1 whatever the speculative decoding.
    tau = _col(p, "tokens_per_step").where(step_rows, 1.0).fillna(1.0)
    p = p.assign(batch=batch, context=context, step_ms_fit=step, tau=tau, batch_source=source,
                 step_source=np.where(step_rows, "step_ms", "tpot"))
    p = p[(p["batch"] > 0) & (p["step_ms_fit"] > 0)].copy()
    p["step_ms"] = p["step_ms_fit"]
    p = p.drop(columns="step_ms_fit")
    p["tok_s_per_user_fit"] = 1000.0 * p["tau"] / p["step_ms"]
    p["tok_s_fit"] = p["batch"] * p["tok_s_per_user_fit"]
    return p


def coverage(batch, experts, top_k, tau=1.0):
    """Expected distinct experts touched per layer by ``batch·tau`` tokens under uniform top-k routing."""
    batch = np.asarray(batch, dtype=float)
    return experts * (1.0 - (1.0 - top_k / experts) ** (batch * tau))


# --- physical lower bounds of the per-sequence terms ---------------------------------------------
KV_BYTES_PER_VALUE = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp32": 4.0}
# Kernels launched one by one from Python: the GPU idles between launches, so added GPU work first fills those
# gaps and the step's per-sequence cost is not bounded below by GPU time.
HOST_BOUND_FRAMEWORKS = ("pytorch-eager",)


def floor_inputs(step_logs, *, points: pd.DataFrame | None = None) -> dict:
    """Model geometry and measured ceilings from step-timing logs (their ``model`` and ``calibration`` records).

    ``step_logs``: files or folders of step-timing JSON lines (``data/raw/h200``). Returns ``{"models": {shape:
    geometry}, "ceilings": {hardware: {"copy_tb_s", "matmul_tflop_s": {precision: rate}}}}``. A log's ceilings
    belong to the hardware its points carry in ``points`` (the manifest names it; the log only says ``gpu``), else
    to the log's ``env`` GPU name.
    """
    from analysis.ingest.h200_steps import calibrations

    files = []
    for path in ([step_logs] if isinstance(step_logs, (str, Path)) else step_logs):
        path = Path(path)
        files += sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    models, ceilings = {}, {}
    for path in files:
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for rec in records:
            if rec.get("kind") == "model" and rec.get("shape"):
                models.setdefault(str(rec["shape"]), {}).update(
                    {k: v for k, v in rec.items() if k not in ("kind", "shape", "precision", "t_wall_s")})
        cal = calibrations(path)
        if not cal:
            continue
        hardware = _hardware_of(path, points) or next(
            (str(r["gpu"]) for r in records if r.get("kind") == "env" and r.get("gpu")), "unknown")
        entry = ceilings.setdefault(hardware, {"copy_tb_s": math.nan, "matmul_tflop_s": {}, "source": str(path)})
        for c in cal:
            what = str(c.get("what", ""))
            if what.endswith("copy") and c.get("tb_s"):
                entry["copy_tb_s"] = float(c["tb_s"])
            elif what.startswith("matmul_") and c.get("tflop_s"):
                entry["matmul_tflop_s"][schema.normalize_precision(what.split("_", 1)[1])] = float(c["tflop_s"])
    return {"models": models, "ceilings": ceilings}


def _hardware_of(path: Path, points: pd.DataFrame | None) -> str | None:
    if points is None or "source_file" not in points.columns or "hardware" not in points.columns:
        return None
    same = points["source_file"].astype(str).map(lambda s: Path(s).name == path.name)
    hw = points.loc[same, "hardware"].dropna()
    return str(hw.iloc[0]) if len(hw) else None


def _matmul_params_per_token(geo: dict) -> float:
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


def sequence_floors(g: pd.DataFrame, floors: dict | None, *, t2_identified: bool) -> tuple[float, float, str]:
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
    framework = str(g["framework"].iloc[0]) if "framework" in g.columns else ""
    if framework in HOST_BOUND_FRAMEWORKS:
        return 0.0, 0.0, f"none: {framework} launches are host-bound, GPU work hides in launch gaps"
    hw = str(g["hardware"].iloc[0]) if "hardware" in g.columns else ""
    ceil = floors.get("ceilings", {}).get(hw)
    if not ceil or not np.isfinite(ceil.get("copy_tb_s", math.nan)):
        return 0.0, 0.0, ""
    model = str(g["model"].iloc[0]) if "model" in g.columns else ""
    geo = floors.get("models", {}).get(model, {})
    precision = str(g["precision"].iloc[0]) if "precision" in g.columns else ""
    rates = ceil.get("matmul_tflop_s", {})
    # Unknown precision: the fastest measured rate keeps the bound a lower bound.
    tflop_s = rates.get(precision, max(rates.values(), default=math.nan))
    kv_dtype = str(g["kv_dtype"].iloc[0]) if "kv_dtype" in g.columns else "bf16"
    if all(geo.get(k) for k in ("layers", "kv_heads", "head_dim")):
        kv_per_token = geo["layers"] * 2 * geo["kv_heads"] * geo["head_dim"] * KV_BYTES_PER_VALUE.get(kv_dtype, 2.0)
        kv_from = "geometry"
    else:
        per = _col(g, "kv_bytes_read") / (g["batch"] * g["context"])
        kv_per_token = float(per.median()) if per.notna().any() else math.nan
        kv_from = "kv_bytes_read"
    if not np.isfinite(kv_per_token):
        return 0.0, 0.0, ""
    attn_flops = 4.0 * geo["q_heads"] * geo["head_dim"] * geo["layers"] if geo.get("q_heads") else 0.0
    matmul_flops = 2.0 * _matmul_params_per_token(geo)
    has_rate = np.isfinite(tflop_s) and tflop_s > 0
    attn_ms = max(kv_per_token / (ceil["copy_tb_s"] * 1e12),
                  attn_flops / (tflop_s * 1e15) if has_rate else 0.0) * 1e3
    matmul_ms = matmul_flops / (tflop_s * 1e12) * 1e3 if has_rate and np.isfinite(matmul_flops) else 0.0
    flops_text = (f" + {matmul_flops / 1e9:.2f} GFLOP/token matmul at {tflop_s:.0f} TFLOP/s ({precision})"
                  if matmul_ms > 0 else " (matmul FLOPs unknown: not bounded)")
    if floors.get("combine", "sum") == "max":
        if t2_identified:  # the larger term bounds its own coefficient alone
            return (matmul_ms, 0.0, "") if matmul_ms > attn_ms else (0.0, attn_ms, "")
        context = float(np.nanmedian(g["context"])) if g["context"].notna().any() else 0.0
        return max(attn_ms * context, matmul_ms), 0.0, "max(KV read, matmul FLOPs): perfect overlap assumed"
    if t2_identified:
        return matmul_ms, attn_ms, (f"KV {kv_per_token / 1e3:.1f} kB per context token ({kv_from}) at "
                                    f"{ceil['copy_tb_s']:.2f} TB/s{flops_text}")
    context = float(np.nanmedian(g["context"])) if g["context"].notna().any() else 0.0
    return attn_ms * context + matmul_ms, 0.0, (
        f"KV {kv_per_token * context / 1e6:.1f} MB/seq at L={context:g} ({kv_from}) at {ceil['copy_tb_s']:.2f} "
        f"TB/s{flops_text}")


# --- one group ------------------------------------------------------------------------------------
@dataclass
class GroupFit:
    """One configuration's fit: the coefficients, their bootstrap draws, and how the variant was chosen."""

    keys: dict
    label: str
    status: str = "fitted"
    variant: str = ""
    coef: np.ndarray = field(default_factory=lambda: np.full(4, np.nan))
    boot: np.ndarray = field(default_factory=lambda: np.empty((0, 4)))
    cv_error: dict = field(default_factory=dict)
    cv_error_max: dict = field(default_factory=dict)
    fit_error_max: dict = field(default_factory=dict)
    t2_identified: bool = True
    experts: float = math.nan
    top_k: float = math.nan
    coverage_source: str = ""
    lower: np.ndarray = field(default_factory=lambda: np.zeros(4))
    floor_source: str = ""
    notes: list = field(default_factory=list)
    geometry_source: str = ""
    form_note: str = ""
    at_bound: list = field(default_factory=list)  # (coefficient, bound ms) pairs the fit sits on


def _design(batch, context, cov, *, t2: bool, moe: bool) -> np.ndarray:
    """Design matrix with the four coefficient columns; unused ones are zero so coefficients stay 0."""
    batch = np.asarray(batch, float)
    ctx = np.nan_to_num(np.asarray(context, float)) if t2 else np.zeros_like(batch)
    cov = np.asarray(cov, float) if moe else np.zeros_like(batch)
    return np.column_stack([np.ones_like(batch), batch, batch * ctx, cov])


def _solve(X: np.ndarray, y: np.ndarray, x0: np.ndarray | None = None, lower: np.ndarray | None = None) -> np.ndarray:
    """Bounded (≥ ``lower``, default 0) soft-L1 least squares on relative residuals; unused columns stay at zero."""
    used = np.any(X != 0, axis=0)
    lo = np.zeros(X.shape[1]) if lower is None else np.asarray(lower, float)
    A = X[:, used] / y[:, None]
    if x0 is None or not np.all(np.isfinite(x0[used])):
        start, _ = nnls(A, np.ones(len(y)))
    else:
        start = x0[used]
    start = np.maximum(start, lo[used])
    res = least_squares(lambda t: A @ t - 1.0, start, jac=lambda t: A, bounds=(lo[used], np.inf),
                        loss="soft_l1", f_scale=F_SCALE, x_scale="jac", method="trf")
    out = np.zeros(X.shape[1])
    out[used] = res.x
    return out


def _step(coef: np.ndarray, batch, context, cov) -> np.ndarray:
    batch = np.asarray(batch, float)
    ctx = np.nan_to_num(np.asarray(context, float))
    cov = np.nan_to_num(np.asarray(cov, float))
    return coef[0] + coef[1] * batch + coef[2] * batch * ctx + coef[3] * cov


def _cv(batch, X, y, lower=None) -> tuple[float, float]:
    """Leave-one-batch-out relative error: mean over held-out batches, and the worst batch."""
    errs = []
    for b in np.unique(batch):
        held = batch == b
        if (~held).sum() < 2:
            continue
        coef = _solve(X[~held], y[~held], lower=lower)
        errs.append(np.mean(np.abs(X[held] @ coef - y[held]) / y[held]))
    return (float(np.mean(errs)), float(np.max(errs))) if errs else (math.nan, math.nan)


def spec_geometry(model: str) -> tuple[float, float, str]:
    """``(experts, top_k, source)`` of a model from the spec table (:mod:`analysis.specs`).

    A dense model in the table gives ``(0, 0, ...)``; a model the table does not hold gives NaN and an empty source,
    so the caller can say the MoE form was not tried for lack of geometry rather than silently fitting dense.
    """
    from analysis import specs

    try:
        rec = specs.model(model)
    except (KeyError, ValueError, OSError):
        return math.nan, math.nan, ""
    return float(rec.n_experts), float(rec.top_k), f"models.csv ({rec.name})"


def _moe_geometry(g: pd.DataFrame, model_table: dict | None) -> tuple[float, float, str]:
    """Experts and top-k for a group: its points, else ``model_table`` (the step logs' model records), else the
    spec table. The third value names the source; ``(nan, nan, "")`` when nothing knows the model."""
    experts = _col(g, "moe_experts").dropna()
    top_k = _col(g, "moe_top_k").dropna()
    if len(experts) and len(top_k):
        return float(experts.iloc[0]), float(top_k.iloc[0]), "points"
    model = str(g["model"].iloc[0]) if "model" in g.columns else ""
    if model_table:
        entry = model_table.get(model) or model_table.get(model.lower()) or {}
        if entry.get("experts") and entry.get("top_k"):
            return float(entry["experts"]), float(entry["top_k"]), "step-log model record"
    return spec_geometry(model) if model else (math.nan, math.nan, "")


def fit_group(g: pd.DataFrame, *, keys: dict | None = None, variants=VARIANTS, n_boot: int = 200,
              seed: int = 0, model_table: dict | None = None, coverage_source: str = "uniform",
              floors: dict | None = None) -> GroupFit:
    """Fit one group of prepared rows (see :func:`prepare`); degenerate fits warn with :class:`ScalingWarning`.

    ``floors`` (from :func:`floor_inputs`) gives t1/t2 their physical lower bounds where geometry and ceilings are
    known; elsewhere they stay at 0. ``model_table`` defaults to the geometry in ``floors``.
    """
    keys = keys or {}
    if model_table is None and floors:
        model_table = floors.get("models")
    out = GroupFit(keys=keys, label=_label(keys))
    batch = g["batch"].to_numpy(float)
    n_batches = len(np.unique(np.round(batch, 6)))
    if n_batches < MIN_BATCHES:
        out.status = f"not fitted: {n_batches} batch size(s), need {MIN_BATCHES}"
        return out
    y = g["step_ms"].to_numpy(float)
    context = g["context"].to_numpy(float)
    tau = g["tau"].to_numpy(float)
    out.t2_identified = bool(np.isfinite(context).all() and np.ptp(context) > 0)
    if not out.t2_identified:
        out.notes.append("one context: t2 not identified, per-sequence KV cost folded into t1")

    t1_floor, t2_floor, out.floor_source = sequence_floors(g, floors, t2_identified=out.t2_identified)
    out.lower = np.array([0.0, t1_floor, t2_floor if out.t2_identified else 0.0, 0.0])

    out.experts, out.top_k, out.geometry_source = _moe_geometry(g, model_table)
    cov = np.zeros_like(batch)
    tried = [v for v in variants if v in VARIANTS]
    if "moe" in tried:
        if not (np.isfinite(out.experts) and np.isfinite(out.top_k)):
            tried.remove("moe")
            model = str(g["model"].iloc[0]) if "model" in g.columns else "this model"
            out.form_note = f"MoE form not tried: no expert geometry for {model}"
        elif out.experts <= 0 or out.top_k <= 0:  # a dense model in the spec table: nothing to try
            tried.remove("moe")
            out.experts = out.top_k = math.nan
        elif coverage_source == "measured" and _col(g, "experts_touched").notna().all():
            cov = g["experts_touched"].to_numpy(float)
            out.coverage_source = "measured experts_touched"
        else:
            cov = coverage(batch, out.experts, out.top_k, tau)
            out.coverage_source = "uniform E(1-(1-k/E)^(B·tau))"
    if not tried:
        raise ValueError(f"variants {variants!r}: expected some of {VARIANTS}")

    designs = {v: _design(batch, context, cov, t2=out.t2_identified, moe=v == "moe") for v in tried}
    for v, X in designs.items():
        out.cv_error[v], out.cv_error_max[v] = _cv(np.round(batch, 6), X, y, out.lower)
        out.fit_error_max[v] = float(np.max(np.abs(X @ _solve(X, y, lower=out.lower) - y) / y))
    # Prefer the simpler model on a tie: MoE must beat dense out of sample, not just match it.
    out.variant = min(tried, key=lambda v: (out.cv_error[v] if np.isfinite(out.cv_error[v]) else np.inf,
                                            VARIANTS.index(v)))
    if out.variant != "moe":
        out.coverage_source = ""
    X = designs[out.variant]
    out.coef = _solve(X, y, lower=out.lower)
    out.boot = _bootstrap(g, X, y, out.coef, n_boot=n_boot, seed=seed, lower=out.lower)

    used = np.any(X != 0, axis=0)
    scale = np.abs(X).max(axis=0)
    tol = 1e-6 * np.median(y)
    at_bound = [i for i in range(4) if used[i] and (out.coef[i] - out.lower[i]) * scale[i] < tol]
    # The optimiser stops a hair above a bound (1e-26 ms): a coefficient on its bound is reported as the bound.
    for i in at_bound:
        out.coef[i] = out.lower[i]
    if len(out.boot):
        near = (out.boot - out.lower) * scale < tol
        out.boot = np.where(near & used, out.lower, out.boot)
    out.at_bound = [(COEFS[i], float(out.lower[i])) for i in at_bound]
    pinned = [COEFS[i] for i in at_bound if out.lower[i] == 0]
    floored = [COEFS[i] for i in at_bound if out.lower[i] > 0]
    if pinned:
        out.notes.append(f"{', '.join(pinned)} at bound 0 (not identified by these batches)")
    if floored:
        out.notes.append(f"{', '.join(f'{c} at its physical floor {out.lower[COEFS.index(c)]:.4g} ms' for c in floored)}"
                         f" (not identified above it by these batches; floor: {out.floor_source})")
        pinned = pinned + floored
    if np.linalg.matrix_rank(X[:, used] / y[:, None]) < used.sum():
        out.notes.append("design rank-deficient")
    if pinned or "design rank-deficient" in out.notes:
        warnings.warn(f"{out.label}: degenerate {out.variant} fit: {'; '.join(out.notes)}", ScalingWarning,
                      stacklevel=3)
    return out


def _bootstrap(g, X, y, coef, *, n_boot: int, seed: int, lower=None) -> np.ndarray:
    """Refit on points drawn with replacement; each drawn point's step is the median of its resampled repeats."""
    if n_boot <= 0:
        return np.empty((0, 4))
    rng = np.random.default_rng(seed)
    samples = [np.asarray(s, float) if isinstance(s, (list, tuple, np.ndarray)) and len(s) else None
               for s in _col(g, "step_ms_samples").tolist()]
    # Repeats are at the row's own tau/batch, so rescaling keeps TPOT-derived rows untouched.
    draws = np.empty((n_boot, 4))
    n = len(y)
    for i in range(n_boot):
        idx = rng.integers(0, n, n)
        yi = np.array([np.median(rng.choice(samples[j], len(samples[j]))) if samples[j] is not None else y[j]
                       for j in idx])
        draws[i] = _solve(X[idx], yi, coef, lower)
    return draws


# --- derived numbers ------------------------------------------------------------------------------
def _step_at(coef, batch, context, experts, top_k, tau):
    cov = coverage(batch, experts, top_k, tau) if coef[3] > 0 and np.isfinite(experts) else 0.0
    return _step(coef, batch, context, cov)


def _b_half(coef, context, experts, top_k, tau) -> float:
    """Batch where fixed and per-sequence costs are equal: t0 + tm·C(B) = (t1 + t2·L)·B.

    For the dense model this is t0/(t1 + t2·L); there per-user speed has halved from its zero-load value and
    throughput reached half its asymptote. With MoE the expert term counts as fixed cost (it saturates at E).
    """
    slope = coef[1] + coef[2] * np.nan_to_num(context)
    if slope <= 1e-9 * max(coef[0], 1e-12):
        return math.inf
    if coef[3] <= 0 or not np.isfinite(experts):
        return coef[0] / slope
    f = lambda b: coef[0] + coef[3] * coverage(b, experts, top_k, tau) - slope * b  # noqa: E731
    hi = 2.0 * (coef[0] + coef[3] * experts) / slope + 1.0
    if f(hi) >= 0:
        return math.inf
    return float(brentq(f, 1e-9, hi)) if f(1e-9) > 0 else 0.0


def _batch_below(coef, level, context, experts, top_k, tau) -> float:
    """Batch at which tok/s/user falls to ``level``; NaN if already below at batch 1."""
    target = 1000.0 * tau / level
    f = lambda b: float(_step_at(coef, b, context, experts, top_k, tau)) - target  # noqa: E731
    if f(1.0) >= 0:
        return math.nan
    hi = 2.0
    while f(hi) < 0:
        hi *= 2
        if hi > 1e9:
            return math.inf
    return float(brentq(f, 1.0, hi))


def _derived(coef, *, context, batch_max, experts, top_k, tau, n_gpus, levels) -> dict:
    step1 = float(_step_at(coef, 1.0, context, experts, top_k, tau))
    stepc = float(_step_at(coef, batch_max, context, experts, top_k, tau))
    slope = coef[1] + coef[2] * np.nan_to_num(context)
    # A per-sequence cost pinned at its bound means no measured saturation: the asymptote is unbounded.
    asym = 1000.0 * tau / slope if slope * batch_max > 1e-6 * step1 else math.inf
    out = {
        "peak_tok_s_per_user_model": 1000.0 * tau / step1,
        "capacity_tok_s_model": batch_max * 1000.0 * tau / stepc,
        "asymptote_tok_s": asym,
        "asymptote_tok_s_per_gpu": asym / n_gpus if n_gpus > 0 else math.nan,
        "b_half": _b_half(coef, context, experts, top_k, tau),
    }
    for level in levels:
        out[f"batch_below_{level:g}_tok_s_per_user"] = _batch_below(coef, level, context, experts, top_k, tau)
    return out


def _interval(values) -> tuple[float, float]:
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return math.nan, math.nan
    return float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))


def _repeat_interval(samples, fn, *, n: int = 200, seed: int = 0) -> tuple[float, float]:
    """Interval of ``fn(median step)`` from resampling one point's repeats."""
    if not isinstance(samples, (list, tuple, np.ndarray)) or len(samples) < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    s = np.asarray(samples, float)
    return _interval([fn(np.median(rng.choice(s, len(s)))) for _ in range(n)])


# --- all groups -----------------------------------------------------------------------------------
def _label(keys: dict) -> str:
    parts = []
    for k, v in keys.items():
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or v == schema.UNKNOWN:
            continue
        if k == "n_gpus":
            parts.append(f"{v:g} GPU" if isinstance(v, float) else f"{v} GPU")
        elif k in ("tp", "ep"):
            parts.append(f"{k.upper()}{v:g}")
        elif k in ("isl", "osl"):
            parts.append(f"{k.upper()} {v:g}")
        elif k == "disagg":
            if v is True:
                parts.append("disagg")
        elif k == "spec_decode":
            if v not in ("none", schema.UNKNOWN):
                parts.append(str(v))
        else:
            parts.append(str(v))
    return " | ".join(parts) or "all points"


def groups(prepared: pd.DataFrame, by: list[str] | None = None):
    """(keys, rows) per group; missing key values (NaN, unknown) group together instead of being dropped."""
    by = [c for c in (by or DEFAULT_BY) if c in prepared.columns]
    if not by:
        yield {}, prepared
        return
    for values, g in prepared.groupby(by, dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        yield {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(by, values)}, g


def fit(points: pd.DataFrame, *, by: list[str] | None = None, variants=VARIANTS, n_boot: int = 200,
        seed: int = 0, levels=LEVELS_TOK_S_PER_USER, model_table: dict | None = None,
        coverage_source: str = "uniform", floors: dict | None = None) -> pd.DataFrame:
    """One row per group: variant, CV error, coefficients, peak, capacity, asymptote, B½, each with an interval.

    Groups with fewer than three batch sizes are listed with ``status`` saying why they were not fitted.
    ``floors`` (from :func:`floor_inputs`): physical lower bounds of t1/t2, reported as ``t1_floor_ms``,
    ``t2_floor_ms`` and ``floor_source`` (empty where no geometry or ceiling was known and the bound is 0).
    ``fits.attrs["boot"]`` keeps each group's bootstrap coefficient draws (by ``group``) for :func:`curves`.
    """
    prepared = prepare(points)
    rows, boots = [], {}
    for keys, g in groups(prepared, by):
        gf = fit_group(g, keys=keys, variants=variants, n_boot=n_boot, seed=seed, model_table=model_table,
                       coverage_source=coverage_source, floors=floors)
        rows.append(_row(gf, g, levels=levels, seed=seed))
        boots[gf.label] = gf.boot.tolist()  # plain lists: pandas compares attrs with ==, arrays would not do
    fits = pd.DataFrame(rows)
    fits.attrs["boot"] = boots
    fits.attrs["by"] = [c for c in (by or DEFAULT_BY) if c in prepared.columns]
    return fits


def _row(gf: GroupFit, g: pd.DataFrame, *, levels, seed: int) -> dict:
    batch = g["batch"].to_numpy(float)
    row = {**gf.keys, "group": gf.label, "status": gf.status, "n_points": len(g),
           "n_batches": len(np.unique(np.round(batch, 6))) if len(g) else 0,
           "batch_min": float(batch.min()) if len(g) else math.nan,
           "batch_max": float(batch.max()) if len(g) else math.nan,
           "context_min": float(g["context"].min()) if len(g) else math.nan,
           "context_max": float(g["context"].max()) if len(g) else math.nan,
           "batch_source": ";".join(sorted(set(g["batch_source"]))) if len(g) else "",
           "step_source": ";".join(sorted(set(g["step_source"]))) if len(g) else ""}
    if gf.status != "fitted":
        row["notes"] = gf.status
        return row
    n_gpus = float(g["n_gpus"].iloc[0]) if "n_gpus" in g.columns else math.nan
    tau = float(g["tau"].median())
    # Derived numbers are stated at the context of the largest measured batch, where capacity was measured.
    at_max = g[np.isclose(batch, batch.max())]
    context_ref = float(at_max["context"].mode().min()) if at_max["context"].notna().any() else math.nan
    row.update(variant=gf.variant, fitted_form=_fitted_form(gf), moe_geometry_source=gf.geometry_source,
               at_bound="; ".join(f"{c} at {'its physical floor ' if b > 0 else 'bound '}{b:.4g} ms"
                                  for c, b in gf.at_bound),
               moe_coverage=gf.coverage_source, moe_experts=gf.experts, moe_top_k=gf.top_k,
               t2_identified=gf.t2_identified, tau=tau, n_gpus_denominator=n_gpus, context_ref=context_ref,
               t1_floor_ms=float(gf.lower[1]), t2_floor_ms=float(gf.lower[2]), floor_source=gf.floor_source)
    for v in VARIANTS:
        row[f"cv_error_{v}"] = gf.cv_error.get(v, math.nan)
        row[f"cv_error_max_{v}"] = gf.cv_error_max.get(v, math.nan)
        row[f"max_abs_rel_error_{v}"] = gf.fit_error_max.get(v, math.nan)
    row["cv_error"] = gf.cv_error[gf.variant]
    row["cv_error_max"] = gf.cv_error_max[gf.variant]
    for i, name in enumerate(COEFS):
        row[name] = float(gf.coef[i])
        row[f"{name}_lo"], row[f"{name}_hi"] = _interval(gf.boot[:, i]) if len(gf.boot) else (math.nan,) * 2

    kw = dict(context=context_ref, batch_max=float(batch.max()), experts=gf.experts, top_k=gf.top_k, tau=tau,
              n_gpus=n_gpus, levels=levels)
    point = _derived(gf.coef, **kw)
    draws = [_derived(c, **kw) for c in gf.boot]
    for name, value in point.items():
        row[name] = value
        row[f"{name}_lo"], row[f"{name}_hi"] = _interval([d[name] for d in draws])
        if name == "b_half" or name.startswith("batch_below_"):
            row[f"{name}_lo"], row[f"{name}_hi"] = _identified(row[f"{name}_lo"], row[f"{name}_hi"],
                                                               float(batch.min()), float(batch.max()))

    pred = _step(gf.coef, batch, g["context"].to_numpy(float),
                 coverage(batch, gf.experts, gf.top_k, g["tau"].to_numpy(float)) if gf.variant == "moe" else 0)
    rel = (pred - g["step_ms"].to_numpy(float)) / g["step_ms"].to_numpy(float)
    row["max_abs_rel_error"] = float(np.max(np.abs(rel)))

    row.update(_measured(g, context_ref, n_gpus, seed=seed))
    row["marginal_ms_per_seq_top"] = _top_marginal(g, context_ref)
    row["floor_ms_per_seq_at_ref"] = float(gf.lower[1] + gf.lower[2] * np.nan_to_num(context_ref))
    row["peak_model_error"] = (row["peak_tok_s_per_user_model"] / row["peak_tok_s_per_user"] - 1.0
                               if np.isfinite(row.get("peak_tok_s_per_user", math.nan)) else math.nan)
    row["notes"] = "; ".join(gf.notes)
    return row


# A bootstrap bound on a batch-valued number this far outside the measured batches is not identified by them.
UNIDENTIFIED_FACTOR = 100.0


def _identified(lo: float, hi: float, batch_min: float, batch_max: float) -> tuple[float, float]:
    """Interval ends on a batch scale, NaN where the bootstrap ran away (beyond ``UNIDENTIFIED_FACTOR`` times the
    measured batch range on either side): the batches measured say nothing about a B½ of 10⁹ or 10⁻¹⁰."""
    lo = lo if np.isfinite(lo) and lo >= batch_min / UNIDENTIFIED_FACTOR else math.nan
    hi = hi if np.isfinite(hi) and hi <= batch_max * UNIDENTIFIED_FACTOR else math.nan
    return lo, hi


def _fitted_form(gf: GroupFit) -> str:
    """The model form in words: ``moe (128 experts, top-8)``, ``dense``, or dense with why MoE was not tried."""
    if gf.variant == "moe":
        return f"moe ({gf.experts:g} experts, top-{gf.top_k:g})"
    if gf.form_note:
        return f"dense ({gf.form_note})"
    if np.isfinite(gf.experts):
        return f"dense (MoE form, {gf.experts:g} experts top-{gf.top_k:g}, tried: not better held out)"
    return gf.variant


def _top_marginal(g: pd.DataFrame, context_ref: float) -> float:
    """Measured step-time increase per added sequence between the two largest batches at the reference context:
    what a per-sequence floor must not exceed if it is a true lower bound."""
    ref = g[np.isclose(g["context"], context_ref)] if np.isfinite(context_ref) else g
    steps = ref.groupby("batch")["step_ms"].median().sort_index()
    if len(steps) < 2:
        return math.nan
    return float((steps.iloc[-1] - steps.iloc[-2]) / (steps.index[-1] - steps.index[-2]))


def _measured(g: pd.DataFrame, context_ref: float, n_gpus: float, *, seed: int) -> dict:
    """Measured batch-1 speed and largest-batch capacity at the reference context, intervals from repeats."""
    out = {}
    ctx_ok = np.isclose(g["context"], context_ref) if np.isfinite(context_ref) else np.ones(len(g), bool)
    ref = g[ctx_ok]
    one = ref[np.isclose(ref["batch"], 1.0)]
    if len(one):
        r = one.iloc[0]
        out["peak_tok_s_per_user"] = float(r["tok_s_per_user_fit"])
        out["peak_tok_s_per_user_lo"], out["peak_tok_s_per_user_hi"] = _repeat_interval(
            r.get("step_ms_samples"), lambda s: 1000.0 * r["tau"] / s, seed=seed)
    else:
        out["peak_tok_s_per_user"] = out["peak_tok_s_per_user_lo"] = out["peak_tok_s_per_user_hi"] = math.nan
    big = ref.loc[ref["batch"].idxmax()] if len(ref) else g.loc[g["batch"].idxmax()]
    b = float(big["batch"])
    # Serving logs measured system output throughput; step logs give batch × per-user speed.
    measured_out = big.get("output_tok_s")
    cap = float(measured_out) if big["step_source"] == "tpot" and pd.notna(measured_out) else float(big["tok_s_fit"])
    lo, hi = _repeat_interval(big.get("step_ms_samples"), lambda s: b * 1000.0 * big["tau"] / s, seed=seed)
    tlo, thi = _repeat_interval(big.get("step_ms_samples"), lambda s: s, seed=seed)
    per_gpu = (lambda x: x / n_gpus) if n_gpus > 0 else (lambda x: math.nan)
    out.update(capacity_batch=b, capacity_context=float(big["context"]), capacity_tok_s=cap,
               capacity_tok_s_lo=lo, capacity_tok_s_hi=hi, capacity_tok_s_per_gpu=per_gpu(cap),
               capacity_tok_s_per_gpu_lo=per_gpu(lo), capacity_tok_s_per_gpu_hi=per_gpu(hi),
               capacity_tok_s_per_user=float(big["tok_s_per_user_fit"]),
               tpot_ms_at_capacity=float(big["step_ms"]), tpot_ms_at_capacity_lo=tlo, tpot_ms_at_capacity_hi=thi)
    return out


# --- using fits -----------------------------------------------------------------------------------
def _fitted(fits: pd.DataFrame) -> pd.DataFrame:
    return fits[fits["status"] == "fitted"] if "status" in fits.columns else fits


def _coef(row) -> np.ndarray:
    return np.array([float(row.get(c, 0.0)) if pd.notna(row.get(c, np.nan)) else 0.0 for c in COEFS])


def predict(fits: pd.DataFrame, *, batch, context=None) -> pd.DataFrame:
    """Predicted step time and speeds for every fitted group at ``batch`` (one value or a list) and ``context``.

    ``context=None`` uses each group's reference context. ``extrapolated`` is True outside the measured batch or
    context range (a context other than the measured one when only one context was measured).
    """
    batches = np.atleast_1d(np.asarray(batch, float))
    out = []
    for _, row in _fitted(fits).iterrows():
        coef = _coef(row)
        ctx = float(row["context_ref"]) if context is None else float(context)
        tau = float(row.get("tau", 1.0)) if pd.notna(row.get("tau", np.nan)) else 1.0
        experts = float(row.get("moe_experts", np.nan))
        top_k = float(row.get("moe_top_k", np.nan))
        n_gpus = float(row.get("n_gpus_denominator", np.nan))
        for b in batches:
            step = float(_step_at(coef, b, ctx, experts, top_k, tau))
            u = 1000.0 * tau / step
            outside_ctx = (np.isfinite(ctx) and np.isfinite(row["context_min"])
                           and not (row["context_min"] - 1e-9 <= ctx <= row["context_max"] + 1e-9))
            out.append({"group": row["group"], "variant": row["variant"], "batch": b, "context": ctx,
                        "step_ms": step, "tok_s_per_user": u, "tok_s": b * u,
                        "tok_s_per_gpu": b * u / n_gpus if n_gpus > 0 else math.nan,
                        "extrapolated": bool(b < row["batch_min"] - 1e-9 or b > row["batch_max"] + 1e-9
                                             or outside_ctx)})
    return pd.DataFrame(out, columns=["group", "variant", "batch", "context", "step_ms", "tok_s_per_user",
                                      "tok_s", "tok_s_per_gpu", "extrapolated"])


def curves(fits: pd.DataFrame, *, batch=None, context=None) -> pd.DataFrame:
    """Model curves per group over a log-spaced batch grid, with bootstrap bands (when ``fits.attrs`` has them).

    ``context``: None for each group's reference context, a number, or ``"measured"`` for one curve at each end
    of the group's measured context range.
    """
    boots = fits.attrs.get("boot", {})
    parts = []
    for _, row in _fitted(fits).iterrows():
        grid = (np.unique(np.round(np.geomspace(1, max(2.0, row["batch_max"] * 2), 60), 3))
                if batch is None else np.atleast_1d(np.asarray(batch, float)))
        if isinstance(context, str) and context == "measured":
            ctxs = sorted({row["context_min"], row["context_max"]}) if np.isfinite(row["context_min"]) else [None]
            for ctx in ctxs:
                parts.append(curves(pd.DataFrame([row]).assign(status="fitted").pipe(_with_attrs, fits),
                                    batch=grid, context=ctx))
            continue
        one = predict(pd.DataFrame([row]), batch=grid, context=context)
        draws = np.asarray(boots.get(row["group"], []), float).reshape(-1, 4)
        tau = float(row.get("tau", 1.0))
        n_gpus = float(row.get("n_gpus_denominator", np.nan))
        ctx = one["context"].to_numpy(float)
        if len(draws) > 1:
            steps = np.array([_step_at(c, grid, ctx, row.get("moe_experts", np.nan), row.get("moe_top_k", np.nan),
                                       tau) for c in draws])
            u = 1000.0 * tau / steps
            for name, arr in (("step_ms", steps), ("tok_s_per_user", u), ("tok_s", u * grid)):
                one[f"{name}_lo"] = np.nanpercentile(arr, 2.5, axis=0)
                one[f"{name}_hi"] = np.nanpercentile(arr, 97.5, axis=0)
        else:
            for name in ("step_ms", "tok_s_per_user", "tok_s"):
                one[f"{name}_lo"] = one[f"{name}_hi"] = np.nan
        for side in ("lo", "hi"):
            one[f"tok_s_per_gpu_{side}"] = one[f"tok_s_{side}"] / n_gpus if n_gpus > 0 else np.nan
        parts.append(one)
    return pd.concat(parts, ignore_index=True) if parts else predict(fits.iloc[:0], batch=[1.0])


def _with_attrs(frame: pd.DataFrame, source: pd.DataFrame) -> pd.DataFrame:
    frame.attrs.update(source.attrs)
    return frame


def residuals(points: pd.DataFrame, fits: pd.DataFrame, *, by: list[str] | None = None) -> pd.DataFrame:
    """Measured against fitted step time for every point of every fitted group (``rel_error`` = fit/measured − 1)."""
    prepared = prepare(points)
    by = by or fits.attrs.get("by") or DEFAULT_BY
    index = {row["group"]: row for _, row in _fitted(fits).iterrows()}
    out = []
    for keys, g in groups(prepared, by):
        row = index.get(_label(keys))
        if row is None:
            continue
        coef = _coef(row)
        tau = g["tau"].to_numpy(float)
        cov = (coverage(g["batch"], row["moe_experts"], row["moe_top_k"], tau)
               if row["variant"] == "moe" else np.zeros(len(g)))
        pred = _step(coef, g["batch"], g["context"], cov)
        meas = g["step_ms"].to_numpy(float)
        out.append(pd.DataFrame({"group": row["group"], "batch": g["batch"].to_numpy(float),
                                 "context": g["context"].to_numpy(float), "step_ms": meas, "step_ms_fit": pred,
                                 "rel_error": pred / meas - 1.0,
                                 "tok_s_per_user": g["tok_s_per_user_fit"].to_numpy(float),
                                 "tok_s": g["tok_s_fit"].to_numpy(float),
                                 "tok_s_per_gpu": g["tok_s_fit"].to_numpy(float) / g["n_gpus"].to_numpy(float)
                                 if "n_gpus" in g.columns else np.nan}))
    cols = ["group", "batch", "context", "step_ms", "step_ms_fit", "rel_error", "tok_s_per_user", "tok_s",
            "tok_s_per_gpu"]
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=cols)


def extrapolation_check(points: pd.DataFrame, *, fit_max_batch: float = 32, by: list[str] | None = None,
                        variants=VARIANTS, model_table: dict | None = None,
                        coverage_source: str = "uniform", floors: dict | None = None) -> pd.DataFrame:
    """Fit each group on batches ≤ ``fit_max_batch`` only, predict its larger batches; one row per held-out point.

    ``rel_error`` = predicted/measured step time − 1. Groups without at least three small batches and one larger
    one are left out. ``floors`` as in :func:`fit`; each row names the bound used (``t1_floor_ms``,
    ``floor_source``).
    """
    prepared = prepare(points)
    out = []
    for keys, g in groups(prepared, by):
        small = g[g["batch"] <= fit_max_batch]
        large = g[g["batch"] > fit_max_batch]
        if large.empty or len(np.unique(small["batch"])) < MIN_BATCHES:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ScalingWarning)
            gf = fit_group(small, keys=keys, variants=variants, n_boot=0, model_table=model_table,
                           coverage_source=coverage_source, floors=floors)
        tau = large["tau"].to_numpy(float)
        cov = coverage(large["batch"], gf.experts, gf.top_k, tau) if gf.variant == "moe" else 0.0
        pred = _step(gf.coef, large["batch"], large["context"], cov)
        meas = large["step_ms"].to_numpy(float)
        out.append(pd.DataFrame({
            **{k: [v] * len(large) for k, v in keys.items()}, "group": gf.label, "variant": gf.variant,
            "fit_max_batch": float(fit_max_batch), "n_fit_batches": len(np.unique(small["batch"])),
            "t1_ms": gf.coef[1], "t1_floor_ms": gf.lower[1], "t2_floor_ms": gf.lower[2],
            "floor_source": gf.floor_source,
            "batch": large["batch"].to_numpy(float), "context": large["context"].to_numpy(float),
            "step_ms": meas, "step_ms_predicted": pred, "rel_error": pred / meas - 1.0,
            "tok_s": large["tok_s_fit"].to_numpy(float), "tok_s_predicted": large["batch"].to_numpy(float)
            * 1000.0 * tau / pred,
            "degenerate": "; ".join(str(w.message).split(": ", 1)[-1] for w in caught) or ""}))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(
        columns=["group", "variant", "fit_max_batch", "batch", "context", "step_ms", "step_ms_predicted",
                 "rel_error"])


def launch_overhead(points: pd.DataFrame, *, batch: float = 1.0) -> pd.DataFrame:
    """Eager against CUDA-graph step time at one batch size, per model, precision and context."""
    p = prepare(points)
    p = p[np.isclose(p["batch"], batch) & p["framework"].isin(["pytorch-eager", "pytorch-cudagraph"])]
    if p.empty:
        return pd.DataFrame(columns=["model", "precision", "context", "step_ms_eager", "step_ms_cudagraph"])
    wide = p.pivot_table(index=["model", "precision", "context"], columns="framework", values="step_ms",
                         aggfunc="median").reset_index()
    wide = wide.rename(columns={"pytorch-eager": "step_ms_eager", "pytorch-cudagraph": "step_ms_cudagraph"})
    wide = wide.dropna(subset=["step_ms_eager", "step_ms_cudagraph"])
    wide["launch_overhead_ms"] = wide["step_ms_eager"] - wide["step_ms_cudagraph"]
    wide["eager_over_cudagraph"] = wide["step_ms_eager"] / wide["step_ms_cudagraph"]
    wide["tok_s_per_user_eager"] = 1000.0 / wide["step_ms_eager"]
    wide["tok_s_per_user_cudagraph"] = 1000.0 / wide["step_ms_cudagraph"]
    wide.columns.name = None
    return wide.reset_index(drop=True)


# --- summaries and prose ----------------------------------------------------------------------------
SUMMARY_COLUMNS = ["group", "fitted_form", "cv_error", "peak_tok_s_per_user", "peak_tok_s_per_user_model",
                   "peak_model_error", "batch_min", "capacity_batch", "capacity_tok_s", "capacity_tok_s_per_gpu",
                   "capacity_tok_s_per_user", "asymptote_tok_s", "b_half", "b_half_lo", "b_half_hi"]


def summary(fits: pd.DataFrame) -> pd.DataFrame:
    """Peak, capacity and B½ per fitted group: the table the report shows."""
    f = _fitted(fits)
    return f[[c for c in SUMMARY_COLUMNS if c in f.columns]].reset_index(drop=True)


FLOOR_COLUMNS = ["group", "t1_ms", "t1_floor_ms", "t2_ms", "t2_floor_ms", "context_ref", "floor_ms_per_seq_at_ref",
                 "marginal_ms_per_seq_top", "floor_source"]


def floors_table(fits: pd.DataFrame) -> pd.DataFrame:
    """Per fitted group: the per-sequence coefficients, their physical lower bounds, and the measured cost of one
    more sequence between the two largest batches (a true lower bound must not exceed it)."""
    f = _fitted(fits)
    return f[[c for c in FLOOR_COLUMNS if c in f.columns]].reset_index(drop=True)


def select(fits: pd.DataFrame, **where) -> pd.Series:
    """The one fitted row matching every ``column=value``; KeyError naming what was asked if none does."""
    f = _fitted(fits)
    mask = np.ones(len(f), bool)
    for k, v in where.items():
        if v is not None and k in f.columns:
            mask &= (f[k] == v).to_numpy()
    if not mask.any():
        raise KeyError(f"no fitted group with {where}")
    return f[mask].iloc[0]


def describe(row: pd.Series, *, level: float = 50.0) -> str:
    """One paragraph of findings for a fitted group, every number from the row.

    The ``capacity_*`` columns are the largest *measured* batch, so the prose calls them that; the only capacity it
    names is the asymptote (throughput as the batch grows without limit). A coefficient on its bound is named.
    """
    def n(x, digits=0):
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return "n/a"
        return "unbounded" if not np.isfinite(x) else f"{x:,.{digits}f}"

    peak = row.get("peak_tok_s_per_user")
    peak_text = (f"{n(peak, 1)} tok/s/user at batch 1 (measured; the model says {n(row['peak_tok_s_per_user_model'], 1)}, "
                 f"{row['peak_model_error'] * 100:+.1f}%)" if np.isfinite(peak) else
                 f"{n(row['peak_tok_s_per_user_model'], 1)} tok/s/user at batch 1 (model only: batch 1 not measured)")
    gpu = row.get("n_gpus_denominator")
    per_gpu = (f" ({n(row['capacity_tok_s_per_gpu'])} tok/s/GPU over {gpu:g} GPU{'s' if gpu != 1 else ''})"
               if np.isfinite(gpu) else " (GPU count unknown, so no per-GPU figure)")
    below = row.get(f"batch_below_{level:g}_tok_s_per_user", np.nan)
    if isinstance(below, float) and math.isnan(below):
        below_text = f"per-user speed is below {level:g} tok/s/user already at batch 1"
    elif not np.isfinite(below):
        below_text = f"per-user speed never falls below {level:g} tok/s/user in this model"
    else:
        below_text = f"per-user speed falls below {level:g} tok/s/user at batch {n(below)}"
    lo, hi = row.get("b_half_lo", np.nan), row.get("b_half_hi", np.nan)
    interval = (f"95% interval {n(lo)}–{n(hi)}" if np.isfinite(lo) and np.isfinite(hi) else
                "its 95% interval is not identified by the measured batches")
    asym = row.get("asymptote_tok_s", np.nan)
    if np.isfinite(asym):
        half_text = (f"Half of the asymptotic throughput ({n(asym)} tok/s, the capacity if the batch could grow "
                     f"without limit) is reached near batch B½ ≈ {n(row['b_half'])} ({interval})")
    else:
        half_text = ("No asymptote is identified: the per-sequence cost is at bound 0, so the fit sees no "
                     "saturation in the measured batches")
    text = (f"**{row['group']}**: {peak_text} becomes {n(row['capacity_tok_s_per_user'], 1)} at batch "
            f"{n(row['capacity_batch'])}, the largest measured batch, where the instance serves "
            f"{n(row['capacity_tok_s'])} tok/s{per_gpu}. {half_text}; {below_text}. Model: {row['variant']}, "
            f"leave-one-batch-out error {row['cv_error'] * 100:.1f}%, worst point {row['max_abs_rel_error'] * 100:.1f}%.")
    bound = str(row.get("at_bound", "") or "")
    if bound:
        floor = str(row.get("floor_source", "") or "")
        text += (f" **Degenerate fit:** {bound.replace('_ms', '')} — the measured batches do not identify it "
                 "above that bound" + (f" (the floor: {floor})" if "floor" in bound and floor else "")
                 + ", so B½ and the asymptote rest on the bound.")
    return text


# --- command line ---------------------------------------------------------------------------------
def cli_fit(points_path: Path, *, by: list[str] | None, out: Path | None, step_logs: Path | None = None) -> int:
    """``perfclaims fit``: fits CSV to ``out`` or stdout; degenerate fits are reported on stderr.

    ``step_logs``: step-timing logs whose model and calibration records give per-sequence floors (as the
    batch-scaling report uses); None fits with coefficients bounded by 0 only.
    """
    points = load_points(points_path)
    floors = floor_inputs(step_logs, points=points) if step_logs else None
    if by:
        missing = [c for c in by if c not in points.columns]
        if missing:
            raise ValueError(f"--by: {', '.join(missing)} not a column of {points_path}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ScalingWarning)
        fits = fit(points, by=by, floors=floors)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        fits.to_csv(out, index=False)
        n = int((fits["status"] == "fitted").sum()) if len(fits) else 0
        print(f"{n} of {len(fits)} groups fitted -> {out}")
    else:
        fits.to_csv(sys.stdout, index=False)
    return 0


# Predictions further than this factor beyond the measured batches are refused unless extrapolation is allowed.
MAX_EXTRAPOLATION = 4.0


def extrapolation_report(fits: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """Per extrapolated prediction: how far outside the measured batches (``factor`` = batch / largest measured,
    or smallest measured / batch below the range; 1 when only the context is outside) and the coefficient the fit
    has on a bound (a per-sequence cost at 0 lets extrapolated throughput grow without limit)."""
    cols = ["group", "batch", "batch_min", "batch_max", "factor", "context", "at_bound"]
    ex = predicted[predicted["extrapolated"]]
    if ex.empty:
        return pd.DataFrame(columns=cols)
    f = _fitted(fits).set_index("group")
    out = ex[["group", "batch", "context"]].copy()
    out["batch_min"] = out["group"].map(f["batch_min"]).astype(float)
    out["batch_max"] = out["group"].map(f["batch_max"]).astype(float)
    out["factor"] = np.maximum.reduce([out["batch"] / out["batch_max"], out["batch_min"] / out["batch"],
                                       np.ones(len(out))])
    out["at_bound"] = (out["group"].map(f["at_bound"]).fillna("").astype(str) if "at_bound" in f.columns else "")
    return out[cols].reset_index(drop=True)


def cli_predict(fits_path: Path, *, batch: float, context: float | None, allow_extrapolation: bool = True) -> int:
    """``perfclaims predict``: CSV on stdout for every fitted group, ``extrapolated`` outside the measured range.

    Extrapolated groups are listed on stderr with how far outside they are. ``allow_extrapolation=False`` refuses
    (exit 2, nothing on stdout) when any group would be predicted more than ``MAX_EXTRAPOLATION`` times beyond its
    measured batches.
    """
    fits_path = Path(fits_path)
    if not fits_path.exists():
        raise FileNotFoundError(f"{fits_path}: no fits file; run `perfclaims fit --out {fits_path}` first")
    fits = pd.read_csv(fits_path)
    needed = {"group", "status", *COEFS, "batch_min", "batch_max", "context_ref"}
    missing = sorted(needed - set(fits.columns))
    if missing:
        raise ValueError(f"{fits_path}: not a fits file from `perfclaims fit` (missing {', '.join(missing)})")
    if not batch > 0:
        raise ValueError(f"--batch must be > 0, got {batch:g}")
    predicted = predict(fits, batch=batch, context=context)
    report = extrapolation_report(fits, predicted)
    far = report[report["factor"] > MAX_EXTRAPOLATION]
    if len(report):
        print(f"warning: {len(report)} of {len(predicted)} predicted groups are extrapolated "
              f"({len(far)} more than {MAX_EXTRAPOLATION:g}x beyond their measured batches):", file=sys.stderr)
        for r in report.sort_values("factor", ascending=False).itertuples():
            where = (f"batch {r.batch:g} vs measured {r.batch_min:g}-{r.batch_max:g} ({r.factor:.1f}x)"
                     if r.factor > 1 else f"context {r.context:g} outside the measured contexts")
            bound = f"; {r.at_bound}: throughput keeps rising with batch" if r.at_bound else ""
            print(f"  {r.group}: {where}{bound}", file=sys.stderr)
    if len(far) and not allow_extrapolation:
        print(f"error: refusing to predict {len(far)} group(s) more than {MAX_EXTRAPOLATION:g}x beyond their "
              "measured batches; allow extrapolation to print them anyway", file=sys.stderr)
        return 2
    predicted.to_csv(sys.stdout, index=False)
    return 0


def headline(fits: pd.DataFrame, *, model: str, precision: str | None = None, framework: str | None = None,
             context: float | None = None) -> dict:
    """The numbers a report leads with for one configuration: measured peak, model peak, capacity, B½."""
    row = select(fits, model=model, precision=precision, framework=framework)
    at_cap = predict(pd.DataFrame([row]), batch=row["capacity_batch"], context=context).iloc[0]
    return {
        "group": row["group"], "variant": row["variant"], "context": float(at_cap["context"]),
        "peak_tok_s_per_user": row["peak_tok_s_per_user"],
        "peak_tok_s_per_user_lo": row["peak_tok_s_per_user_lo"],
        "peak_tok_s_per_user_hi": row["peak_tok_s_per_user_hi"],
        "peak_tok_s_per_user_model": row["peak_tok_s_per_user_model"], "peak_model_error": row["peak_model_error"],
        "capacity_batch": row["capacity_batch"], "capacity_tok_s": row["capacity_tok_s"],
        "capacity_tok_s_per_gpu": row["capacity_tok_s_per_gpu"],
        "capacity_tok_s_per_user": row["capacity_tok_s_per_user"],
        "capacity_tok_s_model_at_context": float(at_cap["tok_s"]),
        "b_half": row["b_half"], "b_half_lo": row["b_half_lo"], "b_half_hi": row["b_half_hi"],
        "asymptote_tok_s": row["asymptote_tok_s"], "cv_error": row["cv_error"],
        "max_abs_rel_error": row["max_abs_rel_error"], "at_bound": str(row.get("at_bound", "") or ""),
        "text": describe(row),
    }


def extrapolation_summary(check: pd.DataFrame) -> pd.DataFrame:
    """Worst and median held-out error per group of an :func:`extrapolation_check` table."""
    if check.empty:
        return pd.DataFrame(columns=["group", "variant", "fit_max_batch", "batches", "max_abs_rel_error"])
    return (check.assign(abs_err=check["rel_error"].abs())
            .groupby(["group", "variant", "fit_max_batch"], sort=True)
            .agg(batches=("batch", batch_list),
                 median_abs_rel_error=("abs_err", "median"), max_abs_rel_error=("abs_err", "max"),
                 t1_ms=("t1_ms", "first"), t1_floor_ms=("t1_floor_ms", "first"),
                 floor_source=("floor_source", "first"), degenerate=("degenerate", "first"))
            .reset_index())


def batch_list(batches) -> str:
    """Distinct batches as a reader wants them: ``32, 38, 57`` (achieved concurrencies rounded; below 10, one
    decimal)."""
    shown = [f"{x:.0f}" if x >= 10 else f"{x:.1f}".rstrip("0").rstrip(".") for x in sorted(set(batches))]
    return ", ".join(dict.fromkeys(shown))


# --- tables for reports ----------------------------------------------------------------------------
# Fractions shown as percentages, and the capacity_* columns named for what they are: the largest measured batch.
_AS_PERCENT = ("cv_error", "peak_model_error", "median_abs_rel_error", "max_abs_rel_error", "rel_error",
               "fraction_of_sol_measured", "fraction_of_sol_datasheet")
# A batch-1 speed read off a sweep whose smallest batch is larger than this is too far an extrapolation to show.
PEAK_MODEL_MAX_BATCH_MIN = 16.0
_DISPLAY_NAMES = {
    "fitted_form": "fitted form", "batch_min": "smallest measured batch", "capacity_batch": "largest measured batch",
    "fraction_of_sol_measured": "% of SOL (measured bandwidth)",
    "fraction_of_sol_datasheet": "% of SOL (datasheet bandwidth)",
    "capacity_tok_s": "tok_s at largest measured batch",
    "capacity_tok_s_per_gpu": "tok_s_per_gpu at largest measured batch",
    "capacity_tok_s_per_user": "tok_s_per_user at largest measured batch",
    "asymptote_tok_s": "asymptote tok_s (B → ∞)",
    "b_half": "B½", "b_half_lo": "B½ lo", "b_half_hi": "B½ hi",
    "peak_tok_s_per_user_model": "peak tok_s_per_user (model)",
    "cv_error": "cv error %", "peak_model_error": "peak model error %",
    "median_abs_rel_error": "median abs error %", "max_abs_rel_error": "max abs error %",
    "marginal_ms_per_seq_top": "measured ms per added seq (top two batches)",
    "floor_ms_per_seq_at_ref": "floor ms per seq at ref",
}


def display_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of a summary, floors or extrapolation table for a report: fractions ×100 under ``%`` headers, the
    ``capacity_*`` columns renamed "at largest measured batch", the model's batch-1 speed blanked where the smallest
    measured batch exceeds ``PEAK_MODEL_MAX_BATCH_MIN`` (t0 is not identified that far out), and per-sequence costs measured on host-bound
    (eager) rows blanked: there added GPU work first fills idle launch gaps, so the measured cost of one more
    sequence can be negative and says nothing about a floor. Values in the API stay fractions."""
    out = frame.copy()
    for c in _AS_PERCENT:
        if c in out.columns:
            out[c] = 100.0 * pd.to_numeric(out[c], errors="coerce")
    if "marginal_ms_per_seq_top" in out.columns and "floor_source" in out.columns:
        host = out["floor_source"].fillna("").astype(str).str.contains("host-bound")
        out.loc[host, "marginal_ms_per_seq_top"] = np.nan
    if "peak_tok_s_per_user_model" in out.columns and "batch_min" in out.columns:
        out.loc[out["batch_min"] > PEAK_MODEL_MAX_BATCH_MIN, "peak_tok_s_per_user_model"] = np.nan
    return out.rename(columns=_DISPLAY_NAMES)


def shard_note(points: pd.DataFrame) -> str:
    """Prose for reports on points flagged ``shard-measured`` (one GPU's slice of a TP deployment timed alone), or
    ``""`` when there are none."""
    if "flags" not in points.columns or not len(points):
        return ""
    shard = points[schema.has_flag(points, "shard-measured")]
    if shard.empty:
        return ""
    parts = [f"{m} ({g['n_gpus'].iloc[0]:g} GPUs)" for m, g in shard.groupby("model", sort=True)]
    return (f"{', '.join(parts)}: one GPU's slice of a tensor-parallel deployment, timed alone. The step stands for "
            "the whole deployment, so tok/s is the deployment's and tok/s/GPU divides it by all its GPUs; the "
            "all-reduce between the GPUs was not timed, so both are upper bounds for a real deployment.")
