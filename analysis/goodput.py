"""Goodput under service-level objectives (SLOs): the share of requests that meet every SLO, and what the point
served within them, in requests/s and output tok/s (also per GPU, with the denominator named).

An SLO text is terms joined by ``;`` (or ``,``): ``METRIC[_STAT] <= VALUE UNIT``, e.g. ``"ttft_p99<=2s; tpot<=50ms"``.
METRIC is ``ttft``, ``tpot``, ``itl`` (each request's mean gap between chunks) or ``e2e`` (``e2el`` too); UNIT ``ms``
or ``s``; STAT (``p50``, ``p90``, ``p99``, ``mean``) is optional.

* **Per request** (a point with per-request rows; the vLLM ``--goodput`` and AIPerf ``--goodput`` definition): a
  request is good when its own TTFT, TPOT, ITL and E2E each meet their terms; a STAT suffix does not change that
  test (it names the summary percentile the term also bounds). Failed requests are never good. ``share`` = good /
  all requests sent (failed included); goodput req/s = the point's successful req/s × good / successful; goodput
  tok/s = its output tok/s × (output tokens of good requests / output tokens of successful ones).
* **From a summary** (no per-request rows): per term, the share of requests at or under the threshold is at least
  the highest summary quantile level whose value meets it (p99 ≤ 2 s: at least 0.99; only p50: at least 0.5;
  not even p50: 0, unknown); over several terms the share meeting all is at least 1 − Σ (1 − share of each)
  (nothing is known of how the metrics co-vary). ``share`` is that lower bound and ``met`` = ⌊share × n⌋ with n
  from :func:`analysis.uncertainty.request_counts`; the goodputs are the point's throughputs × share.
* ``percentiles_met``: every term that names a STAT holds for the point's own STAT (MLPerf-style run-level check,
  e.g. p99 TTFT ≤ 2 s), NaN where the point lacks that percentile.

Capacity at an SLO (:func:`capacity`): per configuration, the largest measured concurrency up to which the goodput
share stays at or above a stated level at every measured concurrency.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import frontier, latency, uncertainty
from analysis.text import plain

METRIC_COLUMNS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms_mean", "e2e": "e2e_ms", "e2el": "e2e_ms"}
SUMMARY_PREFIX = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2e": "e2e_ms", "e2el": "e2e_ms"}
STATS = ("p50", "p90", "p99", "mean")
_TERM = re.compile(r"^\s*(?P<metric>[a-z0-9]+?)(?:_(?P<stat>p50|p90|p99|mean))?\s*(?P<op><=|<)\s*"
                   r"(?P<value>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(?P<unit>ms|s)\s*$")
BASES = ("requests", "summary-lower-bound", "none")
COLUMNS = ["point", "source", "concurrency", "requests", "requests_source", "met", "share", "goodput_req_s", "goodput_tok_s",
           "goodput_tok_s_per_gpu", "gpu_denominator", "gpus", "basis", "percentiles_met", "slo"]


@dataclass(frozen=True)
class SloTerm:
    metric: str  # ttft, tpot, itl, e2e
    stat: str | None  # p50, p90, p99, mean or None
    limit_ms: float
    strict: bool = False  # "<" rather than "<="

    def text(self) -> str:
        name = self.metric + (f"_{self.stat}" if self.stat else "")
        return f"{name}{'<' if self.strict else '<='}{plain(self.limit_ms)}ms"

    def meets(self, values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return values < self.limit_ms if self.strict else values <= self.limit_ms


@dataclass(frozen=True)
class Slo:
    terms: tuple[SloTerm, ...]

    def text(self) -> str:
        return "; ".join(t.text() for t in self.terms)


def parse_slo(text: str) -> Slo:
    """``"ttft_p99<=2s; tpot<=50ms"`` -> :class:`Slo`. A term that does not parse raises ValueError naming it."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("--slo: empty; give terms like \"ttft_p99<=2s; tpot<=50ms\"")
    terms = []
    for raw in re.split(r"[;,]", text):
        if not raw.strip():
            continue
        m = _TERM.match(raw.strip().lower())
        if not m or m.group("metric") not in METRIC_COLUMNS:
            raise ValueError(f"--slo: cannot read {raw.strip()!r}: expected METRIC[_p50|_p90|_p99|_mean]<=VALUE"
                             f"(ms|s) with METRIC one of ttft, tpot, itl, e2e")
        metric = "e2e" if m.group("metric") == "e2el" else m.group("metric")
        value = float(m.group("value")) * (1000.0 if m.group("unit") == "s" else 1.0)
        terms.append(SloTerm(metric, m.group("stat"), value, strict=m.group("op") == "<"))
    if not terms:
        raise ValueError("--slo: no terms")
    return Slo(tuple(terms))


# --- per request ------------------------------------------------------------------------------------------
def good_requests(rows: pd.DataFrame, slo: Slo) -> np.ndarray:
    """Boolean per request row: successful and meeting every term (TPOT and ITL terms: requests with one output
    token have none and are judged on the other terms, as vLLM does)."""
    ok = (rows["error"].fillna("") == "").to_numpy()
    good = ok.copy()
    for term in slo.terms:
        values = rows[METRIC_COLUMNS[term.metric]].to_numpy(float)
        single = rows["output_tokens"].to_numpy(float) <= 1 if term.metric in ("tpot", "itl") else np.zeros(
            len(rows), bool)
        good &= term.meets(values) | (single & ~np.isfinite(values))
    return good


# --- from summaries ---------------------------------------------------------------------------------------
def summary_share(point: pd.Series, slo: Slo) -> float:
    """Lower bound of the share of requests meeting every term, from the point's summary quantiles."""
    missing = 0.0
    for term in slo.terms:
        prefix = SUMMARY_PREFIX[term.metric]
        share = 0.0
        for stat, level in (("p99", 0.99), ("p90", 0.90), ("p50", 0.50)):
            value = float(point.get(f"{prefix}_{stat}", math.nan))
            if np.isfinite(value) and bool(term.meets(np.array([value]))[0]):
                share = level
                break
        missing += 1.0 - share
    return max(0.0, 1.0 - missing)


def percentiles_met(point: pd.Series, slo: Slo) -> float:
    """1.0 / 0.0 when every term naming a STAT holds for the point's own STAT; NaN when one is missing or no term
    names a STAT."""
    named = [t for t in slo.terms if t.stat]
    if not named:
        return math.nan
    for term in named:
        value = float(point.get(f"{SUMMARY_PREFIX[term.metric]}_{term.stat}", math.nan))
        if not np.isfinite(value):
            return math.nan
        if not bool(term.meets(np.array([value]))[0]):
            return 0.0
    return 1.0


# --- every point ------------------------------------------------------------------------------------------
def goodput(points: pd.DataFrame, requests: pd.DataFrame | None, slo: Slo | str, *,
            denominator: str = "all") -> pd.DataFrame:
    """One row per point (:data:`COLUMNS`; ``point`` is its index label, ``source`` ``file:line``). Points with
    per-request rows are judged per request (``basis`` ``requests``); the others from their summary
    (``summary-lower-bound``), or not at all (``none``: no latency number any term needs)."""
    slo = parse_slo(slo) if isinstance(slo, str) else slo
    linked = latency.link_requests(points, requests) if requests is not None and len(requests) else None
    by_point = {k: g for k, g in linked.groupby("point")} if linked is not None and len(linked) else {}
    counts = uncertainty.request_counts(points, requests)
    per_gpu = frontier.per_gpu(points, denominator=denominator) if len(points) else pd.Series(dtype=float)
    rows = []
    for label, p in points.iterrows():
        out_tok_s, req_s = float(p.get("output_tok_s", math.nan)), float(p.get("request_s", math.nan))
        gpu_value = float(per_gpu.get(label, math.nan))
        gpus = out_tok_s / gpu_value if np.isfinite(gpu_value) and gpu_value > 0 else math.nan
        row = {"point": label, "source": _source(p), "concurrency": p.get("concurrency", math.nan),
               "gpu_denominator": denominator, "gpus": gpus, "percentiles_met": percentiles_met(p, slo),
               "slo": slo.text()}
        if label in by_point:
            rq = by_point[label]
            good = good_requests(rq, slo)
            ok = (rq["error"].fillna("") == "").to_numpy()
            tokens = rq["output_tokens"].to_numpy(float)
            n_ok, n_good = int(ok.sum()), int(good.sum())
            tok_ok, tok_good = np.nansum(tokens[ok]), np.nansum(tokens[good])
            row.update(requests=len(rq), requests_source="requests", met=n_good, share=n_good / len(rq) if len(rq) else math.nan,
                       goodput_req_s=req_s * n_good / n_ok if n_ok else math.nan,
                       goodput_tok_s=out_tok_s * tok_good / tok_ok if tok_ok > 0 else math.nan, basis="requests")
        else:
            n = float(counts.at[label, "n_requests"])
            row["requests_source"] = counts.at[label, "n_requests_source"]
            needs = [f"{SUMMARY_PREFIX[t.metric]}_{s}" for t in slo.terms for s in ("p50", "p90", "p99")]
            if not any(np.isfinite(float(p.get(c, math.nan))) for c in needs):
                row.update(requests=n, met=math.nan, share=math.nan, goodput_req_s=math.nan,
                           goodput_tok_s=math.nan, basis="none")
            else:
                share = summary_share(p, slo)
                row.update(requests=n, met=math.floor(share * n + 1e-9) if np.isfinite(n) else math.nan,
                           share=share, goodput_req_s=req_s * share, goodput_tok_s=out_tok_s * share,
                           basis="summary-lower-bound")
        row["goodput_tok_s_per_gpu"] = row["goodput_tok_s"] / gpus if np.isfinite(gpus) and gpus > 0 else math.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _source(p: pd.Series) -> str:
    line = p.get("source_line")
    return str(p.get("source_file")) + ("" if line is None or pd.isna(line) else f":{int(line)}")


# --- capacity -----------------------------------------------------------------------------------------------
CAPACITY_BY = latency.GROWTH_BY
CAPACITY_COLUMNS = ["group", "loads", "capacity_concurrency", "share_at_capacity", "goodput_tok_s_per_gpu",
                    "first_below"]


def capacity(points: pd.DataFrame, table: pd.DataFrame, *, level: float,
             by: Sequence[str] = CAPACITY_BY) -> pd.DataFrame:
    """Per configuration (``by``) measured at one or more concurrencies: the largest concurrency up to which the
    goodput share stays ≥ ``level`` at every measured load (NaN when even the lowest falls short), the share and
    goodput tok/s/GPU there, and the first concurrency below the level. Repeats at one load: their lowest share
    counts. Columns: ``by`` + :data:`CAPACITY_COLUMNS`."""
    keys = [c for c in by if c in points.columns]
    t = table[np.isfinite(table["share"].astype(float)) & np.isfinite(table["concurrency"].astype(float))]
    if t.empty:
        return pd.DataFrame(columns=keys + CAPACITY_COLUMNS)
    frame = points.loc[t["point"], keys].reset_index(drop=True)
    frame[["concurrency", "share", "gput"]] = t[["concurrency", "share", "goodput_tok_s_per_gpu"]].to_numpy(float)
    rows = []
    for i, (key, grp) in enumerate(frame.groupby(keys, dropna=False, sort=True)):
        per_load = grp.groupby("concurrency").agg(share=("share", "min"), gput=("gput", "median")).sort_index()
        below = per_load.index[per_load["share"] < level]
        first_below = float(below[0]) if len(below) else math.nan
        meets = per_load[per_load.index < first_below] if len(below) else per_load
        cap = float(meets.index[-1]) if len(meets) else math.nan
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))), "group": i, "loads": len(per_load),
                     "capacity_concurrency": cap,
                     "share_at_capacity": float(meets["share"].iloc[-1]) if len(meets) else math.nan,
                     "goodput_tok_s_per_gpu": float(meets["gput"].iloc[-1]) if len(meets) else math.nan,
                     "first_below": first_below})
    return pd.DataFrame(rows, columns=keys + CAPACITY_COLUMNS)


def as_json(table: pd.DataFrame) -> dict:
    """``{"points": [{"source", "concurrency", "requests", "met", "share", "goodput_req_s", "goodput_tok_s",
    "slo", ...}]}`` with NaN as null (the extra keys: per-GPU goodput and its denominator, basis)."""
    def num(x, whole: bool = False):
        if x is None or isinstance(x, str):
            return x
        x = float(x)
        if not math.isfinite(x):
            return None
        return int(x) if whole and x.is_integer() else x

    whole = {"concurrency", "requests", "met"}
    keys = ["source", "concurrency", "requests", "requests_source", "met", "share", "goodput_req_s", "goodput_tok_s",
            "goodput_tok_s_per_gpu", "gpu_denominator", "gpus", "basis", "percentiles_met", "slo"]

    def value(k, v):
        if k == "percentiles_met":
            return None if v is None or not np.isfinite(v) else bool(v)
        return v if isinstance(v, str) else num(v, k in whole)

    return {"points": [{k: value(k, r[k]) for k in keys}
                       for r in table.to_dict("records")]}
