"""Matched comparisons that separate what precision and interconnect scope contribute to a headline number.

Precision: pairs of frontiers that differ only in precision (same model, hardware, framework, scope, lengths and
speculative decoding) are compared at equal interactivity — the FP4/FP8 ratio of tok/s/GPU across the tok/s/user
range both measured, at its fastest per-user end, at its capacity end and its spread in between (also restricted to
levels where both frontiers have measured points close by, since the snapshot's frontiers have wide gaps) — and
everything else that still differs between the two sides (parallelism, GPU count, date, container image, ...) is
listed as a confounder. Step-timing sweeps give a cleaner pair: the same batch and context run at two precisions.
Scope: frontiers of one GPU family at different scopes (one node, an NVL72 rack, a multi-node deployment)
compared at equal interactivity as node ÷ larger deployment tok/s/GPU, "not measured" where the data has nothing;
each reading lists what else differs between the frontier points it is read from (framework, disaggregation, EP
width, speculative decoding), and only a reading with none of these is clean.
Roofline: the weight-bytes ratio fp8 ÷ fp4 (NVFP4 on NVIDIA, MXFP4 on AMD) is the most fewer bytes can give a
memory-bound decode step; a measured ratio above it needs another cause, and tables carry it so pages can say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from analysis import frontier as fr
from analysis import pairing, roofline, specs, uncertainty
from analysis.text import plain, span, whole

PRECISION_MATCH = ["model", "hardware", "framework", "scope", "isl", "osl", "spec_decode"]
# The headline view: every framework and speculative-decoding setting of a hardware × scope pooled into one
# envelope per precision. Framework and spec decoding then become confounders.
ENVELOPE_MATCH = ["model", "hardware", "scope", "isl", "osl"]
CONFOUNDERS = {
    "framework": "framework", "spec_decode": "spec decoding", "disagg": "disaggregated", "tp": "tp", "ep": "ep",
    "dp": "dp", "n_gpus": "GPUs", "n_decode_gpus": "decode GPUs", "draft_tokens": "drafts per step", "date": "date",
    "tool_version": "image",
}
STEP_MATCH = ["model", "hardware", "framework", "batch_size", "context_len"]
STEP_FORMAT = "h200-steps-jsonl"  # the measured decode-step sweep compared at two precisions
# A matched pair is clean when these are all that differ between its two sides.
CLEAN_DIFFERENCES = frozenset({"date", "image"})
# What a scope reading must hold equal to be clean (the GPU count and the scope itself differ by design).
SCOPE_CONFOUNDERS = {"framework": "framework", "disagg": "disaggregation", "ep": "EP width",
                     "spec_decode": "spec decoding"}
# FP4 formats by vendor: NVIDIA's NVFP4 (4.5 bits per weight with scales), AMD's MXFP4 (4.25).
FP4_FORMAT = {"AMD": "mxfp4"}

# Hardware that shares one GPU die across packaging and scale-up domain (GB200 = Grace + two B200-class GPUs in
# an NVL72 rack). Names not listed are their own family.
GPU_FAMILY = {
    "B200": "B200", "GB200 NVL72": "B200", "B300": "B300", "GB300 NVL72": "B300",
    "H100 SXM": "H100", "H200 SXM": "H200", "GH200": "H200",
}
SCOPE_ORDER = ["single-gpu", "node", "rack", "multi-node"]


# --- precision ---------------------------------------------------------------------------------------
def points_used(front: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    """Frontier points that the interpolated values on [lo, hi] tok/s/user come from (inside plus neighbours)."""
    f = front.sort_values("tok_s_per_user")
    u = f["tok_s_per_user"].to_numpy(float)
    if not (np.isfinite(lo) and np.isfinite(hi)) or len(u) == 0:
        return f.iloc[0:0]
    inside = (u >= lo) & (u <= hi)
    below = np.flatnonzero(u < lo)
    above = np.flatnonzero(u > hi)
    if len(below) and not (u == lo).any():
        inside[below[-1]] = True
    if len(above) and not (u == hi).any():
        inside[above[0]] = True
    return f[inside]


def confounders(side_a: pd.DataFrame, side_b: pd.DataFrame, *, columns: dict = CONFOUNDERS
                ) -> tuple[list[str], str]:
    """Fields whose values differ between two sets of points: names, and 'field a-values vs b-values' text."""
    names, details = [], []
    for col, label in columns.items():
        if col not in side_a.columns or col not in side_b.columns:
            continue
        a = sorted({plain(v) for v in side_a[col]})
        b = sorted({plain(v) for v in side_b[col]})
        if a != b:
            names.append(label)
            details.append(f"{label} {','.join(a)} vs {','.join(b)}")
    return names, "; ".join(details)


def compare_frontiers(front_a: pd.DataFrame, front_b: pd.DataFrame, *, targets: Iterable[float] = (),
                      n_levels: int = 25, wide_gap: float = fr.WIDE_GAP) -> dict:
    """A/B tok/s/GPU at equal tok/s/user over the range both measured: ends, spread across levels, targets.

    ``widest_gap`` is the largest tok/s/user ratio between the neighbouring frontier points any level is read
    between (either side); ``ratio_min_close``/``ratio_max_close`` keep only levels where both sides' neighbours
    are at most ``wide_gap``× apart, and ``n_levels_close`` counts them.
    """
    lo, hi = fr.overlap(front_a, front_b)
    levels = fr.levels_in(lo, hi, n=n_levels)
    ratios = fr.ratio_at(front_a, front_b, levels) if len(levels) else np.array([])
    if len(levels):
        read_a, read_b = fr.capacity_readings(front_a, levels), fr.capacity_readings(front_b, levels)
        gaps = np.fmax(read_a["gap"].to_numpy(float), read_b["gap"].to_numpy(float))
        readings = ratio_readings(read_a, read_b)
        n_known = (np.isfinite(read_a["n_requests"].to_numpy(float)), np.isfinite(read_b["n_requests"].to_numpy(float)))
    else:
        gaps, readings = np.array([]), []
    close = ratios[gaps <= wide_gap] if len(ratios) else ratios
    out = {
        "overlap_tok_s_per_user_lo": lo, "overlap_tok_s_per_user_hi": hi,
        "ratio_fastest_end": ratios[-1] if len(ratios) else np.nan,
        "ratio_capacity_end": ratios[0] if len(ratios) else np.nan,
        "ratio_min": np.min(ratios) if len(ratios) else np.nan,
        "ratio_median": np.median(ratios) if len(ratios) else np.nan,
        "ratio_max": np.max(ratios) if len(ratios) else np.nan,
        "n_levels": len(levels),
        "widest_gap": np.max(gaps) if len(gaps) else np.nan,
        "ratio_min_close": np.min(close) if len(close) else np.nan,
        "ratio_max_close": np.max(close) if len(close) else np.nan,
        "n_levels_close": len(close),
        "n_levels_within_noise": sum(r.verdict == "within-noise" for r in readings),
        "n_levels_no_interval": sum(r.verdict == "unknown" for r in readings),
    }
    if len(ratios):  # each summary ratio is one level's: that level's interval is the summary's
        order = np.argsort(ratios, kind="stable")
        at = {"fastest_end": len(ratios) - 1, "capacity_end": 0, "min": int(order[0]),
              "median": int(order[len(order) // 2]), "max": int(order[-1])}
        for name, i in at.items():
            out.update(ratio_interval_columns(f"ratio_{name}", readings[i], n_known=(n_known[0][i], n_known[1][i])))
    else:
        for name in RATIO_STATS:
            out.update(ratio_interval_columns(f"ratio_{name}", None))
    targets = list(targets)
    if targets:
        t_a, t_b = fr.capacity_readings(front_a, targets), fr.capacity_readings(front_b, targets)
        at_t = ratio_readings(t_a, t_b)
        n_t = list(zip(np.isfinite(t_a["n_requests"].to_numpy(float)), np.isfinite(t_b["n_requests"].to_numpy(float))))
    for i, (t, r) in enumerate(zip(targets, fr.ratio_at(front_a, front_b, targets))):
        out[f"ratio_at_{plain(t)}"] = r
        out.update(ratio_interval_columns(f"ratio_at_{plain(t)}", at_t[i] if np.isfinite(r) else None, n_known=n_t[i]))
    return out


# The ratios compare_frontiers summarises, each read at one level and so carrying that level's interval.
RATIO_STATS = ("fastest_end", "capacity_end", "min", "median", "max")
# What a missing interval's side is called: the ratio is low ÷ high, so the numerator is the low precision's.
MISSING_SIDE = {"numerator": "low", "denominator": "high", "both": "both", "": ""}


def ratio_readings(read_a: pd.DataFrame, read_b: pd.DataFrame) -> list:
    """One :class:`analysis.uncertainty.RatioReading` per row of two :func:`analysis.frontier.capacity_readings`
    tables (same levels): A ÷ B tok/s/GPU with the interval of the two readings' intervals."""
    return uncertainty.compare_arrays(read_a["tok_s_per_gpu"], read_a["gpu_lo"], read_a["gpu_hi"],
                                      read_b["tok_s_per_gpu"], read_b["gpu_lo"], read_b["gpu_hi"])


def ratio_interval_columns(prefix: str, reading, *, n_known: tuple = (True, True)) -> dict:
    """``<prefix>_lo``, ``_hi``, ``_verdict`` (``higher``, ``lower``, ``within-noise``, ``unknown``), ``_missing``
    (which side has no interval: ``low``, ``high``, ``both`` or '') and ``_missing_why`` (``n unknown``: the side's
    points record no request count; ``no spread``: a count but no percentiles to read a spread from); all unknown
    when ``reading`` is None (no ratio read). ``n_known``: whether each side's request count is known."""
    if reading is None:
        return {f"{prefix}_lo": np.nan, f"{prefix}_hi": np.nan, f"{prefix}_verdict": "unknown",
                f"{prefix}_missing": "", f"{prefix}_missing_why": ""}
    side = MISSING_SIDE[reading.missing]
    sides = {"low": [n_known[0]], "high": [n_known[1]], "both": list(n_known)}.get(side, [])
    why = "" if not side else "n unknown" if not all(bool(k) for k in sides) else "no spread"
    return {f"{prefix}_lo": reading.lo, f"{prefix}_hi": reading.hi, f"{prefix}_verdict": reading.verdict,
            f"{prefix}_missing": side, f"{prefix}_missing_why": why}


def precision_pairs(points: pd.DataFrame, *, low: str = "fp4", high: str = "fp8",
                    match: Sequence[str] = PRECISION_MATCH, targets: Iterable[float] = (50, 100, 200),
                    denominator: str = "all", n_levels: int = 25) -> pd.DataFrame:
    """Every group of ``match`` measured at both precisions: ``low``/``high`` tok/s/GPU at equal tok/s/user.

    Each side is the Pareto envelope of its points. ``confounders`` lists what else differs between the frontier
    points the ratios come from; ``note`` says why a ratio is missing.
    """
    match = list(match)
    targets = list(targets)
    points = with_draft_tokens(points)
    if "gpu_lo" not in points.columns:  # every ratio carries its interval: the points' own must ride along
        points = fr.with_intervals(points, denominator=denominator)
    fronts = fr.frontier(points, by=match + ["precision"], denominator=denominator)
    rows = []
    for key, group in fronts.groupby(match, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        a = group[group["precision"] == low]
        b = group[group["precision"] == high]
        if a.empty or b.empty:
            continue
        row = dict(zip(match, key))
        row.update({"low": low, "high": high, "gpu_denominator": denominator,
                    f"n_points_{low}": int(a["n_points"].iloc[0]), f"n_points_{high}": int(b["n_points"].iloc[0]),
                    f"tok_s_per_user_range_{low}": span(a["tok_s_per_user"].min(), a["tok_s_per_user"].max()),
                    f"tok_s_per_user_range_{high}": span(b["tok_s_per_user"].min(), b["tok_s_per_user"].max())})
        row.update(compare_frontiers(a, b, targets=targets, n_levels=n_levels))
        lo, hi = row["overlap_tok_s_per_user_lo"], row["overlap_tok_s_per_user_hi"]
        if np.isfinite(lo):
            used_a, used_b = points_used(a, lo, hi), points_used(b, lo, hi)
            note = "single level (the ranges touch at one point)" if lo == hi else ""
        else:
            used_a, used_b = a, b
            note = (f"no overlapping tok/s/user range: {low} {row[f'tok_s_per_user_range_{low}']}, "
                    f"{high} {row[f'tok_s_per_user_range_{high}']}")
        names, detail = confounders(used_a, used_b)
        # the measured frontier points each side's levels are read between (inside the shared range and the
        # neighbours just outside it): 25 levels over a narrow range may rest on two or three points a side
        row[f"n_frontier_points_used_{low}"], row[f"n_frontier_points_used_{high}"] = len(used_a), len(used_b)
        # Date and image may differ in a clean pair only within the shared rule (one image, or dates in a window).
        apart = pairing.apart_in_time(used_a.get("date", ()), used_b.get("date", ()),
                                      used_a.get("tool_version", ()), used_b.get("tool_version", ()))
        row.update({"confounders": ", ".join(names) if names else "none", "confounder_detail": detail,
                    "apart_in_time": apart, "note": note})
        for t in targets:  # each reading's own speculative decoding: the pooled sets can match while a reading's differ
            row[f"spec_decode_at_{plain(t)}"] = (
                f"{_setting(points_used(a, t, t)['spec_decode'], 'spec_decode')} vs "
                f"{_setting(points_used(b, t, t)['spec_decode'], 'spec_decode')}"
                if np.isfinite(row.get(f"ratio_at_{plain(t)}", np.nan)) and "spec_decode" in a and "spec_decode" in b
                else "")
        rows.append(row)
    return pd.DataFrame(rows)


def fp4_bytes_ratio(hardware: str, *, low: str = "fp4", high: str = "fp8") -> float:
    """The roofline's weight-bytes ratio ``high`` ÷ ``low`` on ``hardware`` (fp4 read as the vendor's format:
    NVFP4 = 4.5 bits per weight with its scales, MXFP4 on AMD = 4.25): the most fewer weight bytes can speed up a
    memory-bound decode step. Unknown hardware is read as NVIDIA."""
    try:
        vendor = specs.hardware(str(hardware)).vendor
    except (KeyError, ValueError, LookupError):
        vendor = ""

    def fmt(precision: str) -> str:
        return FP4_FORMAT.get(vendor, "nvfp4") if precision == "fp4" else precision

    return roofline.bytes_per_weight(fmt(high)) / roofline.bytes_per_weight(fmt(low))


def math_rate_ratio(hardware: str, *, low: str = "fp4", high: str = "fp8") -> float:
    """Dense tensor-core rate at ``low`` ÷ at ``high`` on ``hardware`` (the most faster math can speed up a
    compute-bound step); NaN where the spec table has no such rate or no such hardware."""
    try:
        rates = specs.hardware(str(hardware)).dense_tflops
    except (KeyError, ValueError, LookupError):
        return np.nan
    a, b = rates.get(low, np.nan), rates.get(high, np.nan)
    return a / b if np.isfinite(a) and np.isfinite(b) and b > 0 else np.nan


def with_bytes_ratio(pairs: pd.DataFrame, *, low: str = "fp4", high: str = "fp8") -> pd.DataFrame:
    """``pairs`` plus the roofline's ratios per hardware: ``bytes_ratio`` (memory-bound) and ``math_ratio``
    (compute-bound); ``beyond_bytes`` when the largest measured ratio is above the bytes ratio and
    ``beyond_roofline`` when it is above both (nothing in the roofline explains it)."""
    out = pairs.copy()
    if out.empty:
        return out.assign(bytes_ratio=pd.Series(dtype=float), math_ratio=pd.Series(dtype=float),
                          beyond_bytes=pd.Series(dtype=bool), beyond_roofline=pd.Series(dtype=bool))
    out["bytes_ratio"] = [fp4_bytes_ratio(h, low=low, high=high) for h in out["hardware"]]
    out["math_ratio"] = [math_rate_ratio(h, low=low, high=high) for h in out["hardware"]]
    measured = out["ratio_max"].to_numpy(float)
    out["beyond_bytes"] = measured > out["bytes_ratio"].to_numpy(float)
    out["beyond_roofline"] = measured > np.fmax(out["bytes_ratio"].to_numpy(float), out["math_ratio"].to_numpy(float))
    return out


def ratio_curves(points: pd.DataFrame, pairs: pd.DataFrame, *, match: Sequence[str] = PRECISION_MATCH,
                 low: str = "fp4", high: str = "fp8", denominator: str = "all", n_levels: int = 25,
                 label_by: Sequence[str] = ("hardware", "framework", "scope", "spec_decode")) -> pd.DataFrame:
    """``low``/``high`` tok/s/GPU across the tok/s/user range both sides of each pair measured (the levels
    ``precision_pairs`` reads): long, one row per pair × level with ``label``, ``tok_s_per_user`` and ``ratio``."""
    rows = []
    for pair, a, b in _pair_fronts(points, pairs, match, low, high, denominator):
        levels = fr.levels_in(*fr.overlap(a, b), n=n_levels)
        if not len(levels):
            continue
        label = pair_label(pair, label_by)
        for u, r in zip(levels, fr.ratio_at(a, b, levels)):
            rows.append({"label": label, "hardware": pair["hardware"], "tok_s_per_user": u, "ratio": r})
    return pd.DataFrame(rows, columns=["label", "hardware", "tok_s_per_user", "ratio"])


def measured_levels(points: pd.DataFrame, pairs: pd.DataFrame, *, match: Sequence[str] = PRECISION_MATCH,
                    low: str = "fp4", high: str = "fp8", denominator: str = "all",
                    label_by: Sequence[str] = ("hardware", "framework", "scope", "spec_decode")) -> pd.DataFrame:
    """The frontier points each pair's ratio curve (:func:`ratio_curves`) is read between: one row per measured
    point of either side inside the range both sides measured (``inside`` True), with ``label``,
    ``tok_s_per_user``, ``ratio`` (at that speed, the other side interpolated) and ``side`` (``low`` or ``high``:
    which precision was measured there), and the nearest point of each side just outside either end of the range,
    which the curve is also read from (``inside`` False, ``ratio`` NaN: the other side was not measured there).
    A curve read between two points per side is four measurements, whatever its levels."""
    rows = []
    for pair, a, b in _pair_fronts(points, pairs, match, low, high, denominator):
        lo, hi = fr.overlap(a, b)
        if not lo == lo:
            continue
        label = pair_label(pair, label_by)
        for side, front in ((low, a), (high, b)):
            speeds = np.unique(front["tok_s_per_user"].to_numpy(float))
            at = speeds[(speeds >= lo) & (speeds <= hi)]
            for u, r in zip(at, fr.ratio_at(a, b, at)):
                rows.append({"label": label, "tok_s_per_user": float(u), "ratio": float(r), "side": side,
                             "inside": True})
            for u in (speeds[speeds < lo][-1:], speeds[speeds > hi][:1]):
                rows += [{"label": label, "tok_s_per_user": float(x), "ratio": np.nan, "side": side, "inside": False}
                         for x in u]
    return pd.DataFrame(rows, columns=["label", "tok_s_per_user", "ratio", "side", "inside"])


def _pair_fronts(points, pairs, match, low, high, denominator):
    """(pair, its ``low`` frontier, its ``high`` frontier) for each row of ``pairs``."""
    match = list(match)
    fronts = fr.frontier(points, by=match + ["precision"], denominator=denominator)
    for _, pair in pairs.iterrows():
        sel = pd.Series(True, index=fronts.index)
        for col in match:
            sel &= fronts[col] == pair[col]
        yield pair, fronts[sel & (fronts["precision"] == low)], fronts[sel & (fronts["precision"] == high)]


# --- step-timing sweeps: the same batch and context at two precisions -------------------------------------
def step_precision_pairs(points: pd.DataFrame, *, low: str = "fp8", high: str = "bf16",
                         match: Sequence[str] = STEP_MATCH, source_format: str | None = STEP_FORMAT
                         ) -> pd.DataFrame:
    """Decode steps measured at both precisions with everything in ``match`` equal; ratio = low/high tok/s.

    With batch and GPU count equal, the tok/s/GPU ratio is the inverse step-time ratio.
    """
    match = list(match)
    data = points[(points["phase"] == "decode") & points["step_ms"].notna()]
    if source_format is not None:
        data = data[data["format"] == source_format]
    data = fr.usable(data)
    cols = match + ["step_ms", "tok_s_per_user", "tok_s_per_gpu"]
    a = data[data["precision"] == low][cols]
    b = data[data["precision"] == high][cols]
    pairs = a.merge(b, on=match, suffixes=(f"_{low}", f"_{high}"))
    pairs["ratio"] = pairs[f"tok_s_per_gpu_{low}"] / pairs[f"tok_s_per_gpu_{high}"]
    pairs["step_ms_extra"] = pairs[f"step_ms_{low}"] - pairs[f"step_ms_{high}"]
    return pairs.sort_values(match, ignore_index=True)


def summarize_step_pairs(pairs: pd.DataFrame, *, by: Sequence[str] = ("model", "framework", "context_len")
                         ) -> pd.DataFrame:
    """Per group: how many batches were matched and the low/high ratio's min, median, max."""
    g = pairs.groupby(list(by), dropna=False)["ratio"]
    out = g.agg(n_batches="size", ratio_min="min", ratio_median="median", ratio_max="max").reset_index()
    batches = pairs.groupby(list(by), dropna=False)["batch_size"].agg(
        batch_min="min", batch_max="max").reset_index()
    return out.merge(batches, on=list(by))


# --- scope --------------------------------------------------------------------------------------------
def gpu_family(hardware: pd.Series) -> pd.Series:
    return hardware.map(lambda h: GPU_FAMILY.get(h, h))


def _setting(values: pd.Series, col: str) -> str:
    if col == "disagg":
        return ", ".join(sorted({"disaggregated" if bool(v) else "aggregated" for v in values.fillna(False)}))
    return ", ".join(sorted({plain(v) for v in values}))


def reading_settings(front: pd.DataFrame, target: float, reading: str, *, columns: dict = SCOPE_CONFOUNDERS
                     ) -> dict:
    """``setup_<col>`` for each of ``columns``: the values of the frontier points a reading at ``target`` comes
    from (the bracketing points; the slowest point for a lower bound; empty when nothing was read)."""
    if reading == "lower bound":
        used = front[front["tok_s_per_user"] == front["tok_s_per_user"].min()]
    elif reading in ("measured", "interpolated", "wide gap"):
        used = points_used(front, target, target)
    else:
        used = front.iloc[0:0]
    return {f"setup_{col}": _setting(used[col], col) if col in used and len(used) else "" for col in columns}


def scope_capacity(points: pd.DataFrame, *, targets: Iterable[float] = (50, 100, 200), denominator: str = "all",
                   by: Sequence[str] = ("model", "isl", "osl")) -> pd.DataFrame:
    """tok/s/GPU at each target for every GPU family × precision × scope class, ``not measured`` where absent.

    One row per family × precision × scope class × hardware × target. Scope classes with no points for a family
    and precision get one row per target with status ``not measured``; a frontier that exists but does not reach
    the target gets ``outside measured range (lo–hi tok/s/user)``, plus the lower bound when the frontier was only
    measured faster than the target (``reading``/``lower_bound_tok_s_per_gpu`` as ``frontier.capacity_readings``).
    """
    targets = list(targets)
    if "gpu_lo" not in points.columns:  # each reading carries its interval, for the scope ratio's
        points = fr.with_intervals(points, denominator=denominator)
    data = points.assign(gpu_family=gpu_family(points["hardware"]))
    keys = list(by) + ["gpu_family", "precision"]
    fronts = fr.frontier(data, by=keys + ["scope", "hardware"], denominator=denominator)
    rows = []
    for key, fam in fronts.groupby(keys, dropna=False, sort=True):
        key = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        for scope in SCOPE_ORDER:
            at_scope = fam[fam["scope"] == scope]
            if at_scope.empty:
                for t in targets:
                    rows.append({**key, "scope": scope, "hardware": "", "n_gpus": "", "target_tok_s_per_user": float(t),
                                 "tok_s_per_gpu": np.nan, "reading": "no data", "lower_bound_tok_s_per_gpu": np.nan,
                                 "gpu_lo": np.nan, "gpu_hi": np.nan, "n_requests": np.nan,
                                 "status": "not measured", "gpu_denominator": denominator,
                                 **{f"setup_{c}": "" for c in SCOPE_CONFOUNDERS}})
                continue
            for hw, front in at_scope.groupby("hardware", sort=True):
                lo, hi = front["tok_s_per_user"].min(), front["tok_s_per_user"].max()
                gpus = span(front["n_gpus"].min(), front["n_gpus"].max())
                for r in fr.capacity_readings(front, targets).itertuples():
                    value = r.tok_s_per_gpu
                    status = "measured" if np.isfinite(value) else f"outside measured range ({span(lo, hi)} tok/s/user)"
                    if r.reading == "lower bound":
                        status += f"; ≥ {whole(r.lower_bound_tok_s_per_gpu)} tok/s/GPU (lower bound)"
                    rows.append({**key, "scope": scope, "hardware": hw, "n_gpus": gpus,
                                 "target_tok_s_per_user": r.target_tok_s_per_user, "tok_s_per_gpu": value,
                                 "reading": r.reading, "lower_bound_tok_s_per_gpu": r.lower_bound_tok_s_per_gpu,
                                 "gpu_lo": r.gpu_lo, "gpu_hi": r.gpu_hi, "n_requests": r.n_requests,
                                 "status": status, "gpu_denominator": denominator,
                                 **reading_settings(front, r.target_tok_s_per_user, r.reading)})
    return pd.DataFrame(rows)


def scope_comparison(capacity: pd.DataFrame, *, reference_scope: str = "node",
                     by: Sequence[str] = ("model", "isl", "osl")) -> pd.DataFrame:
    """Each larger-scope group against the same family's ``reference_scope`` group at equal tok/s/user.

    ``reference_over_scope`` = reference tok/s/GPU ÷ the larger scope's at the same tok/s/user (above 1: the
    reference, e.g. one node, delivers more per GPU), with its interval from the two readings' intervals
    (``reference_over_scope_lo``/``_hi``/``_verdict``/``_missing``/``_missing_why``, :func:`ratio_interval_columns`:
    the numerator side is the reference); ``status`` says ``not measured`` when either side has no value
    at that target. ``n_gpus``/``reference_n_gpus`` give the GPU-count range along each frontier. ``confounders``
    names what else differs between the points the two readings come from (``SCOPE_CONFOUNDERS``; "none" when
    nothing does, empty when not measured), ``confounder_detail`` gives the values, and ``clean`` marks a measured
    reading with no confounder.
    """
    keys = list(by) + ["gpu_family", "precision", "target_tok_s_per_user"]
    rows = []
    for key, grp in capacity.groupby(keys, dropna=False, sort=True):
        key = dict(zip(keys, key))
        refs = grp[grp["scope"] == reference_scope]
        others = grp[(grp["scope"] != reference_scope) & (grp["hardware"] != "")]
        for _, ref in refs.iterrows():
            for _, other in others.iterrows():
                both = np.isfinite(ref["tok_s_per_gpu"]) and np.isfinite(other["tok_s_per_gpu"])
                if both:
                    status = "measured"
                elif ref["hardware"] == "":
                    status = f"not measured ({reference_scope}: no data)"
                elif not np.isfinite(ref["tok_s_per_gpu"]):
                    status = f"not measured ({reference_scope} {ref['status']})"
                else:
                    status = f"not measured ({other['scope']} {other['status']})"
                reading = uncertainty.compare_readings(
                    uncertainty.Interval(ref["tok_s_per_gpu"], ref.get("gpu_lo", np.nan), ref.get("gpu_hi", np.nan)),
                    uncertainty.Interval(other["tok_s_per_gpu"], other.get("gpu_lo", np.nan),
                                         other.get("gpu_hi", np.nan))) if both else None
                n_known = (np.isfinite(float(ref.get("n_requests", np.nan))),
                           np.isfinite(float(other.get("n_requests", np.nan))))
                rows.append({
                    **ratio_interval_columns("reference_over_scope", reading, n_known=n_known),
                    **key, "scope": other["scope"], "hardware": other["hardware"],
                    "tok_s_per_gpu": other["tok_s_per_gpu"],
                    "n_gpus": other["n_gpus"],
                    "reference": f"{ref['hardware'] or key['gpu_family']} {reference_scope}",
                    "reference_n_gpus": ref["n_gpus"],
                    "reference_tok_s_per_gpu": ref["tok_s_per_gpu"],
                    "reference_over_scope": ref["tok_s_per_gpu"] / other["tok_s_per_gpu"] if both else np.nan,
                    "status": status,
                    # how each side served (aggregated or disaggregated): the readings' own settings
                    "reference_setup_disagg": ref.get("setup_disagg", ""), "setup_disagg": other.get("setup_disagg", ""),
                    **_scope_confounders(ref, other, measured=both),
                })
    columns = keys + ["scope", "hardware", "tok_s_per_gpu", "n_gpus", "reference", "reference_n_gpus",
                      "reference_tok_s_per_gpu", "reference_over_scope", "reference_over_scope_lo",
                      "reference_over_scope_hi", "reference_over_scope_verdict", "reference_over_scope_missing",
                      "reference_over_scope_missing_why", "status", "reference_setup_disagg", "setup_disagg",
                      "confounders", "confounder_detail", "clean"]
    return pd.DataFrame(rows, columns=columns)


def _scope_confounders(ref: pd.Series, other: pd.Series, *, measured: bool) -> dict:
    if not measured:
        return {"confounders": "", "confounder_detail": "", "clean": False}
    names, details = [], []
    for col, label in SCOPE_CONFOUNDERS.items():
        a, b = ref.get(f"setup_{col}", ""), other.get(f"setup_{col}", "")
        if a != b:
            names.append(label)
            details.append(f"{label} {a} vs {b}")
    return {"confounders": ", ".join(names) if names else "none", "confounder_detail": "; ".join(details),
            "clean": not names}


def denominator_effect(fronts: pd.DataFrame, *, by: Sequence[str] = ("hardware", "precision", "scope")
                       ) -> pd.DataFrame:
    """How much a decode-only denominator would raise each frontier point's tok/s/GPU: (all GPUs) ÷ (decode GPUs).

    Read per measured point on frontiers built with ``all`` GPUs (1 for non-disaggregated points). Comparing
    two interpolated frontiers instead would mix in which points happen to be on each.
    """
    f = fronts.copy()
    disagg = f["disagg"].fillna(False).astype(bool) & (f["n_decode_gpus"] > 0)
    f["decode_over_all"] = np.where(disagg, f["n_gpus"] / f["n_decode_gpus"], 1.0)
    g = f.groupby(list(by), dropna=False)
    out = g["decode_over_all"].agg(decode_over_all_min="min", decode_over_all_max="max").reset_index()
    out["n_disaggregated"] = g["disagg"].apply(lambda s: int(s.fillna(False).astype(bool).sum())).to_numpy()
    out["n_frontier"] = g.size().to_numpy()
    return out


# --- report helpers (what the precision & scope notebook shows) -------------------------------------------
def with_draft_tokens(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` with each speculating row's ``draft_tokens`` filled from the launch recipe its benchmark ran where
    its record does not say (:func:`analysis.specdecode.drafts_of`, the rule the claim cards read), so that a pair
    whose sides drafted different tokens per step names it as a confounder: one method at two draft counts verifies
    and commits different tokens per step. Only MTP rows are looked up (the only methods the recipe table holds)."""
    from analysis.perfmodel.recipes import MTP_METHODS  # the recipe tables sit above this module
    from analysis.specdecode import drafts_of

    if points.empty or "spec_method" not in points.columns:
        return points
    own = pd.to_numeric(points["draft_tokens"], errors="coerce") if "draft_tokens" in points.columns \
        else pd.Series(np.nan, index=points.index)
    missing = own.isna() & points["spec_method"].astype(str).str.lower().isin(MTP_METHODS)
    if not missing.any():
        return points
    filled = own.copy()
    filled[missing] = [drafts_of(r)[0] for r in points.loc[missing].to_dict("records")]
    return points.assign(draft_tokens=filled)


def pair_label(row: pd.Series | dict, columns: Sequence[str]) -> str:
    return fr.group_label(row, columns)


def only_time_differs(matched: pd.DataFrame) -> pd.Series:
    """Matched pairs whose two sides differ in nothing but run date and container image (any spread)."""
    return matched["confounders"].str.split(", ").apply(lambda names: set(names) <= {"none"} | CLEAN_DIFFERENCES)


def clean_pairs(matched: pd.DataFrame) -> pd.DataFrame:
    """Matched pairs with a ratio read at equal tok/s/user whose two sides differ only in run date and container
    image (no parallelism, GPU-count, framework or speculative-decoding confounder), and those only within
    :func:`analysis.pairing.apart_in_time` (one image, or every date within
    :data:`analysis.pairing.DATE_WINDOW_DAYS`): the closest the snapshot gets to changing only the precision."""
    if matched.empty:
        return matched
    has = matched["ratio_median"].notna()
    in_window = (matched["apart_in_time"].fillna("") == "") if "apart_in_time" in matched else True
    return matched[has & only_time_differs(matched) & in_window]


def apart_in_time_pairs(matched: pd.DataFrame) -> pd.DataFrame:
    """Pairs that would be clean but for pooling dates further apart than the window: confounded in time."""
    if matched.empty or "apart_in_time" not in matched:
        return matched.iloc[0:0]
    return matched[matched["ratio_median"].notna() & only_time_differs(matched)
                   & (matched["apart_in_time"].fillna("") != "")]


def held_equal(match: Sequence[str] = PRECISION_MATCH, columns: dict = CONFOUNDERS) -> list[str]:
    """What a clean pair holds equal: the match columns plus every confounder column except date and image."""
    return list(match) + [c for c, label in columns.items() if label not in CLEAN_DIFFERENCES]


def precision_summary(envelope: pd.DataFrame, matched: pd.DataFrame, *, wide_gap: float = fr.WIDE_GAP,
                      low: str = "fp4", high: str = "fp8") -> dict:
    """The numbers the precision page quotes. Clean pairs (the headline): how many, the median and range of their
    medians, every level of them together, and how many go above the roofline's bytes ratio. Envelopes and
    matched pairs (confounded): the full range of their ratios (every level of every shared range), how many dip
    below 1 or go above the bytes ratio, the range at levels read between close points, the widest gap."""
    env = with_bytes_ratio(envelope[envelope["ratio_median"].notna()] if len(envelope) else envelope,
                           low=low, high=high)
    clean = with_bytes_ratio(clean_pairs(matched), low=low, high=high)
    n_env = len(env)
    return {
        "axis": "at equal tok/s/user",
        "date_window_days": pairing.DATE_WINDOW_DAYS,
        "n_apart_in_time": len(apart_in_time_pairs(matched)),
        "n_clean": len(clean),
        "clean_median": clean["ratio_median"].median() if len(clean) else np.nan,
        "clean_min": clean["ratio_median"].min() if len(clean) else np.nan,
        "clean_max": clean["ratio_median"].max() if len(clean) else np.nan,
        "clean_level_min": clean["ratio_min"].min() if len(clean) else np.nan,
        "clean_level_max": clean["ratio_max"].max() if len(clean) else np.nan,
        "n_clean_beyond_bytes": int(clean["beyond_bytes"].sum()) if len(clean) else 0,
        "n_clean_beyond_roofline": int(clean["beyond_roofline"].sum()) if len(clean) else 0,
        "n_clean_median_beyond_bytes": int((clean["ratio_median"] > clean["bytes_ratio"]).sum()) if len(clean) else 0,
        "n_envelopes": n_env,
        "ratio_min": env["ratio_min"].min() if n_env else np.nan,
        "ratio_max": env["ratio_max"].max() if n_env else np.nan,
        "n_below_1": int((env["ratio_min"] < 1).sum()) if n_env else 0,
        "n_beyond_bytes": int(env["beyond_bytes"].sum()) if n_env else 0,
        "n_beyond_roofline": int(env["beyond_roofline"].sum()) if n_env else 0,
        "median_of_medians": env["ratio_median"].median() if n_env else np.nan,
        "median_min": env["ratio_median"].min() if n_env else np.nan,
        "median_max": env["ratio_median"].max() if n_env else np.nan,
        "ratio_min_close": env["ratio_min_close"].min() if n_env else np.nan,
        "ratio_max_close": env["ratio_max_close"].max() if n_env else np.nan,
        "n_wide_gap": int((env["widest_gap"] > wide_gap).sum()) if n_env else 0,
        "widest_gap": env["widest_gap"].max() if n_env else np.nan,
    }


class LeftOut(NamedTuple):
    """A target left out of a bar panel: at ``target`` tok/s/user only ``n_measured`` of ``n_bars`` have a value."""

    target: float
    n_measured: int
    n_bars: int


def plotted_targets(capacity: pd.DataFrame, *, targets: Sequence[float], min_share: float = 0.5
                    ) -> tuple[list[float], list[LeftOut]]:
    """Targets worth a bar panel: those where at least ``min_share`` of the rows have a value. Returns them and
    the targets left out (:func:`analysis.compare_words.left_out_note` says which)."""
    kept, dropped = [], []
    for t in targets:
        at = capacity[capacity["target_tok_s_per_user"] == float(t)]
        share = at["tok_s_per_gpu"].notna().mean() if len(at) else 0.0
        if share >= min_share:
            kept.append(float(t))
        else:
            dropped.append(LeftOut(float(t), int(at["tok_s_per_gpu"].notna().sum()), len(at)))
    return kept, dropped


def drop_unmeasured(bars: pd.DataFrame, *, x: str, targets: Sequence[float]) -> tuple[pd.DataFrame, list[str]]:
    """Rows of ``bars`` whose ``x`` group has a value or a lower bound at one of ``targets`` at least, and the
    groups left out (nothing to draw for them)."""
    if bars.empty:
        return bars, []
    at = bars[bars["target_tok_s_per_user"].isin([float(t) for t in targets])]
    value = at["tok_s_per_gpu"].notna()
    if "lower_bound_tok_s_per_gpu" in at:
        value |= at["lower_bound_tok_s_per_gpu"].notna()
    drawn = set(at.loc[value, x])
    dropped = [g for g in dict.fromkeys(bars[x]) if g not in drawn]
    return bars[bars[x].isin(drawn)], dropped


def setup_tag(row) -> str:
    """A bar's serving setup in a few words, from its reading's ``setup_*`` columns: ``dyn-trt · disagg · mtp``
    (framework, aggregated or disaggregated, speculative decoding where any ran); '' for a bar with no reading."""
    fw = str(row.get("setup_framework") or "")
    if not fw:
        return ""
    disagg = str(row.get("setup_disagg") or "")
    how = "disagg" if disagg == "disaggregated" else "agg" if disagg == "aggregated" else \
        "agg + disagg" if disagg else ""
    spec = str(row.get("setup_spec_decode") or "")
    parts = [fw.replace("dynamo-", "dyn-"), how] + ([spec] if spec and spec != "none" else [])
    return " · ".join(p for p in parts if p)


def scope_bars_table(capacity: pd.DataFrame, *, families: Sequence[str]) -> pd.DataFrame:
    """Rows of ``scope_capacity`` for some families, labelled ``hardware · scope`` and ordered family, scope, each
    with its serving setup's tag (:func:`setup_tag`): the bars differ in it as well as in scope."""
    rows = capacity[capacity["gpu_family"].isin(families) & (capacity["hardware"] != "")].copy()
    rows["where"] = rows["hardware"] + " · " + rows["scope"]
    rows["setup"] = [setup_tag(r) for r in rows.to_dict("records")]
    rows["scope_rank"] = rows["scope"].map({s: i for i, s in enumerate(SCOPE_ORDER)})
    return rows.sort_values(["gpu_family", "scope_rank", "hardware", "precision"], ignore_index=True)
