"""The group-by wrapper: one fit per configuration, one row per group, and the bootstrap draws as their own table.

Nothing travels in ``DataFrame.attrs``: the grouping is the ``group_by`` column of every row, and the draws are a
long table (``group``, ``draw``, ``t0_ms`` … ``tm_ms``) returned beside the fits by :func:`fit_with_draws` and
written beside them by ``perfclaims fit --out`` (see :func:`analysis.data.write_fits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.perfmodel.step import group_id
from analysis.scaling import derived as dv
from analysis.scaling import workers
from analysis.scaling.configuration import VARIANTS, GroupFit, coverage, fit_group_steps, warn_degenerate
from analysis.scaling.estimator import COEFS, run_many, step_time
from analysis.scaling.inputs import Rows, group_rows, key_columns, prepare

LEVELS_TOK_S_PER_USER = (100.0, 50.0, 20.0)
# Groups whose solves are stacked together: enough to share each Newton step's array operations, few enough that
# their bootstrap draws (n_boot × points × terms each) stay arrays of tens of MB: at most this many groups, and
# no more points in all than POINTS_PER_BATCH (a group larger than that is a batch of its own).
GROUPS_PER_BATCH = 256
POINTS_PER_BATCH = 2_500
# Columns of prepared points a group fit reads (besides the grouping columns).
FIT_COLUMNS = ["model", "hardware", "precision", "framework", "n_gpus", "kv_dtype", "kv_bytes_read", "moe_experts",
               "moe_top_k", "experts_touched", "output_tok_s", "step_ms_samples", "batch", "context", "step_ms",
               "tau", "batch_source", "step_source", "tok_s_per_user_measured", "tok_s_measured"]


@dataclass
class Fits:
    """The fits table (one row per group) and the bootstrap draws of every fitted group (long table)."""

    table: pd.DataFrame
    draws: pd.DataFrame


def fit_with_draws(points: pd.DataFrame, *, by: list[str] | None = None, variants=VARIANTS, n_boot: int = 200,
                   seed: int = 0, levels=LEVELS_TOK_S_PER_USER, model_table: dict | None = None,
                   coverage_source: str = "uniform", floors: dict | None = None, jobs: int | None = None) -> Fits:
    """One row per group — variant, CV error, coefficients, peak, largest measured batch, asymptote, B½, each with
    an interval — and the draws behind the intervals.

    Groups with fewer than three batch sizes are listed with ``status`` saying why they were not fitted.
    ``floors`` (from :func:`analysis.scaling.floor_inputs`): physical lower bounds of t1/t2, reported as
    ``t1_floor_ms``, ``t2_floor_ms`` and ``floor_source`` (empty where no geometry or ceiling was known).
    ``jobs``: worker processes (None: every core); tables too small to pay for a pool (see
    :mod:`analysis.scaling.workers`) are fitted here. The result does not depend on it.
    """
    prepared = prepare(points)
    by_cols = key_columns(prepared, by)
    # Only the columns a fit reads travel into the groups, as arrays: a DataFrame per group costs more than fitting.
    options = dict(variants=variants, n_boot=n_boot, seed=seed, levels=levels, model_table=model_table,
                   coverage_source=coverage_source, floors=floors)
    fitted = workers.run(fit_groups, list(group_rows(prepared, by, columns=FIT_COLUMNS)), options, jobs=jobs)
    group_by = ",".join(by_cols)
    table = pd.DataFrame([{**row, "group_by": group_by} for row, _ in fitted])
    draws = draws_table([(row["group"], boot) for row, boot in fitted if len(boot)],
                        ids=[row["group_id"] for row, boot in fitted if len(boot)])
    return Fits(table, draws)


def fit_groups(groups: list[tuple[dict, Rows]], *, variants, n_boot: int, seed: int, levels, model_table,
               coverage_source: str, floors) -> list[tuple[dict, np.ndarray]]:
    """Fit each ``(keys, rows)`` of :func:`analysis.scaling.inputs.group_rows`: its fits-table row and its bootstrap
    draws (n_boot, 4), in order."""
    out: list = [None] * len(groups)
    # Groups with the same number of points share their stacked solves: batch them together (the order of
    # fitting changes no number; results and warnings come back in group order).
    order = sorted(range(len(groups)), key=lambda i: len(groups[i][1]))
    for part in _batches(order, [len(g) for _, g in groups]):
        fitted = run_many([fit_group_steps(groups[i][1], keys=groups[i][0], variants=variants, n_boot=n_boot,
                                           seed=seed, model_table=model_table, coverage_source=coverage_source,
                                           floors=floors) for i in part])
        for i, gf in zip(part, fitted):
            out[i] = gf
    rows = []
    for (_, g), (gf, degenerate) in zip(groups, out):
        if degenerate:
            warn_degenerate(gf, stacklevel=3)
        rows.append((_row(gf, g, levels=levels, seed=seed), gf.boot))
    return rows


def _batches(order: list[int], sizes: list[int]) -> list[list[int]]:
    """``order`` cut into consecutive batches of at most :data:`GROUPS_PER_BATCH` groups and
    :data:`POINTS_PER_BATCH` points (``sizes``: points per group)."""
    batches, current, points = [], [], 0
    for i in order:
        if current and (len(current) >= GROUPS_PER_BATCH or points + sizes[i] > POINTS_PER_BATCH):
            batches.append(current)
            current, points = [], 0
        current.append(i)
        points += sizes[i]
    return batches + [current] if current else batches


def draws_table(fitted: list[tuple[str, np.ndarray]], ids: list[str] | None = None) -> pd.DataFrame:
    """``(group label, draws (n, 4))`` pairs as one long table: ``group``, ``draw`` (0, 1, … per group), coefficients;
    with ``ids`` (one per pair) also ``group_id``, the stable hash of the group's key columns."""
    if not fitted:
        return pd.DataFrame(columns=["group", "draw", *COEFS] + (["group_id"] if ids is not None else []))
    sizes = [len(boot) for _, boot in fitted]
    coefs = np.concatenate([boot for _, boot in fitted])
    # Each label converted to the string column type once, then repeated (200 draws a group: 2 million at 10,000).
    labels = pd.Series(np.array([label for label, _ in fitted], dtype=object))
    which = np.repeat(np.arange(len(fitted)), sizes)
    out = pd.DataFrame({"group": labels.take(which).reset_index(drop=True),
                        "draw": np.concatenate([np.arange(n) for n in sizes]),
                        **{c: coefs[:, j] for j, c in enumerate(COEFS)}})
    if ids is not None:
        out["group_id"] = pd.Series(np.array(ids, dtype=object)).take(which).reset_index(drop=True)
    return out


def fit(points: pd.DataFrame, **kwargs) -> pd.DataFrame:
    """The fits table of :func:`fit_with_draws` alone (same arguments)."""
    return fit_with_draws(points, **kwargs).table


def fitted_form(gf: GroupFit) -> str:
    """The model form in words: ``moe (128 experts, top-8)``, ``dense``, or dense with why MoE was not tried."""
    if gf.variant == "moe":
        return f"moe ({gf.experts:g} experts, top-{gf.top_k:g})"
    if gf.form_note:
        return f"dense ({gf.form_note})"
    if np.isfinite(gf.experts):
        return f"dense (MoE form, {gf.experts:g} experts top-{gf.top_k:g}, tried: not better held out)"
    return gf.variant


def _skipna(fn, values: np.ndarray) -> float:
    """``fn`` (np.nanmin, np.nanmedian, …) of the values that are not NaN; NaN when none is (as pandas skips NaN)."""
    return float(fn(values)) if len(values) and not np.isnan(values).all() else math.nan


def _mode_min(values: np.ndarray) -> float:
    """The smallest of the most frequent non-NaN values (``Series.mode().min()``); NaN when every value is NaN."""
    values, counts = np.unique(values[~np.isnan(values)], return_counts=True)
    return float(values[counts == counts.max()].min()) if len(values) else math.nan


def _row(gf: GroupFit, g: Rows, *, levels, seed: int) -> dict:
    batch = np.asarray(g["batch"], float)
    context = np.asarray(g["context"], float)
    row = {**gf.keys, "group": gf.label, "group_id": group_id(gf.keys), "status": gf.status, "n_points": len(g),
           "n_batches": len(np.unique(np.round(batch, 6))) if len(g) else 0,
           "batch_min": float(batch.min()) if len(g) else math.nan,
           "batch_max": float(batch.max()) if len(g) else math.nan,
           "context_min": _skipna(np.nanmin, context),
           "context_max": _skipna(np.nanmax, context),
           "batch_source": ";".join(sorted(set(g["batch_source"]))) if len(g) else "",
           "step_source": ";".join(sorted(set(g["step_source"]))) if len(g) else ""}
    if gf.status != "fitted":
        row["notes"] = gf.status
        return row
    n_gpus = float(g["n_gpus"][0]) if "n_gpus" in g.columns else math.nan
    taus = np.asarray(g["tau"], float)
    tau = _skipna(np.nanmedian, taus)
    # Derived numbers are stated at the context of the largest measured batch.
    context_ref = _mode_min(context[np.isclose(batch, batch.max())])
    row.update(variant=gf.variant, fitted_form=fitted_form(gf), moe_geometry_source=gf.geometry_source,
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
    kw = dict(context=context_ref, batch_max=float(batch.max()), experts=gf.experts, top_k=gf.top_k, tau=tau,
              n_gpus=n_gpus, levels=levels)
    # The point fit and its draws in one pass: row 0 is the point fit.
    both = dv.derived(np.vstack([gf.coef[None, :], gf.boot]), **kw)
    point = {k: v[:1] for k, v in both.items()}
    names = list(COEFS) + list(point)
    if len(gf.boot):  # one percentile pass over every coefficient and derived number of every draw
        lo, hi = dv.intervals(np.column_stack([gf.boot] + [both[k][1:] for k in point]))
    else:
        lo = hi = np.full(len(names), math.nan)
    values = list(gf.coef) + [v[0] for v in point.values()]
    for j, name in enumerate(names):
        row[name] = float(values[j])
        row[f"{name}_lo"], row[f"{name}_hi"] = float(lo[j]), float(hi[j])
        if name == "b_half" or name.startswith("batch_below_"):
            row[f"{name}_lo"], row[f"{name}_hi"] = dv.identified(row[f"{name}_lo"], row[f"{name}_hi"],
                                                                 float(batch.min()), float(batch.max()))

    cov = coverage(batch, gf.experts, gf.top_k, taus) if gf.variant == "moe" else 0.0
    pred = step_time(gf.coef, batch, context, cov * np.ones_like(batch))
    step = np.asarray(g["step_ms"], float)
    rel = (pred - step) / step
    row["max_abs_rel_error"] = float(np.max(np.abs(rel)))

    row.update(dv.measured(g, context_ref, n_gpus, seed=seed))
    row["marginal_ms_per_seq_top"] = dv.top_marginal(g, context_ref)
    row["floor_ms_per_seq_at_ref"] = float(gf.lower[1] + gf.lower[2] * np.nan_to_num(context_ref))
    row["peak_model_error"] = (row["peak_tok_s_per_user_model"] / row["peak_tok_s_per_user"] - 1.0
                               if np.isfinite(row.get("peak_tok_s_per_user", math.nan)) else math.nan)
    row["notes"] = "; ".join(gf.notes)
    return row
