"""The one data-access layer: where the tables ingest writes are read from (paths from :mod:`analysis.config`).

Estimators, frontiers, claim cards and reports take tables, never raw files; this module is how they get them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis import config
from analysis.text import csv_safe, csv_unescape


def load_points(path: str | Path | None = None) -> pd.DataFrame:
    """The points table: a parquet or CSV file (default ``data/processed/points.parquet``), or a folder of raw logs,
    which is ingested on the fly (nothing is written)."""
    path = Path(path) if path is not None else config.POINTS_FILE
    if path.is_dir():
        from analysis.ingest import ingest

        return ingest([path], progress=False).points
    if not path.exists():
        raise FileNotFoundError(
            f"{path}: points table not found; run `perfclaims ingest data/raw --out {path.parent}` first")
    table = _read_table(path)
    return table if path == config.POINTS_FILE else checked_points(table, path)


def _as_number(value, field: str) -> tuple[float, bool]:
    """(value as a float or NaN when missing, whether it could not be read as one) by ingest's rule
    (:func:`analysis.schema.as_number`: thousands separators and ``none``/``null``/``n/a`` accepted, booleans and
    words not)."""
    import math

    from analysis import schema

    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return math.nan, False
    try:
        return schema.as_number(value, field), False
    except schema.FieldError:
        return math.nan, True


def _read_table(path: Path) -> pd.DataFrame:
    """A CSV or parquet file as a frame; a file that is neither is a one-line ValueError naming it."""
    try:
        return pd.read_csv(path) if path.suffix.lower() == ".csv" else pd.read_parquet(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:  # pyarrow's errors subclass these
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        kind = "CSV" if path.suffix.lower() == ".csv" else "parquet"
        raise ValueError(f"{path}: not a readable {kind} points table ({first[:160]})") from None


def checked_points(table: pd.DataFrame, path: Path, *, report=None) -> pd.DataFrame:
    """A points table from outside ingest (``--points`` naming a CSV or parquet file), made safe to compute on:
    every schema column present (missing ones at their defaults), numeric columns as numbers, and a row whose value
    cannot be one (a word where a number goes, a GPU count or TP of zero or less, an infinity) quarantined: left
    out with its file, row and field said on stderr (``report``: where to say it), never silently dropped. The
    shipped table ingest writes is read as it is (ingest validated every row)."""
    import math
    import sys

    import numpy as np

    from analysis import schema

    if "model" not in table.columns or "hardware" not in table.columns:
        missing = [c for c in ("model", "hardware") if c not in table.columns]
        raise ValueError(f"{path}: not a points table: no {' or '.join(repr(c) for c in missing)} column")
    t = table.reset_index(drop=True).copy()
    bad = pd.Series("", index=t.index, dtype=object)
    for col in [c for c in schema.NUMERIC_COLUMNS if c in t.columns and c not in schema.OBJECT_COLUMNS]:
        raw = t[col]
        if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
            num, words = raw.astype(float), pd.Series(False, index=t.index)
        else:  # text or booleans: each cell as ingest reads it ("1,024" and "none" are numbers; True is not)
            cells = [_as_number(v, col) for v in raw]
            num = pd.Series([c[0] for c in cells], index=t.index, dtype=float)
            words = pd.Series([c[1] for c in cells], index=t.index)
        inf = np.isinf(num.to_numpy(dtype=float, na_value=math.nan))
        low = (num <= 0) if col in schema.POSITIVE else (num < 0) if col in schema.NON_NEGATIVE else \
            pd.Series(False, index=t.index)
        for mask, why in ((words, "expected a number, got {!r}"), (pd.Series(inf, index=t.index), "not finite: {!r}"),
                          (low.fillna(False), "{!r} is out of range (" + (">0" if col in schema.POSITIVE else ">=0")
                           + ")")):
            hit = mask & (bad == "")
            bad[hit] = [f"{col}: " + why.format(v) for v in raw[hit]]
        t[col] = num.astype(float)
    for col in schema.COLUMNS:
        if col not in t.columns:
            t[col] = schema._default(col)
    if (bad != "").any():
        out = report or sys.stderr
        rows = bad[bad != ""]
        for i, why in list(rows.items())[:20]:
            out.write(f"{path}: row {i + 2 if path.suffix.lower() == '.csv' else i}: {why} (row quarantined)\n")
        if len(rows) > 20:
            out.write(f"{path}: {len(rows) - 20} more rows quarantined\n")
        out.write(f"{path}: {len(rows)} of {len(t)} rows quarantined, {len(t) - len(rows)} kept\n")
        t = t[bad == ""].reset_index(drop=True)
    return t


def load_requests(path: str | Path | None = None) -> pd.DataFrame:
    """The per-request table ingest writes (default ``data/processed/requests.parquet``; a CSV is read too), or a
    folder of raw logs, ingested on the fly. A missing default file gives an empty table: per-request rows are
    optional (most logs keep summaries only)."""
    if path is None:
        path = config.REQUESTS_FILE
        if not path.exists():
            return pd.DataFrame(columns=["source_file", "run_id", "request_index", "error"])
    path = Path(path)
    if path.is_dir():
        from analysis.ingest import ingest

        return ingest([path], progress=False).requests
    if not path.exists():
        raise FileNotFoundError(f"{path}: requests table not found; run `perfclaims ingest` first")
    return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)


def load_points_and_requests(path: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Points and per-request rows from one argument: a points table (the requests table is read from the same
    folder when there), a requests table (``request_index`` column; the points table must sit beside it) or a
    folder of raw logs (ingested once, nothing written)."""
    path = Path(path) if path is not None else config.POINTS_FILE
    if path.is_dir():
        from analysis.ingest import ingest

        result = ingest([path], progress=False)
        return result.points, result.requests
    if not path.exists():
        raise FileNotFoundError(f"{path}: table not found; run `perfclaims ingest` first")
    table = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    if "request_index" in table.columns:
        beside = path.with_name("points" + path.suffix)
        if not beside.exists():
            raise FileNotFoundError(f"{path}: a requests table needs its points table beside it ({beside})")
        return load_points(beside), table
    beside = path.with_name("requests" + path.suffix)
    return table, (load_requests(beside) if beside.exists() else load_requests(path.parent / "requests.parquet")
                   if (path.parent / "requests.parquet").exists() else pd.DataFrame())


# --- step-log records: model geometry and measured ceilings ---------------------------------------
CALIBRATION_FILE = config.PROCESSED_DATA_DIR / "calibration.parquet"
STEP_LOG_KINDS = ("env", "model", "calibration")


def load_calibration(path: str | Path | None = None) -> pd.DataFrame:
    """The step-timing logs' non-timing records as a table: one row per ``env``, ``model`` or ``calibration``
    record, with ``source_file`` (the log's name), ``kind`` and the record's own fields (``shape``, ``layers``,
    ``kv_heads``…, ``what``, ``tb_s``, ``tflop_s``, ``gpu``).

    ``path``: a parquet table of those rows, a step-timing JSONL file, or a folder of them. Default:
    ``data/processed/calibration.parquet`` when ingest wrote one, else the logs in ``data/raw/h200``. A missing
    path gives an empty table (no floors known), never an error: the floors are optional.
    """
    if path is None:
        path = CALIBRATION_FILE if CALIBRATION_FILE.exists() else config.RAW_DATA_DIR / "h200"
    path = Path(path)
    if path.suffix == ".parquet" and path.exists():
        return pd.read_parquet(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else ([path] if path.exists() else [])
    rows = []
    for file in files:
        with open(file, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # ingest quarantines broken lines; here they simply carry no calibration
                if isinstance(rec, dict) and rec.get("kind") in STEP_LOG_KINDS:
                    rows.append({"source_file": file.name, **rec})
    return pd.DataFrame(rows, columns=None if rows else ["source_file", "kind"])


# --- fits and their bootstrap draws ---------------------------------------------------------------
def draws_path(fits_path: str | Path) -> Path:
    """The sidecar that keeps a fits table's bootstrap draws: ``fits.csv`` -> ``fits.draws.parquet``."""
    p = Path(fits_path)
    return p.with_name(p.name.rsplit(".", 1)[0] + ".draws.parquet")


def write_fits(fits: pd.DataFrame, draws: pd.DataFrame | None, path: str | Path) -> tuple[Path, Path | None]:
    """Write the fits table (CSV) and, beside it, its bootstrap draws (parquet, one row per group and draw)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    csv_safe(fits).to_csv(path, index=False)  # model and hardware names may start like a formula
    if draws is None:
        return path, None
    side = draws_path(path)
    draws.to_parquet(side, index=False)
    return path, side


def load_fits(path: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A fits table written by :func:`write_fits` (default ``data/processed/fits.csv``) and its draws, or None
    for the draws when the sidecar is missing (a fits file from before draws were kept)."""
    path = Path(path) if path is not None else config.FITS_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path}: no fits file; run `perfclaims fit --out {path}` first")
    fits = csv_unescape(pd.read_csv(path))
    side = draws_path(path)
    return fits, (pd.read_parquet(side) if side.exists() else None)
