"""Each number of a claim against the measured frontier of matching evidence, with how well the evidence matches.

The checks read one :class:`analysis.claims.selection.ClaimEvidence` (they select nothing of their own) and return
facts: every row carries ``match`` (``direct``: same model, hardware and precision, at the claim's stated lengths,
speculative decoding and latency limits; ``same-model``: the same model with the differing conditions in
``differs``; ``proxy``: another model, its own speed, never a percentage of the claim; ``none``), ``differs`` as
:class:`Difference` facts, and ``reading``: the rule that produced the number and the points it rests on, as data.
The sentences (``how``, the differences in words) are written by :mod:`analysis.claims.check_words`.

Which check runs is decided by :data:`CHECKS`, keyed by (part kind, ratio axis): a new check is one function there,
one sentence rule in ``check_words`` and one test.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from analysis import frontier, specs
from analysis.claims.conditions import base_precision, lengths_match, meets_limits, spec_decode_of, stated_lengths
from analysis.claims.evidence import (
    evidence_object,
    generation,
    hw_key,
    hw_keys,
    model_key,
    own_sol,
    own_sol_tau,
    row_id,
    same_checkpoint,
)
from analysis.claims.labels import lengths_label, lengths_text, precision_word
from analysis.claims.registry import Claim, ClaimPart, is_stated
from analysis.claims.selection import ClaimEvidence
from analysis.frontier import capacity_at
from analysis.schema import scope_for
from analysis.text import plain

CHECK_BY = ["hardware", "precision", "scope", "isl", "osl"]
# Ratio claims on tok/s/GPU that name no interactivity are compared at this per-user speed (stated on the card).
REFERENCE_TOK_S_PER_USER = 50.0
MATCH_TIERS = ("direct", "same-model", "proxy", "none")
CHECK_COLUMNS = ["part", "kind", "claimed", "unit", "group", "lengths", "tok_s_per_user", "measured_all",
                 "measured_decode", "measured_over_claimed", "reading", "rows", "lengths_note", "model", "n_gpus",
                 "own_sol_tok_s_per_user", "own_sol_comm_tok_s_per_user", "share_of_own_sol_comm", "own_sol_tau",
                 "own_sol_tau_source",
                 "capacity_tok_s_per_gpu", "capacity_tok_s_per_user", "capacity_row", "capacity_gpus",
                 "capacity_gpu_denominator", "capacity_user_def", "match", "differs",
                 "evidence", "limits", "ttft_ms_p99", "tpot_ms_p99", "lengths_far", "gap", "rough",
                 "claim_in_interval", "compared_lengths", "ttft_p99_limit_ms"]
# Lengths further apart than this factor (input or output) give no number in a bottom line: a 1K-input point says
# nothing of a 128K-input claim. A claim further than GAP_FACTOR from its evidence is pointed out.
LENGTHS_FAR = 4.0
GAP_FACTOR = 3.0


@dataclass(frozen=True)
class Difference:
    """One condition a comparison could not hold equal: ``condition`` (hardware, speculative decoding, lengths,
    model), what was measured and what the claim says."""

    condition: str
    measured: str
    claimed: str


# What a reading carries of each point besides its speeds: the request count, the 95% intervals and the
# speculative decoding with its acceptance (measured, forced, ...).
POINT_NOTE_FIELDS = ("n_requests", "n_requests_source", "tok_s_per_user_lo", "tok_s_per_user_hi",
                     "tok_s_per_gpu_lo", "tok_s_per_gpu_hi", "interval_level", "spec_method", "acceptance_length",
                     "acceptance_source")


def _point(ctx, r) -> dict:
    """A point as a reading cites it (``per_user_def``: the statistic its per-user speed was read at)."""
    full = ctx.row(r)
    return {"tok_s_per_gpu": r.get("tok_s_per_gpu"), "tok_s_per_user": r["tok_s_per_user"],
            "concurrency": r.get("concurrency"), "row": ctx.rid(r), "per_user_def": full.get("tok_s_per_user_def"),
            "source_url": full.get("source_url"),
            # how sure the point is and how its speculative decoding was set (selection.UNCERTAINTY_FIELDS)
            **{k: full.get(k) for k in POINT_NOTE_FIELDS}}


def _at_lengths(points: pd.DataFrame, pairs, claim: Claim | None = None) -> pd.DataFrame:
    """The points at the compared length pairs; for a claim that states no lengths, also the points that have
    none (agentic traces, a named dataset), each compared only within its own group."""
    if points.empty:
        return points.iloc[0:0]
    keys = set(pairs or ())
    keep = [(a, b) in keys for a, b in zip(points["isl"], points["osl"])]
    if claim is not None and not is_stated(claim.isl_osl):
        keep = [k or (pd.isna(a) and pd.isna(b)) for k, a, b in zip(keep, points["isl"], points["osl"])]
    return points[keep]


def _nan_free(key) -> tuple:
    """A group key with NaN made None, so two groupings of one table look each other's groups up."""
    return tuple(None if isinstance(x, float) and math.isnan(x) else x for x in key)


def _groups_of(front: pd.DataFrame, by=CHECK_BY):
    if front.empty:
        return []
    return list(front.groupby(by, dropna=False, sort=True))


def group_key_label(key, gpus=()) -> str:
    """``GB300 NVL72 · FP4 · rack`` for a (hardware, precision, scope, …) group key; with the GPU counts of the
    points it names (``gpus``), the scope says them: ``node (4 GPUs)``, since a node of an NVL72 rack is a 4-GPU
    tray where a reader pictures an 8-GPU node."""
    hw, prec, scope = key[0], key[1], key[2]
    counts = sorted({int(n) for n in gpus if n is not None and n == n and n > 0})
    if counts:
        scope = f"{scope} ({counts[0]} GPU{'s' if counts[0] > 1 else ''})" if len(counts) == 1 else \
            f"{scope} ({counts[0]}–{counts[-1]} GPUs)"
    return f"{hw} · {precision_word(prec)} · {scope}"


def _neighbours(front: pd.DataFrame, target: float) -> tuple:
    """The measured frontier points just below and just above ``target`` tok/s/user (None at an open end)."""
    f = front.sort_values("tok_s_per_user")
    below, above = f[f["tok_s_per_user"] <= target], f[f["tok_s_per_user"] >= target]
    return (below.iloc[-1] if len(below) else None, above.iloc[0] if len(above) else None)


def single_user_end(front: pd.DataFrame) -> pd.Series:
    """The fastest per-user point of one frontier group."""
    return front.loc[front["tok_s_per_user"].idxmax()]


# Serving engines by the words a claim's software or a point's framework uses for them.
ENGINE_WORDS = {"sglang": ("sglang",), "vllm": ("vllm",), "trt": ("tensorrt-llm", "trt-llm", "trtllm", "trt")}
ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM", "trt": "TensorRT-LLM"}
# Conditions listed in a reading's differs that inform without making the reading a worse match (not counted when
# the readings are ranked)
INFORMATIVE = {"framework", "software date"}
# Days between a point's run and the claim's date past which the software is called another: the same InferenceX
# configuration re-run moved a median 0.4% within 7 days and 7.9% at 8-30 days (perfclaims model --validate,
# rerun_spread), so past a week a date is a condition the comparison did not hold equal.
SOFTWARE_DAYS = 7


def engine_of(text) -> str | None:
    """The one serving engine ``text`` names (``sglang``, ``vllm``, ``trt``), None for none or several."""
    t = str(text or "").lower()
    found = {e for e, words in ENGINE_WORDS.items() if any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", t)
                                                             for w in words)}
    return found.pop() if len(found) == 1 else None


def scope_in_text(text) -> str | None:
    """The deployment scope a claim's free-text scope names: ``rack`` (NVL72, rack), ``multi-node`` (several
    nodes, a decode or prefill unit), ``node`` (one node), else None."""
    t = str(text or "").lower()
    if not t or t.startswith("not stated") and "nvl72" not in t:
        return None
    if "nvl72" in t or "rack" in t:
        return "rack"
    if "multi-node" in t or "multinode" in t or " unit" in t or re.search(r"\b\d+\s*nodes\b", t):
        return "multi-node"
    if "node" in t:
        return "node"
    return None


def select_for_part(claim: Claim, part: ClaimPart, pts: pd.DataFrame) -> tuple[pd.DataFrame, list[Difference]]:
    """The pool's points a part is checked on: its hardware (else the same generation), precision and scope; the
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
            differs.append(Difference("hardware", ", ".join(sorted(sel["hardware"].astype(str).unique())),
                                      str(want)))
    prec = part.precision or base_precision(claim.precision)
    if prec:
        sel = sel[sel["precision"] == prec]
    if part.scope:
        sel = sel[sel["scope"] == part.scope]
    return sel, differs


class _Context:
    """What every row of one part shares: the evidence, the full point rows, what differs."""

    def __init__(self, ev: ClaimEvidence, part: ClaimPart, sel: pd.DataFrame, differs: list[Difference]):
        self.ev, self.claim, self.part, self.differs = ev, ev.claim, part, differs
        self.model_tier = ev.pool_tier
        self.full = {(r["source_file"], r["source_line"]): r for r in sel.to_dict("records")}

    def row(self, front_row) -> dict:
        """The full point behind a frontier row (the frontier keeps only some columns)."""
        key = (front_row["source_file"], front_row["source_line"])
        return self.full.get(key, dict(front_row))

    def rid(self, front_row) -> str:
        return row_id(self.row(front_row))

    def base(self, **extra) -> dict:
        part = self.part
        unit = ("total " + part.unit if part.kind in ("per-GPU", "per-system") and str(self.claim.counts) == "total"
                else part.unit)
        ttft_p99 = [lim.max_ms for lim in self.ev.limits if lim.metric == "ttft" and lim.stat == "p99"]
        return {"part": part.text, "kind": part.kind, "claimed": part.compared_value, "unit": unit,
                "lengths_note": self.ev.lengths_note, "limits": self.ev.limits_text,
                "ttft_p99_limit_ms": min(ttft_p99) if ttft_p99 else math.nan, **extra}

    def tier(self, key, used=()) -> tuple[str, list[Difference], bool]:
        """(match, differs, whether a measured/claimed ratio may be computed) for one measured group, judged on
        the points a reading rests on (``used``) for speculative decoding."""
        differs = list(self.differs)
        spec = spec_decode_of(self.claim)
        measured = sorted({str(self.row(r).get("spec_decode")) for r in used if r is not None})
        spec_differs = bool(spec and measured and measured != [spec])
        if spec_differs:
            text = str(self.claim.spec_decode)
            differs.append(Difference("speculative decoding", ", ".join(measured), text if len(text) <= 24 else spec))
        at_lengths = lengths_match(self.claim, key[3], key[4])
        if at_lengths is False:
            differs.append(Difference("lengths", lengths_text(key[3], key[4]), str(self.claim.isl_osl)))
        deployment = self.deployment_differs(used)
        differs += deployment
        revisions = sorted({str(self.row(r).get("model")) for r in used if r is not None
                            and not same_checkpoint(self.claim.model, self.row(r).get("model"))})
        if revisions and self.model_tier != "proxy":
            # another checkpoint of the same architecture: same-model evidence, said so, still a percentage
            differs.append(Difference("model revision", ", ".join(revisions), self.claim.model))
        differs += self.domain_differs(used)
        differs += self.framework_differs(used)
        differs += self.date_differs(used)
        if self.model_tier == "proxy":
            return "proxy", [Difference("model", ", ".join(self.ev.pool_models), self.claim.model)] + differs, False
        # A percentage of the claim needs the claim's stated conditions: its lengths, its speculative decoding and
        # its deployment (GPU count, scope, disaggregation).
        return (("direct" if not differs else "same-model"), differs,
                at_lengths is not False and not spec_differs and not deployment)

    def framework_differs(self, used) -> list[Difference]:
        """The serving engine the claim's software names (SGLang, vLLM, TensorRT-LLM) against the engines of the
        points a reading rests on. Said, not disqualifying: the percentage stands, the reader knows."""
        claimed = engine_of(self.claim.software)
        if claimed is None:
            return []
        rows = [self.row(r) for r in used if r is not None]
        measured = sorted({str(r.get("framework")) for r in rows if engine_of(r.get("framework")) not in (None, claimed)})
        if not measured:
            return []
        return [Difference("framework", ", ".join(measured), ENGINE_NAMES[claimed])]

    def date_differs(self, used) -> list[Difference]:
        """The dates of the points a reading rests on against the claim's, where they are more than
        :data:`SOFTWARE_DAYS` apart: other software, said, not disqualifying (as the engine)."""
        text = str(self.claim.date).strip()
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", text):  # a year or a month is no day to count from
            return []
        try:
            claimed = pd.Timestamp(text[:10])
        except (ValueError, TypeError):
            return []
        rows = [self.row(r) for r in used if r is not None]
        days = set()
        for r in rows:
            try:
                days.add((pd.Timestamp(str(r.get("date"))[:10]) - claimed).days)
            except (ValueError, TypeError):
                continue
        far = sorted(d for d in days if abs(d) > SOFTWARE_DAYS)
        if not far:
            return []
        words = ", ".join(f"{abs(d)} days {'before' if d < 0 else 'after'}" for d in far)
        return [Difference("software date", words, claimed.date().isoformat())]

    def domain_differs(self, used) -> list[Difference]:
        """A claim that names a rack-scale NVLink domain (GB300 NVL72) without a GPU count, read on points that ran
        on fewer GPUs than that domain: the reader must know 4 GPUs are not the 72-GPU domain."""
        n = self.part.n_gpus
        if self.part.kind == "ratio" or (isinstance(n, (int, float)) and math.isfinite(n)):
            return []
        try:
            domain = specs.hardware(str(self.claim.hardware_table or self.claim.hardware)).scale_up_domain_gpus
        except KeyError:
            return []
        if not domain or domain <= 8:
            return []
        rows = [self.row(r) for r in used if r is not None]
        gpus = sorted({float(r["n_gpus"]) for r in rows if pd.notna(r.get("n_gpus"))})
        inside = any(str(r.get("scope")) in ("rack", "multi-node") for r in rows)
        if gpus and max(gpus) < domain and not inside:
            return [Difference("NVLink domain", f"{', '.join(plain(g) for g in gpus)} of its GPUs (a part of the domain "
                               "the claim's hardware names)",
                               f"all {plain(domain)}, as far as the claim says (it names the {plain(domain)}-GPU "
                               "product and states no GPU count)")]
        return []

    def deployment_differs(self, used) -> list[Difference]:
        """GPU count, scope and disaggregation of the points a reading rests on, where the claim states a GPU
        count for the part (a ratio part compares two deployments and is left alone)."""
        n = self.part.n_gpus
        if self.part.kind == "ratio" or not isinstance(n, (int, float)) or not math.isfinite(n) or n <= 0:
            return []
        rows = [self.row(r) for r in used if r is not None]
        gpus = sorted({float(r["n_gpus"]) for r in rows if pd.notna(r.get("n_gpus"))})
        out = []
        stated = self.part.scope or scope_in_text(self.claim.scope)
        # a claim that names a multi-node deployment counts its GPUs as a denominator (per node), not a size
        if gpus and gpus != [float(n)] and stated != "multi-node":
            out.append(Difference("GPU count", ", ".join(plain(g) for g in gpus), plain(n)))
        want = stated or scope_for(n, 8 if n <= 8 else n)
        scopes = sorted({str(r.get("scope")) for r in rows if str(r.get("scope")) not in ("unknown", "nan", "None")})
        if scopes and scopes != [want]:
            out.append(Difference("scope", ", ".join(scopes), want))
        split = sorted({bool(r.get("disagg")) for r in rows if pd.notna(r.get("disagg"))})
        if want in ("single-gpu", "node") and True in split:
            out.append(Difference("disaggregation", "prefill/decode disaggregated", f"one {plain(n)}-GPU deployment"))
        return out

    def tail(self, rows) -> dict:
        """Tail latency of the point(s) a reading rests on (the worst of them)."""
        full = [self.row(r) for r in rows if r is not None]
        worst = {}
        for col in ("ttft_ms_p99", "tpot_ms_p99"):
            vals = [float(f[col]) for f in full if f.get(col) is not None and not pd.isna(f.get(col))]
            worst[col] = max(vals) if vals else math.nan
        return worst


def _capacity_rows(ctx: _Context, sel: pd.DataFrame) -> list[dict]:
    part = ctx.part
    claimed = part.compared_value
    at = part.at_tok_s_per_user
    at_lengths = _at_lengths(sel, ctx.pairs, ctx.claim)
    fronts = {d: frontier.frontier(at_lengths, by=CHECK_BY, denominator=d) for d in ("all", "decode")}
    decode_groups = dict(_groups_of(fronts["decode"]))
    rows = []
    for key, g in _groups_of(fronts["all"]):
        gd = decode_groups.get(key, g.iloc[0:0])
        base = ctx.base(group=group_key_label(key, g["n_gpus"] if "n_gpus" in g else ()),
                        lengths=lengths_text(key[3], key[4]))
        gpus_of = lambda used, k=key: group_key_label(k, [r.get("n_gpus") for r in used])  # noqa: E731  points read
        if not math.isnan(at):
            m_all, m_dec = capacity_at(g, [at])[0], capacity_at(gd, [at])[0] if len(gd) else math.nan
            lo, hi = _neighbours(g, at)
            if math.isnan(m_all):
                reading = {"rule": "outside-frontier", "at": at, "low": g["tok_s_per_user"].min(),
                           "high": g["tok_s_per_user"].max()}
                used = []
            elif lo is not None and hi is not None and lo["tok_s_per_user"] != hi["tok_s_per_user"]:
                used = [lo, hi]
                reading = {"rule": "interpolated", "points": [_point(ctx, lo), _point(ctx, hi)],
                           "rough": bool(hi["tok_s_per_user"] / lo["tok_s_per_user"] > frontier.WIDE_GAP)}
            else:
                r = lo if lo is not None else hi
                used = [r]
                reading = {"rule": "measured", "points": [_point(ctx, r)]}
            match, differs, ratio_ok = ctx.tier(key, used)
            rows.append({**base, **({"group": gpus_of(used)} if used else {}), "match": match, "differs": differs,
                         "tok_s_per_user": at, "measured_all": m_all,
                         "measured_decode": m_dec,
                         "measured_over_claimed": m_all / claimed if ratio_ok else math.nan, "reading": reading,
                         "rows": [ctx.rid(r) for r in used], "evidence": [evidence_object(ctx.row(r)) for r in used],
                         **ctx.tail(used)})
        else:
            free = g.loc[g["tok_s_per_gpu"].idxmax()]
            cap, capd = free, gd.loc[gd["tok_s_per_gpu"].idxmax()]["tok_s_per_gpu"] if len(gd) else math.nan
            limited = {}
            if ctx.ev.default_capacity_limit:  # the claim and its scenario set none: perfclaims' sanity limit
                ok = meets_limits(pd.DataFrame([ctx.row(r) for r in g.to_dict("records")]), list(ctx.ev.capacity_limits))
                okd = meets_limits(pd.DataFrame([ctx.row(r) for r in gd.to_dict("records")]),
                                   list(ctx.ev.capacity_limits)) if len(gd) else ok.iloc[0:0]
                limited = {"limit": ctx.ev.capacity_limits[0].text, "met": int(ok.sum()), "of": len(ok)}
                if not ok.any():
                    rows.append({**base, **_EMPTY, "group": base["group"], "lengths": base["lengths"],
                                 "reading": {"rule": "no-capacity-within-limit", **limited,
                                             "unconstrained": _point(ctx, free)}})
                    continue
                gl = g[ok.to_numpy()]
                cap = gl.loc[gl["tok_s_per_gpu"].idxmax()]
                gdl = gd[okd.to_numpy()] if len(gd) else gd
                capd = gdl.loc[gdl["tok_s_per_gpu"].idxmax()]["tok_s_per_gpu"] if len(gdl) else math.nan
            match, differs, ratio_ok = ctx.tier(key, [cap])
            same = ctx.rid(cap) == ctx.rid(free)
            rows.append({**base, "group": gpus_of([cap]), "match": match, "differs": differs,
                         "tok_s_per_user": cap["tok_s_per_user"],
                         "measured_all": cap["tok_s_per_gpu"], "measured_decode": capd,
                         "measured_over_claimed": cap["tok_s_per_gpu"] / claimed if ratio_ok else math.nan,
                         "reading": {"rule": "capacity", "points": [_point(ctx, cap)], **limited,
                                     "unconstrained": None if same or not limited else _point(ctx, free)},
                         "rows": [ctx.rid(cap)], "evidence": [evidence_object(ctx.row(cap))], **ctx.tail([cap])})
    return rows


def _per_user_rows(ctx: _Context, sel: pd.DataFrame) -> list[dict]:
    """The fastest point of each group (every point with a per-user speed counts: a published row that gives no
    output tok/s/GPU still has a speed), the capacity from the group's frontier where it has one. Checkpoints are
    grouped apart (``model_key``), so the claim's own model is never hidden behind another revision."""
    part = ctx.part
    rows = []
    pts = _at_lengths(sel, ctx.pairs, ctx.claim)
    pts = pts[pts["tok_s_per_user"].notna() & (pts["tok_s_per_user"] > 0)] if len(pts) else pts
    if pts.empty:
        return rows
    pts = pts.assign(model_key=pts["model"].map({m: model_key(m) for m in pts["model"].unique()}))
    fronts = {_nan_free(k): f for k, f in _groups_of(frontier.frontier(pts, by=CHECK_BY + ["model_key"]),
                                                      by=CHECK_BY + ["model_key"])}
    for key, g in pts.groupby(CHECK_BY + ["model_key"], dropna=False, sort=True):
        end = g.loc[g["tok_s_per_user"].idxmax()]
        match, differs, ratio_ok = ctx.tier(key, [end])
        front = fronts.get(_nan_free(key))
        cap = front.loc[front["tok_s_per_gpu"].idxmax()] if front is not None and len(front) else None
        src = ctx.row(end)
        sol_bw, sol_comm = own_sol(src)
        tau, tau_source = own_sol_tau(src)
        label = group_key_label(key, [end.get("n_gpus")]) + ("" if same_checkpoint(ctx.claim.model, end["model"])
                                                             else f" · {end['model']}")
        rows.append({**ctx.base(group=label, lengths=lengths_label(key[3], key[4], ctx.row(end).get("workload"))),
                     "model": src.get("model"), "n_gpus": end.get("n_gpus"), "own_sol_tok_s_per_user": sol_bw,
                     "own_sol_comm_tok_s_per_user": sol_comm, "share_of_own_sol_comm": end["tok_s_per_user"] / sol_comm,
                     "own_sol_tau": tau, "own_sol_tau_source": tau_source,
                     "capacity_tok_s_per_gpu": cap["tok_s_per_gpu"] if cap is not None else math.nan,
                     "capacity_tok_s_per_user": cap["tok_s_per_user"] if cap is not None else math.nan,
                     "capacity_row": ctx.rid(cap) if cap is not None else "",
                     "capacity_gpus": cap.get("n_gpus") if cap is not None else math.nan,
                     "capacity_gpu_denominator": str(cap.get("gpu_denominator")) if cap is not None else "",
                     "capacity_user_def": str(cap.get("tok_s_per_user_def")) if cap is not None else "",
                     "tok_s_per_user": end["tok_s_per_user"],
                     "measured_all": end["tok_s_per_user"], "measured_decode": math.nan,
                     "measured_over_claimed": end["tok_s_per_user"] / part.value if ratio_ok else math.nan,
                     "reading": {"rule": "fastest", "points": [_point(ctx, end)]},
                     "rows": [ctx.rid(end)], "evidence": [evidence_object(src)], "match": match, "differs": differs,
                     **ctx.tail([end])})
    return rows


def _best_side(front: pd.DataFrame, pair, axis: str, at: float):
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
            best = (v, group_key_label(key, [r.get("n_gpus") for r in used]), used)
    return best


def _rough(used) -> bool:
    """A value read between two frontier points further apart than the frontier's wide gap."""
    speeds = [r["tok_s_per_user"] for r in used if r is not None]
    return len(speeds) == 2 and min(speeds) > 0 and max(speeds) / min(speeds) > frontier.WIDE_GAP


def _ratio_base(ctx: _Context) -> dict:
    part = ctx.part
    return ctx.base(unit=f"× ({part.axis or 'not stated'})", measured_decode=math.nan, lengths_note="")


_EMPTY = {"group": "", "lengths": "", "tok_s_per_user": math.nan, "measured_all": math.nan,
          "measured_over_claimed": math.nan, "rows": [], "evidence": [], "match": "none", "differs": []}


def _level(part: ClaimPart) -> tuple[float, bool]:
    """The tok/s/user a ratio is read at, and whether perfclaims chose it (the claim names none)."""
    if not math.isnan(part.at_tok_s_per_user):
        return part.at_tok_s_per_user, False
    return REFERENCE_TOK_S_PER_USER, True


def _ratio_rows(ctx: _Context, pts: pd.DataFrame) -> list[dict]:
    claim, part = ctx.claim, ctx.part
    axis = part.axis_key
    side_a, ctx.differs = select_for_part(claim, part, pts)
    side_b = _baseline_points(pts, part)
    ctx.full.update({(r["source_file"], r["source_line"]): r for r in pd.concat([side_a, side_b]).to_dict("records")})
    at, chosen = _level(part)
    front_a, front_b = frontier.frontier(side_a, by=CHECK_BY), frontier.frontier(side_b, by=CHECK_BY)
    pairs_a = {(k[3], k[4]) for k, _ in _groups_of(front_a)}
    pairs_b = {(k[3], k[4]) for k, _ in _groups_of(front_b)}
    common = sorted(p for p in pairs_a & pairs_b if not any(pd.isna(x) for x in p))
    want = stated_lengths(claim)
    note = {"rule": "at-stated" if want in common else "no-common-stated" if want else "not-stated",
            "stated": want}
    rows = []
    for pair in ([want] if want in common else common):
        a, b = _best_side(front_a, pair, axis, at), _best_side(front_b, pair, axis, at)
        measured = a[0] / b[0]
        used = a[2] + b[2]
        match, differs, ratio_ok = ctx.tier((None, None, None) + pair, used)
        rows.append({**_ratio_base(ctx), "group": f"{a[1]} vs {b[1]}", "lengths": lengths_text(*pair),
                     "compared_lengths": tuple(pair),
                     "lengths_note": note, "tok_s_per_user": at if axis == "tok/s/GPU" else math.nan,
                     "measured_all": measured, "measured_over_claimed": measured / part.value if ratio_ok else math.nan,
                     "rows": [ctx.rid(r) for r in used], "evidence": [evidence_object(ctx.row(r)) for r in used],
                     "match": match, "differs": differs,
                     "reading": {"rule": "ratio", "axis": axis, "at": at, "level_chosen": chosen and axis != "tok/s/user",
                                 "a": a[0], "a_group": a[1], "b": b[0], "b_group": b[1], "baseline": part.baseline,
                                 "measured": measured,
                                 "rough": axis == "tok/s/GPU" and (_rough(a[2]) or _rough(b[2]))}})
    if not rows:
        rows.append({**_ratio_base(ctx), **_EMPTY,
                     "reading": {"rule": "no-common-lengths", "hardware": part.hardware or claim.hardware,
                                 "baseline": part.baseline}})
    return rows


def _baseline_points(pts: pd.DataFrame, part: ClaimPart) -> pd.DataFrame:
    keys = hw_keys(pts)
    side_b = pts[(keys == hw_key(part.baseline)) | (keys.map(generation) == str(part.baseline).lower())]
    return side_b[side_b["scope"] == part.baseline_scope] if part.baseline_scope else side_b


def _not_checkable_rows(ctx: _Context, pts: pd.DataFrame) -> list[dict]:
    return [{**_ratio_base(ctx), **_EMPTY, "reading": {"rule": "axis-not-checkable", "axis": ctx.part.axis,
                                                        "baseline": ctx.part.baseline}}]


def _per_mw_rows(ctx: _Context, pts: pd.DataFrame) -> list[dict]:
    """A throughput-per-MW ratio: which side lacks measured power (the reason it cannot be checked here)."""
    side_a, _ = select_for_part(ctx.claim, ctx.part, pts)
    side_b = _baseline_points(pts, ctx.part)
    names = (ctx.part.hardware or ctx.claim.hardware, ctx.part.baseline)
    with_power = [name for name, side in zip(names, (side_a, side_b))
                  if "power_w" in side and side["power_w"].notna().any()]
    return [{**_ratio_base(ctx), **_EMPTY,
             "reading": {"rule": "no-power", "missing": [str(n) for n in names if n not in with_power]}}]


def _cost_ratio_rows(ctx: _Context, pts: pd.DataFrame) -> list[dict]:
    """A 'N× lower cost per million tokens' part: $/M output tokens of each side's cheapest frontier at the same
    tok/s/user and lengths, from the published price per GPU-hour of each side's hardware (named on the row)."""
    from analysis import cost

    claim, part = ctx.claim, ctx.part
    base = _ratio_base(ctx)
    prices = cost.load_prices()
    side_a, ctx.differs = select_for_part(claim, part, pts)
    side_b = _baseline_points(pts, part)
    at, chosen = _level(part)
    col = frontier.metric_column("usd_per_mtok", at)
    tables = [frontier.metric_table(frontier.metric_frontier(side, metric="usd_per_mtok", by=CHECK_BY,
                                                             prices=prices), targets=[at], metric="usd_per_mtok",
                                    by=CHECK_BY) if len(side) else pd.DataFrame() for side in (side_a, side_b)]
    if any(t.empty or col not in t for t in tables):
        missing = cost.missing_prices(prices, pd.concat([side_a["hardware"], side_b["hardware"]]))
        return [{**base, **_EMPTY, "reading": {"rule": "no-prices",
                                               "missing": cost.no_price_message(missing) if missing else ""}}]
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
            differs.append(Difference("lengths", lengths_text(*pair), str(claim.isl_osl)))
        ga = group_key_label(tuple(ra[c] for c in CHECK_BY), [ra.get("n_gpus")])
        gb = group_key_label(tuple(rb[c] for c in CHECK_BY), [rb.get("n_gpus")])
        rough = [g for g, r in ((ga, ra), (gb, rb)) if r.get(frontier.reading_column(at)) == "wide gap"]
        side = lambda r, g: {"usd_per_mtok": r[col], "group": g, "usd_per_gpu_hour": r["usd_per_gpu_hour"],  # noqa: E731
                             "hardware": r["hardware"], "price_source": r["price_source"]}
        rows.append({**base, "group": f"{ga} vs {gb}", "lengths": lengths_text(*pair),
                     "compared_lengths": tuple(pair), "lengths_note": "",
                     "tok_s_per_user": at, "measured_all": measured, "measured_over_claimed": math.nan,
                     "rows": [], "evidence": [], "match": ctx.model_tier if ctx.model_tier == "proxy" else "same-model",
                     "differs": differs,
                     "reading": {"rule": "cost-ratio", "at": at, "level_chosen": chosen, "a": side(ra, ga),
                                 "b": side(rb, gb), "measured": measured, "price_basis": ra["price_basis"],
                                 "rough": rough}})
    return rows or [{**base, **_EMPTY, "reading": {"rule": "no-priced-lengths"}}]


def _none_row(ev: ClaimEvidence, part: ClaimPart, rule: str) -> dict:
    return {"part": part.text, "kind": part.kind, "claimed": part.compared_value, "unit": part.unit, "group": "",
            "lengths": "", "tok_s_per_user": part.at_tok_s_per_user, "measured_all": math.nan,
            "measured_decode": math.nan, "measured_over_claimed": math.nan, "reading": {"rule": rule}, "rows": [],
            "lengths_note": "", "match": "none", "differs": [], "evidence": [], "limits": ev.limits_text}


def _frontier_check(rows_for: Callable) -> Callable:
    """A per-user or capacity check: the part's points (hardware, precision, scope) at the compared lengths."""
    def check(ev: ClaimEvidence, part: ClaimPart) -> list[dict]:
        from analysis.claims.conditions import matched_lengths

        if ev.pool.empty:
            return [_none_row(ev, part, "no-matching-points")]
        pool = ev.pool
        if part.kind != "per-user" and str(ev.claim.counts) == "total":
            # the claim counts input + output tokens: its evidence is read on total tok/s, never on output
            pool = pool[pool["total_tok_s"].notna()].assign(output_tok_s=lambda d: d["total_tok_s"],
                                                           tok_s_per_gpu=lambda d: d["total_tok_s"] / d["n_gpus"])
        sel, differs = select_for_part(ev.claim, part, pool)
        ctx = _Context(ev, part, sel, differs)
        ctx.pairs, note = matched_lengths(ev.claim, sel)
        ctx.ev = _with_note(ev, note)
        return rows_for(ctx, sel) or [_none_row(ev, part, "no-matching-points")]
    return check


def _with_note(ev: ClaimEvidence, note: str) -> ClaimEvidence:
    """The evidence with the lengths note of one part's own selection (each part compares at its own lengths)."""
    from dataclasses import replace

    return replace(ev, lengths_note=note)


def _ratio_check(rows_for: Callable) -> Callable:
    def check(ev: ClaimEvidence, part: ClaimPart) -> list[dict]:
        if ev.pool.empty:
            return [_none_row(ev, part, "no-evidence")]
        return rows_for(_Context(ev, part, ev.pool.iloc[0:0], []), ev.pool)
    return check


# (part kind, ratio axis) -> the check that reads it. Latency parts are conditions, not numbers to check.
CHECKS: dict[tuple[str, str | None], Callable[[ClaimEvidence, ClaimPart], list[dict]]] = {
    ("per-user", None): _frontier_check(_per_user_rows),
    ("per-GPU", None): _frontier_check(_capacity_rows),
    ("per-system", None): _frontier_check(_capacity_rows),
    ("ratio", "tok/s/user"): _ratio_check(_ratio_rows),
    ("ratio", "tok/s/GPU"): _ratio_check(_ratio_rows),
    ("ratio", "cost"): _ratio_check(_cost_ratio_rows),
    ("ratio", "per-MW"): _ratio_check(_per_mw_rows),
    ("ratio", "other"): _ratio_check(_not_checkable_rows),
}


def check_parts(ev: ClaimEvidence) -> pd.DataFrame:
    """Each number of the claim against the measured frontier of matching hardware, precision and lengths.

    One row per part × measured group (hardware · precision · scope at one ISL/OSL): per-user parts against the
    fastest point, per-GPU parts at their stated tok/s/user (both GPU denominators) or against the measured
    capacity, ratio parts computed from both sides at equal lengths; every row says how its evidence matches
    (``match``, ``differs``) and how it was read (``reading``). The pool already meets the claim's latency limits.
    """
    rows: list[dict] = []
    for part in ev.parts:
        check = CHECKS.get((part.kind, part.axis_key))
        if check is None:
            continue
        rows += check(ev, part)
    table = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    table["lengths_far"] = [_lengths_far(ev.claim, r) for r in table.to_dict("records")]
    table["rough"] = [bool((r or {}).get("rough")) for r in table["reading"]]
    ratio = (table["measured_all"] / table["claimed"]).where(table["kind"] != "ratio")
    table["gap"] = pd.concat([ratio, 1 / ratio], axis=1).max(axis=1, skipna=False)
    table["claim_in_interval"] = [_claim_in_interval(r) for r in table.to_dict("records")]
    order = {p.text: i for i, p in enumerate(ev.parts)}
    # the best tier first, then the reading with fewest differing conditions, then the highest
    # ... and close readings before rough ones (read across a wide frontier gap)
    table = table.assign(_p=table["part"].map(order), _t=table["match"].map(MATCH_TIERS.index),
                         _d=[sum(getattr(x, "condition", None) not in INFORMATIVE for x in (d or []))
                             for d in table["differs"]], _r=table["rough"].astype(int))
    table = table.sort_values(["_p", "_t", "_d", "_r", "measured_all"], ascending=[True, True, True, True, False],
                              na_position="last")
    return table.drop(columns=["_p", "_t", "_d", "_r"]).reset_index(drop=True)


def _claim_in_interval(row: dict) -> bool | None:
    """Whether the claimed number lies inside the 95% interval of the one measured point a per-user or capacity
    reading rests on (True: the difference is within the measurement's noise); None where the reading rests on no
    single point or the point has no interval."""
    reading = row.get("reading") or {}
    points = reading.get("points") or []
    if row.get("kind") == "ratio" or reading.get("rule") not in ("fastest", "measured", "capacity") or len(points) != 1:
        return None
    q = "user" if row.get("kind") == "per-user" else "gpu"
    lo, hi = points[0].get(f"tok_s_per_{q}_lo"), points[0].get(f"tok_s_per_{q}_hi")
    claimed = row.get("claimed")
    if any(v is None or pd.isna(v) for v in (lo, hi, claimed)):
        return None
    return bool(lo <= claimed <= hi)


def _lengths_far(claim: Claim, row: dict) -> bool:
    """Whether a row's lengths are more than :data:`LENGTHS_FAR` from the claim's stated lengths (input or output)."""
    want = stated_lengths(claim)
    evidence = list(row.get("evidence") or [])
    pair = row.get("compared_lengths")
    if not evidence and isinstance(pair, tuple):
        # a ratio or cost row cites no single point: the length pair both sides were read at
        evidence = [{"isl": pair[0], "osl": pair[1]}]
    if want is None or not evidence:
        return False
    for e in evidence:
        isl, osl = e.get("isl"), e.get("osl")
        if isl is None or osl is None or pd.isna(isl) or pd.isna(osl) or isl <= 0 or osl <= 0:
            continue
        if max(isl / want[0], want[0] / isl, osl / want[1], want[1] / osl) > LENGTHS_FAR:
            return True
    return False
