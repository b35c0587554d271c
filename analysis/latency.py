"""Latency as distributions: per-request rows joined to their points, percentiles and tail ratios per point, and how
the tail grows with concurrency.

A point has per-request rows when ``requests.parquet`` holds rows of the same run (same ``run_id``; when several
points share a run id, the one whose file sits nearest the requests' file). Its percentiles are then recomputed from
the successful requests (numpy's linear interpolation, as vLLM, SGLang and AIPerf use) together with the standard
deviation; a point without them keeps what its summary gives (mean, p50, p90, p99 where the tool wrote them; the
points table keeps no standard deviation). ``basis`` says which.

Tables in, tables out; no sentences (the page says what the numbers mean).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

# per-request column -> points-table prefix. TPOT is (e2e - ttft) / (output tokens - 1) per request (vLLM, AIPerf
# inter_token_latency); ITL here is each request's mean gap between chunks.
METRICS = {"ttft_ms": "ttft_ms", "tpot_ms": "tpot_ms", "itl_ms_mean": "itl_ms", "e2e_ms": "e2e_ms"}
DISTRIBUTION_METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")
STATS = ("mean", "std", "p50", "p90", "p99")
TAIL_COLUMNS = ["point", "metric", "basis", "n", "mean", "std", "p50", "p90", "p99", "tail_ratio", "tail_stat"]
# The configuration a tail-growth curve holds fixed while concurrency moves (history's like-for-like columns plus
# the reader, so a snapshot and a trimmed summary do not share a curve).
GROWTH_BY = ["model", "hardware", "framework", "precision", "spec_decode", "disagg", "scope", "isl", "osl", "tp",
             "ep", "dp", "n_gpus", "format"]


# --- requests joined to points ---------------------------------------------------------------------------
def link_requests(points: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """The per-request rows that belong to a point of ``points``, with ``point`` (that point's index label).

    Rows are matched on ``run_id``; among several points of one run id the one whose ``source_file`` shares the
    longest folder prefix with the requests' ``source_file`` wins (an AIPerf JSONL beside its aggregate, an LLMPerf
    ``individual/`` file beside ``summary/``). Rows of runs with no point are left out.
    """
    cols = list(requests.columns) + ["point"]
    if requests.empty or points.empty or "run_id" not in requests.columns:
        return pd.DataFrame(columns=cols)
    by_run = points.groupby(points["run_id"].astype(str), sort=False).groups
    out = []
    keys = ["run_id", "source_file"] if "source_file" in requests.columns else ["run_id"]
    for key, rows in requests.groupby(keys, sort=False, dropna=False):
        run_id = key[0] if isinstance(key, tuple) else key
        candidates = list(by_run.get(str(run_id), []))
        if not candidates:
            continue
        if len(candidates) > 1 and "source_file" in requests.columns:
            req_dir = os.path.dirname(str(key[1]))
            candidates.sort(key=lambda i: -_shared_prefix(req_dir, os.path.dirname(str(points.at[i, "source_file"]))))
        out.append(rows.assign(point=candidates[0]))
    return pd.concat(out) if out else pd.DataFrame(columns=cols)


def _shared_prefix(a: str, b: str) -> int:
    """How many leading path parts two folders share."""
    n = 0
    for x, y in zip(a.split("/"), b.split("/")):
        if x != y:
            break
        n += 1
    return n


def ok_requests(linked: pd.DataFrame) -> pd.DataFrame:
    """Successful requests (empty ``error``): the only ones any latency statistic uses."""
    if linked.empty:
        return linked
    return linked[linked["error"].fillna("") == ""]


def points_with_requests(points: pd.DataFrame, requests: pd.DataFrame) -> pd.Index:
    """Index labels of the points that have per-request rows."""
    linked = link_requests(points, requests)
    return pd.Index(pd.unique(linked["point"])) if len(linked) else pd.Index([])


def latency_long(linked: pd.DataFrame, metrics: Sequence[str] = DISTRIBUTION_METRICS) -> pd.DataFrame:
    """One row per successful request and metric: ``point``, ``metric`` (per-request column name), ``value_ms``.
    TPOT only for requests with more than one output token (it is undefined for one)."""
    ok = ok_requests(linked)
    parts = []
    for metric in metrics:
        if metric not in ok.columns:
            continue
        sel = ok
        if metric == "tpot_ms":
            sel = ok[ok["output_tokens"] > 1]
        values = sel[metric].astype(float)
        keep = np.isfinite(values)
        parts.append(pd.DataFrame({"point": sel["point"][keep].to_numpy(), "metric": metric,
                                   "value_ms": values[keep].to_numpy()}))
    if not parts:
        return pd.DataFrame(columns=["point", "metric", "value_ms"])
    return pd.concat(parts, ignore_index=True)


# --- percentiles and tails ----------------------------------------------------------------------------------
def request_percentiles(linked: pd.DataFrame, metrics: Sequence[str] = tuple(METRICS)) -> pd.DataFrame:
    """Per point and metric, from its successful requests: n, mean, std (ddof 1), p50, p90, p99 and the tail ratio
    p99/p50 (``basis`` ``requests``)."""
    long = latency_long(linked, metrics)
    if long.empty:
        return pd.DataFrame(columns=TAIL_COLUMNS)
    rows = []
    for (point, metric), grp in long.groupby(["point", "metric"], sort=False):
        v = grp["value_ms"].to_numpy(float)
        p50, p90, p99 = np.percentile(v, [50, 90, 99])
        rows.append({"point": point, "metric": metric, "basis": "requests", "n": len(v), "mean": float(v.mean()),
                     "std": float(v.std(ddof=1)) if len(v) > 1 else np.nan, "p50": p50, "p90": p90, "p99": p99,
                     "tail_ratio": p99 / p50 if p50 > 0 else np.nan, "tail_stat": "p99/p50"})
    return pd.DataFrame(rows, columns=TAIL_COLUMNS)


def summary_percentiles(points: pd.DataFrame, metrics: Sequence[str] = tuple(METRICS)) -> pd.DataFrame:
    """Per point and metric, what the summary columns hold (mean, p50, p90, p99; no std: the points table keeps
    none), the tail ratio p99/p50 where both exist (``basis`` ``summary``). Metrics a point has no number for are
    left out. ``n`` is the point's ``num_requests`` (NaN where the file does not say)."""
    rows = []
    for metric in metrics:
        prefix = METRICS[metric]
        cols = {s: f"{prefix}_{s}" for s in ("mean", "p50", "p90", "p99")}
        present = {s: c for s, c in cols.items() if c in points.columns}
        if not present:
            continue
        frame = pd.DataFrame({s: points[c].astype(float) for s, c in present.items()}, index=points.index)
        frame = frame.reindex(columns=["mean", "p50", "p90", "p99"])
        frame = frame[frame.notna().any(axis=1)]
        for point, r in frame.iterrows():
            tail = r["p99"] / r["p50"] if np.isfinite(r["p99"]) and r["p50"] > 0 else np.nan
            rows.append({"point": point, "metric": metric, "basis": "summary",
                         "n": float(points.at[point, "num_requests"]) if "num_requests" in points.columns
                         else np.nan, "mean": r["mean"], "std": np.nan, "p50": r["p50"], "p90": r["p90"],
                         "p99": r["p99"], "tail_ratio": tail, "tail_stat": "p99/p50"})
    return pd.DataFrame(rows, columns=TAIL_COLUMNS)


def tail_table(points: pd.DataFrame, requests: pd.DataFrame | None = None,
               metrics: Sequence[str] = tuple(METRICS)) -> pd.DataFrame:
    """Percentiles and tail ratio per point and metric: from its requests where it has them, else from its summary.
    One row per point × metric, ``basis`` ``requests`` or ``summary``."""
    summary = summary_percentiles(points, metrics)
    if requests is None or requests.empty:
        return summary.reset_index(drop=True)
    from_requests = request_percentiles(link_requests(points, requests), metrics)
    if from_requests.empty:
        return summary.reset_index(drop=True)
    have = set(zip(from_requests["point"], from_requests["metric"]))
    keep = [(p, m) not in have for p, m in zip(summary["point"], summary["metric"])]
    return pd.concat([from_requests, summary[keep]], ignore_index=True)


def tail_growth(points: pd.DataFrame, tails: pd.DataFrame, *, metric: str = "tpot_ms",
                by: Sequence[str] = GROWTH_BY, min_loads: int = 2) -> pd.DataFrame:
    """How the tail grows with concurrency: per configuration (``by``) measured at ``min_loads`` or more
    concurrencies, one row per concurrency with p50, p99, the tail ratio p99/p50, and p99 and p50 relative to the
    configuration's lowest concurrency (``p99_growth``, ``p50_growth``). Several points of one configuration at
    one concurrency (re-runs) are reduced to their medians. ``group`` numbers the configurations."""
    cols = ["group", *by, "concurrency", "points", "p50", "p99", "tail_ratio", "p50_growth", "p99_growth"]
    t = tails[(tails["metric"] == metric) & np.isfinite(tails["p99"].astype(float))
              & np.isfinite(tails["p50"].astype(float))]
    if t.empty:
        return pd.DataFrame(columns=cols)
    keys = [c for c in by if c in points.columns]
    frame = points.loc[t["point"], keys + ["concurrency"]].reset_index(drop=True)
    frame[["p50", "p99"]] = t[["p50", "p99"]].to_numpy(float)
    frame = frame[np.isfinite(frame["concurrency"].astype(float))]
    agg = (frame.groupby(keys + ["concurrency"], dropna=False, sort=True)
           .agg(points=("p50", "size"), p50=("p50", "median"), p99=("p99", "median")).reset_index())
    agg["group"] = agg.groupby(keys, dropna=False, sort=True).ngroup()
    agg = agg[agg.groupby("group")["concurrency"].transform("nunique") >= min_loads].copy()
    if agg.empty:
        return pd.DataFrame(columns=cols)
    agg = agg.sort_values(["group", "concurrency"], kind="stable")
    first = agg.groupby("group")[["p50", "p99"]].transform("first")
    agg["tail_ratio"] = agg["p99"] / agg["p50"]
    agg["p50_growth"] = agg["p50"] / first["p50"]
    agg["p99_growth"] = agg["p99"] / first["p99"]
    agg["group"] = agg.groupby("group", sort=True).ngroup()
    return agg.reindex(columns=cols).reset_index(drop=True)


def growth_summary(growth: pd.DataFrame) -> pd.DataFrame:
    """Per configuration of :func:`tail_growth`: lowest and highest concurrency, the tail ratio at each, and how
    many times p50 and p99 grew between them."""
    if growth.empty:
        return pd.DataFrame(columns=["group", "conc_low", "conc_high", "tail_low", "tail_high", "p50_growth",
                                     "p99_growth"])
    g = growth.groupby("group", sort=True)
    return pd.DataFrame({
        "conc_low": g["concurrency"].first(), "conc_high": g["concurrency"].last(),
        "tail_low": g["tail_ratio"].first(), "tail_high": g["tail_ratio"].last(),
        "p50_growth": g["p50_growth"].last(), "p99_growth": g["p99_growth"].last(),
    }).reset_index()
