"""The rule that makes an A/B pair clean in time, shared by the claim cards and the precision page.

Two sides compared for one change (FP4 against FP8) must also be close in software: measured on one container
image, or within :data:`DATE_WINDOW_DAYS` of each other. Sides that pool points months apart may differ in image
and software as much as in the change, so the pair is confounded and says so. Concurrency is the other half of
the rule: a pair is read at equal concurrency, or at equal tok/s/user (the frontier reading), never across both.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from analysis.text import plain, whole

# Two points measured further apart than this may differ in image and software as much as in precision.
DATE_WINDOW_DAYS = 31


def _stamps(dates: Iterable) -> list[pd.Timestamp]:
    out = []
    for d in dates:
        if d is None or (isinstance(d, float) and math.isnan(d)):
            continue
        try:
            t = pd.Timestamp(str(d))
        except (ValueError, TypeError):
            continue
        if not pd.isna(t):
            out.append(t)
    return out


def days_apart(dates_a: Iterable, dates_b: Iterable) -> float:
    """Days between the earliest and latest date of both sides together (NaN when either side has none)."""
    a, b = _stamps(dates_a), _stamps(dates_b)
    if not a or not b:
        return math.nan
    every = a + b
    return float((max(every) - min(every)).days)


def _one_image(images_a: Iterable, images_b: Iterable) -> bool:
    known = {str(v) for v in list(images_a) + list(images_b) if v is not None and not pd.isna(v)}
    known.discard("unknown")
    known.discard("")
    seen = [v for v in list(images_a) + list(images_b) if v is not None and not pd.isna(v)]
    return len(known) == 1 and all(str(v) in known for v in seen)


def apart_in_time(dates_a: Iterable, dates_b: Iterable, images_a: Iterable = (), images_b: Iterable = ()) -> str:
    """Why two sides are not a clean pair in time, "" when they are: every point on one recorded image, or all
    dates of both sides within :data:`DATE_WINDOW_DAYS` (``dates 168 days apart``)."""
    images_a, images_b = list(images_a), list(images_b)
    if (images_a or images_b) and _one_image(images_a, images_b):
        return ""
    days = days_apart(dates_a, dates_b)
    if not math.isnan(days) and days > DATE_WINDOW_DAYS:
        return f"dates {plain(days)} days apart"
    return ""


def unmatched(a: dict, b: dict) -> list[str]:
    """What keeps two single points from being a clean pair: unequal concurrency, dates far apart."""
    out = []
    ca, cb = a.get("concurrency"), b.get("concurrency")
    if pd.notna(ca) and pd.notna(cb) and float(ca) != float(cb):
        out.append(f"concurrency ({whole(float(ca))} against {whole(float(cb))})")
    apart = apart_in_time([a.get("date")], [b.get("date")])
    if apart:
        out.append(apart)
    return out
