"""Pareto frontiers of per-user speed against per-GPU throughput, and capacity at equal interactivity.

A serving configuration buys tok/s/user (interactivity) with tok/s/GPU (capacity) and back; a headline number is
one end of that trade. Per group (by default model × hardware × precision × scope × lengths) this module keeps
the measured points nobody beats on both axes (the frontier), reads the frontier's tok/s/GPU at target tok/s/user
levels by log-log interpolation between neighbouring frontier points (NaN outside the measured range: no
extrapolation), compares two frontiers at equal interactivity, and names the single-user end (the fastest
per-user point and the tok/s/GPU it costs). The GPU denominator is explicit: ``all`` GPUs of the deployment, or
``decode`` GPUs only for disaggregated serving (what InferenceX's ``output_tput_per_gpu`` divides by).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from analysis import config
from analysis.schema import has_flag, trusted

DEFAULT_BY = ["model", "hardware", "precision", "scope", "isl", "osl", "context_len"]
DENOMINATORS = ("all", "decode")
DENOMINATOR_TEXT = {
    "all": "all GPUs (prefill + decode)",
    "decode": "decode GPUs only (prefill GPUs not counted)",
}
# Columns carried onto frontier points so a reader (and the confounder check) can see what each point ran.
CONFIG_COLUMNS = [
    "output_tok_s", "framework", "spec_decode", "tp", "ep", "dp", "disagg", "n_gpus", "n_prefill_gpus", "n_decode_gpus",
    "concurrency", "batch_size", "date", "tool_version", "flags", "source_file", "source_line",
]


# --- loading and selecting -------------------------------------------------------------------------
def load_points(points_path: str | Path | None = None) -> pd.DataFrame:
    """The points table from parquet (default ``data/processed/points.parquet``)."""
    path = Path(points_path) if points_path else config.POINTS_FILE
    if not path.exists():
        raise FileNotFoundError(
            f"{path}: points table not found; run `perfclaims ingest data/raw --out {path.parent}` first")
    return pd.read_parquet(path)


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


def usable(points: pd.DataFrame, *, denominator: str = "all") -> pd.DataFrame:
    """Rows a frontier may use: trusted (no failed run, no inconsistent throughput), positive finite tok/s/user and
    tok/s/GPU (under ``denominator``).

    Adds ``tok_s_per_gpu`` recomputed under the denominator and a ``gpu_denominator`` column saying which.
    """
    out = points.copy()
    out["tok_s_per_gpu"] = per_gpu(points, denominator=denominator)
    out["gpu_denominator"] = denominator
    ok = trusted(out)
    for col in ("tok_s_per_user", "tok_s_per_gpu"):
        ok &= np.isfinite(out[col]) & (out[col] > 0)
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


def frontier(points: pd.DataFrame, *, by: Sequence[str] | None = None, denominator: str = "all") -> pd.DataFrame:
    """Frontier points per group, sorted by tok/s/user ascending (so tok/s/GPU descending within a group).

    Failed runs and rows without both speeds are left out; ``tok_s_per_gpu`` is under ``denominator``.
    """
    by = _check_by(points, DEFAULT_BY if by is None else by)
    data = usable(points, denominator=denominator)
    keep_cols = by + ["tok_s_per_user", "tok_s_per_gpu", "gpu_denominator"] + [
        c for c in CONFIG_COLUMNS if c in data.columns and c not in by]
    parts = []
    for _, group in _groups(data, by):
        mask = pareto_mask(group["tok_s_per_user"].to_numpy(), group["tok_s_per_gpu"].to_numpy())
        front = group[mask].sort_values(["tok_s_per_user", "tok_s_per_gpu"], ascending=[True, False])
        parts.append(front[keep_cols].assign(n_points=len(group)))
    if not parts:
        return pd.DataFrame(columns=keep_cols + ["n_points"])
    return pd.concat(parts, ignore_index=True)


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


def single_user_end(front: pd.DataFrame) -> pd.Series:
    """The fastest per-user point of a frontier, the tok/s/GPU it costs and its concurrency."""
    if front.empty:
        return pd.Series({"tok_s_per_user": np.nan, "tok_s_per_gpu": np.nan, "concurrency": np.nan})
    row = front.loc[front["tok_s_per_user"].idxmax()]
    return row


def capacity_end(front: pd.DataFrame) -> pd.Series:
    """The highest tok/s/GPU point of a frontier and the tok/s/user left at it."""
    if front.empty:
        return pd.Series({"tok_s_per_user": np.nan, "tok_s_per_gpu": np.nan, "concurrency": np.nan})
    return front.loc[front["tok_s_per_gpu"].idxmax()]


def target_column(target: float) -> str:
    return f"tok_s_per_gpu_at_{target:g}"


def capacity_table(fronts: pd.DataFrame, *, targets: Iterable[float], by: Sequence[str] | None = None
                   ) -> pd.DataFrame:
    """One row per group: measured tok/s/user range, tok/s/GPU at each target, single-user and capacity ends."""
    by = list(DEFAULT_BY if by is None else by)
    targets = list(targets)
    rows = []
    for key, front in _groups(fronts, by):
        single, cap = single_user_end(front), capacity_end(front)
        row = dict(zip(by, key))
        row.update({
            "gpu_denominator": front["gpu_denominator"].iloc[0] if "gpu_denominator" in front else "unknown",
            "n_points": int(front["n_points"].iloc[0]) if "n_points" in front else len(front),
            "n_frontier": len(front),
            "tok_s_per_user_min": front["tok_s_per_user"].min(),
            "tok_s_per_user_max": front["tok_s_per_user"].max(),
        })
        for t, value in zip(targets, capacity_at(front, targets)):
            row[target_column(t)] = value
        row.update({
            "single_user_tok_s_per_user": single["tok_s_per_user"],
            "single_user_tok_s_per_gpu": single["tok_s_per_gpu"],
            "single_user_concurrency": single["concurrency"],
            "capacity_tok_s_per_gpu": cap["tok_s_per_gpu"],
            "capacity_tok_s_per_user": cap["tok_s_per_user"],
            "capacity_concurrency": cap["concurrency"],
        })
        rows.append(row)
    return pd.DataFrame(rows)


def capacity_long(table: pd.DataFrame, *, targets: Iterable[float], by: Sequence[str]) -> pd.DataFrame:
    """The capacity table in long form: one row per group × target (for bars and ratios)."""
    parts = []
    for t in targets:
        part = table[list(by) + ["gpu_denominator"]].copy()
        part["target_tok_s_per_user"] = float(t)
        part["tok_s_per_gpu"] = table[target_column(t)].to_numpy()
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


def group_label(row: pd.Series | dict, by: Sequence[str]) -> str:
    """A readable group name, e.g. ``GB200 NVL72 · fp4 · rack``; NaN parts are left out."""
    parts = []
    for col in by:
        value = row[col]
        if value is None or (isinstance(value, float) and np.isnan(value)) or value == "unknown":
            continue
        parts.append(f"{value:g}" if isinstance(value, float) else str(value))
    return " · ".join(parts)


# --- command line -----------------------------------------------------------------------------------
def cli_frontier(points_path, *, at: Sequence[float], by: Sequence[str] | None, denominator: str) -> int:
    """``perfclaims frontier``: per group tok/s/GPU at each ``at`` tok/s/user and the single-user end, as CSV."""
    points = load_points(points_path)
    by = _check_by(points, DEFAULT_BY if not by else by)
    fronts = frontier(points, by=by, denominator=denominator)
    if fronts.empty:
        print(f"perfclaims frontier: {points_path}: no usable points (need tok/s/user and tok/s/GPU)",
              file=sys.stderr)
        return 1
    table = capacity_table(fronts, targets=at, by=by)
    cols = by + ["gpu_denominator", "n_points", "n_frontier", "tok_s_per_user_min", "tok_s_per_user_max"] + [
        target_column(t) for t in at] + ["single_user_tok_s_per_user", "single_user_tok_s_per_gpu",
                                         "single_user_concurrency"]
    text = table[cols].to_csv(index=False, float_format="%.6g")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `perfclaims frontier | head` is normal use, not an error
        pass
    return 0


# --- report helpers (what the frontier notebook shows) ------------------------------------------------
REPORT_BY = ["hardware", "precision", "scope"]


def report_tables(points: pd.DataFrame, *, targets: Sequence[float], denominator: str = "all",
                  by: Sequence[str] = REPORT_BY) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Usable points, frontier points and the capacity table (with a ``label`` column) for one selection."""
    by = list(by)
    data = usable(points, denominator=denominator)
    fronts = frontier(points, by=by, denominator=denominator)
    table = capacity_table(fronts, targets=targets, by=by)
    if len(table):
        table.insert(0, "label", [group_label(r, by) for _, r in table.iterrows()])
    return data, fronts, table


def describe_frontiers(table: pd.DataFrame, *, targets: Sequence[float], denominator: str) -> str:
    """Markdown prose built from the capacity table: who reaches each target, the best capacity there, and
    what the fastest single-user points cost."""
    if table.empty:
        return "No usable points (tok/s/user and tok/s/GPU) in this selection."
    lines = [f"tok/s/GPU divides system output tok/s by **{DENOMINATOR_TEXT[denominator]}**. "
             f"{len(table)} hardware × precision × scope groups; values between measured frontier points are "
             "interpolated in log-log space and never extrapolated."]
    for t in targets:
        col = table[target_column(t)]
        reached = table[col.notna()]
        if reached.empty:
            lines.append(f"- At {t:g} tok/s/user: no group's frontier reaches this level.")
            continue
        best = reached.loc[reached[target_column(t)].idxmax()]
        worst = reached.loc[reached[target_column(t)].idxmin()]
        lines.append(f"- At {t:g} tok/s/user: {len(reached)} of {len(table)} groups measured; highest "
                     f"{best[target_column(t)]:,.0f} tok/s/GPU ({best['label']}), lowest "
                     f"{worst[target_column(t)]:,.0f} ({worst['label']}).")
    fastest = table.loc[table["single_user_tok_s_per_user"].idxmax()]
    share = fastest["single_user_tok_s_per_gpu"] / fastest["capacity_tok_s_per_gpu"]
    lines.append(f"- Fastest single-user end: {fastest['single_user_tok_s_per_user']:,.0f} tok/s/user "
                 f"({fastest['label']}, concurrency {fastest['single_user_concurrency']:.0f}), at "
                 f"{fastest['single_user_tok_s_per_gpu']:,.0f} tok/s/GPU — {share:.1%} of that group's best "
                 f"measured capacity ({fastest['capacity_tok_s_per_gpu']:,.0f} tok/s/GPU at "
                 f"{fastest['capacity_tok_s_per_user']:,.0f} tok/s/user).")
    return "\n".join(lines)


def single_user_ends(table: pd.DataFrame) -> pd.DataFrame:
    """The single-user end of each group's frontier next to its capacity end, with the share of capacity kept."""
    ends = table[["label", "n_frontier", "single_user_tok_s_per_user", "single_user_concurrency",
                  "single_user_tok_s_per_gpu", "capacity_tok_s_per_gpu", "capacity_tok_s_per_user",
                  "capacity_concurrency"]].copy()
    ends["single_user_share_of_capacity"] = ends["single_user_tok_s_per_gpu"] / ends["capacity_tok_s_per_gpu"]
    return ends.sort_values("single_user_tok_s_per_user", ascending=False, ignore_index=True)


def describe_single_user_ends(ends: pd.DataFrame) -> str:
    """Markdown: how much of its best tok/s/GPU each frontier keeps at its single-user end."""
    multi = ends[ends["n_frontier"] >= 2]
    lonely = ends[ends["n_frontier"] < 2]
    text = ""
    if len(multi):
        lo = multi.loc[multi["single_user_share_of_capacity"].idxmin()]
        hi = multi.loc[multi["single_user_share_of_capacity"].idxmax()]
        text = (f"At its single-user end a frontier keeps between {lo['single_user_share_of_capacity']:.1%} "
                f"({lo['label']}) and {hi['single_user_share_of_capacity']:.1%} ({hi['label']}) of its best "
                f"measured tok/s/GPU (median {multi['single_user_share_of_capacity'].median():.1%}): a single-user "
                "peak and server capacity are different numbers.")
    if len(lonely):
        text += (f" {', '.join(lonely['label'])}: one frontier point only, so no trade-off can be read.")
    return text.strip()
