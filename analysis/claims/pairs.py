"""A/B pairs for a claim's precision question: FP4 against FP8 only where everything else is equal.

A *clean* pair holds model, hardware, input/output lengths, speculative decoding (and its drafted tokens per step,
where both sides' are known), framework and disaggregation equal, its two points at the same concurrency and
measured within :data:`DATE_WINDOW_DAYS` of each other, and differs only in precision; its ratio is one side's
per-user speed over the other's at the lowest concurrency both measured (their single-user end at equal
concurrency). Where
the fastest points of the two precisions differ in any of those conditions the pair is *confounded*: it is listed
apart with its confounders and never headlines. Each pair also carries the roofline's ratio for the same two
points (batch-1 bound of each on its own GPUs), so a measured ratio beyond it can be pointed out.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis import specs
from analysis.claims.evidence import evidence_object, own_sol
from analysis.pairing import DATE_WINDOW_DAYS as DATE_WINDOW_DAYS  # re-exported: the cards quote it
from analysis.pairing import unmatched as _unmatched
from analysis.specdecode import tau_for
from analysis.text import whole

HELD_EQUAL = {"spec_decode": "speculative decoding", "framework": "framework", "disagg": "disaggregation"}
PAIR_KEY = ["model_table", "hardware", "isl", "osl"]


def _cell(row) -> tuple:
    return tuple("n/a" if pd.isna(row.get(c)) else str(row.get(c)) for c in HELD_EQUAL)


def _pair(fa, fb, confounders: list[str]) -> dict:
    # The roofline's ratio for the same two configurations on one GPU: the bytes-per-weight ratio, nothing else.
    one = {"n_gpus": 1, "disagg": False, "n_decode_gpus": math.nan, "n_workers": math.nan}
    sol_a, sol_b = own_sol({**fa, **one})[0], own_sol({**fb, **one})[0]
    roof = sol_a / sol_b if sol_a > 0 and sol_b > 0 else math.nan
    ratio = float(fa["tok_s_per_user"]) / float(fb["tok_s_per_user"])
    return {"a": evidence_object(fa), "b": evidence_object(fb), "ratio": ratio, "confounders": confounders,
            "roofline_ratio": None if math.isnan(roof) else roof,
            "above_roofline": bool(not math.isnan(roof) and ratio > roof * 1.001)}


def precision_pairs(points: pd.DataFrame, *, low: str = "fp4", high: str = "fp8") -> tuple[list[dict], list[dict]]:
    """(clean pairs, confounded pairs) of ``low`` against ``high`` precision among ``points``.

    Clean: one pair per model × hardware × ISL/OSL × (speculative decoding, framework, disaggregation) cell that
    has both precisions, read at the lowest concurrency both measured and within :data:`DATE_WINDOW_DAYS`; a cell
    whose sides share no concurrency, or ran months apart, is confounded. Confounded also: per model × hardware ×
    ISL/OSL, the fastest point of each precision when the two sit in different cells, with the conditions that
    differ.
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
            cells.setdefault(_cell(r), {}).setdefault(r["precision"], []).append(r)
        for cell in sorted(cells):
            sides = cells[cell]
            if low in sides and high in sides:
                a, b = _at_common_concurrency(sides[low], sides[high])
                unmatched = _unmatched(a, b) + _drafts_differ(a, b)
                (confounded if unmatched else clean).append(_pair(a, b, unmatched))
        fast = {p: max((r for r in rows if r["precision"] == p), key=lambda r: r["tok_s_per_user"], default=None)
                for p in (low, high)}
        if fast[low] is not None and fast[high] is not None and _cell(fast[low]) != _cell(fast[high]):
            diff = [label for col, label in HELD_EQUAL.items()
                    if _cell(fast[low])[list(HELD_EQUAL).index(col)] != _cell(fast[high])[list(HELD_EQUAL).index(col)]]
            confounded.append(_pair(fast[low], fast[high], diff))
    return clean, confounded


def _drafts_differ(a: dict, b: dict) -> list[str]:
    """The drafted tokens per step where both sides' are known and differ (their records, else the launch recipe
    their benchmark ran, :func:`analysis.specdecode.tau_for`): one method at two draft counts verifies and commits
    different tokens per step, so the pair measures the drafts with the precision (InferenceX's B200 TensorRT-LLM
    MTP recipes draft 1 with attention data-parallel and 3 without)."""
    da, db = tau_for(a).draft_tokens, tau_for(b).draft_tokens
    if da is None or db is None or da == db:
        return []
    return [f"drafted tokens per step ({whole(da)} against {whole(db)})"]


def _at_common_concurrency(low_rows: list[dict], high_rows: list[dict]) -> tuple[dict, dict]:
    """The two points a clean pair compares: each side's fastest per-user point at the lowest concurrency both
    sides measured; the fastest point of each side when they share none (then ``_unmatched`` names it)."""
    conc = lambda rows: {float(r["concurrency"]) for r in rows if pd.notna(r.get("concurrency"))}  # noqa: E731
    common = conc(low_rows) & conc(high_rows)
    if common:
        c = min(common)
        low_rows = [r for r in low_rows if pd.notna(r.get("concurrency")) and float(r["concurrency"]) == c]
        high_rows = [r for r in high_rows if pd.notna(r.get("concurrency")) and float(r["concurrency"]) == c]
    best = lambda rows: max(rows, key=lambda r: r["tok_s_per_user"])  # noqa: E731
    return best(low_rows), best(high_rows)


def pairs_summary(clean: list[dict]) -> dict:
    """Median and range of the clean ratios, and how many exceed their roofline ratio."""
    if not clean:
        return {"n": 0, "median": None, "low": None, "high": None, "above_roofline": 0}
    r = pd.Series([p["ratio"] for p in clean])
    return {"n": len(clean), "median": float(r.median()), "low": float(r.min()), "high": float(r.max()),
            "above_roofline": sum(p["above_roofline"] for p in clean)}
