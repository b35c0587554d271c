"""A deployment described in a YAML or JSON file, in the points table's own column names.

Keys: ``model`` and ``hardware`` (required), ``n_gpus``, ``tp``, ``ep``, ``dp``, ``precision`` (or ``recipe:
native``), ``spec_method``, ``acceptance_length``, ``draft_tokens``, ``isl``, ``osl``, ``context_len``,
``framework``, ``disagg``, ``n_prefill_gpus``, ``n_decode_gpus``, ``n_workers``, ``kv_dtype``. Missing keys take
:data:`DEFAULTS` (documented in the README's "perfclaims model" section). An unknown key, a value of the wrong
type, or a model or hardware the spec tables do not know is a ``ValueError`` naming the file and the key.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import yaml

from analysis import specs
from analysis.perfmodel import step as st

DEFAULTS = {
    "n_gpus": 1, "tp": "the worker's GPU count", "ep": 1, "dp": 1, "precision": "native", "spec_method": "none",
    "acceptance_length": "none (τ = 1 without speculation; the calibrated τ for MTP/EAGLE, labelled assumed)",
    "draft_tokens": st.DEFAULT_DRAFT_TOKENS, "isl": 1024, "osl": 1024, "context_len": "isl + osl/2",
    "framework": "unknown (the hardware family's calibration)", "disagg": False, "n_prefill_gpus": 0,
    "n_decode_gpus": "n_gpus − n_prefill_gpus", "n_workers": "decode GPUs ÷ worker GPUs", "kv_dtype": "the recipe's",
    "date": "none (the newest runs' software; a date applies its cell's measured drift)",
}
_INTS = {"n_gpus", "tp", "ep", "dp"}
_FLOATS = {"acceptance_length", "draft_tokens", "isl", "osl", "context_len", "n_prefill_gpus", "n_decode_gpus",
           "n_workers"}
_TEXT = {"model", "hardware", "precision", "spec_method", "framework", "kv_dtype"}


def parse(doc: dict, *, where: str = "config") -> st.Deployment:
    """A :class:`~analysis.perfmodel.step.Deployment` from a mapping (``where`` names it in errors)."""
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a mapping of points-table columns, got {type(doc).__name__}")
    doc = dict(doc)
    if "recipe" in doc:
        recipe = doc.pop("recipe")
        doc.setdefault("precision", recipe)
    allowed = set(st.CONFIG_KEYS)
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; keys are the points table's columns: "
                         f"{', '.join(sorted(allowed))}")
    for key in ("model", "hardware"):
        if not doc.get(key):
            raise ValueError(f"{where}: {key!r} is required")
    out = {}
    for k, v in doc.items():
        if v is None:
            continue
        try:
            if k in _INTS:
                if float(v) != int(float(v)) or int(float(v)) < 0:
                    raise ValueError
                out[k] = int(float(v))
            elif k in _FLOATS:
                out[k] = float(v)
                if math.isnan(out[k]) or out[k] < 0:
                    raise ValueError
            elif k == "date":
                out[k] = str(v)  # YAML reads 2026-02-27 as a date: its str() is the ISO form the points carry
                if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", out[k]):
                    raise ValueError
            elif k == "disagg":
                if not isinstance(v, bool):
                    raise ValueError
                out[k] = v
            else:
                out[k] = str(v)
        except (TypeError, ValueError):
            expected = ("a whole number" if k in _INTS else "true or false" if k == "disagg" else
                        "a date YYYY-MM-DD" if k == "date" else "a number")
            raise ValueError(f"{where}: {k!r} has value {v!r}, expected {expected}") from None
    try:
        specs.model(out["model"])
    except KeyError as err:
        raise ValueError(f"{where}: {err.args[0]}") from None
    try:
        specs.hardware(out["hardware"])
    except KeyError as err:
        raise ValueError(f"{where}: {err.args[0]}") from None
    return st.Deployment(**out)


def load(path: str | Path) -> st.Deployment:
    """Read a ``.yaml``/``.yml``/``.json`` deployment file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such config file")
    if not path.is_file():
        raise ValueError(f"{path}: not a file (a config is one .yaml, .yml or .json file)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: byte {err.start}: not UTF-8 text") from None
    except OSError as err:
        raise ValueError(f"{path}: cannot be read ({err.strerror or type(err).__name__})") from None
    try:
        doc = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        line = getattr(err, "lineno", None) or getattr(getattr(err, "problem_mark", None), "line", -1) + 1
        raise ValueError(f"{path}: line {line}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}"
                         ) from None
    return parse(doc, where=str(path))
