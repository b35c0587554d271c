"""The five questions of DESIGN.md and a sixth (speculative decoding), each answered as stated, inferred from data,
or not stated.

Each question is one fact function here (``batch_fact`` … ``precision_fact``): it reads the claim, the claim's
:class:`analysis.claims.selection.ClaimEvidence` and the roofline table, and returns an :class:`Answer` whose
``fact`` is data (the rule that fired, the numbers, the evidence point). The sentences are written from that fact
by :mod:`analysis.claims.answer_words`, so a rule is tested on its fact and a wording change touches one place.
Another model's points are *proxy* evidence and the fact says so; the speed, batch and latency answers rest on one
point: the measured point nearest the claim's per-user speed (:func:`speed_point`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import specs
from analysis.claims.conditions import base_precision, lengths_match, meets_limits, per_user_value
from analysis.claims.evidence import evidence_object, same_architecture, same_checkpoint
from analysis.claims.labels import lengths_text
from analysis.claims.pairs import pairs_summary
from analysis.claims.registry import INFERRED, NOT_STATED, STATED, Claim, is_stated
from analysis.claims.selection import ClaimEvidence
from analysis.claims.sol import needed_latency_us, possible_at

QUESTIONS = {
    "batch": "Batch size: at what batch or concurrency was it measured?",
    "large_batch": "Large batch: does it hold at large batch, and what is the capacity?",
    "scope": "Scope: per GPU, or does it need the whole NVLink domain?",
    "latency": "Latency: TTFT and TPOT?",
    "precision": "Precision: FP8 or FP4 (or BF16), and how much does it explain?",
    "spec_decode": ("Speculative decoding: which method, what acceptance, measured or forced, and how much of the "
                    "speed does it explain?"),
}
SHORT_QUESTIONS = {"batch": "Batch size", "large_batch": "Large batch / capacity", "scope": "Scope (1 / 4 / 8 / 72 GPUs)",
                   "latency": "Latency (TTFT, TPOT)", "precision": "Precision (FP8 / FP4)",
                   "spec_decode": "Speculative decoding"}


@dataclass
class Answer:
    """One of the five questions: stated / inferred from data / not stated, the answer, and the rows behind it.

    ``fact`` is the answer as data (``rule`` names the rule that fired); ``answer`` and ``short`` are its words."""

    question: str
    status: str
    answer: str = ""
    rows: list = field(default_factory=list)
    evidence: list = field(default_factory=list)   # evidence objects (see evidence.evidence_object)
    short: str = ""                                 # the answer in a few words, for the card's first table
    fact: dict = field(default_factory=dict)
    # what is not evidence of the claim's own model, labelled: another model's points (proxy), roofline bounds
    context: str = ""


def speed_point(claim: Claim, evidence: pd.DataFrame, limits=()):
    """The point the speed, batch and latency answers rest on: the best-matching evidence on the claim's hardware
    (else the best hardware match), meeting the claim's latency limits where any point does, nearest the claim's
    per-user speed in log distance (the fastest point when the claim names no per-user speed). None when there is
    no evidence."""
    if evidence is None or evidence.empty:
        return None
    ev = evidence[evidence["hardware_match"] == evidence["hardware_match"].max()]
    ev = ev[ev["model_match"] == ev["model_match"].max()]
    own = ev["model"].map(lambda m: same_checkpoint(claim.model, m)).astype(bool)
    if own.any():   # the claim's own checkpoint first (V4.1 Flash), another of the same architecture after it
        ev = ev[own]
    # the claim's own lengths and precision where the evidence has them, as its comparison reads them
    at_lengths = np.array([lengths_match(claim, i, o) is True for i, o in zip(ev["isl"], ev["osl"])], dtype=bool)
    if at_lengths.any():
        ev = ev[at_lengths]
    precision = base_precision(claim.precision)
    if precision and (ev["precision"] == precision).any():
        ev = ev[ev["precision"] == precision]
    limits = list(limits)
    if limits and meets_limits(ev, limits).any():   # a point the claim's limits allow, when there is one
        ev = ev[meets_limits(ev, limits)]
    target = per_user_value(claim)
    if math.isnan(target) or target <= 0:
        return ev.loc[ev["tok_s_per_user"].idxmax()]
    dist = np.abs(np.log(ev["tok_s_per_user"].astype(float) / target))
    return ev.loc[dist.idxmin()]


def differs_from_claim(claim: Claim, row) -> list[dict]:
    """What a measured point's setting does not share with the claim: lengths, precision (stated ones only)."""
    out = []
    if lengths_match(claim, row.get("isl"), row.get("osl")) is False:
        out.append({"condition": "lengths", "measured": lengths_text(row.get("isl"), row.get("osl")),
                    "claimed": claim.isl_osl})
    precision = base_precision(claim.precision)
    if precision and str(row.get("precision")) != precision:
        out.append({"condition": "precision", "measured": row.get("precision"), "claimed": precision})
    return out


def capacity_point(claim: Claim, evidence: pd.DataFrame, at, limits=(), limits_from="") -> tuple[object, dict]:
    """The highest tok/s/GPU point at the speed point's model, hardware, precision and lengths, among points that
    meet the claim's latency limits when it has some; and how many met them (a fact, empty without limits)."""
    if evidence is None or evidence.empty or at is None:
        return None, {}
    def equal(col):   # NaN equals NaN here: points with no fixed lengths form one group
        v = at.get(col)
        return evidence[col].isna() if pd.isna(v) else evidence[col] == v

    same = evidence[equal("model") & equal("hardware") & equal("precision") & equal("isl") & equal("osl")
                    & evidence["tok_s_per_gpu"].notna()]
    note = {}
    if limits and len(same):
        ok = same[meets_limits(same, list(limits))]
        note = {"limits": "; ".join(lim.text for lim in limits), "where": limits_from, "met": len(ok),
                "of": len(same)}
        same = ok
    if same.empty:
        return None, note
    return same.loc[same["tok_s_per_gpu"].idxmax()], note


def _point(row) -> dict:
    """The point an answer rests on, as its fact carries it (``closed_loop``: a fixed-concurrency sweep point,
    whose TTFT tail is its start-up burst)."""
    from analysis.claims.conditions import closed_loop

    burst = bool(closed_loop(pd.DataFrame([dict(row)])).iloc[0])
    return {**evidence_object(row), "tier": row.get("tier", "same-model"), "scope": row.get("scope"),
            "row": row["row"], "closed_loop": burst}


# --- the five facts --------------------------------------------------------------------------------

def _fastest_other_revision(ev: ClaimEvidence, point) -> dict | None:
    """The fastest point of another checkpoint of the claim's architecture on the same hardware, where it is faster
    than the point an answer rests on (V4-Flash-0731 beside V4.1-Flash): shown, labelled, never the answer."""
    pool = ev.answer_points
    if pool.empty or point is None or not same_checkpoint(ev.claim.model, point["model"]):
        return None
    other = pool[~pool["model"].map(lambda m: same_checkpoint(ev.claim.model, m)).astype(bool)]
    other = other[other["tok_s_per_user"] > point["tok_s_per_user"]]
    return _point(other.loc[other["tok_s_per_user"].idxmax()]) if len(other) else None


def batch_fact(ev: ClaimEvidence, point) -> dict:
    claim, user = ev.claim, per_user_value(ev.claim)
    if is_stated(claim.batch_text):
        return {"rule": "stated", "text": str(claim.batch_text)}
    if point is not None and not math.isnan(user):
        rule = "proxy-nearest" if point.get("tier") == "proxy" else "nearest"
        return {"rule": rule, "point": _point(point), "claimed_tok_s_per_user": user,
                "ratio": user / point["tok_s_per_user"], "other_revision": _fastest_other_revision(ev, point)}
    return {"rule": "no-evidence", "other_models": ev.other_models}


def _source_of(row_id) -> str:
    """The file a point's row id names (``file:line`` or ``file#/json/pointer``, or the file alone)."""
    return re.split(r"[:#]", str(row_id), maxsplit=1)[0]


def _sweep_end(evidence: pd.DataFrame, row) -> bool:
    """Whether ``row`` is the highest concurrency its configuration measured in its source file (same model,
    hardware, precision, lengths, GPU count, speculative decoding and date): a capacity read there is where the sweep
    stopped, which need not be where throughput saturates."""
    if evidence is None or evidence.empty or pd.isna(row.get("concurrency")) or "row" not in evidence.columns:
        return False
    same = evidence[evidence["row"].map(_source_of) == _source_of(row["row"])]
    for col in ("model", "hardware", "precision", "isl", "osl", "n_gpus", "spec_decode", "date"):
        if col in same.columns:
            v = row.get(col)
            same = same[same[col].isna()] if v is None or (not isinstance(v, str) and pd.isna(v)) else \
                same[same[col] == v]
    top = same["concurrency"].max() if len(same) else math.nan
    return bool(pd.notna(top) and float(row["concurrency"]) >= float(top))


def large_batch_fact(ev: ClaimEvidence, point) -> dict:
    """Capacity under the latency that applies (:attr:`ClaimEvidence.capacity_limits`: the claim's, its scenario's
    or perfclaims' default sanity limit), with the unconstrained capacity second where it is another point."""
    claim = ev.claim
    cap, note = capacity_point(claim, ev.stand_ins, point, ev.capacity_limits, ev.capacity_limits_from)
    if note:
        note = {**note, "default": ev.default_capacity_limit}
    if note and cap is not None and note["default"] and pd.isna(cap.get("ttft_ms_p50")) and \
            pd.notna(cap.get("ttft_ms_mean")):  # the source gives a mean only: the default limit was read on it
        note = {**note, "limits": note["limits"].replace("TTFT p50", "TTFT mean"), "read_on": "mean"}
    if cap is not None:
        free, _ = capacity_point(claim, ev.stand_ins, point)
        other = free is not None and ev.capacity_limits and free["row"] != cap["row"]
        return {"rule": "capacity", "point": _point(cap), "differs": differs_from_claim(claim, cap), "limits": note,
                "sweep_end": _sweep_end(ev.stand_ins, cap), "unconstrained": _point(free) if other else None,
                "no_limit_reason": "" if ev.capacity_limits else ev.capacity_limits_from}
    if note:
        return {"rule": "no-point-meets-limits", "limits": note}
    if claim.kind == "per-GPU" and is_stated(claim.batch_text):
        return {"rule": "stated", "text": str(claim.batch_text)}
    return {"rule": "not-stated"}


def scope_bounds(claim: Claim, sol: pd.DataFrame) -> list[dict]:
    """Per GPU count, the best batch-1 bound (one token per step, with the communication floor) and whether it
    reaches the claim's per-user speed: at the central latency, at the low end of the latency range, below the
    achievable line. Empty for a claim with no per-user speed or no roofline."""
    user = per_user_value(claim)
    base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]] if len(sol) else sol
    if base.empty or math.isnan(user):
        return []
    out = []
    for g in sorted(base["gpus"].unique()):
        r = base[base["gpus"] == g].sort_values(["sol_tok_s_per_user_comm", "sol_tok_s_per_user"]).iloc[-1]
        out.append({"gpus": int(g), "scope": r["scope"], "precision": r["precision"],
                    "precision_label": r.get("precision_label", ""),
                    "bound": r["sol_tok_s_per_user_comm"], "low": r["sol_tok_s_per_user_comm_low"],
                    "high": r["sol_tok_s_per_user_comm_high"], "comm_where": r["comm_where"],
                    "comm_basis": r["comm_basis"], "reaches": bool(r["sol_tok_s_per_user_comm"] >= user),
                    "reaches_at_low_latency": bool(r["sol_tok_s_per_user_comm_high"] >= user),
                    "undecided": possible_at(r) == "undecided",
                    "latency_us": r["collective_latency_us"], "needed_us": needed_latency_us(r),
                    "reaches_achievable": bool(r["sol_tok_s_per_user_achievable_comm"] >= user)})
    return out


def scope_verdict(bounds: list[dict]) -> dict:
    """Which rule the bounds settle on: the smallest node-size scope that reaches the speed (and whether below the
    achievable line), a larger domain only, only at the low latency end, or none."""
    small = [b for b in bounds if b["gpus"] <= 8 and b["reaches"]]
    big = [b for b in bounds if b["gpus"] > 8]
    if small:
        g = min(b["gpus"] for b in small)
        comfortable = [b["gpus"] for b in bounds if b["gpus"] <= 8 and b["reaches_achievable"]]
        first = next(b for b in bounds if b["gpus"] == g)
        if first.get("undecided"):  # an unmeasured latency within the margin of the need decides it
            return {"rule": "node-undecided", "gpus": g, "bound": first}
        return {"rule": "node-suffices" if first["reaches_achievable"] else "node-near-peak", "gpus": g,
                "comfortable_gpus": min(comfortable) if comfortable else None}
    if big and any(b["reaches"] for b in big):
        return {"rule": "larger-domain", "gpus": [b["gpus"] for b in big if b["reaches"]]}
    if any(b["reaches_at_low_latency"] for b in bounds):
        return {"rule": "low-latency-only"}
    return {"rule": "none-reaches"}


def model_scopes(claim: Claim) -> list[dict]:
    """Per scope (1 GPU, a 4-GPU tray, an 8-GPU node, the 72-GPU domain), what the step-time model's bound needs to
    reach the claim's per-user speed, at the lowest and highest τ the claim allows (its stated acceptance, else the
    golden curves' range): the step budget, HBM time, collectives per step, the latency each may take, and the
    measured latency per collective with its sources and status (:func:`analysis.perfmodel.scope.scope_facts`).
    Empty for a claim with no per-user speed or a model or hardware the tables lack."""
    from analysis.perfmodel import scope as model_scope

    user = per_user_value(claim)
    if math.isnan(user) or user <= 0 or claim.kind != "per-user" or not claim.model_table:
        return []
    stated = claim.number("acceptance_length")
    if math.isnan(stated):
        stated = claim.number("tokens_per_step")  # a τ the claim states, as the SOL table reads it
    if not math.isnan(stated):
        draft = claim.number("draft_tokens")
        taus, verifies = (stated, stated), ((draft + 1.0,) * 2 if not math.isnan(draft) else (None, None))
    else:
        r = plausible_taus(claim)
        taus, verifies = (r["low"], r["high"]), (r.get("low_verify"), r.get("high_verify"))
    try:
        from analysis.claims.sol import scopes_for

        hardware = str(claim.hardware_table or claim.hardware)
        # the scopes this hardware has (a DGX B200 has no 4-GPU tray and no 72-GPU domain), as the SOL table's
        scopes = tuple(scopes_for(claim, specs.hardware(hardware)))
        low, high = (model_scope.scope_facts(claim.model_table, hardware, claim_tok_s_per_user=user, tau=t,
                                             verify=v, scopes=scopes)
                     for t, v in zip(taus, verifies))
    except (KeyError, ValueError):
        return []
    out = []
    for a, b in zip(low, high):
        measured = a["measured"] + [m for o in a["other"] for m in o["measured"]]
        out.append({"gpus": a["gpus"], "scope": a["scope"], "fits": a["fits"], "tau": list(taus),
                    "verify_tokens": [v if v is not None else max(t, 1.0) for t, v in zip(taus, verifies)],
                    "layout": a["layout"], "tp_limit": a["tp_limit"],
                    "other": [{"layout": o["layout"], "measured_us_per_collective": o["measured_us_per_collective"],
                               "measured_dispatch_plus_combine_us": o["measured_dispatch_plus_combine_us"],
                               "needs_us_per_collective": [o["needs_us_per_collective"], p["needs_us_per_collective"]],
                               "libraries": sorted({str(m.get("library")) for m in o["measured"] if m.get("library")}),
                               "status": sorted({m["status"] for m in o["measured"]}),
                               "measured_on": _measured_on(o["measured"])}
                              for o, p in zip(a["other"], b["other"])],
                    "step_budget_ms": [a["step_budget_ms"], b["step_budget_ms"]], "hbm_ms": [a["hbm_ms"], b["hbm_ms"]],
                    "collectives_per_step": a["collectives_per_step"],
                    "needs_us_per_collective": [a["needs_us_per_collective"], b["needs_us_per_collective"]],
                    "measured_us_per_collective": a["measured_us_per_collective"],
                    "measured_dispatch_plus_combine_us": a["measured_dispatch_plus_combine_us"],
                    "verdict": [a["verdict"], b["verdict"]], "reaches": [a["reaches"] and a["fits"],
                                                                     b["reaches"] and b["fits"]],
                    "status": sorted({m["status"] for m in a["measured"]}),
                    "sources": sorted({src for m in measured for src in m.get("sources") or []}),
                    "libraries": sorted({str(m.get("library")) for m in a["measured"] if m.get("library")}),
                    "measured_on": _measured_on(a["measured"])})
    from analysis.claims.conditions import spec_decode_of

    if math.isnan(stated) and out and spec_decode_of(claim) != "none":  # a τ range to read thresholds in
        _add_thresholds(claim, out, user, hardware, scopes)
    return out


def _add_thresholds(claim: Claim, out: list[dict], user: float, hardware: str, scopes: tuple) -> None:
    """Each scope's ``reaches_from``: the golden-curve row (acceptance length, drafted tokens, mode) with the lowest
    τ at which the step-time model's bound reaches the claim's speed, verifying that row's drafted tokens + 1 (None
    where no row does); the deciding τ of each scope, read at acceptance lengths a drafter was measured to reach."""
    from analysis.perfmodel import scope as model_scope

    rows, _ = tau_curve_rows(claim)
    if rows.empty:
        return
    rows = rows.sort_values(["acceptance_length", "draft_tokens"])
    found: dict = {}
    for r in rows.itertuples(index=False):
        facts = model_scope.scope_facts(claim.model_table, hardware, claim_tok_s_per_user=user,
                                        tau=float(r.acceptance_length), verify=float(r.draft_tokens) + 1.0,
                                        scopes=scopes)
        for f in facts:
            if f["reaches"] and f["fits"] and f["gpus"] not in found:
                found[f["gpus"]] = {"tau": float(r.acceptance_length), "draft_tokens": int(r.draft_tokens),
                                    "mode": str(r.mode), "file": str(r.file), "model": str(r.model)}
    for sc in out:  # a scope that reaches at the lowest τ already, or cannot hold the weights, has no threshold
        if sc["fits"] and not sc["reaches"][0]:
            sc["reaches_from"] = found.get(sc["gpus"])


def _measured_on(measured: list[dict]) -> list[list]:
    """[hardware, GPUs] of the rows a scope's latencies were read from (another part's or group's when the status
    says extrapolated)."""
    return sorted({(str(h), int(g)) for m in measured for h, g in (m.get("measured_on") or [])})


def scope_fact(ev: ClaimEvidence, sol: pd.DataFrame, point) -> dict:
    claim = ev.claim
    # batch-1 bounds say what a single user's speed needs; a throughput claim's scope is its deployment's GPU count
    bounds = scope_bounds(claim, sol) if claim.kind == "per-user" else []
    pool = ev.answer_points
    gpus = sorted({float(g) for g in pool["n_gpus"].dropna()}) if len(pool) else []
    fact = {"bounds": bounds, "verdict": scope_verdict(bounds) if bounds else None,
            "claimed_tok_s_per_user": per_user_value(claim), "scope_text": str(claim.scope),
            "scope_stated": is_stated(claim.scope), "measured_gpu_counts": gpus,
            "evidence_tier": str(point.get("tier")) if point is not None else "none",
            "model_scopes": model_scopes(claim)}
    n = claim.number("n_gpus")
    if not math.isnan(n):
        return {**fact, "rule": "stated", "n_gpus": n}
    return {**fact, "rule": "inferred" if (point is not None or bounds) else "not-stated",
            "point": _point(point) if point is not None else None}


def latency_fact(ev: ClaimEvidence, point) -> dict:
    claim = ev.claim
    if is_stated(claim.latency):
        return {"rule": "stated", "text": str(claim.latency), "limits": [lim.text for lim in ev.limits]}
    has = point is not None and any(pd.notna(point.get(c)) for c in ("ttft_ms_p50", "ttft_ms_mean", "tpot_ms_p50",
                                                                     "tpot_ms_mean"))
    return {"rule": "inferred" if has else "not-stated", "limits_from": ev.limits_from if ev.limits else "",
            "claimed_tok_s_per_user": per_user_value(claim), "point": _point(point) if has else None}


def _sol_value(sol: pd.DataFrame, precision: str, gpus: int, tau: float = 1.0, col="sol_tok_s_per_user") -> float:
    hit = sol[(sol["precision"] == precision) & (sol["gpus"] == gpus) & (sol["tokens_per_step"] == tau)]
    return float(hit[col].iloc[0]) if len(hit) else math.nan


def precision_fact(ev: ClaimEvidence, sol: pd.DataFrame, pairs: tuple[list, list]) -> dict:
    claim = ev.claim
    clean, confounded = pairs
    roofline = None
    if {"fp8", "fp4"} <= set(sol.get("precision", [])):
        a, b = _sol_value(sol, "fp8", 1), _sol_value(sol, "fp4", 1)
        roofline = {"fp8": a, "fp4": b, "ratio": b / a}
    proxy = any(not same_architecture(specs.match_model_name(str(p["a"]["model"])), claim.model_table) for p in clean)
    return {"rule": "stated" if claim.precision != NOT_STATED else "inferred", "text": str(claim.precision_text),
            "text_stated": is_stated(claim.precision_text), "roofline": roofline, "pairs": pairs_summary(clean),
            "model": model_precision(ev) if roofline else None,
            "pairs_proxy": proxy, "confounded": [{"ratio": p["ratio"], "isl": p["a"]["isl"], "osl": p["a"]["osl"],
                                                   "confounders": list(p["confounders"])} for p in confounded],
            "evidence": [x for p in clean for x in (p["a"], p["b"])]}


def _evidence_layout(point, gpus: int) -> dict | None:
    """The nearest evidence point's TP/EP/DP when its source states them and they fit its GPU count (TP from 1;
    EP and DP 1 where unstated); None otherwise."""
    if point is None:
        return None
    tp = point.get("tp")
    if pd.isna(tp) or tp < 1:
        return None
    ep = point.get("ep") if pd.notna(point.get("ep")) and point.get("ep") >= 1 else 1
    dp = point.get("dp") if pd.notna(point.get("dp")) and point.get("dp") >= 1 else 1
    shard = {"tp": int(tp), "ep": int(ep), "dp": int(dp)}
    return shard if max(shard.values()) <= gpus else None


def model_precision(ev: ClaimEvidence) -> dict | None:
    """FP4 against FP8 from the calibrated step-time model at the claim model's shipped recipe (FP4 experts with
    FP8 attention for DeepSeek-V4, say), on the GPU count and framework of the nearest evidence point (8 GPUs and
    the family's calibration without one), at concurrency 1 and τ 1 (:func:`analysis.perfmodel.scope.fp4_vs_fp8`).
    None when the tables lack the model or hardware."""
    from analysis.perfmodel import scope as model_scope

    claim = ev.claim
    if not claim.model_table:
        return None
    near = ev.near.iloc[0] if len(ev.near) else None
    gpus = int(near["n_gpus"]) if near is not None and pd.notna(near.get("n_gpus")) and near["n_gpus"] >= 1 else 8
    framework = str(near["framework"]) if near is not None and pd.notna(near.get("framework")) else "unknown"
    layout, layout_from = _evidence_layout(near, gpus), "the nearest evidence point's layout"
    if layout is None:
        layout_from = ("the nearest evidence states no layout: TP across the GPUs where it splits the attention heads "
                       "evenly, else EP with data-parallel attention")
    try:
        r = model_scope.fp4_vs_fp8(claim.model_table, str(claim.hardware_table or claim.hardware), n_gpus=gpus,
                                   framework=framework, layout=layout)
    except (KeyError, ValueError):
        return None
    rows = r["rows"]
    return {"n_gpus": gpus, "framework": framework, "concurrency": 1, "tau": 1.0,
            "layout": r["layout"], "layout_from": layout_from,
            "native_recipe": r["native_recipe"], "fp4_over_fp8": r["fp4_over_fp8"],
            "native_over_fp8": r["native_over_fp8"],
            "tok_s_per_user": {k: v["tok_s_per_user"] for k, v in rows.items()},
            "recipes": {k: v["recipe"] for k, v in rows.items()},
            "dominant": {k: v["dominant"] for k, v in rows.items()}}


def tau_curve_rows(claim: Claim):
    """(rows, own) of the shipped golden curves a claim that states no acceptance may run at: its model family's,
    the stated method's where it has one, the stated draft length's where it states one, its own model's where they
    exist (V4.1-Flash's, not V4-Pro's); ``own`` the rows of its own model (empty when the rows are another model's
    of its family)."""
    from analysis import golden_al
    from analysis.claims.conditions import spec_decode_of
    from analysis.claims.evidence import family

    table = golden_al.golden_table()
    fam = family(claim.model_table or claim.model)
    curves = table[table["model"].astype(str).str.startswith(fam)] if fam and len(table) else table.iloc[0:0]
    method = spec_decode_of(claim)
    if method and (curves["method"] == method).any():
        curves = curves[curves["method"] == method]
    drafted = claim.number("draft_tokens")
    if drafted == drafted and (curves["draft_tokens"] == drafted).any():  # a stated draft length: its rows only
        curves = curves[curves["draft_tokens"] == drafted]
    keys = curves["model"].map(golden_al.model_key) if len(curves) else pd.Series(dtype=object)
    own = curves.iloc[0:0]
    # the claim's own words first (DeepSeek V4.1 Flash, whose spec-table row is V4-Flash's), then the spec tables'
    # name ("DeepSeek-V4-Pro 1.6T" is deepseek-v4-pro)
    for name in dict.fromkeys(n for n in (claim.model, claim.model_table) if n):
        own = curves[keys == golden_al.model_key(name)] if len(curves) else curves
        if len(own):
            break
    return (own if len(own) else curves), own


def plausible_taus(claim: Claim) -> dict:
    """The range of tokens per step a claim that states no acceptance may run at: 1 (no speculative decoding, unless
    the claim names a method) to the highest acceptance length of the shipped golden curves for its model (else its
    model family; InferenceX, SPEED-Bench coding prompts), with the curves it read and the tokens each end verifies;
    the documented assumption where none exist."""
    from analysis.claims.conditions import spec_decode_of
    from analysis.specdecode import ASSUMED_TAU

    method = spec_decode_of(claim)
    if method == "none":  # stated: no speculative decoding, one token a step
        return {"low": 1.0, "high": 1.0, "basis": "stated", "curves": [], "high_verify": 1.0, "low_verify": 1.0}
    curves, own = tau_curve_rows(claim)
    low = 1.0 if not method else float(curves["acceptance_length"].min()) if len(curves) else 1.0
    if len(curves):
        # each end verifies its curve row's drafted tokens + 1 (τ 3.77 is DSpark at 6 drafted: 7 tokens a step)
        ends = curves.sort_values(["acceptance_length", "draft_tokens"], ascending=[True, False])
        top = ends.iloc[-1]
        return {"low": low, "high": float(top["acceptance_length"]), "basis": "golden",
                "high_verify": float(top["draft_tokens"]) + 1.0,
                "low_verify": 1.0 if not method else float(ends.iloc[0]["draft_tokens"]) + 1.0,
                "curves": sorted(set(curves["file"].astype(str))), "own_model": bool(len(own)),
                "models": sorted(set(curves["model"].astype(str)))}
    from analysis.specdecode import ASSUMED_DRAFT_TOKENS

    return {"low": low, "high": ASSUMED_TAU, "basis": "assumed", "curves": [],
            "high_verify": ASSUMED_DRAFT_TOKENS + 1.0, "low_verify": 1.0}


def spec_decode_fact(ev: ClaimEvidence, point) -> dict:
    """Which speculative decoding the claim and its evidence ran, at what acceptance and from where (measured,
    forced, golden, stated, assumed), and the verify-step rate the claimed per-user speed needs (speed ÷ τ)."""
    from analysis import specdecode
    from analysis.claims.conditions import spec_decode_of

    claim = ev.claim
    user = per_user_value(claim)
    method = spec_decode_of(claim)
    stated = claim.number("acceptance_length")
    if math.isnan(stated):
        stated = claim.number("tokens_per_step")
    evidence = None
    if point is not None:
        tau = specdecode.tau_for(point)
        evidence = {"point": _point(point), "tau": tau.as_dict(), "speculative": tau.speculative}
    pool = specdecode.acceptance_summary(ev.stand_ins).iloc[0].to_dict() if len(ev.stand_ins) else {}
    fact = {"method": method, "method_text": str(claim.spec_decode), "claimed_tok_s_per_user": user,
            "evidence": evidence, "pool": pool, "acceptance_text": str(claim.acceptance_text)}
    has_user = not math.isnan(user)
    if method == "none":
        return {**fact, "rule": "stated-none", "tau": 1.0,
                "steps_per_s": user if has_user else math.nan}
    if not math.isnan(stated):
        return {**fact, "rule": "stated", "tau": stated, "steps_per_s": user / stated if has_user else math.nan}
    taus = plausible_taus(claim)
    rule = "method-stated" if method else "not-stated"
    return {**fact, "rule": rule, "tau_range": taus,
            "steps_per_s_range": ([user / taus["high"], user / taus["low"]] if has_user else [])}


# --- assembly --------------------------------------------------------------------------------------

STATUS_OF_RULE = {"stated": STATED, "stated-none": STATED, "not-stated": NOT_STATED, "no-evidence": NOT_STATED,
                  "no-point-meets-limits": NOT_STATED}


def _status(key: str, fact: dict) -> str:
    point = fact.get("point") or {}
    if key in ("batch", "large_batch", "latency") and point.get("tier") == "proxy":
        return NOT_STATED   # another model's point is context, not an answer
    if key == "scope" and fact["rule"] == "inferred" and point.get("tier") in (None, "proxy"):
        return NOT_STATED
    if key == "precision" and fact["rule"] == "inferred" and (not fact["evidence"] or fact["pairs_proxy"]):
        return NOT_STATED   # a roofline ratio or another model's pairs are context, not an answer
    if key == "spec_decode" and fact["rule"] in ("not-stated", "method-stated"):
        return INFERRED if fact["evidence"] else NOT_STATED
    return STATUS_OF_RULE.get(fact["rule"], INFERRED)


def _evidence_of(key: str, fact: dict) -> list[dict]:
    if key == "precision":
        return [] if fact["pairs_proxy"] else fact["evidence"]
    point = fact.get("point") if key != "spec_decode" else (fact["evidence"] or {}).get("point")
    if key == "scope" and fact["rule"] == "stated":
        return []
    return [{k: v for k, v in point.items() if k not in ("tier", "scope", "row", "closed_loop")}] if point else []


def answer_facts(ev: ClaimEvidence, sol: pd.DataFrame, pairs: tuple[list, list] = ([], [])) -> dict[str, dict]:
    """The five facts for one claim (no words): what :func:`five_answers` writes up."""
    point = speed_point(ev.claim, ev.stand_ins, ev.limits)
    return {"batch": batch_fact(ev, point), "large_batch": large_batch_fact(ev, point),
            "scope": scope_fact(ev, sol, point), "latency": latency_fact(ev, point),
            "precision": precision_fact(ev, sol, pairs), "spec_decode": spec_decode_fact(ev, point)}


def five_answers(ev: ClaimEvidence, sol: pd.DataFrame, pairs: tuple[list, list] = ([], [])) -> dict[str, Answer]:
    """The five questions of DESIGN.md answered from the evidence, the roofline and the clean precision pairs:
    each a fact (:func:`answer_facts`) and its words (:mod:`analysis.claims.answer_words`)."""
    from analysis.claims import answer_words

    out = {}
    for key, fact in answer_facts(ev, sol, pairs).items():
        long, short, context = answer_words.SENTENCES[key](ev.claim, fact)
        evidence = _evidence_of(key, fact)
        point = fact.get("point") if key != "spec_decode" else (fact["evidence"] or {}).get("point")
        rows = [e["source"] for e in evidence] if key == "precision" else ([point["row"]] if evidence else [])
        out[key] = Answer(QUESTIONS[key], _status(key, fact), long, rows, evidence, short, fact, context)
    return out
