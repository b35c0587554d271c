"""How fitting and frontiers grow with the size of the points table: time per group and per point.

A fleet's table holds thousands of configurations, the shipped data a few hundred. This builds synthetic
tables from the shipped ``data/processed/points.parquet``: every group the batch model can fit (three or more
batch sizes, ``status == "fitted"``) is copied with its rows until the table holds the wanted number of groups,
each copy a new group (a ``bench_copy`` column joins the grouping columns) whose latencies are the original's
times a per-row factor ``exp(N(0, 0.02))`` (throughputs divided by it), so no two copies fit identically.

- **fit**: :func:`analysis.scaling.fit_with_draws` as ``perfclaims fit`` calls it (its default ``n_boot``, the
  step-log floors of ``data/raw/h200``) on tables of 1,000 and 10,000 groups, twice: in one process
  (``jobs=1``) and with a worker per core (``jobs=None``, what ``perfclaims fit`` does), side by side, with the
  time per group. Each size gets a time budget (the 10,000-group table at least 75 s, so a fit that meets the
  60 s target is measured whole): a pilot of a tenth of the groups (at least 400: fits are stacked across
  groups and split across workers, a handful would overstate the cost) gives the cost per group; if the whole
  table fits in the budget it is fitted in one call, otherwise blocks of groups are fitted until the budget is
  spent and the total is projected from the groups fitted (printed as "projected", with how many groups were
  measured). Both pilots fit the same groups, and their tables and draws must be identical. The load average
  is printed with the figures: the machine may be shared.
- **frontier**: :func:`analysis.frontier.frontier` on 100,000 points (copies of the shipped points with both
  speeds, each copy its own groups), under the same budget rule (blocks of whole copies).

    .venv/bin/python bench/scale.py [--groups 1000,10000] [--points 100000] [--budget-s 25]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
COPY = "bench_copy"
NOISE_SIGMA = 0.02
LATENCY_PREFIXES = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "step_ms")
THROUGHPUT_COLUMNS = ("output_tok_s", "total_tok_s", "request_s", "tok_s_per_user", "tok_s_per_gpu")
FIT_TARGET_S = 60.0  # 10,000 groups on 2 cores
TARGET_GROUPS = 10_000
TARGET_BUDGET_S = 75.0  # the target size gets this much, so a fit that meets the target is measured whole
MIN_PILOT = 400  # groups in a pilot: enough to stack solves and to give two workers 200 groups each


def fit_keys(points: pd.DataFrame) -> list[str]:
    from analysis import scaling

    return [c for c in scaling.DEFAULT_BY if c in points.columns]


def fittable_blocks(points: pd.DataFrame) -> list[pd.DataFrame]:
    """The rows of each group the batch model fits (``status == "fitted"`` with ``n_boot=0``), in group order."""
    from analysis import scaling

    blocks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, rows in points.groupby(fit_keys(points), dropna=False, sort=True):
            fits = scaling.fit(rows, n_boot=0)
            if len(fits) == 1 and fits["status"].iloc[0] == "fitted":
                blocks.append(rows)
    return blocks


def with_noise(rows: pd.DataFrame, rng: np.random.Generator, sigma: float = NOISE_SIGMA) -> pd.DataFrame:
    """The same rows, every latency times one factor exp(N(0, sigma)) per row and every throughput divided by it."""
    factor = np.exp(rng.normal(0.0, sigma, size=len(rows)))
    out = rows.copy()
    for col in out.columns:
        if col.startswith(LATENCY_PREFIXES) and pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col] * factor
        elif col in THROUGHPUT_COLUMNS and pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col] / factor
    return out


def synthetic_table(blocks: list[pd.DataFrame], n_copies: int, *, seed: int = 0) -> pd.DataFrame:
    """``n_copies`` blocks, cycling through ``blocks``; copy ``i`` has ``bench_copy == i`` and its own noise."""
    if not blocks:
        raise ValueError("no block to copy")
    rng = np.random.default_rng(seed)
    parts = [with_noise(blocks[i % len(blocks)], rng).assign(**{COPY: i}) for i in range(n_copies)]
    return pd.concat(parts, ignore_index=True)


def frontier_table(points: pd.DataFrame, n_points: int, *, seed: int = 0) -> pd.DataFrame:
    """Exactly ``n_points`` rows: copies of the points that have both speeds, each copy its own groups."""
    usable = points[(points["tok_s_per_user"] > 0) & (points["tok_s_per_gpu"] > 0)]
    if usable.empty:
        raise ValueError("no point has both tok/s/user and tok/s/GPU")
    copies = -(-n_points // len(usable))
    rng = np.random.default_rng(seed)
    parts = [with_noise(usable, rng).assign(**{COPY: i}) for i in range(copies)]
    return pd.concat(parts, ignore_index=True).iloc[:n_points]


def cli_fit_kwargs(points: pd.DataFrame) -> dict:
    """What ``perfclaims fit`` passes besides the points: the step-log floors, when the logs are there."""
    from analysis import config, scaling

    logs = config.RAW_DATA_DIR / "h200"
    if "floors" in inspect.signature(scaling.fit).parameters and logs.exists():
        return {"floors": scaling.floor_inputs(logs, points=points)}
    return {}


def _fit(table: pd.DataFrame, by: list[str], kwargs: dict, jobs: int | None = None, keep: list | None = None
         ) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (this process and its workers) and the number of fitted groups of one fit of
    ``table``; with ``keep``, the fit itself is appended to it."""
    from analysis import scaling

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        started, cpu = time.perf_counter(), time.process_time()
        fits = scaling.fit_with_draws(table, by=by, jobs=jobs, **kwargs)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu += (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)  # the pool's workers
    if keep is not None:
        keep.append(fits)
    return seconds, cpu, int((fits.table["status"] == "fitted").sum())


def in_budget(n_units: int, work, *, budget_s: float, pilot: int) -> dict:
    """Time ``work(units)`` (an array of unit numbers; returns wall seconds, CPU seconds and a count) over all units.

    Units run in a seeded random order, so a partial run samples every kind of group rather than the first few.
    A pilot of ``pilot`` units gives the cost per unit; if all units fit in ``budget_s`` they run in one call,
    otherwise doubling blocks run until the budget is spent and the totals are projected from the units done.
    """
    order = np.random.default_rng(1).permutation(n_units)
    pilot = min(pilot, n_units)
    seconds, cpu, count = work(order[:pilot])
    if pilot < n_units and seconds / pilot * n_units <= budget_s:
        seconds, cpu, count = work(order)
        return {"measured_units": n_units, "seconds": seconds, "cpu_s": cpu, "count": count, "projected": False}
    done, block = pilot, pilot
    while seconds < budget_s and done < n_units:
        block = min(block * 2, n_units - done, max(1, int((budget_s - seconds) / (seconds / done))))
        s, c, k = work(order[done:done + block])
        done, seconds, cpu, count = done + block, seconds + s, cpu + c, count + k
    return {"measured_units": done, "seconds": seconds / done * n_units, "cpu_s": cpu / done * n_units,
            "count": count, "projected": done < n_units}


def pilot_size(n_groups: int) -> int:
    """Groups in the pilot that sets the cost per group: a tenth of the table, at least :data:`MIN_PILOT` (fits
    are stacked across groups and split across workers, so a handful of groups would overstate the cost)."""
    return min(n_groups, max(MIN_PILOT, n_groups // 10))


def time_fit(table: pd.DataFrame, by: list[str], kwargs: dict, *, budget_s: float, jobs: int | None = None,
             pilot: int | None = None, keep: list | None = None) -> dict:
    """Seconds to fit every group of ``table`` with ``jobs`` worker processes (None: every core, as `perfclaims fit`
    runs), measured, or projected from as many groups as the budget allows. ``keep`` receives the pilot's fit."""
    from analysis.scaling import workers

    n_groups = int(table[COPY].nunique())
    copies = table[COPY].to_numpy()
    _fit(table[copies < 1], by, kwargs, jobs=1)  # first call pays lazy imports and caches: not part of the figure
    pilot = pilot_size(n_groups) if pilot is None else pilot
    calls = []

    def work(units):
        calls.append(len(units))
        return _fit(table[np.isin(copies, units)], by, kwargs, jobs=jobs, keep=keep if len(calls) == 1 else None)

    r = in_budget(n_groups, work, budget_s=budget_s, pilot=pilot)
    return {"groups": n_groups, "measured_groups": r["measured_units"], "seconds": r["seconds"],
            "cpu_s": r["cpu_s"], "fitted": r["count"], "projected": r["projected"],
            "per_group_s": r["seconds"] / n_groups, "jobs": workers.resolve_jobs(jobs, n_groups)}


def budget_for(n_groups: int, budget_s: float) -> float:
    """The time a table size may take before the rest is projected: the target size gets at least
    :data:`TARGET_BUDGET_S`, so that a fit meeting the target is measured, not projected."""
    return max(budget_s, TARGET_BUDGET_S) if n_groups >= TARGET_GROUPS else budget_s


def compare_fits(a, b) -> bool:
    """Whether two fits (:class:`analysis.scaling.Fits`) have the same tables and draws, NaN equal to NaN."""
    return a.table.equals(b.table) and a.draws.equals(b.draws)


def time_frontier(table: pd.DataFrame, *, budget_s: float) -> dict:
    """Seconds for the frontier of every group of ``table`` (measured, or projected over whole copies)."""
    from analysis import frontier

    by = [c for c in frontier.DEFAULT_BY if c in table.columns] + [COPY]
    copies = table[COPY].to_numpy()
    frontier.frontier(table[copies < 1], by=by)  # warm-up

    def work(units):
        part = table[np.isin(copies, units)]
        started, cpu = time.perf_counter(), time.process_time()
        front = frontier.frontier(part, by=by)
        return time.perf_counter() - started, time.process_time() - cpu, len(front)

    n_copies = int(copies.max()) + 1
    r = in_budget(n_copies, work, budget_s=budget_s, pilot=max(1, n_copies // 20))
    groups = table.groupby(by, dropna=False).ngroups
    measured_points = round(len(table) * r["measured_units"] / n_copies)
    return {"points": len(table), "groups": groups, "measured_points": measured_points,
            "frontier_points": r["count"], "seconds": r["seconds"], "cpu_s": r["cpu_s"], "projected": r["projected"],
            "per_point_us": r["seconds"] / len(table) * 1e6}


def run(group_sizes: list[int], n_points: int, budget_s: float, points_path: Path | None = None) -> dict:
    """Fit and frontier figures; ``budget_s`` is the time each table size may take before the rest is projected."""
    from analysis import data

    points = data.load_points(points_path)
    blocks = fittable_blocks(points)
    kwargs = cli_fit_kwargs(points)
    from analysis import scaling
    from analysis.scaling import workers

    # fit() passes its keywords to fit_with_draws, which holds the defaults `perfclaims fit` uses
    target = getattr(scaling, "fit_with_draws", scaling.fit)
    n_boot = inspect.signature(target).parameters["n_boot"].default
    out = {"fittable_groups": len(blocks), "n_boot": n_boot, "cores": workers.available_cores(), "fit": [],
           "frontier": None, "load_before": os.getloadavg()}
    for n in group_sizes:
        table = synthetic_table(blocks, n)
        by = fit_keys(table) + [COPY]
        pilots: list = []
        serial = time_fit(table, by, kwargs, budget_s=budget_for(n, budget_s), jobs=1, keep=pilots)
        parallel = time_fit(table, by, kwargs, budget_s=budget_for(n, budget_s), jobs=None, keep=pilots)
        # The figure against the target is the default run (`perfclaims fit` uses every core); the serial one
        # rides along, and both pilots fitted the same groups, so their results must be identical.
        out["fit"].append({**parallel, "rows": len(table), "serial": serial,
                           "identical": compare_fits(*pilots), "compared_groups": len(pilots[0].table)})
    out["load_after_fit"] = os.getloadavg()
    if n_points:
        out["frontier"] = time_frontier(frontier_table(points, n_points), budget_s=budget_s)
    return out


def print_report(res: dict) -> None:
    print(f"fit (analysis.scaling.fit_with_draws as `perfclaims fit` calls it, n_boot={res['n_boot']}); synthetic "
          f"groups are copies of the {res['fittable_groups']} shipped fittable groups with 2% noise; "
          f"{res['cores']} cores, load average {_load(res.get('load_before'))} before, "
          f"{_load(res.get('load_after_fit'))} after the fits")
    print(f"{'groups':>8}{'rows':>9}{'processes':>10}{'measured':>10}{'wall s':>9}{'':>11}{'CPU s':>8}"
          f"{'per group':>11}{'fitted':>8}")
    for r in res["fit"]:
        for run in (r.get("serial"), r):
            if not run:
                continue
            kind = "projected" if run["projected"] else "measured"
            print(f"{r['groups']:>8,}{r['rows']:>9,}{run.get('jobs', 1):>10}{run['measured_groups']:>10,}"
                  f"{run['seconds']:>9.1f} {kind:<10}{run['cpu_s']:>8.1f}{run['per_group_s'] * 1000:>9.2f}ms"
                  f"{run['fitted']:>8,}")
        if r.get("serial"):
            speed = (f"speed-up with {r['jobs']} processes: {r['serial']['seconds'] / r['seconds']:.2f}x"
                     if r["jobs"] > 1 else "too few groups for worker processes: both runs in one process")
            print(f"{'':>8}{speed}; same fits and draws on the {r['compared_groups']:,} groups both fitted first: "
                  f"{'identical' if r['identical'] else 'DIFFERENT'}")
    print("  (processes = worker processes (1: the calling process); measured = groups actually fitted, the rest "
          "projected at the measured cost per group; CPU s includes the workers; fitted = groups with status "
          "'fitted' among those measured)")
    if len(res["fit"]) >= 2:
        a, b = res["fit"][0], res["fit"][-1]
        print(f"  per-group cost at {b['groups']:,} / at {a['groups']:,} groups: wall "
              f"{b['per_group_s'] / a['per_group_s']:.2f}, CPU {b['cpu_s'] / b['groups'] / (a['cpu_s'] / a['groups']):.2f}"
              " (1.00 = linear growth; CPU time is steadier on a shared machine)")
    big = max(res["fit"], key=lambda r: r["groups"]) if res["fit"] else None
    if big:
        ok = big["seconds"] <= FIT_TARGET_S
        print(f"  target: {big['groups']:,} groups <= {FIT_TARGET_S:g} s on {res['cores']} cores: "
              f"{big['seconds']:.1f} s {'(projected) ' if big['projected'] else '(measured) '}"
              f"{'ok' if ok else 'MISSED'}")
    f = res["frontier"]
    if f:
        kind = (f"projected from {f['measured_points']:,} points" if f["projected"] else "measured")
        print(f"frontier (analysis.frontier.frontier): {f['points']:,} points in {f['groups']:,} groups: "
              f"{f['seconds']:.1f} s {kind} (CPU {f['cpu_s']:.1f} s), {f['per_point_us']:.1f} us per point")


def _load(avg) -> str:
    return "/".join(f"{x:.2f}" for x in avg) if avg else "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", default="1000,10000", help="comma-separated group counts (default 1000,10000)")
    parser.add_argument("--points", type=int, default=100_000, help="points for the frontier (default 100000)")
    parser.add_argument("--budget-s", type=float, default=25.0,
                        help="time per table size before the rest is projected (default 25)")
    parser.add_argument("--points-file", type=Path, help="points table (default data/processed/points.parquet)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    res = run([int(x) for x in args.groups.split(",") if x.strip()], args.points, args.budget_s, args.points_file)
    print_report(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    big = max(res["fit"], key=lambda r: r["groups"]) if res["fit"] else None
    return 0 if big is None or big["seconds"] <= FIT_TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
