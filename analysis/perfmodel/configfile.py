"""A deployment described in a YAML or JSON file, in the points table's own column names.

Keys: ``model`` and ``hardware`` (required), ``n_gpus``, ``tp``, ``ep``, ``dp``, ``precision`` (or ``recipe:
native``), ``spec_method``, ``acceptance_length``, ``draft_tokens``, ``isl``, ``osl``, ``context_len``,
``framework``, ``disagg``, ``n_prefill_gpus``, ``n_decode_gpus``, ``n_workers``, ``kv_dtype``. Missing keys take
:data:`DEFAULTS` (documented in the README's "perfclaims model" section). An unknown key, a value of the wrong
type, or a model or hardware the spec tables do not know is a ``ValueError`` naming the file and the key.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path

import yaml

from analysis import roofline, specs
from analysis.perfmodel import recipes
from analysis.perfmodel import step as st
from analysis.text import plain
from analysis.text import whole as whole_text

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
MAX_GPUS = 100_000
MAX_TOKENS = 10_000_000  # a prompt, an output or a context: beyond any model's window
MAX_DRAFT = 64
# (lowest, highest, whole number) per numeric key: a value outside is a one-line error naming the key, never a
# prediction (n_gpus 0 had printed tok/s/GPU for 0 GPUs, isl 0 a division by zero, acceptance 1e6 a τ of 1e6)
RANGES = {"n_gpus": (1, MAX_GPUS, True), "tp": (1, MAX_GPUS, True), "ep": (1, MAX_GPUS, True),
          "dp": (1, MAX_GPUS, True), "acceptance_length": (1, MAX_DRAFT + 1, False),
          "draft_tokens": (1, MAX_DRAFT, True), "isl": (1, MAX_TOKENS, False), "osl": (1, MAX_TOKENS, False),
          "context_len": (1, MAX_TOKENS, False), "n_prefill_gpus": (0, MAX_GPUS, True),
          "n_decode_gpus": (1, MAX_GPUS, True), "n_workers": (1, MAX_GPUS, True)}


def _number(k: str, v) -> float:
    """``v`` as the number key ``k`` takes, within :data:`RANGES` (ValueError otherwise; booleans are not numbers)."""
    if isinstance(v, bool):
        raise ValueError
    f = float(v)
    lo, hi, whole = RANGES[k]
    if not math.isfinite(f) or f < lo or f > hi or (whole and f != int(f)):
        raise ValueError
    return f


def _expected(k: str) -> str:
    if k in RANGES:
        lo, hi, whole = RANGES[k]
        return f"{'a whole number' if whole else 'a number'} from {whole_text(lo)} to {whole_text(hi)}"
    return "true or false" if k == "disagg" else "a calendar date YYYY-MM-DD" if k == "date" else "text"


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
                out[k] = int(_number(k, v))
            elif k in _FLOATS:
                out[k] = _number(k, v)
            elif k == "date":
                out[k] = str(v)  # YAML reads 2026-02-27 as a date: its str() is the ISO form the points carry
                if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", out[k]):
                    raise ValueError
                datetime.date.fromisoformat(out[k])  # 2026-13-45 is no date
            elif k == "disagg":
                if not isinstance(v, bool):
                    raise ValueError
                out[k] = v
            else:
                if isinstance(v, (dict, list)):
                    raise ValueError
                out[k] = str(v)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{where}: {k!r} has value {v!r}, expected {_expected(k)}") from None
    _consistent(out, where)
    try:
        specs.model(out["model"])
    except KeyError as err:
        raise ValueError(f"{where}: {err.args[0]}") from None
    try:
        specs.hardware(out["hardware"])
    except KeyError as err:
        raise ValueError(f"{where}: {err.args[0]}") from None
    dep = st.Deployment(**out)
    try:
        roofline.parse_precision(recipes.recipe(dep.model, dep.precision).text,
                                 model=specs.model(specs.match_model_name(dep.model) or dep.model))
    except (KeyError, ValueError) as err:
        raise ValueError(f"{where}: 'precision' has value {dep.precision!r}: {err.args[0] if err.args else err}") \
            from None
    return dep


def _consistent(out: dict, where: str) -> None:
    """Cross-key checks: the GPUs a deployment splits must add up, and a τ must be one its drafts can give."""
    disagg = out.get("disagg", False)
    if disagg and "n_gpus" not in out and "n_prefill_gpus" in out and "n_decode_gpus" in out:
        out["n_gpus"] = int(out["n_prefill_gpus"] + out["n_decode_gpus"])  # a split names its two sides
    n = out.get("n_gpus", 1)
    if not disagg:
        # an aggregated deployment prefills and decodes on every GPU: the points table writes both counts as n_gpus
        for key in ("n_prefill_gpus", "n_decode_gpus"):
            if key in out and out[key] not in (0, n):
                raise ValueError(f"{where}: {key!r} is {plain(out[key])} but 'disagg' is not true: an aggregated "
                                 f"deployment prefills and decodes on all {n} GPUs (give {n}, or leave it out)")
        pre, decode = 0.0, n
    else:
        pre = out.get("n_prefill_gpus", 0.0)
        if pre >= n:
            raise ValueError(f"{where}: 'n_prefill_gpus' {plain(pre)} leaves no decode GPU of 'n_gpus' {n}"
                             + ("" if "n_gpus" in out else " (its default; give 'n_gpus')"))
        decode = out.get("n_decode_gpus", n - pre)
        if decode + pre > n:
            raise ValueError(f"{where}: 'n_decode_gpus' {plain(decode)} + 'n_prefill_gpus' {plain(pre)} exceed "
                             f"'n_gpus' {n}")
    worker = max(out.get("tp", 1), out.get("ep", 1), out.get("dp", 1))
    if worker > decode:
        raise ValueError(f"{where}: a worker of {worker} GPUs (the largest of 'tp', 'ep', 'dp') does not fit on "
                         f"{plain(decode)} decode GPUs")
    if decode % worker and "n_workers" not in out:
        raise ValueError(f"{where}: {plain(decode)} decode GPUs are not a whole number of {worker}-GPU workers (the "
                         "largest of 'tp', 'ep', 'dp'); set 'n_workers' if the deployment runs them so")
    if "n_workers" in out and out["n_workers"] * worker > decode:
        raise ValueError(f"{where}: 'n_workers' {plain(out['n_workers'])} of {worker} GPUs exceed {plain(decode)} decode GPUs")
    acc = out.get("acceptance_length")
    if acc is not None:
        if not st.speculates(out.get("spec_method")):
            raise ValueError(f"{where}: 'acceptance_length' {plain(acc)} needs a 'spec_method' (none is named)")
        drafts = out.get("draft_tokens", st.DEFAULT_DRAFT_TOKENS)
        if acc > drafts + 1:
            given = "is" if "draft_tokens" in out else "defaults to"
            raise ValueError(f"{where}: 'acceptance_length' {plain(acc)} exceeds the {plain(drafts)} drafted + 1 tokens a step "
                             f"verifies ('draft_tokens' {given} {plain(drafts)})")


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
    except ValueError as err:  # PyYAML builds 2026-13-45 as a date and fails outside its YAMLError
        if isinstance(err, json.JSONDecodeError):
            raise ValueError(f"{path}: line {err.lineno}: not valid JSON") from None
        raise ValueError(f"{path}: {err} (a date is YYYY-MM-DD)") from None
    except yaml.YAMLError as err:
        line = getattr(err, "lineno", None) or getattr(getattr(err, "problem_mark", None), "line", -1) + 1
        raise ValueError(f"{path}: line {line}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}"
                         ) from None
    return parse(doc, where=str(path))
