"""The precision of each weight component a model ships or is served in (``data/specs/recipes.csv``).

A row is (model, recipe, component, precision, basis, source): ``recipe`` is ``native`` (the published checkpoint)
or a precision label the points table uses (``fp4``) for a serving recipe; a label equal to the shipped experts'
precision is the shipped checkpoint; ``basis`` says whether the precision is
``published`` (read from the model's config.json copy), ``inferred`` from it, or an ``assumption``. Models and
recipes with no rows fall back to the precision applied to every component (``roofline.parse_precision``), and the
answer says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from analysis import config, roofline, specs

RECIPES_FILE = config.SPECS_DIR / "recipes.csv"
_RECIPE_COMPONENT = {"routed_experts": "routed_experts", "shared_experts": "shared_experts", "attention": "attention",
                     "dense_ffn": "dense_ffn", "router": "router", "lm_head": "lm_head", "embedding": "embedding"}


_FP4 = {"fp4", "nvfp4", "mxfp4"}  # one label for the 4-bit float formats, as the points table writes them


@lru_cache(maxsize=4)
def _rows(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def table(path: Path | None = None) -> pd.DataFrame:
    return _rows(str(path or RECIPES_FILE)).copy()


@dataclass(frozen=True)
class RecipeChoice:
    """The precision text for :func:`analysis.roofline.parse_precision` and where each part came from."""

    text: str          # "fp8,routed_experts=fp4,...,kv=bf16"
    kv_dtype: str
    basis: str         # "table" (recipes.csv rows) or "uniform" (no rows: the precision on every component)
    sources: dict      # component -> (precision, basis, source)


def recipe(model_name: str, precision: str = "native", *, path: Path | None = None) -> RecipeChoice:
    """The recipe of ``model_name`` at ``precision`` (``native`` or a points-table precision such as ``fp4``)."""
    return _recipe(str(model_name), str(precision), str(path or RECIPES_FILE))


@lru_cache(maxsize=1024)
def _recipe(model_name: str, precision: str, path: str) -> RecipeChoice:
    t = _rows(path)
    name = specs.match_model_name(model_name) or str(model_name)
    key = specs.normalize_name(name)
    mine = t[t["model"].map(specs.normalize_name) == key]
    rows = mine[mine["recipe"] == str(precision).lower()]
    native = mine[mine["recipe"] == "native"]
    experts = native.loc[native["component"] == "routed_experts", "precision"]
    same = {str(precision).lower()} | (_FP4 if str(precision).lower() in _FP4 else set())
    if rows.empty and len(native) and experts.isin(same).any():
        # A serving label names the experts' precision (InferenceX's "dsr1-fp8", "dsv4-fp4"): when it is the
        # shipped checkpoint's, the checkpoint is served as shipped.
        rows = native
    if rows.empty:
        if str(precision).lower() == "native":
            m = specs.model(name)
            return RecipeChoice(m.native_precision, "bf16", "uniform",
                                {"all": (m.native_precision, "assumption", "specs native precision (models.csv notes)")})
        prec = str(precision).lower()
        return RecipeChoice(prec, "bf16", "uniform", {"all": (prec, "assumption", f"{prec} on every component")})
    parts = {r["component"]: (r["precision"], r["basis"], r["source"]) for _, r in rows.iterrows()}
    base = parts.get("attention", parts.get("dense_ffn", next(iter(parts.values()))))[0]
    items = [base] + [f"{_RECIPE_COMPONENT[c]}={p}" for c, (p, _, _) in parts.items() if c in _RECIPE_COMPONENT]
    kv = parts.get("kv_cache", ("bf16",))[0]
    text = ",".join(items)
    roofline.parse_precision(text)  # a bad cell fails here, naming the precision
    return RecipeChoice(text, kv, "table", parts)


KV_RECIPES_FILE = config.SPECS_DIR / "kv-cache-recipes.csv"
_KV_KEYS = ("hardware", "framework", "precision")


def served_kv_dtype(model_name: str, hardware: str, framework: str, precision: str, date: str = "", *,
                    path: Path | None = None) -> tuple[str, str, str] | None:
    """(KV-cache dtype, basis, source) a benchmark recipe served ``model_name`` with on ``hardware`` under
    ``framework`` at ``precision`` on ``date`` (YYYY-MM-DD…), from ``data/specs/kv-cache-recipes.csv``: the matching row
    that names the most of hardware, framework, precision and a date range (a blank cell matches anything); None
    when no row matches. The table holds InferenceX's DeepSeek-R1 recipes, each row with the script or recipe file
    and commit it was read from."""
    day = str(date or "")[:10]
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        day = ""  # "unknown", "nan", a bare year: no date, which no dated row speaks for
    return _served_kv_dtype(str(model_name), str(hardware), str(framework), str(precision).lower(), day,
                            str(path or KV_RECIPES_FILE))


@lru_cache(maxsize=4096)
def _served_kv_dtype(model_name: str, hardware: str, framework: str, precision: str, day: str,
                     path: str) -> tuple[str, str, str] | None:
    best = _served_row(path, _KV_KEYS, model_name, (hardware, framework, precision), day)
    return None if best is None else (best["kv_dtype"], best["basis"], best["source"])


def _served_row(path: str, keys: tuple, model_name: str, values: tuple, day: str) -> dict | None:
    """The row of a served-recipe table (``keys`` columns matched against ``values``, a blank cell matching
    anything, and a date range) for ``model_name`` that names the most of them; None when no row matches. A dated row
    says nothing of a run whose date is unknown."""
    t = _rows(path)
    name = specs.normalize_name(specs.match_model_name(model_name) or str(model_name))
    want = dict(zip(keys, values))
    best, rank = None, -1
    for r in t.to_dict(orient="records"):
        if specs.normalize_name(r["model"]) != name:
            continue
        if any(r[k] and r[k] != want[k] for k in keys):
            continue
        if (r["date_from"] or r["date_to"]) and not day:
            continue
        if (r["date_from"] and day < r["date_from"]) or (r["date_to"] and day > r["date_to"]):
            continue
        n = sum(bool(r[k]) for k in keys) + bool(r["date_from"] or r["date_to"])
        if n > rank:
            best, rank = r, n
    return best


# The points-table formats of InferenceX's own benchmark client (its API, its history, its agg_*.json files): rows whose
# launch scripts and recipes the served-recipe tables below were read from.
INFERENCEX_CLIENT_FORMATS = ("inferencex-api", "inferencex-api-history", "inferencex-agg")
# Speculative methods whose drafts run the model's own MTP (next-token prediction) layers (see
# :data:`analysis.perfmodel.step.MTP_METHODS`, which is this tuple): the ones the MTP recipe table describes.
MTP_METHODS = ("mtp", "nextn", "eagle")

MTP_RECIPES_FILE = config.SPECS_DIR / "mtp-recipes.csv"
_MTP_KEYS = ("hardware", "framework", "precision", "dp_attention")


def served_draft_tokens(model_name: str, hardware: str, framework: str, precision: str, dp_attention: bool,
                        date: str = "", *, path: Path | None = None) -> tuple[float, str, str] | None:
    """(tokens drafted per decode step, basis, source) of the MTP recipe a benchmark served ``model_name`` with on
    ``hardware`` under ``framework`` at ``precision``, with or without attention data parallelism, on ``date``, from
    ``data/specs/mtp-recipes.csv`` (InferenceX's DeepSeek-R1 launch scripts and the recipes they name, each row with
    the file and commit read; verbatim lines in tests/data/published/inferencex-mtp-drafts.source.md); None when no row
    matches (the step model's labelled assumption, :data:`analysis.perfmodel.step.DEFAULT_DRAFT_TOKENS`, applies)."""
    day = str(date or "")[:10]
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        day = ""
    best = _served_row(str(path or MTP_RECIPES_FILE), _MTP_KEYS, str(model_name),
                       (str(hardware), str(framework), str(precision).lower(), "true" if dp_attention else "false"), day)
    return None if best is None else (float(best["draft_tokens"]), best["basis"], best["source"])


def row_draft_tokens(row) -> float:
    """The tokens an MTP row of InferenceX's client (:data:`INFERENCEX_CLIENT_FORMATS`) drafted per step, from the
    launch script or recipe it ran on its date (:func:`served_draft_tokens`; attention data-parallel when the row's DP
    is above 1, as the InferenceX reader records it); NaN for any other row or where no recipe row matches. A row's
    own ``draft_tokens`` is read before this by its callers."""
    if str(row.get("format") or "") not in INFERENCEX_CLIENT_FORMATS:
        return math.nan
    if str(row.get("spec_method") or "").lower() not in MTP_METHODS:
        return math.nan
    try:
        dp = float(row.get("dp"))
    except (TypeError, ValueError):
        dp = 1.0
    found = served_draft_tokens(str(row.get("model")), str(row.get("hardware")), str(row.get("framework")),
                                str(row.get("precision") or ""), dp == dp and dp > 1, str(row.get("date") or ""))
    return found[0] if found else math.nan
