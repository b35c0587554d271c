"""manifest.yml: what the logs themselves lack (hardware, GPU count, scope, precision, model, framework).

Format::

    defaults:            # applied to every file (optional)
      framework: vllm
    files:
      - glob: "h200/*.jsonl"      # relative to the manifest's folder; ** matches any depth
        hardware: H200 SXM
        n_gpus: 1
        scope: single-gpu

Later entries win over earlier ones, and every manifest value wins over what a parser guessed from names and
paths. A key the manifest does not give stays as the parser found it (``unknown`` if it found nothing).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from analysis.schema import COLUMNS

ALLOWED_KEYS = set(COLUMNS) - {"source_file", "source_line", "format", "tool"}


class ManifestError(ValueError):
    pass


@dataclass
class Manifest:
    root: Path
    defaults: dict = field(default_factory=dict)
    entries: list[tuple[str, dict]] = field(default_factory=list)
    source: Path | None = None

    def values_for(self, path: Path) -> dict:
        """Manifest values for one file, defaults first, then every matching entry in order."""
        out = dict(self.defaults)
        try:
            rel = Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            rel = Path(path).as_posix()
        for pattern, values in self.entries:
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(path).name, pattern):
                out.update(values)
        return out


def load_manifest(path: Path | None, root: Path | None = None) -> Manifest:
    """Read a manifest; a missing path gives an empty one. Unknown keys are an error naming the entry."""
    if path is None or not Path(path).exists():
        return Manifest(root=Path(root or "."))
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ManifestError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(doc, dict):
        raise ManifestError(f"{path}: expected a mapping with 'defaults' and 'files'")
    defaults = doc.get("defaults") or {}
    _check_keys(path, "defaults", defaults)
    entries = []
    for i, entry in enumerate(doc.get("files") or []):
        if not isinstance(entry, dict) or "glob" not in entry:
            raise ManifestError(f"{path}: files[{i}] needs a 'glob'")
        values = {k: v for k, v in entry.items() if k != "glob"}
        _check_keys(path, f"files[{i}] ({entry['glob']})", values)
        entries.append((str(entry["glob"]), values))
    return Manifest(root=path.parent, defaults=defaults, entries=entries, source=path)


def _check_keys(path: Path, where: str, values: dict) -> None:
    bad = sorted(set(values) - ALLOWED_KEYS)
    if bad:
        raise ManifestError(f"{path}: {where}: unknown key(s) {', '.join(bad)}; allowed are points-table columns")
