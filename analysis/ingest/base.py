"""What every format parser shares: the Format record, the Sink it writes to, and the quarantine errors.

A parser is a function ``parse(path, sink)``. It calls ``sink.point(row, line=...)`` for each benchmark point
(a dict in points-table column names, units already converted), ``sink.requests(rows)`` for per-request data,
and ``sink.bad(reason, line=..., field=...)`` for a record it must skip. Raising :class:`Quarantine` rejects the
whole file with its reason; any other exception is caught by the pipeline and quarantined too, so one bad file
never stops the others.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from analysis.schema import FieldError, as_number

HEAD_BYTES = 65536
MAX_REQUEST_PROBLEMS = 20  # quarantine rows per file for implausible requests; the rest are counted


class Quarantine(Exception):
    """The file (or one record) cannot be read; ``reason`` says why, ``line``/``field`` say where."""

    def __init__(self, reason: str, *, line: int | None = None, field: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.field = field


@dataclass
class Format:
    """One raw format: how it is detected from content and how it is parsed."""

    name: str
    tool: str
    detect: Callable[[Path, bytes], bool]
    parse: Callable[[Path, Sink], None]
    detected_by: str
    example: str = ""
    per_request: bool = False
    # True for a format whose rows name the benchmark tool that measured them (a published table): the row's ``tool``
    # is kept, and the format's own ``tool`` is only the fallback
    row_tool: bool = False


@dataclass
class Sink:
    """Collects what one file yields."""

    path: Path
    points: list[tuple[int | None, dict]] = field(default_factory=list)
    request_tables: list[Any] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)  # reader options from ingest(), e.g. {"itl_gaps": True}

    def point(self, row: dict, *, line: int | None = None) -> None:
        self.points.append((line, row))

    def requests(self, table):
        """Keep a per-request table (see ``analysis.ingest.requests_table``); returns it checked.

        Impossible rows (negative times, a first token after the last) are marked errored and reported here, so
        statistics a reader computes from the returned table leave them out. A reader must use the returned table.
        """
        from analysis.ingest.requests_table import SCHEMA, check_requests

        if not isinstance(table, pa.Table):
            table = pa.Table.from_pandas(table, schema=SCHEMA, preserve_index=False)
        table, problems = check_requests(table)
        for problem in problems[:MAX_REQUEST_PROBLEMS]:
            self.bad(problem["reason"], line=problem["line"], field=problem["field"])
        if len(problems) > MAX_REQUEST_PROBLEMS:
            self.bad(f"{len(problems) - MAX_REQUEST_PROBLEMS} more implausible requests (see requests.parquet, "
                     "error column)", field="requests")
        self.request_tables.append(table)
        return table

    def bad(self, reason: str, *, line: int | None = None, field: str | None = None) -> None:
        self.problems.append({"line": line, "field": field, "reason": reason})

    def note(self, text: str) -> None:
        """Why a readable file yields no point of its own (e.g. the same run is read from a sibling file)."""
        self.notes.append(text)

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


def in_words(err: BaseException) -> tuple[str, str | None]:
    """(reason, field) for any error met while reading one file or record: a sentence for users, not a traceback.

    Quarantine and FieldError keep their own words; Python's internal errors are named for what they mean in a log
    (a number too large, a value of the wrong kind, text that is not valid Unicode, nesting too deep).
    """
    if isinstance(err, Quarantine):
        return err.reason, err.field
    if isinstance(err, FieldError):
        return err.reason, err.field
    detail = str(err)
    detail = detail if len(detail) <= 120 else detail[:117] + "..."
    if isinstance(err, OverflowError):
        return "a number too large to represent", None
    if isinstance(err, RecursionError):
        return "nested too deeply to read", None
    if isinstance(err, UnicodeError):
        return f"text that is not valid Unicode ({detail})", None
    if isinstance(err, MemoryError):
        return "too large to read into memory", None
    if isinstance(err, (AttributeError, TypeError)):
        return f"unexpected structure: a value has the wrong kind (an object, list, text or number " \
               f"where another was expected; {type(err).__name__}: {detail})", None
    if isinstance(err, (KeyError, IndexError)):
        return f"unexpected structure: an expected entry is missing ({type(err).__name__}: {detail})", None
    if isinstance(err, OSError):
        return f"cannot read: {err.strerror or detail}", None
    return f"unreadable ({type(err).__name__}: {detail})", None


# --- small helpers parsers share -------------------------------------------------------------------
def num(value: Any, field: str, *, scale: float = 1.0) -> float:
    """A finite number (NaN when missing) times ``scale``; raises Quarantine naming the field."""
    try:
        x = as_number(value, field)
    except FieldError as err:
        raise Quarantine(err.reason, field=err.field) from None
    return x * scale


def first(mapping: dict, *keys: str, default=None):
    """Value of the first key present and not None."""
    for key in keys:
        if key in mapping and mapping[key] is not None:
            return mapping[key]
    return default


def model_from_id(model_id: Any) -> str | None:
    """Short model name from an id that may be a local snapshot path (``/models/models--org--name/snapshots/sha/``)."""
    if not model_id or not isinstance(model_id, str):
        return None
    m = re.search(r"models--([^/]+?)--([^/]+)", model_id)
    if m:
        return m.group(2)
    parts = [p for p in model_id.strip("/").split("/") if p]
    return parts[-1] if parts else None


def finite_or_nan(x: Any) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan
