"""Points into model inputs: which rows a fit can use, their batch, context and step time, and the groups.

Serving logs enter with ``B`` = the achieved decoding concurrency (the tool's batch size when it reports one,
else ``concurrency·(e2e − ttft)/e2e``: the share of each request's life spent decoding) and step time = TPOT.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import schema, text

# Configuration columns that define one model instance; context is not among them: the model handles it via L.
DEFAULT_BY = ["model", "hardware", "precision", "framework", "scope", "n_gpus", "tp", "ep", "disagg",
              "spec_decode", "isl", "osl", "recipe"]
# A published table's named serving recipes (low-latency, balanced, high-throughput) run different kernels and
# parallelism at different concurrencies: rows of two recipes are two configurations. Raw logs name no recipe.
GENERIC_SCENARIOS = ("", "unknown", "fixed-seq", "nan", "None")
MIN_BATCHES = 3
STEP_PHASES = ("decode", "offline")
SERVING_PHASES = ("serving",)


def col(points: pd.DataFrame, name: str) -> pd.Series:
    """A column, or NaN everywhere when the table has none."""
    return points[name] if name in points.columns else pd.Series(np.nan, index=points.index)


def prepare(points: pd.DataFrame) -> pd.DataFrame:
    """Rows a fit can use, with ``batch``, ``context``, ``step_ms``, ``tau`` and where each came from.

    Step-timing rows (phase decode/offline) use ``step_ms`` and ``batch_size``. Serving rows use TPOT (p50, else
    mean) as the step time and the reported batch size, else the achieved decoding concurrency
    ``concurrency·(e2e − ttft)/e2e`` (Little's law: a request decodes for e2e − ttft of its e2e), else the nominal
    concurrency. Context is ``context_len``, else ``isl + osl/2`` (the mean context over the decode).
    ``tok_s_per_user_measured`` and ``tok_s_measured`` are the speeds the measured step time gives.
    """
    p = points
    if "flags" in p.columns and "tok_s_per_user" in p.columns:
        p = p[schema.usable_for_fits(p)]
    phase = col(p, "phase").astype(str)
    step_rows = phase.isin(STEP_PHASES) & (col(p, "step_ms") > 0)
    serving = phase.isin(SERVING_PHASES) & ~step_rows

    tpot = col(p, "tpot_ms_p50").where(col(p, "tpot_ms_p50") > 0, col(p, "tpot_ms_mean"))
    step = col(p, "step_ms").where(step_rows, tpot.where(serving))
    e2e = col(p, "e2e_ms_mean").fillna(col(p, "e2e_ms_p50"))
    ttft = col(p, "ttft_ms_mean").fillna(col(p, "ttft_ms_p50"))
    achieved = col(p, "concurrency") * (e2e - ttft) / e2e
    batch = col(p, "batch_size")
    source = pd.Series(np.where(batch.notna(), "reported", ""), index=p.index, dtype=object)
    derive = batch.isna() & serving & achieved.gt(0)
    batch = batch.where(~derive, achieved)
    source[derive] = "concurrency*(e2e-ttft)/e2e"
    nominal = batch.isna() & col(p, "concurrency").gt(0)
    batch = batch.where(~nominal, col(p, "concurrency"))
    source[nominal] = "concurrency"

    context = col(p, "context_len").fillna(col(p, "isl") + col(p, "osl") / 2)
    scenario = col(p, "scenario").astype(object).where(col(p, "scenario").notna(), "").astype(str)
    recipe = scenario.where((col(p, "source_kind").astype(str) == "published-table")
                            & ~scenario.isin(GENERIC_SCENARIOS))
    # TPOT is already per output token, so serving rows take tau = 1 whatever the speculative decoding.
    tau = col(p, "tokens_per_step").where(step_rows, 1.0).fillna(1.0)
    keep = (batch > 0) & (step > 0)
    p = p.loc[keep].drop(columns=[c for c in ("step_ms",) if c in p.columns]).assign(
        batch=batch[keep], context=context[keep], step_ms=step[keep], tau=tau[keep], batch_source=source[keep],
        recipe=recipe[keep],
        step_source=np.where(step_rows[keep], "step_ms", "tpot"))
    p["tok_s_per_user_measured"] = 1000.0 * p["tau"] / p["step_ms"]
    p["tok_s_measured"] = p["batch"] * p["tok_s_per_user_measured"]
    return p


def group_label(keys: dict) -> str:
    """One configuration in words (:func:`analysis.text.group_label`, parts joined by ``|``):
    ``llama-3.1-8b | H200 SXM | bf16 | … | 1 GPU | TP1`` (unknowns left out; ``all points`` when no key)."""
    return text.group_label(keys, sep=" | ", empty="all points")


def key_columns(prepared: pd.DataFrame, by: list[str] | None = None) -> list[str]:
    """The grouping columns that exist in ``prepared`` (default :data:`DEFAULT_BY`)."""
    return [c for c in (by or DEFAULT_BY) if c in prepared.columns]


def groups(prepared: pd.DataFrame, by: list[str] | None = None):
    """(keys, rows) per group; missing key values (NaN, unknown) group together instead of being dropped."""
    by = key_columns(prepared, by)
    if not by:
        yield {}, prepared
        return
    for values, g in prepared.groupby(by, dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        yield {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(by, values)}, g


class Rows:
    """One group's columns as numpy arrays, converted once.

    Reading a column of a small DataFrame costs tens of microseconds, more than the arithmetic done on it, and a
    fit reads each group's columns dozens of times; over thousands of groups that is most of the time. ``len``,
    ``columns`` and ``rows[name]`` read like a DataFrame's, but a column is an array (positional, no index).
    """

    __slots__ = ("_columns", "_n")

    def __init__(self, columns: dict, n: int):
        self._columns, self._n = columns, n

    @classmethod
    def of(cls, g) -> Rows:
        """``g`` itself when it is already :class:`Rows`, else the columns of DataFrame ``g``."""
        return g if isinstance(g, Rows) else cls({c: g[c].to_numpy() for c in g.columns}, len(g))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, name: str) -> np.ndarray:
        return self._columns[name]

    @property
    def columns(self):
        return self._columns.keys()

    def col(self, name: str) -> np.ndarray:
        """A column, or NaN everywhere when the group has none (as :func:`col`)."""
        return self._columns[name] if name in self._columns else np.full(self._n, np.nan)

    def first(self, name: str, default: str = "") -> str:
        """The first value of a column in words, ``default`` when there is no such column."""
        return str(self._columns[name][0]) if name in self._columns else default


def group_rows(prepared: pd.DataFrame, by: list[str] | None = None, columns: list[str] | None = None):
    """(keys, :class:`Rows`) per group, the same groups in the same order as :func:`groups`, each group's rows in
    table order; ``columns`` (default all) are the columns each group carries. The table is converted to arrays
    once and each group takes its rows by position, instead of a DataFrame per group."""
    columns = list(prepared.columns) if columns is None else [c for c in columns if c in prepared.columns]
    by = key_columns(prepared, by)
    arrays = {c: prepared[c].to_numpy() for c in columns}
    if not by:
        yield {}, Rows(arrays, len(prepared))
        return
    grouped = prepared.groupby(by, dropna=False, sort=True)
    codes = grouped.ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    for values, idx in zip(grouped.size().index.tolist(), np.split(order, bounds)):
        values = values if isinstance(values, tuple) else (values,)
        keys = {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(by, values)}
        yield keys, Rows({c: a[idx] for c, a in arrays.items()}, len(idx))
