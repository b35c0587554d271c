"""The card as JSON (``perfclaims claim --json``): a contract — fields are added, never renamed or dropped.

``id``, ``kind``, ``status`` (``status``: reached | not-reached | measured | other-conditions | proxy | far | unchecked,
its facts and ``text``, the line above the bottom line: :mod:`analysis.claims.status`), ``bottom_line``;
``answers`` (batch, large_batch, scope, latency, precision), each with
``status`` (stated | inferred | not stated), ``text``, ``evidence`` and ``fact`` (the answer as data: ``rule`` and
its numbers); ``comparisons``, one per number of the claim
and measured group, with ``claimed``, ``measured``, ``ratio`` (measured / claimed, null unless direct or same-model
evidence at the claim's lengths), ``unit``, ``at_tok_s_per_user``, ``match`` (direct | same-model | proxy | none),
``differs``, ``evidence`` (each point with ``n_requests`` and the 95% interval of each speed) and ``reading`` (how
the number was read, as data: ``rule`` and the points), ``claim_in_interval`` (the claimed number inside that
interval: within noise);
``precision_pairs`` with ``a``, ``b``, ``ratio`` and ``confounders``. Unknown values are null.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.claims.registry import INFERRED

STATUS = {INFERRED: "inferred"}


def plain(v):
    """``v`` made JSON-safe: NaN/NA → None, numpy scalars → Python, containers recursively."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(float(v)) else float(v)
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    return v if isinstance(v, str) else str(v)


def comparisons(card) -> list[dict]:
    out = []
    for r in card.checks.to_dict("records"):
        # The interactivity a number was read at: a per-GPU number's stated tok/s/user, a ratio's common level;
        # None for a per-user number (its measured speed is ``measured``) and for a capacity read at no level.
        reading = r.get("reading") or {}
        read_at = r["kind"] == "ratio" or (r["kind"] in ("per-GPU", "per-system")
                                            and reading.get("rule") not in ("capacity", "no-capacity-within-limit"))
        at = r.get("tok_s_per_user") if read_at else None
        out.append({
            "part": r["part"], "kind": r["kind"], "claimed": r["claimed"], "measured": r["measured_all"],
            "measured_decode_gpus": r.get("measured_decode"), "ratio": r["measured_over_claimed"],
            "unit": r["unit"], "at_tok_s_per_user": at, "group": r.get("group") or None,
            "lengths": r.get("lengths") or None, "match": r.get("match") or "none",
            "differs": list(r.get("differs") or []), "limits": r.get("limits") or None,
            "ttft_ms_p99": r.get("ttft_ms_p99"), "tpot_ms_p99": r.get("tpot_ms_p99"), "how": r.get("how"),
            "share_of_own_sol": r.get("share_of_own_sol_comm"), "evidence": list(r.get("evidence") or []),
            "reading": reading,
            # the claimed number inside the 95% interval of the one point the reading rests on (null: no interval)
            "claim_in_interval": r.get("claim_in_interval"),
        })
    return out


def card_json(card) -> dict:
    c = card.claim
    clean, confounded = card.pairs
    answers = {k: {"status": STATUS.get(a.status, a.status), "text": a.answer, "short": a.short,
                   "evidence": a.evidence, "fact": a.fact, "context": a.context}
               for k, a in card.answers.items()}
    return plain({
        "id": c.id, "kind": c.kind, "status": card.status, "bottom_line": card.bottom_line, "claim": {
            "value": c.value, "text": c.value_text, "unit": c.unit, "model": c.model, "hardware": c.hardware,
            "precision": c.precision_text, "isl_osl": c.isl_osl, "spec_decode": c.spec_decode, "latency": c.latency,
            "scenario": c.scenario, "source": c.source},
        "evidence_tier": card.evidence_tier, "answers": answers, "comparisons": comparisons(card),
        "precision_pairs": [{**p, "clean": True} for p in clean] + [{**p, "clean": False} for p in confounded],
        "verdict": card.verdict, "speed_of_light": speed_of_light(card),
    })


SOL_COLUMNS = ["precision", "precision_label", "gpus", "scope", "tokens_per_step", "sol_tok_s_per_user", "comm_floor_ms",
               "collective_latency_us", "sol_tok_s_per_user_comm", "sol_tok_s_per_user_comm_low",
               "sol_tok_s_per_user_comm_high", "sol_tok_s_per_user_paid", "sol_tok_s_per_user_achievable_comm",
               "hbm_needed_gb",
               "hbm_available_gb", "fits", "fraction_of_sol_comm", "comm_basis", "comm_layout", "comm_measured_on",
               "comm_sources",
               "reading"]


def speed_of_light(card) -> dict:
    """The page's speed-of-light table (``rows``: one per precision x scope x τ, the ``_comm`` bounds with the
    collectives hidden under the weight reads, ``_paid`` with them paid after the reads as the figure draws them)
    and what it assumed (``assumptions``), or why there is none."""
    info = dict(card.sol_info or {})
    if card.sol is None or card.sol.empty:
        return {"rows": [], "reason": info.get("reason", "")}
    keep = ["model", "hardware", "context", "context_text", "tau_text", "recipes", "comm_floor_text",
            "achievable_source", "datasheet_bandwidth_tb_s"]
    cols = [c for c in SOL_COLUMNS if c in card.sol.columns]
    return {"rows": card.sol[cols].to_dict(orient="records"), "assumptions": {k: info[k] for k in keep if k in info},
            "statements": list(card.sol_statements)}
