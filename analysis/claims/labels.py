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


EXPERTS = {"routed_experts", "shared_experts"}
MLPS = EXPERTS | {"dense_ffn"}
LABEL_SKIPS = ("embedding", "router", "lm_head", "other")  # small or unpriced parts a label need not name


def recipe_label(asked: str, recipe_text: str, model=None, attention_basis: str = "") -> str:
    """A precision label that says when the weights at that label are a mixed recipe: ``FP4 experts (attention
    FP8)`` for DeepSeek-V4-Flash's FP4 checkpoint (FP4 experts, FP8 attention, BF16 router and head), where ``FP4``
    alone reads as FP4 weights throughout; ``FP4 MLPs (attention priced as FP8)`` where the recipe table's attention
    row is a byte-cost stand-in (``attention_basis`` not ``published``/``read``). ``asked`` alone, upper-cased, where
    the recipe is that precision on every weight a label names (or cannot be read)."""
    asked = str(asked)
    try:
        parts = roofline.parse_precision(recipe_text, model=model).parts
    except (KeyError, ValueError):
        return asked.upper()
    named = {c: p for c, p in parts.items() if c not in LABEL_SKIPS}
    at = [c for c, p in named.items() if p == asked]
    if not at or all(p == asked for p in named.values()):
        return asked.upper()
    names = ("experts" if set(at) == EXPERTS else "MLPs" if set(at) == MLPS else
             ", ".join(c.replace("_", " ") for c in at))
    att = parts.get("attention")
    priced = " priced as" if attention_basis and attention_basis not in ("published", "read") else ""
    return f"{asked.upper()} {names}" + (f" (attention{priced} {att.upper()})" if att and att != asked else "")


def sol_precision(row) -> str:
    """The SOL row's precision as its ``precision_label`` column says it (a mixed recipe named), else the label."""
    label = row.get("precision_label") if hasattr(row, "get") else None
    return str(label) if isinstance(label, str) and label else precision_label(row["precision"])


def precision_word(precision) -> str:
    """``FP8`` for a precision label, ``precision not stated`` for an unknown or missing one (never ``UNKNOWN``)."""
    text = "" if precision is None else str(precision)
    return "precision not stated" if text.lower() in ("unknown", "nan", "none", "") else text.upper()


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


def lengths_label(isl, osl, workload=None) -> str:
    """``ISL 1,024 / OSL 1,024``, or the workload where a point has no fixed lengths (``agentx workload``), or caps
    where its lengths are random up to them (``ISL ≤ 8,192 / OSL ≤ 1,024 (random-capped)``): one wording for every
    table and sentence of a card."""
    if (isl is None or pd.isna(isl)) and workload and str(workload) not in ("unknown", "nan", "None"):
        return f"{workload} workload (no fixed ISL/OSL)"
    if str(workload) == "random-capped":
        return lengths_text(isl, osl).replace("ISL ", "ISL ≤ ").replace("OSL ", "OSL ≤ ") + " (random-capped)"
    return lengths_text(isl, osl)



# How a point's per-user speed was read, as the card names it (schema.TOK_S_PER_USER_DEFS has the long meanings).
PER_USER_DEFS = {"1000/tpot_ms_p50": "1000 / median TPOT", "1000/tpot_ms_mean": "1000 / mean TPOT",
                 "1000/step_ms": "1000 / step time", "output/concurrency": "output tok/s / concurrency",
                 "osl/e2e": "OSL / end-to-end latency", "tool-per-user": "the tool's own per-user figure"}


SNAPSHOT_CAVEAT = ("the InferenceX snapshot is down-sampled (a few points per curve), so a value between two "
                   "measured frontier points is a log-log interpolation across the gap, not a measurement")
