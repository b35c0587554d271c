"""Claim cards: what kind of number a public performance claim is, and what the data and the roofline say about it.

A claim (``data/claims/<id>.yaml``, or a row in the columns of ``shared/specs/claims.csv``) states a value and
whatever conditions its source gave; every condition it leaves out is recorded as ``"not stated"``. The card
(:func:`claim_card`) computes, without drawing or printing: (1) the kind of number and its restatement per GPU and
per user where the stated conditions allow; (2) the five questions of DESIGN.md (batch size, large batch, scope,
latency, precision), each answered as *stated*, *inferred from data* (naming the points-table rows) or *not stated*;
(3) the speed of light at batch 1 for each plausible precision and scope; (4) the measured evidence, each
comparison labelled with how it matches the claim (``direct``, ``same-model``, ``proxy``, ``none``); (5) a bottom
line made from those facts.

Modules, in import order: ``registry`` (reading claims, a part's unit and compared value) → ``labels`` →
``conditions`` (restating, lengths, latency limits) → ``sol`` → ``evidence`` (match tiers, one point's own bound) →
``selection`` (the one :class:`ClaimEvidence` per claim: every later module reads it and selects nothing) →
``checks`` (each number against the frontier, as facts; the check table :data:`CHECKS` keyed by part kind and
ratio axis) → ``pairs`` (A/B pairs and their confounders) → ``answers`` (the five answers as facts) → the words
modules (``check_words``, ``answer_words``, ``words``: every sentence) → ``jsonform`` → ``card`` (assembly,
``results()``, the JSON form). Rendering a card to HTML is the command line's job (``perfclaims claim``
executes ``notebooks/50-claim-card.ipynb``); nothing here prints or draws.
"""

from analysis.claims.answers import QUESTIONS, Answer, five_answers
from analysis.claims.card import ClaimCard, card_from_evidence, claim_card
from analysis.claims.checks import CHECK_COLUMNS, CHECKS, REFERENCE_TOK_S_PER_USER, check_parts, single_user_end
from analysis.claims.conditions import (
                                        DEFAULT_CONTEXT,
                                        context_for,
                                        matched_lengths,
                                        per_user_value,
                                        restate,
                                        stated_lengths,
)
from analysis.claims.evidence import (
    OTHER_MODEL,
    PROXY_RULE,
    evidence_for,
    evidence_frontier,
    evidence_summary,
    own_sol,
    row_id,
    stand_ins,
)
from analysis.claims.labels import SNAPSHOT_CAVEAT, lengths_text
from analysis.claims.registry import (
                                        CSV_COLUMNS,
                                        INFERRED,
                                        KINDS,
                                        NOT_STATED,
                                        STATED,
                                        Claim,
                                        ClaimPart,
                                        claim_from_row,
                                        claim_ids,
                                        claim_parts,
                                        claim_title,
                                        claim_to_yaml,
                                        kind_from_unit,
                                        load_claim,
                                        parse_value,
                                        precision_from_text,
                                        read_claim_yaml,
                                        read_claims_csv,
                                        registry,
)
from analysis.claims.relevance import relevant_points
from analysis.claims.selection import ClaimEvidence, select_evidence
from analysis.claims.sol import ASSUMED_TAU, ASSUMED_TAU_TEXT, ASSUMED_VERIFY_TOKENS, SCOPES, sol_for_claim
from analysis.claims.words import check_statements, kinds_text, sol_statements, verdict

__all__ = [
    "CHECKS", "ClaimEvidence", "card_from_evidence", "select_evidence",
    "ASSUMED_TAU", "ASSUMED_TAU_TEXT", "ASSUMED_VERIFY_TOKENS", "CHECK_COLUMNS", "CSV_COLUMNS", "DEFAULT_CONTEXT",
    "INFERRED", "KINDS", "NOT_STATED", "OTHER_MODEL", "PROXY_RULE", "QUESTIONS", "REFERENCE_TOK_S_PER_USER", "SCOPES",
    "SNAPSHOT_CAVEAT", "STATED", "Answer", "Claim", "ClaimCard", "ClaimPart", "check_parts", "check_statements",
    "claim_card", "claim_from_row", "relevant_points", "claim_ids", "claim_parts", "claim_title", "claim_to_yaml", "context_for",
    "evidence_for", "evidence_frontier", "evidence_summary", "five_answers", "kind_from_unit", "kinds_text",
    "lengths_text", "load_claim", "matched_lengths", "own_sol", "parse_value", "per_user_value",
    "precision_from_text", "read_claim_yaml", "read_claims_csv", "registry", "restate", "row_id",
    "single_user_end", "sol_for_claim", "sol_statements", "stand_ins", "stated_lengths", "verdict",
]
