"""The evidence for one claim, chosen once: which measured points, at which match tier, under which limits.

:func:`select_evidence` is the one place that decides what a claim card may read. It returns a frozen
:class:`ClaimEvidence`; the checks, the five answers, the precision pairs, the JSON and the figure all read that
object and never select points of their own. Built by hand (no points table), it is also how a card is tested
without data: :func:`analysis.claims.card.card_from_evidence`.

Two pools, both decided here:

- ``near``: the points nearest the claim for the answers, the summary and the figure: the claim's model (tier
  ``same-model``), a model that may stand in for it (``proxy``: :data:`analysis.claims.evidence.PROXY_RULE`) and other
  models on the claim's hardware (``other model``: context only, never an answer), with the best hardware match
  kept (:func:`analysis.claims.evidence.evidence_for`).
- ``pool``: the points each number of the claim is checked on (any hardware: each check narrows to its part's):
  the claim's model, else the stand-in models, with the latency limits that apply already enforced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis import specs, uncertainty
from analysis.claims.conditions import (
    DEFAULT_CAPACITY_LIMIT,
    LatencyLimit,
    burst_read,
    latency_limits,
    matched_lengths,
    meets_limits,
)
from analysis.claims.evidence import comparable_size, evidence_for, family, same_architecture
from analysis.claims.registry import Claim, ClaimPart, claim_parts, is_stated
from analysis.schema import trusted

POOL_TIERS = ("same-model", "proxy", "none")


@dataclass(frozen=True)
class ClaimEvidence:
    """Everything a card may read about its evidence, decided once (see the module docstring)."""

    claim: Claim
    parts: tuple[ClaimPart, ...]
    near: pd.DataFrame = field(default_factory=pd.DataFrame)
    pool: pd.DataFrame = field(default_factory=pd.DataFrame)
    pool_tier: str = "none"                        # same-model | proxy | none
    pool_models: tuple[str, ...] = ()              # the models the pool holds (before the latency limits)
    pool_size: int = 0                             # points of those models before the latency limits
    limits: tuple[LatencyLimit, ...] = ()
    limits_from: str = ""
    lengths: tuple[tuple[float, float], ...] = ()  # the ISL/OSL pairs the near evidence is compared at
    lengths_note: str = ""
    n_points: int = 0                              # rows of the points table the selection was given
    burst_read: int = 0                            # pool points whose TTFT tail limit was read on their p50
    # the latency a capacity is read under: the claim's or its scenario's limits, else perfclaims' default sanity
    # limit (``default_capacity_limit`` True), none where the scenario sets none (MLPerf Offline)
    capacity_limits: tuple[LatencyLimit, ...] = ()
    capacity_limits_from: str = ""
    default_capacity_limit: bool = False

    @property
    def limits_text(self) -> str:
        """``TTFT p99 ≤ 2 s; TPOT p99 ≤ 80 ms (the limits of …)``, empty without limits; says when a TTFT tail
        limit was read on the p50 of closed-loop sweep points."""
        if not self.limits:
            return ""
        burst = ("; TTFT read at p50 for the fixed-concurrency sweep points, whose p99 is their start-up burst"
                 if self.burst_read else "")
        return "; ".join(lim.text for lim in self.limits) + f" ({self.limits_from}{burst})"

    @property
    def stand_ins(self) -> pd.DataFrame:
        """The near rows of the claim's model or of a model that may stand in for it: what the answers rest on."""
        if self.near.empty or "model_match" not in self.near:
            return self.near
        return self.near[self.near["model_match"] >= 1]

    @property
    def context(self) -> pd.DataFrame:
        """Other models on the claim's hardware: drawn grey and listed, never an answer."""
        if self.near.empty or "model_match" not in self.near:
            return self.near.iloc[0:0]
        return self.near[self.near["model_match"] == 0]

    @property
    def other_models(self) -> list[str]:
        return sorted(set(self.context["model"].dropna().astype(str))) if len(self.context) else []

    @property
    def pair_points(self) -> pd.DataFrame:
        """The points FP4/FP8 pairs are drawn from: the best model match on the best hardware match, stand-ins
        only (another family's pairs answer nothing about this claim)."""
        ev = self.stand_ins
        if ev.empty:
            return ev
        ev = ev[ev["hardware_match"] == ev["hardware_match"].max()]
        return ev[ev["model_match"] == ev["model_match"].max()]

    @property
    def answer_points(self) -> pd.DataFrame:
        """The stand-ins on the best hardware match at the best model match: the pool the speed, batch and latency
        answers pick their point from."""
        return self.pair_points

    @property
    def drawn(self) -> pd.DataFrame:
        """The near points the figure colours: stand-ins of the best match at the compared lengths (with a
        positive tok/s/GPU). Every other near point is grey context."""
        ev = self.near
        if ev.empty:
            return ev
        ok = ev[ev["tok_s_per_gpu"].notna() & (ev["tok_s_per_gpu"] > 0)]
        like = ok[ok["model_match"] >= 1]
        if like.empty:
            return like
        top = like[like["match"] == like["match"].max()]
        keys = set(self.lengths)
        free = not is_stated(self.claim.isl_osl)   # a claim with no lengths: points with none are drawn too
        return top[[(a, b) in keys or (free and pd.isna(a) and pd.isna(b)) for a, b in zip(top["isl"], top["osl"])]]

    @property
    def tier(self) -> str:
        """The best tier among the near points (``none`` without any)."""
        tiers = set(self.near["tier"]) if len(self.near) and "tier" in self.near else set()
        return next((t for t in ("same-model", "proxy", "other model") if t in tiers), "none")


def _pool(claim: Claim, points: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """Trusted points of the claim's model-table entry, else of the models that may stand in for it (family and
    size), with the tier they can reach."""
    if points is None or points.empty:
        return pd.DataFrame(), "none"
    pts = points[trusted(points)]
    names = pts["model"].map({m: specs.match_model_name(m) for m in pts["model"].dropna().unique()})
    same_arch = {t: same_architecture(t, claim.model_table) for t in names.dropna().unique()}
    same = pts[names.map(same_arch).eq(True)] if claim.model_table else pts.iloc[0:0]
    if len(same):
        return same, "same-model"
    fam = family(claim.model_table or claim.model)
    similar = {m for m in pts["model"].dropna().unique()
               if fam and family(m) == fam and comparable_size(claim.model_table or claim.model, m)}
    kin = pts[pts["model"].isin(similar)]
    return kin, ("proxy" if len(kin) else "none")


def capacity_limits(limits, limits_from: str) -> tuple[tuple[LatencyLimit, ...], str, bool]:
    """The limits a capacity is read under: the claim's or its scenario's; none where the scenario sets none (an
    Offline result); else :data:`DEFAULT_CAPACITY_LIMIT`, named as perfclaims' own."""
    if limits:
        return tuple(limits), limits_from, False
    if limits_from and not limits_from.startswith("no latency limits"):
        return (), limits_from, False
    return (DEFAULT_CAPACITY_LIMIT,), "perfclaims' default sanity limit: neither the claim nor its scenario sets one", True


# What the card attaches to every evidence point from :func:`analysis.uncertainty.point_uncertainty`: how many
# requests stand behind it (and where that count comes from), the 95% interval of each speed with its method, and
# the run-to-run spread of same-date repeats of its configuration. Keys: the uncertainty column, the card's name.
UNCERTAINTY_FIELDS = {
    "n_requests": "n_requests", "n_requests_source": "n_requests_source", "n_requests_ref": "n_requests_ref",
    "user_lo": "tok_s_per_user_lo", "user_hi": "tok_s_per_user_hi", "user_method": "tok_s_per_user_interval",
    "gpu_lo": "tok_s_per_gpu_lo", "gpu_hi": "tok_s_per_gpu_hi", "gpu_method": "tok_s_per_gpu_interval",
    "level": "interval_level", "n_repeats": "n_repeats", "user_spread": "repeat_spread_tok_s_per_user",
    "gpu_spread": "repeat_spread_tok_s_per_gpu",
}
_PID = "_point_id"   # the points-table index of a selected row, so its uncertainty can be joined back


def with_uncertainty(frames: list[pd.DataFrame], points: pd.DataFrame | None,
                     requests: pd.DataFrame | None = None) -> list[pd.DataFrame]:
    """``frames`` (selections of ``points`` carrying :data:`_PID`) with :data:`UNCERTAINTY_FIELDS` added. The
    intervals are computed once, on the union of the selected rows (repeats of a configuration are all of one
    model, so the union holds them)."""
    ids = list(dict.fromkeys(i for f in frames if len(f) and _PID in f for i in f[_PID].dropna()))
    if points is None or not ids:
        return frames
    unc = uncertainty.point_uncertainty(points.loc[ids], requests)
    unc = unc[list(UNCERTAINTY_FIELDS)].rename(columns=UNCERTAINTY_FIELDS)
    out = []
    for f in frames:
        if not len(f) or _PID not in f:
            out.append(f)
            continue
        add = unc.reindex(f[_PID].to_numpy())
        add.index = f.index
        out.append(pd.concat([f.drop(columns=[c for c in add.columns if c in f]), add], axis=1))
    return out


def select_evidence(claim: Claim, points: pd.DataFrame | None,
                    requests: pd.DataFrame | None = None) -> ClaimEvidence:
    """The evidence for ``claim`` among ``points`` (already narrowed to the claim's rows by
    :func:`analysis.claims.relevance.relevant_points`); ``requests`` (per-request rows, optional) give the
    intervals of the points that have them."""
    if points is not None and len(points):
        points = points.assign(**{_PID: points.index})
    near = evidence_for(claim, points) if points is not None else pd.DataFrame()
    pool, tier = _pool(claim, points)
    near, pool = with_uncertainty([near, pool], points, requests)
    limits, limits_from = latency_limits(claim)
    size = len(pool)
    models = tuple(sorted(pool["model"].astype(str).unique())) if size else ()
    burst = burst_read(pool, limits) if size else 0
    if limits and size:
        pool = pool[meets_limits(pool, limits)]
    lengths, note = matched_lengths(claim, near)
    cap_limits, cap_from, default = capacity_limits(limits, limits_from)
    return ClaimEvidence(claim=claim, parts=tuple(claim_parts(claim)), near=near, pool=pool, pool_tier=tier,
                         pool_models=models, pool_size=size, limits=tuple(limits), limits_from=limits_from,
                         lengths=tuple(tuple(p) for p in lengths), lengths_note=note,
                         n_points=0 if points is None else len(points), burst_read=burst,
                         capacity_limits=cap_limits, capacity_limits_from=cap_from, default_capacity_limit=default)
