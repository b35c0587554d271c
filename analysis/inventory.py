"""What an ingest read: counts per tool, format, hardware and scope, the quarantine grouped by reason, flags.

Feeds the ``01-ingest`` report. Reads the files ``perfclaims ingest`` writes; computes tables only.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pandas as pd

from analysis import config, schema
from analysis.text import csv_unescape


def load_processed(processed_dir: Path | None = None) -> dict[str, pd.DataFrame]:
    """points, quarantine and files tables from an ingest output folder."""
    d = Path(processed_dir or config.PROCESSED_DATA_DIR)
    points_path = d / "points.parquet"
    if not points_path.exists():
        raise FileNotFoundError(f"{points_path}: run `perfclaims ingest` (or `make report`) first")
    out = {"points": pd.read_parquet(points_path)}
    for name in ("quarantine", "files"):
        path = d / f"{name}.csv"
        out[name] = csv_unescape(pd.read_csv(path)) if path.exists() and path.stat().st_size else pd.DataFrame()
    return out


def by_tool(files: pd.DataFrame, quarantine: pd.DataFrame) -> pd.DataFrame:
    """Files, points and quarantined records per tool and format (paths that were skipped are listed apart)."""
    if not files.empty and "format" in files.columns:
        files = files[files["format"] != "skipped"]
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
    rows = files[~files["status"].astype(str).str.startswith("points") & (files["status"].astype(str) != "skipped")]
    return rows[["source_file", "format", "status", "note"]].fillna("")


def skipped_paths(files: pd.DataFrame) -> pd.DataFrame:
    """Paths the walk did not read (hidden, symlinks, special files, manifests, docs) with the reason for each."""
    if files.empty or "status" not in files.columns:
        return pd.DataFrame(columns=["source_file", "reason"])
    rows = files[files["status"].astype(str) == "skipped"]
    return rows[["source_file", "note"]].rename(columns={"note": "reason"}).fillna("").reset_index(drop=True)


def manifests_read(files: pd.DataFrame) -> list[str]:
    """The manifest files the ingest found (listed in files.csv as skipped: read for metadata, not as logs)."""
    skipped = skipped_paths(files)
    return sorted(skipped.loc[skipped["reason"].astype(str).str.startswith("manifest"), "source_file"])


def unknown_hardware_hints(points: pd.DataFrame, files: pd.DataFrame | None = None) -> pd.DataFrame:
    """For points whose hardware is unknown: the manifest entry that would name it, one row per folder.

    ``glob`` is relative to the manifest's folder (the nearest manifest.yml above the files, as ingest reads it);
    with no manifest found it is relative to the folder that was ingested, for a new ``manifest.yml`` there.
    """
    columns = ["manifest", "glob", "points", "models", "tools"]
    if points.empty:
        return pd.DataFrame(columns=columns)
    unknown = points[points["hardware"].astype(str) == "unknown"]
    if unknown.empty:
        return pd.DataFrame(columns=columns)
    manifests = manifests_read(files) if files is not None else []
    rows = []
    for source, group in unknown.groupby("source_file"):
        path = PurePosixPath(str(source))
        manifest, folder = _nearest_manifest(path, manifests)
        rel = path.relative_to(folder) if folder is not None else PurePosixPath(*path.parts[1:])
        parent = rel.parent.as_posix()
        glob = (f"{parent}/" if parent not in ("", ".") else "") + f"*{path.suffix}"
        rows.append({"manifest": manifest or "manifest.yml (new, in the folder you ingested)", "glob": glob,
                     "points": len(group), "model": group["model"], "tool": group["tool"]})
    frame = pd.DataFrame(rows)
    out = (frame.groupby(["manifest", "glob"])
           .agg(points=("points", "sum"),
                models=("model", lambda s: ", ".join(sorted({m for ms in s for m in ms}))),
                tools=("tool", lambda s: ", ".join(sorted({t for ts in s for t in ts}))))
           .reset_index().sort_values(["points", "glob"], ascending=[False, True]))
    return out[columns].reset_index(drop=True)


def _nearest_manifest(path: PurePosixPath, manifests: list[str]) -> tuple[str | None, PurePosixPath | None]:
    best = None
    for manifest in manifests:
        folder = PurePosixPath(manifest).parent
        if folder in path.parents and (best is None or len(folder.parts) > len(best[1].parts)):
            best = (manifest, folder)
    return best if best else (None, None)
