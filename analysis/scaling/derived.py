"""Numbers derived from fitted coefficients — single-user peak, throughput at the largest batch, asymptote, B½,
the batch where tok/s/user falls below a level — for the point fit and every bootstrap draw at once, and the
measured counterparts with intervals from the repeats.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.scaling.configuration import coverage
from analysis.scaling.inputs import Rows

# A bootstrap bound on a batch-valued number this far outside the measured batches is not identified by them.
UNIDENTIFIED_FACTOR = 100.0
_BISECT = 60
_PERCENTILES = np.true_divide([2.5, 97.5], 100)  # the 95% interval, as np.nanpercentile divides them


def step_at(coef, batch, context, experts, top_k, tau) -> np.ndarray:
    """Step time (ms) of coefficients ``coef`` (4,) or (D, 4) at ``batch`` (scalar or (D,)) and one context."""
    c = np.atleast_2d(np.asarray(coef, float))
    b = np.asarray(batch, float)
    ctx = float(context) if context is not None and np.isfinite(context) else 0.0
    out = c[:, 0] + (c[:, 1] + c[:, 2] * ctx) * b
    if np.isfinite(experts) and (c[:, 3] > 0).any():
        out = out + np.where(c[:, 3] > 0, c[:, 3], 0.0) * coverage(b, experts, top_k, tau)
    return out


def _bisect(f, lo, hi):
    """Root of increasing-then-crossing ``f`` between ``lo`` (f<0) and ``hi`` (f≥0), elementwise."""
    lo, hi = np.array(lo, float), np.array(hi, float)
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        neg = f(mid) < 0
        lo = np.where(neg, mid, lo)
        hi = np.where(neg, hi, mid)
    return 0.5 * (lo + hi)


def b_half(coef, context, experts, top_k, tau) -> np.ndarray:
    """Batch where fixed and per-sequence costs are equal: t0 + tm·C(B) = (t1 + t2·L)·B, per draw.

    For the dense model this is t0/(t1 + t2·L); there per-user speed has halved from its zero-load value and
    throughput reached half its asymptote. With MoE the expert term counts as fixed cost (it saturates at E).
    """
    c = np.atleast_2d(np.asarray(coef, float))
    slope = c[:, 1] + c[:, 2] * np.nan_to_num(context)
    flat = slope <= 1e-9 * np.maximum(c[:, 0], 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        dense = c[:, 0] / slope
    out = np.where(flat, np.inf, dense)
    moe = ~flat & (c[:, 3] > 0) & np.isfinite(experts)
    if moe.any():
        cm, sm = c[moe], slope[moe]
        f = lambda b: cm[:, 0] + cm[:, 3] * coverage(b, experts, top_k, tau) - sm * b  # noqa: E731
        hi = 2.0 * (cm[:, 0] + cm[:, 3] * experts) / sm + 1.0
        root = _bisect(lambda b: -f(b), np.full(len(cm), 1e-9), hi)
        root = np.where(f(hi) >= 0, np.inf, np.where(f(np.full(len(cm), 1e-9)) > 0, root, 0.0))
        out[moe] = root
    return out


def batch_below(coef, level, context, experts, top_k, tau) -> np.ndarray:
    """Batch at which tok/s/user falls to ``level`` (a number, or one per row of ``coef``), per draw; NaN if already
    below at batch 1, inf if never."""
    c = np.atleast_2d(np.asarray(coef, float))
    target = np.broadcast_to(1000.0 * tau / np.asarray(level, float), (len(c),))
    ctx = float(context) if context is not None and np.isfinite(context) else 0.0
    slope = c[:, 1] + c[:, 2] * ctx
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(slope > 0, (target - c[:, 0]) / slope, np.inf)  # the dense form, in closed form
    moe = (c[:, 3] > 0) & np.isfinite(experts)
    if moe.any():
        cm, tm = c[moe], target[moe]
        f = lambda b: step_at(cm, b, context, experts, top_k, tau) - tm  # noqa: E731
        hi = np.full(len(cm), 2.0)
        done = f(hi) >= 0
        while not done.all() and hi.max() < 1e9:
            hi = np.where(done, hi, hi * 2)
            done = f(hi) >= 0
        root = _bisect(f, np.where(hi > 2, hi / 2, 1.0), hi)
        out[moe] = np.where(done, root, np.inf)
    return np.where(step_at(c, 1.0, context, experts, top_k, tau) >= target, np.nan, out)


def derived(coef, *, context, batch_max, experts, top_k, tau, n_gpus, levels) -> dict:
    """Model-derived numbers per draw: each value an array over the rows of ``coef`` (D, 4)."""
    c = np.atleast_2d(np.asarray(coef, float))
    step1 = step_at(c, 1.0, context, experts, top_k, tau)
    stepc = step_at(c, batch_max, context, experts, top_k, tau)
    slope = c[:, 1] + c[:, 2] * np.nan_to_num(context)
    # A per-sequence cost pinned at its bound means no measured saturation: the asymptote is unbounded.
    with np.errstate(divide="ignore"):
        asym = np.where(slope * batch_max > 1e-6 * step1, 1000.0 * tau / slope, np.inf)
    out = {
        "peak_tok_s_per_user_model": 1000.0 * tau / step1,
        "largest_batch_tok_s_model": batch_max * 1000.0 * tau / stepc,
        "asymptote_tok_s": asym,
        "asymptote_tok_s_per_gpu": asym / n_gpus if n_gpus > 0 else np.full(len(c), np.nan),
        "b_half": b_half(c, context, experts, top_k, tau),
    }
    # Every level in one pass (the MoE form bisects: one bisection instead of one per level).
    below = batch_below(np.tile(c, (len(levels), 1)), np.repeat(np.asarray(levels, float), len(c)), context,
                        experts, top_k, tau) if len(levels) else np.empty(0)
    for j, level in enumerate(levels):
        out[f"batch_below_{level:g}_tok_s_per_user"] = below[j * len(c):(j + 1) * len(c)]
    return out


def interval(values) -> tuple[float, float]:
    """The 95% percentile interval of the finite values; NaN with fewer than two."""
    lo, hi = intervals(np.asarray(values, float)[:, None])
    return float(lo[0]), float(hi[0])


def intervals(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column by column of ``values`` (D, k): the 95% interval of the finite values, NaN with fewer than two."""
    finite = np.isfinite(values)
    count = finite.sum(axis=0)
    enough = count >= 2
    lo, hi = np.full(finite.shape[1], np.nan), np.full(finite.shape[1], np.nan)
    if not len(values) or not enough.any():
        return lo, hi
    # np.nanpercentile(…, axis=0), which sorts column by column in Python, done for all columns at once with
    # its arithmetic ('linear' method) step for step, so the numbers are the same to the last bit.
    cols = np.flatnonzero(enough)
    ordered = np.sort(np.where(finite, values, np.nan)[:, cols], axis=0)  # NaN last
    virtual = (count[cols] - 1)[None, :] * _PERCENTILES[:, None]
    below = np.floor(virtual)
    gamma = virtual - below
    rows = below.astype(np.intp)
    a = np.take_along_axis(ordered, rows, axis=0)
    b = np.take_along_axis(ordered, rows + 1, axis=0)
    diff = b - a
    q = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    lo[cols], hi[cols] = q
    return lo, hi


def repeat_interval(samples, fn, *, n: int = 200, seed: int = 0) -> tuple[float, float]:
    """Interval of ``fn(median step)`` (vectorised ``fn``) from resampling one point's repeats."""
    if not isinstance(samples, (list, tuple, np.ndarray)) or len(samples) < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    s = np.asarray(samples, float)
    return interval(fn(np.median(s[rng.integers(0, len(s), (n, len(s)))], axis=1)))


def identified(lo: float, hi: float, batch_min: float, batch_max: float) -> tuple[float, float]:
    """Interval ends on a batch scale, NaN where the bootstrap ran away (beyond ``UNIDENTIFIED_FACTOR`` times the
    measured batch range on either side): the batches measured say nothing about a B½ of 10⁹ or 10⁻¹⁰."""
    low, high = batch_min / UNIDENTIFIED_FACTOR, batch_max * UNIDENTIFIED_FACTOR
    inside = lambda x: np.isfinite(x) and low <= x <= high  # noqa: E731
    return (lo if inside(lo) else math.nan), (hi if inside(hi) else math.nan)


def top_marginal(g: pd.DataFrame | Rows, context_ref: float) -> float:
    """Measured step-time increase per added sequence between the two largest batches at the reference context:
    what a per-sequence floor must not exceed if it is a true lower bound."""
    g = Rows.of(g)
    ctx, batch, step = (np.asarray(g[c], float) for c in ("context", "batch", "step_ms"))
    at = np.isclose(ctx, context_ref) if np.isfinite(context_ref) else np.ones(len(g), bool)
    b = np.unique(batch[at])
    if len(b) < 2:
        return math.nan
    top, second = (float(np.median(step[at][batch[at] == x])) for x in (b[-1], b[-2]))
    return (top - second) / (b[-1] - b[-2])


def measured(g: pd.DataFrame | Rows, context_ref: float, n_gpus: float, *, seed: int) -> dict:
    """Measured batch-1 speed and the throughput at the largest measured batch, at the reference context,
    with intervals from the repeats."""
    g = Rows.of(g)
    ctx, batch = np.asarray(g["context"], float), np.asarray(g["batch"], float)
    at = np.flatnonzero(np.isclose(ctx, context_ref) if np.isfinite(context_ref) else np.ones(len(g), bool))
    samples = g["step_ms_samples"] if "step_ms_samples" in g.columns else np.full(len(g), None)
    speed, tau = np.asarray(g["tok_s_per_user_measured"], float), np.asarray(g["tau"], float)
    out = {}
    one = at[np.isclose(batch[at], 1.0)]
    if len(one):
        i = one[0]
        out["peak_tok_s_per_user"] = float(speed[i])
        out["peak_tok_s_per_user_lo"], out["peak_tok_s_per_user_hi"] = repeat_interval(
            samples[i], lambda s: 1000.0 * tau[i] / s, seed=seed)
    else:
        out["peak_tok_s_per_user"] = out["peak_tok_s_per_user_lo"] = out["peak_tok_s_per_user_hi"] = math.nan
    rows = at if len(at) else np.arange(len(g))
    i = rows[np.argmax(batch[rows])]
    b = float(batch[i])
    # Serving logs measured system output throughput; step logs give batch × per-user speed.
    out_tok_s = np.asarray(g["output_tok_s"], float)[i] if "output_tok_s" in g.columns else math.nan
    tok_s = (float(out_tok_s) if g["step_source"][i] == "tpot" and np.isfinite(out_tok_s)
             else float(g["tok_s_measured"][i]))
    lo, hi = repeat_interval(samples[i], lambda s: b * 1000.0 * tau[i] / s, seed=seed)
    tlo, thi = repeat_interval(samples[i], lambda s: s, seed=seed)
    per_gpu = (lambda x: x / n_gpus) if n_gpus > 0 else (lambda x: math.nan)
    out.update(largest_batch=b, largest_batch_context=float(ctx[i]), largest_batch_tok_s=tok_s,
               largest_batch_tok_s_lo=lo, largest_batch_tok_s_hi=hi, largest_batch_tok_s_per_gpu=per_gpu(tok_s),
               largest_batch_tok_s_per_gpu_lo=per_gpu(lo), largest_batch_tok_s_per_gpu_hi=per_gpu(hi),
               largest_batch_tok_s_per_user=float(speed[i]), largest_batch_tpot_ms=float(g["step_ms"][i]),
               largest_batch_tpot_ms_lo=tlo, largest_batch_tpot_ms_hi=thi)
    return out
