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

from analysis.schema import COLUMNS, FieldError, validate_row

ALLOWED_KEYS = set(COLUMNS) - {"source_file", "source_line", "format", "tool"}


class ManifestError(ValueError):
    pass


@dataclass
class Manifest:
    root: Path
    defaults: dict = field(default_factory=dict)
    entries: list[tuple[str, dict]] = field(default_factory=list)
    source: Path | None = None
    problems: list[dict] = field(default_factory=list)  # {"field", "reason"}: values ignored, in words

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
    if not isinstance(defaults, dict):
        raise ManifestError(f"{path}: 'defaults' must be a mapping of column: value")
    problems: list[dict] = []
    _check_keys(path, "defaults", defaults)
    defaults = _checked_values("defaults", defaults, problems)
    entries = []
    files = doc.get("files") or []
    if not isinstance(files, list):
        raise ManifestError(f"{path}: 'files' must be a list of entries with a 'glob'")
    for i, entry in enumerate(files):
        if not isinstance(entry, dict) or "glob" not in entry:
            raise ManifestError(f"{path}: files[{i}] needs a 'glob'")
        values = {k: v for k, v in entry.items() if k != "glob"}
        where = f"files[{i}] ({entry['glob']})"
        _check_keys(path, where, values)
        entries.append((str(entry["glob"]), _checked_values(where, values, problems)))
    return Manifest(root=path.parent, defaults=defaults, entries=entries, source=path, problems=problems)


def _checked_values(where: str, values: dict, problems: list[dict]) -> dict:
    """The values a points row can hold; each one that cannot (a number above 1e308, a negative count, a list
    where a scalar belongs) is left out and reported as a problem naming the entry and the key."""
    kept = {}
    for key, value in values.items():
        if isinstance(value, (dict, list)):
            problems.append({"field": f"{where}.{key}",
                             "reason": f"manifest value for {key} must be a single value, not a "
                                       f"{type(value).__name__}; ignored"})
            continue
        try:
            validate_row({key: value})
        except FieldError as err:
            problems.append({"field": f"{where}.{key}", "reason": f"manifest value {err.reason}; ignored"})
            continue
        kept[key] = value
    return kept


def _check_keys(path: Path, where: str, values: dict) -> None:
    bad = sorted(set(values) - ALLOWED_KEYS)
    if bad:
        raise ManifestError(f"{path}: {where}: unknown key(s) {', '.join(bad)}; allowed are points-table columns")
