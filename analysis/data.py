"""The one data-access layer: where the tables ingest writes are read from (paths from :mod:`analysis.config`).

Estimators, frontiers, claim cards and reports take tables, never raw files; this module is how they get them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import config


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
    if path.suffix == ".csv":
        return pd.read_csv(path)
    return pd.read_parquet(path)
