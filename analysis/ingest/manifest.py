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

Speculative decoding a log does not describe: ``spec_method``, ``draft_tokens``, ``acceptance_length`` (tokens
committed per verify step, the bonus token included: at least 1, at most drafted + 1) and ``acceptance_source``
(required with an acceptance length: measured, forced, golden, stated, assumed). ``launch_settings: <file>`` (relative
to the manifest's folder) reads them from the run's recorded launch settings (a recipe, launch command, server log;
:mod:`analysis.ingest.launch`), which detects forced acceptance with each engine's off-by-one; values written in the
entry itself win over the file's. A value out of range, or a launch file that cannot be read, is left out and
reported in the quarantine naming the manifest, the entry and the key.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from analysis import safe_yaml
from analysis.ingest.launch import LaunchError, read_launch_settings
from analysis.schema import COLUMNS, FieldError, check_spec, validate_row

LAUNCH_KEY = "launch_settings"  # a file, not a column: its speculative-decoding settings become column values
ALLOWED_KEYS = (set(COLUMNS) - {"source_file", "source_line", "format", "tool"}) | {LAUNCH_KEY}
SPEC_KEYS = ("spec_method", "draft_tokens", "acceptance_length", "acceptance_source")


class ManifestError(ValueError):
    pass


# The alias guard is shared with the claim files (analysis.safe_yaml); the names stay importable from here.
MAX_ALIASES, MAX_NODES = safe_yaml.MAX_ALIASES, safe_yaml.MAX_NODES


class _LimitedLoader(safe_yaml.LimitedLoader):
    """The shared guarded loader, its refusal raised as a ManifestError (what readers of manifest-like files,
    e.g. published tables, catch)."""

    def compose_node(self, parent, index):
        try:
            return super().compose_node(parent, index)
        except safe_yaml.AliasBomb as err:
            raise ManifestError(str(err)) from None

    def get_single_node(self):
        try:
            return super().get_single_node()
        except safe_yaml.AliasBomb as err:
            raise ManifestError(str(err)) from None


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
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ManifestError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise ManifestError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        doc = safe_yaml.load(text) or {}
    except yaml.YAMLError as err:
        raise ManifestError(f"{path}: not valid YAML: {err}") from None
    except (ManifestError, safe_yaml.AliasBomb) as err:
        raise ManifestError(f"{path}: {err}") from None
    except RecursionError:
        raise ManifestError(f"{path}: YAML nested too deeply") from None
    if not isinstance(doc, dict):
        raise ManifestError(f"{path}: expected a mapping with 'defaults' and 'files'")
    defaults = doc.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ManifestError(f"{path}: 'defaults' must be a mapping of column: value")
    problems: list[dict] = []
    _check_keys(path, "defaults", defaults)
    defaults = _checked_values("defaults", _with_launch(path.parent, "defaults", defaults, problems), problems)
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
        values = _with_launch(path.parent, where, values, problems)
        entries.append((str(entry["glob"]), _checked_values(where, values, problems)))
    return Manifest(root=path.parent, defaults=defaults, entries=entries, source=path, problems=problems)


def _with_launch(folder: Path, where: str, values: dict, problems: list[dict]) -> dict:
    """``values`` with ``launch_settings`` replaced by the speculative-decoding columns its file gives (the entry's
    own values win); a file that cannot be read is a problem naming the entry and the file, and gives nothing."""
    if LAUNCH_KEY not in values:
        return values
    values = dict(values)
    name = values.pop(LAUNCH_KEY)
    if not isinstance(name, str) or not name.strip():
        problems.append({"field": f"{where}.{LAUNCH_KEY}",
                         "reason": f"{LAUNCH_KEY} must be a file name, got {name!r}; ignored"})
        return values
    target = folder / name
    if not target.is_file():
        problems.append({"field": f"{where}.{LAUNCH_KEY}", "reason": f"launch settings {name}: no such file; ignored"})
        return values
    try:
        found = read_launch_settings(target).columns()
    except LaunchError as err:
        at = f" ({err.field})" if err.field else ""
        problems.append({"field": f"{where}.{LAUNCH_KEY}", "reason": f"launch settings {name}{at}: {err.reason}; "
                                                                     "ignored"})
        return values
    return {**found, **values}


def _checked_spec(where: str, kept: dict, problems: list[dict]) -> None:
    """The entry's speculative-decoding values checked together (an acceptance length needs its source and at most
    drafted + 1 tokens); the values of a failing pair are left out of ``kept``."""
    given = {k: kept[k] for k in SPEC_KEYS if k in kept}
    if "acceptance_length" in given and str(given.get("acceptance_source", "")).strip().lower() in ("", "unknown"):
        problems.append({"field": f"{where}.acceptance_source",
                         "reason": "an acceptance_length needs its acceptance_source (measured, forced, golden, "
                                   "stated or assumed); acceptance_length ignored"})
        kept.pop("acceptance_length")
        given.pop("acceptance_length")
    try:
        check_spec(validate_row(given), given)
    except FieldError as err:
        problems.append({"field": f"{where}.{err.field}", "reason": f"manifest value {err.reason}; ignored"})
        kept.pop(err.field, None)


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
        if isinstance(value, float) and value != value:  # YAML .nan: it would erase what the log itself states
            problems.append({"field": f"{where}.{key}",
                             "reason": f"manifest value for {key} is NaN (.nan), not a value; ignored"})
            continue
        try:
            validate_row({key: value})
        except FieldError as err:
            problems.append({"field": f"{where}.{key}", "reason": f"manifest value {err.reason}; ignored"})
            continue
        kept[key] = value
    _checked_spec(where, kept, problems)
    return kept


def _check_keys(path: Path, where: str, values: dict) -> None:
    bad = sorted(set(values) - ALLOWED_KEYS)
    if bad:
        raise ManifestError(f"{path}: {where}: unknown key(s) {', '.join(bad)}; allowed are points-table columns")
