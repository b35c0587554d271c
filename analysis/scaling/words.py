"""Sentences about fits, every number from a fits row; data-derived names pass through :func:`analysis.text.esc`
when the sentence is Markdown (``markdown=True``), and stay plain for results files and the command line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import text
from analysis.scaling.tables import headline_numbers, shard_models


def _n(x, digits=0) -> str:
    """A fitted number: ``unbounded`` when infinite (B½ of a flat curve), else :func:`analysis.text.fixed`."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return text.MISSING
    return "unbounded" if not np.isfinite(x) else text.fixed(x, digits)


def _name(value, markdown: bool) -> str:
    return text.esc(value) if markdown else str(value)


def short_headline(row, *, markdown: bool = True) -> str:
    """One sentence true without footnotes: the measured single-user speed and the measured throughput at the
    largest batch (no model number in it)."""
    gpu = row.get("n_gpus_denominator", np.nan)
    per_gpu = (f" ({_n(row['largest_batch_tok_s_per_gpu'])} tok/s per GPU)" if np.isfinite(gpu) and gpu > 1
               else "")
    peak = row.get("peak_tok_s_per_user", np.nan)
    if _is_step_sweep(row):  # a timed decode step, not a served workload: no prefill, no scheduler, one context
        start = (f"one decode step at batch 1 gives {_n(peak, 1)} tok/s/user (measured), and" if np.isfinite(peak)
                 else "")
        return (f"{_name(row['group'], markdown)}: {start} at batch {_n(row['largest_batch'])}, the largest batch "
                f"timed, one decode step{_context(row)} produces {_n(row['largest_batch_tok_s'])} tok/s{per_gpu} at "
                f"{_n(row['largest_batch_tok_s_per_user'], 1)} tok/s per sequence (decode-step timing: no prefill, "
                "no scheduler, not a served workload).")
    start = (f"one user gets {_n(peak, 1)} tok/s at batch 1 (measured), and" if np.isfinite(peak) else "")
    return (f"{_name(row['group'], markdown)}: {start} at batch {_n(row['largest_batch'])}, the largest batch "
            f"measured, the deployment serves {_n(row['largest_batch_tok_s'])} tok/s{per_gpu} at "
            f"{_n(row['largest_batch_tok_s_per_user'], 1)} tok/s per user.")


def _is_step_sweep(row) -> bool:
    """A sweep of timed decode steps (``step_ms``), as opposed to a serving benchmark's TPOT."""
    return str(row.get("step_source", "")) == "step_ms"


def _context(row) -> str:
    ctx = row.get("largest_batch_context", np.nan)
    return f" at context {_n(ctx)}" if isinstance(ctx, (int, float)) and np.isfinite(ctx) else ""


def describe(row: pd.Series, *, level: float = 50.0, markdown: bool = True, named: bool = True) -> str:
    """One paragraph of findings for a fitted group, every number from the row.

    The ``largest_batch_*`` columns are the largest *measured* batch, so the prose calls them that; the only
    capacity it names is the asymptote (throughput as the batch grows without limit). A coefficient on its bound is
    named. ``named=False`` leaves out the group's name (when a sentence before it already says it).
    """
    bold = "**" if markdown else ""
    peak = row.get("peak_tok_s_per_user")
    peak_text = (f"{_n(peak, 1)} tok/s/user at batch 1 (measured; the model says "
                 f"{_n(row['peak_tok_s_per_user_model'], 1)}, {row['peak_model_error'] * 100:+.1f}%)"
                 if np.isfinite(peak) else
                 f"{_n(row['peak_tok_s_per_user_model'], 1)} tok/s/user at batch 1 (the model's: batch 1 not "
                 "measured)")
    gpu = row.get("n_gpus_denominator")
    per_gpu = (f" ({_n(row['largest_batch_tok_s_per_gpu'])} tok/s/GPU over {gpu:g} GPU{'s' if gpu != 1 else ''})"
               if np.isfinite(gpu) else " (GPU count unknown, so no per-GPU figure)")
    below = row.get(f"batch_below_{level:g}_tok_s_per_user", np.nan)
    if isinstance(below, float) and math.isnan(below):
        below_text = f"per-user speed is below {level:g} tok/s/user already at batch 1"
    elif not np.isfinite(below):
        below_text = f"per-user speed never falls below {level:g} tok/s/user in this model"
    else:
        below_text = f"per-user speed falls below {level:g} tok/s/user at batch {_n(below)} (model)"
    lo, hi = row.get("b_half_lo", np.nan), row.get("b_half_hi", np.nan)
    interval = (f"95% interval {_n(lo)}–{_n(hi)}" if np.isfinite(lo) and np.isfinite(hi) else
                "its 95% interval is not identified by the measured batches")
    asym = row.get("asymptote_tok_s", np.nan)
    bound = str(row.get("at_bound", "") or "")
    # A per-sequence cost pinned at its physical floor can only be larger in truth, so B½ and the asymptote the fit
    # gives are upper bounds; a bootstrap interval around them would look like precision it does not have.
    on_floor = any(term in bound for term in ("t1", "t2"))
    if np.isfinite(asym) and row["b_half"] >= 1 and on_floor:
        half_text = (f"Half of the asymptotic throughput (at most {_n(asym)} tok/s, the capacity if the batch could "
                     f"grow without limit) is reached by batch B½ ≤ {_n(row['b_half'])}: both are upper bounds, "
                     "because the per-sequence cost rests on its physical floor (below)")
    elif np.isfinite(asym) and row["b_half"] >= 1:
        half_text = (f"Half of the asymptotic throughput ({_n(asym)} tok/s, the capacity if the batch could grow "
                     f"without limit) is reached near batch B½ ≈ {_n(row['b_half'])} ({interval})")
    elif np.isfinite(asym):
        half_text = (f"The model's asymptote is {_n(asym)} tok/s (the capacity if the batch could grow without "
                     "limit); its B½ is below batch 1, so the fixed cost is not what limits this deployment")
    else:
        half_text = ("No asymptote is identified: the per-sequence cost is at bound 0, so the fit sees no "
                     "saturation in the measured batches")
    lead = f"{bold}{_name(row['group'], markdown)}{bold}: " if named else "In the batch model, "
    out = (f"{lead}{peak_text} becomes "
           f"{_n(row['largest_batch_tok_s_per_user'], 1)} at batch {_n(row['largest_batch'])}, the largest measured "
           f"batch, where {'one decode step' + _context(row) + ' produces' if _is_step_sweep(row) else 'the instance serves'} "
           f"{_n(row['largest_batch_tok_s'])} tok/s{per_gpu}. {half_text}; "
           f"{below_text}. Model: {row['variant']}, leave-one-batch-out error {row['cv_error'] * 100:.1f}%, worst "
           f"point {row['max_abs_rel_error'] * 100:.1f}%.")
    if bound:
        floor = str(row.get("floor_source", "") or "")
        out += (f" {bold}Degenerate fit:{bold} {bound.replace('_ms', '')} — the measured batches do not identify it "
                "above that bound" + (f" (the floor: {_name(floor, markdown)})" if "floor" in bound and floor else "")
                + ", so B½ and the asymptote rest on the bound" + (" (upper bounds)." if on_floor else "."))
    return out


def headline(fits: pd.DataFrame, *, model: str, precision: str | None = None, framework: str | None = None,
             context: float | None = None, markdown: bool = True) -> dict:
    """:func:`analysis.scaling.headline_numbers` plus ``text`` (the :func:`describe` paragraph) and ``short``
    (the :func:`short_headline` sentence)."""
    from analysis.scaling.tables import select

    row = select(fits, model=model, precision=precision, framework=framework)
    return {**headline_numbers(fits, model=model, precision=precision, framework=framework, context=context),
            "text": describe(row, markdown=markdown), "short": short_headline(row, markdown=markdown)}


def shard_note(points: pd.DataFrame, *, markdown: bool = True) -> str:
    """Prose on points flagged ``shard-measured``, or ``""`` when there are none."""
    parts = [f"{_name(m, markdown)} ({n:g} GPUs)" for m, n in shard_models(points)]
    if not parts:
        return ""
    return (f"{', '.join(parts)}: one GPU's slice of a tensor-parallel deployment, timed alone. The step stands for "
            "the whole deployment, so tok/s is the deployment's and tok/s/GPU divides it by all its GPUs; the "
            "all-reduce between the GPUs was not timed, so both are upper bounds for a real deployment.")

