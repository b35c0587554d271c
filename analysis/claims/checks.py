"""Each number of a claim against the measured frontier of matching hardware, precision and lengths."""

from __future__ import annotations

import math
import re

import pandas as pd

from analysis import frontier, specs
from analysis.claims.conditions import matched_lengths, stated_lengths
from analysis.claims.evidence import generation, hw_key, hw_keys, own_sol, row_id
from analysis.claims.labels import fmt_num, lengths_text
from analysis.claims.registry import NOT_STATED, Claim, ClaimPart, claim_parts
from analysis.frontier import capacity_at
from analysis.schema import trusted

# --- 4b. each number of the claim against the measured frontier ---------------------------------------

CHECK_BY = ["hardware", "precision", "scope", "isl", "osl"]
# Ratio claims on tok/s/GPU that name no interactivity are compared at this per-user speed (stated on the card).
REFERENCE_TOK_S_PER_USER = 50.0


def _vendor_family(name) -> str:
    """"deepseek" for DeepSeek-V4-Flash and DeepSeek-R1-0528 alike (the first word of the name)."""
    m = re.match(r"[A-Za-z]+", str(name))
    return m.group(0).lower() if m else ""


def _model_points(claim: Claim, points: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Trusted points of the claim's model (its model-table entry), else of its family, and which was used."""
    if points is None or points.empty:
        return pd.DataFrame(), "no points"
    pts = points[trusted(points)]
    names = pts["model"].map({m: specs.match_model_name(m) for m in pts["model"].dropna().unique()})
    same = pts[names.notna() & (names == claim.model_table)]
    if len(same):
        return same, f"{', '.join(sorted(same['model'].unique()))} points"
    fam = _vendor_family(claim.model_table or claim.model)
    kin = pts[pts["model"].map(_vendor_family) == fam] if fam else pts.iloc[0:0]
    return kin, (f"{', '.join(sorted(kin['model'].unique()))} points (no {claim.model} points; same family)"
                 if len(kin) else f"no {claim.model} points")


def _base_precision(text) -> str | None:
    return None if text in (None, NOT_STATED) else str(text).split(",")[0]


def _select_for_part(claim: Claim, part: ClaimPart, pts: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The points a part is checked on: its hardware (else the same generation), precision and scope."""
    if pts.empty:
        return pts, ""
    want = part.hardware or claim.hardware_table or claim.hardware
    keys = hw_keys(pts)
    sel, note = pts[keys == hw_key(want)], ""
    if sel.empty and generation(hw_key(want)):
        sel = pts[keys.map(generation) == generation(hw_key(want))]
        note = f"no {want} points; same generation used"
    prec = part.precision or _base_precision(claim.precision)
    if prec:
        sel = sel[sel["precision"] == prec]
    if part.scope:
        sel = sel[sel["scope"] == part.scope]
    return sel, note


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


def _point_text(r) -> str:
    return (f"{r['tok_s_per_gpu']:,.0f} tok/s/GPU at {r['tok_s_per_user']:,.1f} tok/s/user "
            f"(concurrency {fmt_num(r.get('concurrency'))}, {row_id(r)})")


def _capacity_rows(claim, part, sel, pairs, lengths_note) -> list[dict]:
    claimed = part.value if part.kind == "per-GPU" else (part.value / part.n_gpus if part.n_gpus > 0 else math.nan)
    at = part.at_tok_s_per_user
    fronts = {d: frontier.frontier(_at_lengths(sel, pairs), by=CHECK_BY, denominator=d) for d in ("all", "decode")}
    decode_groups = dict(_groups_of(fronts["decode"]))
    rows = []
    for key, g in _groups_of(fronts["all"]):
        gd = decode_groups.get(key, g.iloc[0:0])
        base = {"part": part.text, "kind": part.kind, "claimed": claimed, "unit": "tok/s/GPU",
                "group": _group_name(key), "lengths": lengths_text(key[3], key[4]), "lengths_note": lengths_note}
        if not math.isnan(at):
            m_all, m_dec = capacity_at(g, [at])[0], capacity_at(gd, [at])[0] if len(gd) else math.nan
            lo, hi = _neighbours(g, at)
            if math.isnan(m_all):
                how = (f"{at:g} tok/s/user is outside the measured frontier "
                       f"({g['tok_s_per_user'].min():,.1f}–{g['tok_s_per_user'].max():,.1f} tok/s/user)")
                ids = []
            elif lo is not None and hi is not None and lo["tok_s_per_user"] != hi["tok_s_per_user"]:
                how = f"interpolated between {_point_text(lo)} and {_point_text(hi)}"
                ids = [row_id(lo), row_id(hi)]
            else:
                r = lo if lo is not None else hi
                how, ids = f"measured: {_point_text(r)}", [row_id(r)]
            rows.append({**base, "tok_s_per_user": at, "measured_all": m_all, "measured_decode": m_dec,
                         "measured_over_claimed": m_all / claimed, "how": how, "rows": ids})
        else:
            cap = g.loc[g["tok_s_per_gpu"].idxmax()]
            capd = gd.loc[gd["tok_s_per_gpu"].idxmax()]["tok_s_per_gpu"] if len(gd) else math.nan
            rows.append({**base, "tok_s_per_user": cap["tok_s_per_user"], "measured_all": cap["tok_s_per_gpu"],
                         "measured_decode": capd, "measured_over_claimed": cap["tok_s_per_gpu"] / claimed,
                         "how": f"measured capacity (highest tok/s/GPU): {_point_text(cap)}", "rows": [row_id(cap)]})
    return rows


def _per_user_rows(claim, part, sel, pairs, lengths_note) -> list[dict]:
    rows = []
    full = sel.set_index(["source_file", "source_line"]) if len(sel) else sel
    for key, g in _groups_of(frontier.frontier(_at_lengths(sel, pairs), by=CHECK_BY)):
        end = single_user_end(g)
        cap = g.loc[g["tok_s_per_gpu"].idxmax()]
        src = full.loc[(end["source_file"], end["source_line"])]
        src = (src.iloc[0] if isinstance(src, pd.DataFrame) else src).to_dict()
        sol_bw, sol_comm = own_sol(src)
        rows.append({"model": src.get("model"), "n_gpus": end.get("n_gpus"), "own_sol_tok_s_per_user": sol_bw,
                     "own_sol_comm_tok_s_per_user": sol_comm, "share_of_own_sol_comm": end["tok_s_per_user"] / sol_comm,
                     "capacity_tok_s_per_gpu": cap["tok_s_per_gpu"], "capacity_tok_s_per_user": cap["tok_s_per_user"],
                     "capacity_row": row_id(cap),"part": part.text, "kind": part.kind, "claimed": part.value, "unit": "tok/s/user",
                     "group": _group_name(key), "lengths": lengths_text(key[3], key[4]),
                     "lengths_note": lengths_note, "tok_s_per_user": end["tok_s_per_user"],
                     "measured_all": end["tok_s_per_user"], "measured_decode": math.nan,
                     "measured_over_claimed": end["tok_s_per_user"] / part.value,
                     "how": f"fastest measured point: {end['tok_s_per_user']:,.1f} tok/s/user at concurrency "
                            f"{fmt_num(end.get('concurrency'))}, {end['tok_s_per_gpu']:,.0f} tok/s/GPU ({row_id(end)})",
                     "rows": [row_id(end)]})
    return rows


def _best_side(front: pd.DataFrame, pair, axis: str, at: float):
    """The best group of one side of a ratio at one length pair: (value, group name, row ids)."""
    best = (math.nan, "", [])
    for key, g in _groups_of(front):
        if (key[3], key[4]) != pair:
            continue
        if axis == "tok/s/user":
            end = single_user_end(g)
            v, ids = end["tok_s_per_user"], [row_id(end)]
        else:
            v, ids = capacity_at(g, [at])[0], []
        if not math.isnan(v) and (math.isnan(best[0]) or v > best[0]):
            best = (v, _group_name(key), ids)
    return best


def _ratio_rows(claim, part, pts) -> list[dict]:
    base = {"part": part.text, "kind": "ratio", "claimed": part.value, "unit": f"× ({part.axis or 'not stated'})",
            "measured_decode": math.nan, "lengths_note": ""}
    axis = part.axis or ""
    proxy = ""
    if axis not in ("tok/s/user", "tok/s/GPU") or not part.baseline:
        uncheckable = [{**base, "group": "", "lengths": "", "tok_s_per_user": math.nan, "measured_all": math.nan,
                        "measured_over_claimed": math.nan, "rows": [],
                        "how": f"not checkable from the points table (axis {axis or 'not stated'}: no power or cost "
                               "data" + ("" if part.baseline else "; no baseline named") + ")"}]
        if not part.baseline or math.isnan(part.at_tok_s_per_user) and "MW" not in axis:
            return uncheckable
        # Throughput per MW is closest to throughput per GPU at equal interactivity: shown as a labelled proxy.
        axis, proxy = "tok/s/GPU", f"proxy for {part.axis} (per GPU, no power data): "
    side_a, _ = _select_for_part(claim, part, pts)
    keys = hw_keys(pts)
    side_b = pts[(keys == hw_key(part.baseline)) | (keys.map(generation) == str(part.baseline).lower())]
    if part.baseline_scope:
        side_b = side_b[side_b["scope"] == part.baseline_scope]
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
        a, b = _best_side(front_a, pair, axis, at), _best_side(front_b, pair, axis, at)
        measured = a[0] / b[0]
        what = "fastest per-user point" if axis == "tok/s/user" else f"tok/s/GPU at {at:g} tok/s/user"
        rows.append({**base, "group": f"{a[1]} vs {b[1]}", "lengths": lengths_text(*pair), "lengths_note": note,
                     "tok_s_per_user": at if axis == "tok/s/GPU" else math.nan, "measured_all": measured,
                     "measured_over_claimed": measured / part.value, "rows": a[2] + b[2],
                     "how": f"{proxy}{what}: {a[0]:,.1f} ({a[1]}) / {b[0]:,.1f} ({b[1]}, best {part.baseline} "
                            f"frontier) = {measured:.2f}×"
                            + ("" if axis == "tok/s/user" or not math.isnan(part.at_tok_s_per_user) else
                               f" ({REFERENCE_TOK_S_PER_USER:g} tok/s/user chosen: the claim names no level)")})
    if not rows:
        rows.append({**base, "group": "", "lengths": "", "tok_s_per_user": math.nan, "measured_all": math.nan,
                     "measured_over_claimed": math.nan, "rows": [],
                     "how": f"no length pair measured on both {part.hardware or claim.hardware} and {part.baseline}"})
    return rows


CHECK_COLUMNS = ["part", "kind", "claimed", "unit", "group", "lengths", "tok_s_per_user", "measured_all",
                 "measured_decode", "measured_over_claimed", "how", "rows", "lengths_note", "model", "n_gpus",
                 "own_sol_tok_s_per_user", "own_sol_comm_tok_s_per_user", "share_of_own_sol_comm",
                 "capacity_tok_s_per_gpu", "capacity_tok_s_per_user", "capacity_row"]


def check_parts(claim: Claim, points: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """Each number of the claim against the measured frontier of matching hardware, precision and lengths.

    One row per part × measured group (hardware · precision · scope at one ISL/OSL): per-user parts against the
    fastest point, per-GPU parts at their stated tok/s/user (both GPU denominators) or against the measured
    capacity, ratio parts computed from both sides at equal lengths. Returns the table and which points were used.
    """
    pts, used = _model_points(claim, points)
    rows: list[dict] = []
    for part in claim_parts(claim):
        if part.kind == "ratio":
            rows += _ratio_rows(claim, part, pts) if len(pts) else []
            continue
        if part.kind not in ("per-user", "per-GPU", "per-system"):
            continue
        sel, hw_note = _select_for_part(claim, part, pts)
        pairs, lengths_note = matched_lengths(claim, sel)
        note = "; ".join(x for x in (lengths_note, hw_note) if x)
        if part.kind == "per-user":
            rows += _per_user_rows(claim, part, sel, pairs, note)
        else:
            rows += _capacity_rows(claim, part, sel, pairs, note)
    table = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    return table.sort_values(["part", "measured_all"], ascending=[True, False], key=lambda s: s if s.name !=
                             "part" else s.map({p.text: i for i, p in enumerate(claim_parts(claim))}),
                             na_position="last").reset_index(drop=True), used


