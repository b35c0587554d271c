"""Using fits: predictions with bootstrap bands, model curves over a batch grid, residuals at the measured points,
how far a prediction extrapolates, and the eager against CUDA-graph launch overhead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.scaling.configuration import coverage
from analysis.scaling.derived import step_at
from analysis.scaling.estimator import COEFS, step_time
from analysis.scaling.inputs import DEFAULT_BY, group_label, groups, prepare

PREDICT_COLUMNS = ["group", "variant", "batch", "context", "step_ms", "tok_s_per_user", "tok_s", "tok_s_per_gpu",
                   "extrapolated"]
BAND_COLUMNS = ["step_ms_lo", "step_ms_hi", "tok_s_per_user_lo", "tok_s_per_user_hi", "tok_s_lo", "tok_s_hi",
                "tok_s_per_gpu_lo", "tok_s_per_gpu_hi"]


def fitted(fits: pd.DataFrame) -> pd.DataFrame:
    """The fitted rows of a fits table."""
    return fits[fits["status"] == "fitted"] if "status" in fits.columns else fits


def coef_of(row) -> np.ndarray:
    """A fits row's four coefficients (missing ones 0)."""
    return np.array([float(row.get(c, 0.0)) if pd.notna(row.get(c, np.nan)) else 0.0 for c in COEFS])


def group_keys(row) -> dict:
    """A fits row's key columns and their values, from its ``group_by`` column (empty when it has none)."""
    names = str(row.get("group_by", "") or "")
    return {c: row.get(c) for c in names.split(",") if c}


def draws_by_group(draws: pd.DataFrame | None) -> dict:
    """``{group_id: (D, 4) array}`` from the long draws table (``{group label: …}`` for tables written before
    draws carried the group's id)."""
    if draws is None or not len(draws):
        return {}
    key = "group_id" if "group_id" in draws.columns else "group"
    return {g: d[list(COEFS)].to_numpy(float) for g, d in draws.groupby(key, sort=False)}


def predict(fits: pd.DataFrame, *, batch, context=None, draws: pd.DataFrame | dict | None = None) -> pd.DataFrame:
    """Predicted step time and speeds for every fitted group at ``batch`` (one value or a list) and ``context``.

    ``context=None`` uses each group's reference context. ``extrapolated`` is True outside the measured batch or
    context range (a context other than the measured one when only one context was measured). With ``draws``
    (the long table :func:`analysis.scaling.fit_with_draws` returns, or ``{group: array}``) every value gets its
    95% bootstrap band (``*_lo``, ``*_hi``). The group's key columns come first.
    """
    batches = np.atleast_1d(np.asarray(batch, float))
    boot = draws if isinstance(draws, dict) else draws_by_group(draws)
    parts = []
    for _, row in fitted(fits).iterrows():
        ctx = float(row["context_ref"]) if context is None else float(context)
        tau = float(row.get("tau", 1.0)) if pd.notna(row.get("tau", np.nan)) else 1.0
        experts = float(row.get("moe_experts", np.nan))
        top_k = float(row.get("moe_top_k", np.nan))
        n_gpus = float(row.get("n_gpus_denominator", np.nan))
        step = np.array([float(step_at(coef_of(row), b, ctx, experts, top_k, tau)[0]) for b in batches])
        u = 1000.0 * tau / step
        outside_ctx = (np.isfinite(ctx) and np.isfinite(row["context_min"])
                       and not (row["context_min"] - 1e-9 <= ctx <= row["context_max"] + 1e-9))
        part = pd.DataFrame({**{k: [v] * len(batches) for k, v in group_keys(row).items()},
                             "group": row["group"], "variant": row["variant"], "batch": batches, "context": ctx,
                             "step_ms": step, "tok_s_per_user": u, "tok_s": batches * u,
                             "tok_s_per_gpu": batches * u / n_gpus if n_gpus > 0 else np.nan,
                             "extrapolated": (batches < row["batch_min"] - 1e-9) | (batches > row["batch_max"] + 1e-9)
                             | bool(outside_ctx)})
        gid = row.get("group_id")
        d = boot.get(gid) if isinstance(gid, str) and gid in boot else boot.get(row["group"])
        if d is not None and len(d) > 1:
            steps = np.column_stack([step_at(d, b, ctx, experts, top_k, tau) for b in batches])  # (D, n)
            uu = 1000.0 * tau / steps
            for name, arr in (("step_ms", steps), ("tok_s_per_user", uu), ("tok_s", uu * batches)):
                part[f"{name}_lo"] = np.nanpercentile(arr, 2.5, axis=0)
                part[f"{name}_hi"] = np.nanpercentile(arr, 97.5, axis=0)
            for side in ("lo", "hi"):
                part[f"tok_s_per_gpu_{side}"] = part[f"tok_s_{side}"] / n_gpus if n_gpus > 0 else np.nan
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=PREDICT_COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    if draws is not None:
        for c in BAND_COLUMNS:
            if c not in out.columns:
                out[c] = np.nan
    return out


def curves(fits: pd.DataFrame, *, draws=None, batch=None, context=None) -> pd.DataFrame:
    """Model curves per group over a log-spaced batch grid, with bootstrap bands where ``draws`` are given.

    ``context``: None for each group's reference context, a number, or ``"measured"`` for one curve at each end
    of the group's measured context range.
    """
    boot = draws if isinstance(draws, dict) else draws_by_group(draws)
    parts = []
    for _, row in fitted(fits).iterrows():
        grid = (np.unique(np.round(np.geomspace(1, max(2.0, row["batch_max"] * 2), 60), 3))
                if batch is None else np.atleast_1d(np.asarray(batch, float)))
        if isinstance(context, str) and context == "measured":
            ctxs = sorted({row["context_min"], row["context_max"]}) if np.isfinite(row["context_min"]) else [None]
        else:
            ctxs = [context]
        for ctx in ctxs:
            parts.append(predict(pd.DataFrame([row]), batch=grid, context=ctx, draws=boot or {}))
    out = pd.concat(parts, ignore_index=True) if parts else predict(fits.iloc[:0], batch=[1.0])
    for c in BAND_COLUMNS:
        if c not in out.columns:
            out[c] = np.nan
    return out


def residuals(points: pd.DataFrame, fits: pd.DataFrame, *, by: list[str] | None = None) -> pd.DataFrame:
    """Measured against fitted step time for every point of every fitted group
    (``step_ms_model``; ``rel_error`` = model/measured − 1). The grouping is the fits' ``group_by`` column."""
    prepared = prepare(points)
    ok = fitted(fits)
    if by is None and "group_by" in ok.columns and len(ok):
        by = [c for c in str(ok["group_by"].iloc[0]).split(",") if c]
    index = {row["group"]: row for _, row in ok.iterrows()}
    out = []
    for keys, g in groups(prepared, by or DEFAULT_BY):
        row = index.get(group_label(keys))
        if row is None:
            continue
        coef = coef_of(row)
        b = g["batch"].to_numpy(float)
        cov = (coverage(b, row["moe_experts"], row["moe_top_k"], g["tau"].to_numpy(float))
               if row["variant"] == "moe" else np.zeros(len(g)))
        pred = step_time(coef, b, g["context"].to_numpy(float), cov)
        meas = g["step_ms"].to_numpy(float)
        out.append(pd.DataFrame({"group": row["group"], "batch": b, "context": g["context"].to_numpy(float),
                                 "step_ms": meas, "step_ms_model": pred, "rel_error": pred / meas - 1.0,
                                 "tok_s_per_user": g["tok_s_per_user_measured"].to_numpy(float),
                                 "tok_s": g["tok_s_measured"].to_numpy(float),
                                 "tok_s_per_gpu": g["tok_s_measured"].to_numpy(float) / g["n_gpus"].to_numpy(float)
                                 if "n_gpus" in g.columns else np.nan}))
    cols = ["group", "batch", "context", "step_ms", "step_ms_model", "rel_error", "tok_s_per_user", "tok_s",
            "tok_s_per_gpu"]
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=cols)


# Predictions further than this factor beyond the measured batches are refused unless extrapolation is allowed.
MAX_EXTRAPOLATION = 4.0


def extrapolation_factor(predicted: pd.DataFrame, fits: pd.DataFrame) -> pd.Series:
    """How far outside its group's measured batches each prediction is: batch / largest measured, or smallest
    measured / batch below the range; 1 inside (or when only the context is outside)."""
    f = fitted(fits).drop_duplicates("group").set_index("group")
    bmin = predicted["group"].map(f["batch_min"]).astype(float)
    bmax = predicted["group"].map(f["batch_max"]).astype(float)
    return pd.Series(np.maximum.reduce([predicted["batch"] / bmax, bmin / predicted["batch"],
                                        np.ones(len(predicted))]), index=predicted.index)


def extrapolation_report(fits: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """Per extrapolated prediction: how far outside the measured batches (``factor``, see
    :func:`extrapolation_factor`) and the coefficient the fit has on a bound (a per-sequence cost at 0 lets
    extrapolated throughput grow without limit)."""
    cols = ["group", "batch", "batch_min", "batch_max", "factor", "context", "at_bound"]
    ex = predicted[predicted["extrapolated"].astype(bool)]
    if ex.empty:
        return pd.DataFrame(columns=cols)
    f = fitted(fits).drop_duplicates("group").set_index("group")
    out = ex[["group", "batch", "context"]].copy()
    out["batch_min"] = out["group"].map(f["batch_min"]).astype(float)
    out["batch_max"] = out["group"].map(f["batch_max"]).astype(float)
    out["factor"] = extrapolation_factor(ex, fits)
    out["at_bound"] = (out["group"].map(f["at_bound"]).fillna("").astype(str) if "at_bound" in f.columns else "")
    return out[cols].reset_index(drop=True)


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
