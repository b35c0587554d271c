"""The claim-card page: one object the notebook displays, answer first.

Order on the page: title and source; the bottom line (one sentence); the six answers as a table (question ·
answer · stated / inferred / not stated · evidence); one figure; then the detail — each number of the claim against
the evidence with its match tier, the FP4/FP8 pairs (clean apart from confounded), the speed of light, the
evidence summary and what the source leaves unstated. Tables keep short headers and move long prose into bullet
lists below them, so they fit a 1,400 px page. Every data-derived string in Markdown goes through ``text.esc``
(tables are escaped cell by cell by ``report.show_table``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis import claims, data, specs
from analysis.claims.answers import SHORT_QUESTIONS
from analysis.claims.evidence import same_architecture
from analysis.claims.labels import PER_USER_DEFS, precision_label, precision_word, share, sol_precision
from analysis.claims.status import LABELS, status_text
from analysis.claims.words import match_label
from analysis.text import esc, links, num

STATUS_SHORT = {claims.STATED: "stated", claims.INFERRED: "inferred", claims.NOT_STATED: "not stated"}


def _sources(evidence: list, limit: int = 2) -> str:
    ids = list(dict.fromkeys(e["source"] for e in evidence))
    more = f" +{len(ids) - limit}" if len(ids) > limit else ""
    return ", ".join(ids[:limit]) + more


def _context_short(context: str) -> str:
    """What an answer's context is, in a few words (the context itself is in the full answers below)."""
    if not context:
        return "–"
    kinds = [w for w, key in (("proxy model", "Proxy"), ("roofline bounds", "Roofline")) if key in context]
    return " and ".join(kinds) + " (below)" if kinds else "see below"


def _share_at_tau(t: pd.DataFrame, prefix: str) -> list[str]:
    """A point's share of its own model's bound, with the τ that bound is read at where it is above 1
    (``{prefix}share_of_own_sol_comm``, ``{prefix}own_sol_tau``, ``{prefix}own_sol_tau_source``)."""
    none = pd.Series(float("nan"), index=t.index)
    return ["–" if pd.isna(f) else share(f) + (f" (τ {tau:.2f} {src})" if pd.notna(tau) and tau > 1 else "")
            for f, tau, src in zip(t[f"{prefix}share_of_own_sol_comm"], t.get(f"{prefix}own_sol_tau", none),
                                   t.get(f"{prefix}own_sol_tau_source", none))]


@dataclass
class ClaimCardPage:
    """Everything ``notebooks/50-claim-card.ipynb`` shows, built from one :class:`analysis.claims.ClaimCard`."""

    card: claims.ClaimCard

    # --- the answer first ----------------------------------------------------------------------------
    @property
    def header_md(self) -> str:
        c = self.card.claim
        note = f"\n\n*Model used for the roofline:* {esc(self.card.model_note)}" if self.card.model_note else ""
        return (f"# Claim {esc(c.id)}: {esc(claims.claim_title(c))}\n\n"
                f"**{esc(c.model)}** on **{esc(c.hardware)}** · {esc(c.software)} · {esc(c.date)}  \n"
                f"Source ({esc(c.source_type)}): {links(c.source)}"
                + (f"  \n**Checked against the primary source:** {esc(c.source_check)}" if c.source_check else "")
                + note)

    @property
    def bottom_line_md(self) -> str:
        status = self.card.status
        return (f"**Status: {esc(LABELS[status['status']])}.** {esc(status_text(status))}\n\n"
                f"**Bottom line.** {esc(self.card.bottom_line)}")

    def answers_table(self) -> pd.DataFrame:
        """Question · answer · stated/inferred/not stated · evidence (tier and rows), one row per question."""
        rows = []
        tiers = set(self.card.evidence["tier"]) if len(self.card.evidence) else set()
        tier = ("proxy (another model)" if tiers <= {"proxy", "other model"} and "proxy" in tiers
                else "other models only" if tiers == {"other model"} else "same-model" if tiers else "")
        for key, a in self.card.answers.items():
            ev = _sources(a.evidence) if a.evidence else ", ".join(a.rows[:2])
            if key == "scope" and not a.evidence and a.status != claims.STATED:
                ev = "roofline (SOL table below)"
            rows.append({"question": SHORT_QUESTIONS[key], "answer": a.short or a.answer,
                         "status": STATUS_SHORT.get(a.status, a.status),
                         "evidence": (f"{tier}: {ev}" if ev and a.evidence and tier else ev) or "–",
                         "context (not this model's evidence)": _context_short(a.context)})
        return pd.DataFrame(rows)

    @property
    def answers_md(self) -> str:
        """The six answers in full, below the table, each with its context (proxy models, roofline) labelled."""
        return "\n".join(f"- **{esc(SHORT_QUESTIONS[k])}** ({esc(STATUS_SHORT.get(a.status))}). {esc(a.answer)}"
                         + (f"  \n  *Context, not evidence of this model:* {esc(a.context)}" if a.context else "")
                         for k, a in self.card.answers.items())

    # --- detail --------------------------------------------------------------------------------------
    def comparisons_table(self) -> pd.DataFrame:
        """Each number of the claim against one measured group: short columns; the 'how' goes below as bullets."""
        c = self.card.checks
        if c.empty:
            return pd.DataFrame()
        return pd.DataFrame({
            "claimed": [f"{num(v)} {u}" for v, u in zip(c["claimed"], c["unit"])],
            "match": [match_label(r) for r in c.to_dict("records")],
            "measured group": c["group"], "ISL/OSL": c["lengths"],
            **({} if (c["kind"] == "per-user").all() else {"at tok/s/user": c["tok_s_per_user"].map(num)}),
            "measured": [("~" if rough else "") + num(v) for v, rough in zip(c["measured_all"], c["rough"])],
            "per user from": [_statistic(r) for r in c.to_dict("records")],
            "decode GPUs only": c["measured_decode"].map(num),
            "measured / claimed": c["measured_over_claimed"].map(lambda f: "–" if pd.isna(f) else share(f)),
            "share of own SOL (at its τ)": _share_at_tau(c, ""),
            "TTFT p99 s": c["ttft_ms_p99"].map(lambda v: "–" if pd.isna(v) else f"{v / 1000:,.1f}"),
        })

    @property
    def comparisons_md(self) -> str:
        c = self.card.checks
        lines = [f"Checked on {esc(self.card.checked_on)}. A percentage of the claim is given only for direct or "
                 "same-model evidence at the claim's lengths; proxy evidence (another model) is compared as a share "
                 "of its own speed of light instead. A per-GPU number stated at a tok/s/user is read off the "
                 "frontier at that interactivity (log-log between measured points: "
                 f"{esc(claims.SNAPSHOT_CAVEAT)})."]
        for r in c.to_dict("records"):
            extra = f" Differs: {esc('; '.join(r['differs']))}." if r.get("differs") else ""
            lim = f" Limits: {esc(r['limits'])}." if r.get("limits") else ""
            lines.append(f"- *{esc(r['part'])}* — {esc(r['group'] or 'no group')}: {esc(r['how'])}.{extra}{lim}")
        return "\n".join(lines)

    def pairs_table(self, clean: bool = True) -> pd.DataFrame:
        """FP4/FP8 pairs: clean ones (the headline) or confounded ones (listed apart, with their confounders)."""
        pairs = self.card.pairs[0 if clean else 1]
        model_table = self.card.claim.model_table
        return pd.DataFrame([{
            "tier": "same-model" if same_architecture(specs.match_model_name(str(p["a"]["model"])), model_table)
            else "proxy",
            "model": p["a"]["model"], "hardware": p["a"]["hardware"],
            "ISL/OSL": f"{num(p['a']['isl'])}/{num(p['a']['osl'])}",
            "FP4 spec / framework": f"{p['a']['spec_decode']} / {p['a']['framework']}",
            "FP8 spec / framework": f"{p['b']['spec_decode']} / {p['b']['framework']}",
            "FP4 tok/s/user": num(p["a"]["tok_s_per_user"]), "FP8 tok/s/user": num(p["b"]["tok_s_per_user"]),
            "FP4/FP8 (fastest points)": f"{p['ratio']:.2f}×",
            "batch-1 bytes bound FP4/FP8": "–" if p["roofline_ratio"] is None else f"{p['roofline_ratio']:.2f}×",
            "note": ("above the batch-1 roofline ratio" if p["above_roofline"] else "") if clean else
                    "confounded: " + ", ".join(p["confounders"]),
        } for p in pairs])

    def sol_table(self) -> pd.DataFrame:
        """Batch-1 speed of light per precision × scope × τ, short columns (the range is the interconnect
        table's low–high collective latency)."""
        s = self.card.sol
        if s.empty:
            return s
        return pd.DataFrame({
            "precision": [sol_precision(r) for _, r in s.iterrows()], "scope": s["scope"], "τ": s["tokens_per_step"],
            "bandwidth only": s["sol_tok_s_per_user"].map(num),
            "comm floor µs": (s["comm_floor_ms"] * 1000).map(lambda v: f"{v:,.0f}"),
            "with comm (overlapped)": s["sol_tok_s_per_user_comm"].map(num),
            "range": [("–" if w == "none" else f"{num(lo)}–{num(hi)}") for w, lo, hi in
                      zip(s["comm_where"], s["sol_tok_s_per_user_comm_low"], s["sol_tok_s_per_user_comm_high"])],
            "achievable": s["sol_tok_s_per_user_achievable_comm"].map(num),
            "HBM GB need / have": [f"{a:,.0f} / {b:,.0f}" for a, b in zip(s["hbm_needed_gb"], s["hbm_available_gb"])],
            "claim / SOL": s["fraction_of_sol_comm"].map(lambda f: "–" if math.isnan(f) else share(f)),
            "reading": s["reading"],
        })

    @property
    def sol_md(self) -> str:
        info = self.card.sol_info
        if self.card.sol.empty:
            return f"## Speed of light\n\nNo roofline: {esc(info.get('reason', 'no spec data'))}."
        sol = self.card.sol
        multi = sol[sol["comm_basis"] != ""]
        assumed_scopes = sorted({int(g) for g in multi.loc[multi["comm_basis"] == "assumption", "gpus"]})
        measured = multi[multi["comm_basis"] != "assumption"]
        assumed = (f" **The collective latency on {', '.join(f'{g} GPUs' for g in assumed_scopes)} is an "
                   "assumption, not a measurement** (no measured figure for that interconnect in "
                   "`data/specs/collectives.csv`)." if assumed_scopes else "")
        if len(measured):
            lat = ", ".join(f"{int(g)} GPUs {us:.1f} µs ({b}{', ' + lay if lay else ''}"
                            f"{', measured on ' + on if on and b != 'measured' else ''})" for g, us, b, lay, on in
                            measured.drop_duplicates("gpus")[["gpus", "collective_latency_us", "comm_basis",
                                                              "comm_layout", "comm_measured_on"]]
                            .itertuples(index=False))
            srcs = sorted({u for x in measured["comm_sources"] for u in str(x).split("; ") if u})
            assumed += (f" Measured per-collective latencies used: {esc(lat)}; sources: "
                        + "; ".join(esc(u) for u in srcs) + ".")
        from analysis import roofline, specs

        recipes = "".join(f" {esc(precision_label(p))} is the weights as {esc(info['model'])} ships or serves them at "
                          f"that label: {esc(roofline.parse_precision(t, model=specs.model(info['model'])).label)} "
                          "(`data/specs/recipes.csv`)." for p, t in (info.get("recipes") or {}).items())
        return (f"## Speed of light at batch 1\n\n{esc(info['model'])} on {esc(info['hardware'])}, context "
                f"{esc(info['context_text'])}; {esc(info['tau_text'])}.{recipes} tok/s/user per column: bandwidth only "
                f"(datasheet {info['datasheet_bandwidth_tb_s']:g} TB/s per GPU); with the "
                f"{esc(info['comm_floor_text'])}"
                f" ({info['n_layers']} layers here), the bound taking the longer of the HBM read and the collectives "
                "(each layer's collectives fully overlapping the next layer's weight read, the most a step can hide; "
                "the scope answer's model adds the two); its range over the low and high ends of the latencies the table holds "
                "for that collective, every library's (an unfused NCCL all-reduce sets the high end where the table "
                "has one);"
                f"{assumed} achievable: {esc(info['achievable_source'])}. HBM counts "
                "weights and KV only.")

    @property
    def sol_statements_md(self) -> str:
        return "\n".join(f"- {esc(s)}" for s in self.card.sol_statements)

    @property
    def evidence_intro_md(self) -> str:
        """The evidence summary's heading and what its tiers mean."""
        return ("## Evidence summary\n\nTier: *same-model*; *proxy*, another model that may stand in for the "
                f"claim's ({claims.PROXY_RULE}); *other model*, another model on the claim's hardware, shown for "
                "context and never used in an answer.")

    def evidence_table(self) -> pd.DataFrame:
        e = self.card.evidence_summary
        if e.empty:
            return e
        tiers = dict(zip(self.card.evidence["model"], self.card.evidence["tier"]))
        return pd.DataFrame({
            "tier": e["model"].map(lambda m: tiers.get(m, "proxy")), "model": e["model"], "hardware": e["hardware"],
            "precision": e["precision"].map(precision_word),
            "ISL/OSL": e["lengths"], "points": e["n_points"],
            "fastest tok/s/user": e["fastest_tok_s_per_user"].map(num),
            "share of own SOL (at its τ)": _share_at_tau(e, "fastest_"),
            "max tok/s/GPU": e["max_tok_s_per_gpu"].map(num),
            "at tok/s/user": e["tok_s_per_user_at_max"].map(num),
        })

    @property
    def closing_md(self) -> str:
        c = self.card.claim
        return (f"## What the source leaves unstated\n\n{esc(c.what_is_unstated or 'nothing recorded')}\n\n"
                f"## Verdict in full\n\n{esc(self.card.verdict)}")

    def results(self) -> dict:
        return self.card.results()


def _statistic(row: dict) -> str:
    """Which per-user statistic a reading's point was read at (``1000 / median TPOT``, ``1000 / mean TPOT``), so a
    column of measured values says where its numbers are not alike; '–' where the point does not say."""
    points = (row.get("reading") or {}).get("points") or [{}]
    if not isinstance(points[0], dict):
        return "–"
    return PER_USER_DEFS.get(str(points[0].get("per_user_def")), "–").replace("1000 / ", "").replace(
        "the tool's own per-user figure", "tool's own")


def rows_read(points: pd.DataFrame, *, claim: str | None = None, claim_file: str | None = None) -> pd.DataFrame:
    """The rows this page reads: the claim's model (its architecture and family) and its hardware
    (:func:`analysis.claims.relevance.relevant_points`, the same rows :func:`build` hands the card)."""
    return claims.relevant_points(claims.load_claim(claim_file or claim), points)


def build(points: pd.DataFrame, *, claim: str | None = None, claim_file: str | None = None) -> ClaimCardPage:
    """The page for ``claim`` (an id) or ``claim_file`` (a claim file, or ``file.csv#ID``) against ``points``."""
    return ClaimCardPage(claims.claim_card(claims.load_claim(claim_file or claim), points))


def claim_card_page(claim, points_path=None) -> ClaimCardPage:
    """The page for ``claim`` (an id, a claim file, or ``file.csv#ID``) against the points table at
    ``points_path`` (default ``data/processed/points.parquet``)."""
    return build(data.load_points(points_path), claim=claim)
