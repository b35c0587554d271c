"""Speculative decoding as a measured condition: how many tokens a step commits, and where that number comes from.

τ (tokens per step) is the mean number of tokens one decode step of the target model commits for one sequence: 1
without speculative decoding, the acceptance length (bonus token included) with it. A claimed per-user speed
``s`` therefore needs the hardware to run ``s / τ`` verify steps per second (:func:`step_rate_needed`), and each of
those steps verifies the drafted tokens + 1 (``verify_tokens``), which is what a speed-of-light bound must charge.

Where τ comes from, best first (:func:`tau_for`):

1. the point's own ``acceptance_length`` and its ``acceptance_source`` (measured on its prompts, forced at launch,
   golden, stated by a publication);
2. a golden curve for its model, method and draft length (InferenceX's SPEED-Bench coding curves,
   :mod:`analysis.golden_al`), source ``golden``;
3. the documented default :data:`ASSUMED_TAU` = 2.5 tokens per step with :data:`ASSUMED_DRAFT_TOKENS` = 3 drafted
   (MTP-3 accepting 2-3 tokens per step, shared/docs/ROOFLINE.md §3.3), source ``assumed``.

The drafted count (what a step verifies) is the point's own ``draft_tokens``, else, for an MTP run of InferenceX's
client, the count its launch script or recipe set on that date (``data/specs/mtp-recipes.csv``, read through
:func:`analysis.perfmodel.recipes.row_draft_tokens`, the table the step-time model reads too), else the assumption.

Computation only: tables and dataclasses out, no sentences (those are in :mod:`analysis.specdecode_words`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from analysis import golden_al
from analysis.schema import UNKNOWN, normalize_spec_method

ASSUMED_TAU = 2.5
ASSUMED_DRAFT_TOKENS = 3
NO_SPEC = "none"  # Tau.source of a point that ran no speculative decoding
UNKNOWN_SPEC = UNKNOWN  # Tau.source of a point not known to have run speculative decoding at all
KNOWN_SOURCES = ("measured", "forced", "golden", "stated", "assumed")


@dataclass(frozen=True)
class Tau:
    """Tokens a decode step commits (``tokens_per_step``, τ) and verifies (``verify_tokens`` = drafted + 1), with
    where τ came from (``source``: measured, forced, golden, stated, assumed, ``none`` without speculative decoding,
    ``unknown`` when it is not known whether any ran) and, for ``golden``, the curve (``reference``: file and mode).
    ``verify_assumed`` says the drafted count was not known and :data:`ASSUMED_DRAFT_TOKENS` stood in;
    ``drafts_from_recipe`` that it came from the launch recipe the run's benchmark served, not from its record.
    ``point_source`` is the point's own ``acceptance_source``: ``forced`` with a golden or assumed τ is a run pinned
    at launch to a value its record does not hold."""

    tokens_per_step: float
    verify_tokens: float
    source: str
    spec_method: str = UNKNOWN
    draft_tokens: float | None = None
    reference: str = ""
    verify_assumed: bool = False
    point_source: str = UNKNOWN
    drafts_from_recipe: bool = False

    @property
    def speculative(self) -> bool:
        return self.source not in (NO_SPEC, UNKNOWN_SPEC)

    def as_dict(self) -> dict:
        return {"tokens_per_step": self.tokens_per_step, "verify_tokens": self.verify_tokens, "source": self.source,
                "spec_method": self.spec_method, "draft_tokens": self.draft_tokens, "reference": self.reference,
                "verify_assumed": self.verify_assumed, "point_source": self.point_source,
                "drafts_from_recipe": self.drafts_from_recipe}


def _number(value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def _verify(draft: float, tau: float) -> tuple[float, bool]:
    """(tokens verified per step, whether the drafted count was assumed): drafted + 1, or the assumed draft + 1
    (never fewer than the τ it must have verified)."""
    if draft == draft and draft >= 0:
        return draft + 1.0, False
    return max(ASSUMED_DRAFT_TOKENS + 1.0, float(math.ceil(tau))), True


def tau_for(row: Mapping | pd.Series, *, golden_folder=None) -> Tau:
    """τ for one points-table row (any mapping with the points-table column names); see the module note."""
    method = normalize_spec_method(row.get("spec_method"))
    if method == UNKNOWN:
        method = normalize_spec_method(row.get("spec_decode"))
    draft, recipe = drafts_of(row)
    accepted = _number(row.get("acceptance_length"))
    source = str(row.get("acceptance_source") or UNKNOWN).strip().lower()
    point = source if source in KNOWN_SOURCES else UNKNOWN
    draft_or_none = draft if draft == draft else None
    if method == NO_SPEC:
        return Tau(1.0, 1.0, NO_SPEC, NO_SPEC, 0.0)
    if accepted == accepted and accepted >= 1 and source in KNOWN_SOURCES:
        verify, assumed = _verify(draft, accepted)
        return Tau(accepted, verify, source, method, draft_or_none, verify_assumed=assumed, point_source=point,
                   drafts_from_recipe=recipe)
    if method == UNKNOWN and source not in KNOWN_SOURCES and not accepted == accepted:
        return Tau(1.0, 1.0, UNKNOWN_SPEC, UNKNOWN, draft_or_none)
    if method != UNKNOWN and draft == draft:
        found = golden_al.golden_for(str(row.get("model") or ""), method, draft, folder=golden_folder)
        if found is not None:
            value, curve, _others = found
            return Tau(value, draft + 1.0, "golden", method, draft, reference=f"{curve.file} ({curve.mode})",
                       point_source=point, drafts_from_recipe=recipe)
    tau = assumed_tau(draft)
    verify, assumed = _verify(draft, tau)
    return Tau(tau, verify, "assumed", method, draft_or_none, verify_assumed=assumed, point_source=point,
               drafts_from_recipe=recipe)


def drafts_of(row: Mapping | pd.Series) -> tuple[float, bool]:
    """(tokens drafted per step, whether the launch recipe said it) of one points-table row: its own
    ``draft_tokens``, else the count its benchmark's launch recipe set
    (:func:`analysis.perfmodel.recipes.row_draft_tokens`); NaN where neither says."""
    draft = _number(row.get("draft_tokens"))
    if draft == draft:
        return draft, False
    from analysis.perfmodel.recipes import row_draft_tokens  # here: the recipe tables sit above this module

    draft = _number(row_draft_tokens(row))
    return draft, draft == draft


def assumed_tau(drafts: float) -> float:
    """The assumed τ at ``drafts`` drafted tokens: :data:`ASSUMED_TAU` at :data:`ASSUMED_DRAFT_TOKENS` (or at an
    unknown count), at another count the same per-draft acceptance (:func:`analysis.perfmodel.step.tau_at_drafts`,
    the step-time model's rule), so it never exceeds the drafted tokens + 1 a step verifies."""
    if not (drafts == drafts and drafts >= 0) or drafts == ASSUMED_DRAFT_TOKENS:
        return ASSUMED_TAU
    from analysis.perfmodel.step import tau_at_drafts

    return float(tau_at_drafts(ASSUMED_TAU, drafts))


def tau_table(points: pd.DataFrame, *, golden_folder=None) -> pd.DataFrame:
    """:func:`tau_for` of every row, as columns ``tau``, ``verify_tokens``, ``tau_source``, ``tau_reference``,
    ``verify_assumed`` on the points' index."""
    taus = [tau_for(r, golden_folder=golden_folder) for r in points.to_dict("records")]
    return pd.DataFrame({"tau": [t.tokens_per_step for t in taus], "verify_tokens": [t.verify_tokens for t in taus],
                         "tau_source": [t.source for t in taus], "tau_reference": [t.reference for t in taus],
                         "verify_assumed": [t.verify_assumed for t in taus]}, index=points.index)


SUMMARY_COLUMNS = ["points", "spec_points", "spec_methods", "acceptance_sources", "measured", "forced", "golden",
                   "stated", "assumed", "unknown", "mixed_forced_measured"]


def acceptance_summary(points: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per group of ``by`` (the whole table when empty): the points, those that ran speculative decoding, the methods
    and acceptance sources present (``;``-joined, sorted), counts per source among the speculative points, and
    ``mixed_forced_measured``: the group holds both forced and measured acceptance, so a reading across it compares
    a pinned acceptance with a real one."""
    by = list(by)
    frame = points.copy()
    method = frame.get("spec_method", pd.Series(UNKNOWN, index=frame.index)).map(normalize_spec_method)
    if "spec_decode" in frame:
        method = method.where(method != UNKNOWN, frame["spec_decode"].map(normalize_spec_method))
    source = frame.get("acceptance_source", pd.Series(UNKNOWN, index=frame.index)).fillna(UNKNOWN).astype(str)
    accepted = pd.to_numeric(frame.get("acceptance_length", pd.Series(math.nan, index=frame.index)),
                             errors="coerce")
    frame["_method"] = method
    frame["_spec"] = (method != NO_SPEC) & ((method != UNKNOWN) | accepted.notna() | source.isin(KNOWN_SOURCES))
    frame["_source"] = source.where(source.isin(KNOWN_SOURCES), UNKNOWN)
    rows = []
    groups = frame.groupby(by, dropna=False, sort=True) if by else [((), frame)]
    for key, group in groups:
        spec = group[group["_spec"]]
        counts = spec["_source"].value_counts()
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        row.update(points=len(group), spec_points=len(spec),
                   spec_methods=";".join(sorted(set(group["_method"]))),
                   acceptance_sources=";".join(sorted(set(spec["_source"]))),
                   **{s: int(counts.get(s, 0)) for s in KNOWN_SOURCES + (UNKNOWN,)})
        row["mixed_forced_measured"] = bool(row["forced"] and row["measured"])
        rows.append(row)
    return pd.DataFrame(rows, columns=by + SUMMARY_COLUMNS)


def _tau_value(tau: Tau | float) -> float:
    value = tau.tokens_per_step if isinstance(tau, Tau) else float(tau)
    if not value >= 1:
        raise ValueError(f"tokens per step must be >= 1, got {value!r}")
    return value


def step_rate_needed(tok_s_per_user: float, tau: Tau | float) -> float:
    """Verify steps per second one sequence needs to reach ``tok_s_per_user`` when each commits τ tokens: the claim's
    speed ÷ the acceptance length (the step rate the hardware must sustain)."""
    return float(tok_s_per_user) / _tau_value(tau)


@dataclass(frozen=True)
class Estimate:
    """A derived number that was not measured, with its formula as data: ``expression`` over the named ``inputs``,
    ``value`` the result. ``kind`` is always ``estimate``; ``tau_source`` says where τ came from."""

    value: float
    expression: str
    inputs: dict = field(default_factory=dict)
    tau_source: str = UNKNOWN
    kind: str = "estimate"

    def as_dict(self) -> dict:
        return {"value": self.value, "expression": self.expression, "inputs": dict(self.inputs),
                "tau_source": self.tau_source, "kind": self.kind}


WITHOUT_SPEC_EXPRESSION = "s_plain = s_spec * c / tau"


def without_spec_estimate(tok_s_per_user: float, tau: Tau | float, verify_cost: float) -> Estimate:
    """Per-user speed the same deployment would give without speculative decoding — an ESTIMATE.

    With speculative decoding a step commits τ tokens and takes ``verify_cost`` (c) times as long as a plain decode
    step (drafting plus verifying drafted + 1 tokens; c ≥ 1), so ``s_spec = τ / (c · t_plain)`` and
    ``s_plain = 1 / t_plain = s_spec · c / τ``. ``c`` is the caller's to give (measured, or from a bound)."""
    value_tau = _tau_value(tau)
    c = float(verify_cost)
    if not (math.isfinite(c) and c >= 1):
        raise ValueError(f"verify_cost (a speculative step's time over a plain step's) must be >= 1, got {c!r}")
    s = float(tok_s_per_user)
    return Estimate(value=s * c / value_tau, expression=WITHOUT_SPEC_EXPRESSION,
                    inputs={"s_spec": s, "tau": value_tau, "c": c},
                    tau_source=tau.source if isinstance(tau, Tau) else "given")
