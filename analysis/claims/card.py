"""The claim card: everything the claim-card page shows, computed (no drawing, no printing)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from analysis.claims.answers import five_answers
from analysis.claims.checks import check_parts
from analysis.claims.conditions import matched_lengths, per_user_value, restate
from analysis.claims.evidence import evidence_for, evidence_frontier, evidence_summary
from analysis.claims.labels import num_text, precision_label, share
from analysis.claims.registry import Claim, claim_title, load_claim
from analysis.claims.sol import sol_for_claim
from analysis.claims.words import check_statements, kinds_text, model_note_for, sol_statements, verdict

# --- 5. the card -----------------------------------------------------------------------------------

@dataclass
class ClaimCard:
    """Everything the claim-card notebook shows, computed."""

    claim: Claim
    restated: pd.DataFrame
    answers: dict
    sol: pd.DataFrame
    sol_info: dict
    sol_statements: list
    evidence: pd.DataFrame
    evidence_summary: pd.DataFrame
    frontier: pd.DataFrame
    verdict: str
    model_note: str
    checks: pd.DataFrame = field(default_factory=pd.DataFrame)
    checked_on: str = ""
    evidence_lengths: list = field(default_factory=list)   # the ISL/OSL pairs drawn in colour
    evidence_lengths_note: str = ""

    @property
    def figure_title(self) -> str:
        """A title that states the finding: the claim against the fastest measured point and the batch-1 bound."""
        user = per_user_value(self.claim)
        c = self.claim
        unit = {"per-user": "tok/s/user", "per-GPU": "tok/s/GPU", "per-system": "tok/s per system"}.get(c.kind, c.unit)
        parts = [f"{c.id}: {c.value_qualifier + ' ' if c.value_qualifier else ''}{num_text(c.value)} {unit}"]
        if c.kind != "per-user" and not math.isnan(user):
            parts.append(f"at {num_text(user)} tok/s/user; that speed")
        if c.kind != "per-user" and len(self.checks) and self.checks["measured_all"].notna().any():
            r = self.checks[self.checks["measured_all"].notna()].iloc[0]
            what = f"{r['measured_all']:.1f}×" if r["kind"] == "ratio" else f"{num_text(r['measured_all'])} {r['unit']}"
            return (f"{c.id}: claimed {num_text(r['claimed'])}{'×' if r['kind'] == 'ratio' else ' ' + r['unit']}"
                    + (f" at {r['tok_s_per_user']:g} tok/s/user" if r["kind"] != "ratio" and
                       pd.notna(r["tok_s_per_user"]) and not math.isnan(user) else "")
                    + f";\nmeasured {what} ({r['group']}, {r['lengths']})")
        if len(self.evidence_summary) and not math.isnan(user):
            top = self.evidence_summary.iloc[0]
            parts.append(f"is {user / top['fastest_tok_s_per_user']:.1f}× the fastest measured {top['model']} point "
                         f"on {top['hardware']} ({top['lengths']})")
        base = self.sol[(self.sol["tokens_per_step"] == 1.0) & self.sol["fits"]] if len(self.sol) else self.sol
        if len(base) and not math.isnan(user):
            r = base.sort_values(["gpus", "sol_tok_s_per_user"], ascending=[True, False]).iloc[0]
            parts.append(f"and {share(user / r['sol_tok_s_per_user_comm'])} of the batch-1 bound of {r['scope']} at "
                         f"{precision_label(r['precision'])}")
        elif not len(self.evidence_summary):
            parts.append("(no similar measured points)")
        text = " ".join(parts)
        if len(text) < 95:
            return text
        return text.replace("; that", ";\nthat", 1) if "; that" in text else text.replace(" is ", "\nis ", 1)

    def sol_display(self) -> pd.DataFrame:
        """The SOL table as a reader sees it: whole tok/s, the fraction as a percentage, HBM as needed / available."""
        if self.sol.empty:
            return self.sol
        s = self.sol
        return pd.DataFrame({
            "precision": s["precision"].map(precision_label), "scope": s["scope"], "τ": s["tokens_per_step"],
            "SOL tok/s/user (bandwidth only, no communication floor)": s["sol_tok_s_per_user"].map(num_text),
            "communication floor µs/step": (s["comm_floor_ms"] * 1000).map(lambda v: f"{v:,.0f}"),
            "SOL tok/s/user with communication": s["sol_tok_s_per_user_comm"].map(num_text),
            "achievable tok/s/user with communication": s["sol_tok_s_per_user_achievable_comm"].map(num_text),
            "GB read per step": s["bytes_per_step_gb"].map(lambda v: f"{v:,.1f}"),
            "HBM GB needed / available": [f"{a:,.0f} / {b:,.0f}" for a, b in zip(s["hbm_needed_gb"],
                                                                                s["hbm_available_gb"])],
            "claim / SOL with communication": s["fraction_of_sol_comm"].map(lambda f: "–" if math.isnan(f) else share(f)),
            "reading": s["reading"],
        })

    def answers_table(self) -> pd.DataFrame:
        return pd.DataFrame([{"question": a.question, "status": a.status, "answer": a.answer,
                              "rows": ", ".join(a.rows)} for a in self.answers.values()])

    def results(self) -> dict:
        """The numbers the notebook saves (``save_results``)."""
        return {
            "claim": self.claim.id, "value": self.claim.value, "kind": self.claim.kind,
            "model": self.claim.model, "model_table": self.claim.model_table, "hardware": self.claim.hardware,
            "model_note": self.model_note,
            "restated": self.restated.to_dict("records"),
            "answers": {k: asdict(a) for k, a in self.answers.items()},
            "sol": self.sol.to_dict("records"), "sol_info": self.sol_info,
            "sol_statements": self.sol_statements,
            "evidence_summary": self.evidence_summary.to_dict("records"),
            "checks": self.checks.to_dict("records"), "checked_on": self.checked_on,
            "check_statements": check_statements(self.claim, self.checks),
            "verdict": self.verdict, "headline": self.headline,
        }

    @property
    def headline(self) -> str:
        """One line for the report index: the claim, its kind, and the first part's check."""
        first = self.checks[self.checks["measured_over_claimed"].notna()] if len(self.checks) else self.checks
        text = f"{self.claim.id}: {claim_title(self.claim)} — {kinds_text(self.claim)}"
        if len(first):
            r = first.iloc[0]
            v = r["measured_all"]
            what = f"{v:.1f}×" if r["kind"] == "ratio" else f"{v:,.0f} {r['unit']}" if v >= 1000 else \
                f"{v:,.1f} {r['unit']}"
            at = (f" at {r['tok_s_per_user']:g} tok/s/user" if r["kind"] in ("per-GPU", "per-system")
                  and pd.notna(r["tok_s_per_user"]) and not str(r["how"]).startswith("measured capacity") else "")
            text += (f"; measured {what}{at} ({r['group']}, {r['lengths']}) = {share(r['measured_over_claimed'])} "
                     "of the claim")
        return text + "."

    def checks_display(self) -> pd.DataFrame:
        """The checks as a reader sees them: the part, the measured group and lengths, both GPU denominators."""
        if self.checks.empty:
            return self.checks
        c = self.checks
        return pd.DataFrame({
            "claimed": [f"{p} ({v:,.4g} {u})" for p, v, u in zip(c["part"], c["claimed"], c["unit"])],
            "measured group": c["group"], "ISL/OSL": c["lengths"],
            "at tok/s/user": c["tok_s_per_user"],
            "measured (all GPUs)": c["measured_all"], "measured (decode GPUs only)": c["measured_decode"],
            "measured / claimed": c["measured_over_claimed"].map(lambda f: "–" if pd.isna(f) else share(f)),
            "how": c["how"],
        })


def claim_card(claim: str | Path | Claim, points: pd.DataFrame | None = None) -> ClaimCard:
    """Compute the card for a claim (an id, a file, or a Claim) against a points table."""
    c = load_claim(claim)
    restated = restate(c)
    sol, info = sol_for_claim(c)
    ev = evidence_for(c, points) if points is not None else pd.DataFrame()
    summary = evidence_summary(ev)
    front = evidence_frontier(ev)
    answers = five_answers(c, sol, ev, summary)
    checks, checked_on = check_parts(c, points)
    pairs, pairs_note = matched_lengths(c, ev)
    return ClaimCard(claim=c, restated=restated, answers=answers, sol=sol, sol_info=info,
                     sol_statements=sol_statements(c, sol), evidence=ev, evidence_summary=summary, frontier=front,
                     verdict=verdict(c, restated, sol, summary, checks), model_note=model_note_for(c),
                     checks=checks, checked_on=checked_on, evidence_lengths=pairs, evidence_lengths_note=pairs_note)


