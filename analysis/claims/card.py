"""The claim card: everything the claim-card page shows, computed (no drawing, no printing)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from analysis.claims.answers import five_answers
from analysis.claims.check_words import checked_on_text, worded
from analysis.claims.checks import MATCH_TIERS, check_parts
from analysis.claims.conditions import restate
from analysis.claims.evidence import OTHER_MODEL, evidence_frontier, evidence_summary
from analysis.claims.jsonform import card_json
from analysis.claims.labels import num_text
from analysis.claims.pairs import precision_pairs
from analysis.claims.registry import Claim, load_claim
from analysis.claims.relevance import relevant_points
from analysis.claims.selection import ClaimEvidence, select_evidence
from analysis.claims.sol import sol_for_claim
from analysis.claims.status import SHORT, claim_status, status_line
from analysis.claims.words import (
    bottom_line,
    check_statements,
    headline_text,
    model_note_for,
    sol_statements,
    verdict,
)

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
    pairs: tuple = ([], [])                                # (clean, confounded) FP4/FP8 pairs, see claims.pairs
    basis: ClaimEvidence | None = None                     # the one evidence object everything above read
    check_facts: pd.DataFrame = field(default_factory=pd.DataFrame)  # the checks as facts (``checks`` is worded)

    @property
    def figure_title(self) -> str:
        """A short title: the claim, and the tier of the evidence drawn (never a percentage across models)."""
        c = self.claim
        unit = {"per-user": "tok/s/user", "per-GPU": "tok/s/GPU", "per-system": "tok/s per system"}.get(c.kind, c.unit)
        head = f"{c.id}: {c.value_qualifier + ' ' if c.value_qualifier else ''}{num_text(c.value)} {unit}"
        tier = self.evidence_tier
        if tier == "none":
            return f"{head} (no similar measured points)"
        models = ", ".join(sorted(self.evidence["model"].astype(str).unique())[:2]) if len(self.evidence) else ""
        return f"{head}\nevidence: {tier}" + (f" ({models})" if tier in ("proxy", OTHER_MODEL) else "")

    @property
    def evidence_tier(self) -> str:
        """The best tier among the comparisons (direct, same-model, proxy, none)."""
        tiers = set(self.checks["match"]) if len(self.checks) else set()
        if not tiers and len(self.evidence):
            tiers = set(self.evidence["tier"])
        return next((t for t in MATCH_TIERS if t in tiers), "none")

    def results(self) -> dict:
        """The numbers the notebook saves (``save_results``); ``title``, ``model`` and ``hardware`` name the page
        in the report index, ``bottom_line`` and ``comparisons`` (each with its ``match`` tier) are what it shows."""
        return {
            "claim": self.claim.id, "value": self.claim.value, "kind": self.claim.kind,
            "title": f"Claim {self.claim.id}: {self.claim.model} on {self.claim.hardware}",
            "model": self.claim.model, "model_table": self.claim.model_table, "hardware": self.claim.hardware,
            "model_note": self.model_note, "status": self.status, "bottom_line": self.bottom_line,
            "evidence_tier": self.evidence_tier,
            "source_check": self.claim.source_check,
            "restated": self.restated.to_dict("records"),
            "answers": {k: asdict(a) for k, a in self.answers.items()},
            "sol": self.sol.to_dict("records"), "sol_info": self.sol_info,
            "sol_statements": self.sol_statements,
            "evidence_summary": self.evidence_summary.to_dict("records"),
            "checks": self.checks.to_dict("records"), "checked_on": self.checked_on,
            "comparisons": (js := card_json(self))["comparisons"], "precision_pairs": js["precision_pairs"],
            "check_statements": check_statements(self.claim, self.checks),
            "verdict": self.verdict, "headline": self.headline,
        }

    def to_json(self) -> dict:
        """The card's content in the JSON contract of ``perfclaims claim --json``."""
        return card_json(self)

    @property
    def bottom_line(self) -> str:
        return bottom_line(self.claim, self.checks, self.answers, self.evidence_tier)

    @property
    def status(self) -> dict:
        """The claim's status as facts (:func:`analysis.claims.status.claim_status`), with ``text``, the line the
        card shows above its bottom line."""
        model = (self.answers["precision"].fact or {}).get("model") if "precision" in self.answers else None
        top = float(self.sol["tokens_per_step"].max()) if len(self.sol) else float("nan")
        facts = claim_status(self.check_facts, model, top, self.claim)
        return {**facts, "text": status_line(facts)}

    @property
    def headline(self) -> str:
        """One line for the report index (:func:`analysis.claims.words.headline_text`)."""
        return headline_text(self.claim, self.checks, self.evidence_tier, SHORT[self.status["status"]])


def card_from_evidence(ev: ClaimEvidence) -> ClaimCard:
    """The card for one evidence object: every part of the card reads ``ev`` and selects nothing of its own, so a
    hand-made :class:`ClaimEvidence` (no points table) gives a whole card."""
    c = ev.claim
    sol, info = sol_for_claim(c)
    summary = evidence_summary(ev.near)
    pairs = precision_pairs(ev.pair_points)
    answers = five_answers(ev, sol, pairs)
    facts = check_parts(ev)
    checks = worded(facts, ev)
    restated = restate(c)
    return ClaimCard(claim=c, restated=restated, answers=answers, sol=sol, sol_info=info,
                     sol_statements=sol_statements(c, sol), evidence=ev.near, evidence_summary=summary,
                     frontier=evidence_frontier(ev.near),
                     verdict=verdict(c, restated, sol, summary, checks, info.get("reason", ""),
                                     answers["scope"].fact.get("model_scopes"),
                                     (answers["precision"].fact or {}).get("model")),
                     model_note=model_note_for(c), checks=checks, checked_on=checked_on_text(ev),
                     evidence_lengths=[tuple(p) for p in ev.lengths], evidence_lengths_note=ev.lengths_note,
                     pairs=pairs, basis=ev, check_facts=facts)


def claim_card(claim: str | Path | Claim, points: pd.DataFrame | None = None) -> ClaimCard:
    """Compute the card for a claim (an id, a file, or a Claim) against a points table."""
    c = load_claim(claim)
    points = relevant_points(c, points)  # the card reads these rows only (its cache key hashes the same rows)
    return card_from_evidence(select_evidence(c, points))
