"""Tables a report or a user reads off the fits: the summary, the floors, one group, the headline numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import schema
from analysis.scaling.prediction import fitted, predict

SUMMARY_COLUMNS = ["group", "fitted_form", "cv_error", "peak_tok_s_per_user", "peak_tok_s_per_user_model",
                   "peak_model_error", "batch_min", "largest_batch", "largest_batch_tok_s",
                   "largest_batch_tok_s_per_gpu", "largest_batch_tok_s_per_user", "asymptote_tok_s", "b_half",
                   "b_half_lo", "b_half_hi"]
FLOOR_COLUMNS = ["group", "t1_ms", "t1_floor_ms", "t2_ms", "t2_floor_ms", "context_ref", "floor_ms_per_seq_at_ref",
                 "marginal_ms_per_seq_top", "floor_source"]


def summary(fits: pd.DataFrame) -> pd.DataFrame:
    """Peak, largest measured batch and B½ per fitted group."""
    f = fitted(fits)
    return f[[c for c in SUMMARY_COLUMNS if c in f.columns]].reset_index(drop=True)


def floors_table(fits: pd.DataFrame) -> pd.DataFrame:
    """Per fitted group: the per-sequence coefficients, their physical lower bounds, and the measured cost of one
    more sequence between the two largest batches (a true lower bound must not exceed it)."""
    f = fitted(fits)
    return f[[c for c in FLOOR_COLUMNS if c in f.columns]].reset_index(drop=True)


def select(fits: pd.DataFrame, **where) -> pd.Series:
    """The one fitted row matching every ``column=value``; KeyError naming what was asked if none does."""
    f = fitted(fits)
    mask = np.ones(len(f), bool)
    for k, v in where.items():
        if v is not None and k in f.columns:
            mask &= (f[k] == v).to_numpy()
    if not mask.any():
        raise KeyError(f"no fitted group with {where}")
    return f[mask].iloc[0]


def headline_numbers(fits: pd.DataFrame, *, model: str, precision: str | None = None,
                     framework: str | None = None, context: float | None = None) -> dict:
    """The numbers a report leads with for one configuration: measured peak, model peak, the largest measured
    batch and its throughput, B½."""
    row = select(fits, model=model, precision=precision, framework=framework)
    at_big = predict(pd.DataFrame([row]), batch=row["largest_batch"], context=context).iloc[0]
    keys = ["group", "variant", "peak_tok_s_per_user", "peak_tok_s_per_user_lo", "peak_tok_s_per_user_hi",
            "peak_tok_s_per_user_model", "peak_model_error", "largest_batch", "largest_batch_tok_s",
            "largest_batch_tok_s_per_gpu", "largest_batch_tok_s_per_user", "b_half", "b_half_lo", "b_half_hi",
            "asymptote_tok_s", "cv_error", "max_abs_rel_error"]
    return {**{k: row[k] for k in keys}, "context": float(at_big["context"]),
            "largest_batch_tok_s_model_at_context": float(at_big["tok_s"]),
            "at_bound": str(row.get("at_bound", "") or "")}


def shard_models(points: pd.DataFrame) -> list[tuple[str, float]]:
    """Models with points flagged ``shard-measured`` (one GPU's slice of a TP deployment timed alone) and the
    deployment's GPU count."""
    if "flags" not in points.columns or not len(points):
        return []
    shard = points[schema.has_flag(points, "shard-measured")]
    return [(str(m), float(g["n_gpus"].iloc[0])) for m, g in shard.groupby("model", sort=True)]
