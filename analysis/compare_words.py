"""Sentences about precision and scope comparisons: what :mod:`analysis.compare` found, in words."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.text import plain, times


def left_out_note(left_out: Sequence) -> str:
    """The targets :func:`analysis.compare.plotted_targets` left out of a bar panel, one sentence each ("" when
    none): ``200 tok/s/user not plotted: only 1 of 6 bars measured there (see the table).``"""
    return " ".join(f"{plain(t.target)} tok/s/user not plotted: only {t.n_measured} of {t.n_bars} bars measured "
                    "there (see the table)." for t in left_out)


def apart_in_time_note(apart: Sequence[tuple[str, str, float]], *, window_days: float) -> str:
    """The pairs left out of the clean set only because their sides ran too far apart, one clause each ("" when
    none): ``B200 · trt · node · none (dates 198 days apart, 1.53× at equal tok/s/user) pools runs further apart
    than 31 days on more than one image, so it is confounded in time and stays out of the headline.``"""
    if not apart:
        return ""
    items = "; ".join(f"{label} ({why}, {times(ratio)} at equal tok/s/user)" for label, why, ratio in apart)
    verb = "pools" if len(apart) == 1 else "pool"
    return (f"{items} {verb} runs further apart than {plain(window_days)} days on more than one image, so "
            f"{'it is' if len(apart) == 1 else 'they are'} confounded in time (image and software may differ as "
            f"much as the precision) and {'stays' if len(apart) == 1 else 'stay'} out of the headline.")


def pooled_note(window_days: float) -> str:
    """What a clean pair's sides may differ in: run date and image, only within the window."""
    return (f"A clean pair holds everything equal but run date and container image, and its two sides ran on one "
            f"image or within {plain(window_days)} days of each other (each side may pool several runs).")
