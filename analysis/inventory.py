"""What an ingest read: counts per tool, format, hardware and scope, the quarantine grouped by reason, flags.

Feeds the ``01-ingest`` report. Reads the files ``perfclaims ingest`` writes; computes tables only.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import config, schema

def count(n: int, noun: str) -> str:
    """``count(1, "record")`` -> "1 record", ``count(3, "record")`` -> "3 records"."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def load_processed(processed_dir: Path | None = None) -> dict[str, pd.DataFrame]:
    """points, quarantine and files tables from an ingest output folder."""
    d = Path(processed_dir or config.PROCESSED_DATA_DIR)
    points_path = d / "points.parquet"
    if not points_path.exists():
        raise FileNotFoundError(f"{points_path}: run `perfclaims ingest` (or `make report`) first")
    out = {"points": pd.read_parquet(points_path)}
    for name in ("quarantine", "files"):
        path = d / f"{name}.csv"
        out[name] = pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()
    return out


def by_tool(files: pd.DataFrame, quarantine: pd.DataFrame) -> pd.DataFrame:
    """Files, points and quarantined records per tool and format."""
    if files.empty:
        return pd.DataFrame(columns=["tool", "format", "files", "points", "quarantined"])
    table = (files.groupby(["tool", "format"]).agg(files=("source_file", "size"), points=("points", "sum"),
                                                   quarantined=("quarantined", "sum"))
             .reset_index().sort_values(["points", "files"], ascending=False))
    return table.astype({"files": int, "points": int, "quarantined": int})


def by_configuration(points: pd.DataFrame) -> pd.DataFrame:
    """Points per hardware × scope × precision, with the load range each covers."""
    if points.empty:
        return pd.DataFrame()
    load = points["batch_size"].fillna(points["concurrency"])
    return (points.assign(load=load)
            .groupby(["hardware", "scope", "precision"], dropna=False)
            .agg(points=("model", "size"), models=("model", "nunique"), tools=("tool", lambda s: ", ".join(sorted(set(s)))),
                 load_min=("load", "min"), load_max=("load", "max"))
            .reset_index().sort_values(["hardware", "scope", "precision"]))


def quarantine_reasons(quarantine: pd.DataFrame) -> pd.DataFrame:
    """Quarantined records grouped by the kind of reason (the text before the first colon)."""
    if quarantine.empty:
        return pd.DataFrame(columns=["reason", "records", "example_file"])
    kind = quarantine["reason"].astype(str).str.split(":").str[0].str.strip()
    return (quarantine.assign(kind=kind).groupby("kind")
            .agg(records=("reason", "size"), example_file=("source_file", "first"))
            .reset_index().rename(columns={"kind": "reason"}).sort_values("records", ascending=False))


def flag_counts(points: pd.DataFrame) -> pd.DataFrame:
    """How many points carry each flag: warning or note, whether fits leave the point out, and what it means.

    Warnings (points a reader should doubt) come first, then notes (properties of a tool's data)."""
    flags = points["flags"].fillna("").str.split(";").explode()
    flags = flags[flags != ""]
    counts = flags.value_counts().rename_axis("flag").reset_index(name="points")
    info = [schema.flag_info(name) for name in counts["flag"]]
    counts["kind"] = [f.level for f in info]
    counts["left_out_of_fits"] = ["yes" if f.untrusted else "no" for f in info]
    counts["meaning"] = [f.meaning for f in info]
    order = counts["kind"].map({level: i for i, level in enumerate(schema.FLAG_LEVELS)})
    return (counts.assign(_order=order).sort_values(["_order", "points"], ascending=[True, False])
            .drop(columns="_order").reset_index(drop=True))


def untrusted_count(points: pd.DataFrame) -> int:
    """Points kept in the table but left out of fits and frontiers (an untrusted flag)."""
    return int((~schema.trusted(points)).sum()) if len(points) else 0


def files_without_points(files: pd.DataFrame) -> pd.DataFrame:
    """Files that gave no point of their own, and why (per-request data only, same run read elsewhere, quarantined)."""
    if files.empty or "status" not in files.columns:
        return pd.DataFrame(columns=["source_file", "format", "status", "note"])
    rows = files[~files["status"].astype(str).str.startswith("points")]
    return rows[["source_file", "format", "status", "note"]].fillna("")
