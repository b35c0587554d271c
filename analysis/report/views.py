"""Which rows of the points table a report reads, so its cache key hashes those rows and not the whole file.

Every report's notebook shows one page module (``notebooks/20-frontier.ipynb`` ↔ ``analysis/pages/frontier.py``,
named by the notebook, or by ``page:`` in ``suite.yml``), and every page module declares the rows it reads:
``rows_read(points, **params)``, the same function its ``build(points, **params)`` selects its rows with. The
runner calls it with the notebook's parameters (its defaults, then the suite's values) and hashes the rows it
returns. A changed raw file then re-executes only the reports whose pages read its points: a new Kimi-K2.5 sample
reruns the inventory, the batch-scaling fits, the history and the two claims about that model, not the DeepSeek-R1
frontier or the other cards. ``tests/test_views.py`` checks that every page gives the same numbers from its rows as
from the whole table, and that every page module keeps the contract.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

PAGES_DIR = Path(__file__).resolve().parents[1] / "pages"


# Pages that do not offer rows_read yet, and the rows they read meanwhile (none left: every page offers its own).
PENDING_ROWS_READ: dict[str, Callable] = {}


def page_of(notebook: str) -> str:
    """The page module a notebook shows: ``20-frontier`` -> ``frontier``, ``50-claim-card`` -> ``claim_card``."""
    return re.sub(r"^\d+-", "", notebook).replace("-", "_")


def has_page(name: str) -> bool:
    return (PAGES_DIR / f"{name}.py").is_file()


def check_page(name: str, where: str = "") -> str:
    """``name`` when ``analysis/pages/<name>.py`` exists, else a clear error naming the pages there are."""
    if not has_page(name):
        known = sorted(p.stem for p in PAGES_DIR.glob("*.py") if p.stem != "__init__")
        raise ValueError(f"{where}page {name!r} is not a module of analysis/pages (one of {', '.join(known)})")
    return name


def rows_function(page: str) -> Callable:
    """The page's ``rows_read`` (or its pending stand-in)."""
    module = importlib.import_module(f"analysis.pages.{page}")
    found = getattr(module, "rows_read", None) or PENDING_ROWS_READ.get(page)
    if found is None:
        raise ValueError(f"analysis/pages/{page}.py offers no rows_read(points, **params)")
    return found


def rows_read(page: str, points: pd.DataFrame, params: dict) -> pd.DataFrame:
    """The rows of ``points`` the page ``page`` reads with the notebook parameters ``params`` (those its
    ``rows_read`` names; the others, such as ``points_path``, are not about rows)."""
    fn = rows_function(page)
    names = inspect.signature(fn).parameters
    return fn(points, **{k: v for k, v in params.items() if k in names and k != "points"})


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
        """``view:<hash>`` of the rows the page ``view`` reads from the table at ``points_path`` (``missing`` if
        absent)."""
        if not Path(points_path).is_file():
            return "missing"
        points, hashes = self._table(points_path)
        rows = rows_read(view, points, params)
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
