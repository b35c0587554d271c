"""The 01-ingest report as one object: what was read, what was quarantined or skipped and why, which flags the
points carry (warnings before notes), and the manifest entries that would name unknown hardware.

Built from the folder ``perfclaims ingest`` writes; the notebook only displays its parts. Sentences hold numbers
and fixed words only; every data-derived string reaches the page through ``report.show_table`` (escaped cells).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis import inventory, text


@dataclass
class IngestPage:
    points: pd.DataFrame
    quarantine: pd.DataFrame
    files: pd.DataFrame
    tools: pd.DataFrame = field(init=False)
    flags: pd.DataFrame = field(init=False)

    def __post_init__(self):
        self.tools = inventory.by_tool(self.files, self.quarantine)
        self.flags = inventory.flag_counts(self.points)

    @classmethod
    def load(cls, processed_dir: str | Path | None = None) -> IngestPage:
        return build(processed_dir=processed_dir)

    # --- numbers -------------------------------------------------------------------------------------------
    @property
    def n_files(self) -> int:
        return int(self.tools["files"].sum()) if len(self.tools) else 0

    @property
    def n_untrusted(self) -> int:
        return inventory.untrusted_count(self.points)

    @property
    def skipped(self) -> pd.DataFrame:
        return inventory.skipped_paths(self.files)

    @property
    def hints(self) -> pd.DataFrame:
        return inventory.unknown_hardware_hints(self.points, self.files)

    @property
    def warnings(self) -> pd.DataFrame:
        return self.flags[self.flags["kind"] == "warning"].reset_index(drop=True)

    @property
    def notes(self) -> pd.DataFrame:
        return self.flags[self.flags["kind"] == "note"].drop(columns="left_out_of_fits").reset_index(drop=True)

    @property
    def configuration(self) -> pd.DataFrame:
        return inventory.by_configuration(self.points)

    @property
    def models(self) -> pd.DataFrame:
        """Points per model × source kind × workload: the hardware covered and how many distinct sources (URLs
        or files) stand behind them, so a published table is never read as a raw log."""
        return models_table(self.points)

    @property
    def without_points(self) -> pd.DataFrame:
        return inventory.files_without_points(self.files)

    @property
    def reasons(self) -> pd.DataFrame:
        return inventory.quarantine_reasons(self.quarantine)

    # --- sentences -----------------------------------------------------------------------------------------
    def headline(self) -> str:
        count = text.count
        n_tools = self.points["tool"].nunique() if len(self.points) else 0
        parts = [f"{count(len(self.points), 'point')} read from {count(self.n_files, 'file')} "
                 f"by {count(n_tools, 'tool')}",
                 f"{count(len(self.quarantine), 'record')} quarantined",
                 f"{count(self.n_untrusted, 'point')} kept but left out of fits"]
        if len(self.skipped):
            parts.append(f"{count(len(self.skipped), 'path')} skipped")
        return "; ".join(parts) + "."

    def hint_text(self) -> str:
        hints = self.hints
        if hints.empty:
            return "Every point names its hardware."
        n = int(hints["points"].sum())
        return (f"{text.count(n, 'point')} have hardware `unknown`: the logs do not say which GPU ran them. "
                "Add one entry per row below to the manifest named in the row (globs are relative to its "
                "folder), then rerun `perfclaims ingest`:\n\n"
                "```yaml\n- glob: \"<glob from the table>\"\n  hardware: <GPU name, e.g. H200 SXM>\n"
                "  n_gpus: <GPUs the run used>\n```")

    def flag_text(self) -> str:
        if self.flags.empty:
            return "No point carries a flag."
        return (f"**Warnings** mark points a reader should doubt ({text.count(len(self.warnings), 'kind')}); "
                "those marked *left out of fits* are not used by any fit, frontier or claim. "
                f"**Notes** record properties of a tool's data ({text.count(len(self.notes), 'kind')}); "
                "nothing is wrong with those points.")

    def quarantine_text(self) -> str:
        if self.quarantine.empty:
            return "Nothing was quarantined."
        return (f"{len(self.quarantine)} records in {self.quarantine['source_file'].nunique()} files "
                "could not be read as points; grouped by reason:")

    def skipped_text(self) -> str:
        if self.skipped.empty:
            return "Every path under the given folders was read."
        return f"{text.count(len(self.skipped), 'path')} not read as logs, each with the reason:"

    def results(self) -> dict:
        reasons = self.reasons
        return {
            "headline": self.headline(),
            "points": len(self.points),
            "files": self.n_files,
            "quarantined": len(self.quarantine),
            "untrusted": self.n_untrusted,
            "skipped": len(self.skipped),
            "unknown_hardware": int(self.hints["points"].sum()) if len(self.hints) else 0,
            "warnings": dict(zip(self.warnings["flag"], self.warnings["points"])),
            "notes": dict(zip(self.notes["flag"], self.notes["points"])),
            "points_by_tool": self.points.groupby("tool").size().to_dict() if len(self.points) else {},
            "points_by_source_kind": (self.points["source_kind"].fillna("unknown").value_counts().to_dict()
                                      if "source_kind" in self.points and len(self.points) else {}),
            "quarantine_reasons": reasons.set_index("reason")["records"].to_dict() if len(reasons) else {},
        }



def models_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per model, source kind (``published-table``, ``raw-log`` ...) and workload (``agentx``, ``random-capped``
    ...; ``unknown`` when the source does not say): points, hardware and distinct sources."""
    if points.empty:
        return pd.DataFrame(columns=["model", "source_kind", "workload", "points", "hardware", "sources"])
    url = (points["source_url"] if "source_url" in points else pd.Series("", index=points.index)).fillna("")
    url = url.astype(str).str.split(" [", regex=False).str[0]
    source = url.where(~url.isin(["", "unknown"]), points["source_file"].astype(str))
    frame = points.assign(
        source_kind=points["source_kind"].fillna("unknown") if "source_kind" in points else "unknown",
        workload=points["workload"].fillna("unknown") if "workload" in points else "unknown", _source=source)
    return (frame.groupby(["model", "source_kind", "workload"], dropna=False)
            .agg(points=("model", "size"), hardware=("hardware", lambda s: ", ".join(sorted(set(map(str, s))))),
                 sources=("_source", "nunique"))
            .reset_index().sort_values(["model", "source_kind", "workload"], ignore_index=True))


def rows_read(points: pd.DataFrame) -> pd.DataFrame:
    """Every row: the inventory counts the whole points table (the report runner hashes all of it)."""
    return points


def build(points: pd.DataFrame | None = None, *, processed_dir: str | Path | None = None) -> IngestPage:
    """The page for the folder ``perfclaims ingest`` wrote (``processed_dir``, default ``data/processed``): its
    quarantine and file inventory, and ``points`` when given (else the points table there)."""
    tables = inventory.load_processed(processed_dir)
    return IngestPage(points=tables["points"] if points is None else points, quarantine=tables["quarantine"],
                      files=tables["files"])
