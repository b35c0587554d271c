"""Sentences about frontiers: what :mod:`analysis.frontier` found, in words.

:mod:`analysis.frontier` returns facts (readings, enums such as ``Efficiency.why``, flags such as ``long_ttft``);
this module writes them for a reader, with every number through :mod:`analysis.text`.
"""

from __future__ import annotations

from analysis import cost
from analysis.text import lengths, num, plain, whole


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
