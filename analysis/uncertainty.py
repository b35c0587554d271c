"""How many requests stand behind each point, confidence intervals for its tok/s/user and tok/s/GPU, the run-to-run
spread of repeats of its configuration, and whether a ratio is within the noise.

* ``n_requests`` (:func:`request_counts`): the successful requests of its per-request rows, else the count its file
  states (``num_requests``), else the tool's documented default where the tool has one (InferenceX single-node
  runs: 10 × concurrency, :data:`INFERENCEX_DEFAULT`), else unknown. ``n_requests_source`` says which.
* intervals (:func:`point_intervals`), with the method named per point (``*_method``, one of :data:`METHODS`):
  - per-request rows: a percentile bootstrap over the successful requests. tok/s/user is the statistic the point's
    ``tok_s_per_user_def`` names (1000 / median TPOT, 1000 / mean TPOT, median output tokens / e2e); tok/s/GPU
    resamples the ratio Σ output tokens / Σ e2e, which at a fixed concurrency is proportional to the system's
    output tok/s (Little's law), and scales the measured tok/s/GPU by the resampled ratio's spread.
  - a summary only: tok/s/user = 1000 / median TPOT gets the large-sample interval of a sample median, whose
    standard error is 1 / (2 f √n) with the density f at the median read from the summary's own quantile spacing
    (p50 to p90, else p50 to p99: a heavier tail gives a wider, more cautious interval); tok/s/GPU gets a normal
    interval whose relative standard error is σ(e2e) / (mean e2e √n), σ(e2e) read from the p50–p99 spacing as
    for a normal distribution. Both are approximations and labelled so.
  - step-timing points with repeat samples: a bootstrap over the step samples.
* run-to-run spread (:func:`repeat_spread`): points of one configuration and concurrency measured more than once on
  one date (different runs), with the relative spread (max / min − 1) of each speed.
* :func:`ratio_interval` and :func:`within_noise`: a ratio of two intervals, and whether it includes 1;
  :func:`compare_readings` (one :class:`RatioReading`: ratio, interval, verdict, the side without an interval)
  is what the frontier, precision and history pages read.

Tables and dataclasses out; no sentences.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from analysis import frontier, latency
from analysis.history import CONFIG, day

LEVEL = 0.95
N_BOOT = 2000
SEED = 0
# InferenceX's benchmark scripts send 10 × concurrency measured prompts per point (`--num-prompts $(( $CONC * 10 ))`
# in benchmarks/single_node/*.sh; verbatim excerpt in tests/data/published/inferencex-num-prompts.source.md).
INFERENCEX_PROMPTS_PER_CONCURRENCY = 10
INFERENCEX_DEFAULT = ("https://github.com/SemiAnalysisAI/InferenceX/blob/161e7f65bce88f6aa8295ca7c77288ff282ed0bb/"
                      "benchmarks/single_node/dsr1_fp8_h200.sh")
# Readers of InferenceX harness output that do not record the request count (API rows, per-point aggregates). The
# default is the single-node scripts'; multi-node runs go through other launchers (one sets 10 × concurrency but at
# least 16, another is not read here), so their count stays unknown.
SINGLE_NODE_SCOPES = ("single-gpu", "node")
INFERENCEX_DEFAULT_FORMATS = ("inferencex-api", "inferencex-api-history", "inferencex-agg")
N_SOURCES = ("requests", "file", "tool-default", "unknown")
# How an interval was made (what each means: analysis.latency_words.METHOD_WORDS).
METHODS = ("bootstrap-requests", "bootstrap-steps", "median-spacing", "normal-e2e-spacing", "log-quadrature", "none")
def normal_quantile(p: float) -> float:
    """The standard normal quantile (``scipy.stats.norm.ppf``; the standard library's, which a claim card's import
    of scipy.stats no longer pays for)."""
    return NormalDist().inv_cdf(p)


Z_P99 = NormalDist().inv_cdf(0.99)  # p99 - p50 of a normal distribution, in standard deviations
MAX_BOOT_CELLS = 20_000_000  # resampled values held at once (draws × requests); larger runs draw in chunks


@dataclass(frozen=True)
class Interval:
    """A value and its confidence interval at ``level``; ``method`` is one of :data:`METHODS`."""

    value: float
    lo: float
    hi: float
    level: float = LEVEL
    method: str = "none"

    @property
    def known(self) -> bool:
        return bool(np.isfinite(self.lo) and np.isfinite(self.hi))

    def contains(self, x: float) -> bool:
        return self.known and self.lo <= x <= self.hi

    @property
    def rel_halfwidth(self) -> float:
        """Half the interval's width relative to the value (NaN when unknown)."""
        if not self.known or not self.value:
            return math.nan
        return (self.hi - self.lo) / 2 / abs(self.value)


NO_INTERVAL = Interval(math.nan, math.nan, math.nan)


# --- how many requests ----------------------------------------------------------------------------------------
def request_counts(points: pd.DataFrame, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per point (same index): ``n_requests``, ``n_requests_source`` (one of :data:`N_SOURCES`) and
    ``n_requests_ref`` (for a tool default, the primary source that states it)."""
    n = points["num_requests"].astype(float) if "num_requests" in points.columns else pd.Series(
        np.nan, index=points.index)
    source = pd.Series(np.where(np.isfinite(n) & (n > 0), "file", "unknown"), index=points.index, dtype=object)
    ref = pd.Series("", index=points.index, dtype=object)
    n = n.where(source == "file")
    single_node = ~points["disagg"].fillna(False).astype(bool) & points["scope"].isin(SINGLE_NODE_SCOPES)
    default = ((source == "unknown") & points["format"].isin(INFERENCEX_DEFAULT_FORMATS) & single_node
               & (points["concurrency"] > 0))
    n = n.where(~default, INFERENCEX_PROMPTS_PER_CONCURRENCY * points["concurrency"].astype(float))
    source[default] = "tool-default"
    ref[default] = INFERENCEX_DEFAULT
    if requests is not None and len(requests):
        ok = latency.ok_requests(latency.link_requests(points, requests))
        counted = ok.groupby("point").size()
        if len(counted):
            n.loc[counted.index] = counted.astype(float)
            source.loc[counted.index] = "requests"
            ref.loc[counted.index] = ""
    return pd.DataFrame({"n_requests": n, "n_requests_source": source, "n_requests_ref": ref}, index=points.index)


# --- bootstrap ------------------------------------------------------------------------------------------------
def bootstrap_interval(columns: dict[str, np.ndarray], statistic: Callable[[dict[str, np.ndarray]], np.ndarray], *,
                       level: float = LEVEL, n_boot: int = N_BOOT, seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap of ``statistic`` over rows: ``columns`` are equal-length arrays (one row per request),
    ``statistic`` maps a dict of (draws × rows) arrays to one value per draw (axis 1 is the rows)."""
    arrays = {k: np.asarray(v, dtype=float) for k, v in columns.items()}
    n = len(next(iter(arrays.values())))
    if n < 2 or n_boot < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    per_chunk = max(1, MAX_BOOT_CELLS // n)
    draws = []
    for start in range(0, n_boot, per_chunk):
        idx = rng.integers(0, n, size=(min(per_chunk, n_boot - start), n))
        draws.append(statistic({k: v[idx] for k, v in arrays.items()}))
    values = np.concatenate(draws)
    values = values[np.isfinite(values)]
    if not len(values):
        return math.nan, math.nan
    alpha = (1 - level) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return float(lo), float(hi)


def _user_statistic(definition: str) -> tuple[list[str], Callable, Callable] | None:
    """Columns, the statistic over (draws × requests) arrays and the row filter behind each tok/s/user definition."""
    if definition == "1000/tpot_ms_p50":
        return ["tpot_ms"], lambda a: 1000.0 / np.median(a["tpot_ms"], axis=1), lambda r: r["output_tokens"] > 1
    if definition == "1000/tpot_ms_mean":
        return ["tpot_ms"], lambda a: 1000.0 / np.mean(a["tpot_ms"], axis=1), lambda r: r["output_tokens"] > 1
    if definition in ("osl/e2e", "tool-per-user"):
        return (["output_tokens", "e2e_ms"],
                lambda a: np.median(a["output_tokens"] / a["e2e_ms"] * 1000.0, axis=1),
                lambda r: r["e2e_ms"] > 0)
    return None


def user_interval_from_requests(point: pd.Series, ok: pd.DataFrame, **kw) -> Interval:
    """tok/s/user interval of one point from its successful requests (see the module note)."""
    value = float(point.get("tok_s_per_user", math.nan))
    definition = str(point.get("tok_s_per_user_def") or "1000/tpot_ms_p50")
    spec = _user_statistic(definition) or _user_statistic("1000/tpot_ms_p50")
    cols, statistic, keep = spec
    rows = ok[keep(ok)]
    data = {c: rows[c].to_numpy(float) for c in cols}
    finite = np.all([np.isfinite(v) for v in data.values()], axis=0) if len(rows) else np.zeros(0, bool)
    data = {c: v[finite] for c, v in data.items()}
    lo, hi = bootstrap_interval(data, statistic, **kw)
    return Interval(value, lo, hi, kw.get("level", LEVEL), "bootstrap-requests" if np.isfinite(lo) else "none")


def gpu_interval_from_requests(point: pd.Series, ok: pd.DataFrame, *, tok_s_per_gpu: float, **kw) -> Interval:
    """tok/s/GPU interval of one point: the measured value scaled by the bootstrap spread of Σ out / Σ e2e."""
    if not np.isfinite(tok_s_per_gpu):
        return NO_INTERVAL
    rows = ok[(ok["e2e_ms"] > 0) & np.isfinite(ok["output_tokens"].astype(float))]
    out, e2e = rows["output_tokens"].to_numpy(float), rows["e2e_ms"].to_numpy(float)
    if len(out) < 2 or e2e.sum() <= 0:
        return Interval(tok_s_per_gpu, math.nan, math.nan, kw.get("level", LEVEL), "none")
    hat = out.sum() / e2e.sum()
    lo, hi = bootstrap_interval({"out": out, "e2e": e2e}, lambda a: a["out"].sum(axis=1) / a["e2e"].sum(axis=1), **kw)
    return Interval(tok_s_per_gpu, tok_s_per_gpu * lo / hat, tok_s_per_gpu * hi / hat, kw.get("level", LEVEL),
                    "bootstrap-requests")


# --- from summaries -------------------------------------------------------------------------------------------
def median_standard_error(p50: float, upper: float, upper_level: float, n: float) -> float:
    """Large-sample standard error of a sample median, 1 / (2 f √n), with the density at the median f read from the
    spacing between the median and a higher quantile: f ≈ (upper_level − 0.5) / (upper − p50)."""
    if not (np.isfinite(p50) and np.isfinite(upper) and n > 0 and upper > p50):
        return math.nan
    density = (upper_level - 0.5) / (upper - p50)
    return 1.0 / (2.0 * density * math.sqrt(n))


def user_interval_from_summary(point: pd.Series, n: float, *, level: float = LEVEL) -> Interval:
    """tok/s/user = 1000 / median TPOT from a summary: the median's large-sample interval, inverted."""
    value = float(point.get("tok_s_per_user", math.nan))
    if str(point.get("tok_s_per_user_def")) != "1000/tpot_ms_p50":
        return Interval(value, math.nan, math.nan, level, "none")
    p50 = float(point.get("tpot_ms_p50", math.nan))
    se = math.nan
    for col, q in (("tpot_ms_p90", 0.90), ("tpot_ms_p99", 0.99)):
        se = median_standard_error(p50, float(point.get(col, math.nan)), q, n)
        if np.isfinite(se):
            break
    if not np.isfinite(se):
        return Interval(value, math.nan, math.nan, level, "none")
    z = normal_quantile(0.5 + level / 2)
    tpot_lo, tpot_hi = p50 - z * se, p50 + z * se
    return Interval(value, 1000.0 / tpot_hi, 1000.0 / tpot_lo if tpot_lo > 0 else math.inf, level, "median-spacing")


def gpu_interval_from_summary(point: pd.Series, n: float, *, tok_s_per_gpu: float, level: float = LEVEL) -> Interval:
    """tok/s/GPU from a summary: a normal interval with relative error σ(e2e) / (mean e2e √n)."""
    if not np.isfinite(tok_s_per_gpu):
        return NO_INTERVAL
    p50, p99 = float(point.get("e2e_ms_p50", math.nan)), float(point.get("e2e_ms_p99", math.nan))
    mean = float(point.get("e2e_ms_mean", math.nan))
    mean = mean if np.isfinite(mean) and mean > 0 else p50
    if not (np.isfinite(p50) and np.isfinite(p99) and p99 >= p50 and mean > 0 and n > 0):
        return Interval(tok_s_per_gpu, math.nan, math.nan, level, "none")
    rel = (p99 - p50) / Z_P99 / mean / math.sqrt(n)
    z = normal_quantile(0.5 + level / 2)
    return Interval(tok_s_per_gpu, tok_s_per_gpu * (1 - z * rel), tok_s_per_gpu * (1 + z * rel), level,
                    "normal-e2e-spacing")


def user_interval_from_steps(point: pd.Series, *, level: float = LEVEL, n_boot: int = N_BOOT,
                             seed: int = SEED) -> Interval:
    """tok/s/user = 1000 / step_ms of a step-timing point: bootstrap of its repeated step timings (their median)."""
    value = float(point.get("tok_s_per_user", math.nan))
    samples = point.get("step_ms_samples")
    if samples is None or str(point.get("tok_s_per_user_def")) != "1000/step_ms":
        return Interval(value, math.nan, math.nan, level, "none")
    arr = np.asarray(list(samples), dtype=float)
    arr = arr[np.isfinite(arr) & (arr > 0)]
    lo, hi = bootstrap_interval({"s": arr}, lambda a: np.median(a["s"], axis=1), level=level, n_boot=n_boot,
                                seed=seed)
    if not np.isfinite(lo):
        return Interval(value, math.nan, math.nan, level, "none")
    # the point's own step_ms may be a mean or a median of the same samples: scale the interval onto its value
    centre = float(np.median(arr))
    return Interval(value, value * centre / hi, value * centre / lo, level, "bootstrap-steps")


# --- every point ----------------------------------------------------------------------------------------------
INTERVAL_COLUMNS = ["n_requests", "n_requests_source", "n_requests_ref", "tok_s_per_user", "user_lo", "user_hi",
                    "user_method", "tok_s_per_gpu", "gpu_denominator", "gpu_lo", "gpu_hi", "gpu_method", "level"]


def point_intervals(points: pd.DataFrame, requests: pd.DataFrame | None = None, *, denominator: str = "all",
                    level: float = LEVEL, n_boot: int = N_BOOT, seed: int = SEED) -> pd.DataFrame:
    """Per point (same index): :func:`request_counts` and the tok/s/user and tok/s/GPU intervals (tok/s/GPU under
    ``denominator``), each with its method (one of :data:`METHODS`)."""
    counts = request_counts(points, requests)
    gpu = frontier.per_gpu(points, denominator=denominator) if len(points) else pd.Series(dtype=float)
    by_point = {}
    if requests is not None and len(requests):
        ok = latency.ok_requests(latency.link_requests(points, requests))
        by_point = {k: g for k, g in ok.groupby("point")}
    kw = {"level": level, "n_boot": n_boot, "seed": seed}
    rows = []
    for label, point in points.iterrows():
        n = float(counts.at[label, "n_requests"])
        g = float(gpu.get(label, math.nan))
        if label in by_point:
            user = user_interval_from_requests(point, by_point[label], **kw)
            gpu_iv = gpu_interval_from_requests(point, by_point[label], tok_s_per_gpu=g, **kw)
        elif point.get("step_ms_samples") is not None:
            user = user_interval_from_steps(point, **kw)
            gpu_iv = Interval(g, math.nan, math.nan, level, "none")
        else:
            user = user_interval_from_summary(point, n, level=level)
            gpu_iv = gpu_interval_from_summary(point, n, tok_s_per_gpu=g, level=level)
        rows.append({"tok_s_per_user": point.get("tok_s_per_user", math.nan), "user_lo": user.lo, "user_hi": user.hi,
                     "user_method": user.method, "tok_s_per_gpu": g, "gpu_denominator": denominator,
                     "gpu_lo": gpu_iv.lo, "gpu_hi": gpu_iv.hi,
                     "gpu_method": gpu_iv.method if np.isfinite(g) else "none", "level": level})
    frame = pd.DataFrame(rows, index=points.index)
    return pd.concat([counts, frame], axis=1).reindex(columns=INTERVAL_COLUMNS)


def point_uncertainty(points: pd.DataFrame, requests: pd.DataFrame | None = None, *, denominator: str = "all",
                      level: float = LEVEL, n_boot: int = N_BOOT, seed: int = SEED) -> pd.DataFrame:
    """Everything this module says about each point, one row per point (same index): :func:`point_intervals`
    (``n_requests`` with its source, tok/s/user and tok/s/GPU intervals with their methods) and
    :func:`repeat_spread` (same-date repeats of its configuration). What a claim card or a frontier reading
    attaches to an evidence point."""
    return pd.concat([point_intervals(points, requests, denominator=denominator, level=level, n_boot=n_boot,
                                      seed=seed),
                      repeat_spread(points, denominator=denominator)], axis=1)


def interval_of(intervals: pd.DataFrame, label, quantity: str) -> Interval:
    """One point's interval (``quantity``: ``user`` or ``gpu``) from :func:`point_intervals` as an Interval."""
    r = intervals.loc[label]
    value = r["tok_s_per_user"] if quantity == "user" else r["tok_s_per_gpu"]
    return Interval(float(value), float(r[f"{quantity}_lo"]), float(r[f"{quantity}_hi"]), float(r["level"]),
                    str(r[f"{quantity}_method"]))


# --- run-to-run spread ----------------------------------------------------------------------------------------
REPEAT_COLUMNS = ["repeat_group", "n_repeats", "user_min", "user_max", "user_spread", "gpu_min", "gpu_max",
                  "gpu_spread"]


def repeat_spread(points: pd.DataFrame, *, denominator: str = "all") -> pd.DataFrame:
    """Per point (same index), the run-to-run spread of its repeats: other runs of the same configuration
    (:data:`analysis.history.CONFIG`) at the same concurrency on the same date. ``n_repeats`` counts distinct runs
    (1: no repeat, spreads NaN); ``*_spread`` is max / min − 1 over those runs. One run read from two files (a
    snapshot row and its history row) counts once."""
    out = pd.DataFrame(np.nan, index=points.index, columns=REPEAT_COLUMNS)
    if points.empty:
        return out
    pts = points.copy()
    pts["_day"] = pts["date"].map(day)
    pts["_gpu"] = frontier.per_gpu(pts, denominator=denominator)
    pts["_user"] = pts["tok_s_per_user"].astype(float)
    ok = pts["_day"].notna() & np.isfinite(pts["_user"]) & (pts["_user"] > 0) & pts["concurrency"].notna()
    pts = pts[ok]
    if pts.empty:
        return out
    keys = CONFIG + ["concurrency", "_day"]
    runs = pts.drop_duplicates(subset=keys + ["run_id"])
    stats_ = runs.groupby(keys, dropna=False, sort=False).agg(
        n_repeats=("run_id", "nunique"), user_min=("_user", "min"), user_max=("_user", "max"),
        gpu_min=("_gpu", "min"), gpu_max=("_gpu", "max")).reset_index()
    stats_["repeat_group"] = np.arange(len(stats_), dtype=float)
    stats_["user_spread"] = stats_["user_max"] / stats_["user_min"] - 1
    stats_["gpu_spread"] = stats_["gpu_max"] / stats_["gpu_min"] - 1
    single = stats_["n_repeats"] < 2
    stats_.loc[single, ["user_spread", "gpu_spread"]] = np.nan
    merged = pts[keys].reset_index().merge(stats_, on=keys, how="left").set_index(pts.index.name or "index")
    out.loc[merged.index, REPEAT_COLUMNS] = merged[REPEAT_COLUMNS].to_numpy(float)
    return out


def repeat_summary(spread: pd.DataFrame) -> dict[str, float]:
    """Over the repeat groups with two or more runs: how many, and the median relative spread of each speed."""
    groups = spread.dropna(subset=["user_spread"]).drop_duplicates(subset=["repeat_group"])
    return {"groups": int(len(groups)),
            "user_spread_median": float(groups["user_spread"].median()) if len(groups) else math.nan,
            "gpu_spread_median": float(groups["gpu_spread"].median()) if len(groups) else math.nan}


# --- ratios and noise -----------------------------------------------------------------------------------------
def ratio_interval(a: Interval, b: Interval, *, level: float = LEVEL) -> Interval:
    """a / b with an interval, the two taken as independent: each interval's half-width in log space is read as
    z standard errors and the errors add in quadrature. Unknown when either interval is."""
    if not (a.known and b.known and a.value > 0 and b.value > 0 and a.lo > 0 and b.lo > 0):
        return Interval(a.value / b.value if b.value else math.nan, math.nan, math.nan, level, "none")
    z_a = normal_quantile(0.5 + a.level / 2)
    z_b = normal_quantile(0.5 + b.level / 2)
    se_a = (math.log(a.hi) - math.log(a.lo)) / (2 * z_a)
    se_b = (math.log(b.hi) - math.log(b.lo)) / (2 * z_b)
    z = normal_quantile(0.5 + level / 2)
    r = a.value / b.value
    half = z * math.hypot(se_a, se_b)
    return Interval(r, r * math.exp(-half), r * math.exp(half), level, "log-quadrature")


def within_noise(ratio: Interval) -> bool:
    """True when the ratio's interval includes 1 (so the ratio is no evidence of faster or slower); False when the
    interval lies wholly above or below 1. An unknown interval is not within noise: it says nothing, and callers
    report it as unknown."""
    return ratio.known and ratio.lo <= 1.0 <= ratio.hi


def ratio_verdict(ratio: Interval) -> str:
    """``higher``, ``lower``, ``within-noise`` or ``unknown`` (no interval) for a ratio's interval against 1."""
    if not ratio.known:
        return "unknown"
    if within_noise(ratio):
        return "within-noise"
    return "higher" if ratio.lo > 1.0 else "lower"


# Why a ratio has no interval: which of its two readings has none (``missing_side``'s values).
MISSING_SIDES = ("", "numerator", "denominator", "both")


@dataclass(frozen=True)
class RatioReading:
    """a / b with its interval (:func:`ratio_interval`), the verdict against 1 (:func:`ratio_verdict`) and, when
    there is no interval, which side has none (``missing``: one of :data:`MISSING_SIDES`). What every page that
    says "faster", "slower" or "within noise" about two readings reads, so none words it more strongly than its
    interval allows."""

    ratio: float
    lo: float
    hi: float
    verdict: str
    missing: str = ""


def compare_readings(a: Interval, b: Interval, *, level: float = LEVEL) -> RatioReading:
    """:class:`RatioReading` of two readings, each with its interval."""
    r = ratio_interval(a, b, level=level)
    verdict = ratio_verdict(r)
    missing = ""
    if verdict == "unknown":
        no_a, no_b = not (a.known and a.lo > 0), not (b.known and b.lo > 0)
        missing = "both" if no_a and no_b else "numerator" if no_a else "denominator" if no_b else "both"
    return RatioReading(r.value, r.lo, r.hi, verdict, missing)


def compare_arrays(value_a, lo_a, hi_a, value_b, lo_b, hi_b, *, level: float = LEVEL) -> list[RatioReading]:
    """:func:`compare_readings` element by element over equal-length arrays (NaN ends: no interval)."""
    arrays = [np.asarray(x, dtype=float) for x in (value_a, lo_a, hi_a, value_b, lo_b, hi_b)]
    return [compare_readings(Interval(va, la, ha), Interval(vb, lb, hb), level=level)
            for va, la, ha, vb, lb, hb in zip(*arrays)]
