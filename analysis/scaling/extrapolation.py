"""The extrapolation check: fit each group on its small batches only and predict its larger ones."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from analysis.scaling import roofline_form
from analysis.scaling.configuration import VARIANTS, coverage, fit_group
from analysis.scaling.estimator import ScalingWarning, step_time
from analysis.scaling.inputs import MIN_BATCHES, group_label, groups, prepare

CHECK_COLUMNS = ["group", "variant", "fit_max_batch", "batch", "context", "step_ms", "step_ms_predicted",
                 "rel_error"]


def extrapolation_check(points: pd.DataFrame, *, fit_max_batch: float = 32, by: list[str] | None = None,
                        variants=VARIANTS, model_table: dict | None = None,
                        coverage_source: str = "uniform", floors: dict | None = None,
                        form: str = "linear") -> pd.DataFrame:
    """Fit each group on batches ≤ ``fit_max_batch`` only, predict its larger batches; one row per held-out point.

    ``rel_error`` = predicted/measured step time − 1. Groups without at least three small batches and one larger
    one are left out. ``floors`` as in :func:`analysis.scaling.fit`; each row names the bound used
    (``t1_floor_ms``, ``floor_source``) and, in ``degenerate``, a coefficient the small batches left on its bound.
    ``form="roofline"`` fits the roofline-shaped batch term instead (:mod:`analysis.scaling.roofline_form`: the
    performance model's equation per kind of kernel, weights through the GEMMs and the KV cache through attention;
    overhead per layer fitted on the small batches, the KV share measured from the group's small batches at two
    contexts, the weights' share at the measured copy bandwidth for a dense model and fitted for an MoE, the
    compute share at the model's measured prefill rate from ``points``' prefill records where there are any);
    each row names where its shares came from (``bw_share_source``, ``kv_bw_share_source``,
    ``flop_share_source``), whether its step time was timed (``step_source`` ``step_ms``) or read off TPOT, and whether
    the form priced the model's experts (``moe``). Groups whose model or hardware the spec tables do not know are left
    out of that form.
    """
    if form not in ("linear", "roofline"):
        raise ValueError(f"form must be 'linear' or 'roofline', got {form!r}")
    prepared = prepare(points)
    out = []
    for keys, g in groups(prepared, by):
        small = g[g["batch"] <= fit_max_batch]
        large = g[g["batch"] > fit_max_batch]
        if large.empty or len(np.unique(small["batch"])) < MIN_BATCHES:
            continue
        if form == "roofline":
            if not roofline_form.known(g):
                continue
            rf, terms = roofline_form.fit(small, prefill=roofline_form.prefill_rows(points, g))
            pred = roofline_form.predict(rf, large)
            meas = large["step_ms"].to_numpy(float)
            b = large["batch"].to_numpy(float)
            out.append(pd.DataFrame({
                **{k: [v] * len(large) for k, v in keys.items()}, "group": group_label(keys), "variant": "roofline",
                "step_source": large["step_source"].to_numpy(), "moe": bool(terms["moe"].any()),
                "fit_max_batch": float(fit_max_batch), "n_fit_batches": len(np.unique(small["batch"])),
                "bw_share": rf.efficiency.bw_share, "bw_share_source": rf.bw_share_source,
                "kv_bw_share": rf.kv_bw_share, "kv_bw_share_source": rf.kv_bw_share_source,
                "overhead_ms_per_layer": rf.efficiency.overhead_ms_per_layer,
                "flop_share": rf.efficiency.flop_share, "flop_share_source": rf.flop_share_source,
                "batch": b, "context": large["context"].to_numpy(float), "step_ms": meas,
                "step_ms_predicted": pred, "rel_error": pred / meas - 1.0}))
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ScalingWarning)
            gf = fit_group(small, keys=keys, variants=variants, n_boot=0, model_table=model_table,
                           coverage_source=coverage_source, floors=floors)
        tau = large["tau"].to_numpy(float)
        b = large["batch"].to_numpy(float)
        cov = coverage(b, gf.experts, gf.top_k, tau) if gf.variant == "moe" else 0.0
        c = gf.coef
        pred = step_time(c, b, large["context"].to_numpy(float), cov * np.ones_like(b))
        meas = large["step_ms"].to_numpy(float)
        out.append(pd.DataFrame({
            **{k: [v] * len(large) for k, v in keys.items()}, "group": gf.label, "variant": gf.variant,
            "fit_max_batch": float(fit_max_batch), "n_fit_batches": len(np.unique(small["batch"])),
            "t1_ms": gf.coef[1], "t1_floor_ms": gf.lower[1], "t2_floor_ms": gf.lower[2],
            "floor_source": gf.floor_source,
            "batch": b, "context": large["context"].to_numpy(float),
            "step_ms": meas, "step_ms_predicted": pred, "rel_error": pred / meas - 1.0,
            "tok_s": large["tok_s_measured"].to_numpy(float), "tok_s_predicted": b * 1000.0 * tau / pred,
            "degenerate": "; ".join(str(w.message).split(": ", 1)[-1] for w in caught) or ""}))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=CHECK_COLUMNS)


def batch_list(batches) -> str:
    """Distinct batches as a reader wants them: ``32, 38, 57`` (achieved concurrencies rounded; below 10, one
    decimal)."""
    shown = [f"{x:.0f}" if x >= 10 else f"{x:.1f}".rstrip("0").rstrip(".") for x in sorted(set(batches))]
    return ", ".join(dict.fromkeys(shown))


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
