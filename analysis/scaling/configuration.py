"""One configuration's fit: its MoE geometry, its floors, the dense and MoE forms compared out of sample.

The MoE-aware form adds ``tm·C(B)`` where ``C(B) = E·(1 − (1 − k/E)^(B·τ))`` is the expected number of experts
touched per layer under uniform routing (or the measured count, ``coverage_source="measured"``). The form is
chosen by leave-one-batch-out cross-validation: MoE must beat dense out of sample, not just match it.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from analysis import physics
from analysis.scaling.estimator import COEFS, ScalingWarning, fit_step_times_steps, run_steps
from analysis.scaling.floors import sequence_floors
from analysis.scaling.inputs import MIN_BATCHES, Rows, group_label

VARIANTS = ("dense", "moe")


def coverage(batch, experts, top_k, tau=1.0):
    """Expected distinct experts touched per layer by ``batch·tau`` tokens under uniform top-k routing."""
    return physics.expert_coverage(np.asarray(batch, float) * np.asarray(tau, float), experts, top_k)


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


@lru_cache(maxsize=1024)
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


def moe_geometry(g: pd.DataFrame | Rows, model_table: dict | None) -> tuple[float, float, str]:
    """Experts and top-k for a group: its points, else ``model_table`` (the step logs' model records), else the
    spec table. The third value names the source; ``(nan, nan, "")`` when nothing knows the model."""
    g = Rows.of(g)
    experts = _present(g.col("moe_experts"))
    top_k = _present(g.col("moe_top_k"))
    if len(experts) and len(top_k):
        return float(experts[0]), float(top_k[0]), "points"
    model = g.first("model")
    if model_table:
        entry = model_table.get(model) or model_table.get(model.lower()) or {}
        if entry.get("experts") and entry.get("top_k"):
            return float(entry["experts"]), float(entry["top_k"]), "step-log model record"
    return spec_geometry(model) if model else (math.nan, math.nan, "")


def _present(values: np.ndarray) -> np.ndarray:
    """The values that are not missing (``Series.dropna`` on an array)."""
    return values[~pd.isna(values)]


def _samples(g: Rows) -> list:
    return [np.asarray(s, float) if isinstance(s, (list, tuple, np.ndarray)) and len(s) else None
            for s in g.col("step_ms_samples").tolist()]


def fit_group(g: pd.DataFrame | Rows, *, keys: dict | None = None, variants=VARIANTS, n_boot: int = 200,
              seed: int = 0, model_table: dict | None = None, coverage_source: str = "uniform",
              floors: dict | None = None) -> GroupFit:
    """Fit one group of prepared rows (see :func:`analysis.scaling.prepare`); degenerate fits warn with
    :class:`ScalingWarning`.

    ``floors`` (from :func:`analysis.scaling.floor_inputs`) gives t1/t2 their physical lower bounds where geometry
    and ceilings are known; elsewhere they stay at 0. ``model_table`` defaults to the geometry in ``floors``.
    """
    out, degenerate = run_steps(fit_group_steps(g, keys=keys, variants=variants, n_boot=n_boot, seed=seed,
                                                model_table=model_table, coverage_source=coverage_source,
                                                floors=floors))
    if degenerate:
        warn_degenerate(out, stacklevel=2)
    return out


def warn_degenerate(out: GroupFit, *, stacklevel: int) -> None:
    """The :class:`ScalingWarning` of a group whose chosen fit is degenerate (its notes say how)."""
    warnings.warn(f"{out.label}: degenerate {out.variant} fit: {'; '.join(out.notes)}", ScalingWarning,
                  stacklevel=stacklevel + 1)


def fit_group_steps(g: pd.DataFrame | Rows, *, keys: dict | None = None, variants=VARIANTS, n_boot: int = 200,
                    seed: int = 0, model_table: dict | None = None, coverage_source: str = "uniform",
                    floors: dict | None = None):
    """:func:`fit_group` as steps: yields each solve it needs (see :func:`analysis.scaling.estimator.run_many`)
    and returns ``(GroupFit, degenerate)``; the caller warns."""
    keys = keys or {}
    g = Rows.of(g)
    if model_table is None and floors:
        model_table = floors.get("models")
    out = GroupFit(keys=keys, label=group_label(keys))
    batch = np.asarray(g["batch"], float)
    n_batches = len(np.unique(np.round(batch, 6)))
    if n_batches < MIN_BATCHES:
        out.status = f"not fitted: {n_batches} batch size(s), need {MIN_BATCHES}"
        return out, False
    y = np.asarray(g["step_ms"], float)
    context = np.asarray(g["context"], float)
    tau = np.asarray(g["tau"], float)
    out.t2_identified = bool(np.isfinite(context).all() and np.ptp(context) > 0)
    if not out.t2_identified:
        out.notes.append("one context: t2 not identified, per-sequence KV cost folded into t1")

    t1_floor, t2_floor, out.floor_source = sequence_floors(g, floors, t2_identified=out.t2_identified)
    out.lower = np.array([0.0, t1_floor, t2_floor if out.t2_identified else 0.0, 0.0])

    out.experts, out.top_k, out.geometry_source = moe_geometry(g, model_table)
    cov = None
    tried = [v for v in variants if v in VARIANTS]
    if "moe" in tried:
        if not (np.isfinite(out.experts) and np.isfinite(out.top_k)):
            tried.remove("moe")
            model = g.first("model", "this model")
            out.form_note = f"MoE form not tried: no expert geometry for {model}"
        elif out.experts <= 0 or out.top_k <= 0:  # a dense model in the spec table: nothing to try
            tried.remove("moe")
            out.experts = out.top_k = math.nan
        elif coverage_source == "measured" and not pd.isna(g.col("experts_touched")).any():
            cov = np.asarray(g["experts_touched"], float)
            out.coverage_source = "measured experts_touched"
        else:
            cov = coverage(batch, out.experts, out.top_k, tau)
            out.coverage_source = "uniform E(1-(1-k/E)^(B·tau))"
    if not tried:
        raise ValueError(f"variants {variants!r}: expected some of {VARIANTS}")

    ctx = context if out.t2_identified else None
    forms = {}
    for v in tried:
        forms[v] = yield from fit_step_times_steps(batch, ctx, y, coverage=cov if v == "moe" else None,
                                                   lower=out.lower, n_boot=0, label=out.label)
        out.cv_error[v], out.cv_error_max[v] = forms[v].cv_error, forms[v].cv_error_max
        out.fit_error_max[v] = forms[v].fit_error_max
    # Prefer the simpler model on a tie: MoE must beat dense out of sample, not just match it.
    out.variant = min(tried, key=lambda v: (out.cv_error[v] if np.isfinite(out.cv_error[v]) else np.inf,
                                            VARIANTS.index(v)))
    if out.variant != "moe":
        out.coverage_source = ""
        if "moe" in tried and not np.isfinite(out.cv_error["moe"]):
            out.form_note = (f"MoE form, {out.experts:g} experts top-{out.top_k:g}, not testable: {n_batches} "
                             "batches leave too few to predict one held out")
    best = yield from fit_step_times_steps(batch, ctx, y, coverage=cov if out.variant == "moe" else None,
                                           lower=out.lower, samples=_samples(g), n_boot=n_boot, seed=seed, cv=False,
                                           label=out.label, start=forms[out.variant])
    out.coef, out.boot, out.at_bound = best.coef, best.draws, best.active_bounds
    pinned = [c for c, b in out.at_bound if b == 0]
    floored = [c for c, b in out.at_bound if b > 0]
    if pinned:
        out.notes.append(f"{', '.join(pinned)} at bound 0 (not identified by these batches)")
    if floored:
        at_floor = ", ".join(f"{c} at its physical floor {out.lower[COEFS.index(c)]:.4g} ms" for c in floored)
        out.notes.append(f"{at_floor}"
                         f" (not identified above it by these batches; floor: {out.floor_source})")
    if best.rank_deficient:
        out.notes.append("design rank-deficient")
    return out, best.degenerate
