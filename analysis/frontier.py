"""Pareto frontiers of per-user speed against per-GPU throughput, and capacity at equal interactivity.

A serving configuration buys tok/s/user (interactivity) with tok/s/GPU (capacity) and back; a headline number is
one end of that trade. Per group (by default model × hardware × precision × scope × lengths) this module keeps
the measured points nobody beats on both axes (the frontier), reads the frontier's tok/s/GPU at target tok/s/user
levels by log-log interpolation between neighbouring frontier points (NaN outside the measured range: no
extrapolation), compares two frontiers at equal interactivity, and names the fastest per-user point of each
frontier with the concurrency, GPU count and time to first token (TTFT) it was measured at. tok/s/user is
1000 / median TPOT, which ignores time spent queueing for prefill, so every frontier point carries its median TTFT
and frontiers can be restricted to points under a TTFT limit. The GPU denominator is explicit: ``all`` GPUs of the
deployment, or ``decode`` GPUs only for disaggregated serving (what InferenceX's ``output_tput_per_gpu`` divides
by).

The same frontiers are read on cost and energy axes (``metric_frontier``, ``metric_table``, ``efficiency_at``):
$ per million output tokens and J per output token are lower-is-better, so their frontier is the lower envelope;
output tok/s per MW is higher-is-better. The per-point figures and prices come from :mod:`analysis.cost`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import cost
from analysis.schema import trusted
from analysis.text import lengths, missing, plain

# ``workload`` keeps agentic traces (AgentX), random 8K/1K and named datasets apart: one curve per workload.
DEFAULT_BY = ["model", "hardware", "precision", "scope", "workload", "isl", "osl", "context_len"]
DENOMINATORS = ("all", "decode")
DENOMINATOR_TEXT = {
    "all": "all GPUs (prefill + decode)",
    "decode": "decode GPUs only (prefill GPUs not counted)",
}
# Columns carried onto frontier points so a reader (and the confounder check) can see what each point ran.
CONFIG_COLUMNS = [
    "output_tok_s", "framework", "spec_decode", "tp", "ep", "dp", "disagg", "n_gpus", "n_prefill_gpus", "n_decode_gpus",
    "concurrency", "batch_size", "ttft_ms_p50", "date", "tool_version", "flags", "source_file", "source_line",
    "spec_method", "draft_tokens", "acceptance_length", "acceptance_source", "source_kind", "source_url", "workload",
    "tok_s_per_user_def", "ttft_ms_mean",
]
# Per-point uncertainty (analysis.uncertainty.point_intervals) carried onto frontier points when the points have it.
INTERVAL_KEEP = ["n_requests", "n_requests_source", "n_requests_ref", "user_lo", "user_hi", "user_method", "gpu_lo",
                 "gpu_hi", "gpu_method", "level"]
# Median time to first token above which a frontier point is drawn hollow and counted in the prose: tok/s/user
# (1000 / median TPOT) says nothing about how long a request waited before its first token.
TTFT_LIMIT_S = 10.0
# Neighbouring frontier points further apart than this (ratio of tok/s/user) make a value read between them rough.
WIDE_GAP = 3.0


# --- loading and selecting -------------------------------------------------------------------------
def select(points: pd.DataFrame, *, model: str | None = None, isl: float | None = None,
           osl: float | None = None, source_format: str | None = None) -> pd.DataFrame:
    """Rows of one model, one input/output length pair and one source format (None: no filter)."""
    keep = pd.Series(True, index=points.index)
    if model is not None:
        keep &= points["model"] == model
    if isl is not None:
        keep &= points["isl"] == float(isl)
    if osl is not None:
        keep &= points["osl"] == float(osl)
    if source_format is not None:
        keep &= points["format"] == source_format
    return points[keep]


def per_gpu(points: pd.DataFrame, *, denominator: str = "all") -> pd.Series:
    """Output tok/s per GPU under ``denominator``: ``all`` GPUs, or ``decode`` GPUs for disaggregated rows."""
    if denominator not in DENOMINATORS:
        raise ValueError(f"denominator must be one of {', '.join(DENOMINATORS)}, got {denominator!r}")
    gpus = points["n_gpus"].astype(float)
    if denominator == "decode":
        disagg = points["disagg"].fillna(False).astype(bool) & (points["n_decode_gpus"] > 0)
        gpus = gpus.where(~disagg, points["n_decode_gpus"])
    value = points["output_tok_s"] / gpus
    # Some tools give only a per-GPU figure; use it when it already has the asked-for denominator.
    fallback = value.isna() & (points["gpu_denominator"] == denominator)
    return value.where(~fallback, points["tok_s_per_gpu"])


def usable(points: pd.DataFrame, *, denominator: str = "all", ttft_max_ms: float | None = None) -> pd.DataFrame:
    """Rows a frontier may use: trusted (no failed run, no inconsistent throughput), positive finite tok/s/user and
    tok/s/GPU (under ``denominator``) and, when ``ttft_max_ms`` is given, a median TTFT at most that (rows without
    a TTFT are left out then: they cannot be shown to meet the limit).

    Adds ``tok_s_per_gpu`` recomputed under the denominator and a ``gpu_denominator`` column saying which.
    """
    out = points.copy()
    out["tok_s_per_gpu"] = per_gpu(points, denominator=denominator)
    out["gpu_denominator"] = denominator
    ok = trusted(out)
    for col in ("tok_s_per_user", "tok_s_per_gpu"):
        ok &= np.isfinite(out[col]) & (out[col] > 0)
    if ttft_max_ms is not None:
        ok &= out["ttft_ms_p50"].astype(float) <= float(ttft_max_ms)
    return out[ok]


# --- the frontier -----------------------------------------------------------------------------------
def pareto_mask(x: Sequence[float], y: Sequence[float]) -> np.ndarray:
    """True for points no other point beats on both axes (both maximised).

    Point i is dominated when some j has x_j >= x_i and y_j >= y_i with one inequality strict; exact duplicates
    do not dominate each other, so both copies stay.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((-y, -x))  # x descending, ties by y descending
    xs, ys = x[order], y[order]
    keep = np.zeros(n, dtype=bool)
    best_y_at_higher_x = -np.inf
    i = 0
    while i < n:
        j = i
        while j < n and xs[j] == xs[i]:
            j += 1
        # Within equal x only the highest y survives (ties kept); it must also beat every point at higher x.
        top = ys[i]
        tie = ys[i:j] == top
        if top > best_y_at_higher_x:
            keep[order[i:j][tie]] = True
        best_y_at_higher_x = max(best_y_at_higher_x, top)
        i = j
    return keep


def _check_by(points: pd.DataFrame, by: Sequence[str]) -> list[str]:
    by = list(by)
    missing = [c for c in by if c not in points.columns]
    if missing:
        raise ValueError(f"--by: no such column(s) {', '.join(missing)} in the points table")
    return by


def _groups(points: pd.DataFrame, by: list[str]) -> Iterable[tuple[tuple, pd.DataFrame]]:
    if not by:
        yield (), points
        return
    for key, group in points.groupby(by, dropna=False, sort=True):
        yield (key if isinstance(key, tuple) else (key,)), group


def frontier(points: pd.DataFrame, *, by: Sequence[str] | None = None, denominator: str = "all",
             ttft_max_ms: float | None = None) -> pd.DataFrame:
    """Frontier points per group, sorted by tok/s/user ascending (so tok/s/GPU descending within a group).

    Failed runs and rows without both speeds are left out; ``tok_s_per_gpu`` is under ``denominator``. With
    ``ttft_max_ms`` only points whose median TTFT is at most that compete (see ``usable``).
    """
    by = _check_by(points, DEFAULT_BY if by is None else by)
    data = usable(points, denominator=denominator, ttft_max_ms=ttft_max_ms)
    keep_cols = by + ["tok_s_per_user", "tok_s_per_gpu", "gpu_denominator"] + [
        c for c in CONFIG_COLUMNS + INTERVAL_KEEP if c in data.columns and c not in by]
    return _fronts(data, by, data["tok_s_per_gpu"].to_numpy(float), keep_cols)


def with_intervals(points: pd.DataFrame, *, denominator: str = "all", requests: pd.DataFrame | None = None
                   ) -> pd.DataFrame:
    """``points`` with :data:`INTERVAL_KEEP` from :func:`analysis.uncertainty.point_intervals` (tok/s/GPU under
    ``denominator``), computed for the rows a frontier may use; other rows get NaN (no interval)."""
    from analysis import uncertainty  # uncertainty imports this module

    data = usable(points, denominator=denominator)
    out = points.drop(columns=[c for c in INTERVAL_KEEP if c in points.columns])
    if data.empty:
        return out.reindex(columns=list(out.columns) + INTERVAL_KEEP)
    iv = uncertainty.point_intervals(points.loc[data.index], requests, denominator=denominator)
    return out.join(iv[INTERVAL_KEEP])


def acceptance_of(points: pd.DataFrame) -> pd.Series:
    """Per point, what its acceptance rests on: ``none`` (no speculative decoding), ``measured``, ``forced``,
    ``golden``, ``stated``, ``assumed`` (its ``acceptance_source``), ``not stated`` (speculative decoding ran but the
    record does not say how acceptance was obtained) or ``unknown`` (not known whether speculative decoding ran)."""
    from analysis.schema import UNKNOWN, normalize_spec_method
    from analysis.specdecode import KNOWN_SOURCES

    method = (points["spec_method"] if "spec_method" in points else pd.Series(UNKNOWN, index=points.index)
              ).map(normalize_spec_method)
    if "spec_decode" in points:
        method = method.where(method != UNKNOWN, points["spec_decode"].map(normalize_spec_method))
    source = (points["acceptance_source"] if "acceptance_source" in points
              else pd.Series(UNKNOWN, index=points.index)).fillna(UNKNOWN).astype(str).str.strip().str.lower()
    out = pd.Series("not stated", index=points.index, dtype=object)
    out[source.isin(KNOWN_SOURCES)] = source[source.isin(KNOWN_SOURCES)]
    out[(method == UNKNOWN) & ~source.isin(KNOWN_SOURCES)] = UNKNOWN
    out[method == "none"] = "none"
    return out


def _fronts(data: pd.DataFrame, by: list[str], goodness: np.ndarray, keep_cols: list[str]) -> pd.DataFrame:
    """The Pareto points of every ``by`` group of ``data`` on tok/s/user against ``goodness`` (both maximised), in
    one pass over the table: groups in key order; within one, tok/s/user ascending, then goodness descending, ties
    in table order. ``n_points`` is the size of each point's group."""
    if data.empty:
        return pd.DataFrame(columns=keep_cols + ["n_points"])
    group = (data.groupby(by, dropna=False, sort=True).ngroup() if by else pd.Series(0, index=data.index)).to_numpy()
    u = data["tok_s_per_user"].to_numpy(float)
    keep = grouped_pareto_mask(group, u, goodness)
    order = np.flatnonzero(keep)[np.lexsort((-goodness[keep], u[keep], group[keep]))]
    front = data.iloc[order][keep_cols].reset_index(drop=True)
    return front.assign(n_points=np.bincount(group)[group[order]])


def grouped_pareto_mask(group: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`pareto_mask` within each group (integer codes), for all groups at once."""
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((-y, -x, group))  # by group, x descending, ties by y descending
    gs, xs, ys = group[order], x[order], y[order]
    # a block is a run of equal x within a group; its first row holds the block's highest y (its top)
    new_block = np.r_[True, (gs[1:] != gs[:-1]) | (xs[1:] != xs[:-1])]
    starts, block = np.flatnonzero(new_block), np.cumsum(new_block) - 1
    top, block_group = ys[starts], gs[starts]
    # the best top among earlier blocks of the same group (-inf for a group's first block)
    running = pd.Series(top).groupby(block_group).cummax().to_numpy()
    before = np.r_[-np.inf, running[:-1]]
    before[np.r_[True, block_group[1:] != block_group[:-1]]] = -np.inf
    keep_sorted = (ys == top[block]) & (top[block] > before[block])
    keep = np.zeros(n, dtype=bool)
    keep[order[keep_sorted]] = True
    return keep


# --- reading a frontier at equal interactivity ------------------------------------------------------
def capacity_at(front: pd.DataFrame, targets: Iterable[float]) -> np.ndarray:
    """tok/s/GPU of one group's frontier at each target tok/s/user; NaN outside the measured range.

    Between neighbouring frontier points the frontier is taken as a straight line in log-log space, so the value
    is monotone between them and never above the slower neighbour's tok/s/GPU nor below the faster one's.
    A target equal to a measured point returns that point.
    """
    targets = np.atleast_1d(np.asarray(list(targets), dtype=float))
    if front.empty:
        return np.full(len(targets), np.nan)
    f = front.sort_values(["tok_s_per_user", "tok_s_per_gpu"], ascending=[True, False])
    u = f["tok_s_per_user"].to_numpy(float)
    g = f["tok_s_per_gpu"].to_numpy(float)
    # Duplicates at equal tok/s/user: the best tok/s/GPU stands for that level.
    u_unique = np.unique(u)
    g_unique = np.array([g[u == uu].max() for uu in u_unique])
    out = np.full(len(targets), np.nan)
    inside = (targets >= u_unique[0]) & (targets <= u_unique[-1])
    if inside.any():
        log_g = np.interp(np.log(targets[inside]), np.log(u_unique), np.log(g_unique))
        out[inside] = np.exp(log_g)
    return out


def bracketing_points(front: pd.DataFrame, target: float) -> pd.DataFrame:
    """The one or two frontier points an interpolated value at ``target`` tok/s/user comes from."""
    f = front.sort_values("tok_s_per_user")
    u = f["tok_s_per_user"].to_numpy(float)
    if len(u) == 0 or target < u[0] or target > u[-1]:
        return f.iloc[0:0]
    exact = f[u == target]
    if len(exact):
        return exact.iloc[[int(np.argmax(exact["tok_s_per_gpu"].to_numpy()))]]
    hi = int(np.searchsorted(u, target))
    return f.iloc[[hi - 1, hi]]


def fastest_point(front: pd.DataFrame) -> pd.Series:
    """The fastest per-user point of a frontier: its tok/s/user, the tok/s/GPU it costs, and (when present) the
    concurrency, GPU count and median TTFT it was measured at. A single user only when concurrency is 1."""
    if front.empty:
        return pd.Series({"tok_s_per_user": np.nan, "tok_s_per_gpu": np.nan, "concurrency": np.nan,
                          "n_gpus": np.nan, "ttft_ms_p50": np.nan})
    return front.loc[front["tok_s_per_user"].idxmax()]


def capacity_end(front: pd.DataFrame) -> pd.Series:
    """The highest tok/s/GPU point of a frontier and the tok/s/user left at it."""
    if front.empty:
        return pd.Series({"tok_s_per_user": np.nan, "tok_s_per_gpu": np.nan, "concurrency": np.nan,
                          "n_gpus": np.nan, "ttft_ms_p50": np.nan})
    return front.loc[front["tok_s_per_gpu"].idxmax()]


def target_column(target: float) -> str:
    return f"tok_s_per_gpu_at_{plain(target)}"


def reading_column(target: float) -> str:
    """How the value at ``target`` was read: measured, interpolated, wide gap, lower bound or above range."""
    return f"reading_at_{plain(target)}"


def lower_bound_column(target: float) -> str:
    """tok/s/GPU the frontier is known to reach at ``target`` when it was only measured faster than that."""
    return f"tok_s_per_gpu_lower_bound_at_{plain(target)}"


def gap_column(target: float) -> str:
    """How far apart (×, in tok/s/user) the frontier points a reading at ``target`` comes from are."""
    return f"gap_at_{plain(target)}"


def spec_decode_column(target: float) -> str:
    """The speculative decoding of the frontier point(s) a reading at ``target`` comes from (``mtp``, ``none``,
    ``mtp+none`` when the two bracketing points differ; empty when nothing was read)."""
    return f"spec_decode_at_{plain(target)}"


def acceptance_column(target: float) -> str:
    """What the acceptance of the point(s) a reading at ``target`` comes from rests on (:func:`acceptance_of`;
    ``forced+measured`` when the bracketing points differ)."""
    return f"acceptance_at_{plain(target)}"


def source_kind_column(target: float) -> str:
    """The ``source_kind`` of the point(s) a reading at ``target`` comes from (``published-table``, ``log`` ...)."""
    return f"source_kind_at_{plain(target)}"


def interval_columns(target: float) -> dict[str, str]:
    """The columns holding a reading's interval at ``target``: ``lo``, ``hi`` (tok/s/GPU), ``method`` (the points'
    interval methods, ``+``-joined), ``n`` (the fewest requests behind the points read), ``n_source``."""
    t = plain(target)
    return {"lo": f"gpu_lo_at_{t}", "hi": f"gpu_hi_at_{t}", "method": f"interval_method_at_{t}",
            "n": f"n_requests_at_{t}", "n_source": f"n_requests_source_at_{t}"}


def _column(f: pd.DataFrame, col: str, default) -> np.ndarray:
    return f[col].to_numpy() if col in f else np.full(len(f), default, dtype=object if isinstance(default, str)
                                                       else float)


def capacity_readings(front: pd.DataFrame, targets: Iterable[float], *, wide_gap: float = WIDE_GAP
                      ) -> pd.DataFrame:
    """One row per target: the interpolated ``tok_s_per_gpu`` (NaN outside the measured range, as
    ``capacity_at``), how it was read, the ``gap`` between the bracketing points (ratio of their tok/s/user) and a
    ``lower_bound_tok_s_per_gpu`` below the measured range.

    ``reading`` is ``measured`` (a frontier point sits at the target), ``interpolated``, ``wide gap`` (interpolated
    between points more than ``wide_gap``× apart in tok/s/user: rough), ``lower bound`` (the target is slower than
    the frontier's slowest point; a deployment that serves every user faster than the target also meets it, so the
    slowest point's tok/s/GPU is a floor, not an estimate) or ``above range`` (faster than anything measured).

    Each reading also says what it rests on: ``spec_decode`` and ``acceptance`` (:func:`acceptance_of`) of the
    point(s) read, their ``source_kind``, and an interval ``gpu_lo``–``gpu_hi`` for the tok/s/GPU read: a measured
    point's own interval (:mod:`analysis.uncertainty`, carried as ``gpu_lo``/``gpu_hi`` on the frontier points), an
    interpolated value's ends interpolated in log-log space with the value's own weights (the tok/s/user
    uncertainty of the two points is not propagated), for a lower bound the slowest point's interval. NaN when any
    point read has none. ``n_requests`` is the fewest requests behind the points read, ``n_requests_source`` how
    those counts were obtained and ``interval_method`` the points' interval methods.
    """
    targets = [float(t) for t in targets]
    values = capacity_at(front, targets)
    rows = []
    f = front.sort_values("tok_s_per_user")
    u = f["tok_s_per_user"].to_numpy(float)
    g = f["tok_s_per_gpu"].to_numpy(float)
    spec = f["spec_decode"].astype(str).to_numpy() if "spec_decode" in f else np.full(len(f), "unknown")
    accept = acceptance_of(f).to_numpy() if len(f) else np.array([], dtype=object)
    kind = _column(f, "source_kind", "unknown").astype(str)
    lo, hi = _column(f, "gpu_lo", np.nan).astype(float), _column(f, "gpu_hi", np.nan).astype(float)
    method = _column(f, "gpu_method", "none").astype(str)
    n_req = _column(f, "n_requests", np.nan).astype(float)
    n_src = _column(f, "n_requests_source", "unknown").astype(str)

    def best(speed: float) -> np.ndarray:  # the best point at a speed (ties on a frontier: all of them)
        at = u == speed
        return at & (g == g[at].max())

    def joined(values: np.ndarray, *speeds: float) -> str:
        found = set()
        for speed in speeds:
            found |= set(values[best(speed)])
        return "+".join(sorted(found))

    def about(*speeds: float) -> dict:
        idx = np.flatnonzero(np.logical_or.reduce([best(s) for s in speeds]))
        return {"spec_decode": joined(spec, *speeds), "acceptance": joined(accept, *speeds),
                "source_kind": joined(kind, *speeds), "interval_method": joined(method, *speeds),
                "n_requests": float(np.min(n_req[idx])) if np.isfinite(n_req[idx]).all() else np.nan,
                "n_requests_source": joined(n_src, *speeds)}

    def interval(speeds: tuple[float, ...], target: float) -> tuple[float, float]:
        ends = [int(np.flatnonzero(best(s))[0]) for s in speeds]
        los, his = lo[ends], hi[ends]
        if not (np.isfinite(los).all() and np.isfinite(his).all() and (los > 0).all()):
            return np.nan, np.nan
        if len(ends) == 1:
            return float(los[0]), float(his[0])
        w = (np.log(target) - np.log(speeds[0])) / (np.log(speeds[1]) - np.log(speeds[0]))
        return (float(np.exp((1 - w) * np.log(los[0]) + w * np.log(los[1]))),
                float(np.exp((1 - w) * np.log(his[0]) + w * np.log(his[1]))))

    for t, value in zip(targets, values):
        row = {"target_tok_s_per_user": t, "tok_s_per_gpu": value, "reading": "above range", "gap": np.nan,
               "lower_bound_tok_s_per_gpu": np.nan, "spec_decode": "", "acceptance": "", "source_kind": "",
               "gpu_lo": np.nan, "gpu_hi": np.nan, "interval_method": "", "n_requests": np.nan,
               "n_requests_source": ""}
        speeds: tuple[float, ...] = ()
        if len(u) == 0:
            row["reading"] = "no data"
        elif t < u[0]:
            row["reading"] = "lower bound"
            row["lower_bound_tok_s_per_gpu"] = g[u == u[0]].max()
            speeds = (u[0],)
        elif np.isfinite(value):  # the points bracketing_points would return, read off the sorted speeds
            if (u == t).any():
                row.update(reading="measured", gap=1.0)
                speeds = (t,)
            else:
                hi_i = int(np.searchsorted(u, t))
                row["gap"] = u[hi_i] / u[hi_i - 1]
                row["reading"] = "wide gap" if row["gap"] > wide_gap else "interpolated"
                speeds = (u[hi_i - 1], u[hi_i])
        if speeds:
            row.update(about(*speeds))
            row["gpu_lo"], row["gpu_hi"] = interval(speeds, t if len(speeds) == 2 else speeds[0])
        rows.append(row)
    return pd.DataFrame(rows)


def capacity_table(fronts: pd.DataFrame, *, targets: Iterable[float], by: Sequence[str] | None = None,
                   ttft_limit_s: float = TTFT_LIMIT_S, wide_gap: float = WIDE_GAP) -> pd.DataFrame:
    """One row per group: GPU counts, measured tok/s/user range, TTFT, tok/s/GPU at each target (with how it was
    read and a lower bound below the measured range), the fastest per-user point and the capacity end."""
    by = list(DEFAULT_BY if by is None else by)
    targets = list(targets)
    rows = []
    for key, front in _groups(fronts, by):
        fast, cap = fastest_point(front), capacity_end(front)
        ttft = front["ttft_ms_p50"].astype(float) if "ttft_ms_p50" in front else pd.Series(np.nan, index=front.index)
        row = dict(zip(by, key))
        row.update({
            "gpu_denominator": front["gpu_denominator"].iloc[0] if "gpu_denominator" in front else "unknown",
            "n_points": int(front["n_points"].iloc[0]) if "n_points" in front else len(front),
            "n_frontier": len(front),
            "n_gpus_min": front["n_gpus"].min() if "n_gpus" in front else np.nan,
            "n_gpus_max": front["n_gpus"].max() if "n_gpus" in front else np.nan,
            "tok_s_per_user_min": front["tok_s_per_user"].min(),
            "tok_s_per_user_max": front["tok_s_per_user"].max(),
            "ttft_s_p50_min": ttft.min() / 1000.0,
            "ttft_s_p50_max": ttft.max() / 1000.0,
            "n_over_ttft_limit": int((ttft > ttft_limit_s * 1000.0).sum()),
        })
        readings = capacity_readings(front, targets, wide_gap=wide_gap)
        for t, r in zip(targets, readings.itertuples()):
            row[target_column(t)] = r.tok_s_per_gpu
            row[reading_column(t)] = r.reading
            row[lower_bound_column(t)] = r.lower_bound_tok_s_per_gpu
            row[gap_column(t)] = r.gap
            row[spec_decode_column(t)] = r.spec_decode
            row[acceptance_column(t)] = r.acceptance
            row[source_kind_column(t)] = r.source_kind
            cols = interval_columns(t)
            row.update({cols["lo"]: r.gpu_lo, cols["hi"]: r.gpu_hi, cols["method"]: r.interval_method,
                        cols["n"]: r.n_requests, cols["n_source"]: r.n_requests_source})
        accept = acceptance_of(front)
        fast_accept = accept.get(fast.name, "") if len(front) else ""
        row.update({
            # a frontier that holds forced and measured acceptance compares a pinned acceptance with a real one
            "acceptance_on_frontier": "+".join(sorted(set(accept))),
            "mixed_forced_measured": bool({"forced", "measured"} <= set(accept)),
            "source_kinds": "+".join(sorted(set(front["source_kind"].astype(str)))) if "source_kind" in front
            else "unknown",
            "fastest_acceptance": fast_accept,
            "fastest_source_kind": str(fast.get("source_kind", "unknown")),
            "fastest_source_url": str(fast.get("source_url", "") or ""),
            "fastest_user_lo": float(fast.get("user_lo", np.nan)),
            "fastest_user_hi": float(fast.get("user_hi", np.nan)),
            "fastest_user_method": str(fast.get("user_method", "none")),
            "fastest_n_requests": float(fast.get("n_requests", np.nan)),
            "fastest_n_requests_source": str(fast.get("n_requests_source", "unknown")),
            "fastest_tok_s_per_user_def": str(fast.get("tok_s_per_user_def", "") or ""),
            "fastest_workload": str(fast.get("workload", "unknown")),
        })
        row.update({
            "fastest_tok_s_per_user": fast["tok_s_per_user"],
            "fastest_tok_s_per_gpu": fast["tok_s_per_gpu"],
            "fastest_concurrency": fast.get("concurrency", np.nan),
            "fastest_n_gpus": fast.get("n_gpus", np.nan),
            "fastest_ttft_ms_p50": fast.get("ttft_ms_p50", np.nan),
            # a frontier pools every configuration of its group: say which speculative decoding each end used
            "fastest_spec_decode": str(fast.get("spec_decode", "unknown")),
            "capacity_spec_decode": str(cap.get("spec_decode", "unknown")),
            "spec_decode_on_frontier": ", ".join(sorted(front["spec_decode"].astype(str).unique()))
            if "spec_decode" in front else "unknown",
            "capacity_tok_s_per_gpu": cap["tok_s_per_gpu"],
            "capacity_tok_s_per_user": cap["tok_s_per_user"],
            "capacity_concurrency": cap.get("concurrency", np.nan),
            "capacity_n_gpus": cap.get("n_gpus", np.nan),
            "capacity_ttft_ms_p50": cap.get("ttft_ms_p50", np.nan),
        })
        rows.append(row)
    return pd.DataFrame(rows)


def capacity_long(table: pd.DataFrame, *, targets: Iterable[float], by: Sequence[str]) -> pd.DataFrame:
    """The capacity table in long form: one row per group × target (for bars and ratios), with how each value was
    read and the lower bound below the measured range when the table has them."""
    parts = []
    for t in targets:
        part = table[list(by) + ["gpu_denominator"]].copy()
        part["target_tok_s_per_user"] = float(t)
        part["tok_s_per_gpu"] = table[target_column(t)].to_numpy()
        if reading_column(t) in table:
            part["reading"] = table[reading_column(t)].to_numpy()
            part["lower_bound_tok_s_per_gpu"] = table[lower_bound_column(t)].to_numpy()
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def overlap(front_a: pd.DataFrame, front_b: pd.DataFrame) -> tuple[float, float]:
    """The tok/s/user range both frontiers measured; (nan, nan) when they do not overlap."""
    if front_a.empty or front_b.empty:
        return (np.nan, np.nan)
    lo = max(front_a["tok_s_per_user"].min(), front_b["tok_s_per_user"].min())
    hi = min(front_a["tok_s_per_user"].max(), front_b["tok_s_per_user"].max())
    return (lo, hi) if lo <= hi else (np.nan, np.nan)


def ratio_at(front_a: pd.DataFrame, front_b: pd.DataFrame, targets: Iterable[float]) -> np.ndarray:
    """tok/s/GPU of A over B at equal tok/s/user; NaN where either frontier was not measured."""
    targets = list(targets)
    return capacity_at(front_a, targets) / capacity_at(front_b, targets)


def levels_in(lo: float, hi: float, *, n: int = 25) -> np.ndarray:
    """``n`` tok/s/user levels spread evenly in log space over [lo, hi] (one level when lo == hi)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return np.array([])
    if lo == hi:
        return np.array([lo])
    levels = np.exp(np.linspace(np.log(lo), np.log(hi), n))
    levels[0], levels[-1] = lo, hi  # exact ends: exp(log(x)) can land a hair outside the measured range
    return levels


def group_label(row: pd.Series | dict, by: Sequence[str], *, pair_lengths: bool = False) -> str:
    """A readable group name, e.g. ``GB200 NVL72 · fp4 · rack``; NaN parts are left out. ``pair_lengths``: ``isl``
    and ``osl`` written as one ``8k/1k`` part (where the ``isl`` part would be)."""
    parts = []
    for col in by:
        value = row[col]
        if pair_lengths and col in ("isl", "osl") and "isl" in by and "osl" in by:
            if col == "isl" and not (missing(row["isl"]) or missing(row["osl"])):
                parts.append(lengths(row["isl"], row["osl"]))
            continue
        if value is None or (isinstance(value, float) and np.isnan(value)) or value == "unknown":
            continue
        parts.append(plain(value) if isinstance(value, float) else str(value))
    return " · ".join(parts)


# --- frontiers on energy and cost axes -------------------------------------------------------------------
METRICS = tuple(cost.METRICS)
DEFAULT_METRIC = "tok_s_per_gpu"
PRICE_COLUMNS = ["usd_per_gpu_hour", "price_basis", "price_source", "price_date"]


def metric_column(metric: str, target: float) -> str:
    """``<metric>_at_<level>``: the frontier's value of ``metric`` at ``target`` tok/s/user."""
    return f"{cost.check_metric(metric)}_at_{plain(target)}"


def metric_bound_column(metric: str, target: float) -> str:
    """A floor (higher-is-better metric) or ceiling (lower-is-better) below the measured range."""
    side = "upper" if cost.lower_is_better(metric) else "lower"
    return f"{metric}_{side}_bound_at_{plain(target)}"


def metric_points(points: pd.DataFrame, *, metric: str = DEFAULT_METRIC, denominator: str = "all",
                  ttft_max_ms: float | None = None, prices: pd.DataFrame | None = None) -> pd.DataFrame:
    """Usable points (see ``usable``) with a finite positive ``metric``. For energy metrics only points with
    measured GPU power, for cost only points whose hardware has a price (``prices``, default the shipped table);
    the price and ``power_scope`` ride along on each row."""
    cost.check_metric(metric)
    data = usable(points, denominator=denominator, ttft_max_ms=ttft_max_ms)
    if metric == DEFAULT_METRIC:
        return data
    data = cost.with_efficiency(data, cost.load_prices() if prices is None else prices, denominator=denominator)
    ok = np.isfinite(data[metric].astype(float)) & (data[metric].astype(float) > 0)
    return data[ok]


def _goodness(values: pd.Series | np.ndarray, metric: str) -> np.ndarray:
    """Values turned so that higher is better (1/x for a lower-is-better metric): one frontier rule for all."""
    v = np.asarray(values, dtype=float)
    return 1.0 / v if cost.lower_is_better(metric) else v


def metric_frontier(points: pd.DataFrame, *, metric: str = DEFAULT_METRIC, by: Sequence[str] | None = None,
                    denominator: str = "all", ttft_max_ms: float | None = None,
                    prices: pd.DataFrame | None = None) -> pd.DataFrame:
    """Frontier points per group on tok/s/user against ``metric``: the upper envelope for tok/s/GPU and tok/s/MW,
    the lower envelope for $/M tokens and J/token (nobody faster *and* cheaper). ``n_points`` counts the group's
    points that have the metric. ``tok_s_per_gpu`` gives exactly :func:`frontier`."""
    if metric == DEFAULT_METRIC:
        return frontier(points, by=by, denominator=denominator, ttft_max_ms=ttft_max_ms)
    by = _check_by(points, DEFAULT_BY if by is None else by)
    data = metric_points(points, metric=metric, denominator=denominator, ttft_max_ms=ttft_max_ms, prices=prices)
    extra = [metric, "tok_s_per_gpu", "gpu_denominator", "j_per_output_token", "tok_s_per_mw", "usd_per_mtok",
             "power_scope"] + PRICE_COLUMNS
    keep_cols = by + ["tok_s_per_user"] + list(dict.fromkeys(extra)) + [
        c for c in CONFIG_COLUMNS if c in data.columns and c not in by]
    return _fronts(data, by, _goodness(data[metric], metric) if len(data) else np.zeros(0), keep_cols)


def metric_readings(front: pd.DataFrame, targets: Iterable[float], *, metric: str = DEFAULT_METRIC,
                    wide_gap: float = WIDE_GAP) -> pd.DataFrame:
    """``capacity_readings`` for any metric: one row per target with ``value`` (log-log interpolation between
    frontier points, NaN outside the measured range), ``reading``, ``gap`` and ``bound`` (below the measured
    range: the slowest frontier point's value, a floor for a higher-is-better metric and a ceiling for cost or
    J/token — a deployment that serves every user faster also meets the slower level)."""
    cost.check_metric(metric)
    turned = front.assign(tok_s_per_gpu=_goodness(front[metric], metric)) if len(front) else \
        pd.DataFrame({"tok_s_per_user": [], "tok_s_per_gpu": []})
    r = capacity_readings(turned, targets, wide_gap=wide_gap)
    back = (lambda v: 1.0 / v) if cost.lower_is_better(metric) else (lambda v: v)
    return pd.DataFrame({"target_tok_s_per_user": r["target_tok_s_per_user"],
                         "value": back(r["tok_s_per_gpu"].to_numpy(float)), "reading": r["reading"],
                         "gap": r["gap"], "bound": back(r["lower_bound_tok_s_per_gpu"].to_numpy(float)),
                         "spec_decode": r["spec_decode"], "acceptance": r["acceptance"],
                         "source_kind": r["source_kind"]})


def metric_at(front: pd.DataFrame, targets: Iterable[float], *, metric: str = DEFAULT_METRIC) -> np.ndarray:
    """``capacity_at`` for any metric: the frontier's value at each target tok/s/user, NaN outside the range."""
    return metric_readings(front, targets, metric=metric)["value"].to_numpy(float)


def metric_table(fronts: pd.DataFrame, *, targets: Iterable[float], metric: str = DEFAULT_METRIC,
                 by: Sequence[str] | None = None, wide_gap: float = WIDE_GAP) -> pd.DataFrame:
    """One row per group: GPU counts, measured tok/s/user range, ``<metric>_at_<level>`` with how it was read
    and its bound, and what the figures rest on (the price for cost, ``power_scope`` for energy). For
    ``tok_s_per_gpu`` this is :func:`capacity_table`."""
    by = list(DEFAULT_BY if by is None else by)
    targets = list(targets)
    if metric == DEFAULT_METRIC:
        return capacity_table(fronts, targets=targets, by=by, wide_gap=wide_gap)
    rows = []
    for key, front in _groups(fronts, by):
        row = dict(zip(by, key))
        row.update({
            "gpu_denominator": front["gpu_denominator"].iloc[0],
            "n_points": int(front["n_points"].iloc[0]),
            "n_frontier": len(front),
            "n_gpus_min": front["n_gpus"].min() if "n_gpus" in front else np.nan,
            "n_gpus_max": front["n_gpus"].max() if "n_gpus" in front else np.nan,
            "tok_s_per_user_min": front["tok_s_per_user"].min(),
            "tok_s_per_user_max": front["tok_s_per_user"].max(),
        })
        readings = metric_readings(front, targets, metric=metric, wide_gap=wide_gap)
        for t, r in zip(targets, readings.itertuples()):
            row[metric_column(metric, t)] = r.value
            row[reading_column(t)] = r.reading
            row[metric_bound_column(metric, t)] = r.bound
            row[gap_column(t)] = r.gap
            row[spec_decode_column(t)] = r.spec_decode
            row[acceptance_column(t)] = r.acceptance
        if metric in cost.COST_METRICS:
            for col in PRICE_COLUMNS:
                values = front[col].dropna().unique()
                row[col] = values[0] if len(values) == 1 else "; ".join(map(str, values))
        else:
            row["power_scope"] = cost.POWER_SCOPE
        rows.append(row)
    return pd.DataFrame(rows)


def no_metric_groups(points: pd.DataFrame, fronts: pd.DataFrame, *, metric: str, by: Sequence[str],
                     denominator: str = "all", ttft_max_ms: float | None = None) -> pd.DataFrame:
    """Groups with usable points but no frontier on ``metric`` (no measured power, no price), one row each."""
    by = list(by)
    every = usable(points, denominator=denominator, ttft_max_ms=ttft_max_ms)
    if every.empty:
        return pd.DataFrame(columns=by)
    have = set(map(tuple, fronts[by].astype(str).to_numpy())) if len(fronts) else set()
    groups = every[by].drop_duplicates()
    return groups[[tuple(map(str, r)) not in have for r in groups.to_numpy()]].reset_index(drop=True)


@dataclass
class Efficiency:
    """One efficiency figure at equal interactivity, with what it rests on (for claim cards and reports)."""

    metric: str
    level: float
    value: float
    reading: str
    bound: float
    denominator: str
    selection: dict
    n_points: int
    n_with_metric: int
    points: pd.DataFrame
    price: cost.Price | None
    power_scope: str
    why: str | None = None       # why there is no value: one of NO_VALUE_WHY (None when there is one)
    detail: dict = field(default_factory=dict)  # the facts behind ``why`` (models found, the frontier's range)

    @property
    def checkable(self) -> bool:
        return bool(np.isfinite(self.value))

    @property
    def reason(self) -> str | None:
        """``why`` in a sentence (None when there is a value)."""
        from analysis.frontier_words import efficiency_reason

        return efficiency_reason(self)


# Why an efficiency figure has no value (Efficiency.why).
NO_VALUE_WHY = ("no points", "several models", "no price", "no power", "frontier starts faster", "frontier too slow")


def efficiency_at(points: pd.DataFrame, *, hardware: str, precision: str, isl: float, osl: float, level: float,
                  metric: str, denominator: str = "all", model: str | None = None, scope: str | None = None,
                  prices: pd.DataFrame | None = None, ttft_max_ms: float | None = None) -> Efficiency:
    """``metric`` of one hardware × precision frontier at ``level`` tok/s/user and the stated lengths.

    ``points`` should hold one model, or pass ``model``: a frontier over several models answers nothing, so that
    case returns no value and says why. Without ``scope`` the frontier is the envelope over every scope measured
    for that hardware and precision.
    Returns the value (NaN when it cannot be read), how it was read (``measured``, ``interpolated``, ``wide
    gap``, ``lower bound``, ``above range`` or ``no data``), the bound below the measured range, the frontier
    points it was read from (``points``: the bracketing pair or the slowest point), the price used (cost) and a
    ``reason`` when there is no value: no points at these lengths, no measured power, no price for the hardware.
    """
    cost.check_metric(metric)
    selection = {"model": model, "hardware": hardware, "precision": precision, "scope": scope, "isl": float(isl),
                 "osl": float(osl)}
    sel = select(points, model=model, isl=isl, osl=osl)
    sel = sel[(sel["hardware"] == hardware) & (sel["precision"] == precision)]
    if scope is not None:
        sel = sel[sel["scope"] == scope]
    prices = cost.load_prices() if prices is None else prices
    price = cost.price_for(prices, hardware) if metric in cost.COST_METRICS else None
    n_points = len(usable(sel, denominator=denominator, ttft_max_ms=ttft_max_ms))
    data = metric_points(sel, metric=metric, denominator=denominator, ttft_max_ms=ttft_max_ms, prices=prices)
    power_scope = cost.POWER_SCOPE if metric in cost.ENERGY_METRICS else ""
    empty = dict(metric=metric, level=float(level), value=np.nan, bound=np.nan, denominator=denominator,
                 selection=selection, n_points=n_points, n_with_metric=len(data), points=data.iloc[0:0],
                 price=price, power_scope=power_scope)
    if n_points == 0:
        return Efficiency(**empty, reading="no data", why="no points")
    models = sorted(sel["model"].dropna().astype(str).unique())
    if model is None and len(models) > 1:
        return Efficiency(**empty, reading="no data", why="several models", detail={"models": models})
    if metric in cost.COST_METRICS and price is None:
        return Efficiency(**empty, reading="no data", why="no price")
    if data.empty:
        return Efficiency(**empty, reading="no data", why="no power")
    front = metric_frontier(data, metric=metric, by=[], denominator=denominator, prices=prices)
    r = metric_readings(front, [level], metric=metric).iloc[0]
    if r["reading"] == "lower bound":
        used = front.loc[[front["tok_s_per_user"].idxmin()]]
    else:
        f = front.assign(tok_s_per_gpu=_goodness(front[metric], metric))
        used = front.loc[bracketing_points(f, float(level)).index]
    why, detail = None, {}
    if not np.isfinite(r["value"]):
        why = "frontier starts faster" if r["reading"] == "lower bound" else "frontier too slow"
        detail = {"slowest_tok_s_per_user": float(front["tok_s_per_user"].min()),
                  "fastest_tok_s_per_user": float(front["tok_s_per_user"].max())}
    return Efficiency(**{**empty, "value": float(r["value"]), "bound": float(r["bound"]), "points": used},
                      reading=str(r["reading"]), why=why, detail=detail)


# --- command line -----------------------------------------------------------------------------------
CLI_END_COLUMNS = ["fastest_tok_s_per_user", "fastest_tok_s_per_gpu", "fastest_concurrency", "fastest_n_gpus",
                   "fastest_ttft_ms_p50"]


# --- report helpers (what the frontier notebook shows) ------------------------------------------------
REPORT_BY = ["hardware", "precision", "scope", "workload"]


def report_tables(points: pd.DataFrame, *, targets: Sequence[float], denominator: str = "all",
                  by: Sequence[str] = REPORT_BY, ttft_limit_s: float = TTFT_LIMIT_S,
                  ttft_max_ms: float | None = None, intervals: bool = True,
                  requests: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Usable points, frontier points and the capacity table (with a ``label`` column) for one selection.
    ``intervals``: each point's n_requests and intervals (:func:`with_intervals`) ride along, so every reading
    carries its interval."""
    by = list(by)
    if intervals:
        points = with_intervals(points, denominator=denominator, requests=requests)
    data = usable(points, denominator=denominator, ttft_max_ms=ttft_max_ms)
    fronts = frontier(points, by=by, denominator=denominator, ttft_max_ms=ttft_max_ms)
    table = capacity_table(fronts, targets=targets, by=by, ttft_limit_s=ttft_limit_s)
    if len(table):
        table.insert(0, "label", [group_label(r, by, pair_lengths=True) for _, r in table.iterrows()])
    return data, fronts, table


def fastest_points(table: pd.DataFrame, *, ttft_limit_s: float = TTFT_LIMIT_S) -> pd.DataFrame:
    """The fastest per-user point of each group's frontier (concurrency, GPUs, median TTFT) next to its capacity
    end, with the share of capacity kept, and the facts a reader is told about it: ``single_user`` (concurrency 1)
    and ``long_ttft`` (median TTFT above ``ttft_limit_s``); :func:`analysis.frontier_words.fastest_note` says them."""
    spec = [c for c in ("fastest_spec_decode", "capacity_spec_decode", "fastest_acceptance", "fastest_source_kind",
                        "fastest_source_url", "fastest_user_lo", "fastest_user_hi", "fastest_user_method",
                        "fastest_n_requests", "fastest_n_requests_source", "fastest_tok_s_per_user_def",
                        "fastest_workload") if c in table.columns]
    ends = table[["label", "n_frontier", "fastest_tok_s_per_user", "fastest_concurrency", "fastest_n_gpus",
                  "fastest_ttft_ms_p50", "fastest_tok_s_per_gpu", "capacity_tok_s_per_gpu",
                  "capacity_tok_s_per_user", "capacity_concurrency"] + spec].copy()
    ends.insert(ends.columns.get_loc("fastest_ttft_ms_p50"), "fastest_ttft_s_p50", ends["fastest_ttft_ms_p50"] / 1000)
    ends = ends.drop(columns="fastest_ttft_ms_p50")
    ends["fastest_share_of_capacity"] = ends["fastest_tok_s_per_gpu"] / ends["capacity_tok_s_per_gpu"]
    ends["single_user"] = ends["fastest_concurrency"] == 1
    ends["long_ttft"] = ends["fastest_ttft_s_p50"] > ttft_limit_s
    return ends.sort_values("fastest_tok_s_per_user", ascending=False, ignore_index=True)


# --- the best reading at a level, against the runner-up --------------------------------------------------------
@dataclass
class BestReading:
    """The group with the most tok/s/GPU at ``level`` and the runner-up, with the ratio of the two and its interval
    (:func:`analysis.uncertainty.ratio_interval`); ``verdict`` is ``higher``, ``within-noise`` or ``unknown`` (a
    reading without an interval), never more than its interval supports."""

    level: float
    best: pd.Series
    runner_up: pd.Series | None
    ratio: float
    ratio_lo: float
    ratio_hi: float
    verdict: str


def best_reading(table: pd.DataFrame, level: float, *, solid: bool = False) -> BestReading | None:
    """:class:`BestReading` at ``level`` among the groups of a capacity table (``solid``: readings across a wide gap
    left out); None when no group reaches the level."""
    from analysis import uncertainty

    col = target_column(level)
    reached = table[table[col].notna()] if col in table else table.iloc[0:0]
    if solid:
        reached = reached[reached[reading_column(level)] != "wide gap"]
    if reached.empty:
        return None
    ordered = reached.sort_values(col, ascending=False)
    best = ordered.iloc[0]
    if len(ordered) < 2:
        return BestReading(float(level), best, None, np.nan, np.nan, np.nan, "unknown")
    second = ordered.iloc[1]
    cols = interval_columns(level)

    def iv(row: pd.Series):
        return uncertainty.Interval(float(row[col]), float(row.get(cols["lo"], np.nan)),
                                    float(row.get(cols["hi"], np.nan)))
    r = uncertainty.compare_readings(iv(best), iv(second))
    return BestReading(float(level), best, second, r.ratio, r.lo, r.hi, r.verdict)
