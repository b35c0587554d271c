"""The ``40-history`` report: InferenceX results over time and the changes beyond run-to-run noise (this project's
own runs are the ``41-suite-history`` report: :mod:`analysis.pages.suite_history`).

:func:`build` computes everything once; the notebook only displays what the page object returns. Every string
that comes from the data (configuration names, images, runs, report keys) passes through :func:`text.esc`
before it reaches Markdown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from analysis import history, text
from analysis.history_words import change_interval_text, conflicts_text, differences_text, noise_text

TITLE = "Results over time: InferenceX re-runs and the changes beyond noise"
N_LARGEST = 10


@dataclass
class HistoryPage:
    series: pd.DataFrame
    noise: dict
    changes: pd.DataFrame
    pairs: pd.DataFrame
    model: str | None = None
    levels: Sequence[float] = field(default_factory=lambda: list(history.LEVELS))
    conflicts: pd.DataFrame | None = None  # records history.conflicts found: named in the headline
    # dated models none of whose configurations was measured on two dates (the published DeepSeek V4 tables)
    without_history: tuple = ()

    # --- what the page is about ------------------------------------------------------------------------
    @property
    def models(self) -> list[str]:
        return sorted(self.series["model"].unique()) if len(self.series) else []

    @property
    def dates(self) -> tuple[str | None, str | None]:
        if self.series.empty:
            return None, None
        return self.series["date"].min(), self.series["date"].max()

    def improvements(self, n: int = N_LARGEST) -> pd.DataFrame:
        return history.largest(self.changes, "improvement", n)

    def regressions(self, n: int = N_LARGEST) -> pd.DataFrame:
        return history.largest(self.changes, "regression", n)

    # --- sentences --------------------------------------------------------------------------------------
    def _change_sentence(self, row) -> str:
        back = f", back to within noise on {text.esc(row['back_on'])}" if isinstance(row.get("back_on"), str) else ""
        if isinstance(row.get("recovers"), str):
            back += f", taking back a change the other way after {text.esc(row['recovers'])}"
        first = " (the first date of this series)" if row.get("first_date") is True else ""
        return (f"**{text.esc(row['group'])}**, {text.esc(row['metric'])}: {text.num(row['before'])} on "
                f"{text.esc(row['date_before'])}{first} → {text.num(row['after'])} on {text.esc(row['date_after'])} "
                f"(×{row['ratio']:.2f}, {self._interval(row)}{self._band(row)}){back}; what differs: "
                f"{text.esc('; '.join(differences_text(row['differs'])))}")

    @staticmethod
    def _interval(row) -> str:
        """The change's own 95% interval (:func:`analysis.history_words.change_interval_text`)."""
        return change_interval_text(row.get("ratio_lo", math.nan), row.get("ratio_hi", math.nan),
                                    row.get("verdict", "unknown"), row.get("interval_basis", ""))

    def _band(self, row) -> str:
        """", outside the run-to-run band ÷1.67–×1.67": the noise interval a change of ×1 would have."""
        n = self.noise.get("user" if str(row.get("metric", "")).startswith("tok/s/user") else "gpu")
        if n is None or not math.isfinite(n.threshold):
            return ""
        r = n.threshold_ratio
        return f", outside the run-to-run band ÷{r:.2f}–×{r:.2f}"

    def headline(self) -> str:
        """The lead paragraph (after any conflicting records, :func:`analysis.history.conflicts`)."""
        said = text.esc(conflicts_text(self.conflicts))
        alone = ("" if not self.without_history else
                 f" Dated, but no configuration measured on two dates, so no history yet: "
                 f"{text.esc(', '.join(self.without_history))}.")
        return (said + ". " if said else "") + self._headline() + alone

    def _headline(self) -> str:
        """The lead paragraph: largest improvement and regression with dates, values and what changed."""
        if self.series.empty:
            return "No configuration in the points table was measured on two or more dates, so nothing can be " \
                   "compared over time."
        first, last = self.dates
        n_groups = self.series["group"].nunique()
        imp = history.largest(self.changes, "improvement", 1, lasting=True)
        reg = history.largest(self.changes, "regression", 1, lasting=True)
        dip = history.largest(self.changes[self.changes["back_on"].notna()], "regression", 1)
        gpu = self.noise["gpu"]
        beyond = self.changes[self.changes["verdict"] != "within-noise"] if len(self.changes) else self.changes
        n_noise = len(self.changes) - len(beyond)
        parts = [f"{n_groups} configurations of {text.esc(', '.join(self.models))} were measured on two or more "
                 f"dates between {text.esc(first)} and {text.esc(last)}; between neighbouring dates "
                 f"{int((beyond['kind'] == 'improvement').sum())} values rose and "
                 f"{int((beyond['kind'] == 'regression').sum())} fell by more than the noise threshold "
                 f"(tok/s/GPU: beyond ×{gpu.threshold_ratio:.3f}, {gpu.k_sigma:g}σ of "
                 + (f"the {gpu.n_pairs} same-date repeats, which spread more than neighbouring dates do"
                    if gpu.basis.startswith("repeats on one date (few") else f"{gpu.n_pairs} pairs") + ")"
                 + self._repeat_caveat() + ", each with a 95% interval from both dates' points and the "
                 "run-to-run noise that excludes ×1"
                 + (f"; {n_noise} more pass the threshold but their interval includes ×1, so they are within "
                    "noise, neither rise nor fall" if n_noise else "")
                 + ". No image is recorded for most dates, so a change names no software "
                 "version: a step between two dates may be the harness or the configuration as well as the stack."]
        if len(imp):
            parts.append("Largest lasting improvement: " + self._change_sentence(imp.iloc[0]) + ".")
        if len(reg):
            parts.append("Largest lasting regression: " + self._change_sentence(reg.iloc[0]) + ".")
        if len(dip):
            parts.append("Largest drop undone on the next date: " + self._change_sentence(dip.iloc[0]) + ".")
        return " ".join(parts)

    def threshold_text(self) -> str:
        """How the noise threshold was set, from the data."""
        same_day = int(self.pairs["same_day"].sum()) if len(self.pairs) else 0
        quiet = int((~self.pairs["same_day"] & self.pairs["quiet"]).sum()) if len(self.pairs) else 0
        lines = [f"- {text.esc(noise_text(n))}" for n in self.noise.values()]
        return (
            "**How the threshold was set.** A change is a ratio between neighbouring dates of one configuration "
            "larger than the run-to-run noise the data itself shows. The preferred evidence of noise is repeats "
            f"on one date (same configuration and concurrency, two runs): the data has {same_day}. Next are "
            "neighbouring dates whose recorded image is unchanged: the data has "
            f"{quiet} (the history rows record no image). With fewer than {history.MIN_QUIET_PAIRS} of either, the "
            "spread comes from all neighbouring dates of one configuration at one concurrency; its robust form "
            "(1.4826 × the median absolute log ratio) is set by the many re-runs that changed nothing, not by the "
            f"few that did. A change must exceed {history.K_SIGMA:g} times that spread.\n\n" + "\n".join(lines)
            + self._noise_check())

    def _abs_log_ratios(self, quantity: str, *, same_day: bool) -> pd.Series:
        """|log(after / before)| of the same-date repeats (``same_day``) or of the neighbouring-date pairs."""
        p = self.pairs
        if not len(p):
            return pd.Series(dtype=float)
        return p.loc[p["same_day"] == same_day, f"log_{quantity}"].abs().dropna()

    def _repeat_caveat(self) -> str:
        """When repeats on one date differ by more than the threshold, the count of changes says less than it seems."""
        rep = self._abs_log_ratios("gpu", same_day=True)
        n, med = len(rep), (math.expm1(rep.median()) if len(rep) else math.nan)
        gpu = self.noise["gpu"]
        if n and math.isfinite(med) and math.isfinite(gpu.threshold) and math.log1p(med) > gpu.threshold:
            return (f"; but the {n} repeats on one date already differ by a median {med:.0%} in tok/s/GPU, so many "
                    "of these may be run-to-run noise: the lasting changes below are the ones the next date "
                    "confirmed")
        return ""

    def _noise_check(self) -> str:
        """The same-date repeats' own differences beside the threshold, and how many neighbouring pairs pass it."""
        if not len(self.pairs):
            return ""
        parts = []
        for quantity, word in (("user", "tok/s/user"), ("gpu", "tok/s/GPU")):
            n = self.noise.get(quantity)
            if n is None or not math.isfinite(n.threshold):
                continue
            rep = self._abs_log_ratios(quantity, same_day=True)
            nb = self._abs_log_ratios(quantity, same_day=False)
            beyond = int((nb > n.threshold).sum())
            rep_text = (f"the {len(rep)} same-date repeats differ by a median {math.expm1(rep.median()):.1%} "
                        f"(largest {math.expm1(rep.max()):.1%})" if len(rep) else "no same-date repeats")
            parts.append(f"- {word}: {rep_text}, against a threshold of {math.expm1(n.threshold):.1%}; "
                         f"{beyond} of {len(nb)} neighbouring-date pairs ({beyond / max(len(nb), 1):.0%}) lie beyond "
                         "it.")
        if not parts:
            return ""
        return ("\n\n**Checking the threshold.** Repeats on one date are the direct measure of run-to-run noise; "
                "where they differ by more than the threshold, some flagged changes are noise:\n\n" + "\n".join(parts))

    # --- tables -------------------------------------------------------------------------------------------
    @staticmethod
    def change_display(table: pd.DataFrame) -> pd.DataFrame:
        cols = ["group", "metric", "date_before", "date_after", "before", "after", "ratio", "interval", "held_on",
                "back_on", "recovers", "differs"]
        if table.empty:
            return pd.DataFrame(columns=cols)
        shown = table.assign(interval=[HistoryPage._interval(r) for r in table.to_dict("records")])[cols].copy()
        shown["differs"] = shown["differs"].map(lambda d: "; ".join(differences_text(d)))
        shown["ratio"] = shown["ratio"].map(lambda r: f"×{r:.2f}")
        return shown.rename(columns={"held_on": "confirmed on", "back_on": "back within noise on",
                                     "recovers": "back to the level of"})

    def overview(self) -> pd.DataFrame:
        """Per configuration: dates measured, first and last, and the two ends first → last."""
        cols = ["group", "n_dates", "first_date", "last_date", "low_end", "low_end_first",
                "low_end_last", "capacity_end", "capacity_first", "capacity_last", "n_changes"]
        if self.series.empty:
            return pd.DataFrame(columns=cols)
        rows = []
        n_changes = self.changes.groupby("group").size() if len(self.changes) else pd.Series(dtype=int)
        for group, s in self.series.groupby("group", sort=True):
            row = {"group": group, "n_dates": s["date"].nunique(), "first_date": s["date"].min(),
                   "last_date": s["date"].max()}
            for role, prefix in (("low-concurrency end", "low_end"), ("capacity end", "capacity")):
                end = s[s["role"] == role].groupby("date")["value"].median()
                metric = s.loc[s["role"] == role, "metric"]
                row[f"{prefix}_end" if prefix == "capacity" else "low_end"] = \
                    metric.iloc[0] if len(metric) else None
                row[f"{prefix}_first"] = end.iloc[0] if len(end) else math.nan
                row[f"{prefix}_last"] = end.iloc[-1] if len(end) else math.nan
            row["n_changes"] = int(n_changes.get(group, 0))
            rows.append(row)
        return pd.DataFrame(rows, columns=cols).sort_values(["n_dates", "group"], ascending=[False, True])

    def figure_data(self, model: str) -> pd.DataFrame:
        """The two ends over time for one model, one row per group × date × role (median of repeats)."""
        s = self.series[(self.series["model"] == model) & self.series["role"].isin(["low-concurrency end", "capacity end"])]
        if s.empty:
            return s
        group_cols = ["group", "hardware", "precision", "scope", "lengths", "role", "metric", "date"]
        return s.groupby(group_cols, as_index=False)["value"].median()

    def figure_changes(self, model: str) -> pd.DataFrame:
        """Changes at the two ends for one model (where the figure marks them)."""
        c = self.changes
        return c[(c["model"] == model) & c["role"].isin(["low-concurrency end", "capacity end"])]

    # --- numbers handed back ---------------------------------------------------------------------------
    @staticmethod
    def _records(table: pd.DataFrame) -> list[dict]:
        cols = ["group", "metric", "date_before", "date_after", "before", "after", "ratio", "ratio_lo", "ratio_hi",
                "verdict", "kind", "differs", "held_on", "back_on", "recovers", "source_before", "source_after"]
        return [{**{k: r[k] for k in cols}, "differs": differences_text(r["differs"])}
                for r in table.to_dict("records")]

    def results(self) -> dict:
        first, last = self.dates
        return {
            "title": TITLE,
            "model": self.model if self.model else ", ".join(self.models),
            "models": self.models,
            "headline": self.headline(),
            "first_date": first,
            "last_date": last,
            "n_groups": int(self.series["group"].nunique()) if len(self.series) else 0,
            "n_values": len(self.series),
            "n_improvements": int((self.changes["kind"] == "improvement").sum()),
            "n_regressions": int((self.changes["kind"] == "regression").sum()),
            "n_within_noise": int((self.changes["verdict"] == "within-noise").sum()) if len(self.changes) else 0,
            "threshold": {q: {"basis": n.basis, "n_pairs": n.n_pairs, "sigma": n.sigma, "k_sigma": n.k_sigma,
                              "threshold_log": n.threshold, "threshold_ratio": n.threshold_ratio}
                          for q, n in self.noise.items()},
            "n_same_day_pairs": int(self.pairs["same_day"].sum()) if len(self.pairs) else 0,
            "largest_improvements": self._records(self.improvements()),
            "largest_regressions": self._records(self.regressions()),
            "largest_lasting_improvements": self._records(history.largest(self.changes, "improvement", N_LARGEST,
                                                                          lasting=True)),
            "largest_lasting_regressions": self._records(history.largest(self.changes, "regression", N_LARGEST,
                                                                         lasting=True)),
        }


def rows_read(points: pd.DataFrame, *, model: str | None = None) -> pd.DataFrame:
    """The rows this page reads: the dated rows (of ``model`` when given); :func:`analysis.history.rows_read`."""
    return history.rows_read(points, model=model)


def build(points: pd.DataFrame, *, model: str | None = None, levels: Sequence[float] = history.LEVELS) -> HistoryPage:
    """The page for ``points`` (optionally one ``model``)."""
    points = rows_read(points, model=model)  # the rows this page reads (and its cache key hashes)
    table = history.series(points, levels=levels)
    noise = history.noise(points)
    found = history.changes(points, levels=levels, noise_by=noise, table=table)
    with_series = set(table["model"]) if len(table) else set()
    dated = set(history.dated_points(points)["model"].dropna().astype(str)) if len(points) else set()
    return HistoryPage(series=table, noise=noise, changes=found, pairs=history.neighbour_pairs(points), model=model,
                       levels=list(levels), conflicts=history.conflicts(points),
                       without_history=tuple(sorted(dated - with_series)))
