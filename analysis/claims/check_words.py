"""Sentences for the checks' facts: how each number was read, what differs, which points were used.

:func:`worded` turns the fact table of :func:`analysis.claims.checks.check_parts` into the table the card shows
(``how`` written from ``reading``, ``differs`` and ``lengths_note`` as text). Every rule of ``reading`` has one
sentence here; a new check adds its rule to :data:`READINGS`.
"""

from __future__ import annotations

import pandas as pd

from analysis.claims.checks import REFERENCE_TOK_S_PER_USER, Difference
from analysis.claims.labels import PER_USER_DEFS, fmt_num, lengths_text
from analysis.claims.point_words import point_notes
from analysis.claims.selection import ClaimEvidence

# Conditions written "X measured, Y claimed"; the others "X instead of Y".
_MEASURED_CLAIMED = {"speculative decoding", "lengths", "GPU count", "scope", "framework"}


def difference_text(d) -> str:
    """``hardware: B200 instead of GB200`` / ``lengths: ISL 1,024 / OSL 1,024 measured, 8k/1k claimed``."""
    if not isinstance(d, Difference):
        return str(d)
    if d.condition == "software date":
        return f"software date: run {d.measured} the claim's {d.claimed}"
    if d.condition in _MEASURED_CLAIMED:
        return f"{d.condition}: {d.measured} measured, {d.claimed} claimed"
    return f"{d.condition}: {d.measured} instead of {d.claimed}"


def checked_on_text(ev: ClaimEvidence) -> str:
    """Which points the checks read: the claim's model, the stand-ins (proxy), or none, and the latency limits."""
    from analysis.claims.evidence import PROXY_RULE

    if not ev.n_points:
        return "no points"
    if ev.pool_tier == "none":
        return f"no {ev.claim.model} points"
    names = ", ".join(ev.pool_models)
    text = (f"{names} points" if ev.pool_tier == "same-model" else
            f"{names} points (proxy: no {ev.claim.model} points, another model: {PROXY_RULE})")
    if ev.limits and ev.pool_size:
        text += f"; {len(ev.pool)} of {ev.pool_size} meet {ev.limits_text}"
    return text


def _point_text(p: dict) -> str:
    return (f"{p['tok_s_per_gpu']:,.0f} tok/s/GPU at {p['tok_s_per_user']:,.1f} tok/s/user "
            f"(concurrency {fmt_num(p.get('concurrency'))}, {p['row']}; {point_notes(p, 'gpu')})")


def _chosen(level_chosen: bool) -> str:
    return f" ({REFERENCE_TOK_S_PER_USER:g} tok/s/user chosen: the claim names no level)" if level_chosen else ""


def _ratio(r: dict, part_baseline=None) -> str:
    what = "fastest per-user point" if r["axis"] == "tok/s/user" else f"tok/s/GPU at {r['at']:g} tok/s/user"
    mark = "~" if r.get("rough") else ""
    return (f"{what}: {mark}{r['a']:,.1f} ({r['a_group']}) / {r['b']:,.1f} ({r['b_group']}, best {r['baseline']} "
            f"frontier) = {mark}{r['measured']:.2f}×" + _chosen(r["level_chosen"])
            + ("; rough: a side read across a wide frontier gap" if r.get("rough") else ""))


def _cost(r: dict) -> str:
    a, b = r["a"], r["b"]
    return (f"$/M output tokens at {r['at']:g} tok/s/user: {b['usd_per_mtok']:,.3g} ({b['group']}, "
            f"${b['usd_per_gpu_hour']:.2f}/GPU-hour) / {a['usd_per_mtok']:,.3g} ({a['group']}, "
            f"${a['usd_per_gpu_hour']:.2f}/GPU-hour) = {r['measured']:.2f}× lower; prices: "
            f"{r['price_basis']} ({a['hardware']}: {a['price_source']}; {b['hardware']}: {b['price_source']})"
            + (f"; rough: read across a wide frontier gap for {', '.join(r['rough'])}" if r["rough"] else "")
            + _chosen(r["level_chosen"]))


def _per_mw(r: dict) -> str:
    return ("not checkable: throughput per MW needs measured power on both sides, and the points table has none "
            f"for {' or '.join(r['missing'])}; the claim's 'AI-factory' MW also counts facility power "
            "(cooling, networking, conversion), which no benchmark log measures. Throughput per GPU is not "
            "substituted for it")


def _axis(r: dict) -> str:
    return (f"not checkable from the points table (axis {r['axis'] or 'not stated'}"
            + ("" if r["baseline"] else "; no baseline named") + ")")


def _capacity(r: dict) -> str:
    if not r.get("limit"):
        return f"measured capacity (highest tok/s/GPU): {_point_text(r['points'][0])}"
    free = r.get("unconstrained")
    return (f"measured capacity (highest tok/s/GPU) under {r['limit']}, perfclaims' default sanity limit "
            f"({r['met']} of {r['of']} frontier points meet it): {_point_text(r['points'][0])}"
            + (f"; unconstrained: {_point_text(free)}" if free else "; the same point without the limit"))




def _fastest(p: dict) -> str:
    stat = PER_USER_DEFS.get(str(p.get("per_user_def")), "")
    gpu = p.get("tok_s_per_gpu")
    gpu_text = (f"{gpu:,.0f} tok/s/GPU" if gpu is not None and not pd.isna(gpu) else
                "no output tok/s/GPU in the source")
    return (f"fastest measured point: {p['tok_s_per_user']:,.1f} tok/s/user"
            + (f" ({stat})" if stat and stat != "1000 / median TPOT" else "")
            + f" at concurrency {fmt_num(p.get('concurrency'))}, {gpu_text} ({p['row']}; {point_notes(p)})")


READINGS = {
    "outside-frontier": lambda r, ev: (f"{r['at']:g} tok/s/user is outside the measured frontier "
                                       f"({r['low']:,.1f}–{r['high']:,.1f} tok/s/user)"),
    "interpolated": lambda r, ev: (("~ (rough: read across a wide frontier gap) " if r.get("rough") else "")
                                   + f"interpolated between {_point_text(r['points'][0])} and "
                                   f"{_point_text(r['points'][1])}"),
    "measured": lambda r, ev: f"measured: {_point_text(r['points'][0])}",
    "capacity": lambda r, ev: _capacity(r),
    "no-capacity-within-limit": lambda r, ev: (f"no frontier point meets {r['limit']} (perfclaims' default sanity "
                                               f"limit for capacity); unconstrained: "
                                               f"{_point_text(r['unconstrained'])}"),
    "fastest": lambda r, ev: _fastest(r["points"][0]),
    "ratio": lambda r, ev: _ratio(r),
    "cost-ratio": lambda r, ev: _cost(r),
    "no-power": lambda r, ev: _per_mw(r),
    "axis-not-checkable": lambda r, ev: _axis(r),
    "no-common-lengths": lambda r, ev: f"no length pair measured on both {r['hardware']} and {r['baseline']}",
    "no-prices": lambda r, ev: ("not checkable: no priced measured points on both sides"
                                + (f" ({r['missing']})" if r["missing"] else "")),
    "no-priced-lengths": lambda r, ev: "not checkable: no length pair priced on both sides",
    "no-evidence": lambda r, ev: f"no evidence: {checked_on_text(ev)}",
    "no-matching-points": lambda r, ev: f"no matching measured points ({checked_on_text(ev)})",
}


def how_text(reading: dict, ev: ClaimEvidence) -> str:
    """The sentence for one reading fact."""
    return READINGS[reading["rule"]](reading, ev)


def lengths_note_text(note) -> str:
    """A ratio's lengths note (a fact) in words; a per-part note is already text."""
    if not isinstance(note, dict):
        return "" if note is None or (isinstance(note, float) and pd.isna(note)) else str(note)
    if note["rule"] == "at-stated":
        return "at the stated lengths"
    if note["rule"] == "no-common-stated":
        return (f"no pair measured on both sides at the stated {lengths_text(*note['stated'])}; every common pair "
                "shown")
    return "lengths not stated: both sides at the same ISL/OSL"


def worded(facts: pd.DataFrame, ev: ClaimEvidence) -> pd.DataFrame:
    """The check table as the card shows it: ``how`` from ``reading``; ``differs`` and ``lengths_note`` as text."""
    table = facts.copy()
    noise = "; the claimed number lies inside this point's 95% interval: the difference is within noise"
    table.insert(table.columns.get_loc("reading"), "how",
                 [how_text(r, ev) + (noise if inside == True else "")  # noqa: E712
                  for r, inside in zip(facts["reading"], facts.get("claim_in_interval", [None] * len(facts)))])
    table["differs"] = [[difference_text(d) for d in (ds or [])] for ds in facts["differs"]]
    table["lengths_note"] = [lengths_note_text(n) for n in facts["lengths_note"]]
    return table
