"""The six answers in words: one sentence function per question, each reading only its fact.

Each function takes the claim and the fact of :mod:`analysis.claims.answers` and returns (the answer in full, the
answer in a few words for the card's first table, the context): the answer rests on the claim's own model; another
model's points (proxy) and roofline bounds are only ever context, labelled. Nothing here selects or computes
evidence.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.claims.evidence import PROXY_RULE
from analysis.claims.labels import PER_USER_DEFS, fmt_num, lengths_text, precision_label, sol_precision
from analysis.claims.pairs import DATE_WINDOW_DAYS
from analysis.claims.point_words import point_notes
from analysis.claims.registry import Claim


def _ms(v) -> str:
    if v is None or pd.isna(v):
        return "n/a"
    return f"{v / 1000:,.1f} s" if v >= 1000 else f"{v:,.1f} ms"


def who(p: dict) -> str:
    """"DeepSeek-R1-0528 on GB300 NVL72, FP4, ISL 1,024 / OSL 8,192, spec decode mtp (proxy: another model)"."""
    from analysis.claims.checks import lengths_label

    label = " (proxy: another model)" if p.get("tier") == "proxy" else ""
    return (f"{p['model']} on {p['hardware']}, {str(p['precision']).upper()}, "
            f"{lengths_label(p.get('isl'), p.get('osl'), p.get('workload'))}, spec decode {p.get('spec_decode')}{label}")


def latency_text(p: dict) -> str:
    """TTFT and TPOT at the statistics the point has: p50 / p99, or the mean where a source gives only means."""
    def known(k):
        return p.get(k) is not None and not pd.isna(p.get(k))

    if not known("ttft_ms_p50") and not known("tpot_ms_p50") and (known("ttft_ms_mean") or known("tpot_ms_mean")):
        return (f"TTFT mean {_ms(p.get('ttft_ms_mean'))}, TPOT mean {_ms(p.get('tpot_ms_mean'))} (the source gives "
                "means only)")
    burst = (" (the start-up burst of a fixed-concurrency sweep)" if p.get("closed_loop")
             and known("ttft_ms_p99") else "")
    return (f"TTFT p50 {_ms(p.get('ttft_ms_p50'))} / p99 {_ms(p.get('ttft_ms_p99'))}{burst}, "
            f"TPOT p50 {_ms(p.get('tpot_ms_p50'))} / p99 {_ms(p.get('tpot_ms_p99'))}")




def cite(p: dict) -> str:
    """Where a point is read: the publication's URL (table and row) for a published row, else its file and line;
    with the statistic its per-user speed is read at."""
    url = p.get("source_url")
    where = str(url) if url and str(url) not in ("unknown", "nan") else str(p.get("source") or p.get("row"))
    stat = PER_USER_DEFS.get(str(p.get("tok_s_per_user_def")), "")
    return (f"{stat}; " if stat else "") + where


def conditions(p: dict) -> str:
    """``4 GPUs (scope node), concurrency 1, agentx workload, dspark``: what a reader must know of a point."""
    parts = [f"{fmt_num(p.get('n_gpus'))} GPUs (scope {p.get('scope')})", f"concurrency {fmt_num(p.get('concurrency'))}"]
    return ", ".join(parts) + f"; {point_notes(p, with_method=False)}"


def _difference(d: dict) -> str:
    if d["condition"] == "lengths":
        return f"lengths {d['measured']}, not the claim's {d['claimed']}"
    return f"precision {precision_label(d['measured'])}, not the claim's {precision_label(d['claimed'])}"


def _no_own_point(claim: Claim) -> str:
    return f"Not stated, and no point of {claim.model} (or of its architecture) to check it."


def batch_words(claim: Claim, f: dict) -> tuple[str, str, str]:
    if f["rule"] == "stated":
        return f["text"], f["text"], ""
    if f["rule"] == "proxy-nearest":
        p = f["point"]
        above = f["claimed_tok_s_per_user"] > p["tok_s_per_user"]
        context = (f"Proxy evidence (another model: {who(p).replace(' (proxy: another model)', '')}): its point "
                   f"nearest the claimed speed reaches {p['tok_s_per_user']:,.0f} tok/s/user at concurrency "
                   f"{fmt_num(p.get('concurrency'))} ({cite(p)}). Speeds of different models are not compared"
                   + ("; a per-user figure above every measured point is most likely a single-user (batch 1) "
                      "figure." if above else "."))
        return _no_own_point(claim), "not stated (no point of this model)", context
    if f["rule"] == "nearest":
        p, ratio = f["point"], f["ratio"]
        conc = p.get("concurrency")
        tail = (", so it implies a batch no larger than that, most likely one user." if ratio > 1 else
                f" ({ratio:.2f}× of that speed).")
        text = (f"Not stated. The measured point nearest the claimed speed ({who(p)}; {conditions(p)}; {cite(p)}) "
                f"reaches {p['tok_s_per_user']:,.0f} tok/s/user at concurrency {fmt_num(conc)}; the claim is "
                f"{ratio:.1f}× that speed" + tail)
        o = f.get("other_revision")
        if o:
            text += (f" Faster, on another checkpoint of the same architecture ({o['model']}, labelled: not the "
                     f"claim's model): {o['tok_s_per_user']:,.0f} tok/s/user ({conditions(o)}; {cite(o)}).")
        fastest = max([p["tok_s_per_user"]] + ([o["tok_s_per_user"]] if o else []))
        if fastest < f["claimed_tok_s_per_user"]:
            text += (f" No measured point of this model or its architecture reaches the claimed "
                     f"{f['claimed_tok_s_per_user']:,.0f} tok/s/user.")
        return text, f"not stated; {'≈1 user' if ratio > 1 else f'concurrency ≤ {fmt_num(conc)}'}", ""
    others = f["other_models"]
    return ("Not stated, and no similar measured points" + (
        f" (of {claim.model} or of a model that may stand in for it: {PROXY_RULE}). The points on its "
        f"hardware are other models ({', '.join(others)}): their speeds say nothing about this model's batch."
        if others else "."), "not stated", "")


def _ttft_short(p: dict) -> str:
    if pd.notna(p.get("ttft_ms_p50")):
        return f"TTFT p50 {_ms(p.get('ttft_ms_p50'))}"
    if pd.notna(p.get("ttft_ms_mean")):
        return f"TTFT mean {_ms(p.get('ttft_ms_mean'))}"
    return "TTFT n/a"


def _limits_note(note: dict) -> str:
    return f"under {note['limits']} ({note['where']}): {note['met']} of {note['of']} points meet them"


def large_batch_words(claim: Claim, f: dict) -> tuple[str, str, str]:
    long, short = _large_batch(claim, f)
    if f["rule"] == "capacity" and f["point"].get("tier") == "proxy":
        return _no_own_point(claim), "not stated (no point of this model)", "Proxy evidence: " + long
    return long, short, ""


def _large_batch(claim: Claim, f: dict) -> tuple[str, str]:
    if f["rule"] == "capacity":
        p, note, free = f["point"], f["limits"], f.get("unconstrained")
        on_mean = bool(note and note.get("read_on") == "mean")  # the source gives a mean only (the fact says)
        under = f" under {note['limits']}" if note else ""
        end = (" (the highest concurrency its source measured: where the sweep stopped, not necessarily where "
               "throughput saturates)" if f.get("sweep_end") else "")
        tail = (f" ({_limits_note(note)})." if note else
                f" ({f['no_limit_reason']}: this is the capacity point's own latency)." if f.get("no_limit_reason")
                else " (no latency limit stated: this is the capacity point's own tail latency).")
        second = (f" Unconstrained by latency, the highest is {free['tok_s_per_gpu']:,.0f} tok/s/GPU at concurrency "
                  f"{fmt_num(free.get('concurrency'))} ({free['tok_s_per_user']:,.1f} tok/s/user, "
                  f"{latency_text(free)})." if free else "")
        if on_mean:
            tail = f" ({_limits_note(note)}; read on the TTFT mean, the only statistic the source gives)."
        return (f"The claim does not say. On the group of the point the speed answer uses ({who(p)}"
                + "".join(f"; {_difference(d)}" for d in f["differs"])
                + f"; {cite(p)}; {point_notes(p, 'gpu', with_method=False)}) "
                f"capacity{under} is "
                f"{p['tok_s_per_gpu']:,.0f} tok/s/GPU at concurrency {fmt_num(p.get('concurrency'))}{end}, where each "
                f"user gets {p['tok_s_per_user']:,.1f} tok/s and {latency_text(p)}" + tail + second
                + " The fastest per-user point is the single-user end, not the capacity.",
                # "not stated; evidence: …" as the other answers' short forms: the number is the evidence's
                # capacity, not a property the claim states
                f"not stated; evidence: {p['tok_s_per_gpu']:,.0f} tok/s/GPU at {p['tok_s_per_user']:,.0f} tok/s/user"
                + (f" under {note['limits']}" + (" (default)" if note.get("default") else "") if note else "")
                + ", " + _ttft_short(p)
                + (" (proxy)" if p.get("tier") == "proxy" else ""))
    if f["rule"] == "no-point-meets-limits":
        return (f"No measured capacity meets the claim's latency limits ({_limits_note(f['limits'])}).",
                "no point meets the latency limits")
    if f["rule"] == "stated":
        return f"Measured at {f['text']}.", f["text"]
    return "Not stated, and no measured points to infer capacity from.", "not stated"


def _gpus(g: int) -> str:
    return "one GPU" if g == 1 else f"{g} GPUs"


# What the speed-of-light bounds assume of the collectives, said before any verdict drawn from them: the step-time
# model's answer pays them after each layer's read and may disagree.
HIDDEN = "If every collective hid under a weight read (these bounds)"


def scope_bounds_words(f: dict) -> tuple[str, str]:
    """The batch-1 bounds per scope and the verdict they settle on, in words (empty without bounds)."""
    bounds, v, user = f["bounds"], f["verdict"], f["claimed_tok_s_per_user"]
    if not bounds:
        return "", ""
    parts = []
    for b in bounds:
        rng = ("" if b["comm_where"] == "none" else
               f", {b['low']:,.0f}–{b['high']:,.0f} over the collective latency's range ("
               + ("assumed: no measurement for this interconnect" if b["comm_basis"] == "assumption" else
                  f"{b['comm_basis']} latency, data/specs/collectives.csv") + ")")
        parts.append(f"{b['scope']} at {sol_precision(b)}: {b['bound']:,.0f} tok/s/user{rng}")
    rule = v["rule"]
    small = max((b["bound"] for b in bounds if b["gpus"] <= 8), default=math.nan)
    lower = [b for b in bounds if b["gpus"] > 8 and b["bound"] < small]
    more = ("; more GPUs do not raise the bound: every layer waits for its collectives"
            + (", and " + ", ".join(f"{b['scope']} lower it to {b['bound']:,.0f}" for b in lower) if lower else "")
            + ".")
    if rule == "node-suffices":
        g = v["gpus"]
        s = "s" if g == 1 else ""
        verdict = (f"{HIDDEN}, the NVL72 domain would not be needed for single-user speed: {_gpus(g)} already "
                   f"allow{s} {user:,.0f} tok/s/user at batch 1" + more)
        short = f"NVL72 not needed: {_gpus(g)} suffice{s} at batch 1"
    elif rule == "node-undecided":
        g, b = v["gpus"], v["bound"]
        verdict = (f"{HIDDEN}, {_gpus(g)} would allow {user:,.0f} tok/s/user at batch 1 only if each collective takes "
                   f"≤ {b['needed_us']:,.1f} µs; the table gives {b['latency_us']:,.1f} µs "
                   f"({b['comm_basis'] or 'assumed'}, not measured at this scope), too close to decide, and over its "
                   f"range of latencies the bound runs from {b['low']:,.0f} to {b['high']:,.0f} tok/s/user: that "
                   f"latency decides whether {_gpus(g)} reach the claim at batch 1" + more)
        short = f"undecided: {_gpus(g)} only at ≤ {b['needed_us']:,.1f} µs per collective"
    elif rule == "node-near-peak":
        g, gc = v["gpus"], v["comfortable_gpus"]
        s = "s" if g == 1 else ""
        easy_who = ("one GPU" if gc == 1 else f"an {gc}-GPU node") if gc else None
        easy = (f"; {easy_who} allows it below the achievable line" if gc else
                "; no scope of up to 8 GPUs allows it below the achievable line")
        verdict = (f"{HIDDEN}, the NVL72 domain would not be needed for single-user speed: {_gpus(g)} allow{s} "
                   f"{user:,.0f} tok/s/user at batch 1 only at near-peak bandwidth (above the achievable line){easy}"
                   + more)
        short = f"NVL72 not needed: {_gpus(g)} only at near-peak bandwidth" + (
            f", {easy_who} below the achievable line" if gc else "")
    elif rule == "larger-domain":
        verdict = f"Only a larger domain ({', '.join(f'{g} GPUs' for g in v['gpus'])}) allows it at batch 1."
        short = "needs more than one 8-GPU node at batch 1"
    elif rule == "low-latency-only":
        verdict = ("No scope allows it at the central collective latency; only the low end of the latency range "
                   "would (an assumption, not a measurement).")
        short = "reachable only at the low end of the assumed collective latency"
    else:
        verdict = ("No scope allows it at batch 1 without speculative decoding: adding GPUs adds collectives, so "
                   "the bound stops growing with the GPU count.")
        short = "no scope reaches it at batch 1 without speculative decoding"
    return "Batch-1 bounds with the communication floor — " + "; ".join(parts) + ". " + verdict, short


def _us(x) -> str:
    return "–" if x is None or pd.isna(x) else (f"{x:,.1f} µs" if x < 100 else f"{x:,.0f} µs")


def model_scopes_words(scopes: list[dict]) -> str:
    """What the step-time model's bound (datasheet bandwidth, no overhead, measured collective latencies) says each
    scope needs, over the τ range, and which number decides it."""
    if not scopes:
        return ""
    lo_tau, hi_tau = scopes[0]["tau"]
    taus = f"τ = {lo_tau:.2f}" if lo_tau == hi_tau else f"τ from {lo_tau:.2f} to {hi_tau:.2f}"
    verify = scopes[0].get("verify_tokens") or []
    if len(verify) == 2 and verify[1] > hi_tau:  # the drafted tokens + 1 a verify step reads, as the curve ran
        taus += f", {fmt_num(verify[1])} tokens verified per step at {hi_tau:.2f}"
    parts = []
    for sc in scopes:
        budget = sc["step_budget_ms"]
        hbm = sc["hbm_ms"]
        head = (f"{sc['scope']}: a step of {budget[0]:.2f}" + (f"–{budget[1]:.2f}" if budget[1] != budget[0] else "")
                + f" ms, HBM alone {hbm[0]:.2f}" + (f"–{hbm[1]:.2f}" if hbm[1] != hbm[0] else "") + " ms"
                + ("" if sc["fits"] else " (the weights do not fit)"))
        verdicts = (sc["verdict"][0] if sc["verdict"][0] == sc["verdict"][1] or lo_tau == hi_tau else
                    f"at τ {lo_tau:.2f} {sc['verdict'][0]}, at τ {hi_tau:.2f} {sc['verdict'][1]}")
        if not sc["collectives_per_step"]:
            parts.append(head + f" ({verdicts})")
            continue
        need = [x for x in sc["needs_us_per_collective"]]
        need_text = " to ".join(dict.fromkeys(_us(max(x, 0.0)) if pd.notna(x) else "–" for x in need))
        measured = sc["measured_dispatch_plus_combine_us"]
        where = ", ".join(sc["libraries"]) or "measured collectives"
        layout = f" ({sc['layout']})" if sc.get("layout") else ""
        others = "".join(
            f"; sharded by {o['layout']} instead: ≤ "
            + " to ".join(dict.fromkeys(_us(max(x, 0.0)) if pd.notna(x) else "–" for x in o["needs_us_per_collective"]))
            + f" each against {_us(o['measured_us_per_collective'])} measured"
            + (f" ({_us(o['measured_dispatch_plus_combine_us'])} dispatch + combine)"
               if pd.notna(o["measured_dispatch_plus_combine_us"]) else "")
            + f" [{', '.join(o['libraries']) or 'measured collectives'}; {_read_from(o)}{', '.join(o['status'])}]"
            for o in sc.get("other") or [])
        if not sc.get("other") and sc.get("tp_limit") and sc.get("layout") != "TP all-reduce":
            others = f"; TP cannot split its {sc['tp_limit']} attention heads {sc['gpus']} ways"
        parts.append(head + f"; its {sc['collectives_per_step']} collectives per step{layout} may take ≤ {need_text} "
                     f"each, measured {_us(sc['measured_us_per_collective'])} per collective"
                     + (f" ({_us(measured)} dispatch + combine)" if pd.notna(measured) else "")
                     + f" [{where}; {_read_from(sc)}{', '.join(sc['status'])}]: {verdicts}{others}")
    decides = ("the acceptance length decides it: " if lo_tau != hi_tau and
               len({v for sc in scopes for v in sc["verdict"]}) > 1 else "")
    return (f"Model (the step-time model's bound: datasheet bandwidth, no fixed overhead, measured collective "
            f"latencies paid after each layer's HBM read, not overlapped with it as the speed-of-light table's "
            f"'with comm (overlapped)' column assumes; a mixture of experts sharded by whichever of TP and EP its "
            f"measured collectives make faster; "
            f"{taus}): {decides}" + "; ".join(parts) + ".")


def _thresholds(scopes: list[dict]) -> str:
    """"; on the golden curve's rows, 1 GPU and the 4-GPU tray reach it from τ 1.81 (1 drafted, thinking on), ..."
    from each scope's ``reaches_from`` (scopes sharing a row named together); "" where no scope carries one."""
    if not any("reaches_from" in sc for sc in scopes):
        return ""
    by_row: dict = {}
    never = []
    whose = sorted({sc["reaches_from"]["model"] for sc in scopes if sc.get("reaches_from")})
    for sc in scopes:
        if "reaches_from" not in sc:
            continue
        r = sc["reaches_from"]
        if r is None:
            never.append(sc["scope"])
        else:
            by_row.setdefault((r["tau"], r["draft_tokens"], r["mode"]), []).append(sc["scope"])

    def names(xs: list[str]) -> str:
        return ", ".join(xs[:-1]) + (" and " if len(xs) > 1 else "") + xs[-1]

    parts = [f"on {names(xs)} from τ {tau:.2f} ({k} drafted, {mode.replace('_', ' ')})"
             for (tau, k, mode), xs in sorted(by_row.items())]
    if never:
        parts.append(f"on {names(never)} at none of them")
    curve = f"{', '.join(whose)}'s golden curve" if whose else "the golden curve"
    return (f"; read at the acceptance lengths {curve} measured (each verifying its drafted tokens + 1), it reaches "
            "the claim " + ", and ".join(parts))


def _read_from(sc: dict) -> str:
    """"measured on GB200 at 8 GPUs, read for this scope: " where a scope's latency is another part's or group's
    measurement (its status then says extrapolated); "" where it was measured as used."""
    on = sc.get("measured_on") or []
    if not on or sc.get("status") == ["measured"]:
        return ""
    return "measured on " + ", ".join(f"{h} at {g} GPUs" for h, g in on) + ", read for this scope: "


def model_scopes_verdict(scopes: list[dict]) -> str:
    """One sentence from the step-time model's bound (:func:`model_scopes_words` has the whole of it): which scopes
    reach the claim's speed at the lowest and the highest τ and, where a multi-GPU scope misses at the lowest, the
    latency that decides the one nearest to reaching it ("" without scopes)."""
    if not scopes:
        return ""
    lo, hi = scopes[0]["tau"]

    def reach(i: int) -> str:
        names = [sc["scope"] for sc in scopes if sc["reaches"][i]]
        return ("no scope reaches it" if not names else
                ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] + " reach"
                + ("es" if len(names) == 1 else "") + " it")

    text = ("The step-time model's bound (datasheet bandwidth, no fixed overhead, the measured collective latencies "
            "paid after each layer's HBM read): " + (f"at τ {lo:.2f} {reach(0)}" if lo == hi else
                                                     f"at τ {lo:.2f} {reach(0)}, at τ {hi:.2f} {reach(1)}"))
    text += _thresholds(scopes)
    reached_low = any(sc["reaches"][0] for sc in scopes)  # a scope already reaches it: nothing left to decide
    near = [sc for sc in scopes if not reached_low and sc["collectives_per_step"] and sc["fits"] and not sc["reaches"][0]
            and pd.notna(sc["needs_us_per_collective"][0]) and sc["needs_us_per_collective"][0] > 0
            and pd.notna(sc["measured_us_per_collective"])]
    if near:
        sc = max(near, key=lambda s: s["needs_us_per_collective"][0] / s["measured_us_per_collective"])
        text += (f"; what decides it at τ {lo:.2f} is the collective latency: on {sc['scope']} the "
                 f"{sc['collectives_per_step']} collectives per step may take ≤ {_us(sc['needs_us_per_collective'][0])}"
                 f" each, against {_us(sc['measured_us_per_collective'])} measured"
                 + (f" ({', '.join(sc['status'])}: {', '.join(sc['libraries'])}, "
                    f"{_read_from(sc).rstrip(': ')})" if sc.get("status") and sc["status"] != ["measured"] else ""))
    return text + "."


def scope_words(claim: Claim, f: dict) -> tuple[str, str, str]:
    """The scope from the evidence (GPU counts measured); the roofline's batch-1 bounds are context, labelled."""
    long, roof_short = scope_bounds_words(f)
    context = ("Roofline (batch-1 bounds, not measurements): " + long) if long else ""
    if f["rule"] == "stated":
        n = f["n_gpus"]
        return f"{n:g} GPUs ({f['scope_text']}).", f"{n:g} GPUs", context
    text = f"Not stated ({f['scope_text']})." if f["scope_stated"] else "Not stated."
    p = f.get("point")
    if p is None or p.get("tier") == "proxy":
        if p is not None:
            context = (f"Proxy evidence: the nearest point of another model ran on {fmt_num(p.get('n_gpus'))} GPUs "
                       f"({who(p)}). " + context).strip()
        model = model_scopes_words(f.get("model_scopes") or [])
        return text + " No point of this model to measure it by." + (" " + model if model else ""), "not stated", \
            context
    gpus = f["measured_gpu_counts"]
    text += (f" The measured point nearest the claimed speed ran on {fmt_num(p.get('n_gpus'))} GPUs "
             f"(scope {p.get('scope')}; {who(p)}; {cite(p)}).")
    if gpus:
        hw = str(p.get("hardware"))
        where = "this hardware" if hw == str(claim.hardware) else (
            "hardware the points do not name" if hw in ("unknown", "None", "nan") else hw)
        text += (f" Points of this model on {where} ran on {', '.join(f'{g:g}' for g in gpus)} GPUs"
                 + (": none spans a whole rack-scale NVLink domain, so whether the claim needs one is not measured."
                    if "NVL72" in str(claim.hardware) and max(gpus) < 72 else "."))
    short = (f"not stated; measured on {', '.join(f'{g:g}' for g in gpus)} GPUs" if gpus else "not stated")
    model = model_scopes_words(f.get("model_scopes") or [])
    return text + (" " + model if model else ""), short, context


def latency_words(claim: Claim, f: dict) -> tuple[str, str, str]:
    if f["rule"] == "stated":
        extra = f" Applied as limits: {'; '.join(f['limits'])}." if f["limits"] else ""
        return f"{f['text']}.{extra}".replace("..", "."), f["text"], ""
    p = f["point"]
    if p is not None and p.get("tier") == "proxy":
        own, _ = _latency(claim, {**f, "point": None})
        return own, "not stated", (f"Proxy evidence ({who(p)}, {p['tok_s_per_user']:,.0f} tok/s/user): "
                                   f"{latency_text(p)}.")
    long, short = _latency(claim, f)
    return long, short, ""


def _latency(claim: Claim, f: dict) -> tuple[str, str]:
    where = f["limits_from"]
    parts = ["TTFT and TPOT not stated" + (f"; {where.removeprefix('the ')} apply" if where else "") + "."]
    user = f["claimed_tok_s_per_user"]
    if not math.isnan(user):
        parts.append(f"A per-user speed of {user:,.0f} tok/s means a TPOT of about {1000 / user:.2f} ms.")
    p = f["point"]
    if p is not None:
        parts.append(f"At the point used for the speed answer ({who(p)}, {p['tok_s_per_user']:,.0f} tok/s/user; "
                     f"{cite(p)}): {latency_text(p)}.")
    if p is None:
        return " ".join(parts), "not stated"
    ttft = ("p99", p.get("ttft_ms_p99")) if pd.notna(p.get("ttft_ms_p99")) else \
        ("p50", p.get("ttft_ms_p50")) if pd.notna(p.get("ttft_ms_p50")) else ("mean", p.get("ttft_ms_mean"))
    return " ".join(parts), f"not stated; TTFT {ttft[0]} {_ms(ttft[1])} at the speed point"


def precision_words(claim: Claim, f: dict) -> tuple[str, str, str]:
    summ, roof = f["pairs"], f["roofline"]
    roof_text = (f"The roofline alone (batch-1 weight and KV bytes) makes FP4 {roof['ratio']:.2f}× faster than FP8 "
                 f"at batch 1 ({roof['fp4']:,.0f} vs {roof['fp8']:,.0f} tok/s/user on one GPU)." if roof else "")
    conf = f["confounded"]
    if summ["n"]:
        measured = (f"Measured FP4/FP8 over {summ['n']} matched pair{'s' if summ['n'] > 1 else ''} (equal model, "
                    "hardware, lengths, speculative decoding and its drafts per step where known, framework, "
                    "disaggregation and concurrency, measured "
                    f"within {DATE_WINDOW_DAYS} days; per-user speed at the lowest concurrency both sides measured): "
                    f"median {summ['median']:.2f}×, range {summ['low']:.2f}–{summ['high']:.2f}×"
                    + (" (proxy: another model's points)" if f["pairs_proxy"] else "") + ".")
        n_above = summ["above_roofline"]
        if n_above:
            measured += (f" {n_above} matched pair{'s' if n_above > 1 else ''} exceed{'s' if n_above == 1 else ''} "
                         "the batch-1 weight-bytes ratio of the same points (the roofline's FP4/FP8; it bounds weight "
                         "reads only, not kernels, KV or scheduling, so it is no ceiling for the measured ratio).")
    else:
        measured = "No matched FP4/FP8 pair in the evidence."
    if conf:
        measured += (f" {len(conf)} confounded pair{'s' if len(conf) > 1 else ''} (listed apart, not used above): "
                     + "; ".join(f"{p['ratio']:.2f}× at {lengths_text(p['isl'], p['osl'])} differing in "
                                 + ", ".join(p["confounders"]) for p in conf) + ".")
    context = ("Roofline (not a measurement): " + roof_text) if roof_text else ""
    if f.get("model"):
        context = (context + " " + model_precision_text(f["model"])).strip()
    if f["pairs_proxy"] and (summ["n"] or conf):
        context = (context + " Proxy evidence (another model's points): " + measured).strip()
        measured = "No matched FP4/FP8 pair of this model."
    if f["rule"] == "stated":
        return f"{f['text']}. {measured}", f["text"], context
    text = (f"Not stated ({f['text']})." if f["text_stated"] else "Not stated.") + " " + measured
    return text, (f"not stated; matched FP4/FP8 pairs median {summ['median']:.2f}×"
                  if summ["n"] and not f["pairs_proxy"] else "not stated"), context


def model_precision_text(m: dict) -> str:
    """The calibrated model's FP4/FP8 at the shipped recipe, worded (facts from ``answers.model_precision``)."""
    u, rec = m["tok_s_per_user"], m["recipes"]
    fp4 = ("FP4 (the shipped recipe: what an FP4 checkpoint of this model serves)" if rec["fp4"] == rec["native"]
           else f"FP4 ({rec['fp4']}) {u['fp4']:,.0f}")
    lay = m.get("layout") or {}
    shard = (f" as TP{lay['tp']}" + (f"/EP{lay['ep']}" if lay.get("ep", 1) > 1 else "")
             + (f"/DP{lay['dp']} (attention data-parallel)" if lay.get("dp", 1) > 1 else "")
             + f" ({m.get('layout_from', '')})") if lay else ""
    return (f"Calibrated step-time model (not a measurement; {m['n_gpus']} GPUs{shard}, {m['framework']}, concurrency 1, "
            f"no speculation): the shipped recipe ({m['native_recipe']}) predicts {u['native']:,.0f} tok/s/user and "
            f"FP8 everywhere {u['fp8']:,.0f}; {fp4}: FP4 ÷ FP8 {m['fp4_over_fp8']:.2f}× (the step's dominant term: "
            f"{m['dominant']['native']}; a fixed per-layer cost that precision does not change keeps the ratio far "
            "below the bytes ratio).")


def _pool_text(pool: dict) -> str:
    if not pool or not pool.get("spec_points"):
        return ""
    counts = [f"{pool[k]:,} {k}" for k in ("measured", "forced", "golden", "stated", "assumed", "unknown")
              if pool.get(k)]
    methods = [m for m in str(pool["spec_methods"]).split(";") if m not in ("none", "unknown", "")]
    text = (f" Of the {pool['points']:,} evidence points, {pool['spec_points']:,} ran speculative decoding "
            f"({', '.join(methods) or 'method unknown'}); their acceptance: {', '.join(counts)}"
            + (" (unknown: the log does not say, so a bound charges the documented assumption)."
               if pool.get("unknown") else "."))
    if pool.get("mixed_forced_measured"):
        text += " Forced and measured acceptance are mixed there: their per-user speeds are not comparable as such."
    return text


def _evidence_text(f: dict) -> str:
    from analysis.specdecode import Tau
    from analysis.specdecode_words import tau_words

    e = f.get("evidence")
    if not e:
        return ""
    tau = Tau(**e["tau"])
    if tau.speculative and tau.source == "assumed":  # no acceptance recorded: what the bounds charge, not what it ran
        return (f" The speed point ({who(e['point'])}) records no acceptance; the bounds charge it "
                f"{tau_words(tau)}, not a τ it is known to have run at.")
    return f" The speed point ({who(e['point'])}) ran at {tau_words(tau)}."


def spec_decode_words(claim: Claim, f: dict) -> tuple[str, str, str]:
    long, short = _spec_decode(claim, f)
    return long, short, ""


def _spec_decode(claim: Claim, f: dict) -> tuple[str, str]:
    user = f["claimed_tok_s_per_user"]
    rule = f["rule"]
    if rule == "stated-none":
        if math.isnan(user):
            return "None (stated).", "none (stated)"
        return (f"None (stated): each step commits one token, so {user:,.0f} tok/s/user needs {user:,.0f} decode steps "
                f"per second ({1000 / user:.2f} ms each)." + _evidence_text(f), "none (stated)")
    if rule == "stated":
        tau = f["tau"]
        head = f"{f['method_text']}; acceptance length {tau:g} tokens per step ({f['acceptance_text']})."
        if math.isnan(user):
            return head + _evidence_text(f) + _pool_text(f["pool"]), f"{f['method'] or 'method'}, τ {tau:g} stated"
        steps = f["steps_per_s"]
        return (head + f" The claimed {user:,.0f} tok/s/user then needs {steps:,.0f} verify steps per second per "
                f"sequence ({1000 / steps:.2f} ms per step); at one token per step it would need a "
                f"{1000 / user:.2f} ms step. The acceptance explains a factor {tau:g} of the claimed speed."
                + _evidence_text(f) + _pool_text(f["pool"]),
                f"{f['method'] or 'stated'}, τ {tau:g} stated: {steps:,.0f} steps/s needed")
    taus = f["tau_range"]
    whose = ("this model" if taus.get("own_model", True) else
             f"other models of its family ({', '.join(taus.get('models') or [])}; none is shipped for "
             f"{claim.model_table or claim.model})")
    basis = (f"the highest acceptance length of the shipped golden curves for {whose} "
             f"({', '.join(taus['curves'])}; SPEED-Bench coding prompts)" if taus["basis"] == "golden" else
             "the documented 2.5-token assumption (no golden curve for this family)")
    head = (f"{f['method_text']}: the method is stated, its acceptance is not." if rule == "method-stated" else
            "Not stated (neither the method nor its acceptance).")
    if f["steps_per_s_range"]:
        lo, hi = f["steps_per_s_range"]
        head += (f" At τ from {taus['low']:.2f} to {taus['high']:.2f} tokens per step (up to {basis}), the claimed "
                 f"{user:,.0f} tok/s/user needs {lo:,.0f}–{hi:,.0f} verify steps per second per sequence "
                 f"({1000 / hi:.2f}–{1000 / lo:.2f} ms per step): the acceptance alone can account for up to a "
                 f"factor {taus['high']:.2f} of the speed.")
        short = f"not stated; needs {lo:,.0f}–{hi:,.0f} steps/s at τ {taus['low']:.2f}–{taus['high']:.2f}"
    else:
        short = "not stated"
    return head + _evidence_text(f) + _pool_text(f["pool"]), short


SENTENCES = {"batch": batch_words, "large_batch": large_batch_words, "scope": scope_words,
             "latency": latency_words, "precision": precision_words, "spec_decode": spec_decode_words}
