"""The numbers a notebook hands back (``save_results``), read back by the index, the history and the tests."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any


def _jsonable(value: Any):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "to_dict"):
        return _jsonable(value.to_dict())
    if isinstance(value, Path):
        return str(value)
    return value


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to a temporary sibling of ``path`` and rename it over ``path``: readers see old or new, never half."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:  # disk full, interrupted: no half file left to keep the disk full
        tmp.unlink(missing_ok=True)
        raise


def save_results(results: dict, path: str | Path | None) -> None:
    """Write the numbers a notebook computed to ``path`` (JSON); nothing when ``path`` is None."""
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(_jsonable(results), indent=2, sort_keys=True))


def load_results(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def flatten(results: dict, prefix: str = "") -> dict[str, float]:
    """Every number in ``results`` under a dotted key (``a.b[2].c``); booleans as 0/1, text and nulls left out."""
    flat: dict[str, float] = {}
    items = results.items() if isinstance(results, dict) else enumerate(results)
    for k, v in items:
        key = f"{prefix}[{k}]" if isinstance(k, int) else (f"{prefix}.{k}" if prefix else str(k))
        if isinstance(v, (dict, list, tuple)):
            flat.update(flatten(v, key))
        elif isinstance(v, bool):
            flat[key] = float(v)
        elif isinstance(v, (int, float)) and math.isfinite(float(v)):
            flat[key] = float(v)
    return flat
