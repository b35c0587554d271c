"""Sentences about precision and scope comparisons: what :mod:`analysis.compare` found, in words."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.frontier_words import ratio_text
from analysis.text import fixed, plain, times

WHY_WORDS = {"n unknown": "its points record no request count",
             "no spread": "its points give a mean or median but no percentiles to read a spread from"}
WHY_SHORT = {"n unknown": "no n", "no spread": "no spread"}


def left_out_note(left_out: Sequence) -> str:
    """The targets :func:`analysis.compare.plotted_targets` left out of a bar panel, one sentence each ("" when
    none): ``200 tok/s/user not plotted: only 1 of 6 bars measured there (see the table).``"""
    return " ".join(f"{plain(t.target)} tok/s/user not plotted: only {t.n_measured} of {t.n_bars} bars measured "
                    "there (see the table)." for t in left_out)


def apart_in_time_note(apart: Sequence[tuple[str, str, float | str]], *, window_days: float) -> str:
    """The pairs left out of the clean set only because their sides ran too far apart, one clause each ("" when
    none): ``B200 · trt · node · none (dates 198 days apart, 1.53× at equal tok/s/user) pools runs further apart
    than 31 days on more than one image, so it is confounded in time and stays out of the headline.`` The ratio
    is a number or already in words with its interval (:func:`ratio_words`)."""
    if not apart:
        return ""
    items = "; ".join(f"{label} ({why}, {ratio if isinstance(ratio, str) else times(ratio)} at equal tok/s/user)"
                      for label, why, ratio in apart)
    verb = "pools" if len(apart) == 1 else "pool"
    return (f"{items} {verb} runs further apart than {plain(window_days)} days on more than one image, so "
            f"{'it is' if len(apart) == 1 else 'they are'} confounded in time (image and software may differ as "
            f"much as the precision) and {'stays' if len(apart) == 1 else 'stay'} out of the headline.")


def pooled_note(window_days: float) -> str:
    """What a clean pair's sides may differ in: run date and image, only within the window."""
    return (f"A clean pair holds everything equal but run date and container image, and its two sides ran on one "
            f"image or within {plain(window_days)} days of each other (each side may pool several runs). A ratio's "
            "95% interval is each side's within-run sampling (from its request count and percentiles); the drift "
            "between runs of one configuration on different days is not in it.")


def speculation_note(methods: Sequence[str], *, low: str = "fp4", high: str = "fp8") -> str:
    """What a clean pair does not hold equal when both sides speculate: the method matches, the acceptance need
    not ("" when no pair speculates)."""
    spec = sorted({str(m) for m in methods if str(m).lower() not in ("none", "unknown", "nan", "")})
    if not spec:
        return ""
    return (f"Both sides of a pair run the same speculative decoding ({', '.join(spec)}), but a pair matches the "
            f"method, not its acceptance: a {low} checkpoint that drafts or verifies differently from the {high} one "
            "is part of the ratio, not held equal.")


def missing_interval_text(missing: str, why: str, *, low: str = "fp4", high: str = "fp8") -> str:
    """Why a ratio has no interval: ``the fp8 reading has none (its points record no request count)``."""
    side = {"low": f"the {low} reading has", "high": f"the {high} reading has",
            "both": f"neither the {low} nor the {high} reading has"}.get(missing, "a reading has")
    none = "one" if missing == "both" else "none"
    words = WHY_WORDS.get(why, "")
    if missing == "both" and words:
        words = words.replace("its points", "their points")
    return f"{side} {none}" + (f": {words}" if words else "")


def ratio_words(row, prefix: str, *, low: str = "fp4", high: str = "fp8") -> str:
    """A ratio of :func:`analysis.compare.compare_frontiers` (``prefix``, e.g. ``ratio_median``) with its interval
    and verdict: ``1.88× higher (95% interval 1.81–1.95×)``, ``within noise (1.02×, …)``, or ``3.19×, not shown
    to be beyond noise (no interval: neither the fp4 nor the fp8 reading has one (…))``."""
    return ratio_text(row[prefix], row[f"{prefix}_lo"], row[f"{prefix}_hi"], row[f"{prefix}_verdict"],
                      no_interval=missing_interval_text(row.get(f"{prefix}_missing", ""),
                                                        row.get(f"{prefix}_missing_why", ""), low=low, high=high))


def interval_cell(row, prefix: str, *, low: str = "fp4", high: str = "fp8") -> str:
    """A table cell for a ratio's interval, short enough for the page's tables: ``1.81–1.95× (higher)``,
    ``0.97–1.08× (within noise)``, ``none (fp4, fp8: no n)`` (no interval: no request count, or no spread) or ''
    when no ratio was read."""
    verdict = row[f"{prefix}_verdict"]
    if verdict in ("higher", "lower", "within-noise"):
        return (f"{fixed(row[f'{prefix}_lo'], 2)}–{times(row[f'{prefix}_hi'])} "
                f"({'within noise' if verdict == 'within-noise' else verdict})")
    if not row.get(f"{prefix}_missing"):
        return ""
    side = {"low": low, "high": high, "both": f"{low}, {high}"}.get(row[f"{prefix}_missing"], "")
    why = WHY_SHORT.get(row.get(f"{prefix}_missing_why", ""), "none")
    return f"none ({side}: {why})"


def headline_ratio(row, prefix: str, *, low: str = "fp4", high: str = "fp8") -> str:
    """The headline's claim on one ratio, never stronger than its interval: ``fp4 delivers 1.88× the tok/s/GPU of
    fp8 at equal tok/s/user (95% interval 1.81–1.95×)``; within noise, ``fp4 and fp8 deliver tok/s/GPU within
    noise of each other at equal tok/s/user (1.02×, 95% interval 0.97–1.08×)``; without an interval the ratio
    with why it has none."""
    ratio, verdict = row[prefix], row[f"{prefix}_verdict"]
    lo, hi = row[f"{prefix}_lo"], row[f"{prefix}_hi"]
    if verdict == "within-noise":
        return (f"{low} and {high} deliver tok/s/GPU within noise of each other at equal tok/s/user "
                f"({times(ratio)}, 95% interval {times(lo)}–{times(hi)})")
    if verdict in ("higher", "lower"):
        return (f"{low} delivers {times(ratio)} the tok/s/GPU of {high} at equal tok/s/user (95% interval "
                f"{times(lo)}–{times(hi)})")
    why = missing_interval_text(row.get(f"{prefix}_missing", ""), row.get(f"{prefix}_missing_why", ""),
                                low=low, high=high)
    return (f"{low} delivers {times(ratio)} the tok/s/GPU of {high} at equal tok/s/user, not shown to be beyond "
            f"noise (no interval: {why})")


def ratio_cell(row, prefix: str, *, low: str = "fp4", high: str = "fp8") -> str:
    """A ratio and its interval in one table cell: ``2.30× (2.24–2.37)``, ``1.02× (0.97–1.08, within
    noise)``, ``1.50× (no interval)`` (why: :func:`interval_cell`, in the row's median column); '' when no ratio
    was read."""
    value = row[prefix]
    if value is None or value != value:
        return ""
    cell = interval_cell(row, prefix, low=low, high=high)
    if cell.startswith("none ("):
        return f"{times(value)} (no interval)"
    if not cell:
        return times(value)
    span, verdict = cell.split(" (", 1)
    span = span.removesuffix("×")  # the cell's ratio carries the unit
    # an interval wholly above or below 1 speaks for itself; one that includes 1 says so
    return f"{times(value)} ({span}, within noise)" if verdict.startswith("within") else f"{times(value)} ({span})"
