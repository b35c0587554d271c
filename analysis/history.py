"""Results over time: like-for-like series per configuration, changes beyond run-to-run noise, the suite's own runs.

Benchmark data is dated: InferenceX re-runs each configuration as serving stacks change. A comparison over time is
made only between like points: the same configuration (:data:`CONFIG`: model, hardware, framework, precision,
speculative decoding, disaggregation, scope, lengths, parallelism and GPU counts) measured on two dates, either at
equal concurrency or at equal tok/s/user read on each date's own frontier (interpolated in log-log space inside the
range that date measured, never across it). Each configuration measured on two or more dates gives:

* ``tok/s/user at concurrency C`` and ``tok/s/GPU at concurrency C`` for every concurrency measured on that date;
  the lowest concurrency measured on two dates is the configuration's *low-concurrency end*, the highest its
  *capacity end*;
* ``tok/s/GPU at L tok/s/user`` for each interactivity level L inside that date's measured range, unless the two
  frontier points it is read between are more than ``frontier.WIDE_GAP``× apart in tok/s/user (too rough).

A change is a ratio between neighbouring dates of one series larger than the run-to-run noise the data itself shows
(a frontier reading counts only when both dates read it between points at the same concurrencies: a point measured
at a new concurrency raises an interpolated frontier without anything getting faster)
(:func:`noise`): repeats on one date when there are any, else neighbouring dates of the same configuration and
concurrency, using only pairs with a recorded, unchanged image when there are enough of them; and never below the
spread of the same-date repeats where there are at least ``MIN_REPEAT_PAIRS`` of them. The spread is a
robust one (1.4826 × median absolute log ratio, so the minority of pairs that really changed does not set it) and a
change must exceed ``K_SIGMA`` times it. What differs between the two dates (image, framework version, run, the
points an interpolated value was read between) is listed with every change.

The suite's own history (``reports/history/*.parquet``, one row per run × report × key) is read by
:func:`load_suite_history`; :func:`suite_changes` says whether a moved number came with new inputs, new code, both,
or neither.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from analysis import frontier, text
from analysis.history_words import noise_text
from analysis.schema import has_flag
from analysis.text import plain

# The columns that make two points the same configuration (GPU counts included: they are part of the deployment).
CONFIG = ["model", "hardware", "framework", "precision", "spec_decode", "disagg", "scope", "isl", "osl", "tp", "ep",
          "dp", "n_gpus", "n_prefill_gpus", "n_decode_gpus"]
# Flags that make a point unusable for any comparison; ``dated-history`` is what this module reads.
BAD_FLAGS = ("failed-run", "inconsistent-throughput", "conflicting-duplicate")  # the last: see conflicts()
LEVELS = (25.0, 50.0, 100.0, 200.0)  # tok/s/user at which each date's frontier is read
K_SIGMA = 3.0  # a change must exceed this many robust standard deviations of the run-to-run noise
MIN_QUIET_PAIRS = 20  # fewer neighbouring pairs with a recorded, unchanged image than this: use all pairs
# Repeats on one date are the direct measure of run-to-run noise: from this many on, the threshold is never below
# what they show (a same-date repeat spread of 12% cannot let a 5% change between dates count)
MIN_REPEAT_PAIRS = 5
MAD_TO_SIGMA = 1.4826  # median absolute deviation of a normal distribution → its standard deviation

SERIES_COLUMNS = ["group", "model", "hardware", "precision", "scope", "lengths", "date", "metric", "value", "source",
                  "quantity", "concurrency", "level", "between", "role", "lo", "hi"]
CHANGE_COLUMNS = ["group", "model", "hardware", "metric", "role", "date_before", "date_after", "before", "after",
                  "ratio", "kind", "differs", "source_before", "source_after", "back_on", "held_on", "recovers",
                  "first_date", "ratio_lo", "ratio_hi", "verdict", "interval_basis"]
# What a change's interval rests on (``interval_basis``): both dates' points' own intervals and the run-to-run
# noise, or the run-to-run noise alone (a date's points carry no interval).
INTERVAL_BASES = ("points and run-to-run", "run-to-run only")
SUITE_COLUMNS = ["run_id", "run_date", "report", "key", "value", "inputs_hash", "code_version", "commit"]


# --- like points --------------------------------------------------------------------------------------
def day(value) -> str | None:
    """``2026-01-31`` from a date or timestamp text; None when there is no date."""
    m = re.match(r"(\d{4}-\d{2}-\d{2})", str(value or ""))
    return m.group(1) if m else None


def rows_read(points: pd.DataFrame, *, model: str | None = None) -> pd.DataFrame:
    """The rows the history report can use (dated, of ``model`` when given): the page reads these alone, and the
    report runner hashes the same rows for its cache key."""
    keep = points["date"].map(day).notna()
    if model is not None:
        keep &= points["model"] == model
    return points[keep]


def dated_points(points: pd.DataFrame) -> pd.DataFrame:
    """Points usable for comparisons over time: a date, both speeds, not failed or inconsistent; one row per
    measurement (the same configuration, concurrency, date and run read from two files counts once, keeping the
    row that records its image). Adds ``day`` and ``source`` (``file:line``); tok/s/GPU divides by all GPUs."""
    if points.empty:
        return points.assign(day=pd.Series(dtype=str), source=pd.Series(dtype=str))
    # numpy-backed text columns: the series walk rows one by one, and Arrow-backed text pays per element
    pts = points.astype({c: object for c in points.columns if pd.api.types.is_string_dtype(points[c])})
    pts["day"] = pts["date"].map(day)
    pts["tok_s_per_gpu"] = frontier.per_gpu(pts, denominator="all")
    ok = pts["day"].notna()
    for flag in BAD_FLAGS:
        ok &= ~has_flag(pts, flag)
    for col in ("tok_s_per_user", "tok_s_per_gpu"):
        ok &= np.isfinite(pts[col].astype(float)) & (pts[col] > 0)
    pts = pts[ok].copy()
    line = pts["source_line"].map(lambda x: "" if pd.isna(x) else f":{int(x)}")
    pts["source"] = pts["source_file"].astype(str) + line.astype(str)  # astype: an empty map is float
    pts["_image_known"] = pts["tool_version"].fillna("unknown") != "unknown"
    key = CONFIG + ["concurrency", "day", "run_id"]
    pts = pts.sort_values("_image_known", ascending=False, kind="stable")
    pts = pts.drop_duplicates(subset=key, keep="first").drop(columns="_image_known")
    return pts.sort_values(CONFIG + ["day", "concurrency"], kind="stable").reset_index(drop=True)


LABEL_COLUMNS = ["model", "hardware", "precision", "framework", "spec_decode", "scope", "tp", "ep", "dp", "disagg",
                 "n_prefill_gpus", "n_decode_gpus", "n_gpus", "isl", "osl"]  # what group_label reads


def group_label(row: Mapping) -> str:
    """A configuration in words (:func:`analysis.text.group_label` of :data:`LABEL_COLUMNS`), e.g.
    ``DeepSeek-R1-0528 · B200 · fp4 · sglang · mtp · node · TP8 EP1 · 8 GPUs · 1k/1k``."""
    return text.group_label({c: row.get(c) for c in LABEL_COLUMNS})


def conc_metric(quantity: str, concurrency: float) -> str:
    unit = "tok/s/user" if quantity == "user" else "tok/s/GPU"
    return f"{unit} at concurrency {plain(concurrency)}"


def level_metric(level: float) -> str:
    return f"tok/s/GPU at {plain(level)} tok/s/user"


def with_point_intervals(pts: pd.DataFrame) -> pd.DataFrame:
    """``pts`` (:func:`dated_points`) with each point's tok/s/user and tok/s/GPU interval (``user_lo`` …
    ``gpu_hi``, :func:`analysis.uncertainty.point_intervals`, all GPUs), so every value over time carries one."""
    from analysis import uncertainty  # uncertainty imports this module

    if pts.empty:
        return pts.assign(user_lo=pd.Series(dtype=float), user_hi=pd.Series(dtype=float),
                          gpu_lo=pd.Series(dtype=float), gpu_hi=pd.Series(dtype=float))
    iv = uncertainty.point_intervals(pts, denominator="all")
    return pts.assign(**{c: iv[c].to_numpy(float) for c in ("user_lo", "user_hi", "gpu_lo", "gpu_hi")})


def change_interval(before: float, before_lo: float, before_hi: float, after: float, after_lo: float,
                    after_hi: float, *, sigma: float) -> tuple[float, float, float, str, str]:
    """after ÷ before with a 95% interval: the two dates' values' own intervals
    (:func:`analysis.uncertainty.compare_readings`) and the run-to-run noise ``sigma`` (robust σ of the log ratio
    of like points, :func:`noise`) added in quadrature; with no interval on either date, the run-to-run noise
    alone. Returns the ratio, its ends, the verdict (``higher``, ``lower``, ``within-noise``; ``unknown`` without
    a noise estimate either) and the basis (one of :data:`INTERVAL_BASES`)."""
    from analysis import uncertainty

    reading = uncertainty.compare_readings(uncertainty.Interval(after, after_lo, after_hi),
                                           uncertainty.Interval(before, before_lo, before_hi))
    z = float(uncertainty.normal_quantile(0.5 + uncertainty.LEVEL / 2))
    ratio = after / before
    if reading.verdict != "unknown":
        se, basis = (math.log(reading.hi) - math.log(reading.lo)) / (2 * z), INTERVAL_BASES[0]
    else:
        se, basis = 0.0, INTERVAL_BASES[1]
    if not math.isfinite(sigma):
        if basis == INTERVAL_BASES[1]:
            return ratio, math.nan, math.nan, "unknown", ""
        sigma = 0.0
    half = z * math.hypot(se, sigma)
    iv = uncertainty.Interval(ratio, ratio * math.exp(-half), ratio * math.exp(half))
    return ratio, iv.lo, iv.hi, uncertainty.ratio_verdict(iv), basis


def series(points: pd.DataFrame, *, levels: Sequence[float] = LEVELS) -> pd.DataFrame:
    """Every configuration measured on two or more dates: one row per group × date × metric (see the module note).

    ``role`` is ``low-concurrency end`` / ``capacity end`` for the two ends, ``at concurrency`` for the other
    equal-concurrency values and ``at interactivity`` for frontier readings; ``source`` names the row(s) read.
    """
    pts = with_point_intervals(dated_points(points))
    cols = [c for c in dict.fromkeys(CONFIG + LABEL_COLUMNS + ["day", "concurrency", "tok_s_per_user", "tok_s_per_gpu",
                                                               "source", "user_lo", "user_hi", "gpu_lo", "gpu_hi"])
            if c in pts.columns]
    pts = pts[cols]
    if pts.empty:
        return pd.DataFrame(columns=SERIES_COLUMNS)
    # one number per configuration, in sorted configuration order (the order dated_points sorts the rows in)
    pts = pts.assign(_g=pts.groupby(CONFIG, dropna=False, sort=True).ngroup().to_numpy())
    pts = pts[(pts.groupby("_g")["day"].transform("nunique") >= 2).to_numpy()]  # measured on two or more dates
    if pts.empty:
        return pd.DataFrame(columns=SERIES_COLUMNS)
    repeated = pts[(pts.groupby(["_g", "concurrency"])["day"].transform("nunique") >= 2).to_numpy()]
    low = repeated.groupby("_g")["concurrency"].min()
    high = repeated.groupby("_g")["concurrency"].max()
    first = pts.groupby("_g", sort=True).head(1).set_index("_g")
    label = {g: group_label(row) for g, row in first.iterrows()}
    lengths = {g: text.lengths(row.get("isl"), row.get("osl")) for g, row in first.iterrows()}
    g = pts["_g"].to_numpy()
    conc = pts["concurrency"].to_numpy(float)
    base = {"group": [label[x] for x in g], **{c: first.loc[g, c].to_numpy() for c in
                                              ("model", "hardware", "precision", "scope")},
            "lengths": [lengths[x] for x in g],
            "date": pts["day"].to_numpy(), "source": pts["source"].to_numpy(), "concurrency": conc,
            "level": np.nan, "between": [plain(c) for c in conc]}
    at_low = conc == low.reindex(g).to_numpy(float)
    at_high = conc == high.reindex(g).to_numpy(float)
    parts = [
        pd.DataFrame({**base, "metric": [conc_metric("user", c) for c in conc],
                      "value": pts["tok_s_per_user"].to_numpy(float), "quantity": "user",
                      "role": np.where(at_low, "low-concurrency end", "at concurrency"),
                      "lo": pts["user_lo"].to_numpy(float), "hi": pts["user_hi"].to_numpy(float)}),
        pd.DataFrame({**base, "metric": [conc_metric("gpu", c) for c in conc],
                      "value": pts["tok_s_per_gpu"].to_numpy(float), "quantity": "gpu",
                      "role": np.where(at_high, "capacity end", "at concurrency"),
                      "lo": pts["gpu_lo"].to_numpy(float), "hi": pts["gpu_hi"].to_numpy(float)}),
    ]
    rows: list[dict] = []
    front_cols = ["concurrency", "tok_s_per_user", "tok_s_per_gpu", "source", "gpu_lo", "gpu_hi"]
    for (gid, date), on_day in pts[["_g", "day"] + front_cols].groupby(["_g", "day"], sort=True):
        mask = frontier.pareto_mask(on_day["tok_s_per_user"].to_numpy(float), on_day["tok_s_per_gpu"].to_numpy(float))
        front = on_day[mask]
        read = frontier.capacity_readings(front, levels)  # the value and its interval (log-log, as the frontier)
        for level, value, lo, hi in zip(levels, read["tok_s_per_gpu"], read["gpu_lo"], read["gpu_hi"]):
            if not np.isfinite(value):
                continue
            used = frontier.bracketing_points(front, level)
            u = used["tok_s_per_user"].to_numpy(float)
            if len(u) == 2 and u[1] / u[0] > frontier.WIDE_GAP:
                continue  # read between points too far apart: too rough to compare over time
            f = first.loc[gid]
            rows.append({"group": label[gid], "model": f["model"], "hardware": f["hardware"],
                         "precision": f["precision"], "scope": f["scope"], "lengths": lengths[gid], "date": date,
                         "metric": level_metric(level), "value": float(value), "source": "+".join(used["source"]),
                         "quantity": "gpu", "concurrency": np.nan, "level": float(level), "role": "at interactivity",
                         "between": "–".join(plain(c) for c in sorted(used["concurrency"])), "lo": float(lo),
                         "hi": float(hi)})
    parts.append(pd.DataFrame(rows, columns=SERIES_COLUMNS))
    out = pd.concat([p[SERIES_COLUMNS] for p in parts], ignore_index=True)
    # Repeats on one date (two runs of one configuration at one concurrency) stay as separate rows.
    return out.sort_values(["group", "metric", "date"], kind="stable").reset_index(drop=True)


# --- run-to-run noise -----------------------------------------------------------------------------------
@dataclass
class Noise:
    """The run-to-run noise of one quantity (``user``: tok/s/user, ``gpu``: tok/s/GPU) and the threshold it sets."""

    quantity: str
    basis: str  # "repeats on one date", "neighbouring dates, image unchanged", "neighbouring dates"
    n_pairs: int
    sigma: float  # robust standard deviation of log(after / before)
    threshold: float  # |log ratio| above which a change counts
    k_sigma: float = K_SIGMA

    @property
    def threshold_ratio(self) -> float:
        """The threshold as a ratio: a change is a ratio above this or below its inverse."""
        return math.exp(self.threshold)

    def describe(self) -> str:
        """The estimate in words (:func:`analysis.history_words.noise_text`)."""
        return noise_text(self)


def _image(rows: pd.DataFrame) -> str:
    values = sorted({v for v in rows["tool_version"].fillna("unknown") if v != "unknown"})
    return ";".join(values) if values else "unknown"


def neighbour_pairs(points: pd.DataFrame) -> pd.DataFrame:
    """Pairs of like points for the noise estimate: repeats on one date (``same_day``) and neighbouring dates of
    one configuration at one concurrency, with the log ratio of each speed and whether the image is recorded and
    unchanged (``quiet``)."""
    cols = ["same_day", "quiet", "log_user", "log_gpu"]
    pts = dated_points(points)
    pts = pts[pts["concurrency"].notna()].copy()
    if pts.empty:
        return pd.DataFrame(columns=cols)
    pts["_like"] = pts.groupby(CONFIG + ["concurrency"], dropna=False, sort=False).ngroup()
    pts["_image"] = pts["tool_version"].fillna("unknown")
    pts = pts.sort_values(["_like", "day", "run_id"], kind="stable")
    # repeats: consecutive runs of one configuration at one concurrency on one date
    same = pts.groupby(["_like", "day"], sort=False)
    rep = pd.DataFrame({
        "same_day": True, "quiet": True,
        "log_user": np.log(pts["tok_s_per_user"] / same["tok_s_per_user"].shift()),
        "log_gpu": np.log(pts["tok_s_per_gpu"] / same["tok_s_per_gpu"].shift()),
    }).dropna()
    # neighbouring dates: the median of each date, compared with the previous date of the same like points
    daily = (pts.groupby(["_like", "day"], sort=True)
             .agg(user=("tok_s_per_user", "median"), gpu=("tok_s_per_gpu", "median"),
                  image=("_image", lambda v: ";".join(sorted(set(v) - {"unknown"})) or "unknown"))
             .reset_index())
    prev = daily.groupby("_like", sort=False)[["user", "gpu", "image"]].shift()
    ok = prev["user"].notna()
    nb = pd.DataFrame({
        "same_day": False,
        "quiet": (daily["image"] == prev["image"]) & (daily["image"] != "unknown"),
        "log_user": np.log(daily["user"] / prev["user"].astype(float)),
        "log_gpu": np.log(daily["gpu"] / prev["gpu"].astype(float)),
    })[ok]
    return pd.concat([rep, nb], ignore_index=True)[cols]


def noise(points: pd.DataFrame, *, k_sigma: float = K_SIGMA, min_pairs: int = MIN_QUIET_PAIRS
          ) -> dict[str, Noise]:
    """Run-to-run noise per quantity, from the data: repeats on one date when there are at least ``min_pairs``,
    else neighbouring dates with a recorded, unchanged image when there are that many, else all neighbouring dates
    (the robust spread ignores the minority that really changed); where there are fewer than ``min_pairs`` but at
    least :data:`MIN_REPEAT_PAIRS` repeats and they spread more, the repeats set it (run-to-run noise is at least
    what the same date shows)."""
    pairs = neighbour_pairs(points)
    out = {}
    for quantity in ("user", "gpu"):
        col = f"log_{quantity}"
        for basis, sel in (("repeats on one date", pairs["same_day"]),
                           ("neighbouring dates, image recorded and unchanged", ~pairs["same_day"] & pairs["quiet"]),
                           ("neighbouring dates of one configuration and concurrency", ~pairs["same_day"])):
            values = pairs.loc[sel, col].abs().to_numpy(float)
            if len(values) >= min_pairs or basis.startswith("neighbouring dates of"):
                break
        sigma = MAD_TO_SIGMA * float(np.median(values)) if len(values) else math.nan
        repeats = pairs.loc[pairs["same_day"], col].abs().to_numpy(float)
        if basis != "repeats on one date" and len(repeats) >= MIN_REPEAT_PAIRS:
            # too few repeats to be the basis on their own, enough to say the noise is at least theirs
            rep_sigma = MAD_TO_SIGMA * float(np.median(repeats))
            if not len(values) or rep_sigma > sigma:
                basis, values, sigma = "repeats on one date (few, above the neighbouring dates' spread)", repeats, \
                    rep_sigma
        out[quantity] = Noise(quantity=quantity, basis=basis, n_pairs=len(values), sigma=sigma,
                              threshold=k_sigma * sigma if len(values) else math.inf, k_sigma=k_sigma)
    return out


# --- changes --------------------------------------------------------------------------------------------
def framework_version(image: str) -> str | None:
    """The version in a container image tag: ``lmsysorg/sglang:v0.5.9-cu130`` → ``v0.5.9``."""
    tag = str(image).rsplit(":", 1)[-1] if ":" in str(image) else ""
    m = re.search(r"v?\d+(?:\.\d+)+(?:\.?post\d+|rc\d+(?:\.post\d+)?)?", tag)
    return m.group(0) if m else None


def _rows_for(points: pd.DataFrame, sources: str) -> pd.DataFrame:
    return points[points["source"].isin(str(sources).split("+"))]


class Difference(NamedTuple):
    """One thing that differs between the rows two values were read from: ``what`` (one of
    :data:`DIFFERENCE_KINDS`), its value ``before`` and ``after`` (tuples of the distinct values, or for
    ``image not recorded`` the dates without one, for ``days apart`` the number of days)."""

    what: str
    before: object = None
    after: object = None


DIFFERENCE_KINDS = ("image", "framework version", "image not recorded", "run", "GPUs", "decode GPUs",
                    "concurrency", "days apart")


def differs(before: pd.DataFrame, after: pd.DataFrame, *, date_before: str, date_after: str) -> tuple[Difference, ...]:
    """What differs between the rows two values were read from: image, framework version, run, GPU counts,
    concurrencies (for values read on a frontier), days apart (:mod:`analysis.history_words` says it)."""
    out = []
    img_a, img_b = _image(before), _image(after)
    if img_a != "unknown" and img_b != "unknown":
        if img_a != img_b:
            out.append(Difference("image", img_a, img_b))
            va, vb = framework_version(img_a), framework_version(img_b)
            if va and vb and va != vb:
                out.append(Difference("framework version", va, vb))
    else:
        dates = tuple(d for d, img in ((date_before, img_a), (date_after, img_b)) if img == "unknown")
        out.append(Difference("image not recorded", dates))
    runs_a = tuple(sorted(set(before["run_id"].astype(str)) - {"unknown"}))
    runs_b = tuple(sorted(set(after["run_id"].astype(str)) - {"unknown"}))
    if runs_a != runs_b:
        out.append(Difference("run", runs_a, runs_b))
    for col, name in (("n_gpus", "GPUs"), ("n_decode_gpus", "decode GPUs")):
        ga = tuple(sorted(float(x) for x in set(before[col].dropna())))
        gb = tuple(sorted(float(x) for x in set(after[col].dropna())))
        if ga != gb:
            out.append(Difference(name, ga, gb))
    ca, cb = tuple(sorted(set(before["concurrency"].dropna()))), tuple(sorted(set(after["concurrency"].dropna())))
    if ca != cb:
        out.append(Difference("concurrency", ca, cb))
    if "acceptance_source" in before.columns and "acceptance_source" in after.columns:
        # a speculative-decoding speed with a forced acceptance on one date and a measured one on the other is not
        # one series changing: the change says so
        aa = tuple(sorted(set(before["acceptance_source"].dropna().astype(str)) - {"none"}))
        ab = tuple(sorted(set(after["acceptance_source"].dropna().astype(str)) - {"none"}))
        if aa != ab and (aa or ab):
            out.append(Difference("acceptance", aa, ab))
    out.append(Difference("days apart", (pd.Timestamp(date_after) - pd.Timestamp(date_before)).days))
    return tuple(out)


def changes(points: pd.DataFrame, *, levels: Sequence[float] = LEVELS, noise_by: dict[str, Noise] | None = None,
            table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every ratio between neighbouring dates of a series beyond the noise threshold of its quantity, largest
    first within each kind. ``ratio`` = after / before (all metrics are higher-is-better), ``kind`` is
    ``improvement`` or ``regression``, ``differs`` lists what changed between the two dates. ``ratio_lo`` and
    ``ratio_hi`` are its 95% interval (:func:`change_interval`: both dates' values' intervals, each the median of
    its date's repeats' ends, and the run-to-run noise), ``verdict`` the interval against 1 (``within-noise``: no
    evidence of a rise or a fall, whatever the threshold said) and ``interval_basis`` what it rests on."""
    table = series(points, levels=levels) if table is None else table
    noise_by = noise(points) if noise_by is None else noise_by
    pts = dated_points(points)
    # what differs() reads, and nothing else: it filters these rows once per change
    pts = pts[[c for c in ("source", "tool_version", "run_id", "n_gpus", "n_decode_gpus", "concurrency",
                           "acceptance_source") if c in pts.columns]]
    rows_of: dict[str, pd.DataFrame] = {}  # many changes read the same runs: filter each once

    def rows_for(sources: str) -> pd.DataFrame:
        if sources not in rows_of:
            rows_of[sources] = _rows_for(pts, sources)
        return rows_of[sources]

    rows = []
    # repeats on one date: compare the dates' medians (one aggregation over every series, then a walk per series)
    per_day_all = table.groupby(["group", "metric", "date"], sort=True).agg(
        value=("value", "median"), lo=("lo", "median"), hi=("hi", "median"), source=("source", "+".join),
        quantity=("quantity", "first"),
        role=("role", "first"), between=("between", "first"), model=("model", "first"),
        hardware=("hardware", "first")).reset_index()
    for (group, metric), recs in itertools.groupby(per_day_all.to_dict("records"),
                                                   key=lambda r: (r["group"], r["metric"])):
        per_day = {r["date"]: r for r in recs}
        if len(per_day) < 2:
            continue
        dates = list(per_day)
        for i, (d0, d1) in enumerate(zip(dates[:-1], dates[1:])):
            a, b = per_day[d0], per_day[d1]
            ratio = b["value"] / a["value"]
            limit = noise_by[a["quantity"]].threshold
            if not abs(math.log(ratio)) > limit:
                continue
            if a["between"] != b["between"]:
                continue  # a frontier read between other concurrencies moves with where points were measured
            sign = 1.0 if ratio > 1 else -1.0
            # the next date back at (or past) the value before, within the noise: a one-date excursion
            nxt = dates[i + 2] if i + 2 < len(dates) else None
            back = nxt if nxt and sign * math.log(per_day[nxt]["value"] / a["value"]) <= limit else None
            held = nxt if nxt and back is None else None  # the next date confirms the new level
            # an earlier change the other way that this one takes back to (or past) the level before it
            prev = dates[i - 1] if i >= 1 else None
            undoes = None
            if prev is not None:
                step = math.log(a["value"] / per_day[prev]["value"])
                if -sign * step > limit and sign * math.log(b["value"] / per_day[prev]["value"]) >= -limit:
                    undoes = prev
            _, lo, hi, verdict, basis = change_interval(a["value"], a["lo"], a["hi"], b["value"], b["lo"], b["hi"],
                                                        sigma=noise_by[a["quantity"]].sigma)
            rows.append({
                "ratio_lo": lo, "ratio_hi": hi, "verdict": verdict, "interval_basis": basis,
                "group": group, "model": a["model"], "hardware": a["hardware"], "metric": metric, "role": a["role"],
                "date_before": d0, "date_after": d1, "before": float(a["value"]), "after": float(b["value"]),
                "ratio": float(ratio), "kind": "improvement" if ratio > 1 else "regression",
                "differs": differs(rows_for(a["source"]), rows_for(b["source"]),
                                   date_before=d0, date_after=d1),
                "source_before": a["source"], "source_after": b["source"], "back_on": back,
                "held_on": held, "recovers": undoes, "first_date": d0 == dates[0],
            })
    out = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    if len(out):
        out["_size"] = np.abs(np.log(out["ratio"]))
        out = out.sort_values(["kind", "_size"], ascending=[True, False], kind="stable").drop(columns="_size")
    return out.reset_index(drop=True)


def largest(changes_table: pd.DataFrame, kind: str, n: int = 5, *, lasting: bool = False) -> pd.DataFrame:
    """The ``n`` largest changes of one kind, at most one per configuration and pair of dates (its biggest
    metric), so one re-run does not fill the list; a change whose interval includes 1 (``verdict``
    ``within-noise``) is none. ``lasting``: only changes that the next date confirms (``held_on``: measured again
    and not back) and that do not undo an earlier one (``recovers``)."""
    sel = changes_table[changes_table["kind"] == kind].copy()
    if "verdict" in sel:  # a change whose interval includes 1 is within noise: neither a rise nor a fall
        sel = sel[sel["verdict"] != "within-noise"]
    if lasting:
        sel = sel[sel["held_on"].notna() & sel["recovers"].isna()]
    if sel.empty:
        return sel
    sel["_size"] = np.abs(np.log(sel["ratio"]))
    sel = sel.sort_values("_size", ascending=False).drop_duplicates(["group", "date_before", "date_after"])
    return sel.head(n).drop(columns="_size").reset_index(drop=True)


def as_json(table: pd.DataFrame, change_table: pd.DataFrame) -> dict:
    """The ``perfclaims history --json`` document: ``series`` and ``changes`` in their fixed keys."""
    from analysis.history_words import differences_text

    def _finite(x):
        return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)

    return {
        "series": [{"group": r.group, "date": r.date, "metric": r.metric, "value": _finite(r.value), "source": r.source}
                   for r in table.itertuples()],
        "changes": [{"group": r.group, "metric": r.metric, "date_before": r.date_before, "date_after": r.date_after,
                     "before": _finite(r.before), "after": _finite(r.after), "ratio": _finite(r.ratio),
                     "kind": r.kind, "ratio_lo": _finite(r.ratio_lo), "ratio_hi": _finite(r.ratio_hi),
                     "verdict": r.verdict, "differs": differences_text(r.differs)} for r in change_table.itertuples()],
    }


# --- newest evidence ----------------------------------------------------------------------------------
def newest_like_for_like(points: pd.DataFrame, keys: Mapping[str, Any]) -> pd.DataFrame:
    """The newest measurement of every configuration that matches ``keys`` (column → value, e.g. model, hardware,
    precision, isl, osl): for each configuration (:data:`CONFIG`) only the rows of its newest date, so older re-runs
    never stand in for a newer one. Failed and inconsistent points are left out; ``day`` holds the evidence's date.
    Unknown columns raise ``KeyError``; no match gives an empty table."""
    missing = [k for k in keys if k not in points.columns]
    if missing:
        raise KeyError(f"no such column(s) {', '.join(missing)} in the points table")
    pts = dated_points(points)
    for col, value in keys.items():
        pts = pts[pts[col] == (float(value) if pd.api.types.is_numeric_dtype(pts[col]) else value)]
    if pts.empty:
        return pts
    newest = pts.groupby(CONFIG, dropna=False)["day"].transform("max")
    return pts[pts["day"] == newest].reset_index(drop=True)


# --- the suite's own history -------------------------------------------------------------------------
def load_suite_history(folder: str | Path) -> pd.DataFrame:
    """Every part file of the suite-history store (``reports/history/*.parquet``) as one table in
    :data:`SUITE_COLUMNS`, ordered by run date and run id; an empty table when the folder is absent or empty.
    ``value`` is numeric where it can be (other values become NaN and stay in ``value_text``)."""
    folder = Path(folder)
    parts = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    frames = [pd.read_parquet(p) for p in parts]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "value" else str) for c in SUITE_COLUMNS}
                            ).assign(value_text=pd.Series(dtype=str))
    hist = pd.concat(frames, ignore_index=True)
    missing = [c for c in SUITE_COLUMNS if c not in hist.columns]
    if missing:
        raise ValueError(f"{folder}: suite-history part files lack column(s) {', '.join(missing)}")
    hist = hist[SUITE_COLUMNS].copy()
    hist["value_text"] = hist["value"].astype(str)
    hist["value"] = pd.to_numeric(hist["value"], errors="coerce")
    for col in ("run_id", "run_date", "report", "key", "inputs_hash", "code_version", "commit"):
        hist[col] = hist[col].astype(str)
    hist = hist.drop_duplicates(["run_id", "report", "key"], keep="last")
    return hist.sort_values(["run_date", "run_id", "report", "key"], kind="stable").reset_index(drop=True)


def attribute(before: Mapping, after: Mapping) -> str:
    """Why a number may have moved between two runs: ``inputs``, ``code``, ``inputs and code`` or ``neither``.

    Code is the package source (``code_version`` carries its hash); the git commit is provenance only: a commit
    that adds data, or a checkout made dirty by a changed raw file, is not a code change."""
    inputs = str(before["inputs_hash"]) != str(after["inputs_hash"])
    code = str(before["code_version"]) != str(after["code_version"])
    if inputs and code:
        return "inputs and code"
    if inputs:
        return "inputs"
    if code:
        return "code"
    return "neither"


def suite_changes(hist: pd.DataFrame, *, rel_tol: float = 1e-9) -> pd.DataFrame:
    """Every number that moved between consecutive runs of the suite (per report × key), with the cause:
    new ``inputs`` (inputs hash changed, code the same), new ``code`` (version or commit changed), both, or
    ``neither`` (same inputs and code: the computation is not reproducible)."""
    cols = ["report", "key", "run_before", "run_after", "date_before", "date_after", "before", "after", "ratio",
            "cause"]
    if hist.empty:
        return pd.DataFrame(columns=cols)
    # consecutive runs of one report × key: the store is in run order, a stable sort keeps it within each key
    h = hist.sort_values(["report", "key"], kind="stable").reset_index(drop=True)
    prev = h.shift(1)
    same = (h["report"] == prev["report"]) & (h["key"] == prev["key"])
    va, vb = prev["value"].to_numpy(float), h["value"].to_numpy(float)
    finite = np.isfinite(va) & np.isfinite(vb)
    with np.errstate(invalid="ignore"):
        close = np.abs(vb - va) <= rel_tol * np.maximum(np.abs(va), np.abs(vb))  # math.isclose, abs_tol=0
        ratio = np.where(finite & (va != 0), vb / np.where(va != 0, va, 1.0), math.nan)
    moved = same.to_numpy() & np.where(finite, ~close, (h["value_text"] != prev["value_text"]).to_numpy())
    a, b = prev[moved], h[moved]
    inputs = (a["inputs_hash"].astype(str) != b["inputs_hash"].astype(str)).to_numpy()
    code = (a["code_version"].astype(str) != b["code_version"].astype(str)).to_numpy()
    cause = np.select([inputs & code, inputs, code], ["inputs and code", "inputs", "code"], "neither")
    out = pd.DataFrame({"report": b["report"].to_numpy(), "key": b["key"].to_numpy(),
                        "run_before": a["run_id"].to_numpy(), "run_after": b["run_id"].to_numpy(),
                        "date_before": a["run_date"].to_numpy(), "date_after": b["run_date"].to_numpy(),
                        "before": va[moved], "after": vb[moved], "ratio": ratio[moved], "cause": cause})
    return out[cols].reset_index(drop=True)


def runs(hist: pd.DataFrame) -> pd.DataFrame:
    """One row per run: date, code version, commit, the reports it executed (each has its own inputs hash) and how
    many numbers it recorded."""
    cols = ["run_id", "run_date", "code_version", "commit"]
    if hist.empty:
        return pd.DataFrame(columns=cols + ["n_reports", "n_numbers"])
    out = hist.groupby(cols, sort=False).agg(n_reports=("report", "nunique"), n_numbers=("key", "size"))
    return out.reset_index().sort_values(["run_date", "run_id"]).reset_index(drop=True)


def conflicts(points: pd.DataFrame) -> pd.DataFrame:
    """Dated records flagged ``conflicting-duplicate`` (two files, one point, different numbers), one row each with
    ``day``, ``source`` (file:line) and its speeds: history compares none of them (they are in :data:`BAD_FLAGS`)
    and says so, rather than keep whichever file sorts first."""
    cols = ["model", "hardware", "concurrency", "day", "source", "tok_s_per_user", "tok_s_per_gpu"]
    if points.empty or "flags" not in points:
        return pd.DataFrame(columns=cols)
    pts = points[has_flag(points, "conflicting-duplicate").to_numpy()]
    pts = pts.astype({c: object for c in pts.columns if pd.api.types.is_string_dtype(pts[c])})
    source = [f"{f}" + ("" if pd.isna(x) else f":{int(x)}") for f, x in zip(pts["source_file"], pts["source_line"])]
    pts = pts.assign(day=pts["date"].map(day), tok_s_per_gpu=frontier.per_gpu(pts, denominator="all"),
                     source=source)
    return pts[pts["day"].notna()][cols].sort_values(["model", "hardware", "day", "concurrency", "source"],
                                                      kind="stable").reset_index(drop=True)
