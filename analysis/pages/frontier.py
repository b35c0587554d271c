"""The frontier report (``notebooks/20-frontier.ipynb``): one object holding every table, figure input and sentence
the notebook shows, and the numbers it saves.

:func:`build` selects one model and one input/output length pair, computes the tok/s/user × tok/s/GPU frontiers
of every hardware × precision × scope group, reads them at equal interactivity, and reads the same frontiers on
cost ($ per million output tokens, from the price table) and energy (J per output token and output tok/s per MW,
GPU power only) at the efficiency levels. Every data-derived string in the Markdown it returns has passed
:func:`analysis.text.esc`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import cost, frontier, uncertainty
from analysis.frontier_words import (
    acceptance_text,
    fastest_note,
    interval_text,
    n_requests_text,
    ratio_text,
    repeat_note,
    source_kind_text,
    statistic_note,
    without_spec_note,
)
from analysis.schema import has_flag
from analysis.text import MISSING, esc, lengths, num, seconds, share, span, usd

EFFICIENCY_LEVELS = (50, 100)


# --- number words ------------------------------------------------------------------------------------------
def _ttft_text(ms: float) -> str:
    if ms is None or not np.isfinite(ms):
        return f"TTFT {MISSING}"
    return f"TTFT p50 {seconds(ms / 1000.0)} s"


def _range_text(values: pd.Series) -> str:
    values = values.dropna()
    return span(values.min(), values.max()) if len(values) else MISSING


def _point_text(concurrency: float, n_gpus: float) -> str:
    who = "one user (concurrency 1)" if concurrency == 1 else f"concurrency {num(concurrency)}"
    return f"{who} on {num(n_gpus)} GPUs"


def dollars_md(text: str) -> str:
    """Dollar signs made literal for Markdown: two ``$`` in one paragraph would open a math span."""
    return text.replace("$", "&#36;")


def _names(values) -> str:
    return ", ".join(esc(v) for v in values)


# --- the tok/s/GPU tables and their prose -----------------------------------------------------------------
def capacity_cell(value: float, reading: str, lower_bound: float, gap: float) -> str:
    """One table cell for tok/s/GPU at a target: the number, ``≥ X (lower bound)`` below the measured range,
    ``X (gap N×)`` when read across a wide gap, ``above range`` when faster than anything measured."""
    if reading == "lower bound":
        return f"≥ {num(lower_bound)} (lower bound)"
    return efficiency_cell("tok_s_per_gpu", value, reading, lower_bound, gap)


def spec_text(value: str, e=esc) -> str:
    """Words for the speculative decoding a reading rests on (``mtp``, ``none``, ``mtp+none``, ``unknown``);
    ``e`` escapes the names (Markdown by default, ``str`` for plain text)."""
    parts = [p for p in str(value or "").split("+") if p]
    if not parts:
        return ""
    if len(parts) > 1:
        return "read between points with speculative decoding " + " and ".join(e(p) for p in parts)
    return "no speculative decoding" if parts[0] == "none" else f"speculative decoding {e(parts[0])}"


def spec_mark(value: str, acceptance: str = "") -> str:
    """A table cell's suffix naming speculative decoding when the reading rests on any (nothing for ``none``), with
    what its acceptance rests on (measured, forced, not stated ...) when that is given."""
    value = str(value or "")
    if value in ("", "none"):
        return ""
    words = acceptance_text(acceptance)
    return f" · spec {esc(value)}" + (f" ({words})" if words else "")


def interval_mark(table_row, t: float) -> str:
    """`` [95%: 687–693]`` after a tok/s/GPU cell (nothing when the reading has no interval)."""
    cols = frontier.interval_columns(t)
    lo, hi = table_row.get(cols["lo"], np.nan), table_row.get(cols["hi"], np.nan)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return ""
    return f" [95%: {span(lo, hi, num)}]"


SPEC_NOTE = ("Each reading names the speculative decoding of the frontier points it comes from (`· spec mtp` in the "
             "tables; no mark: none) and whether their acceptance was measured on the run's own prompts, forced at "
             "launch or not stated by the source (*acceptance not stated*: speculative decoding ran, but whether its "
             "acceptance was measured on real prompts or forced is not recorded). A frontier pools every "
             "configuration of its group, and "
             "speculative decoding (MTP, DSpark) raises tok/s/user at the same concurrency, so a reading on MTP "
             "points is not like-for-like with one on points without it, nor a forced acceptance with a measured "
             "one. Each reading carries its 95% interval (`[95%: lo–hi]`; none where the request count or the "
             "spread is unknown).")


def _acc_at(table: pd.DataFrame, t: float) -> pd.Series:
    col = frontier.acceptance_column(t)
    return table[col] if col in table else pd.Series("", index=table.index)


def _spec_at(table: pd.DataFrame, t: float) -> pd.Series:
    col = frontier.spec_decode_column(t)
    return table[col] if col in table else pd.Series("", index=table.index)


def capacity_display(table: pd.DataFrame, *, targets: Sequence[float]) -> pd.DataFrame:
    """The capacity table as a reader sees it: GPU counts, tok/s/user range, TTFT and one text cell per target."""
    out = pd.DataFrame({
        "group": table["label"],
        "GPUs": [span(a, b) for a, b in zip(table["n_gpus_min"], table["n_gpus_max"])],
        "points (frontier)": [f"{a} ({b})" for a, b in zip(table["n_points"], table["n_frontier"])],
        "tok/s/user range": [f"{num(a)}–{num(b)}" for a, b in
                             zip(table["tok_s_per_user_min"], table["tok_s_per_user_max"])],
        "TTFT p50 range (s)": [f"{seconds(a)}–{seconds(b)}" if np.isfinite(a) else MISSING
                               for a, b in zip(table["ttft_s_p50_min"], table["ttft_s_p50_max"])],
        "frontier points over TTFT limit": table["n_over_ttft_limit"],
    })
    for t in targets:
        out[f"tok/s/GPU at {t:g} tok/s/user"] = [
            capacity_cell(v, r, lb, g) + (interval_mark(row, t) if r not in ("above range", "no data") else "")
            + spec_mark(sd, acc) for v, r, lb, g, sd, acc, (_, row) in zip(
                table[frontier.target_column(t)], table[frontier.reading_column(t)],
                table[frontier.lower_bound_column(t)], table[frontier.gap_column(t)], _spec_at(table, t),
                _acc_at(table, t), table.iterrows())]
    return out.sort_values("group", ignore_index=True)


def describe_frontiers(table: pd.DataFrame, *, targets: Sequence[float], denominator: str,
                       ttft_limit_s: float = frontier.TTFT_LIMIT_S,
                       parts: Sequence[tuple[str, pd.DataFrame]] | None = None) -> str:
    """Markdown prose built from the capacity table: who reaches each target, the best capacity there, lower
    bounds where a frontier starts faster, frontier points stuck behind a long TTFT, and the fastest per-user
    points."""
    if table.empty:
        return "No usable points (tok/s/user and tok/s/GPU) in this selection."
    n_front = int(table["n_frontier"].sum())
    n_slow = int(table["n_over_ttft_limit"].sum())
    lines = [f"tok/s/GPU divides system output tok/s by **{frontier.DENOMINATOR_TEXT[denominator]}**. "
             f"{len(table)} groups, each its own frontier (one hardware, precision, scope and workload — agentic traces "
             "and random prompts are never one curve); values between measured frontier points are "
             "interpolated in log-log space and never extrapolated. " + SPEC_NOTE,
             f"- **{n_slow} of {n_front} frontier points have a median TTFT above {ttft_limit_s:g} s**: tok/s/user "
             "(1000 / TPOT) counts only decoding, so these points look interactive while each request waits "
             "that long for its first token. They are drawn hollow in the figure."]
    no_ttft = table[~np.isfinite(table["ttft_s_p50_max"].astype(float))]
    if len(no_ttft) == len(table):
        lines[-1] = ("- **No frontier point here states a median TTFT** (time to first token): how long each request "
                     "waited before decoding started is unknown, so no point can be shown to be interactive.")
    elif len(no_ttft):
        lines[-1] += (f" {len(no_ttft)} of {len(table)} groups state no TTFT at all ({_names(no_ttft['label'])}): "
                      "their wait for a first token is unknown, not short.")
    whole_table = table
    for (name, table), t in [(p, t) for p in (parts or [("", whole_table)]) for t in targets]:
        at = f"At {t:g} tok/s/user" + (f" ({esc(name)})" if name else "")
        col = table[frontier.target_column(t)]
        reached = table[col.notna()]
        floors = table[table[frontier.reading_column(t)] == "lower bound"]
        rough = table[table[frontier.reading_column(t)] == "wide gap"]
        if reached.empty:
            text = f"- {at}: no group's measured range covers this level"
        else:
            best = reached.loc[reached[frontier.target_column(t)].idxmax()]
            worst = reached.loc[reached[frontier.target_column(t)].idxmin()]
            if len(reached) == 1:
                text = (f"- {at}: the one group measured reads {best[frontier.target_column(t)]:,.0f} tok/s/GPU "
                        f"({esc(best['label'])}{_spec_clause(best, t)}; {reading_interval_text(best, t)})")
            else:
                text = (f"- {at}: {len(reached)} of {len(table)} groups measured; highest "
                        f"{best[frontier.target_column(t)]:,.0f} tok/s/GPU ({esc(best['label'])}"
                        f"{_spec_clause(best, t)}; {reading_interval_text(best, t)}), lowest "
                        f"{worst[frontier.target_column(t)]:,.0f} ({esc(worst['label'])}{_spec_clause(worst, t)}; "
                        f"{reading_interval_text(worst, t)})")
            if len(rough):
                text += f"; {len(rough)} of these read across a gap wider than {frontier.WIDE_GAP:g}× (rough)"
        if len(floors):
            text += (f". {len(floors)} more only measured faster than this, so they serve it with at least their "
                     "slowest point's tok/s/GPU: " + ", ".join(
                         f"{esc(r['label'])} ≥ {num(r[frontier.lower_bound_column(t)])}"
                         + spec_mark(r.get(frontier.spec_decode_column(t), ""))
                         for _, r in floors.iterrows()))
        lines.append(text + ".")
    table = whole_table
    fastest = table.loc[table["fastest_tok_s_per_user"].idxmax()]
    kept = fastest["fastest_tok_s_per_gpu"] / fastest["capacity_tok_s_per_gpu"]
    lines.append(f"- Fastest per-user point of all: {fastest['fastest_tok_s_per_user']:,.0f} tok/s/user "
                 f"({esc(fastest['label'])}, "
                 f"{_point_text(fastest['fastest_concurrency'], fastest['fastest_n_gpus'])}, "
                 f"{_ttft_text(fastest['fastest_ttft_ms_p50'])}), at {fastest['fastest_tok_s_per_gpu']:,.0f} "
                 f"tok/s/GPU — {share(kept)} of that group's best measured capacity "
                 f"({fastest['capacity_tok_s_per_gpu']:,.0f} tok/s/GPU at {fastest['capacity_tok_s_per_user']:,.0f} "
                 "tok/s/user).")
    return "\n".join(lines)


def _spec_clause(row: pd.Series, t: float, e=esc) -> str:
    words = spec_text(row.get(frontier.spec_decode_column(t), ""), e)
    if words:
        accept = acceptance_text(row.get(frontier.acceptance_column(t), ""))
        words += f" ({accept})" if accept else ""
    kind = str(row.get(frontier.source_kind_column(t), ""))
    if "published-table" in kind:
        words += (", " if words else "") + f"from a {source_kind_text(kind)}"
    return f", {words}" if words else ""


def reading_interval_text(row: pd.Series, t: float) -> str:
    """The interval of a group's reading at ``t`` in words (:func:`analysis.frontier_words.interval_text`)."""
    cols = frontier.interval_columns(t)
    return interval_text(row.get(cols["lo"], np.nan), row.get(cols["hi"], np.nan), n=row.get(cols["n"], np.nan),
                         n_source=row.get(cols["n_source"], ""), method=row.get(cols["method"], ""))


def mixed_acceptance_text(table: pd.DataFrame) -> str:
    """Markdown: the groups whose frontier mixes forced with measured acceptance, or that none does."""
    mixed = table[table["mixed_forced_measured"]] if "mixed_forced_measured" in table else table.iloc[0:0]
    if mixed.empty:
        return "No frontier here mixes forced with measured acceptance."
    return (f"**{len(mixed)} frontier{'s mix' if len(mixed) > 1 else ' mixes'} forced with measured acceptance** "
            f"({_names(mixed['label'])}): readings along {'them' if len(mixed) > 1 else 'it'} compare a pinned "
            "acceptance with a real one.")


def describe_fastest_points(ends: pd.DataFrame, *, ttft_limit_s: float = frontier.TTFT_LIMIT_S) -> str:
    """Markdown: what the fastest per-user points ran at, which wait long for a first token, and how much of its
    best tok/s/GPU each frontier keeps there."""
    if ends.empty:
        return ""
    single = ends[ends["fastest_concurrency"] == 1]
    conc = ends.loc[ends["fastest_concurrency"] != 1, "fastest_concurrency"]
    parts = [f"{len(single)} of {len(ends)} fastest per-user points were measured with a single user "
             "(concurrency 1)" + (f"; the others ran at concurrency {_range_text(conc)}, so they show how fast "
                                  "each of many concurrent users was served, not a single-user peak." if len(conc)
                                  else ".")]
    slow = ends[ends["fastest_ttft_s_p50"] > ttft_limit_s]
    if len(slow):
        parts.append(f"{len(slow)} of these points {'waits' if len(slow) == 1 else 'wait'} more than "
                     f"{ttft_limit_s:g} s for the first token (median TTFT): "
                     + "; ".join(f"{esc(r['label'])} {r['fastest_tok_s_per_user']:,.0f} tok/s/user at concurrency "
                                 f"{num(r['fastest_concurrency'])} with TTFT p50 {r['fastest_ttft_s_p50']:,.0f} s"
                                 for _, r in slow.iterrows())
                     + ". Decode is fast there, but requests queue for prefill first.")
    multi = ends[ends["n_frontier"] >= 2]
    lonely = ends[ends["n_frontier"] < 2]
    if len(multi):
        lo = multi.loc[multi["fastest_share_of_capacity"].idxmin()]
        hi = multi.loc[multi["fastest_share_of_capacity"].idxmax()]
        parts.append(f"At its fastest per-user point a frontier keeps between "
                     f"{share(lo['fastest_share_of_capacity'])} ({esc(lo['label'])}) and "
                     f"{share(hi['fastest_share_of_capacity'])} ({esc(hi['label'])}) of its best measured "
                     f"tok/s/GPU (median {share(multi['fastest_share_of_capacity'].median())}): a per-user "
                     "peak and server capacity are different numbers.")
    if len(lonely):
        parts.append(f"{_names(lonely['label'])}: one frontier point only, so no trade-off can be read.")
    return "\n\n".join(parts)


def fastest_display(ends: pd.DataFrame, *, ttft_limit_s: float = frontier.TTFT_LIMIT_S) -> pd.DataFrame:
    """``fastest_points`` as a reader sees it: readable headers, the share of capacity as a percentage, a note on
    each point (:func:`analysis.frontier_words.fastest_note`)."""
    return pd.DataFrame({
        "group": ends["label"],
        "fastest tok/s/user [95%]": [f"{num(v)}" + (f" [{span(lo, hi, num)}]" if np.isfinite(lo) and np.isfinite(hi)
                                                      else "") for v, lo, hi in
                                     zip(ends["fastest_tok_s_per_user"], _get(ends, "fastest_user_lo"),
                                         _get(ends, "fastest_user_hi"))],
        "spec decoding": [f"{esc(sd)}" + (f" ({a})" if (a := acceptance_text(acc)) else "") for sd, acc in
                          zip(_get(ends, "fastest_spec_decode", "unknown"), _get(ends, "fastest_acceptance", ""))],
        "concurrency": ends["fastest_concurrency"],
        "GPUs": ends["fastest_n_gpus"],
        "TTFT p50 (s)": ends["fastest_ttft_s_p50"],
        "tok/s/GPU there": ends["fastest_tok_s_per_gpu"],
        "best tok/s/GPU (capacity end)": ends["capacity_tok_s_per_gpu"],
        "tok/s/user at capacity end": ends["capacity_tok_s_per_user"],
        "share of best tok/s/GPU kept": [share(f) for f in ends["fastest_share_of_capacity"]],
        "note": [f"{fastest_note(r, ttft_limit_s=ttft_limit_s)}; "
                 f"{n_requests_text(r.get('fastest_n_requests', np.nan), r.get('fastest_n_requests_source', ''))}; "
                 f"{source_kind_text(r.get('fastest_source_kind', ''))}" for _, r in ends.iterrows()],
    })


def _get(frame: pd.DataFrame, col: str, default=np.nan) -> pd.Series:
    return frame[col] if col in frame else pd.Series(default, index=frame.index)


def readings_display(table: pd.DataFrame, *, targets: Sequence[float]) -> pd.DataFrame:
    """One row per group × target: the tok/s/GPU read, how, its 95% interval and the requests behind it, the
    speculative decoding and acceptance of the points read, and whether they come from a published table or a
    raw log. Groups whose range does not reach a target are left out of that target's rows."""
    rows = []
    for _, r in table.sort_values("label").iterrows():
        for t in targets:
            reading = r[frontier.reading_column(t)]
            if reading in ("above range", "no data"):
                continue
            cols = frontier.interval_columns(t)
            rows.append({
                "group": r["label"], "tok/s/user": f"{t:g}",
                "tok/s/GPU": capacity_cell(r[frontier.target_column(t)], reading, r[frontier.lower_bound_column(t)],
                                           r[frontier.gap_column(t)]),
                "read as": reading,
                "95% interval (tok/s/GPU)": span(r[cols["lo"]], r[cols["hi"]], num),
                "requests": n_requests_text(r[cols["n"]], r[cols["n_source"]]),
                "spec decoding": spec_text(r[frontier.spec_decode_column(t)], esc) or "—",
                "acceptance": acceptance_text(r[frontier.acceptance_column(t)]) or "—",
                "source": source_kind_text(r[frontier.source_kind_column(t)]),
            })
    return pd.DataFrame(rows)


# --- cost and energy at equal interactivity -----------------------------------------------------------------
def efficiency_cell(metric: str, value: float, reading: str, bound: float, gap: float) -> str:
    """One cell of the cost or energy table: the value with its unit, ``≤``/``≥`` a bound below the measured
    range (a ceiling for $/M and J/token, a floor for tok/s/MW), ``(gap N×)`` when rough, else why not."""
    fmt = {"usd_per_mtok": usd, "j_per_output_token": lambda v: f"{v:.3g} J",
           "tok_s_per_mw": lambda v: f"{v:,.3g}" if v < 1000 else f"{v:,.0f}", "tok_s_per_gpu": num}[metric]
    if reading == "lower bound":
        if cost.lower_is_better(metric):
            return f"≤ {fmt(bound)} (ceiling)"
        return f"≥ {fmt(bound)} (floor)"
    if reading == "wide gap":
        return f"{fmt(value)} (gap {gap:.1f}×)"
    if reading in ("measured", "interpolated"):
        return fmt(value)
    return reading


def efficiency_tables(points: pd.DataFrame, *, levels: Sequence[float], denominator: str, prices: pd.DataFrame,
                      by: Sequence[str] = frontier.REPORT_BY, ttft_max_ms: float | None = None) -> dict:
    """Per metric (``usd_per_mtok``, ``j_per_output_token``, ``tok_s_per_mw``) the frontier table at ``levels``
    with a ``label`` column; empty tables where no group has the metric."""
    out = {}
    for metric in ("usd_per_mtok", "j_per_output_token", "tok_s_per_mw"):
        fronts = frontier.metric_frontier(points, metric=metric, by=by, denominator=denominator,
                                          ttft_max_ms=ttft_max_ms, prices=prices)
        table = frontier.metric_table(fronts, targets=levels, metric=metric, by=by) if len(fronts) else \
            pd.DataFrame()
        if len(table):
            table.insert(0, "label", [frontier.group_label(r, by, pair_lengths=True) for _, r in table.iterrows()])
            table = table.sort_values("label", ignore_index=True)
        out[metric] = table
    return out


def _cells(table: pd.DataFrame, metric: str, t: float) -> list[str]:
    return [efficiency_cell(metric, v, r, b, g) for v, r, b, g in zip(
        table[frontier.metric_column(metric, t)], table[frontier.reading_column(t)],
        table[frontier.metric_bound_column(metric, t)], table[frontier.gap_column(t)])]


@dataclass
class FrontierPage:
    """Everything 20-frontier shows for one model and length pair (see :func:`build`)."""

    model: str
    isl: float
    osl: float
    targets: list
    denominator: str
    source_format: str | None
    ttft_limit_s: float
    ttft_max_ms: float | None
    levels: list
    points: pd.DataFrame
    data: pd.DataFrame
    fronts: pd.DataFrame
    table: pd.DataFrame
    ends: pd.DataFrame
    prices: pd.DataFrame
    efficiency: dict = field(default_factory=dict)
    by: list = field(default_factory=lambda: list(frontier.REPORT_BY))

    # --- words -------------------------------------------------------------------------------------------
    @property
    def hardware(self) -> list[str]:
        return sorted(self.table["hardware"].unique())

    @property
    def title_md(self) -> str:
        """The title for a Markdown heading (the model name escaped)."""
        return esc(self.title)

    @property
    def models(self) -> list[str]:
        return [self.model] if isinstance(self.model, str) else list(self.model)

    @property
    def lengths_text(self) -> str:
        """``1,024 in / 1,024 out``, or ``every workload and length`` when the page did not fix them."""
        if self.isl is None or self.osl is None:
            return "every workload and length (one frontier per workload and length pair)"
        return f"{self.isl:,.0f} in / {self.osl:,.0f} out"

    @property
    def what(self) -> str:
        """The model(s) and lengths, e.g. ``DeepSeek-R1-0528 1k/1k``."""
        names = ", ".join(self.models)
        return names + ("" if self.isl is None or self.osl is None else f" {lengths(self.isl, self.osl)}")

    @property
    def title(self) -> str:
        return f"{', '.join(self.models)} frontiers, {self.lengths_text}: tok/s/user against tok/s/GPU, cost and energy"

    def workload_tables(self) -> list[tuple[str, pd.DataFrame]]:
        """The capacity table split by workload and length pair (``agentx``, ``random-capped 8k/1k`` ...): readings
        are only ranked within one; a single part named '' when the page holds one workload."""
        keys = [c for c in ("workload", "isl", "osl") if c in self.table]
        parts = list(self.table.groupby(keys, dropna=False, sort=True)) if keys else [((), self.table)]
        if len(parts) == 1:
            return [("", self.table)]
        out = []
        for key, part in parts:
            values = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            name = frontier.group_label(values, keys, pair_lengths=True) or "workload not stated"
            out.append((name, part))
        return out

    def _best_at(self, t: float, *, solid: bool = False, table: pd.DataFrame | None = None) -> pd.Series | None:
        """The group with the most tok/s/GPU at ``t`` (``solid``: only values not read across a wide gap)."""
        col = frontier.target_column(t)
        table = self.table if table is None else table
        reached = table[table[col].notna()]
        if solid:
            reached = reached[reached[frontier.reading_column(t)] != "wide gap"]
        return None if reached.empty else reached.loc[reached[col].idxmax()]

    def _cheapest_at(self, t: float, *, solid: bool = False, labels=None) -> pd.Series | None:
        """The group with the lowest $/M output tokens at ``t`` (``solid``: not read across a wide gap; ``labels``:
        only these groups, e.g. one workload's)."""
        table = self.efficiency.get("usd_per_mtok", pd.DataFrame())
        if table.empty or frontier.metric_column("usd_per_mtok", t) not in table:
            return None
        if labels is not None:
            table = table[table["label"].isin(list(labels))]
            if table.empty:
                return None
        if solid:
            table = table[table[frontier.reading_column(t)] != "wide gap"]
        col = table[frontier.metric_column("usd_per_mtok", t)]
        return None if col.notna().sum() == 0 else table.loc[col.idxmin()]

    @property
    def no_price(self) -> list[str]:
        return cost.missing_prices(self.prices, self.data["hardware"])

    @property
    def n_with_power(self) -> int:
        return int(cost.j_per_output_token(self.data, denominator=self.denominator).notna().sum())

    @property
    def power_hardware(self) -> list[str]:
        has = cost.j_per_output_token(self.data, denominator=self.denominator).notna()
        return sorted(self.data.loc[has, "hardware"].unique())

    def _headline(self, md: bool) -> tuple[str, list[tuple[str, str]]]:
        """The lead line and (topic, finding) pairs; ``md``: data-derived words escaped for Markdown."""
        e = esc if md else str
        names = (lambda v: _names(v)) if md else (lambda v: ", ".join(map(str, v)))

        def spec(row: pd.Series, level: float) -> str:
            return _spec_clause(row, level, e)
        t = self.targets[0]
        lead = (f"{e(', '.join(self.models))}, "
                + ("every workload and length pair as its own frontier" if self.isl is None or self.osl is None
                   else f"{self.isl:,.0f}/{self.osl:,.0f} tokens in/out")
                + f"; tok/s/GPU counts {frontier.DENOMINATOR_TEXT[self.denominator]}"
                + (f"; {self.n_published} of {len(self.data)} points from published tables" if self.n_published
                   else "") + ".")
        found = []
        for workload, part in self.workload_tables():
            found.append(self._capacity_finding(t, part, workload, e, spec))
        return lead, found + self._other_findings(e, names, spec)

    def _capacity_finding(self, t: float, part: pd.DataFrame, workload: str, e, spec) -> tuple[str, str]:
        topic = "Capacity" + (f" ({e(workload)})" if workload else "")
        best = self._best_at(t, table=part)
        if best is not None:
            rough = best[frontier.reading_column(t)] == "wide gap"
            solid = self._best_at(t, solid=True, table=part)
            best_text = (f"{best[frontier.target_column(t)]:,.0f} tok/s/GPU ({e(best['label'])}{spec(best, t)}; "
                         f"{reading_interval_text(best, t)}")
            if rough and solid is not None:  # lead with the reading close points support; the rough one after it
                text = (f"at {t:g} tok/s/user the highest read between close frontier points is "
                        f"{solid[frontier.target_column(t)]:,.0f} tok/s/GPU ({e(solid['label'])}{spec(solid, t)}; "
                        f"{reading_interval_text(solid, t)}); "
                        "a rough reading "
                        f"between points {best[frontier.gap_column(t)]:.1f}× apart gives {best_text})")
            else:
                text = (f"at {t:g} tok/s/user the highest reading is {best_text}"
                        + (f"; rough, read between frontier points {best[frontier.gap_column(t)]:.1f}× apart" if rough else "")
                        + ")")
            cmp = frontier.best_reading(part, t, solid=rough and solid is not None)
            if cmp is not None and cmp.runner_up is not None:
                text += (f". Against the next group ({e(cmp.runner_up['label'])}, "
                         f"{cmp.runner_up[frontier.target_column(t)]:,.0f} tok/s/GPU): "
                         f"{ratio_text(cmp.ratio, cmp.ratio_lo, cmp.ratio_hi, cmp.verdict)}")
            return (topic, text + ".")
        return (topic, f"no group's measured range covers {t:g} tok/s/user.")

    def _other_findings(self, e, names, spec) -> list[tuple[str, str]]:
        found = []
        fastest = self.table.loc[self.table["fastest_tok_s_per_user"].idxmax()]
        kept = fastest["fastest_tok_s_per_gpu"] / fastest["capacity_tok_s_per_gpu"]
        accept = acceptance_text(fastest.get("fastest_acceptance", ""))
        user_iv = interval_text(fastest.get("fastest_user_lo", np.nan), fastest.get("fastest_user_hi", np.nan),
                                n=fastest.get("fastest_n_requests", np.nan),
                                n_source=fastest.get("fastest_n_requests_source", ""))
        kind = source_kind_text(fastest.get("fastest_source_kind", ""))
        found.append(("Per-user speed", f"the fastest point, {fastest['fastest_tok_s_per_user']:,.0f} tok/s/user "
                      f"({e(fastest['label'])}, concurrency {num(fastest['fastest_concurrency'])}, speculative "
                      f"decoding {e(fastest.get('fastest_spec_decode', 'unknown'))}"
                      + (f", {accept}" if accept else "") + f"; {user_iv}; {kind}), keeps "
                      f"{share(kept)} of that group's best tok/s/GPU."))
        level = self.levels[0]
        no_price = f" No price, so no cost figure, for {names(self.no_price)}." if self.no_price else ""
        parts = self.workload_tables()
        for i, (workload, part) in enumerate(parts):
            topic = "Cost" + (f" ({e(workload)})" if workload else "")
            found.append((topic, self._cost_finding(level, part["label"], e, spec)
                          + (no_price if i == len(parts) - 1 else "")))
        found.append(("Energy (GPU power only)", f"measured on {self.n_with_power} of {len(self.data)} points"
                      + (f", all on {names(self.power_hardware)}." if self.power_hardware else
                         "; no energy figure on this page.")))
        return found

    def _cost_finding(self, level: float, labels, e, spec) -> str:
        cheap = self._cheapest_at(level, labels=labels)
        if cheap is not None:
            rough = cheap[frontier.reading_column(level)] == "wide gap"
            solid = self._cheapest_at(level, solid=True, labels=labels)
            cheap_text = (f"{usd(cheap[frontier.metric_column('usd_per_mtok', level)])} per million output tokens "
                          f"({e(cheap['label'])}{spec(cheap, level)}; ${cheap['usd_per_gpu_hour']:.2f}/GPU-hour "
                          "total cost of ownership")
            if rough and solid is not None:  # the reading close points support first, the rough one after it
                text = (f"lowest at {level:g} tok/s/user, read between close frontier points, is "
                        f"{usd(solid[frontier.metric_column('usd_per_mtok', level)])} per million output tokens "
                        f"({e(solid['label'])}{spec(solid, level)}; ${solid['usd_per_gpu_hour']:.2f}/GPU-hour); "
                        "a rough reading "
                        f"between points {cheap[frontier.gap_column(level)]:.1f}× apart gives {cheap_text})")
            else:
                text = (f"lowest at {level:g} tok/s/user is {cheap_text}"
                        + (f"; rough, read between frontier points {cheap[frontier.gap_column(level)]:.1f}× apart"
                           if rough else "") + ")")
            return text + "."
        return f"no priced group is measured at {level:g} tok/s/user."

    @property
    def headline(self) -> str:
        """Markdown: the page's answer, true without its footnotes (a lead line and four short findings)."""
        lead, found = self._headline(md=True)
        return dollars_md("\n".join([f"**{lead}**"] + [f"- **{topic}:** {text}" for topic, text in found]))

    @property
    def headline_text(self) -> str:
        """The same answer as plain text (for the index page and saved results)."""
        lead, found = self._headline(md=False)
        return " ".join([lead] + [f"{topic}: {text}" for topic, text in found])

    @property
    def panel(self) -> str:
        """What one figure panel holds: a hardware (one model), else a model (one panel each)."""
        return "hardware" if len(self.models) == 1 else "model"

    @property
    def line_by(self) -> list[str]:
        """What, besides the panel, keeps two frontier lines apart (every grouping column not the panel)."""
        return [c for c in self.by if c != self.panel]

    @property
    def user_axis_label(self) -> str:
        """The figure's tok/s/user axis, naming the statistic (each source's own where they differ)."""
        from analysis.frontier_words import USER_DEF_WORDS

        defs = set(self.data["tok_s_per_user_def"].fillna("unknown")) if "tok_s_per_user_def" in self.data else set()
        if len(defs) == 1:
            return f"tok/s/user ({USER_DEF_WORDS.get(defs.pop(), 'as its source gives it')})"
        return "tok/s/user (each source's own statistic)"

    @property
    def n_published(self) -> int:
        return int((self.data["source_kind"] == "published-table").sum()) if "source_kind" in self.data else 0

    @property
    def prose(self) -> str:
        text = describe_frontiers(self.table, targets=self.targets, denominator=self.denominator,
                                  ttft_limit_s=self.ttft_limit_s, parts=self.workload_tables())
        counts = (self.data["tok_s_per_user_def"].fillna("unknown").value_counts().to_dict()
                  if "tok_s_per_user_def" in self.data else {})
        note = statistic_note(counts)
        mean_only = self.fronts[self.fronts["ttft_ms_p50"].isna() & self.fronts["ttft_ms_mean"].notna()] \
            if "ttft_ms_mean" in self.fronts else self.fronts.iloc[0:0]
        if len(mean_only):
            text += (f"\n\n{len(mean_only)} of {len(self.fronts)} frontier points state a *mean* TTFT but no median "
                     f"(mean TTFT {seconds(mean_only['ttft_ms_mean'].min() / 1000)}–"
                     f"{seconds(mean_only['ttft_ms_mean'].max() / 1000)} s; "
                     f"**{int((mean_only['ttft_ms_mean'] > self.ttft_limit_s * 1000).sum())} of them above "
                     f"{self.ttft_limit_s:g} s**): the frontier's long-wait mark uses the median only, so these "
                     "points are never drawn hollow, though on average their requests waited that long.")
        median_only = set(counts) == {"1000/tpot_ms_p50"}  # what the page's words already say
        return text if median_only or not note else f"**{note}**\n\n{text}"

    def readings_display(self) -> pd.DataFrame:
        return readings_display(self.table, targets=self.targets)

    @property
    def readings_note(self) -> str:
        """Markdown under the readings table: mixed acceptance, what the intervals leave out, no no-spec speed."""
        spread = uncertainty.repeat_summary(uncertainty.repeat_spread(self.data, denominator=self.denominator))
        return "\n\n".join([mixed_acceptance_text(self.table), repeat_note(spread), without_spec_note()])

    @property
    def left_out(self) -> str:
        n_failed = int(has_flag(self.points, "failed-run").sum())
        n_bad = int(has_flag(self.points, "inconsistent-throughput").sum())
        text = (f"Left out: {n_failed} failed run{'' if n_failed == 1 else 's'} and {n_bad} "
                f"point{'' if n_bad == 1 else 's'} flagged `inconsistent-throughput` (output tok/s, tok/s/user and "
                "concurrency break Little's law — the number of streams decoding at once implied by output tok/s ÷ "
                "tok/s/user is off by more than 2× from the client concurrency — so one of the fields is wrong).")
        speeds = self.points[["tok_s_per_user", "tok_s_per_gpu", "output_tok_s"]].astype(float)
        no_speed = ~(np.isfinite(speeds["tok_s_per_user"]) & (np.isfinite(speeds["tok_s_per_gpu"])
                                                             | np.isfinite(speeds["output_tok_s"])))
        if no_speed.any():
            text += (f" {int(no_speed.sum())} more point{'' if no_speed.sum() == 1 else 's'} state"
                     f"{'s' if no_speed.sum() == 1 else ''} no tok/s/GPU (or no tok/s/user), so no frontier can "
                     "place them: " + ", ".join(f"{esc(m)} ({n})" for m, n in
                                               self.points[no_speed].groupby("model").size().items()) + ".")
        if self.ttft_max_ms is not None:
            text += f" Only points with median TTFT ≤ {self.ttft_max_ms:,.0f} ms compete for the frontiers."
        return text

    @property
    def figure_title(self) -> str:
        return (f"{self.what}: Pareto frontiers per {self.panel} (labels: concurrency[/GPUs]; "
                f"hollow: TTFT p50 > {self.ttft_limit_s:g} s; tok/s/GPU ÷ {self.denominator} GPUs)")

    def label_note(self, n_drawn: int) -> str:
        """How many concurrency labels the figure shows and how many were left out to avoid overlaps."""
        n = len(self.fronts)
        dropped = n - int(n_drawn)
        if dropped <= 0:
            return f"All {n} frontier points carry their concurrency label."
        return (f"{n_drawn} of {n} frontier points carry their concurrency label; {dropped} "
                f"{'was' if dropped == 1 else 'were'} left out because no spot beside the point was free of other "
                "labels and markers (their values are in the tables below).")

    def capacity_display(self) -> pd.DataFrame:
        return capacity_display(self.table, targets=self.targets)

    def fastest_display(self) -> pd.DataFrame:
        return fastest_display(self.ends, ttft_limit_s=self.ttft_limit_s)

    @property
    def fastest_prose(self) -> str:
        return describe_fastest_points(self.ends, ttft_limit_s=self.ttft_limit_s)

    @property
    def uncertain_note(self) -> str:
        uncertain = self.fronts[has_flag(self.fronts, "gpu-accounting-uncertain")]
        explain = ("`gpu-accounting-uncertain` marks disaggregated points whose per-GPU throughputs do not add up "
                   "under InferenceX's documented accounting (total = output per decode GPU × decode GPUs + input "
                   "per prefill GPU × prefill GPUs), so their GPU counts or per-GPU figures may be off.")
        if uncertain.empty:
            return "No frontier point carries `gpu-accounting-uncertain`. " + explain
        return (f"{len(uncertain)} frontier point{'s carry' if len(uncertain) > 1 else ' carries'} "
                "`gpu-accounting-uncertain`: "
                + ", ".join(f"{esc(r.hardware)} {esc(r.precision)} {esc(r.scope)} at concurrency "
                            f"{r.concurrency:.0f}" for r in uncertain.itertuples()) + ". " + explain)

    # --- cost and energy -----------------------------------------------------------------------------------
    def cost_display(self) -> pd.DataFrame:
        table = self.efficiency.get("usd_per_mtok", pd.DataFrame())
        if table.empty:
            return pd.DataFrame()
        out = pd.DataFrame({"group": table["label"],
                            "$/GPU-hour": [f"${p:.2f}" for p in table["usd_per_gpu_hour"]]})
        cap = self.table.set_index("label")
        for t in self.levels:
            col = frontier.target_column(t)
            out[f"tok/s/GPU at {t:g}"] = [capacity_cell(*cap.loc[lab, [col, frontier.reading_column(t),
                                                                        frontier.lower_bound_column(t),
                                                                        frontier.gap_column(t)]])
                                          + spec_mark(cap.loc[lab].get(frontier.spec_decode_column(t), ""))
                                          if lab in cap.index and col in cap else MISSING for lab in table["label"]]
            out[f"$/M output tokens at {t:g} tok/s/user"] = [c + spec_mark(sd) for c, sd in
                                                             zip(_cells(table, "usd_per_mtok", t), _spec_at(table, t))]
        return out

    def efficiency_long(self, metric: str) -> pd.DataFrame:
        """One row per group × efficiency level: ``label``, ``level``, ``value``, ``reading``, ``bound`` (for the
        dot chart)."""
        table = self.efficiency.get(metric, pd.DataFrame())
        rows = []
        for _, r in table.iterrows():
            for t in self.levels:
                rows.append({"label": r["label"], "level": float(t), "value": r[frontier.metric_column(metric, t)],
                             "reading": r[frontier.reading_column(t)],
                             "bound": r[frontier.metric_bound_column(metric, t)]})
        return pd.DataFrame(rows, columns=["label", "level", "value", "reading", "bound"])

    @property
    def cost_figure_title(self) -> str:
        return (f"{self.what}: $ per million output tokens at equal tok/s/user "
                f"(price per GPU-hour × {self.denominator} GPUs; lower is better)")

    @property
    def price_caption(self) -> str:
        """Markdown: the prices every cost figure used (value, basis, source), and the hardware without one."""
        used = [cost.price_for(self.prices, h) for h in self.hardware]
        used = [p for p in used if p is not None]
        lines = []
        if used:
            lines.append("Prices used ($ per GPU-hour; × GPUs ÷ output tokens per hour gives $ per output token):")
            lines += [f"- {esc(p.hardware)}: ${p.usd_per_gpu_hour:.2f} per GPU-hour — {esc(p.basis)}"
                      + (f", {esc(p.date)}" if p.date else "") + f"; source: {esc(p.source)}" for p in used]
        if self.no_price:
            lines.append(f"\n**No price for {_names(self.no_price)}**, so no cost figure for "
                         f"{'it' if len(self.no_price) == 1 else 'them'}; nothing is guessed from a similar part "
                         "(set the report parameter `prices`, e.g. `{\"MI355X\": 2.10}`, to add one).")
        return dollars_md("\n".join(lines))

    @property
    def cost_intro(self) -> str:
        return dollars_md(
                f"$ per million output tokens = price per GPU-hour × GPUs ÷ (output tok/s × 3600) × 10⁶, with GPUs "
                f"counted as **{frontier.DENOMINATOR_TEXT[self.denominator]}**"
                + (" — prefill GPUs cost money too, so this understates the cost of disaggregated deployments"
                   if self.denominator == "decode" else "")
                + ". The cost frontier is the lower envelope (nobody both faster per user and cheaper); with one "
                "price per hardware it is the tok/s/GPU frontier turned upside down, so each cell is the price over "
                "the tok/s/GPU next to it. **≤ $X (ceiling)**: the group was only measured faster than this level; "
                "its slowest point already costs X, so the level costs at most that.")

    def energy_display(self) -> pd.DataFrame:
        j = self.efficiency.get("j_per_output_token", pd.DataFrame())
        mw = self.efficiency.get("tok_s_per_mw", pd.DataFrame())
        if j.empty:
            return pd.DataFrame()
        counts = self.table.set_index("label")["n_points"]
        out = pd.DataFrame({"group": j["label"],
                            "points with power": [f"{n} of {counts.get(lab, 0)}"
                                                  for lab, n in zip(j["label"], j["n_points"])]})
        mw = mw.set_index("label").loc[j["label"]].reset_index()
        for t in self.levels:
            out[f"J/output token at {t:g} tok/s/user"] = _cells(j, "j_per_output_token", t)
        for t in self.levels:
            out[f"output tok/s per MW at {t:g} tok/s/user"] = _cells(mw, "tok_s_per_mw", t)
        return out

    @property
    def energy_caption(self) -> str:
        both = sorted(set(self.power_hardware) - set(self.no_price))
        text = (f"**{cost.POWER_NOTE}.** Measured on {self.n_with_power} of {len(self.data)} points"
                + (f" ({_names(self.power_hardware)} only)" if self.power_hardware else "")
                + "; every other group has no energy figure, and none is estimated. Each group's energy frontier "
                "uses only its points with power, so it can differ from the tok/s/GPU frontier above. J/output "
                "token = GPU power × GPUs ÷ output tok/s; tok/s per MW = 10⁶ ÷ J/token. "
                + ("With all GPUs counted, a disaggregated point's prefill GPUs' power is included; InferenceX's own "
                   "`joules_per_output_token` counts the decode GPUs only (the `decode` denominator reproduces it)."
                   if self.denominator == "all" else
                   "With decode GPUs only, a disaggregated point's J/token is InferenceX's `joules_per_output_token` "
                   "(decode GPUs' power only; prefill power is left out)."))
        if self.power_hardware and not both:
            text += (" No hardware here has both measured power and a price, so energy and cost cannot be set side "
                     "by side for one part.")
        return text

    # --- numbers for tests and the index ------------------------------------------------------------------
    def _per_label(self, table: pd.DataFrame, column) -> dict:
        return {r["label"]: {f"{t:g}": r[column(t)] for t in self.levels} for _, r in table.iterrows()}

    def results(self) -> dict:
        usd = self.efficiency.get("usd_per_mtok", pd.DataFrame())
        jt = self.efficiency.get("j_per_output_token", pd.DataFrame())
        mw = self.efficiency.get("tok_s_per_mw", pd.DataFrame())
        t = self.table
        return {
            "title": self.title,
            "model": self.model,
            "by": list(self.by),
            "n_published_points": self.n_published,
            "hardware": self.hardware,
            "isl": self.isl,
            "osl": self.osl,
            "headline": self.headline_text,
            "prose": self.prose,
            "denominator": self.denominator,
            "targets": list(self.targets),
            "ttft_limit_s": self.ttft_limit_s,
            "groups": t["label"].tolist(),
            "n_points": len(self.data),
            "n_frontier_points": len(self.fronts),
            "n_frontier_over_ttft_limit": int(t["n_over_ttft_limit"].sum()),
            "capacity": {r["label"]: {f"{x:g}": r[frontier.target_column(x)] for x in self.targets}
                         for _, r in t.iterrows()},
            "capacity_reading": {r["label"]: {f"{x:g}": r[frontier.reading_column(x)] for x in self.targets}
                                 for _, r in t.iterrows()},
            "capacity_lower_bound": {r["label"]: {f"{x:g}": r[frontier.lower_bound_column(x)] for x in self.targets}
                                     for _, r in t.iterrows()},
            "capacity_spec_decode": {r["label"]: {f"{x:g}": r[frontier.spec_decode_column(x)] for x in self.targets}
                                     for _, r in t.iterrows()},
            "capacity_acceptance": {r["label"]: {f"{x:g}": r[frontier.acceptance_column(x)] for x in self.targets}
                                    for _, r in t.iterrows()},
            "capacity_source_kind": {r["label"]: {f"{x:g}": r[frontier.source_kind_column(x)]
                                                  for x in self.targets} for _, r in t.iterrows()},
            "capacity_interval": {r["label"]: {f"{x:g}": {k: r[c] for k, c in frontier.interval_columns(x).items()}
                                               for x in self.targets} for _, r in t.iterrows()},
            "mixed_forced_measured": {r["label"]: bool(r["mixed_forced_measured"]) for _, r in t.iterrows()},
            "n_gpus_range": {r["label"]: [r["n_gpus_min"], r["n_gpus_max"]] for _, r in t.iterrows()},
            "fastest_point": {r["label"]: {"tok_s_per_user": r["fastest_tok_s_per_user"],
                                           "tok_s_per_gpu": r["fastest_tok_s_per_gpu"],
                                           "concurrency": r["fastest_concurrency"],
                                           "n_gpus": r["fastest_n_gpus"],
                                           "ttft_ms_p50": r["fastest_ttft_ms_p50"],
                                           "user_lo": r["fastest_user_lo"], "user_hi": r["fastest_user_hi"],
                                           "n_requests": r["fastest_n_requests"],
                                           "n_requests_source": r["fastest_n_requests_source"],
                                           "acceptance": r["fastest_acceptance"],
                                           "source_kind": r["fastest_source_kind"],
                                           "source_url": r["fastest_source_url"]}
                              for _, r in t.iterrows()},
            "fastest_share_of_capacity": dict(zip(self.ends["label"], self.ends["fastest_share_of_capacity"])),
            "fastest_points_prose": self.fastest_prose,
            "efficiency_levels": list(self.levels),
            "usd_per_mtok": self._per_label(usd, lambda x: frontier.metric_column("usd_per_mtok", x)),
            "usd_per_mtok_reading": self._per_label(usd, frontier.reading_column),
            "usd_per_mtok_ceiling": self._per_label(usd, lambda x: frontier.metric_bound_column("usd_per_mtok", x)),
            "j_per_output_token": self._per_label(jt, lambda x: frontier.metric_column("j_per_output_token", x)),
            "j_per_output_token_reading": self._per_label(jt, frontier.reading_column),
            "tok_s_per_mw": self._per_label(mw, lambda x: frontier.metric_column("tok_s_per_mw", x)),
            "tok_s_per_mw_floor": self._per_label(mw, lambda x: frontier.metric_bound_column("tok_s_per_mw", x)),
            "power_scope": cost.POWER_SCOPE,
            "n_points_with_power": self.n_with_power,
            "prices_used": {h: p.as_dict() for h in self.hardware if (p := cost.price_for(self.prices, h))},
            "no_price": self.no_price,
        }


def _by(model, isl, osl) -> list[str]:
    """The grouping of a page: hardware × precision × scope × workload, plus the model when the page holds several
    and the lengths when it does not fix them (a frontier never spans two workloads or two length pairs)."""
    by = ([] if isinstance(model, str) else ["model"]) + list(frontier.REPORT_BY)
    return by + ([] if isl is not None and osl is not None else ["isl", "osl"])


def rows_read(points: pd.DataFrame, *, model: str | Sequence[str] | None = None, isl: float | None = None,
              osl: float | None = None, source_format: str | None = "inferencex-api") -> pd.DataFrame:
    """The rows this page reads: one model (or several) and length pair (None: every length) of ``source_format``
    (the report runner hashes the same rows for the page's cache key)."""
    if model is None or isinstance(model, str):
        return frontier.select(points, model=model, isl=isl, osl=osl, source_format=source_format)
    sel = frontier.select(points, isl=isl, osl=osl, source_format=source_format)
    return sel[sel["model"].isin(list(model))]


def build(points: pd.DataFrame, *, model: str | Sequence[str], isl: float | None, osl: float | None,
          targets: Sequence[float] = (50, 100, 200),
          denominator: str = "all", source_format: str | None = "inferencex-api",
          ttft_limit_s: float = frontier.TTFT_LIMIT_S, ttft_max_ms: float | None = None,
          levels: Sequence[float] = EFFICIENCY_LEVELS, prices: dict | None = None,
          prices_path: str | None = None) -> FrontierPage:
    """The frontier page for one model (or a list: one frontier per model) and length pair of the points table
    (``isl``/``osl`` None: every length pair and workload, each its own frontier). ``prices`` (``{hardware: usd}``
    or ``{hardware: {usd_per_gpu_hour, basis, source, date}}``) and ``prices_path`` (a CSV like
    ``data/specs/prices.csv``) add to or override the shipped prices."""
    if not isinstance(model, str):
        model = list(model)
    selected = rows_read(points, model=model, isl=isl, osl=osl, source_format=source_format)
    by = _by(model, isl, osl)
    data, fronts, table = frontier.report_tables(selected, targets=targets, denominator=denominator, by=by,
                                                 ttft_limit_s=ttft_limit_s, ttft_max_ms=ttft_max_ms)
    if table.empty:
        raise ValueError(f"no usable points for {model} isl={isl} osl={osl} format={source_format}")
    price_table = cost.load_prices(extra=prices_path, overrides=prices)
    efficiency = efficiency_tables(selected, levels=levels, denominator=denominator, prices=price_table, by=by,
                                   ttft_max_ms=ttft_max_ms)
    return FrontierPage(model=model, isl=None if isl is None else float(isl), osl=None if osl is None else float(osl),
                        targets=list(targets), denominator=denominator,
                        source_format=source_format, ttft_limit_s=ttft_limit_s, ttft_max_ms=ttft_max_ms,
                        levels=list(levels), points=selected, data=data, fronts=fronts, table=table,
                        ends=frontier.fastest_points(table, ttft_limit_s=ttft_limit_s), prices=price_table,
                        efficiency=efficiency, by=by)
