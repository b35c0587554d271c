"""A claim's stated conditions: the number restated on each axis, its lengths, its context."""

from __future__ import annotations

import math
import re

import pandas as pd

from analysis.claims.labels import lengths_text
from analysis.claims.registry import STATED, Claim, is_stated

DEFAULT_CONTEXT = 1024

# --- 1. what kind of number ------------------------------------------------------------------------

def restate(claim: Claim) -> pd.DataFrame:
    """The claim on each axis (tok/s/user, tok/s/GPU, tok/s per system) where its stated conditions allow."""
    v, n, b = claim.value, claim.number("n_gpus"), claim.number("batch")
    at_user = claim.number("at_tok_s_per_user")
    rows = []

    def add(axis, value, how):
        rows.append({"axis": axis, "value": value, "how": how})

    if claim.kind == "per-user":
        add("tok/s/user", v, STATED)
        if not math.isnan(b) and not math.isnan(n):
            add("tok/s/GPU", v * b / n, f"computed: {v:,.0f} × batch {b:g} / {n:g} GPUs")
            add("tok/s per system", v * b, f"computed: {v:,.0f} × batch {b:g}")
        else:
            lacking = " and ".join(x for x, y in (("batch", b), ("GPU count", n)) if math.isnan(y))
            add("tok/s/GPU", math.nan, f"not possible: {lacking} not stated")
            add("tok/s per system", v * b if not math.isnan(b) else math.nan,
                f"computed: {v:,.0f} × batch {b:g}" if not math.isnan(b) else "not possible: batch not stated")
    elif claim.kind == "per-GPU":
        add("tok/s/GPU", v, STATED)
        add("tok/s/user", at_user, STATED if not math.isnan(at_user) else "not stated")
        add("tok/s per system", v * n if not math.isnan(n) else math.nan,
            f"computed: {v:,.0f} × {n:g} GPUs" if not math.isnan(n) else "not possible: GPU count not stated")
    elif claim.kind == "per-system":
        add("tok/s per system", v, STATED)
        add("tok/s/GPU", v / n if not math.isnan(n) else math.nan,
            f"computed: {v:,.0f} / {n:g} GPUs" if not math.isnan(n) else "not possible: GPU count not stated")
        per_user = at_user if not math.isnan(at_user) else (v / b if not math.isnan(b) else math.nan)
        add("tok/s/user", per_user, STATED if not math.isnan(at_user) else (
            f"computed: {v:,.0f} / batch {b:g}" if not math.isnan(b) else "not possible: batch not stated"))
    else:
        add(claim.unit, v, STATED)
        add("tok/s/GPU", math.nan, f"not possible: a {claim.kind} is not a throughput")
        add("tok/s/user", at_user, STATED if not math.isnan(at_user) else f"not possible: a {claim.kind}")
    return pd.DataFrame(rows)


def per_user_value(claim: Claim) -> float:
    """The per-user speed the claim states or implies (NaN when it implies none)."""
    r = restate(claim).set_index("axis")
    return float(r.loc["tok/s/user", "value"]) if "tok/s/user" in r.index else math.nan


def stated_lengths(claim: Claim) -> tuple[float, float] | None:
    """(ISL, OSL) in tokens when the claim states them as ``1024/2048``, ``1k/1k`` or ``32K / 8K``; else None."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kK])?\s*/\s*(\d+(?:\.\d+)?)\s*([kK])?", str(claim.isl_osl))
    if not (is_stated(claim.isl_osl) and m):
        return None
    return (float(m.group(1)) * (1024 if m.group(2) else 1), float(m.group(3)) * (1024 if m.group(4) else 1))


def context_for(claim: Claim) -> tuple[int, str]:
    """Mean context during decode: ISL + OSL/2 when lengths are stated as ``1024/2048`` or ``1k/1k``, else 1024."""
    lengths = stated_lengths(claim)
    if lengths:
        isl, osl = lengths
        return int(isl + osl / 2), f"ISL {isl:,.0f} + OSL/2 {osl / 2:,.0f} (from the stated lengths)"
    return DEFAULT_CONTEXT, f"{DEFAULT_CONTEXT} tokens assumed (lengths not stated)"


def matched_lengths(claim: Claim, points: pd.DataFrame) -> tuple[list[tuple[float, float]], str]:
    """The ISL/OSL pairs evidence may be compared at, and why.

    Stated lengths with evidence: only those. Stated lengths without evidence: the measured pair(s) nearest in
    log2 distance, said so. Not stated: every measured pair, each compared only with itself (like with like).
    """
    if points is None or points.empty or not {"isl", "osl"} <= set(points.columns):
        return [], "no lengths in the evidence"
    both = points[["isl", "osl"]].dropna().drop_duplicates()
    pairs = sorted((float(a), float(b)) for a, b in zip(both["isl"], both["osl"]) if a > 0 and b > 0)
    want = stated_lengths(claim)
    if want is None:
        return pairs, "lengths not stated: every comparison stays within one ISL/OSL pair"
    if want in pairs:
        return [want], f"at the stated {lengths_text(*want)}"
    if not pairs:
        return [], f"no evidence with lengths (stated {lengths_text(*want)})"
    dist = {p: abs(math.log2(p[0] / want[0])) + abs(math.log2(p[1] / want[1])) for p in pairs}
    best = min(dist.values())
    near = [p for p in pairs if dist[p] == best]
    return near, (f"no evidence at the stated {lengths_text(*want)}; nearest measured: "
                  + " and ".join(lengths_text(*p) for p in near))


