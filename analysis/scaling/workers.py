"""Fitting many groups in worker processes: chunks of groups in, their results back in group order.

Every group's fit is independent and seeded on its own (the same ``seed`` for each group), so splitting the groups
between processes changes no number: the pooled result equals the serial one row for row and draw for draw. A
process pool pays a start (forking the workers) and the pickling of each chunk and its results, so
it is used only when every worker gets at least :data:`MIN_GROUPS_PER_WORKER` groups; smaller tables are fitted
in the calling process. Warnings a worker raises (degenerate fits) are raised again in the caller, in group order.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

# Below this many groups per worker the pool's start costs more than it saves (a group fits in a few ms).
MIN_GROUPS_PER_WORKER = 200
CHUNKS_PER_WORKER = 4  # more chunks than workers: a worker slowed by a neighbour's load takes fewer of them


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the system reports it, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def resolve_jobs(jobs: int | None, n_items: int) -> int:
    """Worker processes for ``n_items`` groups: ``jobs`` (None: every available core), no more than leave each
    worker :data:`MIN_GROUPS_PER_WORKER` groups; 1 means the calling process fits them itself."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1 (or None for every core), got {jobs}")
    wanted = available_cores() if jobs is None else jobs
    return max(1, min(wanted, n_items // MIN_GROUPS_PER_WORKER))


def chunks(items: list, n_workers: int) -> list[list]:
    """``items`` in consecutive chunks, :data:`CHUNKS_PER_WORKER` per worker, none smaller than needed."""
    n = max(1, min(n_workers * CHUNKS_PER_WORKER, len(items) // max(1, MIN_GROUPS_PER_WORKER // 2)))
    size = math.ceil(len(items) / n) if items else 1
    return [items[i:i + size] for i in range(0, len(items), size)]


# Items of the runs in progress, by run number: forked workers inherit them and take their chunk by position,
# instead of every chunk being pickled to them (for 10,000 groups that costs more than a second on each side).
_RUNS: dict[int, list] = {}


def _run_chunk(fn, chunk, options: dict) -> tuple[list, list]:
    if isinstance(chunk, tuple):  # (run, start, stop): a chunk of items this forked worker inherited
        run, start, stop = chunk
        chunk = _RUNS[run][start:stop]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(chunk, **options)
    return out, [(w.category, str(w.message)) for w in caught]


def run(fn, items: list, options: dict, *, jobs: int | None = None) -> list:
    """``fn(items, **options)`` (a list, one result per item, in order), split across worker processes.

    ``fn`` must be a module-level function (it is pickled by name). With one worker, ``fn`` runs here.
    """
    n_workers = resolve_jobs(jobs, len(items))
    if n_workers == 1:
        return fn(items, **options)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Forked workers start at once with the fitting code already imported, and never re-run the caller's script
    # (a spawned or fork-server worker imports the main module again: a script without a __main__ guard would run
    # twice). Arrow and OpenBLAS, the libraries here with threads of their own, re-create them after a fork.
    fork = "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if fork else "spawn")
    parts = chunks(items, n_workers)
    run = max(_RUNS, default=0) + 1
    if fork:
        _RUNS[run] = items
        bounds = np.cumsum([0] + [len(p) for p in parts])
        parts = [(run, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    try:
        with ProcessPoolExecutor(max_workers=n_workers, mp_context=context) as pool:
            try:
                done = list(pool.map(_run_chunk, [fn] * len(parts), parts, [options] * len(parts)))
            except BaseException:  # a chunk failed (a fit that did not converge): the rest is not waited for
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _RUNS.pop(run, None)
    out = []
    for results, caught in done:
        out.extend(results)
        for category, message in caught:
            warnings.warn(message, category, stacklevel=3)
    return out
