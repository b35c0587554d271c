"""Run the notebook suite under papermill and publish HTML reports with an index.

The suite is listed in ``notebooks/suite.yml``. Each entry runs once per parameter set; the executed notebook
is converted to HTML with the code hidden; ``index.html`` links every report with its title, parameters,
inputs and status. A notebook that fails is marked failed in the index and the others are still written.

Notebooks hand numbers back through :func:`save_results` (a JSON file named by the ``results_path``
parameter), which the index and the tests read.
"""

from __future__ import annotations

import json
import math
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


def save_results(results: dict, path: str | Path | None) -> None:
    """Write the numbers a notebook computed to ``path`` (JSON); nothing when ``path`` is None."""
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_jsonable(results), indent=2, sort_keys=True))


def load_results(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())
