"""Read raw benchmark logs of any supported tool into one points table.

Formats are detected from content, not file names (``fmt=`` forces one). Each format lives in its own module
in this package and exports ``FORMATS``; they are discovered here, so adding a tool is adding a module.
Nothing is lost: a file or record that cannot be read goes to the quarantine with file, line, field and reason,
and the other files are still read.
"""

from __future__ import annotations

import errno
import hashlib
import importlib
import os
import pkgutil
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis import config, procs  # noqa: F401  (procs: forked reader workers die with this process)
from analysis.ingest.base import HEAD_BYTES, Format, Quarantine, Sink, in_words
from analysis.ingest.manifest import Manifest, load_manifest
from analysis.schema import (
    CONFIGURATION,
    NUMERIC_COLUMNS,
    FieldError,
    add_flag,
    has_metric,
    to_points,
    validate_row,
)
from analysis.text import clean, csv_safe

QUARANTINE_COLUMNS = ["source_file", "line", "field", "reason", "format"]
MANIFEST_NAMES = ("manifest.yml", "manifest.yaml")
SKIP_NAMES = {*MANIFEST_NAMES, "README.md", "PROVENANCE.md", "LICENSE", ".gitkeep"}
_NOT_PARSER_MODULES = {"base", "manifest", "requests_table", "launch", "tested_on"}
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark: accepted before any format


def formats() -> list[Format]:
    """Every known format, most specific first (modules set ``PRIORITY``; lower runs first)."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in _NOT_PARSER_MODULES:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for fmt in getattr(module, "FORMATS", []):
            found.append((getattr(module, "PRIORITY", 50), fmt.name, fmt))
    return [fmt for _, _, fmt in sorted(found, key=lambda t: (t[0], t[1]))]


def format_by_name(name: str) -> Format:
    for fmt in formats():
        if fmt.name == name:
            return fmt
    raise KeyError(f"unknown format {name!r}; known: {', '.join(f.name for f in formats())}")


def detect(path: Path, head: bytes) -> Format | None:
    for fmt in formats():
        try:
            if fmt.detect(path, head):
                return fmt
        except Exception:  # a detector must never stop ingest; it just does not claim the file
            continue
    return None


_TOKEN = re.compile(r"`([^`]+)`")
_JSON_KEY = re.compile(rb'"([A-Za-z_][\w.\-]{0,40})"\s*:')


def _detector_tokens(fmt: Format) -> list[str]:
    """The literal keys or markers a format's ``detected_by`` names (patterns such as ``pNN_<…>`` left out)."""
    return [t for t in _TOKEN.findall(fmt.detected_by) if not re.search(r"[<>|*]", t) and len(t) > 1]


def why_unknown(head: bytes, tried: list[Format] | None = None) -> str:
    """One line saying what the content is, which readers were tried and why none took it.

    Each reader is judged by the markers its ``detected_by`` names: the nearest ones (most markers present) are
    named with what they found and what they missed; the rest found none of theirs."""
    tried = formats() if tried is None else tried
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    keys = list(dict.fromkeys(k.decode() for k in _JSON_KEY.findall(head)))
    if stripped.startswith("{"):
        kind = "a JSON object"
    elif stripped.startswith("["):
        kind = "a JSON array"
    elif "," in stripped.split("\n", 1)[0]:
        kind = "comma-separated text"
    else:
        kind = "text"
    if keys:
        kind += " with keys " + ", ".join(keys[:6]) + (", …" if len(keys) > 6 else "")
    scored = []
    is_json = stripped.startswith(("{", "["))
    for fmt in tried:
        tokens = _detector_tokens(fmt)
        if not tokens:
            continue
        # in JSON a marker is a key ("name": …); in text, the words themselves
        have = [t for t in tokens if (f'"{t.rsplit(".", 1)[-1]}"' in text if is_json and " " not in t else t in text)]
        if have:
            scored.append((len(have) / len(tokens), fmt, have, [t for t in tokens if t not in have]))
    scored.sort(key=lambda t: -t[0])
    tools = sorted({f.tool for f in tried})
    near = "; ".join(f"{fmt.name} ({fmt.tool}) has {', '.join(have)} but lacks {', '.join(miss) or 'its layout'}"
                     for _, fmt, have, miss in scored[:3])
    return (f"unknown format: {kind}; tried {len(tried)} readers ({', '.join(tools)}) and none recognised it"
            + (f"; nearest: {near}" if near else "; none found any of the markers they look for")
            + " (see `perfclaims formats`, or force one with --format)")


@dataclass
class IngestResult:
    points: pd.DataFrame
    requests: pd.DataFrame
    quarantine: pd.DataFrame
    files: pd.DataFrame  # one row per file: source_file, format, tool, points, quarantined, status
    counts: dict = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """Points and quarantined records per tool and format."""
        if self.files.empty:
            return pd.DataFrame(columns=["tool", "format", "files", "points", "quarantined"])
        read = self.files[self.files["format"] != "skipped"]
        return (
            read.groupby(["tool", "format"], dropna=False)
            .agg(files=("source_file", "size"), points=("points", "sum"), quarantined=("quarantined", "sum"))
            .reset_index()
        )


def expand(paths: list[Path]) -> list[Path]:
    """Files under the given paths that are read as logs, sorted (see :func:`walk` for what is skipped and why)."""
    return walk(paths)[0]


def walk(paths: list[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(files to read, [(path, reason skipped)]) under the given paths, with the same rules at every depth.

    Only names *below* a given path are judged, so a hidden folder above it (``~/.cache/runs``) changes nothing.
    Skipped, each with its reason: hidden names (``.*``), manifests and docs, symlinks to folders (not followed,
    so no loops), broken symlinks and symlink loops, FIFOs, sockets and devices, folders that cannot be listed.
    A symlink to a regular file is read. A given path that does not exist is an error.
    """
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for root in map(Path, paths):
        if not os.path.lexists(root):
            raise FileNotFoundError(f"{root}: no such file or folder")
        if root.is_dir():
            _walk_folder(root, files, skipped)
        else:
            _classify(root, files, skipped, given=True)
    return sorted(files), sorted(skipped)


def _walk_folder(folder: Path, files: list, skipped: list) -> None:
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            skipped.append((current, f"cannot list folder: {err.strerror or err}"))
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                kind = "folder" if entry.is_dir(follow_symlinks=False) else "file"
                skipped.append((path, f"hidden {kind} (name starts with '.'), not read"))
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(path)
                continue
            _classify(path, files, skipped, given=False)


def _classify(path: Path, files: list, skipped: list, *, given: bool) -> None:
    """Read ``path`` as a log, or say why not."""
    if path.name in SKIP_NAMES:
        if not given:
            what = "manifest (read for what the logs lack)" if path.name.startswith("manifest.") else \
                "documentation"
            skipped.append((path, f"{what}, not a log"))
            return
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except OSError as err:
        if os.path.islink(path):
            if err.errno == errno.ELOOP:
                skipped.append((path, "symlink loop, not read"))
            else:
                skipped.append((path, "broken symlink (its target does not exist), not read"))
        else:
            skipped.append((path, f"cannot read: {err.strerror or err}"))
        return
    if stat.S_ISDIR(mode):
        skipped.append((path, "symlink to a folder, not followed (avoids loops and reading a tree twice)"))
    elif stat.S_ISREG(mode):
        files.append(path)
    else:
        kind = ("FIFO (named pipe)" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
                else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")
        skipped.append((path, f"not a regular file ({kind}), not read"))


def find_manifest(path: Path) -> Path | None:
    """The nearest ``manifest.yml`` (or ``manifest.yaml``) at or above ``path``."""
    start = Path(path).resolve()
    for folder in ([start] if start.is_dir() else []) + list(start.parents):
        for name in MANIFEST_NAMES:
            candidate = folder / name
            if candidate.is_file():
                return candidate
    return None


def _display_path(path: Path, roots: list[Path]) -> str:
    """Path relative to the project when inside it, else relative to the folder given on the command line.

    File names are bytes on POSIX: a name that is not valid UTF-8 is shown with U+FFFD for its undecodable bytes
    (the file itself is still opened by its real name)."""
    return os.fsencode(_relative_path(path, roots)).decode("utf-8", errors="replace")


def _real(path: Path) -> Path:
    """``path`` with its folders resolved but not its last part (a symlink is shown as itself, loops are harmless)."""
    path = Path(os.path.abspath(path))
    return Path(os.path.realpath(path.parent)) / path.name if path.name else Path(os.path.realpath(path))


def _relative_path(path: Path, roots: list[Path]) -> str:
    resolved = _real(path)
    try:
        return resolved.relative_to(config.PROJ_ROOT.resolve()).as_posix()
    except ValueError:
        pass
    for root in roots:
        base = Path(os.path.realpath(root)) if root.is_dir() else _real(root).parent
        try:
            return (Path(root.name) / resolved.relative_to(base)).as_posix() if root.is_dir() else path.name
        except ValueError:
            continue
    return path.as_posix()


def ingest(
    paths: list[Path] | Path,
    manifest: Manifest | Path | None = None,
    *,
    fmt: str | None = None,
    progress: bool | None = None,
    itl_gaps: bool = False,
) -> IngestResult:
    """Read every file under ``paths``; return points, per-request rows, quarantine and a per-file log.

    ``manifest`` is a Manifest, a manifest.yml path, or None to use the nearest ``manifest.yml`` in the first
    path's folder or its parents (so ingesting ``data/raw/h200`` still applies ``data/raw/manifest.yml``).
    ``itl_gaps=True`` parses every per-chunk gap of AIPerf JSONL to give per-request ITL p50/p99 (slower; by
    default the gap arrays are skipped and only the exact per-request ITL mean is kept).
    """
    roots = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    if manifest is None:
        found = find_manifest(roots[0]) if roots else None
        manifest = load_manifest(found, root=found.parent if found else None)
    elif not isinstance(manifest, Manifest):
        manifest = load_manifest(Path(manifest))
    files, skipped = walk(roots)
    forced = format_by_name(fmt) if fmt else None

    rows: list[dict] = []
    quarantine: list[dict] = []
    request_tables = []
    file_log: list[dict] = []
    seen_hashes: dict[str, str] = {}
    sizes = {path: _size(path) for path in files}
    # only a file whose size another file shares can be a byte-identical copy: hash those alone
    shared_size = _sizes_held_by_several(sizes.values())

    manifest_shown = _display_path(manifest.source, roots) if manifest.source else None
    for path, why in skipped:
        shown = _display_path(path, roots)
        if shown == manifest_shown and manifest.problems:
            why += f"; {len(manifest.problems)} of its values ignored (see the quarantine)"
        file_log.append({"source_file": shown, "format": "skipped", "tool": "none", "points": 0, "quarantined": 0,
                         "note": why})
    if manifest.problems:
        for problem in manifest.problems:
            quarantine.append(_q(manifest_shown or "manifest", None, problem["field"], problem["reason"], "manifest"))
        if manifest_shown not in {row["source_file"] for row in file_log}:  # a manifest above the given folders
            file_log.append({"source_file": clean(manifest_shown or "manifest"), "format": "manifest", "tool": "none",
                             "points": 0, "quarantined": len(manifest.problems)})

    bar = _progress(files, progress)
    for path in files:
        shown = _display_path(path, roots)
        bar.set_postfix_str(shown[-40:], refresh=False)
        entry = {"source_file": shown, "format": "none", "tool": "none", "points": 0, "quarantined": 0}
        found_rows: list[dict] = []
        found_quarantine: list[dict] = []
        found_requests: list = []
        try:
            _read_one(path, shown, entry, found_rows, found_quarantine, found_requests, manifest=manifest,
                      forced=forced, itl_gaps=itl_gaps, seen_hashes=seen_hashes,
                      hash_it=sizes[path] in shared_size)
        except Exception as err:  # nothing in one file may stop the others: the file becomes a quarantine row
            reason, field_name = in_words(err)
            found_rows, found_requests = [], []
            found_quarantine = [_q(shown, None, field_name, f"could not be read: {reason}", entry["format"])]
            entry.update(points=0, quarantined=1)
        rows.extend(found_rows)
        quarantine.extend(found_quarantine)
        request_tables.extend(found_requests)
        file_log.append(entry)
        bar.update(sizes[path])
    bar.close()

    points = to_points(rows)
    points = _same_point_twice(points, quarantine, file_log)
    requests = pd.concat(request_tables, ignore_index=True) if request_tables else pd.DataFrame()
    qframe = pd.DataFrame(quarantine, columns=QUARANTINE_COLUMNS)
    qframe["line"] = qframe["line"].astype("Int64")
    files_frame = pd.DataFrame(file_log)
    if len(files_frame):
        files_frame["note"] = files_frame.get("note", pd.Series(dtype=str)).fillna("")
        counts = [c for c in files_frame.columns if c.startswith("n_") or c in ("points", "quarantined")]
        files_frame[counts] = files_frame[counts].fillna(0)
        files_frame["status"] = [_status(row) for row in files_frame.to_dict("records")]
    return IngestResult(points=points, requests=requests, quarantine=qframe, files=files_frame)


def _read_one(path: Path, shown: str, entry: dict, rows: list, quarantine: list, request_tables: list, *,
              manifest: Manifest, forced: Format | None, itl_gaps: bool, seen_hashes: dict,
              hash_it: bool = True) -> None:
    """Read one file into ``rows``/``quarantine``/``request_tables`` and fill its ``files.csv`` entry."""
    try:
        head = _head(path)
        digest = _sha256(path) if hash_it else None
    except OSError as err:
        quarantine.append(_q(shown, None, None, f"cannot read file: {err.strerror or err}", "none"))
        entry["quarantined"] = 1
        return
    reason = None
    wide = _wide_encoding(head)
    if not head.strip():
        reason = "empty file"
    elif b"\x00" in head[:8192] and wide is None:
        reason = "binary file (contains NUL bytes), not a benchmark log"
    elif digest is not None and digest in seen_hashes:
        reason = f"duplicate run: identical to {seen_hashes[digest]}"
    if reason:
        quarantine.append(_q(shown, None, None, reason, "none"))
        entry["quarantined"] = 1
        return
    if digest is not None:
        seen_hashes[digest] = shown
    if wide is not None:  # UTF-16/32 text (a Windows shell's `>`): read as the same text in UTF-8
        with tempfile.TemporaryDirectory(prefix="perfclaims-utf8-") as folder:
            try:
                converted = _as_utf8(path, wide, Path(folder))
            except (UnicodeError, OSError) as err:
                quarantine.append(_q(shown, None, None, f"{wide.upper()} text that cannot be decoded: {err}", "none"))
                entry["quarantined"] = 1
                return
            _parse_one(converted, shown, entry, rows, quarantine, request_tables, manifest=manifest, forced=forced,
                       itl_gaps=itl_gaps, original=path, note=f"read as {wide.upper()} text (converted to UTF-8)")
        return
    _parse_one(path, shown, entry, rows, quarantine, request_tables, manifest=manifest, forced=forced,
               itl_gaps=itl_gaps, original=path)


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
              (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _wide_encoding(head: bytes) -> str | None:
    """``utf-16-le`` (etc.) for text in a 2- or 4-byte encoding: a byte-order mark, or (no mark) ASCII text whose
    every other byte is NUL. None for anything else, binary files included."""
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            return name
    sample = head[:4096]
    if len(sample) >= 8 and b"\x00" in sample:
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) > 0.9 * len(odd) and even.count(0) == 0:
            return "utf-16-le"
        if even.count(0) > 0.9 * len(even) and odd.count(0) == 0:
            return "utf-16-be"
    return None


def _as_utf8(path: Path, encoding: str, folder: Path) -> Path:
    """The file's text written as UTF-8 to ``folder`` under the same name (readers name runs after the file)."""
    data = path.read_bytes()
    for bom, name in _WIDE_BOMS:
        if name == encoding and data.startswith(bom):
            data = data[len(bom):]
            break
    out = folder / path.name
    out.write_text(data.decode(encoding), encoding="utf-8")
    return out


def _parse_one(path: Path, shown: str, entry: dict, rows: list, quarantine: list, request_tables: list, *,
               manifest: Manifest, forced: Format | None, itl_gaps: bool, original: Path, note: str = "") -> None:
    """Detect and parse one readable file (``original`` is the file as given; ``path`` the text to read)."""
    head = _head(path)
    head = head[3:] if head.startswith(BOM) else head
    found = forced or detect(path, head)
    if found is None:
        quarantine.append(_q(shown, None, None, why_unknown(head) if not note else f"{why_unknown(head)}; {note}",
                             "none"))
        entry["quarantined"] = 1
        return
    entry.update(format=found.name, tool=found.tool)
    sink = Sink(path, options={"itl_gaps": itl_gaps})
    try:
        found.parse(path, sink)
    except Exception as err:  # no traceback for users: name the file and what went wrong, in words
        reason, field_name = in_words(err)
        line = err.line if isinstance(err, Quarantine) else None
        if not isinstance(err, Quarantine):
            reason = f"could not parse as {found.name}: {reason}"
        quarantine.append(_q(shown, line, field_name, reason, found.name))
        entry["quarantined"] += 1
        sink.points.clear()
        sink.request_tables.clear()
    if not (sink.points or sink.request_tables or sink.problems or sink.notes or entry["quarantined"]):
        if any(key.startswith(("point_from", "deferred")) for key in sink.counts):
            sink.note("same run read from its summary file beside it")
        else:  # recognised, yet no record in it: never a silent 'nothing read'
            sink.bad(f"no results: the file looks like {found.name} but holds no record (header only, or cut off "
                     "before the first one)")
    for problem in sink.problems:
        quarantine.append(_q(shown, problem["line"], problem["field"], problem["reason"], found.name))
        entry["quarantined"] += 1
    extra = manifest.values_for(original)
    for line, row in sink.points:
        full = {**row, **extra}
        tool = row.get("tool") if found.row_tool and row.get("tool") not in (None, "", "unknown") else found.tool
        full.update(source_file=shown, source_line=line, tool=tool, format=found.name)
        if row.get("flags") and extra.get("flags"):
            full["flags"] = add_flag(row["flags"], extra["flags"])
        try:
            checked = validate_row(full)
            if not has_metric(checked) and "failed-run" not in str(checked.get("flags", "")).split(";"):
                raise FieldError("metrics", "no measured value: every latency and throughput is missing or null")
            rows.append(checked)
            entry["points"] += 1
        except FieldError as err:
            quarantine.append(_q(shown, line, err.field, err.reason, found.name))
            entry["quarantined"] += 1
    for table in sink.request_tables:
        request_tables.append(_as_frame(table, shown))
    entry.update({f"n_{k}": v for k, v in sink.counts.items()})
    entry["note"] = clean("; ".join([*sink.notes, *([note] if note else [])]))


# Rows per Parquet row group: big enough that a reader's per-group overhead vanishes, small enough that DuckDB,
# Polars and Dask skip groups by their min/max statistics and read a large requests table in parallel pieces.
ROW_GROUP_ROWS = 128 * 1024
PARTITION_BY = ("tool", "day")  # day: the first ten characters of ``date`` (YYYY-MM-DD); ``date`` itself is kept
UNKNOWN_DAY = "unknown"


def write_outputs(result: IngestResult, out_dir: Path, *, partition: bool = False) -> dict[str, Path]:
    """points.parquet, requests.parquet, quarantine.csv and files.csv in ``out_dir``, all four or none.

    Each table is written to a hidden temporary file beside its final name, and only when all four are written
    are they renamed into place (a rename within a folder is atomic). A failure part-way (disk full, a value
    pyarrow refuses, an interrupt) leaves the previous run's outputs as they were and no temporary file behind.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "points": out_dir / "points.parquet",
        "requests": out_dir / "requests.parquet",
        "quarantine": out_dir / "quarantine.csv",
        "files": out_dir / "files.csv",
    }
    writers = {
        "points": lambda p: result.points.to_parquet(p, index=False, row_group_size=ROW_GROUP_ROWS),
        "requests": lambda p: result.requests.to_parquet(p, index=False, row_group_size=ROW_GROUP_ROWS),
        "quarantine": lambda p: csv_safe(result.quarantine).to_csv(p, index=False),
        "files": lambda p: csv_safe(result.files).to_csv(p, index=False),
    }
    temps: dict[str, Path] = {}
    datasets = {"points_dataset": (out_dir / "points", lambda: result.points),
                "requests_dataset": (out_dir / "requests", lambda: _with_file_tool_and_date(result))}
    staged: dict[str, Path] = {}
    try:
        for name, final in paths.items():
            temps[name] = final.with_name(f".{final.name}.{os.getpid()}.tmp")
            writers[name](temps[name])
        if partition:  # ``partition=True``: the same rows as Hive-partitioned datasets (tool=.../day=YYYY-MM-DD),
            # each written whole in a hidden sibling folder, swapped in after the main tables
            for name, (final, frame) in datasets.items():
                _check_dataset_folder(final)
                staged[name] = final.with_name(f".{final.name}.{os.getpid()}.tmp")
                _write_dataset(frame(), staged[name])
        for name, final in paths.items():
            os.replace(temps[name], final)
        for name, staged_folder in staged.items():
            paths[name] = _swap_folder(staged_folder, datasets[name][0])
    except BaseException:
        for temp in temps.values():
            try:
                temp.unlink()
            except FileNotFoundError:
                pass
        for folder in staged.values():
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return paths


def _check_dataset_folder(folder: Path) -> None:
    """Refuse to replace a folder this module did not write (it holds something else than partitions)."""
    if folder.is_dir():
        strangers = [q.name for q in folder.iterdir()
                     if not (q.is_dir() and "=" in q.name) and not (q.is_file() and q.name.startswith("part-"))]
        if strangers:  # never delete a folder this function did not write
            raise ValueError(f"{folder}: not a dataset perfclaims wrote (holds {strangers[0]}); "
                             "move it or choose another --out")


def _swap_folder(new: Path, final: Path) -> Path:
    """Put the finished folder ``new`` at ``final`` by renames: a reader sees the old dataset or the new one whole
    (between the two renames, briefly none), never a part of one."""
    old = final.with_name(f".{final.name}.{os.getpid()}.old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        os.replace(final, old)
    os.replace(new, final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def _status(row: dict) -> str:
    """What became of one file, in words: read into points or requests, quarantined, or skipped (note says why)."""
    if row.get("format") == "skipped":
        return "skipped"
    if row["points"]:
        return "points" + (" (some records quarantined)" if row["quarantined"] else "")
    if row.get("n_requests"):
        return "requests"
    if row["quarantined"]:
        return "quarantined"
    if row.get("note"):
        return "same run read elsewhere"
    return "nothing read"


# What makes two records the same point (run, configuration, day, load) and what they report about it.
_POINT_KEY = ["tool", "format", "run_id", "date", *CONFIGURATION, "concurrency", "batch_size", "request_rate", "isl", "osl",
              "context_len"]
_POINT_VALUES = [c for c in NUMERIC_COLUMNS if c not in _POINT_KEY]


def _same_point_twice(points: pd.DataFrame, quarantine: list, file_log: list) -> pd.DataFrame:
    """Records of one point read from several files. Equal numbers (a copy re-saved with CRLF line ends or a
    byte-order mark, which the whole-file hash cannot see) are counted once: the later copies become quarantine rows
    naming the first. Different numbers are a conflict nobody can settle here: every record is kept and flagged
    ``conflicting-duplicate``, so that history and fits do not silently keep whichever file sorts first."""
    if points.empty or "source_file" not in points:
        return points
    key = _joined(points, _POINT_KEY)
    files_per_key = points.groupby(key)["source_file"].nunique()
    shared = key.isin(files_per_key.index[files_per_key > 1])
    if not shared.any():
        return points
    values = _joined(points, _POINT_VALUES)
    drop: list = []
    conflicting: list = []
    entries = {e["source_file"]: e for e in file_log}
    for _, group in points[shared].groupby(key[shared], sort=False):
        group = group.assign(_values=values[group.index]).sort_values(["source_file", "source_line"], kind="stable")
        if group["_values"].nunique() > 1:
            both = group[[c for c in _POINT_VALUES if c in group]].dropna(axis=1)  # a field one record lacks is no
            if (both.nunique(dropna=False) > 1).any():                         # conflict, just less said
                conflicting.extend(group.index)
            continue
        first = group.iloc[0]
        for idx, row in group.iloc[1:].iterrows():
            if row["source_file"] == first["source_file"]:
                continue  # repeats inside one file are the file's own business
            where = first["source_file"] + ("" if pd.isna(first["source_line"]) else
                                            f" line {int(first['source_line'])}")
            line = None if pd.isna(row["source_line"]) else int(row["source_line"])
            quarantine.append(_q(row["source_file"], line, None, f"duplicate record: identical to {where}",
                                 row.get("format", "none")))
            entry = entries.get(row["source_file"])
            if entry is not None:
                entry["points"] = max(0, int(entry.get("points", 0)) - 1)
                entry["quarantined"] = int(entry.get("quarantined", 0)) + 1
            drop.append(idx)
    if conflicting:
        points.loc[conflicting, "flags"] = [add_flag(f, "conflicting-duplicate")
                                            for f in points.loc[conflicting, "flags"]]
    return points.drop(index=drop).reset_index(drop=True)


def _joined(points: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Each row's ``columns`` as one string (missing values written alike), to group equal rows by."""
    cols = [c for c in columns if c in points]
    return pd.Series(["\x1f".join(map(str, t)) for t in points[cols].itertuples(index=False)], index=points.index)


def _q(source_file, line, field_name, reason, fmt_name) -> dict:
    """One quarantine row; every text in it made valid Unicode (a reason may quote the file's own bytes)."""
    return {"source_file": clean(source_file), "line": line, "field": None if field_name is None else clean(field_name),
            "reason": clean(reason), "format": fmt_name}


def _with_file_tool_and_date(result: IngestResult) -> pd.DataFrame:
    """The requests table with the tool (from the file log) and date of each row's file: the date of that file's
    points, else of the points read from the same folder (a run's per-request JSONL beside its aggregate)."""
    requests = result.requests
    if requests.empty or "source_file" not in requests.columns:
        return requests
    extra = {}
    if "tool" not in requests.columns and len(result.files):
        extra["tool"] = requests["source_file"].map(result.files.set_index("source_file")["tool"])
    if "date" not in requests.columns and len(result.points) and "date" in result.points.columns:
        dated = result.points.dropna(subset=["date"])
        by_file = dated.groupby("source_file")["date"].first()
        by_folder = dated.groupby(dated["source_file"].map(_folder))["date"].first()
        extra["date"] = requests["source_file"].map(by_file).fillna(requests["source_file"].map(_folder)
                                                                    .map(by_folder))
    return requests.assign(**extra)


def _folder(source_file: str) -> str:
    return str(source_file).rpartition("/")[0]


def _write_dataset(frame: pd.DataFrame, folder: Path) -> Path:
    """``frame`` as a Hive-partitioned Parquet dataset in ``folder`` (replaced whole: no stale partitions)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _check_dataset_folder(folder)
    if folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if frame.empty:
        return folder
    if "date" in frame.columns:  # a null partition value would leave readers unable to infer the column's type
        frame = frame.assign(day=frame["date"].astype("string").str.slice(0, 10).fillna(UNKNOWN_DAY))
    by = [c for c in PARTITION_BY if c in frame.columns]
    table = pa.Table.from_pandas(frame, preserve_index=False)  # one schema for every partition
    # Each partition written here, one file at a time, rather than by pyarrow.dataset.write_dataset: its scanner
    # can outlive the call and release pandas-backed buffers during interpreter shutdown, which aborts the process
    # ("terminate called without an active exception", apache/arrow #36389; 4 of 36 partitioned ingests under load).
    if not by:
        pq.write_table(table, folder / "part-0.parquet", row_group_size=ROW_GROUP_ROWS)
        return folder
    rest = table.drop_columns(by)
    keys = frame[by].astype(object).where(frame[by].notna(), None)
    for values, rows in keys.groupby(by, sort=True, dropna=False).indices.items():
        values = values if isinstance(values, tuple) else (values,)
        part = folder.joinpath(*(f"{c}={_hive_value(v)}" for c, v in zip(by, values)))
        part.mkdir(parents=True)
        pq.write_table(rest.take(pa.array(rows)), part / "part-0.parquet", row_group_size=ROW_GROUP_ROWS)
    return folder


def _hive_value(value) -> str:
    """A partition value as a Hive folder name: percent-encoded (a '/' or '..' stays one name inside the dataset,
    and readers decode it), null as Hive's default partition."""
    from urllib.parse import quote

    if value is None or (isinstance(value, float) and value != value):
        return "__HIVE_DEFAULT_PARTITION__"
    return quote(str(value), safe="")


def _sizes_held_by_several(sizes) -> set[int]:
    """File sizes that occur more than once: the only sizes at which two files can be identical."""
    seen: set[int] = set()
    several: set[int] = set()
    for size in sizes:
        (several if size in seen else seen).add(size)
    return several


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(HEAD_BYTES)


def _sha256(path: Path) -> str:
    """SHA-256 of the whole file: the identity behind 'duplicate run: identical to ...'."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _as_frame(table, shown: str) -> pd.DataFrame:
    frame = table.to_pandas() if hasattr(table, "to_pandas") else pd.DataFrame(table)
    if "source_file" not in frame.columns:
        frame.insert(0, "source_file", shown)
    return frame


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _progress(files: list[Path], progress: bool | None):
    """A byte-based progress bar on stderr for long ingests (many files, or large ones); off when not a terminal."""
    from tqdm.auto import tqdm

    total = sum(_size(f) for f in files)
    disable = (not sys.stderr.isatty()) if progress is None else not progress
    small = len(files) < 2 and total < 50 * 2**20
    return tqdm(total=total, desc="ingest", unit="B", unit_scale=True, unit_divisor=1024,
                disable=disable or small, file=sys.stderr)
