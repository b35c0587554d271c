"""Sentences about a claim: speed-of-light readings, checks against the frontier, the verdict."""

from __future__ import annotations

import math

import pandas as pd

from analysis import specs
from analysis.claims.checks import GAP_FACTOR, INFORMATIVE, LENGTHS_FAR
from analysis.claims.conditions import per_user_value
from analysis.claims.labels import PER_USER_DEFS, SNAPSHOT_CAVEAT, fmt_num, num_text, share, sol_precision
from analysis.claims.registry import Claim, claim_parts, claim_title, is_stated
from analysis.claims.sol import possible_at, undecided_text
from analysis.specdecode_words import source_words
from analysis.text import fixed, times, whole


def _name(value, default: str = "") -> str:
    """A text field of a check row, or ``default`` where it is missing (None, NaN, empty): never the word 'nan'."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() in ("", "nan"):
        return default
    return str(value)

def sol_statements(claim: Claim, sol: pd.DataFrame) -> list[str]:
    """Plain sentences: where a reading is impossible (by bandwidth, or by the communication floor of a
    multi-GPU step) or possible only at near-peak bandwidth, and what speculative decoding or lower precision
    would change."""
    user = per_user_value(claim)
    if sol.empty or math.isnan(user):
        return []
    out = []
    base = sol[sol["tokens_per_step"] == 1.0]
    spec = sol[sol["tokens_per_step"] > 1.0]
    for _, r in base.iterrows():
        where = f"{r['scope']} at {sol_precision(r)}"
        if not r["fits"]:
            out.append(f"On {where} the weights do not fit ({r['hbm_needed_gb']:,.0f} GB needed, "
                       f"{r['hbm_available_gb']:,.0f} GB of HBM).")
            continue
        state = possible_at(r)
        if state == "possible":
            continue
        if state == "undecided":
            out.append(f"On {where} {user:,.0f} tok/s/user is undecided: {undecided_text(r)}.")
            continue
        if state == "near-peak":
            out.append(f"On {where} {user:,.0f} tok/s/user is above the achievable line "
                       f"({r['sol_tok_s_per_user_achievable_comm']:,.0f}) but below the datasheet bound "
                       f"({r['sol_tok_s_per_user_comm']:,.0f}): possible only at near-peak bandwidth.")
            continue
        if user > r["sol_tok_s_per_user"]:
            text = (f"On {where} {user:,.0f} tok/s/user is above the bandwidth bound of "
                    f"{r['sol_tok_s_per_user']:,.0f} tok/s/user (one token per step)")
        else:
            text = (f"On {where} {user:,.0f} tok/s/user is above the bound with the communication floor "
                    f"({r['sol_tok_s_per_user_comm']:,.0f} tok/s/user: {r['comm_floor_ms'] * 1000:,.0f} µs of "
                    f"collectives per step), though bandwidth alone would allow {r['sol_tok_s_per_user']:,.0f}"
                    + (f" (every byte split evenly over the {int(r['gpus'])} GPUs, none replicated)"
                       if r["gpus"] > 1 else ""))
        s = spec[(spec["precision"] == r["precision"]) & (spec["gpus"] == r["gpus"])]
        if len(s):
            t = s.iloc[0]
            verdict_tau = "enough" if user <= t["sol_tok_s_per_user_comm"] else "still short"
            by_comm = t["comm_floor_ms"] > 0 and t["sol_tok_s_per_user_comm"] < t["sol_tok_s_per_user"]
            why = ("; the collectives bound it, at τ times their floor" if by_comm else
                   "; the verify step reads more experts" if claim.model_table and
                   specs.model(claim.model_table).is_moe else "")
            text += (f"; with speculative decoding at τ = {t['tokens_per_step']:g} the bound is "
                     f"{t['sol_tok_s_per_user_comm']:,.0f} ({verdict_tau}" + (why if verdict_tau == "still short"
                                                                               else "") + ")")
        lower = base[(base["gpus"] == r["gpus"]) & (base["sol_tok_s_per_user_comm"] >= user) & base["fits"]]
        if len(lower):
            text += "; lower precision reaches it (" + ", ".join(
                f"{sol_precision(x)}: {x['sol_tok_s_per_user_comm']:,.0f}" for _, x in lower.iterrows()) + ")"
        out.append(text + ".")
    return out


def _unreached(claim: Claim, checks: pd.DataFrame, against: dict | None = None, against_differs=()) -> str:
    """For a per-user claim no measured point reaches: the fastest point of the claim's model or architecture, with
    its conditions and source. ``against``: the reading point the sentence before quoted; where the two points'
    per-user statistics differ (a median TPOT against a mean), the sentence says so, since their shares of the
    claim are then not read on one scale."""
    users = checks[(checks["kind"] == "per-user") & checks["measured_all"].notna()
                   & checks["match"].isin(["direct", "same-model"])] if len(checks) else checks
    if users.empty or users["measured_all"].max() >= users["claimed"].max():
        return ""
    top = users.loc[users["measured_all"].idxmax()]
    p = (top.get("reading") or {}).get("points", [{}])[0]
    where = p.get("source_url") if p.get("source_url") not in (None, "unknown") else p.get("row")
    stat = PER_USER_DEFS.get(str(p.get("per_user_def")), "")
    against = against or {}
    another = p.get("row") != against.get("row")  # the fastest point is not the one the sentence before quoted
    other = PER_USER_DEFS.get(str(against.get("per_user_def")), "")
    unlike = (f"; read as {stat.replace('1000 / ', '')}, where the point above is {other.replace('1000 / ', '')}: "
              "the two speeds are not on one statistic" if another and stat and other and stat != other else "")
    # the fastest point ran the claim's engine where the point above did not: an engine claim's nearer baseline
    engine = ("; it ran the claim's framework, the point above another" if another
              and _framework_differs(against_differs) and not _framework_differs(top.get("differs") or ()) else "")
    return (f"; no measured point of this model or its architecture at the lengths compared here reaches the claimed "
            f"speed: the fastest is "
            f"{top['measured_all']:,.1f} tok/s/user ({stat + '; ' if stat else ''}{top['group']}, {top['lengths']}, concurrency "
            f"{fmt_num(p.get('concurrency'))}; {where}{unlike}{engine})")


def _framework_differs(differs) -> bool:
    """Whether a reading's differences name the serving engine (``framework: vllm measured, SGLang claimed``)."""
    return any(str(d).startswith("framework") for d in differs)


def decode_counted(claim: Claim, row) -> bool:
    """Whether the claim (or the part a row checks) counts decode GPUs or decode nodes only."""
    return "decode" in f"{claim.unit} {row.get('part', '')}".lower() if claim is not None else False


def claim_denominator(claim: Claim, row) -> tuple[float, str]:
    """The measured value in the claim's own GPU denominator: the decode-GPU figure where the claim counts decode
    GPUs (and the row has one), else all GPUs; with the words that say which."""
    dec = row.get("measured_decode")
    if row.get("kind") != "ratio" and decode_counted(claim, row) and dec is not None and pd.notna(dec):
        return float(dec), " (decode GPUs only)"
    return float(row["measured_all"]), ""


def default_limit_text(row) -> str:
    """"; read under perfclaims' default TTFT p50 ≤ 2 s, which the claim does not set; unconstrained: 688
    tok/s/GPU over all GPUs at 12.3 tok/s/user" for a capacity read under the tool's own sanity limit."""
    reading = row.get("reading") or {}
    if reading.get("rule") != "capacity" or not reading.get("limit"):
        return ""
    free = reading.get("unconstrained")
    text = f"; read under perfclaims' default {reading['limit']}, which the claim does not set"
    if not free:
        return text + " (the same point without it)"
    gpu = free.get("tok_s_per_gpu")
    return (text + f"; unconstrained: {num_text(gpu)} tok/s/GPU over all GPUs at "
            f"{fixed(free.get('tok_s_per_user'), 1)} tok/s/user")


def _unconstrained_gap(row) -> float:
    reading = row.get("reading") or {}
    free = reading.get("unconstrained") if reading.get("rule") == "capacity" else None
    gpu = (free or {}).get("tok_s_per_gpu")
    claimed = row.get("claimed")
    if not free or gpu is None or pd.isna(gpu) or gpu <= 0 or claimed is None or pd.isna(claimed) or claimed <= 0:
        return math.nan
    return max(gpu / claimed, claimed / gpu)


def gap_text(row, claim: Claim | None = None) -> str:
    """"; the claim is 42× above this evidence: a different axis, denominator or data?" where they are far apart.
    The gap is taken in the claim's own GPU denominator; a capacity read under perfclaims' own default latency
    limit is also compared unconstrained, and a gap the limit alone makes is called that, not a doubt on the data."""
    measured = claim_denominator(claim, row)[0] if claim is not None else row.get("measured_all")
    claimed = row.get("claimed")
    if row.get("kind") == "ratio" or measured is None or pd.isna(measured) or measured <= 0 or claimed is None \
            or pd.isna(claimed) or claimed <= 0:
        gap = row.get("gap")
        measured = row.get("measured_all")
    else:
        gap = max(measured / claimed, claimed / measured)
    if gap is None or pd.isna(gap) or gap <= GAP_FACTOR:
        return ""
    above = claimed > measured
    side = "above" if above else "below"
    free = _unconstrained_gap(row)
    if not math.isnan(free):
        if free <= GAP_FACTOR:
            return (f"; the claim is {gap:,.0f}× {side} this latency-limited evidence, and within "
                    f"{GAP_FACTOR:g}× of the unconstrained figure: the gap is perfclaims' default latency limit, "
                    "which the claim does not set")
        return (f"; the claim is {gap:,.0f}× {side} this evidence and {free:,.0f}× from the unconstrained figure: "
                "a different axis, denominator or data?")
    # what the evidence itself brings to the gap, before the claim is doubted
    own = [str(d).split(":")[0] for d in (row.get("differs") or [])
           if str(d).split(":")[0] in ("speculative decoding", "lengths", "GPU count", "scope", "disaggregation")]
    if row.get("rough"):
        own.append("a reading across a wide frontier gap")
    elif (row.get("reading") or {}).get("rule") == "interpolated":
        own.append("a value interpolated between two measured points")
    since = f" (this evidence differs in {', '.join(own)})" if own else ""
    return f"; the claim is {gap:,.0f}× {side} this evidence{since}: a different axis, denominator or data?"


def spec_text(row) -> str:
    """", spec decode dspark (acceptance not recorded)" for a reading whose point ran speculative decoding."""
    p = ((row.get("reading") or {}).get("points") or [{}])[0]
    method = p.get("spec_method")
    if method is None or pd.isna(method) or str(method) in ("none", "unknown", ""):
        return ""
    al, source = p.get("acceptance_length"), str(p.get("acceptance_source") or "unknown")
    acc = (f"acceptance {fmt_num(al)}, {source}" if al is not None and pd.notna(al) and source != "unknown"
           else "acceptance not recorded")
    return f", spec decode {method} ({acc})"


def p50_read_text(row) -> str:
    """"; its own TTFT p99 is 254.7 s: the TTFT p99 limit was read on its p50 ..." where a reading's point passed a
    TTFT p99 limit only on its p50 (a fixed-concurrency sweep point, whose p99 is its start-up burst)."""
    limit_ms, p99 = row.get("ttft_p99_limit_ms"), row.get("ttft_ms_p99")
    if limit_ms is None or pd.isna(limit_ms) or p99 is None or pd.isna(p99) or p99 <= limit_ms:
        return ""
    return (f"; its own TTFT p99 is {fixed(p99 / 1000, 1)} s, above the limit: the limit was read on its TTFT p50, "
            "as for every fixed-concurrency sweep point, whose p99 is its start-up burst")


def match_label(row) -> str:
    """``direct``, ``same-model (lengths differ)`` or ``proxy (another model)`` for one comparison row."""
    m = row.get("match") if hasattr(row, "get") else None
    if m == "proxy":
        return "proxy (another model)"
    if m == "same-model":
        what = [str(d).split(":")[0] for d in (row.get("differs") or [])]
        return "same-model" + (f" (differs: {', '.join(what)})" if what else "")
    return str(m or "none")


def _versus(top, part_value, unit_is_ratio=False) -> str:
    """", 38% of the claim" where a ratio may be computed; else why none is."""
    r = top["measured_over_claimed"]
    if r is not None and not pd.isna(r):
        return f" = {share(r)} of the claimed {part_value:g}×" if unit_is_ratio else f" = {share(r)} of the claim"
    if top.get("match") == "proxy":
        return " (proxy evidence from another model: no percentage of the claim)"
    # the conditions that withhold the percentage (the serving engine informs, it does not withhold one)
    differs = [str(d).split(":")[0] for d in (top.get("differs") or []) if not str(d).startswith(tuple(INFORMATIVE))]
    why = " and ".join(differs) if differs else "conditions"
    return f" (not at the claim's {why}: no percentage of the claim)"


def check_statements(claim: Claim, checks: pd.DataFrame) -> list[str]:
    """One sentence per part: the claim against the best matching measured group, with how it matches."""
    out = []
    for part in claim_parts(claim):
        c = checks[checks["part"] == part.text]
        if c.empty:
            out.append(f"“{part.text}”: no matching measured points.")
            continue
        ok = c[c["measured_all"].notna()]
        if ok.empty:
            out.append(f"“{part.text}”: {c.iloc[0]['how']}.")
            continue
        top = ok.iloc[0]
        if bool(top.get("lengths_far")):
            out.append(f"“{part.text}”: the nearest {match_label(top)} evidence ({top['group']}) is at "
                       f"{top['lengths']}, more than {LENGTHS_FAR:g}× from the claim's {claim.isl_osl} in input or "
                       "output length: no number is compared.")
            continue
        if part.kind == "ratio":
            spread = (f" (range {ok['measured_all'].min():.1f}–{ok['measured_all'].max():.1f}× over "
                      f"{len(ok)} length pairs)" if len(ok) > 1 else "")
            out.append(f"“{part.text}”: the data give {'~' if top.get('rough') else ''}{top['measured_all']:.1f}× "
                       f"[{match_label(top)}] "
                       f"({top['lengths']}; {top['how']}){spread}{_versus(top, part.value, True)}.")
            continue
        unit = top["unit"]
        where = (f"at {part.at_tok_s_per_user:g} tok/s/user " if part.kind != "per-user"
                 and not math.isnan(part.at_tok_s_per_user) else "")
        text = (f"“{part.text}”: claimed {top['claimed']:,.0f} {unit}; the best matching measured frontier "
                f"{where}gives {'~' if top.get('rough') else ''}{top['measured_all']:,.1f} {unit} "
                f"[{match_label(top)}] ({top['group']}, "
                f"{top['lengths']}; {top['how']}){_versus(top, part.value)}")
        if part.kind != "per-user" and not math.isnan(top["measured_decode"]) and \
                abs(top["measured_decode"] - top["measured_all"]) > 1e-9 * max(1.0, top["measured_all"]):
            text += f"; counting decode GPUs only it is {top['measured_decode']:,.1f}"
        if part.kind != "per-user" and pd.notna(top.get("ttft_ms_p99")):
            text += f"; that reading's TTFT p99 is {top['ttft_ms_p99'] / 1000:,.1f} s"
        if top.get("limits"):
            text += f" (only points meeting {top['limits']})" + p50_read_text(top)
        text += default_limit_text(top)
        if part.kind != "per-user" and "interpolated" in str(top["how"]):
            text += f". Caveat: {SNAPSHOT_CAVEAT}"
        if top["lengths_note"]:
            text += f" [{top['lengths_note']}]"
        out.append(text + gap_text(top, claim) + ".")
    return out


def model_note_for(claim: Claim) -> str:
    if not claim.model_table:
        return f"{claim.model} is not in the model table: no roofline for it."
    if claim.model_note:
        return claim.model_note
    if specs.normalize_name(claim.model) != specs.normalize_name(claim.model_table):
        return f"{claim.model} is computed as {claim.model_table} (data/specs/models.csv)."
    return ""


KIND_TEXT = {"per-user": "a single-user (per-user) speed", "per-GPU": "a per-GPU throughput",
             "per-system": "a whole-system throughput", "ratio": "a ratio between systems",
             "latency": "a latency constraint"}


def kinds_text(claim: Claim) -> str:
    """"a single-user (per-user) speed and a whole-system throughput" for a compound claim."""
    kinds = list(dict.fromkeys(p.kind for p in claim_parts(claim)))
    many = {k for k in kinds if sum(p.kind == k for p in claim_parts(claim)) > 1}
    words = ["ratios between systems" if k == "ratio" and k in many else KIND_TEXT[k] for k in kinds]
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def _sol_sentence(claim: Claim, sol: pd.DataFrame) -> str:
    """The smallest setting whose batch-1 bound allows the per-user speed, from the achievable line and the
    communication floor as well as the datasheet."""
    user = per_user_value(claim)
    base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]].sort_values(["gpus", "sol_tok_s_per_user"])
    states = base.apply(possible_at, axis=1) if len(base) else pd.Series(dtype=str)
    ok = base[states == "possible"]
    near = base[states == "near-peak"]
    open_ = base[states == "undecided"]
    parts = []
    if len(open_) and (ok.empty or open_.iloc[0]["gpus"] < ok.iloc[0]["gpus"]):
        r = open_.iloc[0]
        parts.append(f"Without speculative decoding, {r['scope']} at {sol_precision(r)} is undecided: "
                     f"{undecided_text(r)}.")
    if len(near) and (ok.empty or near.iloc[0]["gpus"] < ok.iloc[0]["gpus"]):
        r = near.iloc[0]
        parts.append(f"Without speculative decoding, {r['scope']} at {sol_precision(r)} is above the "
                     f"achievable line: possible only at near-peak bandwidth ({user:,.0f} is "
                     f"{share(user / r['sol_tok_s_per_user_comm'])} of the datasheet bound "
                     f"{r['sol_tok_s_per_user_comm']:,.0f} and {share(user / r['sol_tok_s_per_user_achievable_comm'])}"
                     f" of the achievable {r['sol_tok_s_per_user_achievable_comm']:,.0f}).")
    if len(ok):
        r = ok.iloc[0]
        comm = r["comm_floor_ms"] > 0
        parts.append(("With every collective hidden under a weight read (the speed-of-light bound), the smallest "
                      if comm else "The smallest ")
                     + f"setting whose bound allows it below the achievable line is {r['scope']} at "
                     f"{sol_precision(r)} (claim = {share(user / r['sol_tok_s_per_user_comm'])} of "
                     f"{r['sol_tok_s_per_user_comm']:,.0f}"
                     + (f", a bound set by the communication floor of {r['comm_floor_ms'] * 1000:,.0f} µs per step, "
                        f"not by bandwidth ({r['sol_tok_s_per_user']:,.0f})" if comm and
                        r["sol_tok_s_per_user_comm"] < r["sol_tok_s_per_user"] else "") + ").")
    if not parts:
        parts.append("No plausible precision and scope reaches it at batch 1 without speculative decoding.")
    return " ".join(parts)


def calibrated_sentence(claim: Claim, model: dict | None, sol: pd.DataFrame) -> str:
    """The bounds above leave out the fixed cost every calibrated engine pays per step; the calibrated model keeps
    it. Its prediction without speculation (``model``: the precision answer's, at the nearest evidence's GPUs and
    engine) and the acceptance length the claim would need at that step time, against the highest τ the bounds
    read (the golden curves' top). '' without a prediction."""
    user = per_user_value(claim)
    if not model or math.isnan(user):
        return ""
    speed = (model.get("tok_s_per_user") or {}).get("native")
    if speed is None or not speed > 0:
        return ""
    need = user / speed
    top = float(sol["tokens_per_step"].max()) if len(sol) else math.nan
    dominant = (model.get("dominant") or {}).get("native", "")
    head = (f"With the fixed cost per step the calibrated engines pay (the step-time model calibrated on "
            f"{model.get('framework', 'the engine')}'s measured runs, which the bounds above leave out), "
            f"{fmt_num(model.get('n_gpus'))} GPUs at the shipped recipe predict {speed:,.0f} tok/s/user without "
            f"speculative decoding (dominant term: {dominant or 'not stated'})")
    if need <= 1.0:
        return head + ": the calibrated engines already reach the claim without it."
    if top == top and need > top:
        return (head + f"; at that step time the claim needs τ ≥ {fixed(need, 2)}, above the highest acceptance length "
                f"the bounds read ({fixed(top, 2)}), and more, since verifying more drafted tokens lengthens the "
                "step: a fixed cost per step below the calibrated engines' is part of what the claim asserts.")
    return (head + f"; at that step time the claim needs τ ≥ {fixed(need, 2)} (more, since verifying more drafted "
            "tokens lengthens the step)" + (f", within the acceptance lengths the bounds read (up to {fixed(top, 2)})"
                                            if top == top else "") + ".")


def verdict(claim: Claim, restated: pd.DataFrame, sol: pd.DataFrame, summary: pd.DataFrame,
            checks: pd.DataFrame | None = None, sol_reason: str = "", model_scopes: list | None = None,
            calibrated: dict | None = None) -> str:
    """A few sentences from the computed facts: what kind of number each part is, how it compares with the
    measured frontier at matching hardware, precision and lengths, the batch-1 bound (per-user parts only: a
    capacity is not bounded by batch-1 speed), and what is missing."""
    user = per_user_value(claim)
    kinds = {p.kind for p in claim_parts(claim)}
    parts = [f"{claim.id} (“{claim_title(claim)}”) is {kinds_text(claim)}."]
    per_gpu = restated.set_index("axis").get("value", pd.Series(dtype=float)).get("tok/s/GPU", math.nan)
    if claim.kind == "per-user" and (per_gpu is None or math.isnan(per_gpu)) and kinds == {"per-user"}:
        parts.append("It cannot be restated per GPU: the batch and GPU count are not both stated.")
    if checks is not None and len(checks):
        parts += check_statements(claim, checks)
    if "per-user" in kinds:
        if not sol.empty and not math.isnan(user):
            parts.append(_sol_sentence(claim, sol))
        elif sol.empty:
            parts.append(f"No roofline: {sol_reason}." if sol_reason else
                         "No roofline: the model or hardware is not in the spec tables.")
        if model_scopes:
            from analysis.claims.answer_words import model_scopes_verdict

            parts.append(model_scopes_verdict(model_scopes))
        parts.append(calibrated_sentence(claim, calibrated, sol))
        users = checks[checks["kind"] == "per-user"] if checks is not None and len(checks) else pd.DataFrame()
        if len(users):
            top = users.iloc[0]
            if pd.notna(top["share_of_own_sol_comm"]):
                base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]] if len(sol) else sol
                best = base.loc[base["fraction_of_sol_comm"].idxmin()] if len(base) else None
                share_claim = best["fraction_of_sol_comm"] if best is not None else math.nan
                setting = (f" (on {best['scope']} at {sol_precision(best)}, one token per step, every collective hidden "
                           "under a weight read)" if best is not None else "")
                tau = top.get("own_sol_tau")
                at_tau = (f", at τ {fixed(tau, 2)}: {source_words(str(top.get('own_sol_tau_source')))}"
                          if tau is not None and pd.notna(tau) and tau > 1 else "")
                parts.append(f"For efficiency rather than raw speed: that evidence ({top['model']}, {top['group']}, "
                             f"{top['lengths']}) runs at {share(top['share_of_own_sol_comm'])} of its own model's "
                             f"batch-1 bound on its {fmt_num(top['n_gpus'])} GPUs "
                             f"({top['own_sol_comm_tok_s_per_user']:,.0f} tok/s/user with the communication floor"
                             f"{at_tau})"
                             + (f"; the claim needs at least {share(share_claim)} of {claim.model_table}'s bound in "
                                f"the most favourable setting{setting}" if not math.isnan(share_claim) else "") + ".")
            if ("per-GPU" not in kinds and "per-system" not in kinds and _name(top.get("group"))
                    and pd.notna(top.get("capacity_tok_s_per_gpu")) and pd.notna(top.get("capacity_tok_s_per_user"))):
                gpus, den = top.get("capacity_gpus"), _name(top.get("capacity_gpu_denominator"), "unknown")
                per = (f" (÷ {'all ' if den == 'all' else den + ' ' if den != 'unknown' else ''}"
                       f"{fmt_num(gpus)} GPUs)" if pd.notna(gpus) else "")
                how = PER_USER_DEFS.get(_name(top.get("capacity_user_def"), "unknown"), "unknown")
                parts.append(f"At capacity the same group ({top['group']}, {top['lengths']}) gives "
                             f"{top['capacity_tok_s_per_gpu']:,.0f} output tok/s/GPU{per} with "
                             f"{top['capacity_tok_s_per_user']:,.0f} tok/s per user"
                             + (f" ({how})" if how != "unknown" else "") + ".")
    if not len(summary) and (checks is None or checks.empty):
        parts.append("No similar measured points in the points table.")
    unstated = [k for k, v in (("batch", claim.batch_text), ("GPU count", claim.n_gpus if not isinstance(
        claim.n_gpus, (int, float)) else "x"), ("precision", claim.precision_text),
        ("speculative decoding", claim.spec_decode)) if not is_stated(v)]
    if unstated:
        parts.append("Not stated: " + ", ".join(unstated) + ".")
    return " ".join(parts)




def bottom_line(claim: Claim, checks: pd.DataFrame, answers: dict, tier: str) -> str:
    """One sentence (two at most) a reader can stop at: what the best evidence says and how well it matches, and
    what the roofline allows for a per-user claim."""
    head = f"{claim.id} claims {claim_title(claim)} for {claim.model} on {claim.hardware}"
    rows = checks[checks["measured_all"].notna()] if len(checks) else checks
    if rows.empty:
        found = "; no measured point can check it"
    elif bool(rows.iloc[0].get("lengths_far")):
        r = rows.iloc[0]
        found = (f"; the nearest {match_label(r)} evidence is at {r['lengths']}, more than "
                 f"{LENGTHS_FAR:g}× from the claim's {claim.isl_osl} in input or output length, so no number is "
                 "compared here")
    else:
        r = rows.iloc[0]
        unit = "×" if r["kind"] == "ratio" else f" {r['unit']}"
        measured = r["measured_all"]
        # A claim counted per decode GPU is read against the decode-GPU figure, and says so.
        if r["kind"] != "ratio":
            measured, which = claim_denominator(claim, r)
            unit += which
        v = ("~" if r.get("rough") else "") + (f"{measured:.2f}" if r["kind"] == "ratio" else
                                                fmt_num(measured, 1 if measured < 1000 else 0))
        limits = (f"; only points within {r['limits']}" + p50_read_text(r) if _name(r.get("limits")) else "")
        limits += default_limit_text(r)
        p = ((r.get("reading") or {}).get("points") or [{}])[0]
        stat = PER_USER_DEFS.get(str(p.get("per_user_def")), "")  # which statistic: a mean and a median differ
        stat = f"{stat}; " if stat and r["kind"] == "per-user" else ""
        where = f"{stat}{r['group']}, {r['lengths']}{spec_text(r)}{limits}"
        if pd.notna(r["measured_over_claimed"]):
            found = (f"; the closest-matched {match_label(r)} evidence measures {v}{unit} ({where}), "
                     f"{share(r['measured_over_claimed'])} of the claim")
        elif r.get("match") == "proxy":
            eff = r.get("share_of_own_sol_comm")
            found = (f"; only proxy evidence from another model exists ({_name(r.get('model'), 'another model')}: "
                     f"{v}{unit}, "
                     f"{where}" + (f", {share(eff)} of its own batch-1 bound" if pd.notna(eff) else "")
                     + "), so no percentage of the claim is given")
        else:
            found = (f"; same-model evidence exists only under other conditions ({'; '.join(r['differs'])}): "
                     f"{v}{unit} there ({where}), not a percentage of the claim")
        found += gap_text(r, claim) + _unreached(claim, checks, p, r.get("differs") or ())
    scope = answers.get("scope")
    tail = f". Scope: {scope.short}." if scope is not None and scope.short and "NVL72" in scope.short else "."
    return head + found + (tail[1:] if found.endswith("?") else tail)


def headline_text(claim: Claim, checks: pd.DataFrame, tier: str, status: str = "") -> str:
    """One line for the report index, led by the evidence tier and the card's ``status`` (short form): the claim,
    its kind, and the first part's check with its match (a percentage of the claim only from direct or same-model
    evidence at the claim's lengths)."""
    lead = f"{tier} evidence" + (f"; {status}" if status else "")
    text = f"[{lead}] {claim.id}: {claim_title(claim)} — {kinds_text(claim)}"
    rows = checks[checks["measured_all"].notna()] if len(checks) else checks
    if len(rows) and bool(rows.iloc[0].get("lengths_far")):
        r = rows.iloc[0]
        text += (f"; nearest {match_label(r)} evidence at {r['lengths']}, more than {LENGTHS_FAR:g}× from the "
                 f"claim's {claim.isl_osl}: no number compared")
    elif len(rows):
        r = rows.iloc[0]
        v = r["measured_all"]
        mark = "~" if r.get("rough") else ""
        what = (mark + times(v, 1) if r["kind"] == "ratio" else
                f"{mark}{whole(v) if v >= 1000 else fixed(v, 1)} {r['unit']}")
        dec = r.get("measured_decode")
        if r["kind"] in ("per-GPU", "per-system") and pd.notna(dec) and abs(dec - v) > 0.005 * abs(v):
            # both denominators where they differ, the claim's first when it names decode GPUs
            if decode_counted(claim, r):
                what = f"{num_text(dec)} tok/s per decode GPU, the claim's denominator ({num_text(v)} over all GPUs)"
            else:
                what = f"{num_text(v)} {r['unit']} over all GPUs ({num_text(dec)} per decode GPU)"
        at = ""
        if r["kind"] in ("per-GPU", "per-system") and pd.notna(r["tok_s_per_user"]):
            ttft = r.get("ttft_ms_p99")
            at = (f" at {fixed(r['tok_s_per_user'], 1)} tok/s/user"
                  + (f", TTFT p99 {fixed(ttft / 1000, 1)} s" if pd.notna(ttft) else "")
                  + ("; the p99 limit read on TTFT p50" if p50_read_text(r) else "")
                  + (f"; under perfclaims' default {(r.get('reading') or {}).get('limit')}"
                     if default_limit_text(r) else ""))
        vs = (f" = {share(r['measured_over_claimed'])} of the claim" if pd.notna(r["measured_over_claimed"])
              else "; no percentage of the claim")
        text += (f"; measured {what}{at} [{match_label(r)}] ({r['group']}, {r['lengths']}{spec_text(r)}){vs}"
                 + gap_text(r, claim))
    return text + ("" if text.endswith("?") else ".")
