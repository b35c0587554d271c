"""Each number of a claim against the measured frontier of matching evidence, with how well the evidence matches.

Every comparison row carries ``match``: ``direct`` (same model, hardware and precision, at the claim's stated
lengths, speculative decoding and latency limits), ``same-model`` (the same model with the differing conditions
listed in ``differs``), ``proxy`` (another model: its own speed, never a percentage of the claim) or ``none`` (no
evidence). ``measured_over_claimed`` is only computed for direct and same-model evidence whose lengths are the
claim's (or the claim states none); a capacity read for a claim with latency limits uses only points that meet them.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis import frontier, specs
from analysis.claims.conditions import (
    base_precision,
    latency_limits,
    lengths_match,
    matched_lengths,
    meets_limits,
    spec_decode_of,
    stated_lengths,
)
from analysis.claims.evidence import (
    PROXY_RULE,
    comparable_size,
    evidence_object,
    family,
    generation,
    hw_key,
    hw_keys,
    own_sol,
    row_id,
)
from analysis.claims.labels import fmt_num, lengths_text
from analysis.claims.registry import Claim, ClaimPart, claim_parts
from analysis.frontier import capacity_at
from analysis.schema import trusted

CHECK_BY = ["hardware", "precision", "scope", "isl", "osl"]
# Ratio claims on tok/s/GPU that name no interactivity are compared at this per-user speed (stated on the card).
REFERENCE_TOK_S_PER_USER = 50.0
MATCH_TIERS = ("direct", "same-model", "proxy", "none")
CHECK_COLUMNS = ["part", "kind", "claimed", "unit", "group", "lengths", "tok_s_per_user", "measured_all",
                 "measured_decode", "measured_over_claimed", "how", "rows", "lengths_note", "model", "n_gpus",
                 "own_sol_tok_s_per_user", "own_sol_comm_tok_s_per_user", "share_of_own_sol_comm",
                 "capacity_tok_s_per_gpu", "capacity_tok_s_per_user", "capacity_row", "match", "differs",
                 "evidence", "limits", "ttft_ms_p99", "tpot_ms_p99"]


def _model_points(claim: Claim, points: pd.DataFrame) -> tuple[pd.DataFrame, str, str]:
    """Trusted points of the claim's model (its model-table entry), else of its family; which were used, and the
    tier they can reach (``same-model`` or ``proxy``)."""
    if points is None or points.empty:
        return pd.DataFrame(), "no points", "none"
    pts = points[trusted(points)]
    names = pts["model"].map({m: specs.match_model_name(m) for m in pts["model"].dropna().unique()})
    same = pts[names.notna() & (names == claim.model_table)] if claim.model_table else pts.iloc[0:0]
    if len(same):
        return same, f"{', '.join(sorted(same['model'].unique()))} points", "same-model"
    fam = family(claim.model_table or claim.model)
    similar = {m for m in pts["model"].dropna().unique()
               if fam and family(m) == fam and comparable_size(claim.model_table or claim.model, m)}
    kin = pts[pts["model"].isin(similar)]
    if len(kin):
        return kin, (f"{', '.join(sorted(kin['model'].unique()))} points (proxy: no {claim.model} points, "
                     f"another model: {PROXY_RULE})"), "proxy"
    return kin, f"no {claim.model} points", "none"


def _select_for_part(claim: Claim, part: ClaimPart, pts: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The points a part is checked on: its hardware (else the same generation), precision and scope; the
    conditions the selection could not hold equal (speculative decoding is judged per reading: see ``tier``)."""
    if pts.empty:
        return pts, []
    differs = []
    want = part.hardware or claim.hardware_table or claim.hardware
    keys = hw_keys(pts)
    sel = pts[keys == hw_key(want)]
    if sel.empty and generation(hw_key(want)):
        sel = pts[keys.map(generation) == generation(hw_key(want))]
        if len(sel):
            differs.append(f"hardware: {', '.join(sorted(sel['hardware'].astype(str).unique()))} instead of {want}")
    prec = part.precision or base_precision(claim.precision)
    if prec:
        sel = sel[sel["precision"] == prec]
    if part.scope:
        sel = sel[sel["scope"] == part.scope]
    return sel, differs


def _at_lengths(points: pd.DataFrame, pairs: list) -> pd.DataFrame:
    if not pairs or points.empty:
        return points.iloc[0:0]
    keys = set(pairs)
    return points[[(a, b) in keys for a, b in zip(points["isl"], points["osl"])]]


def _groups_of(front: pd.DataFrame, by=CHECK_BY):
    if front.empty:
        return []
    return list(front.groupby(by, dropna=False, sort=True))


def _group_name(key) -> str:
    hw, prec, scope = key[0], key[1], key[2]
    return f"{hw} · {str(prec).upper()} · {scope}"


def _neighbours(front: pd.DataFrame, target: float) -> tuple:
    """The measured frontier points just below and just above ``target`` tok/s/user (None at an open end)."""
    f = front.sort_values("tok_s_per_user")
    below, above = f[f["tok_s_per_user"] <= target], f[f["tok_s_per_user"] >= target]
    return (below.iloc[-1] if len(below) else None, above.iloc[0] if len(above) else None)


def single_user_end(front: pd.DataFrame) -> pd.Series:
    """The fastest per-user point of one frontier group (kept here: the frontier module's name for it is moving)."""
    return front.loc[front["tok_s_per_user"].idxmax()]


class _Context:
    """What every row of one part shares: the full point rows, the tier the model allows, what differs, limits."""

    def __init__(self, claim: Claim, part: ClaimPart, sel: pd.DataFrame, model_tier: str, differs: list,
                 limits_text: str, lengths_note: str, models: str):
        self.claim, self.part, self.model_tier, self.differs = claim, part, model_tier, differs
        self.limits_text, self.lengths_note, self.models = limits_text, lengths_note, models
        self.full = {(r["source_file"], r["source_line"]): r for r in sel.to_dict("records")}

    def row(self, front_row) -> dict:
        """The full point behind a frontier row (the frontier keeps only some columns)."""
        key = (front_row["source_file"], front_row["source_line"])
        return self.full.get(key, dict(front_row))

    def rid(self, front_row) -> str:
        return row_id(self.row(front_row))

    def tier(self, key, used=()) -> tuple[str, list[str], bool]:
        """(match, differs, whether a measured/claimed ratio may be computed) for one measured group, judged on
        the points a reading rests on (``used``) for speculative decoding."""
        differs = list(self.differs)
        spec = spec_decode_of(self.claim)
        measured = sorted({str(self.row(r).get("spec_decode")) for r in used if r is not None})
        spec_differs = bool(spec and measured and measured != [spec])
        if spec_differs:
            differs.append(f"speculative decoding: {', '.join(measured)} measured, {self.claim.spec_decode} claimed")
        at_lengths = lengths_match(self.claim, key[3], key[4])
        if at_lengths is False:
            differs.append(f"lengths: {lengths_text(key[3], key[4])} measured, {self.claim.isl_osl} claimed")
        if self.model_tier == "proxy":
            return "proxy", [f"model: {self.models} instead of {self.claim.model}"] + differs, False
        # A percentage of the claim needs the claim's stated conditions: its lengths and its speculative decoding.
        return ("direct" if not differs else "same-model"), differs, at_lengths is not False and not spec_differs


def _point_text(ctx: _Context, r) -> str:
    return (f"{r['tok_s_per_gpu']:,.0f} tok/s/GPU at {r['tok_s_per_user']:,.1f} tok/s/user "
            f"(concurrency {fmt_num(r.get('concurrency'))}, {ctx.rid(r)})")


def _tail(ctx: _Context, rows) -> dict:
    """Tail latency of the point(s) a reading rests on (the worst of them)."""
    full = [ctx.row(r) for r in rows if r is not None]
    worst = {}
    for col in ("ttft_ms_p99", "tpot_ms_p99"):
        vals = [float(f[col]) for f in full if f.get(col) is not None and not pd.isna(f.get(col))]
        worst[col] = max(vals) if vals else math.nan
    return worst


def _capacity_rows(ctx: _Context, sel, pairs) -> list[dict]:
    part = ctx.part
    claimed = part.value if part.kind == "per-GPU" else (part.value / part.n_gpus if part.n_gpus > 0 else math.nan)
    at = part.at_tok_s_per_user
    fronts = {d: frontier.frontier(_at_lengths(sel, pairs), by=CHECK_BY, denominator=d) for d in ("all", "decode")}
    decode_groups = dict(_groups_of(fronts["decode"]))
    rows = []
    for key, g in _groups_of(fronts["all"]):
        gd = decode_groups.get(key, g.iloc[0:0])
        base = {"part": part.text, "kind": part.kind, "claimed": claimed, "unit": "tok/s/GPU",
                "group": _group_name(key), "lengths": lengths_text(key[3], key[4]), "lengths_note": ctx.lengths_note,
                "limits": ctx.limits_text}
        if not math.isnan(at):
            m_all, m_dec = capacity_at(g, [at])[0], capacity_at(gd, [at])[0] if len(gd) else math.nan
            lo, hi = _neighbours(g, at)
            if math.isnan(m_all):
                how = (f"{at:g} tok/s/user is outside the measured frontier "
                       f"({g['tok_s_per_user'].min():,.1f}–{g['tok_s_per_user'].max():,.1f} tok/s/user)")
                used = []
            elif lo is not None and hi is not None and lo["tok_s_per_user"] != hi["tok_s_per_user"]:
                how = f"interpolated between {_point_text(ctx, lo)} and {_point_text(ctx, hi)}"
                used = [lo, hi]
            else:
                r = lo if lo is not None else hi
                how, used = f"measured: {_point_text(ctx, r)}", [r]
            match, differs, ratio_ok = ctx.tier(key, used)
            rows.append({**base, "match": match, "differs": differs, "tok_s_per_user": at, "measured_all": m_all,
                         "measured_decode": m_dec,
                         "measured_over_claimed": m_all / claimed if ratio_ok else math.nan, "how": how,
                         "rows": [ctx.rid(r) for r in used], "evidence": [evidence_object(ctx.row(r)) for r in used],
                         **_tail(ctx, used)})
        else:
            cap = g.loc[g["tok_s_per_gpu"].idxmax()]
            capd = gd.loc[gd["tok_s_per_gpu"].idxmax()]["tok_s_per_gpu"] if len(gd) else math.nan
            match, differs, ratio_ok = ctx.tier(key, [cap])
            rows.append({**base, "match": match, "differs": differs, "tok_s_per_user": cap["tok_s_per_user"],
                         "measured_all": cap["tok_s_per_gpu"],
                         "measured_decode": capd,
                         "measured_over_claimed": cap["tok_s_per_gpu"] / claimed if ratio_ok else math.nan,
                         "how": f"measured capacity (highest tok/s/GPU): {_point_text(ctx, cap)}",
                         "rows": [ctx.rid(cap)], "evidence": [evidence_object(ctx.row(cap))], **_tail(ctx, [cap])})
    return rows


def _per_user_rows(ctx: _Context, sel, pairs) -> list[dict]:
    part = ctx.part
    rows = []
    for key, g in _groups_of(frontier.frontier(_at_lengths(sel, pairs), by=CHECK_BY)):
        end = single_user_end(g)
        match, differs, ratio_ok = ctx.tier(key, [end])
        cap = g.loc[g["tok_s_per_gpu"].idxmax()]
        src = ctx.row(end)
        sol_bw, sol_comm = own_sol(src)
        rows.append({"model": src.get("model"), "n_gpus": end.get("n_gpus"), "own_sol_tok_s_per_user": sol_bw,
                     "own_sol_comm_tok_s_per_user": sol_comm, "share_of_own_sol_comm": end["tok_s_per_user"] / sol_comm,
                     "capacity_tok_s_per_gpu": cap["tok_s_per_gpu"], "capacity_tok_s_per_user": cap["tok_s_per_user"],
                     "capacity_row": ctx.rid(cap), "part": part.text, "kind": part.kind, "claimed": part.value,
                     "unit": "tok/s/user", "group": _group_name(key), "lengths": lengths_text(key[3], key[4]),
                     "lengths_note": ctx.lengths_note, "tok_s_per_user": end["tok_s_per_user"],
                     "measured_all": end["tok_s_per_user"], "measured_decode": math.nan,
                     "measured_over_claimed": end["tok_s_per_user"] / part.value if ratio_ok else math.nan,
                     "how": f"fastest measured point: {end['tok_s_per_user']:,.1f} tok/s/user at concurrency "
                            f"{fmt_num(end.get('concurrency'))}, {end['tok_s_per_gpu']:,.0f} tok/s/GPU "
                            f"({ctx.rid(end)})",
                     "rows": [ctx.rid(end)], "evidence": [evidence_object(src)], "match": match, "differs": differs,
                     "limits": ctx.limits_text, **_tail(ctx, [end])})
    return rows


def _best_side(ctx: _Context, front: pd.DataFrame, pair, axis: str, at: float):
    """The best group of one side of a ratio at one length pair: (value, group name, frontier rows used)."""
    best = (math.nan, "", [])
    for key, g in _groups_of(front):
        if (key[3], key[4]) != pair:
            continue
        if axis == "tok/s/user":
            end = single_user_end(g)
            v, used = end["tok_s_per_user"], [end]
        else:
            v = capacity_at(g, [at])[0]
            lo, hi = _neighbours(g, at)
            used = [r for r in (lo, hi) if r is not None]
        if not math.isnan(v) and (math.isnan(best[0]) or v > best[0]):
            best = (v, _group_name(key), used)
    return best


def _ratio_rows(ctx: _Context, pts: pd.DataFrame) -> list[dict]:
    claim, part = ctx.claim, ctx.part
    base = {"part": part.text, "kind": "ratio", "claimed": part.value, "unit": f"× ({part.axis or 'not stated'})",
            "measured_decode": math.nan, "lengths_note": "", "limits": ctx.limits_text}
    axis = part.axis or ""
    empty = {"group": "", "lengths": "", "tok_s_per_user": math.nan, "measured_all": math.nan,
             "measured_over_claimed": math.nan, "rows": [], "evidence": [], "match": "none", "differs": []}
    if "cost" in axis.lower() and part.baseline:
        return _cost_ratio_rows(ctx, pts, base, empty)
    if "MW" in axis and part.baseline:
        return [{**base, **empty, "how": _per_mw_reason(ctx, pts)}]
    if axis not in ("tok/s/user", "tok/s/GPU") or not part.baseline:
        return [{**base, **empty,
                 "how": f"not checkable from the points table (axis {axis or 'not stated'}"
                        + ("" if part.baseline else "; no baseline named") + ")"}]
    side_a, ctx.differs = _select_for_part(claim, part, pts)
    side_b = _baseline_points(pts, part)
    ctx.full.update({(r["source_file"], r["source_line"]): r for r in pd.concat([side_a, side_b]).to_dict("records")})
    at = part.at_tok_s_per_user if not math.isnan(part.at_tok_s_per_user) else REFERENCE_TOK_S_PER_USER
    front_a, front_b = frontier.frontier(side_a, by=CHECK_BY), frontier.frontier(side_b, by=CHECK_BY)
    pairs_a = {(k[3], k[4]) for k, _ in _groups_of(front_a)}
    pairs_b = {(k[3], k[4]) for k, _ in _groups_of(front_b)}
    common = sorted(p for p in pairs_a & pairs_b if not any(pd.isna(x) for x in p))
    want = stated_lengths(claim)
    note = ("at the stated lengths" if want in common else
            f"no pair measured on both sides at the stated {lengths_text(*want)}; every common pair shown"
            if want else "lengths not stated: both sides at the same ISL/OSL")
    rows = []
    for pair in ([want] if want in common else common):
        a, b = _best_side(ctx, front_a, pair, axis, at), _best_side(ctx, front_b, pair, axis, at)
        measured = a[0] / b[0]
        match, differs, ratio_ok = ctx.tier((None, None, None) + pair, a[2] + b[2])
        used = a[2] + b[2]
        what = "fastest per-user point" if axis == "tok/s/user" else f"tok/s/GPU at {at:g} tok/s/user"
        rows.append({**base, "group": f"{a[1]} vs {b[1]}", "lengths": lengths_text(*pair), "lengths_note": note,
                     "tok_s_per_user": at if axis == "tok/s/GPU" else math.nan, "measured_all": measured,
                     "measured_over_claimed": measured / part.value if ratio_ok else math.nan,
                     "rows": [ctx.rid(r) for r in used], "evidence": [evidence_object(ctx.row(r)) for r in used],
                     "match": match, "differs": differs,
                     "how": f"{what}: {a[0]:,.1f} ({a[1]}) / {b[0]:,.1f} ({b[1]}, best {part.baseline} "
                            f"frontier) = {measured:.2f}×"
                            + ("" if axis == "tok/s/user" or not math.isnan(part.at_tok_s_per_user) else
                               f" ({REFERENCE_TOK_S_PER_USER:g} tok/s/user chosen: the claim names no level)")})
    if not rows:
        rows.append({**base, **empty,
                     "how": f"no length pair measured on both {part.hardware or claim.hardware} and {part.baseline}"})
    return rows


def _baseline_points(pts: pd.DataFrame, part: ClaimPart) -> pd.DataFrame:
    keys = hw_keys(pts)
    side_b = pts[(keys == hw_key(part.baseline)) | (keys.map(generation) == str(part.baseline).lower())]
    return side_b[side_b["scope"] == part.baseline_scope] if part.baseline_scope else side_b


def _per_mw_reason(ctx: _Context, pts: pd.DataFrame) -> str:
    """Why a throughput-per-MW ratio cannot be checked here, in the data's own terms."""
    side_a, _ = _select_for_part(ctx.claim, ctx.part, pts)
    side_b = _baseline_points(pts, ctx.part)
    with_power = [name for name, side in ((ctx.part.hardware or ctx.claim.hardware, side_a),
                                          (ctx.part.baseline, side_b))
                  if "power_w" in side and side["power_w"].notna().any()]
    missing = [n for n in (ctx.part.hardware or ctx.claim.hardware, ctx.part.baseline) if n not in with_power]
    return ("not checkable: throughput per MW needs measured power on both sides, and the points table has none "
            f"for {' or '.join(str(m) for m in missing)}; the claim's 'AI-factory' MW also counts facility power "
            "(cooling, networking, conversion), which no benchmark log measures. Throughput per GPU is not "
            "substituted for it")


def _cost_ratio_rows(ctx: _Context, pts: pd.DataFrame, base: dict, empty: dict) -> list[dict]:
    """A 'N× lower cost per million tokens' part: $/M output tokens of each side's cheapest frontier at the same
    tok/s/user and lengths, from the published price per GPU-hour of each side's hardware (named on the row)."""
    from analysis import cost

    claim, part = ctx.claim, ctx.part
    prices = cost.load_prices()
    side_a, ctx.differs = _select_for_part(claim, part, pts)
    side_b = _baseline_points(pts, part)
    at = part.at_tok_s_per_user if not math.isnan(part.at_tok_s_per_user) else REFERENCE_TOK_S_PER_USER
    col = frontier.metric_column("usd_per_mtok", at)
    tables = [frontier.metric_table(frontier.metric_frontier(side, metric="usd_per_mtok", by=CHECK_BY,
                                                             prices=prices), targets=[at], metric="usd_per_mtok",
                                    by=CHECK_BY) if len(side) else pd.DataFrame() for side in (side_a, side_b)]
    if any(t.empty or col not in t for t in tables):
        missing = cost.missing_prices(prices, pd.concat([side_a["hardware"], side_b["hardware"]]))
        return [{**base, **empty, "how": "not checkable: no priced measured points on both sides"
                 + (f" ({cost.no_price_message(missing)})" if missing else "")}]
    want = stated_lengths(claim)
    rows = []
    pairs = sorted({(r["isl"], r["osl"]) for t in tables for _, r in t.iterrows()})
    for pair in pairs:
        a = tables[0][(tables[0]["isl"] == pair[0]) & (tables[0]["osl"] == pair[1])].dropna(subset=[col])
        b = tables[1][(tables[1]["isl"] == pair[0]) & (tables[1]["osl"] == pair[1])].dropna(subset=[col])
        if a.empty or b.empty:
            continue
        ra, rb = a.loc[a[col].idxmin()], b.loc[b[col].idxmin()]
        measured = rb[col] / ra[col]          # "N× lower": the baseline's cost over the claimed hardware's
        differs = list(ctx.differs)
        if want is None or tuple(want) != pair:
            differs.append(f"lengths: {lengths_text(*pair)} measured, {claim.isl_osl} claimed")
        ga, gb = _group_name(tuple(ra[c] for c in CHECK_BY)), _group_name(tuple(rb[c] for c in CHECK_BY))
        rough = [g for g, r in ((ga, ra), (gb, rb)) if r.get(frontier.reading_column(at)) == "wide gap"]
        rows.append({**base, "group": f"{ga} vs {gb}", "lengths": lengths_text(*pair), "lengths_note": "",
                     "tok_s_per_user": at, "measured_all": measured, "measured_over_claimed": math.nan,
                     "rows": [], "evidence": [], "match": ctx.model_tier if ctx.model_tier == "proxy" else "same-model",
                     "differs": differs,
                     "how": f"$/M output tokens at {at:g} tok/s/user: {rb[col]:,.3g} ({gb}, "
                            f"${rb['usd_per_gpu_hour']:.2f}/GPU-hour) / {ra[col]:,.3g} ({ga}, "
                            f"${ra['usd_per_gpu_hour']:.2f}/GPU-hour) = {measured:.2f}× lower; prices: "
                            f"{ra['price_basis']} ({ra['hardware']}: {ra['price_source']}; {rb['hardware']}: "
                            f"{rb['price_source']})"
                            + (f"; rough: read across a wide frontier gap for {', '.join(rough)}" if rough else "")
                            + ("" if not math.isnan(part.at_tok_s_per_user) else
                               f" ({REFERENCE_TOK_S_PER_USER:g} tok/s/user chosen: the claim names no level)")})
    return rows or [{**base, **empty, "how": "not checkable: no length pair priced on both sides"}]


def _none_row(part: ClaimPart, how: str, limits_text: str) -> dict:
    unit = {"per-user": "tok/s/user", "per-GPU": "tok/s/GPU", "per-system": "tok/s/GPU"}.get(part.kind, "")
    claimed = part.value / part.n_gpus if part.kind == "per-system" and part.n_gpus > 0 else part.value
    return {"part": part.text, "kind": part.kind, "claimed": claimed, "unit": unit, "group": "", "lengths": "",
            "tok_s_per_user": part.at_tok_s_per_user, "measured_all": math.nan, "measured_decode": math.nan,
            "measured_over_claimed": math.nan, "how": how, "rows": [], "lengths_note": "", "match": "none",
            "differs": [], "evidence": [], "limits": limits_text}


def check_parts(claim: Claim, points: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """Each number of the claim against the measured frontier of matching hardware, precision and lengths.

    One row per part × measured group (hardware · precision · scope at one ISL/OSL): per-user parts against the
    fastest point, per-GPU parts at their stated tok/s/user (both GPU denominators) or against the measured
    capacity, ratio parts computed from both sides at equal lengths; every row says how its evidence matches
    (``match``, ``differs``). Points that miss the claim's latency limits are left out. Returns the table and
    which points were used.
    """
    pts, used, model_tier = _model_points(claim, points)
    limits, limits_from = latency_limits(claim)
    limits_text = "; ".join(lim.text for lim in limits) + (f" ({limits_from})" if limits else "")
    if limits and len(pts):
        ok = meets_limits(pts, limits)
        used += f"; {int(ok.sum())} of {len(pts)} meet {limits_text}"
        pts = pts[ok]
    models = ", ".join(sorted(pts["model"].astype(str).unique())) if len(pts) else ""
    rows: list[dict] = []
    for part in claim_parts(claim):
        if part.kind not in ("per-user", "per-GPU", "per-system", "ratio"):
            continue
        if part.kind == "ratio":
            ctx = _Context(claim, part, pts.iloc[0:0], model_tier, [], limits_text, "", models)
            rows += _ratio_rows(ctx, pts) if len(pts) else [_none_row(part, f"no evidence: {used}", limits_text)]
            continue
        sel, differs = _select_for_part(claim, part, pts)
        pairs, lengths_note = matched_lengths(claim, sel)
        ctx = _Context(claim, part, sel, model_tier, differs, limits_text, lengths_note, models)
        found = _per_user_rows(ctx, sel, pairs) if part.kind == "per-user" else _capacity_rows(ctx, sel, pairs)
        rows += found or [_none_row(part, f"no matching measured points ({used})", limits_text)]
    table = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    order = {p.text: i for i, p in enumerate(claim_parts(claim))}
    table = table.assign(_p=table["part"].map(order), _t=table["match"].map(MATCH_TIERS.index))
    table = table.sort_values(["_p", "_t", "measured_all"], ascending=[True, True, False], na_position="last")
    return table.drop(columns=["_p", "_t"]).reset_index(drop=True), used
