"""The five questions of DESIGN.md, each answered as stated, inferred from data, or not stated.

Every inferred answer names its evidence (points-table rows, and evidence objects for the JSON card) and how the
evidence matches the claim: another model's points are *proxy* evidence and say so. The speed, batch and latency
answers rest on one point: the measured point on the claim's hardware nearest the claim's per-user speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import specs
from analysis.claims.conditions import base_precision, latency_limits, lengths_match, meets_limits, per_user_value
from analysis.claims.evidence import PROXY_RULE, evidence_object, stand_ins
from analysis.claims.labels import fmt_num, lengths_text, precision_label
from analysis.claims.pairs import pairs_summary
from analysis.claims.registry import INFERRED, NOT_STATED, STATED, Claim, is_stated

QUESTIONS = {
    "batch": "Batch size: at what batch or concurrency was it measured?",
    "large_batch": "Large batch: does it hold at large batch, and what is the capacity?",
    "scope": "Scope: per GPU, or does it need the whole NVLink domain?",
    "latency": "Latency: TTFT and TPOT?",
    "precision": "Precision: FP8 or FP4 (or BF16), and how much does it explain?",
}
SHORT_QUESTIONS = {"batch": "Batch size", "large_batch": "Large batch / capacity", "scope": "Scope (1 / 8 / 72 GPUs)",
                   "latency": "Latency (TTFT, TPOT)", "precision": "Precision (FP8 / FP4)"}


@dataclass
class Answer:
    """One of the five questions: stated / inferred from data / not stated, the answer, and the rows behind it."""

    question: str
    status: str
    answer: str
    rows: list = field(default_factory=list)
    evidence: list = field(default_factory=list)   # evidence objects (see evidence.evidence_object)
    short: str = ""                                 # the answer in a few words, for the card's first table


def _ms(v) -> str:
    if v is None or pd.isna(v):
        return "n/a"
    return f"{v / 1000:,.1f} s" if v >= 1000 else f"{v:,.1f} ms"


def _who(r) -> str:
    """"DeepSeek-R1-0528 on GB300 NVL72, FP4, ISL 1,024 / OSL 8,192, spec decode mtp (proxy: another model)"."""
    tier = r.get("tier", "same-model")
    label = " (proxy: another model)" if tier == "proxy" else ""
    return (f"{r['model']} on {r['hardware']}, {str(r['precision']).upper()}, "
            f"{lengths_text(r.get('isl'), r.get('osl'))}, spec decode {r.get('spec_decode')}{label}")


def latency_text(r) -> str:
    return (f"TTFT p50 {_ms(r.get('ttft_ms_p50'))} / p99 {_ms(r.get('ttft_ms_p99'))}, "
            f"TPOT p50 {_ms(r.get('tpot_ms_p50'))} / p99 {_ms(r.get('tpot_ms_p99'))}")


def speed_point(claim: Claim, evidence: pd.DataFrame):
    """The point the speed, batch and latency answers rest on: the best-matching evidence on the claim's hardware
    (else the best hardware match), meeting the claim's latency limits where any point does, nearest the claim's
    per-user speed in log distance (the fastest point when the claim names no per-user speed). None when there is
    no evidence."""
    if evidence is None or evidence.empty:
        return None
    ev = evidence[evidence["hardware_match"] == evidence["hardware_match"].max()]
    ev = ev[ev["model_match"] == ev["model_match"].max()]
    # the claim's own lengths and precision where the evidence has them, as its comparison reads them
    at_lengths = np.array([lengths_match(claim, i, o) is True for i, o in zip(ev["isl"], ev["osl"])], dtype=bool)
    if at_lengths.any():
        ev = ev[at_lengths]
    precision = base_precision(claim.precision)
    if precision and (ev["precision"] == precision).any():
        ev = ev[ev["precision"] == precision]
    limits, _ = latency_limits(claim)
    if limits and meets_limits(ev, limits).any():   # a point the claim's limits allow, when there is one
        ev = ev[meets_limits(ev, limits)]
    target = per_user_value(claim)
    if math.isnan(target) or target <= 0:
        return ev.loc[ev["tok_s_per_user"].idxmax()]
    dist = np.abs(np.log(ev["tok_s_per_user"].astype(float) / target))
    return ev.loc[dist.idxmin()]


def differs_from_claim(claim: Claim, row) -> list[str]:
    """What a measured point's setting does not share with the claim: lengths, precision (stated ones only)."""
    out = []
    if lengths_match(claim, row.get("isl"), row.get("osl")) is False:
        out.append(f"lengths {lengths_text(row.get('isl'), row.get('osl'))}, not the claim's {claim.isl_osl}")
    precision = base_precision(claim.precision)
    if precision and str(row.get("precision")) != precision:
        out.append(f"precision {precision_label(row.get('precision'))}, not the claim's {precision_label(precision)}")
    return out


def capacity_point(claim: Claim, evidence: pd.DataFrame, at) -> tuple[object, str]:
    """The highest tok/s/GPU point at the speed point's model, hardware, precision and lengths, among points that
    meet the claim's latency limits when it has some; and a note on the limits."""
    if evidence is None or evidence.empty or at is None:
        return None, ""
    same = evidence[(evidence["model"] == at["model"]) & (evidence["hardware"] == at["hardware"])
                    & (evidence["precision"] == at["precision"]) & (evidence["isl"] == at["isl"])
                    & (evidence["osl"] == at["osl"]) & evidence["tok_s_per_gpu"].notna()]
    limits, where = latency_limits(claim)
    note = ""
    if limits and len(same):
        ok = same[meets_limits(same, limits)]
        note = (f"under {'; '.join(lim.text for lim in limits)} ({where}): {len(ok)} of {len(same)} points meet "
                "them")
        same = ok
    if same.empty:
        return None, note
    return same.loc[same["tok_s_per_gpu"].idxmax()], note


def _scope_answer(claim: Claim, sol: pd.DataFrame) -> tuple[str, str]:
    """A plain 1 / 8 / 72-GPU answer from the SOL table: the batch-1 bound on each scope (best plausible precision,
    one token per step, with the communication floor and its low–high range) and whether the NVL72 domain is
    needed for the claim's single-user speed. (long text, short text)"""
    user = per_user_value(claim)
    base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]] if len(sol) else sol
    if base.empty or math.isnan(user):
        return "", ""
    parts, reach = [], {}
    for g in sorted(base["gpus"].unique()):
        rows = base[base["gpus"] == g]
        r = rows.sort_values(["sol_tok_s_per_user_comm", "sol_tok_s_per_user"]).iloc[-1]
        rng = ("" if r["comm_where"] == "none" else
               f", {r['sol_tok_s_per_user_comm_low']:,.0f}–{r['sol_tok_s_per_user_comm_high']:,.0f} over the "
               f"interconnect table's latency range ({r['comm_basis']})")
        parts.append(f"{r['scope']} at {precision_label(r['precision'])}: {r['sol_tok_s_per_user_comm']:,.0f} "
                     f"tok/s/user{rng}")
        reach[int(g)] = (r["sol_tok_s_per_user_comm"] >= user, r["sol_tok_s_per_user_comm_high"] >= user,
                         r["sol_tok_s_per_user_achievable_comm"] >= user)
    small = [g for g in reach if g <= 8 and reach[g][0]]
    big = [g for g in reach if g > 8]
    if small:
        g = min(small)
        who = "one GPU" if g == 1 else f"{g} GPUs"
        comfortable = [c for c in reach if c <= 8 and reach[c][2]]
        if reach[g][2]:
            verdict = (f"The NVL72 domain is not needed for single-user speed: {who} already "
                       f"allow{'s' if g == 1 else ''} {user:,.0f} tok/s/user at batch 1, and more GPUs do not raise "
                       "the bound much because every layer waits for its collectives.")
            short = f"NVL72 not needed: {who} suffice{'s' if g == 1 else ''} at batch 1"
        else:
            gc = min(comfortable) if comfortable else None
            easy = (f"; {'one GPU' if gc == 1 else f'an {gc}-GPU node'} allows it below the achievable line"
                    if gc else "; no scope of up to 8 GPUs allows it below the achievable line")
            verdict = (f"The NVL72 domain is not needed for single-user speed: {who} allow{'s' if g == 1 else ''} "
                       f"{user:,.0f} tok/s/user at batch 1 only at near-peak bandwidth (above the achievable line)"
                       f"{easy}, and more GPUs do not raise the bound much because every layer waits for its "
                       "collectives.")
            short = (f"NVL72 not needed: {who} only at near-peak bandwidth"
                     + (f", {'one GPU' if gc == 1 else f'an {gc}-GPU node'} comfortably" if gc else ""))
    elif big and any(reach[g][0] for g in big):
        verdict = f"Only a larger domain ({', '.join(f'{g} GPUs' for g in big if reach[g][0])}) allows it at batch 1."
        short = "needs more than one 8-GPU node at batch 1"
    elif any(v[1] for v in reach.values()):
        verdict = ("No scope allows it at the central collective latency; only the low end of the latency range "
                   "would (an assumption, not a measurement).")
        short = "reachable only at the low end of the assumed collective latency"
    else:
        verdict = ("No scope allows it at batch 1 without speculative decoding: adding GPUs adds collectives, so "
                   "the bound stops growing with the GPU count.")
        short = "no scope reaches it at batch 1 without speculative decoding"
    return ("Batch-1 bounds with the communication floor — " + "; ".join(parts) + ". " + verdict), short


def five_answers(claim: Claim, sol: pd.DataFrame, evidence: pd.DataFrame, summary: pd.DataFrame,
                 pairs: tuple[list, list] = ([], [])) -> dict:
    """The five questions of DESIGN.md answered from the claim, the evidence rows, the roofline and the clean
    precision pairs."""
    user = per_user_value(claim)
    like = stand_ins(evidence)  # answers rest on the claim's model or one that may stand in for it, never others
    others = sorted(set(evidence.drop(like.index)["model"].dropna().astype(str))) if len(evidence) else []
    evidence = like
    point = speed_point(claim, evidence)
    out: dict[str, Answer] = {}

    # 1. batch size
    if is_stated(claim.batch_text):
        out["batch"] = Answer(QUESTIONS["batch"], STATED, f"{claim.batch_text}", short=str(claim.batch_text))
    elif point is not None and not math.isnan(user) and point.get("tier") == "proxy":
        conc = point.get("concurrency")
        above = user > point["tok_s_per_user"]
        out["batch"] = Answer(
            QUESTIONS["batch"], INFERRED,
            f"Not stated, and no point of {claim.model} to check it. Proxy evidence only (another model: "
            f"{_who(point).replace(' (proxy: another model)', '')}): its point nearest the claimed speed reaches "
            f"{point['tok_s_per_user']:,.0f} tok/s/user "
            f"at concurrency {fmt_num(conc)}. Speeds of different models are not compared"
            + ("; a per-user figure above every measured point is most likely a single-user (batch 1) figure."
               if above else "."), [point["row"]], [evidence_object(point)],
            short="not stated; likely 1 user (proxy evidence)" if above else "not stated (proxy evidence only)")
    elif point is not None and not math.isnan(user):
        conc = point.get("concurrency")
        ratio = user / point["tok_s_per_user"]
        tail = (", so it implies a batch no larger than that, most likely one user." if ratio > 1 else
                f" ({ratio:.2f}× of that speed).")
        out["batch"] = Answer(
            QUESTIONS["batch"], INFERRED,
            f"Not stated. The measured point nearest the claimed speed ({_who(point)}) reaches "
            f"{point['tok_s_per_user']:,.0f} tok/s/user at concurrency {fmt_num(conc)}; the claim is "
            f"{ratio:.1f}× that speed" + tail, [point["row"]], [evidence_object(point)],
            short=f"not stated; {'≈1 user' if ratio > 1 else f'concurrency ≤ {fmt_num(conc)}'}")
    else:
        out["batch"] = Answer(
            QUESTIONS["batch"], NOT_STATED,
            "Not stated, and no similar measured points" + (
                f" (of {claim.model} or of a model that may stand in for it: {PROXY_RULE}). The points on its "
                f"hardware are other models ({', '.join(others)}): their speeds say nothing about this model's batch."
                if others else "."), short="not stated")

    # 2. large batch (capacity, under the latency limits that apply)
    cap, note = capacity_point(claim, evidence, point)
    if cap is not None:
        out["large_batch"] = Answer(
            QUESTIONS["large_batch"], INFERRED,
            f"The claim does not say. On the group of the point the speed answer uses ({_who(cap)}"
            + "".join(f"; {d}" for d in differs_from_claim(claim, cap)) + ") capacity is "
            f"{cap['tok_s_per_gpu']:,.0f} tok/s/GPU at concurrency {fmt_num(cap.get('concurrency'))}, where each "
            f"user gets {cap['tok_s_per_user']:,.1f} tok/s and {latency_text(cap)}"
            + (f" ({note})." if note else " (no latency limit stated: this is the capacity point's own tail "
                                          "latency).")
            + " The fastest per-user point is the single-user end, not the capacity.",
            [cap["row"]], [evidence_object(cap)],
            short=f"{cap['tok_s_per_gpu']:,.0f} tok/s/GPU at {cap['tok_s_per_user']:,.0f} tok/s/user, "
                  f"TTFT p99 {_ms(cap.get('ttft_ms_p99'))}" + (" (proxy)" if cap.get("tier") == "proxy" else ""))
    elif note:
        out["large_batch"] = Answer(QUESTIONS["large_batch"], NOT_STATED,
                                    f"No measured capacity meets the claim's latency limits ({note}).",
                                    short="no point meets the latency limits")
    elif claim.kind == "per-GPU" and is_stated(claim.batch_text):
        out["large_batch"] = Answer(QUESTIONS["large_batch"], STATED, f"Measured at {claim.batch_text}.",
                                    short=str(claim.batch_text))
    else:
        out["large_batch"] = Answer(QUESTIONS["large_batch"], NOT_STATED,
                                    "Not stated, and no measured points to infer capacity from.", short="not stated")

    # 3. scope
    n = claim.number("n_gpus")
    # batch-1 bounds say what a single user's speed needs; a throughput claim's scope is its deployment's GPU count
    long, short = _scope_answer(claim, sol) if claim.kind == "per-user" else ("", "")
    if not math.isnan(n):
        out["scope"] = Answer(QUESTIONS["scope"], STATED, f"{n:g} GPUs ({claim.scope}). {long}".strip(),
                              short=f"{n:g} GPUs")
    else:
        text = (f"Not stated ({claim.scope})." if is_stated(claim.scope) else "Not stated.") + (" " + long if long
                                                                                                   else "")
        rows, ev = [], []
        if point is not None:
            text += (f" The measured point nearest the claimed speed ran on {fmt_num(point.get('n_gpus'))} GPUs "
                     f"(scope {point.get('scope')}; {_who(point)}).")
            rows, ev = [point["row"]], [evidence_object(point)]
        out["scope"] = Answer(QUESTIONS["scope"], INFERRED if (rows or long) else NOT_STATED, text, rows, ev,
                              short=short or "not stated")

    # 4. latency: the speed answer's own point
    limits, where = latency_limits(claim)
    if is_stated(claim.latency):
        extra = f" Applied as limits: {'; '.join(lim.text for lim in limits)}." if limits else ""
        out["latency"] = Answer(QUESTIONS["latency"], STATED, f"{claim.latency}.{extra}".replace("..", "."),
                                short=str(claim.latency))
    else:
        parts = ["TTFT and TPOT not stated" + (f"; {where.removeprefix('the ')} apply" if limits else "") + "."]
        rows, ev = [], []
        if not math.isnan(user):
            parts.append(f"A per-user speed of {user:,.0f} tok/s means a TPOT of about {1000 / user:.2f} ms.")
        if point is not None and pd.notna(point.get("ttft_ms_p50")):
            parts.append(f"At the point used for the speed answer ({_who(point)}, "
                         f"{point['tok_s_per_user']:,.0f} tok/s/user): {latency_text(point)}.")
            rows, ev = [point["row"]], [evidence_object(point)]
        out["latency"] = Answer(QUESTIONS["latency"], INFERRED if rows else NOT_STATED, " ".join(parts), rows, ev,
                                short=(f"not stated; TTFT p99 {_ms(point.get('ttft_ms_p99'))} at the speed point"
                                       if rows else "not stated"))

    # 5. precision: the roofline ratio and clean pairs only; confounded pairs listed apart
    clean, confounded = pairs
    summ = pairs_summary(clean)
    roof = ""
    if {"fp8", "fp4"} <= set(sol.get("precision", [])):
        a, b = _sol_value(sol, "fp8", 1), _sol_value(sol, "fp4", 1)
        roof = (f"The roofline alone makes FP4 {b / a:.2f}× faster than FP8 at batch 1 ({b:,.0f} vs {a:,.0f} "
                "tok/s/user on one GPU).")
    if summ["n"]:
        proxy = any(specs.match_model_name(str(p["a"]["model"])) != claim.model_table for p in clean)
        measured = (f"Measured FP4/FP8 over {summ['n']} matched pair{'s' if summ['n'] > 1 else ''} (equal model, "
                    "hardware, lengths, speculative decoding, framework and disaggregation; fastest per-user point "
                    f"of each side): median {summ['median']:.2f}×, range {summ['low']:.2f}–{summ['high']:.2f}×"
                    + (" (proxy: another model's points)" if proxy else "") + ".")
        if summ["above_roofline"]:
            measured += (f" {summ['above_roofline']} matched pair{'s' if summ['above_roofline'] > 1 else ''} exceed"
                         f"{'s' if summ['above_roofline'] == 1 else ''} the roofline's own FP4/FP8 ratio for the "
                         "same points (a batch-1 ratio; the two fastest points may run at different concurrencies, "
                         "so this alone shows nothing beyond precision).")
    else:
        measured = "No matched FP4/FP8 pair in the evidence."
    if confounded:
        measured += (f" {len(confounded)} confounded pair{'s' if len(confounded) > 1 else ''} (listed apart, not "
                     "used above): " + "; ".join(
                         f"{p['ratio']:.2f}× at {lengths_text(p['a']['isl'], p['a']['osl'])} differing in "
                         + ", ".join(p["confounders"]) for p in confounded) + ".")
    ev = [x for p in clean for x in (p["a"], p["b"])]
    if claim.precision != NOT_STATED:
        out["precision"] = Answer(QUESTIONS["precision"], STATED, f"{claim.precision_text}. {measured}",
                                  [e["source"] for e in ev], ev, short=str(claim.precision_text))
    else:
        text = (f"Not stated ({claim.precision_text})." if is_stated(claim.precision_text) else "Not stated.")
        text += " " + " ".join(x for x in (roof, measured) if x)
        short = (f"not stated; matched FP4/FP8 pairs median {summ['median']:.2f}×" if summ["n"] else "not stated")
        out["precision"] = Answer(QUESTIONS["precision"], INFERRED if ev or roof else NOT_STATED, text,
                                  [e["source"] for e in ev], ev, short=short)
    return out


def _sol_value(sol: pd.DataFrame, precision: str, gpus: int, tau: float = 1.0, col="sol_tok_s_per_user") -> float:
    hit = sol[(sol["precision"] == precision) & (sol["gpus"] == gpus) & (sol["tokens_per_step"] == tau)]
    return float(hit[col].iloc[0]) if len(hit) else math.nan
