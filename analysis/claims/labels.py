"""Short labels and number formats the claim modules share (precision names, lengths, percentages)."""

from __future__ import annotations

import math

import pandas as pd

from analysis import roofline
from analysis.text import fixed, num, pct, whole


def precision_label(precision: str) -> str:
    """"FP8", or for a per-component recipe "FP4 (attention bf16, router bf16)"."""
    if "," not in str(precision):
        return str(precision).upper()
    label = roofline.parse_precision(precision).label
    return label.replace(label.split()[0], label.split()[0].upper(), 1)


def num_text(v: float) -> str:
    return num(v)


def share(f: float) -> str:
    return pct(f) if f >= 0.01 else pct(f, 2)


def fmt_num(x, digits=0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return fixed(x, digits)


def lengths_text(isl, osl) -> str:
    """``ISL 1,024 / OSL 8,192`` (``ISL/OSL n/a`` when the point has none)."""
    if isl is None or osl is None or pd.isna(isl) or pd.isna(osl):
        return "ISL/OSL n/a"
    return f"ISL {whole(isl)} / OSL {whole(osl)}"



# How a point's per-user speed was read, as the card names it (schema.TOK_S_PER_USER_DEFS has the long meanings).
PER_USER_DEFS = {"1000/tpot_ms_p50": "1000 / median TPOT", "1000/tpot_ms_mean": "1000 / mean TPOT",
                 "1000/step_ms": "1000 / step time", "output/concurrency": "output tok/s / concurrency",
                 "osl/e2e": "OSL / end-to-end latency", "tool-per-user": "the tool's own per-user figure"}


SNAPSHOT_CAVEAT = ("the InferenceX snapshot is down-sampled (a few points per curve), so a value between two "
                   "measured frontier points is a log-log interpolation across the gap, not a measurement")
