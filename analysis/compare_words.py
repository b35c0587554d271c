"""Sentences about precision and scope comparisons: what :mod:`analysis.compare` found, in words."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.text import plain


def left_out_note(left_out: Sequence) -> str:
    """The targets :func:`analysis.compare.plotted_targets` left out of a bar panel, one sentence each ("" when
    none): ``200 tok/s/user not plotted: only 1 of 6 bars measured there (see the table).``"""
    return " ".join(f"{plain(t.target)} tok/s/user not plotted: only {t.n_measured} of {t.n_bars} bars measured "
                    "there (see the table)." for t in left_out)
