"""The suite's own history: every run appends its reports' key numbers to ``reports/history/<run_id>.parquet``.

One new part file per run (written to a temporary sibling and renamed), never a rewrite, so two runs ending at once
cannot lose each other's rows; :func:`load_suite_history` reads the folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.report.results import flatten

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["run_id", "run_date", "report", "key", "value", "inputs_hash", "code_version", "commit"]
FOLDER = "history"


def history_rows(run_id: str, run_date: str, reports: dict[str, tuple[dict, str]], code_version: str,
                 commit: str) -> list[dict]:
    """Rows for ``reports`` = {slug: (results, inputs hash)}: one per number in the results, under a dotted key."""
    return [{"run_id": run_id, "run_date": run_date, "report": slug, "key": key, "value": value,
             "inputs_hash": inputs_hash, "code_version": code_version, "commit": commit}
            for slug, (results, inputs_hash) in reports.items() for key, value in flatten(results).items()]


def append_history(reports_dir: Path, rows: list[dict], run_id: str) -> Path | None:
    """Write ``rows`` as a new part file ``history/<run_id>.parquet``; nothing when there are no rows."""
    if not rows:
        return None
    import pandas as pd

    folder = Path(reports_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows, columns=COLUMNS).astype({"value": "float64"})
    path = folder / f"{run_id}.parquet"
    tmp = folder / f".{run_id}.parquet.tmp-{os.getpid()}"
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def load_suite_history(reports_dir: str | Path) -> pd.DataFrame:
    """Every run's key numbers, oldest run first (read by :func:`analysis.history.load_suite_history`, the one
    reader of the store, from ``reports_dir/history``)."""
    from analysis import history

    return history.load_suite_history(Path(reports_dir) / FOLDER)
