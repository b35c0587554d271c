"""The ``41-suite-history`` report: this project's own headline numbers from one ``perfclaims report`` run to the next.

Every run records the numbers of the reports it executed in the suite-history store (``reports/history/``, see
:mod:`analysis.report.history`); this page reads the store alone, so the runner runs it after a run has recorded
its numbers, and re-executes it only when the store changed. A number that moved between two consecutive runs of
its report is attributed to new inputs, new code, both, or neither (:func:`analysis.history.suite_changes`).
Data-derived text passes through :func:`text.esc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import history, text

TITLE = "This project's own numbers over time: what moved between runs, and why"
CAUSES = {
    "inputs": "new inputs (inputs hash changed, same code)",
    "code": "new code (version or commit changed, same inputs)",
    "inputs and code": "both inputs and code changed, so the cause cannot be separated",
    "neither": "same inputs and same code: not reproducible, worth a look",
}


@dataclass
class SuiteHistoryPage:
    suite: pd.DataFrame
    runs: pd.DataFrame
    moves: pd.DataFrame
    store: Path

    def text(self) -> str:
        if self.suite.empty:
            return ("No earlier runs: the suite-history store (reports/history/) holds no part files "
                    "yet. Each `perfclaims report` run adds the key numbers of the reports it executed there; from "
                    "the second run on, this page shows how they moved.")
        n_runs = self.suite["run_id"].nunique()
        first, last = text.esc(self.suite["run_date"].min()), text.esc(self.suite["run_date"].max())
        recorded = f"{n_runs} run{'s' if n_runs != 1 else ''} recorded ({first}{f' to {last}' if last != first else ''})"
        if n_runs == 1:
            return f"{recorded}: nothing to compare yet; from the next run that executes a report on, moves show here."
        if self.moves.empty:
            return f"{recorded}; no headline number moved between consecutive runs."
        counts = self.moves["cause"].value_counts()
        parts = [f"{int(counts[c])} from {said}" for c, said in CAUSES.items() if c in counts]
        return (f"{recorded}; {len(self.moves)} numbers moved between consecutive runs of their report: "
                + "; ".join(parts) + ".")

    def results(self) -> dict:
        return {
            "title": TITLE,
            "headline": self.text(),
            "n_runs": int(self.suite["run_id"].nunique()) if len(self.suite) else 0,
            "n_numbers": len(self.suite),
            "moves": self.moves.to_dict("records"),
            "causes": self.moves["cause"].value_counts().to_dict() if len(self.moves) else {},
            "text": self.text(),
        }


def rows_read(points: pd.DataFrame) -> pd.DataFrame:
    """No row: this page reads the suite-history store, not the points table."""
    return points.iloc[0:0]


def build(points: pd.DataFrame | None = None, *, reports_dir: str | Path) -> SuiteHistoryPage:
    """The page for the suite-history store under ``reports_dir`` (``reports_dir/history``); ``points`` is not
    read (the page contract's first argument)."""
    store = Path(reports_dir) / "history"
    suite = history.load_suite_history(store)
    return SuiteHistoryPage(suite=suite, runs=history.runs(suite), moves=history.suite_changes(suite), store=store)
