"""A/B pairs for a claim's precision question: FP4 against FP8 only where everything else is equal.

A *clean* pair holds model, hardware, input/output lengths, speculative decoding, framework and disaggregation
equal and differs only in precision; its ratio is the fastest per-user point of one side over the other's. Where
the fastest points of the two precisions differ in any of those conditions the pair is *confounded*: it is listed
apart with its confounders and never headlines. Each pair also carries the roofline's ratio for the same two
points (batch-1 bound of each on its own GPUs), so a measured ratio beyond it can be pointed out.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis import specs
from analysis.claims.evidence import evidence_object, own_sol

HELD_EQUAL = {"spec_decode": "speculative decoding", "framework": "framework", "disagg": "disaggregation"}
PAIR_KEY = ["model_table", "hardware", "isl", "osl"]


def _cell(row) -> tuple:
    return tuple("n/a" if pd.isna(row.get(c)) else str(row.get(c)) for c in HELD_EQUAL)


def _pair(fa, fb, confounders: list[str]) -> dict:
    # The roofline's ratio for the same two configurations on one GPU: the bytes-per-weight ratio, nothing else.
    sol_a, sol_b = own_sol({**fa, "n_gpus": 1})[0], own_sol({**fb, "n_gpus": 1})[0]
    roof = sol_a / sol_b if sol_a > 0 and sol_b > 0 else math.nan
    ratio = float(fa["tok_s_per_user"]) / float(fb["tok_s_per_user"])
    return {"a": evidence_object(fa), "b": evidence_object(fb), "ratio": ratio, "confounders": confounders,
            "roofline_ratio": None if math.isnan(roof) else roof,
            "above_roofline": bool(not math.isnan(roof) and ratio > roof * 1.001)}


def precision_pairs(points: pd.DataFrame, *, low: str = "fp4", high: str = "fp8") -> tuple[list[dict], list[dict]]:
    """(clean pairs, confounded pairs) of ``low`` against ``high`` precision among ``points``.

    Clean: one pair per model × hardware × ISL/OSL × (speculative decoding, framework, disaggregation) cell that
    has both precisions. Confounded: per model × hardware × ISL/OSL, the fastest point of each precision when the
    two sit in different cells, with the conditions that differ.
    """
    if points is None or points.empty or "precision" not in points:
        return [], []
    pts = points[points["precision"].isin([low, high]) & points["tok_s_per_user"].notna()].copy()
    if pts.empty:
        return [], []
    pts["model_table"] = pts["model"].map({m: specs.match_model_name(m) or m for m in pts["model"].dropna().unique()})
    clean, confounded = [], []
    for _, g in pts.groupby(PAIR_KEY, dropna=False, sort=True):
        rows = g.to_dict("records")
        cells: dict = {}
        for r in rows:
            side = cells.setdefault(_cell(r), {}).setdefault(r["precision"], r)
            if r["tok_s_per_user"] > side["tok_s_per_user"]:
                cells[_cell(r)][r["precision"]] = r
        for cell in sorted(cells):
            sides = cells[cell]
            if low in sides and high in sides:
                clean.append(_pair(sides[low], sides[high], []))
        fast = {p: max((r for r in rows if r["precision"] == p), key=lambda r: r["tok_s_per_user"], default=None)
                for p in (low, high)}
        if fast[low] is not None and fast[high] is not None and _cell(fast[low]) != _cell(fast[high]):
            diff = [label for col, label in HELD_EQUAL.items()
                    if _cell(fast[low])[list(HELD_EQUAL).index(col)] != _cell(fast[high])[list(HELD_EQUAL).index(col)]]
            confounded.append(_pair(fast[low], fast[high], diff))
    return clean, confounded


def pairs_summary(clean: list[dict]) -> dict:
    """Median and range of the clean ratios, and how many exceed their roofline ratio."""
    if not clean:
        return {"n": 0, "median": None, "low": None, "high": None, "above_roofline": 0}
    r = pd.Series([p["ratio"] for p in clean])
    return {"n": len(clean), "median": float(r.median()), "low": float(r.min()), "high": float(r.max()),
            "above_roofline": sum(p["above_roofline"] for p in clean)}
