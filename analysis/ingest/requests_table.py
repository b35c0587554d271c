"""Per-request tables shared by every reader that sees individual requests (vLLM/SGLang detail arrays, AIPerf
JSONL, LLMPerf individual responses, trtllm request JSON).

:func:`build_requests` turns rows (dicts) or column arrays into one pyarrow Table with fixed columns in ms, so
``requests.parquet`` has one shape whatever the tool. :func:`from_serving_arrays` converts the vLLM/SGLang
detail arrays (seconds, ITL gaps as lists). :func:`percentiles_from_requests` recomputes summary statistics in
points-table column names from successful requests, for summaries that lack them. This is a helper module, not
a format: it exports no ``FORMATS``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from analysis.text import clean

REQUEST_COLUMNS = [
    "run_id", "request_index", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms",
    "itl_ms_mean", "itl_ms_p50", "itl_ms_p99", "tpot_ms", "error",
]
_FLOAT_COLUMNS = [c for c in REQUEST_COLUMNS if c not in ("run_id", "request_index", "error")]
SCHEMA = pa.schema(
    [("run_id", pa.string()), ("request_index", pa.int64())]
    + [(c, pa.float64()) for c in _FLOAT_COLUMNS]
    + [("error", pa.string())]
)
# Optional per-row key holding one request's inter-token gaps in ms; summarised into itl_ms_mean/p50/p99.
ITL_GAPS_KEY = "itl_ms"


def request_columns() -> list[str]:
    """Column names of every per-request table, in order."""
    return list(REQUEST_COLUMNS)


def build_requests(run_id: str, rows_or_arrays: Iterable[Mapping] | Mapping[str, Sequence]) -> pa.Table:
    """One per-request table for the run ``run_id``.

    ``rows_or_arrays`` is either an iterable of dicts (one per request) or a dict of equal-length columns. Keys are
    the column names above (ms, token counts); missing ones are NaN (error: ``""`` = ok). A row may carry
    ``itl_ms`` (list of gaps in ms) instead of the three ITL summaries. ``request_index`` defaults to the position.
    ``tpot_ms`` is derived as ``(e2e_ms - ttft_ms)/(output_tokens - 1)`` where missing, for ok requests with
    more than one output token (the vLLM/SGLang definition). A pyarrow Table is converted column-wise, without
    a Python loop per row (the streamed readers hand over millions of rows this way).
    """
    run_id = clean(str(run_id))  # from a file name or a log: valid Unicode before it reaches parquet
    if isinstance(rows_or_arrays, pa.Table):
        return _from_arrow(run_id, rows_or_arrays)
    rows = _as_rows(rows_or_arrays)
    cols: dict[str, list] = {c: [] for c in REQUEST_COLUMNS}
    for i, row in enumerate(rows):
        unknown = set(row) - set(REQUEST_COLUMNS) - {ITL_GAPS_KEY}
        if unknown:
            raise ValueError(f"not per-request columns: {', '.join(sorted(unknown))}")
        vals = {c: _float(row.get(c)) for c in _FLOAT_COLUMNS}
        gaps = row.get(ITL_GAPS_KEY)
        if gaps is not None and all(math.isnan(vals[c]) for c in ("itl_ms_mean", "itl_ms_p50", "itl_ms_p99")):
            arr = np.asarray([_float(g) for g in gaps], dtype=float)
            arr = arr[np.isfinite(arr)]
            if arr.size and arr.min() < 0 and not row.get("error"):
                row = {**row, "error": f"{IMPLAUSIBLE}negative inter-token gap {arr.min():g} ms"}
            if arr.size:
                vals["itl_ms_mean"] = float(arr.mean())
                vals["itl_ms_p50"] = float(np.percentile(arr, 50))
                vals["itl_ms_p99"] = float(np.percentile(arr, 99))
        error = row.get("error")
        error = "" if error is None or (isinstance(error, float) and math.isnan(error)) else clean(str(error))
        if math.isnan(vals["tpot_ms"]) and not error and vals["output_tokens"] > 1:
            vals["tpot_ms"] = (vals["e2e_ms"] - vals["ttft_ms"]) / (vals["output_tokens"] - 1)
        index = row.get("request_index")
        cols["run_id"].append(run_id)
        cols["request_index"].append(int(index) if index is not None else i)
        for c in _FLOAT_COLUMNS:
            cols[c].append(vals[c])
        cols["error"].append(error)
    return pa.table(cols, schema=SCHEMA)


ZERO_TOKENS = "no output (zero tokens)"


def from_serving_arrays(
    run_id: str,
    *,
    input_lens: Sequence | None = None,
    output_lens: Sequence | None = None,
    ttfts_s: Sequence | None = None,
    itls_s: Sequence[Sequence] | None = None,
    latencies_s: Sequence | None = None,
    errors: Sequence | None = None,
) -> pa.Table:
    """Per-request table from vLLM/SGLang ``--save-detailed``/``--output-details`` arrays (times in seconds).

    Without ``latencies_s`` (older vLLM, SGLang) e2e is ``ttft + sum(itls)`` — the time to the last chunk.
    A request is failed when its error text is non-empty, or (no ``errors`` array, e.g. newest vLLM without
    ``--save-detailed``, which keeps only ``latencies``) when it has no output, no first token and no latency; its
    latencies are NaN, not the 0.0 the tools write. A request with an empty error but zero output tokens (vLLM ~0.6
    counts it completed, with TTFT 0 and no gaps) is marked :data:`ZERO_TOKENS`: it had no first token to time.
    """
    arrays = [a for a in (input_lens, output_lens, ttfts_s, itls_s, latencies_s, errors) if a is not None]
    n = max((len(a) for a in arrays), default=0)
    if any(len(a) != n for a in arrays):
        raise ValueError("per-request arrays differ in length: "
                         + ", ".join(str(len(a)) for a in arrays))
    rows = []
    for i in range(n):
        error = "" if errors is None or errors[i] is None else str(errors[i])
        out = _float(output_lens[i]) if output_lens is not None else math.nan
        ttft = _float(ttfts_s[i]) * 1000.0 if ttfts_s is not None else math.nan
        gaps = [_float(g) * 1000.0 for g in (itls_s[i] or [])] if itls_s is not None else None
        if latencies_s is not None:
            e2e = _float(latencies_s[i]) * 1000.0
        elif gaps is not None and not math.isnan(ttft):
            e2e = ttft + float(np.nansum(gaps))
        else:
            e2e = math.nan
        failed = bool(error) if errors is not None else not (out > 0 or ttft > 0 or e2e > 0)
        if not failed and out == 0:  # counted as completed by the tool (vLLM ~0.6), yet no token came back
            failed, error = True, ZERO_TOKENS
        if failed:
            error = error or "no output"
            ttft = e2e = math.nan
            gaps = None
        row = {"request_index": i, "input_tokens": input_lens[i] if input_lens is not None else None,
               "output_tokens": out, "ttft_ms": ttft, "e2e_ms": e2e, "error": error}
        if gaps is not None:
            row[ITL_GAPS_KEY] = gaps
        rows.append(row)
    return build_requests(run_id, rows)


def pooled_itl_ms(itls_s: Sequence[Sequence] | None, errors: Sequence | None = None) -> list[float]:
    """All inter-token gaps of ok requests in ms, pooled (the vLLM/SGLang ITL definition)."""
    if not itls_s:
        return []
    out: list[float] = []
    for i, gaps in enumerate(itls_s):
        if errors is not None and errors[i]:
            continue
        out.extend(_float(g) * 1000.0 for g in (gaps or []))
    return [g for g in out if math.isfinite(g)]


def percentiles_from_requests(table: Any, *, itl_gaps_ms: Sequence[float] | None = None) -> dict[str, float]:
    """ttft/tpot/itl/e2e mean/p50/p90/p99 (only those the points table has) from the ok requests of ``table``.

    TPOT uses requests with more than one output token, as vLLM and SGLang do. ITL is the mean and percentiles of
    ``itl_gaps_ms`` (pooled gaps) when given; otherwise only ``itl_ms_mean`` is returned, as the gap-weighted mean
    of the per-request means, because pooled percentiles cannot be recovered from per-request summaries.
    Percentiles are numpy's linear interpolation (what both tools use). Keys with no data are left out.
    """
    frame = table.to_pandas() if hasattr(table, "to_pandas") else table
    ok = frame[frame["error"].fillna("") == ""]
    out: dict[str, float] = {}
    _stats(out, "ttft_ms", ok["ttft_ms"], ("mean", "p50", "p90", "p99"))
    _stats(out, "tpot_ms", ok.loc[ok["output_tokens"] > 1, "tpot_ms"], ("mean", "p50", "p90", "p99"))
    _stats(out, "e2e_ms", ok["e2e_ms"], ("mean", "p50", "p99"))
    if itl_gaps_ms is not None:
        _stats(out, "itl_ms", itl_gaps_ms, ("mean", "p50", "p99"))
    else:
        means = ok["itl_ms_mean"].to_numpy(dtype=float)
        weights = np.clip(ok["output_tokens"].to_numpy(dtype=float) - 1, 0, None)
        use = np.isfinite(means) & np.isfinite(weights) & (weights > 0)
        if use.any():
            out["itl_ms_mean"] = float(np.average(means[use], weights=weights[use]))
    return out


# --- plausibility ----------------------------------------------------------------------------------
# Per-request columns that cannot be negative (times in ms, token counts), and bounds above which a value is not
# physically plausible (1e9 ms is eleven days; 1e8 tokens is beyond any context window).
REQUEST_BOUNDS = {"input_tokens": 1e8, "output_tokens": 1e8, "ttft_ms": 1e9, "e2e_ms": 1e9, "itl_ms_mean": 1e9,
                  "itl_ms_p50": 1e9, "itl_ms_p99": 1e9, "tpot_ms": 1e9}
IMPLAUSIBLE = "implausible: "


def check_requests(table: pa.Table) -> tuple[pa.Table, list[dict]]:
    """The per-request table with impossible rows marked, and one problem per marked row.

    A successful request with a negative time or token count, one above :data:`REQUEST_BOUNDS`, or a first token
    after its last (ttft > e2e) gets ``error = "implausible: …"``: it stays in ``requests.parquet`` for the record
    and, like any errored request, is left out of every statistic. Problems are ``{"line", "field", "reason"}``
    with the request index in the reason. Vectorised: millions of rows cost a few array comparisons.
    """
    n = table.num_rows
    if n == 0:
        return table, []
    ok = np.asarray(table.column("error").fill_null("").to_numpy(zero_copy_only=False) == "", dtype=bool)
    why = np.full(n, "", dtype=object)
    for col, bound in REQUEST_BOUNDS.items():
        values = np.asarray(table.column(col).to_numpy(zero_copy_only=False), dtype=float)
        with np.errstate(invalid="ignore"):
            neg = ok & (why == "") & (values < 0)
            big = ok & (why == "") & (values > bound)
        if neg.any():
            why[neg] = [f"negative {col} {v:g}" for v in values[neg]]
        if big.any():
            why[big] = [f"{col} {v:g} above {bound:g}" for v in values[big]]
    ttft = np.asarray(table.column("ttft_ms").to_numpy(zero_copy_only=False), dtype=float)
    e2e = np.asarray(table.column("e2e_ms").to_numpy(zero_copy_only=False), dtype=float)
    with np.errstate(invalid="ignore"):
        late = ok & (why == "") & (ttft > e2e * (1 + 1e-9) + 1e-9)
    if late.any():
        why[late] = [f"first token at {a:g} ms after the last at {b:g} ms" for a, b in zip(ttft[late], e2e[late])]
    errors = table.column("error").fill_null("").to_numpy(zero_copy_only=False).astype(object)
    # rows build_requests already marked (a negative gap inside a request's ITL list)
    earlier = np.flatnonzero(pc.starts_with(table.column("error").fill_null(""), IMPLAUSIBLE).to_numpy(
        zero_copy_only=False))
    for i in earlier:
        why[i] = errors[i][len(IMPLAUSIBLE):]
    marked = np.flatnonzero(why != "")
    if not marked.size:
        return table, []
    errors[marked] = [IMPLAUSIBLE + w for w in why[marked]]
    index = table.column("request_index").to_numpy(zero_copy_only=False)
    problems = [{"line": None, "field": _field_of(why[i]),
                 "reason": f"request {int(index[i])}: {why[i]}; kept in requests.parquet as errored"}
                for i in marked]
    table = table.set_column(table.column_names.index("error"), "error", pa.array(errors, type=pa.string()))
    return table, problems


def _field_of(why: str) -> str:
    if why.startswith("negative inter-token gap"):
        return "itl_ms"
    if why.startswith("negative "):
        return why.split(" ")[1]
    if " above " in why:
        return why.split(" ")[0]
    return "ttft_ms"


# --- internals -------------------------------------------------------------------------------------
def _stats(out: dict, prefix: str, values, which: tuple[str, ...]) -> None:
    arr = np.asarray(list(values), dtype=float)
    arr = arr[np.isfinite(arr)]
    if not arr.size:
        return
    for stat in which:
        out[f"{prefix}_{stat}"] = float(arr.mean() if stat == "mean" else np.percentile(arr, float(stat[1:])))


def _from_arrow(run_id: str, table: pa.Table) -> pa.Table:
    """build_requests for a pyarrow Table of per-request columns (no ``itl_ms`` gap lists), vectorised."""
    unknown = set(table.column_names) - set(REQUEST_COLUMNS)
    if unknown:
        raise ValueError(f"not per-request columns: {', '.join(sorted(unknown))}")
    n = table.num_rows
    floats = {}
    for c in _FLOAT_COLUMNS:
        if c in table.column_names:
            arr = np.asarray(table.column(c).to_numpy(zero_copy_only=False), dtype=float).copy()
            arr[~np.isfinite(arr)] = np.nan
        else:
            arr = np.full(n, np.nan)
        floats[c] = arr
    if "error" in table.column_names:
        error = table.column("error").cast(pa.string()).fill_null("")
    else:
        error = pa.array([""] * n, type=pa.string())
    ok = np.asarray(error.to_numpy(zero_copy_only=False) == "", dtype=bool)
    tpot, out = floats["tpot_ms"], floats["output_tokens"]
    derive = np.isnan(tpot) & ok & (out > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot[derive] = (floats["e2e_ms"][derive] - floats["ttft_ms"][derive]) / (out[derive] - 1)
    if "request_index" in table.column_names:
        index = table.column("request_index").cast(pa.int64())
    else:
        index = pa.array(np.arange(n, dtype=np.int64))
    cols = {"run_id": pa.array([str(run_id)] * n, type=pa.string()), "request_index": index}
    cols.update({c: pa.array(floats[c], type=pa.float64()) for c in _FLOAT_COLUMNS})  # NaN, as row-wise
    cols["error"] = error
    return pa.table(cols, schema=SCHEMA)


def _as_rows(rows_or_arrays) -> list[Mapping]:
    if isinstance(rows_or_arrays, Mapping):
        lengths = {k: len(v) for k, v in rows_or_arrays.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"columns differ in length: {lengths}")
        n = next(iter(lengths.values()), 0)
        return [{k: v[i] for k, v in rows_or_arrays.items()} for i in range(n)]
    if hasattr(rows_or_arrays, "to_dict") and hasattr(rows_or_arrays, "columns"):
        return rows_or_arrays.to_dict("records")
    return list(rows_or_arrays)


def _float(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan
