"""Sentences about speculative decoding, kept apart from :mod:`analysis.specdecode` (which only computes).

Every number goes through :func:`analysis.text.num`, every name that came from a log, a manifest or a claim through
:func:`analysis.text.esc`, so the sentences can go straight into Markdown or HTML.
"""

from __future__ import annotations

from analysis.specdecode import ASSUMED_DRAFT_TOKENS, ASSUMED_TAU, Estimate, Tau
from analysis.text import esc, num

SOURCE_WORDS = {
    "measured": "measured on the run's own prompts",
    "forced": "forced at launch (synthetic acceptance), not measured",
    "golden": "from InferenceX's golden curve (SPEED-Bench coding prompts)",
    "stated": "as the publication states it",
    "assumed": f"assumed (no acceptance known: {num(ASSUMED_TAU)} tokens per step at {ASSUMED_DRAFT_TOKENS} drafted, at "
               "another count the same acceptance per draft)",
    "none": "no speculative decoding",
    "unknown": "not known whether speculative decoding ran",
}


def source_words(source: str) -> str:
    """What an acceptance source means, in a phrase."""
    return SOURCE_WORDS.get(str(source), esc(source))


def tau_words(tau: Tau) -> str:
    """``τ = 2.33 tokens per step (eagle3, 3 drafted, 4 verified), measured on the run's own prompts``."""
    if not tau.speculative:
        return f"τ = 1 token per step: {source_words(tau.source)}"
    detail = [esc(tau.spec_method)] if tau.spec_method != "unknown" else []
    if tau.draft_tokens is not None:
        detail.append(f"{num(tau.draft_tokens)} drafted" + (" as its launch recipe set" if tau.drafts_from_recipe else ""))
    detail.append(f"{num(tau.verify_tokens)} verified" + (" (assumed)" if tau.verify_assumed else ""))
    text = f"τ = {num(tau.tokens_per_step)} tokens per step ({', '.join(detail)}), {source_words(tau.source)}"
    if tau.reference:
        text += f": {esc(tau.reference)}"
    if tau.point_source == "forced" and tau.source != "forced":
        text += "; the run's acceptance was forced at launch to a value its record does not hold"
    return text


def mixed_note(summary_row: dict) -> str:
    """The note a reading across forced and measured acceptance carries ('' when it does not mix them)."""
    if not summary_row.get("mixed_forced_measured"):
        return ""
    return (f"mixes forced acceptance ({num(summary_row['forced'])} points, pinned at launch) with measured "
            f"acceptance ({num(summary_row['measured'])} points): their per-user speeds are not comparable as such")


def step_rate_words(tok_s_per_user: float, tau: Tau, steps_per_s: float) -> str:
    """``1,000 tok/s/user at τ = 2.5 needs 400 verify steps per second per sequence``."""
    return (f"{num(tok_s_per_user)} tok/s/user at τ = {num(tau.tokens_per_step)} needs {num(steps_per_s)} verify "
            "steps per second per sequence")


def estimate_words(estimate: Estimate) -> str:
    """The estimate with its formula and inputs, said to be an estimate."""
    inputs = ", ".join(f"{esc(k)} = {num(v)}" for k, v in estimate.inputs.items())
    return (f"estimated {num(estimate.value)} tok/s/user without speculative decoding "
            f"({esc(estimate.expression)}; {inputs}; τ {source_words(estimate.tau_source)}): an estimate, not a "
            "measurement")
