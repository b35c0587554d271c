"""Sentences about frontiers: what :mod:`analysis.frontier` found, in words.

:mod:`analysis.frontier` returns facts (readings, enums such as ``Efficiency.why``, flags such as ``long_ttft``);
this module writes them for a reader, with every number through :mod:`analysis.text`.
"""

from __future__ import annotations

from analysis import cost
from analysis.specdecode import WITHOUT_SPEC_EXPRESSION
from analysis.text import esc, lengths, missing, num, pct, plain, span, times, whole


def selection_text(selection: dict) -> str:
    """``B200 fp4 at 1k/1k tokens (node)``: what an efficiency figure was read for."""
    scope = selection.get("scope")
    return (f"{selection['hardware']} {selection['precision']} at {lengths(selection['isl'], selection['osl'])} "
            "tokens" + (f" ({scope})" if scope else ""))


def efficiency_reason(e) -> str | None:
    """Why an :class:`analysis.frontier.Efficiency` has no value, in a sentence (None when it has one)."""
    if e.why is None:
        return None
    what = selection_text(e.selection)
    if e.why == "no points":
        return f"no usable measured points for {what}"
    if e.why == "several models":
        models = e.detail["models"]
        return (f"the points for {what} hold {len(models)} models ({', '.join(models)}); "
                "pass model= so one model's frontier is read")
    if e.why == "no price":
        return cost.no_price_message([e.selection["hardware"]])
    if e.why == "no power":
        return f"none of the {e.n_points} points for {what} has measured GPU power"
    if e.why == "frontier starts faster":
        return (f"{what}: the frontier starts at {whole(e.detail['slowest_tok_s_per_user'])} tok/s/user, faster than "
                f"{plain(e.level)}; only a bound can be read")
    if e.why == "frontier too slow":
        return (f"{what}: no frontier point as fast as {plain(e.level)} tok/s/user (fastest "
                f"{whole(e.detail['fastest_tok_s_per_user'])})")
    raise ValueError(f"Efficiency.why {e.why!r} has no sentence")


def fastest_note(row, *, ttft_limit_s: float) -> str:
    """The note on a fastest per-user point (a row of :func:`analysis.frontier.fastest_points`): ``single user``
    only at concurrency 1, else ``N concurrent``; ``long TTFT (79 s > 10 s)`` when its median TTFT is over the
    limit."""
    note = ["single user" if row["single_user"] else f"{num(row['fastest_concurrency'])} concurrent"]
    if row["long_ttft"]:
        note.append(f"long TTFT ({whole(row['fastest_ttft_s_p50'])} s > {plain(ttft_limit_s)} s)")
    return "; ".join(note)


# --- what a reading rests on: its interval, its acceptance, its source ------------------------------------------
ACCEPTANCE_WORDS = {
    "measured": "acceptance measured on the run's own prompts",
    "forced": "acceptance forced at launch (synthetic), not measured",
    "golden": "acceptance pinned to a golden reference curve, not measured on the run",
    "stated": "acceptance as the publication states it",
    "assumed": "acceptance assumed, not known",
    "not stated": "acceptance not stated",
    "unknown": "not known whether speculative decoding ran",
    "none": "",
}

SOURCE_KIND_WORDS = {"published-table": "published table", "raw-log": "raw log"}


def acceptance_text(value: str) -> str:
    """Words for the acceptance a reading rests on (:func:`analysis.frontier.acceptance_of`, ``+``-joined when its
    points differ): '' without speculative decoding; a mix of forced and measured says so."""
    parts = [p for p in str(value or "").split("+") if p and p != "none"]
    if not parts:
        return ""
    if "forced" in parts and "measured" in parts:
        return "mixes forced with measured acceptance: not like-for-like"
    if len(parts) > 1:
        return "acceptance " + " and ".join(ACCEPTANCE_WORDS[p].removeprefix("acceptance ") if p in ACCEPTANCE_WORDS
                                            else esc(p) for p in parts)
    return ACCEPTANCE_WORDS.get(parts[0], f"acceptance {esc(parts[0])}")


def source_kind_text(value: str) -> str:
    """``published table`` / ``raw log`` (``+``-joined kinds: both named)."""
    parts = [p for p in str(value or "").split("+") if p]
    return " + ".join(SOURCE_KIND_WORDS.get(p, esc(p)) for p in parts)


def n_requests_text(n: float, source: str) -> str:
    """``n = 640 requests (tool default)``, ``n = 32 requests``, ``n unknown``."""
    if missing(n):
        return "n unknown"
    label = " (tool default)" if "tool-default" in str(source) else ""
    return f"n = {whole(n)} requests{label}"


def interval_text(lo: float, hi: float, *, n: float = float("nan"), n_source: str = "", method: str = "") -> str:
    """``95% interval 687–693, n = 640 requests (tool default)``; ``no interval (n unknown)`` when there is none."""
    n_words = n_requests_text(n, n_source)
    if missing(lo) or missing(hi):
        if missing(n):
            return "no interval (n unknown)"
        return f"no interval ({n_words}; mean or median only, no spread)"
    how = " from summary percentiles" if any(m in str(method) for m in ("spacing",)) else (
        " by bootstrap over requests" if "bootstrap-requests" in str(method) else "")
    return f"95% interval {span(lo, hi)}{how}, {n_words}"


def ratio_text(ratio: float, lo: float, hi: float, verdict: str, *, no_interval: str = "") -> str:
    """A ratio of two readings with its interval (:class:`analysis.uncertainty.RatioReading`): ``within noise
    (1.02×, 95% interval 0.97–1.08×)`` when the interval includes 1, ``1.55× higher (95% interval 1.41–1.70×)``
    when it lies above; without an interval, ``1.55×, not shown to be beyond noise (…)`` with ``no_interval`` as
    the reason when the caller knows it. Shared by the frontier, precision and history pages."""
    if verdict == "within-noise":
        return f"within noise ({times(ratio)}, 95% interval {times(lo)}–{times(hi)})"
    if verdict in ("higher", "lower"):
        return f"{times(ratio)} {verdict} (95% interval {times(lo)}–{times(hi)})"
    why = no_interval or "at least one of the two readings has none"
    return f"{times(ratio)}, not shown to be beyond noise (no interval: {why})"


def repeat_note(summary: dict) -> str:
    """What the intervals leave out: run-to-run variation, with the repeats the data holds."""
    if not summary.get("groups"):
        return ("The intervals cover the sampling of requests within one run only: these points have no same-date "
                "repeat of their configuration, so run-to-run variation is not in them.")
    return (f"The intervals cover the sampling of requests within one run only; {whole(summary['groups'])} "
            f"configurations were measured more than once on one date, and those repeats differ by a median "
            f"{pct(summary['gpu_spread_median'])} in tok/s/GPU, more than most intervals here.")


def without_spec_note() -> str:
    """Why no per-user speed without speculative decoding is shown."""
    return ("No per-user speed *without* speculative decoding is shown: none was measured for these points, and it "
            f"could only be estimated as {esc(WITHOUT_SPEC_EXPRESSION)} (s_spec the measured speed, τ the acceptance "
            "length, c a speculative step's time over a plain one), with τ unknown for these points.")


USER_DEF_WORDS = {
    "1000/tpot_ms_p50": "1000 / median TPOT",
    "1000/tpot_ms_mean": "1000 / mean TPOT",
    "1000/step_ms": "1000 / decode step time",
    "output/concurrency": "system output tok/s ÷ concurrency",
    "osl/e2e": "output tokens ÷ end-to-end latency",
    "tool-per-user": "the tool's own per-user figure",
}


def statistic_note(counts: dict) -> str:
    """Which statistic tok/s/user is on this page (``counts``: points per ``tok_s_per_user_def``), e.g. ``tok/s/user
    is 1000 / mean TPOT for 36 points (as their sources give it) and 1000 / median TPOT for 8``."""
    parts = [f"{USER_DEF_WORDS.get(k, esc(k))} for {whole(n)} point{'' if n == 1 else 's'}"
             for k, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    if not parts:
        return ""
    if len(parts) == 1:
        return f"tok/s/user here is {parts[0].rsplit(' for ', 1)[0]} on every point, the statistic its source gives."
    return ("tok/s/user is not one statistic here: " + "; ".join(parts)
            + " — each as its source gives it, so a mean and a median reading are not like-for-like.")
