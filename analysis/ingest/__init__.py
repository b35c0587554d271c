"""Read raw benchmark logs of any supported tool into one points table.

Formats are detected from content, not file names (``fmt=`` forces one). Each format lives in its own module
in this package and exports ``FORMATS``; they are discovered here, so adding a tool is adding a module.
Nothing is lost: a file or record that cannot be read goes to the quarantine with file, line, field and reason,
and the other files are still read.
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis import config
from analysis.ingest.base import HEAD_BYTES, Format, Quarantine, Sink
from analysis.ingest.manifest import Manifest, load_manifest
from analysis.schema import FieldError, add_flag, to_points, validate_row

QUARANTINE_COLUMNS = ["source_file", "line", "field", "reason", "format"]
SKIP_NAMES = {"manifest.yml", "manifest.yaml", "README.md", "PROVENANCE.md", "LICENSE", ".gitkeep"}
_NOT_PARSER_MODULES = {"base", "manifest", "requests_table"}


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
        return (
            self.files.groupby(["tool", "format"], dropna=False)
            .agg(files=("source_file", "size"), points=("points", "sum"), quarantined=("quarantined", "sum"))
            .reset_index()
        )


def expand(paths: list[Path]) -> list[Path]:
    """Files under the given paths, sorted, without manifests, docs and hidden files."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            candidates = sorted(q for q in p.rglob("*") if q.is_file())
        elif p.exists():
            candidates = [p]
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
        for q in candidates:
            if q.name in SKIP_NAMES or any(part.startswith(".") for part in q.parts if part not in (".", "..")):
                continue
            out.append(q)
    return out


def find_manifest(path: Path) -> Path | None:
    """The nearest manifest.yml at or above ``path``."""
    start = Path(path).resolve()
    for folder in ([start] if start.is_dir() else []) + list(start.parents):
        candidate = folder / "manifest.yml"
        if candidate.exists():
            return candidate
    return None


def _display_path(path: Path, roots: list[Path]) -> str:
    """Path relative to the project when inside it, else relative to the folder given on the command line."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(config.PROJ_ROOT.resolve()).as_posix()
    except ValueError:
        pass
    for root in roots:
        base = root.resolve() if root.is_dir() else root.resolve().parent
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
    files = expand(roots)
    forced = format_by_name(fmt) if fmt else None

    rows: list[dict] = []
    quarantine: list[dict] = []
    request_tables = []
    file_log: list[dict] = []
    seen_hashes: dict[str, str] = {}
    sizes = {path: _size(path) for path in files}
    shared_size = _sizes_held_by_several(sizes.values())

    bar = _progress(files, progress)
    for path in files:
        shown = _display_path(path, roots)
        bar.set_postfix_str(path.name[-40:], refresh=False)
        step = sizes[path]
        entry = {"source_file": shown, "format": "none", "tool": "none", "points": 0, "quarantined": 0}
        try:
            head = _head(path)
            # only a file whose size another file shares can be a byte-identical copy: hash those alone
            digest = _sha256(path) if step in shared_size else None
        except OSError as err:
            quarantine.append(_q(shown, None, None, f"cannot read file: {err.strerror or err}", "none"))
            entry["quarantined"] = 1
            file_log.append(entry)
            bar.update(step)
            continue
        reason = None
        if not head.strip():
            reason = "empty file"
        elif b"\x00" in head[:8192]:
            reason = "binary file (contains NUL bytes), not a benchmark log"
        elif digest is not None and digest in seen_hashes:
            reason = f"duplicate run: identical to {seen_hashes[digest]}"
        if reason:
            quarantine.append(_q(shown, None, None, reason, "none"))
            entry["quarantined"] = 1
            file_log.append(entry)
            bar.update(step)
            continue
        if digest is not None:
            seen_hashes[digest] = shown
        found = forced or detect(path, head)
        if found is None:
            quarantine.append(_q(shown, None, None, "unknown format: no reader recognises this content "
                                 "(see `perfclaims formats`, or force one with --format)", "none"))
            entry["quarantined"] = 1
            file_log.append(entry)
            bar.update(step)
            continue
        entry.update(format=found.name, tool=found.tool)
        sink = Sink(path, options={"itl_gaps": itl_gaps})
        try:
            found.parse(path, sink)
        except Quarantine as err:
            quarantine.append(_q(shown, err.line, err.field, err.reason, found.name))
            entry["quarantined"] += 1
            sink.points.clear()
            sink.request_tables.clear()
        except Exception as err:  # no traceback for users: name the file and what went wrong
            quarantine.append(_q(shown, None, None, f"could not parse as {found.name}: "
                                 f"{type(err).__name__}: {err}", found.name))
            entry["quarantined"] += 1
            sink.points.clear()
            sink.request_tables.clear()
        for problem in sink.problems:
            quarantine.append(_q(shown, problem["line"], problem["field"], problem["reason"], found.name))
            entry["quarantined"] += 1
        extra = manifest.values_for(path)
        for line, row in sink.points:
            full = {**row, **extra}
            full.update(source_file=shown, source_line=line, tool=found.tool, format=found.name)
            if row.get("flags") and extra.get("flags"):
                full["flags"] = add_flag(row["flags"], extra["flags"])
            try:
                rows.append(validate_row(full))
                entry["points"] += 1
            except FieldError as err:
                quarantine.append(_q(shown, line, err.field, err.reason, found.name))
                entry["quarantined"] += 1
        for table in sink.request_tables:
            request_tables.append(_as_frame(table, shown))
        entry.update({f"n_{k}": v for k, v in sink.counts.items()})
        entry["note"] = "; ".join(sink.notes)
        file_log.append(entry)
        bar.update(step)
    bar.close()

    points = to_points(rows)
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


# Rows per Parquet row group: big enough that a reader's per-group overhead vanishes, small enough that DuckDB,
# Polars and Dask skip groups by their min/max statistics and read a large requests table in parallel pieces.
ROW_GROUP_ROWS = 128 * 1024
PARTITION_BY = ("tool", "day")  # day: the first ten characters of ``date`` (YYYY-MM-DD); ``date`` itself is kept
UNKNOWN_DAY = "unknown"


def write_outputs(result: IngestResult, out_dir: Path, *, partition: bool = False) -> dict[str, Path]:
    """points.parquet, requests.parquet, quarantine.csv and files.csv in ``out_dir``.

    ``partition=True`` also writes ``points/`` and ``requests/``: the same rows as Hive-partitioned Parquet
    datasets (``tool=.../day=YYYY-MM-DD/*.parquet``, plus a ``day`` column; a request row takes the tool and date
    of its file), which DuckDB, Polars and Dask read directly, skipping folders a filter rules out.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "points": out_dir / "points.parquet",
        "requests": out_dir / "requests.parquet",
        "quarantine": out_dir / "quarantine.csv",
        "files": out_dir / "files.csv",
    }
    result.points.to_parquet(paths["points"], index=False, row_group_size=ROW_GROUP_ROWS)
    result.requests.to_parquet(paths["requests"], index=False, row_group_size=ROW_GROUP_ROWS)
    result.quarantine.to_csv(paths["quarantine"], index=False)
    result.files.to_csv(paths["files"], index=False)
    if partition:
        paths["points_dataset"] = _write_dataset(result.points, out_dir / "points")
        paths["requests_dataset"] = _write_dataset(_with_file_tool_and_date(result), out_dir / "requests")
    return paths


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
    import shutil

    import pyarrow as pa
    import pyarrow.dataset as ds

    if folder.is_dir():
        strangers = [q.name for q in folder.iterdir()
                     if not (q.is_dir() and "=" in q.name) and not (q.is_file() and q.name.startswith("part-"))]
        if strangers:  # never delete a folder this function did not write
            raise ValueError(f"{folder}: not a dataset perfclaims wrote (holds {strangers[0]}); "
                                  "move it or choose another --out")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if frame.empty:
        return folder
    if "date" in frame.columns:  # a null partition value would leave readers unable to infer the column's type
        frame = frame.assign(day=frame["date"].astype("string").str.slice(0, 10).fillna(UNKNOWN_DAY))
    by = [c for c in PARTITION_BY if c in frame.columns]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    ds.write_dataset(table, folder, format="parquet", partitioning=by or None, partitioning_flavor="hive",
                     basename_template="part-{i}.parquet", max_rows_per_group=ROW_GROUP_ROWS,
                     min_rows_per_group=min(ROW_GROUP_ROWS, 16 * 1024), existing_data_behavior="error")
    return folder


def _status(row: dict) -> str:
    """What became of one file, in words: every file is read into points or requests, or quarantined."""
    if row["points"]:
        return "points" + (" (some records quarantined)" if row["quarantined"] else "")
    if row.get("n_requests"):
        return "requests"
    if row["quarantined"]:
        return "quarantined"
    if row.get("note"):
        return "same run read elsewhere"
    return "nothing read"


def _q(source_file, line, field_name, reason, fmt_name) -> dict:
    return {"source_file": source_file, "line": line, "field": field_name, "reason": reason, "format": fmt_name}


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
