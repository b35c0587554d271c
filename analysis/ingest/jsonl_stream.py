"""Streaming JSON lines into typed columns, so a 1 GB per-request log never sits in memory whole.

:func:`stream_jsonl` reads a file one line at a time, parses each with orjson, hands the object to a
format's ``extract`` function (which returns one tuple of column values, a word to count the record under — e.g.
``"warmup"`` — or raises :class:`LineError`), and flushes the tuples every ``batch_rows`` rows into pyarrow
record batches of fixed types. Memory is one batch of Python tuples plus the typed columns, never the parsed
file. Files above ``PARALLEL_MIN_BYTES`` are split at line boundaries across worker processes (the machine
has few cores, but orjson holds the GIL, so processes are the only way to use a second one); line numbers in
the result are always the file's own. A line orjson rejects is re-read with the standard library, which accepts
``NaN``/``Infinity``, so the quarantine can say which field held one instead of just "invalid JSON".

``skip_array=`` names one key whose value holds a large flat number array the caller does not need (AIPerf's
per-chunk gaps are ~95% of each line): the file is memory-mapped, the array is found with ``find`` and cut out
before orjson sees the line, and the extractor gets the array's element count instead of its values. The cut is
taken only when the skipped bytes are plainly a flat array of non-negative plain decimals (digits, dots, commas);
anything else — nesting, strings, ``NaN``/``Infinity``/``null``, a minus sign, an exponent — falls back to parsing
the whole line, so such a record is read (or quarantined) exactly as without the option.

:func:`read_json` is the whole-document counterpart for the small aggregate files, with the same kind of
errors (truncated, invalid at line/column, not UTF-8).
"""

from __future__ import annotations

import json
import math
import mmap
import os
import re
import struct
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from analysis.ingest.base import Quarantine
from analysis.text import whole

BATCH_ROWS = 8192
PARALLEL_MIN_BYTES = 64 << 20
# No record is longer than this (AIPerf's longest gap arrays are a few MB); a longer line is quarantined without
# being read whole: a crash or a full disk leaves a tail of NUL bytes that would otherwise be one 8 GB "line".
MAX_LINE_BYTES = 64 << 20
_PROBE = 4096  # bytes of an overlong line looked at to say what it holds
_CHUNK = 1 << 20
INF = math.inf
_LOADS = orjson.loads
_DECODE_ERROR = orjson.JSONDecodeError


class LineError(Exception):
    """One record cannot be used; ``reason`` says why, ``field`` names the key (dotted path)."""

    def __init__(self, reason: str, field: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.field = field


@dataclass
class StreamResult:
    """What one JSONL file yielded: typed rows, lines it could not use, and records counted but not kept."""

    table: pa.Table
    bad: list[dict] = field(default_factory=list)  # {"line", "field", "reason"}
    counts: dict[str, int] = field(default_factory=dict)
    lines: int = 0


# --- whole documents --------------------------------------------------------------------------------
def read_json(path: Path) -> Any:
    """Parse one JSON document; raises Quarantine saying truncated / invalid at line:column / not UTF-8.

    The standard library is used on purpose: it keeps integers beyond 64 bits (MLPerf seeds) exact and reads
    ``NaN`` (LLMPerf writes it for a one-sample stddev) so the reader can name the field that holds one.
    """
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    return loads_document(text)


def loads_document(text: str) -> Any:
    if "\\u" in text:
        text = replace_lone_surrogates(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise Quarantine(json_error_reason(err, text), line=err.lineno) from None
    except RecursionError:
        raise Quarantine("invalid JSON: nested too deeply") from None
    except ValueError as err:  # an integer beyond Python's 4300-digit conversion limit
        raise Quarantine(f"unreadable JSON: {err}") from None


# A \uD800-\uDFFF escape that is not half of a surrogate pair: valid JSON, but no UTF-8 text can hold it.
LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def replace_lone_surrogates(text: str) -> str:
    """JSON text with lone surrogate escapes replaced by U+FFFD, so every parsed string is valid Unicode."""
    return LONE_SURROGATE_ESCAPE.sub(r"\\ufffd", text)


def _truncated(err: json.JSONDecodeError, text: str) -> bool:
    # "Unterminated string" can only mean the input ended inside a string: raw newlines are invalid in JSON strings
    return err.pos >= len(text.rstrip()) or err.msg.startswith("Unterminated string")


def json_error_reason(err: json.JSONDecodeError, text: str) -> str:
    """What the stdlib's decode error means for a user: "truncated JSON …" when the text ends mid-document."""
    if _truncated(err, text):
        return f"truncated JSON: the document ends before it is complete (line {err.lineno})"
    return f"invalid JSON: {err.msg} at line {err.lineno}, column {err.colno}"


# --- checked numbers for extract functions ----------------------------------------------------------
def number(value: Any, field: str) -> float:
    """A finite float (NaN for missing); LineError naming ``field`` for words, booleans, NaN, Infinity."""
    cls = value.__class__
    if cls is float:
        if value - value != 0.0:  # NaN or +-Infinity (only possible via the stdlib fallback)
            raise LineError("NaN where a number is required" if value != value
                            else "Infinity where a finite number is required", field)
        return value
    if cls is int:
        try:
            return float(value)
        except OverflowError:
            raise LineError("number too large to represent", field) from None
    if value is None:
        return math.nan
    if cls is bool:
        raise LineError(f"expected a number, got boolean {value!r}", field)
    raise LineError(f"expected a number, got {_short(value)}", field)


def duration(value: Any, field: str, scale: float = 1.0) -> float:
    """A finite, non-negative duration times ``scale`` (NaN for missing)."""
    x = number(value, field)
    if x < 0.0:
        raise LineError(f"negative latency {x:g}", field)
    return x * scale


def gap_stats(gaps: list, field: str = "inter_chunk_latency") -> tuple[float, float, float]:
    """Mean, p50 and p99 (numpy's linear interpolation) of one request's inter-token gaps.

    Packing into a buffer and sorting is about 4x cheaper than ``np.percentile`` on a list, and this runs once
    per request of a file that may hold millions.
    """
    n = len(gaps)
    if n == 0:
        return math.nan, math.nan, math.nan
    try:
        arr = np.sort(np.frombuffer(struct.pack(f"{n}d", *gaps), dtype=np.float64))
    except struct.error:
        raise LineError("inter-token gaps must all be numbers", field) from None
    total = arr.sum()
    if not math.isfinite(total):
        raise LineError("NaN or Infinity among inter-token gaps", field)
    if arr[0] < 0.0:
        raise LineError(f"negative inter-token gap {arr[0]:g}", field)
    pos50, pos99 = (n - 1) * 0.5, (n - 1) * 0.99
    lo50, lo99 = int(pos50), int(pos99)
    hi50, hi99 = min(lo50 + 1, n - 1), min(lo99 + 1, n - 1)
    p50 = arr[lo50] + (arr[hi50] - arr[lo50]) * (pos50 - lo50)
    p99 = arr[lo99] + (arr[hi99] - arr[lo99]) * (pos99 - lo99)
    return float(total) / n, float(p50), float(p99)


# --- streaming ----------------------------------------------------------------------------------------
def stream_jsonl(
    path: Path,
    extract: Callable[[Any], tuple | str],
    *,
    columns: list[tuple[str, pa.DataType]],
    batch_rows: int = BATCH_ROWS,
    workers: int | None = None,
    skip_array: str | None = None,
) -> StreamResult:
    """Typed columns from a JSON-lines file, read line by line.

    The table has ``columns`` plus ``line`` (the record's line number in the file).
    ``extract(obj)`` returns a tuple in ``columns`` order, or a string (the record is counted under that word
    and not kept), or raises :class:`LineError` (the line goes to ``bad``). ``extract`` must be a module-level
    function so worker processes can import it. ``workers=None`` uses ``$PERFCLAIMS_INGEST_WORKERS`` when set,
    else two processes for files above ``PARALLEL_MIN_BYTES`` when the machine has two cores, one otherwise.

    With ``skip_array="key"``, ``extract`` is called as ``extract(obj, n)``: ``n`` is the number of elements of the
    array ``"key":{"value":[...]}`` that was cut out unparsed (``obj`` then holds ``[]`` there), or None when the
    line was parsed whole (key absent, or the array not plainly non-negative decimals; ``obj`` holds the values).
    """
    path = Path(path)
    size = path.stat().st_size
    if workers is None:
        forced = os.environ.get("PERFCLAIMS_INGEST_WORKERS", "").strip()
        if forced.isdigit() and int(forced) > 0:
            workers = int(forced)
        else:
            workers = min(2, os.cpu_count() or 1) if size >= PARALLEL_MIN_BYTES else 1
    reader = _stream_range if skip_array is None else _stream_range_skipping
    extra = () if reader is _stream_range else (skip_array,)
    if workers <= 1 or size < 2:
        return reader(path, extract, columns, batch_rows, 0, None, *extra)
    bounds = [size * i // workers for i in range(workers + 1)]
    ctx = get_context("fork") if "fork" in _start_methods() else get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(reader, path, extract, columns, batch_rows, bounds[i], bounds[i + 1], *extra)
                   for i in range(workers)]
        parts = [f.result() for f in futures]
    return _merge(parts, columns)


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _merge(parts: list[StreamResult], columns) -> StreamResult:
    """Join per-range results; shift line numbers (and a ``line`` column) by the lines before each range."""
    out = StreamResult(table=_empty(columns))
    tables = []
    offset = 0
    for part in parts:
        for bad in part.bad:
            out.bad.append({**bad, "line": bad["line"] + offset})
        for key, n in part.counts.items():
            out.counts[key] = out.counts.get(key, 0) + n
        table = part.table
        if offset:
            idx = table.column_names.index("line")
            shifted = pa.array(table.column("line").to_numpy(zero_copy_only=False) + offset, type=pa.int64())
            table = table.set_column(idx, "line", shifted)
        tables.append(table)
        offset += part.lines
    out.lines = offset
    out.table = pa.concat_tables(tables) if tables else out.table
    return out


def _with_line(columns) -> list[tuple[str, pa.DataType]]:
    return list(columns) + [("line", pa.int64())]


def _empty(columns) -> pa.Table:
    return pa.schema(_with_line(columns)).empty_table()


def _stream_range(path, extract, columns, batch_rows, start, end) -> StreamResult:
    """Lines that *start* in [start, end) (end None = to the end); line numbers count from the range start."""
    columns = _with_line(columns)
    names = [name for name, _ in columns]
    types = [typ for _, typ in columns]
    batches: list[pa.RecordBatch] = []
    rows: list[tuple] = []
    bad: list[dict] = []
    counts: dict[str, int] = {}
    lineno = 0
    loads = _LOADS
    with open(path, "rb") as fh:
        if start:
            fh.seek(start - 1)
            _skip_rest_of_line(fh)  # the line running through ``start`` belongs to the previous range
        pos = fh.tell()
        limit = INF if end is None else end
        cap = MAX_LINE_BYTES
        readline = fh.readline
        while pos < limit:
            raw = readline(cap + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > cap and not raw.endswith(b"\n"):  # overlong: skip to its end in chunks, never whole
                head, n = raw[:_PROBE], len(raw)
                raw = None
                skipped, at_eof = _skip_rest_of_line(fh)
                pos += n + skipped
                bad.append({"line": lineno, "field": None, "reason": overlong_reason(head, n + skipped, at_eof)})
                continue
            pos += len(raw)
            try:
                obj = loads(raw)
            except _DECODE_ERROR:
                if not raw.strip():
                    continue
                obj, reason = _fallback(raw, at_eof=not raw.endswith(b"\n"))
                if reason:
                    bad.append({"line": lineno, "field": None, "reason": reason})
                    continue
            try:
                values = extract(obj)
            except LineError as err:
                bad.append({"line": lineno, "field": err.field, "reason": err.reason})
                continue
            if values.__class__ is str:
                counts[values] = counts.get(values, 0) + 1
                continue
            rows.append(values + (lineno,))
            if len(rows) >= batch_rows:
                batches.append(_to_batch(rows, names, types))
                rows = []
    if rows:
        batches.append(_to_batch(rows, names, types))
    schema = pa.schema(columns)
    table = pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()
    return StreamResult(table=table, bad=bad, counts=counts, lines=lineno)


# A skipped array is cut only if no byte is above "9" (that excludes letters — NaN, Infinity, null, exponents —
# and brackets and braces), none below "," (a space for a comma, a NUL, a quote) and it holds no minus sign (a
# negative gap) or "/". What is left are digits, dots and commas, cut only when they spell JSON numbers (no empty
# element, no "1.2.3", no leading zero): anything else is parsed whole, so both AIPerf modes refuse the same
# records. The commas count the elements.
_HIGH = ord("9")
_COMMA = ord(",")
_DOT = ord(".")
_ZERO = ord("0")
_LEADING_ZERO = re.compile(rb",0[0-9]")
_RELEASE_BYTES = 32 << 20  # drop mapped pages from our resident set every this many bytes (page cache keeps them)


def _stream_range_skipping(path, extract, columns, batch_rows, start, end, key) -> StreamResult:
    """:func:`_stream_range` with one flat array per line cut out unparsed (see ``skip_array`` above)."""
    columns = _with_line(columns)
    names = [name for name, _ in columns]
    types = [typ for _, typ in columns]
    batches: list[pa.RecordBatch] = []
    rows: list[tuple] = []
    bad: list[dict] = []
    counts: dict[str, int] = {}
    lineno = 0
    loads = _LOADS
    needle = b'"' + key.encode() + b'":{"value":['
    if Path(path).stat().st_size == 0:
        return StreamResult(table=_empty(columns[:-1]))
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = np.frombuffer(mm, dtype=np.uint8)
        scratch = np.empty(1 << 16, dtype=bool)
        try:
            size, find = len(mm), mm.find
            pos = 0
            if start:
                nl = find(b"\n", start - 1)
                pos = size if nl < 0 else nl + 1  # the line running through ``start`` belongs to the previous range
            limit = size if end is None else min(end, size)
            released = pos - pos % mmap.PAGESIZE
            cap = MAX_LINE_BYTES
            while pos < limit:
                stop = find(b"\n", pos, pos + cap + 1)
                if stop < 0 and pos + cap < size:  # overlong: find its end window by window, dropping each
                    stop = _find_end_releasing(mm, pos + cap, size)
                    lineno += 1
                    nxt = size if stop < 0 else stop + 1
                    bad.append({"line": lineno, "field": None,
                                "reason": overlong_reason(mm[pos:pos + _PROBE], nxt - pos, stop < 0)})
                    pos = nxt
                    released = pos - pos % mmap.PAGESIZE
                    continue
                nxt, stop = (size, size) if stop < 0 else (stop + 1, stop)
                lineno += 1
                n = _flat_count(mm, view, find(needle, pos, stop), len(needle), stop, scratch)
                try:
                    obj = loads(mm[pos:n[1]] + mm[n[2]:stop] if n else mm[pos:stop])
                    n = n[0] if n else None
                except _DECODE_ERROR:
                    raw = mm[pos:nxt]
                    pos = nxt
                    if not raw.strip():
                        continue
                    n = None  # report the line as written, so columns in the reason are the file's own
                    obj, reason = _fallback(raw, at_eof=not raw.endswith(b"\n"))
                    if reason:
                        bad.append({"line": lineno, "field": None, "reason": reason})
                        continue
                pos = nxt
                if pos - released >= _RELEASE_BYTES:
                    upto = pos - pos % mmap.PAGESIZE
                    mm.madvise(mmap.MADV_DONTNEED, released, upto - released)
                    released = upto
                try:
                    values = extract(obj, n)
                except LineError as err:
                    bad.append({"line": lineno, "field": err.field, "reason": err.reason})
                    continue
                if values.__class__ is str:
                    counts[values] = counts.get(values, 0) + 1
                    continue
                rows.append(values + (lineno,))
                if len(rows) >= batch_rows:
                    batches.append(_to_batch(rows, names, types))
                    rows = []
        finally:
            view = None  # the map cannot close while numpy still holds its buffer
    if rows:
        batches.append(_to_batch(rows, names, types))
    schema = pa.schema(columns)
    table = pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()
    return StreamResult(table=table, bad=bad, counts=counts, lines=lineno)


def _skip_rest_of_line(fh) -> tuple[int, bool]:
    """Read past the rest of the current line chunk by chunk; (bytes skipped, whether the file ended first)."""
    skipped = 0
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return skipped, True
        nl = chunk.find(b"\n")
        if nl >= 0:
            fh.seek(nl + 1 - len(chunk), os.SEEK_CUR)
            return skipped + nl + 1, False
        skipped += len(chunk)


def _find_end_releasing(mm, pos: int, size: int) -> int:
    """Offset of the next newline at or after ``pos`` (-1: none), searched window by window; each window's pages
    are dropped from the resident set once searched (the binary tail of a crashed run can be gigabytes)."""
    while pos < size:
        end = min(size, pos + _RELEASE_BYTES)
        nl = mm.find(b"\n", pos, end)
        start = pos - pos % mmap.PAGESIZE
        upto = end - end % mmap.PAGESIZE
        if upto > start:
            mm.madvise(mmap.MADV_DONTNEED, start, upto - start)
        if nl >= 0:
            return nl
        pos = end
    return -1


def overlong_reason(head: bytes, n: int, at_eof: bool) -> str:
    """Why a line longer than :data:`MAX_LINE_BYTES` was not read, from its first bytes."""
    where = "to the end of the file" if at_eof else "before the next line"
    nul = head.find(b"\x00")
    if nul >= 0:
        return (f"binary data, not a record: a line of {whole(n)} bytes {where}, NUL bytes from byte {nul + 1} "
                "(what a crash or a full disk leaves); not read")
    return f"line of {whole(n)} bytes {where}, longer than the {whole(MAX_LINE_BYTES)} a record may hold; not read"


def _flat_count(mm, view, k: int, skip: int, stop: int, scratch: np.ndarray) -> tuple[int, int, int] | None:
    """(elements, first byte inside, closing bracket) of the array found at ``k``, when it may be cut unparsed.

    None when there is no such array on the line, or its bytes are not only digits, dots and commas — then the
    line is parsed whole. An empty array is left in place (nothing to skip).
    """
    if k < 0:
        return None
    a = k + skip
    b = mm.find(b"]", a, stop)
    if b <= a:
        return None
    gaps = view[a:b]
    if gaps.max() > _HIGH or gaps.min() < _COMMA:
        return None  # only digits, dots and commas may be cut; anything else (a space, a NUL) is parsed whole
    if gaps[0] < _ZERO or gaps[-1] < _ZERO:
        return None  # a leading or trailing comma or dot: not JSON, left for the parser to refuse
    n = b - a
    if scratch.size < 2 * n:
        scratch.resize(4 * n, refcheck=False)
    marks, pairs = scratch[:n], scratch[n:2 * n - 1]
    np.less(gaps, _ZERO, out=marks)  # commas, dots, "-" and "/", into a reused buffer (a fresh one costs more)
    if np.logical_and(marks[1:], marks[:-1], out=pairs).any():
        return None  # two side by side (",,", ",.", ".,", ".."): an empty element or a dot beside a comma
    kinds = gaps[marks].tobytes()  # those marks in order: two dots in a row share one element ("1.2.3")
    if b"-" in kinds or b"/" in kinds or b".." in kinds or _LEADING_ZERO.search(mm, a, b) or (
            gaps[0] == _ZERO and n > 1 and gaps[1] >= _ZERO):
        return None  # a sign, a slash, or a leading zero ("01"): not JSON numbers, left for the parser to refuse
    return kinds.count(b",") + 1, a, b


def _to_batch(rows: list[tuple], names: list[str], types: list[pa.DataType]) -> pa.RecordBatch:
    cols = list(zip(*rows))
    arrays = [pa.array(col, type=typ, from_pandas=True) for col, typ in zip(cols, types)]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _fallback(raw: bytes, *, at_eof: bool) -> tuple[Any, str | None]:
    """Re-read a line orjson rejected: NaN/Infinity literals parse here (and are caught by the extractor)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 text (byte {err.start} of the line)"
    if text.startswith("\ufeff"):
        text = text[1:]  # a UTF-8 byte-order mark before the first record
    if "\\u" in text:
        text = replace_lone_surrogates(text)  # orjson refuses them; strings stay valid Unicode
    try:
        return json.loads(text), None
    except json.JSONDecodeError as err:
        if _truncated(err, text):
            where = "the file ends mid-record" if at_eof else "the line ends mid-record"
            return None, f"truncated JSON line: {where}"
        return None, f"invalid JSON: {err.msg} at column {err.colno}"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"
    except ValueError as err:  # an integer beyond Python's 4300-digit conversion limit
        return None, f"unreadable JSON: {err}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
