"""Which rows of the points table a report reads, so its cache key hashes those rows and not the whole file.

A report entry in ``suite.yml`` may name a view (``points: frontier``). The view is the same function the page
builder reads its rows through (``frontier.select``, ``claims.relevant_points``, …), given the notebook's parameters
(its defaults, then the suite's values); the runner hashes the rows it returns. A changed raw file then re-executes
only the reports whose views contain its points: a new Kimi-K2.5 sample reruns the inventory, the batch-scaling fits,
the history and the two claims about that model, not the DeepSeek-R1 frontier or the other cards.
``tests/test_views.py`` checks that every view's page gives the same numbers from its view as from the whole table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def _frontier(points, p):
    from analysis import frontier

    return frontier.select(points, model=p.get("model"), isl=p.get("isl"), osl=p.get("osl"),
                           source_format=p.get("source_format"))


def _precision_scope(points, p):
    from analysis.pages import precision_scope

    return precision_scope.rows_read(points, model=p.get("model"), isl=p.get("isl"), osl=p.get("osl"),
                                     source_format=p.get("source_format"))


def _history(points, p):
    from analysis import history

    return history.rows_read(points, model=p.get("model"))


def _claim(points, p):
    from analysis import claims

    return claims.relevant_points(claims.load_claim(p.get("claim_file") or p["claim"]), points)


VIEWS: dict[str, Callable] = {"frontier": _frontier, "precision-scope": _precision_scope, "history": _history,
                              "claim": _claim}


def check_view(name: str, where: str = "") -> str:
    if name not in VIEWS:
        raise ValueError(f"{where}points: {name!r} is not a view (one of {', '.join(VIEWS)})")
    return name


class ViewHasher:
    """Content hashes of the rows each view selects, with the table read and its rows hashed once per file."""

    def __init__(self):
        self._tables: dict[Path, tuple[pd.DataFrame, object]] = {}

    def _table(self, path: Path):
        path = Path(path)
        if path not in self._tables:
            from analysis import data

            points = data.load_points(path)
            self._tables[path] = (points, row_hashes(points))
        return self._tables[path]

    def digest(self, points_path: Path, view: str, params: dict) -> str:
        """``view:<hash>`` of the rows ``view`` selects from the table at ``points_path`` (``missing`` if absent)."""
        if not Path(points_path).is_file():
            return "missing"
        points, hashes = self._table(points_path)
        rows = VIEWS[view](points, params)
        h = hashlib.sha256("\0".join(map(str, points.columns)).encode("utf-8", "surrogateescape"))
        h.update(hashes.loc[rows.index].to_numpy().tobytes())
        return f"view:{h.hexdigest()}"


def row_hashes(points: pd.DataFrame) -> pd.Series:
    """One 64-bit hash per row over every column (lists and arrays hashed by their text)."""
    import pandas as pd

    frame = points.copy()
    for col in frame.columns:
        if frame[col].dtype == object:
            frame[col] = frame[col].map(lambda v: v if v is None or isinstance(v, str) else repr(v))
    return pd.util.hash_pandas_object(frame, index=False)
