"""A claim's status in one line, above its bottom line: whether measurements reach it and, for a speed no measured
point reaches, what the step-time model says decides it. :func:`claim_status` gives the facts, :func:`status_text`
the sentence."""

from __future__ import annotations

import math

import pandas as pd

from analysis.claims.checks import INFORMATIVE
from analysis.claims.labels import PER_USER_DEFS, share
from analysis.claims.words import _name as _text
from analysis.claims.words import claim_denominator
from analysis.text import fixed, missing, num, whole

# status → the label a reader stops at
LABELS = {
    "reached": "reached by a measurement",
    "not-reached": "not reproduced, no measurement reaches it",
    "measured": "measured against matching evidence",
    "other-conditions": "not checked at the claim's conditions",
    "proxy": "not checked on this model",
    "far": "not checked at the claim's lengths",
    "unchecked": "unchecked",
}
# the same, as the report index's line leads with it beside the evidence tier
SHORT = {"reached": "reached", "not-reached": "not reproduced", "measured": "measured",
         "other-conditions": "other conditions only", "proxy": "proxy only", "far": "lengths too far",
         "unchecked": "unchecked"}
COMPARABLE = ("direct", "same-model")


def _axes(differs) -> list[str]:
    return [str(getattr(d, "condition", None) or str(d).split(":")[0]) for d in (differs or [])]


def _statistic(row) -> str:
    p = ((row.get("reading") or {}).get("points") or [{}])[0]
    return PER_USER_DEFS.get(str(p.get("per_user_def")), "")


def claim_status(checks: pd.DataFrame, calibrated: dict | None = None, top_tau: float = math.nan,
                 claim=None) -> dict:
    """The facts of a claim's status from its check rows (``analysis.claims.checks.check_parts``, first row the
    closest-matched evidence), ``calibrated`` (the precision answer's step-time prediction: ``tok_s_per_user``
    per recipe, ``n_gpus``, ``framework``) and ``top_tau`` (the highest acceptance length the card's bounds read).

    A per-user part compared with evidence of the claim's model at its lengths (a percentage of the claim exists)
    is ``reached`` or ``not-reached`` by the fastest such point; where none reaches, the τ the calibrated model
    would need at its predicted step time. Otherwise the first row decides: ``measured`` (a percentage of the
    claim), ``proxy``, ``other-conditions`` (the conditions that withhold a percentage), ``far`` (lengths more
    than :data:`analysis.claims.checks.LENGTHS_FAR` × away) or ``unchecked`` (no measured point)."""
    rows = checks[checks["measured_all"].notna()] if len(checks) else checks
    if rows.empty:
        return {"status": "unchecked"}
    first = rows.iloc[0]
    if bool(first.get("lengths_far")):
        return {"status": "far", "lengths": _text(first.get("lengths")), "match": _text(first.get("match"))}
    users = rows[(rows["kind"] == "per-user") & rows["match"].isin(COMPARABLE)
                 & rows["measured_over_claimed"].notna()]
    if len(users):
        top = users.loc[users["measured_all"].idxmax()]
        out = {"status": "reached" if top["measured_all"] >= top["claimed"] else "not-reached",
               "claimed": float(top["claimed"]), "fastest": float(top["measured_all"]),
               "fastest_share": float(top["measured_all"] / top["claimed"]), "fastest_match": _text(top["match"]),
               "fastest_differs": _axes(top.get("differs")), "fastest_model": _text(top.get("model")),
               "fastest_group": _text(top.get("group")), "fastest_statistic": _statistic(top),
               "points_compared": int(len(users)),
               # a direct row differs in nothing the claim states: without one, nothing ran at its conditions
               "at_claim_conditions": bool((users["match"] == "direct").any())}
        if first["kind"] == "per-user" and first.name != top.name and first.name in users.index:
            # the closest-matched point, where it is not the fastest (the claim's own checkpoint, say)
            out.update(closest=float(first["measured_all"]), closest_share=float(first["measured_over_claimed"]),
                       closest_model=_text(first.get("model")), closest_statistic=_statistic(first),
                       closest_differs=_axes(first.get("differs")))
        speed = ((calibrated or {}).get("tok_s_per_user") or {}).get("native")
        if out["status"] == "not-reached" and not missing(speed) and speed > 0:
            out.update(model_tok_s_per_user=speed, model_gpus=(calibrated or {}).get("n_gpus"),
                       model_framework=_text((calibrated or {}).get("framework"), "unknown"),
                       needs_tau=float(top["claimed"]) / speed, top_tau=float(top_tau))
        return out
    # the measured number in the claim's own GPU denominator, as the bottom line reads it (decode GPUs where the
    # claim counts those)
    measured, which = claim_denominator(claim, first) if claim is not None else (float(first["measured_all"]), "")
    out = {"match": _text(first["match"]), "measured": measured, "unit": _text(first["unit"]) + which,
           "group": _text(first.get("group")), "lengths": _text(first.get("lengths"))}
    if pd.notna(first["measured_over_claimed"]):
        return {"status": "measured", "share": float(first["measured_over_claimed"]),
                "differs": _axes(first.get("differs")), **out}
    if first["match"] == "proxy":
        return {"status": "proxy", "model": _text(first.get("model"), "another model"), **out}
    withheld = [a for a in _axes(first.get("differs")) if not a.startswith(tuple(INFORMATIVE))]
    return {"status": "other-conditions", "differs": withheld or _axes(first.get("differs")), **out}


def status_text(s: dict) -> str:
    """The status as one sentence after its label (``**Status: …**`` on the card)."""
    kind = s["status"]
    if kind == "unchecked":
        return "No measured point can check it."
    if kind == "far":
        return (f"The nearest {s['match']} evidence ran at {s['lengths']}, too far from the claim's lengths to compare "
                "a number.")
    if kind in ("reached", "not-reached"):
        return _speed_text(s)
    if kind == "measured":
        differs = f"; differs: {', '.join(s['differs'])}" if s.get("differs") else ""
        return (f"{share(s['share'])} of the claim: {num(s['measured'])} {s['unit']} ({s['match']} evidence: "
                f"{s['group']}, {s['lengths']}{differs}).")
    if kind == "proxy":
        return (f"Only another model was measured ({s['model']}: {num(s['measured'])} {s['unit']}), so no percentage "
                "of the claim is given.")
    return (f"This model was measured only under other conditions ({', '.join(s['differs']) or 'conditions'}): "
            f"{num(s['measured'])} {s['unit']} there, not a percentage of the claim.")


def _point(value, statistic, share_, differs, where="") -> str:
    stat = f" ({statistic})" if statistic else ""
    diff = f"differs: {', '.join(differs)}" if differs else ""
    tail = "; ".join(x for x in (where, diff) if x)
    return f"{fixed(value, 1)} tok/s/user{stat}, {share(share_)} of the claim" + (f" ({tail})" if tail else "")


def _speed_text(s: dict) -> str:
    """A per-user claim against the measured points of its model: the closest-matched first (the bottom line's
    number), then the fastest, then, where none reaches it, the calibrated model's estimate of the τ it needs,
    said to be an estimate resting on the calibrated engines' fixed cost per step."""
    head = "" if s.get("at_claim_conditions") else "No measurement ran at the claim's conditions. "
    model = s.get("fastest_model") or ""
    where = f"{s['fastest_match']} evidence: " + (f"{model}, " if model and model not in s["fastest_group"] else "") \
        + s["fastest_group"]
    fastest = _point(s["fastest"], s.get("fastest_statistic"), s["fastest_share"], s.get("fastest_differs"), where)
    if "closest" in s:
        cmodel = f" ({s['closest_model']})" if s.get("closest_model") else ""
        head += (f"The closest-matched point{cmodel} measures "
                 + _point(s["closest"], s.get("closest_statistic"), s["closest_share"], s.get("closest_differs"))
                 + f"; the fastest of this model or its architecture {fastest}.")
    else:
        head += f"The fastest measured point of this model or its architecture, also the closest-matched: {fastest}."
    if "needs_tau" not in s:
        return head
    need, top = s["needs_tau"], s["top_tau"]
    where = (f"beyond the {fixed(top, 2)} the card's bounds read" if top == top and need > top else
             f"within the acceptance lengths the card's bounds read (up to {fixed(top, 2)})" if top == top else
             "an acceptance length no source here states")
    gpus = num(s["model_gpus"]) if s.get("model_gpus") is not None else "its"
    return (head + f" An estimate, not a measurement: at the fixed cost per step the step-time model calibrates on "
            f"{s['model_framework']}'s runs ({whole(s['model_tok_s_per_user'])} tok/s/user on {gpus} GPUs without "
            f"speculative decoding) the claim would need τ ≥ {fixed(need, 2)}, {where}; an engine that cuts that "
            "fixed cost needs less.")


def status_line(s: dict) -> str:
    """``Status: <label>.`` and its sentence, plain text."""
    return f"Status: {LABELS[s['status']]}. {status_text(s)}"
