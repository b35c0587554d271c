"""Every path of the project, built from the project root, so no module or notebook hard-codes one."""

from __future__ import annotations

import os
from pathlib import Path

PROJ_ROOT = Path(os.environ.get("PERFCLAIMS_ROOT", Path(__file__).resolve().parents[1]))

DATA_DIR = PROJ_ROOT / "data"
RAW_DATA_DIR = DATA_DIR / "raw"
PROCESSED_DATA_DIR = DATA_DIR / "processed"
SPECS_DIR = DATA_DIR / "specs"
CLAIMS_DIR = DATA_DIR / "claims"
MANIFEST_FILE = RAW_DATA_DIR / "manifest.yml"

NOTEBOOKS_DIR = PROJ_ROOT / "notebooks"
SUITE_FILE = NOTEBOOKS_DIR / "suite.yml"
REPORTS_DIR = PROJ_ROOT / "reports"

POINTS_FILE = PROCESSED_DATA_DIR / "points.parquet"
REQUESTS_FILE = PROCESSED_DATA_DIR / "requests.parquet"
QUARANTINE_FILE = PROCESSED_DATA_DIR / "quarantine.csv"
FITS_FILE = PROCESSED_DATA_DIR / "fits.csv"
