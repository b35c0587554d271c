"""A CSV whose header uses the points table's own column names: results typed in from papers, posts and slides.

The header must name ``model`` and at least one measured column (a latency, a throughput, tok/s/user or tok/s/GPU);
units are the ones the column names state (ms, tok/s). Lines starting with ``#`` are comments (cite the source
there). A header column that is not a points-table column rejects the file, naming the columns, because a typo
would silently drop a number. One row is one point; a bad value quarantines that row only (file, line, field).
A ``tok_s_per_user`` without ``tok_s_per_user_def`` is the source's own figure (``tool-per-user``).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from analysis.ingest.base import Format, Quarantine, Sink
from analysis.schema import COLUMNS, LATENCY, THROUGHPUT

PRIORITY = 40
METRIC_COLUMNS = set(LATENCY) | set(THROUGHPUT) | {"tok_s_per_user", "tok_s_per_gpu", "power_w",
                                                   "joules_per_output_token"}
PIPELINE_COLUMNS = {"source_file", "source_line", "tool", "format"}  # set by ingest itself; ignored here


def _header(text: str) -> tuple[int, list[str]] | None:
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            cells = next(csv.reader([line]))
        except (csv.Error, StopIteration):
            return None
        return lineno, [c.strip().lower() for c in cells]
    return None


def _detect(path: Path, head: bytes) -> bool:
    text = head.decode("utf-8-sig", errors="replace")
    found = _header(text)
    if not found:
        return False
    names = set(found[1])
    return "model" in names and bool(names & METRIC_COLUMNS)


def _utf8_lines(data: bytes, sink: Sink) -> str:
    """The text of ``data`` line by line: a line that is not UTF-8 (one Latin-1 row typed in a spreadsheet) is
    quarantined with its line number and left empty, so the rest of the file is read and keeps its numbering."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    lines = []
    for lineno, raw in enumerate(data.splitlines(keepends=True), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            sink.bad(f"not UTF-8 text (byte {hex(raw[err.start])} at column {err.start + 1}); row not read",
                     line=lineno)
            lines.append("\n" if raw.endswith((b"\n", b"\r")) else "")
    return "".join(lines)


def _parse(path: Path, sink: Sink) -> None:
    text = _utf8_lines(path.read_bytes(), sink)
    found = _header(text)
    if not found:
        raise Quarantine("no CSV header line")
    header_line, names = found
    unknown = [n for n in names if n not in COLUMNS]
    if unknown:
        raise Quarantine(f"columns not in the points table: {', '.join(unknown)} "
                         "(use the points-table column names, units as the names state)",
                         line=header_line, field=unknown[0])
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise Quarantine(f"duplicate columns: {', '.join(dupes)}", line=header_line, field=dupes[0])
    lines = text.splitlines()
    body = "\n".join(lines[header_line:])
    reader = csv.reader(io.StringIO(body))
    for offset, cells in enumerate(reader):
        lineno = header_line + 1 + offset
        if not cells or not any(c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
            continue
        if len(cells) != len(names):
            sink.bad(f"{len(cells)} cells where the header has {len(names)}", line=lineno)
            continue
        row = {n: c.strip() for n, c in zip(names, cells) if c.strip() != "" and n not in PIPELINE_COLUMNS}
        if not row.get("model"):
            sink.bad("row without a model", line=lineno, field="model")
            continue
        row.setdefault("run_id", f"{path.stem}#{lineno}")
        if "tok_s_per_user" in row:
            row.setdefault("tok_s_per_user_def", "tool-per-user")
        elif "tpot_ms_p50" not in row:
            row.setdefault("tok_s_per_user_def", "unknown")
        sink.point(row, line=lineno)


FORMATS = [
    Format("generic-csv", "csv", _detect, _parse,
           "CSV whose header uses points-table column names: `model` plus at least one measured column "
           "(e.g. tpot_ms_p50, output_tok_s, tok_s_per_user); `#` lines are comments",
           "tests/data/formats/generic_csv/claims_typed_in.csv"),
]
