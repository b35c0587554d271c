"""Claim cards: what kind of number a public performance claim is, and what the data and the roofline say about it.

A claim (``data/claims/<id>.yaml``, or a row in the columns of ``shared/specs/claims.csv``) states a value and
whatever conditions its source gave; every condition it leaves out is recorded as ``"not stated"``. The card
(:func:`claim_card`) computes, without drawing: (1) the kind of number and its restatement per GPU and per user
where the stated conditions allow; (2) the five questions of DESIGN.md (batch size, large batch, scope, latency,
precision), each answered as *stated*, *inferred from data* (naming the points-table rows as
``source_file:source_line``) or *not stated*; (3) the speed of light at batch 1 for each plausible precision and
scope (1 GPU, an 8-GPU node, a 72-GPU rack), with and without speculative decoding, and the fraction of it the
claim implies; (4) the nearest measured evidence and its frontier; (5) a short verdict made from those facts.
``perfclaims claim`` renders the card by executing ``notebooks/50-claim-card.ipynb``.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from analysis import config, roofline, specs

NOT_STATED = "not stated"
STATED, INFERRED = "stated", "inferred from data"
KINDS = ("per-user", "per-GPU", "per-system", "ratio", "latency")
CSV_COLUMNS = ["id", "value", "unit", "hardware", "n_accelerators", "model", "precision", "isl_osl",
               "batch_or_concurrency", "spec_decode", "software", "date", "source", "source_type",
               "what_is_unstated", "sol_note"]
QUESTIONS = {
    "batch": "Batch size: at what batch or concurrency was it measured?",
    "large_batch": "Large batch: does it hold at large batch, and what is the capacity?",
    "scope": "Scope: per GPU, or does it need the whole NVLink domain?",
    "latency": "Latency: TTFT and TPOT?",
    "precision": "Precision: FP8 or FP4 (or BF16), and how much does it explain?",
}
# The speculative-decoding assumption used when a claim does not state τ (ROOFLINE.md 3.3 and section 4 C01/C02:
# MTP with 3 draft layers accepting 2-3 tokens per step). The verify step pushes γ+1 = 4 tokens per sequence.
ASSUMED_TAU = 2.5
ASSUMED_VERIFY_TOKENS = 4.0
ASSUMED_TAU_TEXT = "τ = 2.5 assumed (MTP-3 accepting 2-3 tokens per step, ROOFLINE.md 3.3; 4 tokens verified)"
DEFAULT_CONTEXT = 1024
SCOPES = {1: "1 GPU", 8: "8-GPU node", 72: "72-GPU rack"}


# --- reading claims --------------------------------------------------------------------------------

# A number not glued to a word ("R1", "70B" are names), not a model version ("Llama 2"); "1.4x" is a ratio.
_VALUE = re.compile(r"(?<![\w.])(?<!Llama )(?P<qual>nearly|about|almost|over|up to|~|≈|>=|<=|>|<)?\s*"
                    r"(?P<num>\d[\d,]*(?:\.\d+)?)(?P<mult>\s*[kKM](?![a-zA-Z]))?(?![A-WYZa-wyz0-9])")


def parse_value(text) -> tuple[float, str]:
    """The headline number of a claim's text and its qualifier: ``"nearly 1,000"`` -> ``(1000.0, "nearly")``.

    The first number not glued to a word is taken (so "Llama 2" is skipped only when written "Llama-2"), a ``k``/``M``
    suffix multiplies, and an exact figure in brackets right after a rounded one wins (``">250 (253)"`` -> 253).
    """
    if text is None:
        return (math.nan, "")
    if isinstance(text, (int, float)):
        return (float(text), "")
    s = str(text)
    m = _VALUE.search(s)
    if not m:
        return (math.nan, "")
    mult = (m.group("mult") or "").strip()
    value = float(m.group("num").replace(",", "")) * {"k": 1e3, "K": 1e3, "M": 1e6}.get(mult, 1)
    qual = (m.group("qual") or "").strip()
    exact = re.match(r"\s*\((\d[\d,]*(?:\.\d+)?)\)", s[m.end():])
    if exact:
        value, qual = float(exact.group(1).replace(",", "")), ""
    return (value, qual)


def _stated(text) -> bool:
    return text is not None and str(text).strip() != "" and not str(text).strip().lower().startswith(NOT_STATED)


def _first_number(text) -> float:
    if not _stated(text):
        return math.nan
    m = re.match(r"\s*[~≈]?\s*(\d[\d,]*(?:\.\d+)?)", str(text))
    return float(m.group(1).replace(",", "")) if m else math.nan


def kind_from_unit(unit: str) -> str:
    """per-user, per-GPU, per-system, ratio or latency, from the first unit a claim gives."""
    u = str(unit).split(";")[0].lower()
    if u.startswith("ratio"):
        return "ratio"
    found = [(u.find(k), kind) for k, kind in (("/user", "per-user"), ("per user", "per-user"),
                                                ("/gpu", "per-GPU"), ("per gpu", "per-GPU")) if k in u]
    if found:
        return min(found)[1]  # "tok/s/GPU at given tok/s/user" is per GPU
    if "latency" in u:
        return "latency"
    if "ratio" in u:
        return "ratio"
    return "per-system"


def precision_from_text(text) -> str:
    """fp4, fp8, bf16, int4 or "not stated" from a claim's precision text (the first one named)."""
    if not _stated(text):
        return NOT_STATED
    t = str(text).lower()
    hits = [(t.find(k), v) for k, v in (("nvfp4", "fp4"), ("mxfp4", "fp4"), ("fp4", "fp4"), ("fp8", "fp8"),
                                        ("int4", "int4"), ("bf16", "bf16"), ("fp16", "bf16")) if k in t]
    return min(hits)[1] if hits else NOT_STATED


@dataclass
class Claim:
    """One public claim; every field a source left out holds ``"not stated"``."""

    id: str
    value: float
    value_text: str
    unit: str
    kind: str
    model: str
    hardware: str
    n_gpus: object = NOT_STATED          # a number, or "not stated"
    scope: str = NOT_STATED
    precision: str = NOT_STATED          # fp4 / fp8 / bf16 / int4, a per-component recipe, or "not stated"
    precision_text: str = NOT_STATED
    batch: object = NOT_STATED           # batch or concurrency (a number), or "not stated"
    batch_text: str = NOT_STATED
    spec_decode: str = NOT_STATED
    tokens_per_step: object = NOT_STATED
    isl_osl: str = NOT_STATED
    latency: str = NOT_STATED
    at_tok_s_per_user: object = NOT_STATED  # the per-user speed a per-GPU claim was made at
    software: str = NOT_STATED
    date: str = NOT_STATED
    source: str = NOT_STATED
    source_type: str = NOT_STATED
    value_qualifier: str = ""
    model_table: str | None = None        # the models.csv entry the roofline uses (None: not in the table)
    model_note: str = ""
    hardware_table: str | None = None     # the hardware.csv name the roofline uses
    what_is_unstated: str = ""
    sol_note: str = ""
    path: str = ""

    def number(self, name: str) -> float:
        v = getattr(self, name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _clean(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NOT_STATED
    return v.strip() if isinstance(v, str) else v


def claim_from_row(row: dict, *, where: str = "") -> Claim:
    """A claim from one row in the columns of ``claims.csv`` (conditions parsed from their text)."""
    row = {k: _clean(v) for k, v in row.items()}
    missing = [c for c in ("id", "value", "unit", "model", "hardware") if c not in row or row[c] == NOT_STATED]
    if missing:
        raise ValueError(f"{where}: claim row lacks {', '.join(missing)}")
    value, qual = parse_value(row["value"])
    if math.isnan(value):
        raise ValueError(f"{where}: field 'value': no number in {row['value']!r}")
    model_table = specs.match_model_name(row["model"])
    try:
        hw_table = specs.hardware(row["hardware"]).label
    except KeyError:
        hw_table = None
    n = _first_number(row.get("n_accelerators"))
    batch = _first_number(row.get("batch_or_concurrency"))
    spec = row.get("spec_decode", NOT_STATED)
    if _stated(spec) and re.match(r"(no|none)\b", str(spec).lower()):
        spec = "none"
    return Claim(
        id=str(row["id"]), value=value, value_text=str(row["value"]), value_qualifier=qual, unit=row["unit"],
        kind=kind_from_unit(row["unit"]), model=row["model"], hardware=row["hardware"],
        n_gpus=n if not math.isnan(n) else NOT_STATED, scope=row.get("n_accelerators", NOT_STATED),
        precision=precision_from_text(row.get("precision")), precision_text=row.get("precision", NOT_STATED),
        batch=batch if not math.isnan(batch) else NOT_STATED, batch_text=row.get("batch_or_concurrency", NOT_STATED),
        spec_decode=spec, isl_osl=row.get("isl_osl", NOT_STATED), software=row.get("software", NOT_STATED),
        date=str(row.get("date", NOT_STATED)), source=row.get("source", NOT_STATED),
        source_type=row.get("source_type", NOT_STATED), model_table=model_table, hardware_table=hw_table,
        what_is_unstated=row.get("what_is_unstated", ""), sol_note=row.get("sol_note", "") or "",
        path=where,
    )


def read_claims_csv(path: str | Path) -> list[Claim]:
    """Every claim in a CSV with the columns of ``shared/specs/claims.csv``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: claim file not found")
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    absent = [c for c in ("id", "value", "unit", "model", "hardware") if c not in table.columns]
    if absent:
        raise ValueError(f"{path}: missing column(s) {', '.join(absent)} (expected the columns of claims.csv)")
    return [claim_from_row(r, where=f"{path}:{i + 2}") for i, r in enumerate(table.to_dict("records"))]


def read_claim_yaml(path: str | Path) -> Claim:
    """One claim from a registry YAML file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: claim file not found")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a mapping of claim fields")
    known = set(Claim.__dataclass_fields__)
    unknown = sorted(set(doc) - known)
    if unknown:
        raise ValueError(f"{path}: unknown field(s) {', '.join(unknown)}")
    for name in ("id", "value", "unit", "kind", "model", "hardware"):
        if doc.get(name) in (None, ""):
            raise ValueError(f"{path}: field {name!r} is required")
    if isinstance(doc["value"], str):
        doc["value"], qual = parse_value(doc["value"])
        doc.setdefault("value_qualifier", qual)
    if doc["kind"] not in KINDS:
        raise ValueError(f"{path}: field 'kind' must be one of {', '.join(KINDS)}, got {doc['kind']!r}")
    doc.setdefault("value_text", str(doc["value"]))
    doc = {k: (NOT_STATED if v is None and k in ("n_gpus", "batch", "tokens_per_step", "at_tok_s_per_user") else v)
           for k, v in doc.items()}
    claim = Claim(**doc)
    claim.id = str(claim.id)
    claim.path = str(path)
    if claim.model_table is None:
        claim.model_table = specs.match_model_name(claim.model)
    return claim


def claim_to_yaml(claim: Claim) -> str:
    """The registry form of a claim (fields in the dataclass order, ``path`` left out)."""
    doc = {k: v for k, v in asdict(claim).items() if k != "path"}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)


def claim_ids(claims_dir: str | Path | None = None) -> list[str]:
    """The ids of every claim in the registry (``data/claims/*.yaml``), sorted."""
    d = Path(claims_dir or config.CLAIMS_DIR)
    return sorted(p.stem for p in d.glob("*.yaml"))


def load_claim(claim: str | Path | Claim, *, claims_dir: str | Path | None = None) -> Claim:
    """A claim from an id in the registry, a YAML file, or a CSV file (its first row, or ``file.csv#C05``)."""
    if isinstance(claim, Claim):
        return claim
    text = str(claim)
    wanted = None
    if "#" in text and text.split("#")[0].lower().endswith(".csv"):
        text, wanted = text.split("#", 1)
    path = Path(text)
    if path.suffix.lower() == ".csv":
        rows = read_claims_csv(path)
        if not rows:
            raise ValueError(f"{path}: no claim rows")
        if wanted:
            hit = [c for c in rows if c.id == wanted]
            if not hit:
                raise KeyError(f"{path}: no claim with id {wanted!r}")
            return hit[0]
        return rows[0]
    if path.suffix.lower() in (".yaml", ".yml"):
        return read_claim_yaml(path)
    d = Path(claims_dir or config.CLAIMS_DIR)
    candidate = d / f"{text}.yaml"
    if not candidate.exists():
        raise KeyError(f"unknown claim {text!r}: no {candidate}; known: {', '.join(claim_ids(d)) or 'none'}")
    return read_claim_yaml(candidate)


def registry(claims_dir: str | Path | None = None) -> list[Claim]:
    """Every claim in the registry."""
    return [load_claim(i, claims_dir=claims_dir) for i in claim_ids(claims_dir)]


# --- 1. what kind of number ------------------------------------------------------------------------

def restate(claim: Claim) -> pd.DataFrame:
    """The claim on each axis (tok/s/user, tok/s/GPU, tok/s per system) where its stated conditions allow."""
    v, n, b = claim.value, claim.number("n_gpus"), claim.number("batch")
    at_user = claim.number("at_tok_s_per_user")
    rows = []

    def add(axis, value, how):
        rows.append({"axis": axis, "value": value, "how": how})

    if claim.kind == "per-user":
        add("tok/s/user", v, STATED)
        if not math.isnan(b) and not math.isnan(n):
            add("tok/s/GPU", v * b / n, f"computed: {v:,.0f} × batch {b:g} / {n:g} GPUs")
            add("tok/s per system", v * b, f"computed: {v:,.0f} × batch {b:g}")
        else:
            lacking = " and ".join(x for x, y in (("batch", b), ("GPU count", n)) if math.isnan(y))
            add("tok/s/GPU", math.nan, f"not possible: {lacking} not stated")
            add("tok/s per system", v * b if not math.isnan(b) else math.nan,
                f"computed: {v:,.0f} × batch {b:g}" if not math.isnan(b) else "not possible: batch not stated")
    elif claim.kind == "per-GPU":
        add("tok/s/GPU", v, STATED)
        add("tok/s/user", at_user, STATED if not math.isnan(at_user) else "not stated")
        add("tok/s per system", v * n if not math.isnan(n) else math.nan,
            f"computed: {v:,.0f} × {n:g} GPUs" if not math.isnan(n) else "not possible: GPU count not stated")
    elif claim.kind == "per-system":
        add("tok/s per system", v, STATED)
        add("tok/s/GPU", v / n if not math.isnan(n) else math.nan,
            f"computed: {v:,.0f} / {n:g} GPUs" if not math.isnan(n) else "not possible: GPU count not stated")
        per_user = at_user if not math.isnan(at_user) else (v / b if not math.isnan(b) else math.nan)
        add("tok/s/user", per_user, STATED if not math.isnan(at_user) else (
            f"computed: {v:,.0f} / batch {b:g}" if not math.isnan(b) else "not possible: batch not stated"))
    else:
        add(claim.unit, v, STATED)
        add("tok/s/GPU", math.nan, f"not possible: a {claim.kind} is not a throughput")
        add("tok/s/user", at_user, STATED if not math.isnan(at_user) else f"not possible: a {claim.kind}")
    return pd.DataFrame(rows)


def per_user_value(claim: Claim) -> float:
    """The per-user speed the claim states or implies (NaN when it implies none)."""
    r = restate(claim).set_index("axis")
    return float(r.loc["tok/s/user", "value"]) if "tok/s/user" in r.index else math.nan


# --- 3. speed of light -----------------------------------------------------------------------------

def context_for(claim: Claim) -> tuple[int, str]:
    """Mean context during decode: ISL + OSL/2 when lengths are stated as ``1024/2048`` or ``1k/1k``, else 1024."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kK])?\s*/\s*(\d+(?:\.\d+)?)\s*([kK])?", str(claim.isl_osl))
    if _stated(claim.isl_osl) and m:
        isl = float(m.group(1)) * (1024 if m.group(2) else 1)
        osl = float(m.group(3)) * (1024 if m.group(4) else 1)
        return int(isl + osl / 2), f"ISL {isl:,.0f} + OSL/2 {osl / 2:,.0f} (from the stated lengths)"
    return DEFAULT_CONTEXT, f"{DEFAULT_CONTEXT} tokens assumed (lengths not stated)"


def plausible_precisions(claim: Claim, model: specs.Model, hw: specs.Hardware) -> list[str]:
    """The stated precision; else every precision from the checkpoint's down to the lowest the hardware runs."""
    if claim.precision != NOT_STATED:
        return [claim.precision]
    native = model.native_precision.split(",")[0]
    order = ["bf16", "fp8", "fp4"]
    start = order.index(native) if native in order else 0
    out = [p for p in order[start:] if p != "fp4" or not math.isnan(hw.dense_tflops.get("fp4", math.nan))]
    return out or [native]


def scopes_for(claim: Claim, hw: specs.Hardware) -> list[int]:
    """1 GPU, an 8-GPU node, a 72-GPU rack where the hardware has a 72-GPU domain, and the stated count."""
    out = {1, 8}
    domain = hw.rack_gpus or hw.scale_up_domain_gpus
    if domain and domain >= 72:
        out.add(72)
    n = claim.number("n_gpus")
    if not math.isnan(n) and n >= 1:
        out.add(int(n))
    return sorted(out)


def taus_for(claim: Claim) -> tuple[list[float], dict, str]:
    """τ values to show: 1 and the stated τ, or 1 and the assumed MTP-3 τ when speculation may be in use."""
    tau = claim.number("tokens_per_step")
    if not math.isnan(tau):
        return sorted({1.0, tau}), {}, f"τ = {tau:g} stated"
    if str(claim.spec_decode).lower() == "none":
        return [1.0], {}, "no speculative decoding (stated)"
    return [1.0, ASSUMED_TAU], {ASSUMED_TAU: ASSUMED_VERIFY_TOKENS}, ASSUMED_TAU_TEXT


def _plabel(precision: str) -> str:
    """"FP8", or for a per-component recipe "FP4 (attention bf16, router bf16)"."""
    if "," not in str(precision):
        return str(precision).upper()
    label = roofline.parse_precision(precision).label
    return label.replace(label.split()[0], label.split()[0].upper(), 1)


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"


def _pct(f: float) -> str:
    return f"{f:.0%}" if f >= 0.01 else f"{f:.2%}"


def reading_for(row: pd.Series) -> str:
    """Plain words for one SOL row: possible, impossible, or does not fit (and whether the fit is tight)."""
    f = row["fraction_of_sol"]
    if not row["fits"]:
        return "does not fit in HBM"
    tight = row["hbm_needed_gb"] > 0.95 * row["hbm_available_gb"]
    suffix = f"; weights fill {row['hbm_needed_gb'] / row['hbm_available_gb']:.0%} of HBM" if tight else ""
    if math.isnan(f):
        return "no per-user number to compare" + suffix
    if f <= 1:
        return f"possible ({_pct(f)} of SOL){suffix}"
    return f"impossible ({f:.1f}× SOL){suffix}"


def sol_for_claim(claim: Claim) -> tuple[pd.DataFrame, dict]:
    """Batch-1 SOL per plausible precision × scope × τ (datasheet and achievable), with the claim's fraction."""
    info: dict = {}
    if not claim.model_table:
        info["reason"] = f"model {claim.model!r} is not in data/specs/models.csv: no roofline"
        return pd.DataFrame(), info
    try:
        hw = specs.hardware(claim.hardware_table or claim.hardware)
    except KeyError:
        info["reason"] = f"hardware {claim.hardware!r} is not in data/specs/hardware.csv: no roofline"
        return pd.DataFrame(), info
    model = specs.model(claim.model_table)
    context, context_text = context_for(claim)
    taus, verify, tau_text = taus_for(claim)
    precisions = plausible_precisions(claim, model, hw)
    gpus = scopes_for(claim, hw)
    table = roofline.sol_table(model, hw, precisions=precisions, gpus=gpus, batch=1, context=context,
                               tokens_per_step=taus, verify_tokens=verify)
    wide = table.pivot_table(index=["precision_asked", "gpus", "tokens_per_step"], columns="ceiling",
                             values="tok_s_per_user").reset_index()
    ds = table[table["ceiling"] == "datasheet"].set_index(["precision_asked", "gpus", "tokens_per_step"])
    out = pd.DataFrame({
        "precision": wide["precision_asked"], "gpus": wide["gpus"].astype(int),
        "scope": wide["gpus"].map(lambda g: SCOPES.get(int(g), f"{int(g)} GPUs")),
        "tokens_per_step": wide["tokens_per_step"],
        "sol_tok_s_per_user": wide["datasheet"], "sol_tok_s_per_user_achievable": wide["achievable"],
    })
    keys = list(zip(out["precision"], out["gpus"], out["tokens_per_step"]))
    out["bytes_per_step_gb"] = [ds.loc[k, "bytes_per_step"] / 1e9 for k in keys]
    out["hbm_needed_gb"] = [ds.loc[k, "hbm_needed_gb"] for k in keys]
    out["hbm_available_gb"] = [ds.loc[k, "hbm_available_gb"] for k in keys]
    out["fits"] = [bool(ds.loc[k, "fits"]) for k in keys]
    user = per_user_value(claim)
    out["claim_tok_s_per_user"] = user
    out["fraction_of_sol"] = user / out["sol_tok_s_per_user"]
    out["reading"] = out.apply(reading_for, axis=1)
    out = out.sort_values(["precision", "gpus", "tokens_per_step"],
                          key=lambda s: s.map({"bf16": 0, "fp8": 1, "fp4": 2, "int4": 3}).fillna(9)
                          if s.name == "precision" else s).reset_index(drop=True)
    info.update(model=model.name, hardware=hw.label, context=context, context_text=context_text,
                tau_text=tau_text, precisions=precisions, gpus=gpus,
                achievable_source=table.loc[table["ceiling"] == "achievable", "ceiling_source"].iloc[0],
                datasheet_bandwidth_tb_s=hw.hbm_bandwidth_tb_s)
    return out, info


def sol_statements(claim: Claim, sol: pd.DataFrame) -> list[str]:
    """Plain sentences: where a reading is impossible without speculative decoding or lower precision."""
    user = per_user_value(claim)
    if sol.empty or math.isnan(user):
        return []
    out = []
    base = sol[sol["tokens_per_step"] == 1.0]
    spec = sol[sol["tokens_per_step"] > 1.0]
    for _, r in base.iterrows():
        where = f"{r['scope']} at {_plabel(r['precision'])}"
        if not r["fits"]:
            out.append(f"On {where} the weights do not fit ({r['hbm_needed_gb']:,.0f} GB needed, "
                       f"{r['hbm_available_gb']:,.0f} GB of HBM).")
            continue
        if r["fraction_of_sol"] <= 1:
            continue
        text = (f"On {where} {user:,.0f} tok/s/user is above the bound of {r['sol_tok_s_per_user']:,.0f} "
                f"tok/s/user (one token per step)")
        s = spec[(spec["precision"] == r["precision"]) & (spec["gpus"] == r["gpus"])]
        if len(s):
            t = s.iloc[0]
            verdict_tau = "enough" if t["fraction_of_sol"] <= 1 else "still short"
            text += (f"; with speculative decoding at τ = {t['tokens_per_step']:g} the bound is "
                     f"{t['sol_tok_s_per_user']:,.0f} ({verdict_tau}"
                     + ("; the verify step reads more experts" if claim.model_table and
                        specs.model(claim.model_table).is_moe else "") + ")")
        lower = base[(base["gpus"] == r["gpus"]) & (base["sol_tok_s_per_user"] >= user) & base["fits"]]
        if len(lower):
            text += "; lower precision reaches it (" + ", ".join(
                f"{_plabel(p)}: {v:,.0f}" for p, v in zip(lower["precision"], lower["sol_tok_s_per_user"])) + ")"
        out.append(text + ".")
    return out


# --- 4. evidence -----------------------------------------------------------------------------------

_GENERATIONS = {"h100": "hopper", "h200": "hopper", "h800": "hopper", "b200": "blackwell", "b300": "blackwell",
                "gb200": "blackwell", "gb300": "blackwell", "mi300x": "cdna3", "mi325x": "cdna3", "mi355x": "cdna4"}


def _hw_key(name) -> str:
    try:
        return specs.normalize_name(specs.hardware(str(name)).short_name)
    except KeyError:
        return specs.normalize_name(name)


def _family(name) -> str:
    m = re.match(r"[a-z]+", specs.normalize_name(name))
    return m.group(0) if m else ""


def load_points(points_path: str | Path | None = None) -> pd.DataFrame:
    """The points table: the parquet at ``points_path`` (default data/processed), else ingest data/raw."""
    path = Path(points_path) if points_path else config.POINTS_FILE
    if path.exists():
        return pd.read_parquet(path)
    if points_path:
        raise FileNotFoundError(f"{path}: points table not found")
    from analysis.ingest import ingest

    return ingest([config.RAW_DATA_DIR], progress=False).points


def row_id(row) -> str:
    line = row.get("source_line")
    line = "" if line is None or (isinstance(line, float) and math.isnan(line)) else f":{int(line)}"
    return f"{row.get('source_file')}{line}"


def evidence_for(claim: Claim, points: pd.DataFrame) -> pd.DataFrame:
    """Measured points nearest the claim: same or similar model (family), same or same-generation hardware.

    ``model_match`` is 2 for the same model-table entry, 1 for the same family; ``hardware_match`` 2 for the same
    part, 1 for the same generation. The best-scoring tier is returned, with a ``row`` id (source_file:line).
    """
    if points is None or points.empty:
        return pd.DataFrame()
    pts = points[points["tok_s_per_user"].notna() & (points["tok_s_per_user"] > 0)].copy()
    if "phase" in pts:
        pts = pts[pts["phase"].fillna("unknown") != "prefill"]
    if pts.empty:
        return pd.DataFrame()
    table_names = {m: specs.match_model_name(m) for m in pts["model"].dropna().unique()}
    fam = _family(claim.model_table or claim.model)
    pts["model_table"] = pts["model"].map(table_names)
    pts["model_match"] = np.where(pts["model_table"].notna() & (pts["model_table"] == claim.model_table), 2,
                                  np.where(pts["model"].map(_family) == fam, 1, 0))
    hw_keys = {h: _hw_key(h) for h in pts["hardware"].dropna().unique()}
    want = _hw_key(claim.hardware_table or claim.hardware)
    pts["hardware_key"] = pts["hardware"].map(hw_keys)
    gen = _GENERATIONS.get(want)
    pts["hardware_match"] = np.where(pts["hardware_key"] == want, 2,
                                     np.where(pts["hardware_key"].map(_GENERATIONS) == gen, 1, 0) if gen else 0)
    pts = pts[(pts["model_match"] > 0) | (pts["hardware_match"] == 2)]
    if pts.empty:
        return pd.DataFrame()
    pts["match"] = pts["model_match"] * 3 + pts["hardware_match"]
    best = pts["match"].max()
    # Keep the best tier and anything with the same model match on other hardware of the generation.
    keep = pts[(pts["match"] == best) | ((pts["model_match"] == pts.loc[pts["match"] == best, "model_match"].max())
                                        & (pts["hardware_match"] >= 1))]
    keep = keep.assign(row=[row_id(r) for r in keep.to_dict("records")])
    return keep.sort_values("tok_s_per_user", ascending=False).reset_index(drop=True)


def evidence_summary(evidence: pd.DataFrame) -> pd.DataFrame:
    """Per model × hardware × precision: the fastest per-user point and the highest per-GPU point (rows named)."""
    if evidence.empty:
        return pd.DataFrame()
    out = []
    for key, g in evidence.groupby(["model", "hardware", "precision"], dropna=False, sort=False):
        fast = g.loc[g["tok_s_per_user"].idxmax()]
        gpu = g["tok_s_per_gpu"]
        cap = g.loc[gpu.idxmax()] if gpu.notna().any() else None
        out.append({
            "model": key[0], "hardware": key[1], "precision": key[2], "n_points": len(g),
            "fastest_tok_s_per_user": fast["tok_s_per_user"], "fastest_concurrency": fast.get("concurrency"),
            "fastest_n_gpus": fast.get("n_gpus"), "fastest_spec_decode": fast.get("spec_decode"),
            "fastest_row": fast["row"],
            "max_tok_s_per_gpu": cap["tok_s_per_gpu"] if cap is not None else math.nan,
            "tok_s_per_user_at_max": cap["tok_s_per_user"] if cap is not None else math.nan,
            "concurrency_at_max": cap.get("concurrency") if cap is not None else math.nan,
            "max_row": cap["row"] if cap is not None else "",
            "match": g["match"].max(),
        })
    return pd.DataFrame(out).sort_values(["match", "fastest_tok_s_per_user"], ascending=False).reset_index(drop=True)


def evidence_frontier(evidence: pd.DataFrame) -> pd.DataFrame:
    """Pareto frontier (tok/s/user against tok/s/GPU, all GPUs counted) per model × hardware × precision."""
    if evidence.empty:
        return pd.DataFrame()
    from analysis import frontier

    cols = ["model", "hardware", "precision"]
    front = frontier.frontier(evidence, by=cols)
    return front


# --- 2. the five questions -------------------------------------------------------------------------

@dataclass
class Answer:
    """One of the five questions: stated / inferred from data / not stated, the answer, and the rows behind it."""

    question: str
    status: str
    answer: str
    rows: list = field(default_factory=list)


def _fmt(x, digits=0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:,.{digits}f}"


def _sol_value(sol: pd.DataFrame, precision: str, gpus: int, tau: float = 1.0, col="sol_tok_s_per_user") -> float:
    hit = sol[(sol["precision"] == precision) & (sol["gpus"] == gpus) & (sol["tokens_per_step"] == tau)]
    return float(hit[col].iloc[0]) if len(hit) else math.nan


def five_answers(claim: Claim, sol: pd.DataFrame, evidence: pd.DataFrame, summary: pd.DataFrame) -> dict:
    """The five questions of DESIGN.md answered from the claim, the evidence rows and the roofline."""
    user = per_user_value(claim)
    top = summary.iloc[0] if len(summary) else None
    fastest = evidence.iloc[0] if len(evidence) else None
    out: dict[str, Answer] = {}

    # 1. batch size
    if _stated(claim.batch_text):
        out["batch"] = Answer(QUESTIONS["batch"], STATED, f"{claim.batch_text}")
    elif fastest is not None and not math.isnan(user):
        conc = fastest.get("concurrency")
        ratio = user / fastest["tok_s_per_user"]
        word = "faster than" if ratio > 1 else "of"
        out["batch"] = Answer(
            QUESTIONS["batch"], INFERRED,
            f"Not stated. The fastest similar measured point ({fastest['model']} on {fastest['hardware']}, "
            f"{fastest['precision']}, spec decode {fastest.get('spec_decode')}) reaches "
            f"{fastest['tok_s_per_user']:,.0f} tok/s/user at concurrency {_fmt(conc)}; the claim is "
            f"{ratio:.1f}× {'that' if ratio > 1 else ''}".replace(" that", " that speed") +
            (", so it implies a batch no larger than that, most likely one user." if ratio > 1 else
             f" ({word} that speed)."),
            [fastest["row"]])
    else:
        out["batch"] = Answer(QUESTIONS["batch"], NOT_STATED, "Not stated, and no similar measured points.")

    # 2. large batch
    if top is not None and not math.isnan(top["max_tok_s_per_gpu"]):
        out["large_batch"] = Answer(
            QUESTIONS["large_batch"], INFERRED,
            f"The claim does not say. In the nearest evidence ({top['model']} on {top['hardware']}, {top['precision']}) "
            f"capacity is {top['max_tok_s_per_gpu']:,.0f} tok/s/GPU at concurrency {_fmt(top['concurrency_at_max'])}, "
            f"where each user gets {top['tok_s_per_user_at_max']:,.1f} tok/s; its fastest point "
            f"({top['fastest_tok_s_per_user']:,.0f} tok/s/user) is the single-user end, not the capacity.",
            [top["max_row"], top["fastest_row"]])
    elif claim.kind == "per-GPU" and _stated(claim.batch_text):
        out["large_batch"] = Answer(QUESTIONS["large_batch"], STATED, f"Measured at {claim.batch_text}.")
    else:
        out["large_batch"] = Answer(QUESTIONS["large_batch"], NOT_STATED,
                                    "Not stated, and no measured points to infer capacity from.")

    # 3. scope
    n = claim.number("n_gpus")
    if not math.isnan(n):
        out["scope"] = Answer(QUESTIONS["scope"], STATED, f"{n:g} GPUs ({claim.scope}).")
    else:
        parts = [f"Not stated ({claim.scope})." if _stated(claim.scope) else "Not stated."]
        rows = []
        if not sol.empty and not math.isnan(user):
            for p in sol["precision"].unique():
                one = sol[(sol["precision"] == p) & (sol["gpus"] == 1) & (sol["tokens_per_step"] == 1.0)]
                if len(one):
                    r = one.iloc[0]
                    if not r["fits"]:
                        parts.append(f"At {_plabel(p)} one GPU cannot hold the weights "
                                     f"({r['hbm_needed_gb']:,.0f} GB > {r['hbm_available_gb']:,.0f} GB).")
                    else:
                        parts.append(f"At {_plabel(p)} one GPU's bound is {r['sol_tok_s_per_user']:,.0f} tok/s/user "
                                     f"(claim = {r['fraction_of_sol']:.0%} of it).")
            node = sol[(sol["gpus"] == 8) & (sol["tokens_per_step"] == 1.0)]
            if len(node):
                parts.append("On 8 GPUs the claim is " + ", ".join(
                    f"{f:.0%} ({_plabel(p)})" for p, f in zip(node["precision"], node["fraction_of_sol"]))
                    + " of the bound.")
        if fastest is not None:
            parts.append(f"The fastest similar measured point ran on {_fmt(fastest.get('n_gpus'))} GPUs "
                         f"(scope {fastest.get('scope')}).")
            rows.append(fastest["row"])
        out["scope"] = Answer(QUESTIONS["scope"], INFERRED if rows else NOT_STATED, " ".join(parts), rows)

    # 4. latency
    if _stated(claim.latency):
        out["latency"] = Answer(QUESTIONS["latency"], STATED, claim.latency)
    else:
        parts = ["TTFT and TPOT not stated."]
        rows = []
        if not math.isnan(user):
            parts.append(f"A per-user speed of {user:,.0f} tok/s means a TPOT of about {1000 / user:.2f} ms.")
        if fastest is not None and pd.notna(fastest.get("ttft_ms_p50")):
            parts.append(f"At the fastest similar measured point TPOT p50 is {fastest.get('tpot_ms_p50'):.2f} ms and "
                         f"TTFT p50 {fastest.get('ttft_ms_p50'):,.0f} ms (ISL {_fmt(fastest.get('isl'))}).")
            rows.append(fastest["row"])
        out["latency"] = Answer(QUESTIONS["latency"], INFERRED if rows else NOT_STATED, " ".join(parts), rows)

    # 5. precision
    if claim.precision != NOT_STATED:
        out["precision"] = Answer(QUESTIONS["precision"], STATED, f"{claim.precision_text}")
    else:
        parts = [f"Not stated ({claim.precision_text})." if _stated(claim.precision_text) else "Not stated."]
        rows = []
        if {"fp8", "fp4"} <= set(sol.get("precision", [])):
            a, b = _sol_value(sol, "fp8", 1), _sol_value(sol, "fp4", 1)
            parts.append(f"The roofline alone makes FP4 {b / a:.2f}× faster than FP8 at batch 1 "
                         f"({b:,.0f} vs {a:,.0f} tok/s/user on one GPU).")
        if len(evidence):
            low = evidence.sort_values("concurrency")
            hw0 = evidence.iloc[0]["hardware"]
            same = low[low["hardware"] == hw0]
            fp4, fp8 = same[same["precision"] == "fp4"], same[same["precision"] == "fp8"]
            if len(fp4) and len(fp8):
                f4, f8 = fp4.loc[fp4["tok_s_per_user"].idxmax()], fp8.loc[fp8["tok_s_per_user"].idxmax()]
                parts.append(f"Measured on {hw0}: the fastest FP4 point is {f4['tok_s_per_user']:,.0f} tok/s/user, "
                             f"the fastest FP8 point {f8['tok_s_per_user']:,.0f} "
                             f"({f4['tok_s_per_user'] / f8['tok_s_per_user']:.2f}×).")
                rows += [f4["row"], f8["row"]]
        out["precision"] = Answer(QUESTIONS["precision"], INFERRED if rows else NOT_STATED, " ".join(parts), rows)
    return out


# --- 5. the card -----------------------------------------------------------------------------------

@dataclass
class ClaimCard:
    """Everything the claim-card notebook shows, computed."""

    claim: Claim
    restated: pd.DataFrame
    answers: dict
    sol: pd.DataFrame
    sol_info: dict
    sol_statements: list
    evidence: pd.DataFrame
    evidence_summary: pd.DataFrame
    frontier: pd.DataFrame
    verdict: str
    model_note: str

    @property
    def figure_title(self) -> str:
        """A title that states the finding: the claim against the fastest measured point and the batch-1 bound."""
        user = per_user_value(self.claim)
        c = self.claim
        unit = {"per-user": "tok/s/user", "per-GPU": "tok/s/GPU", "per-system": "tok/s per system"}.get(c.kind, c.unit)
        parts = [f"{c.id}: {c.value_qualifier + ' ' if c.value_qualifier else ''}{_num(c.value)} {unit}"]
        if c.kind != "per-user" and not math.isnan(user):
            parts.append(f"at {_num(user)} tok/s/user; that speed")
        if len(self.evidence_summary) and not math.isnan(user):
            top = self.evidence_summary.iloc[0]
            parts.append(f"is {user / top['fastest_tok_s_per_user']:.1f}× the fastest measured {top['model']} point "
                         f"on {top['hardware']}")
        base = self.sol[(self.sol["tokens_per_step"] == 1.0) & self.sol["fits"]] if len(self.sol) else self.sol
        if len(base) and not math.isnan(user):
            r = base.sort_values(["gpus", "sol_tok_s_per_user"], ascending=[True, False]).iloc[0]
            parts.append(f"and {_pct(user / r['sol_tok_s_per_user'])} of the batch-1 bound of {r['scope']} at "
                         f"{_plabel(r['precision'])}")
        elif not len(self.evidence_summary):
            parts.append("(no similar measured points)")
        text = " ".join(parts)
        if len(text) < 95:
            return text
        return text.replace("; that", ";\nthat", 1) if "; that" in text else text.replace(" is ", "\nis ", 1)

    def sol_display(self) -> pd.DataFrame:
        """The SOL table as a reader sees it: whole tok/s, the fraction as a percentage, HBM as needed / available."""
        if self.sol.empty:
            return self.sol
        s = self.sol
        return pd.DataFrame({
            "precision": s["precision"].map(_plabel), "scope": s["scope"], "τ": s["tokens_per_step"],
            "SOL tok/s/user": s["sol_tok_s_per_user"].map(_num),
            "achievable tok/s/user": s["sol_tok_s_per_user_achievable"].map(_num),
            "GB read per step": s["bytes_per_step_gb"].map(lambda v: f"{v:,.1f}"),
            "HBM GB needed / available": [f"{a:,.0f} / {b:,.0f}" for a, b in zip(s["hbm_needed_gb"],
                                                                                s["hbm_available_gb"])],
            "claim / SOL": s["fraction_of_sol"].map(lambda f: "–" if math.isnan(f) else _pct(f)),
            "reading": s["reading"],
        })

    def answers_table(self) -> pd.DataFrame:
        return pd.DataFrame([{"question": a.question, "status": a.status, "answer": a.answer,
                              "rows": ", ".join(a.rows)} for a in self.answers.values()])

    def results(self) -> dict:
        """The numbers the notebook saves (``save_results``)."""
        return {
            "claim": self.claim.id, "value": self.claim.value, "kind": self.claim.kind,
            "model": self.claim.model, "model_table": self.claim.model_table, "hardware": self.claim.hardware,
            "model_note": self.model_note,
            "restated": self.restated.to_dict("records"),
            "answers": {k: asdict(a) for k, a in self.answers.items()},
            "sol": self.sol.to_dict("records"), "sol_info": self.sol_info,
            "sol_statements": self.sol_statements,
            "evidence_summary": self.evidence_summary.to_dict("records"),
            "verdict": self.verdict, "headline": self.verdict.split(". ")[0] + ".",
        }


def _model_note(claim: Claim) -> str:
    if not claim.model_table:
        return f"{claim.model} is not in the model table: no roofline for it."
    if claim.model_note:
        return claim.model_note
    if specs.normalize_name(claim.model) != specs.normalize_name(claim.model_table):
        return f"{claim.model} is computed as {claim.model_table} (data/specs/models.csv)."
    return ""


def verdict(claim: Claim, restated: pd.DataFrame, sol: pd.DataFrame, summary: pd.DataFrame) -> str:
    """A few sentences from the computed facts: kind, roofline fraction, nearest evidence, what is missing."""
    user = per_user_value(claim)
    parts = []
    kind_text = {"per-user": "a single-user (per-user) speed", "per-GPU": "a per-GPU throughput",
                 "per-system": "a whole-system throughput", "ratio": "a ratio between systems",
                 "latency": "a latency constraint"}[claim.kind]
    parts.append(f"{claim.id} ({claim.value_text} {claim.unit.split(';')[0]}) is {kind_text}.")
    per_gpu = restated.set_index("axis").get("value", pd.Series(dtype=float)).get("tok/s/GPU", math.nan)
    if claim.kind == "per-user" and (per_gpu is None or math.isnan(per_gpu)):
        parts.append("It cannot be restated per GPU: the batch and GPU count are not both stated.")
    if not sol.empty and not math.isnan(user):
        base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]]
        ok = base[base["fraction_of_sol"] <= 1]
        if len(ok):
            smallest = ok.sort_values(["gpus", "sol_tok_s_per_user"]).iloc[0]
            parts.append(f"Without speculative decoding the smallest setting whose bound allows it is "
                         f"{smallest['scope']} at {_plabel(smallest['precision'])} "
                         f"(claim = {smallest['fraction_of_sol']:.0%} of {smallest['sol_tok_s_per_user']:,.0f}).")
        else:
            parts.append("No plausible precision and scope reaches it at batch 1 without speculative decoding.")
        bad = base[(base["fraction_of_sol"] > 1)]
        spec = sol[(sol["tokens_per_step"] > 1.0) & sol["fits"]]
        for _, r in bad.iterrows():
            s = spec[(spec["precision"] == r["precision"]) & (spec["gpus"] == r["gpus"])]
            rescued = len(s) and s["fraction_of_sol"].iloc[0] <= 1
            parts.append(f"On {r['scope']} at {_plabel(r['precision'])} it is impossible at one token per step "
                         f"(bound {r['sol_tok_s_per_user']:,.0f})" + (
                             f"; only speculative decoding (τ = {s['tokens_per_step'].iloc[0]:g}: "
                             f"{s['sol_tok_s_per_user'].iloc[0]:,.0f}) would allow it." if rescued else
                             f", and still at τ = {s['tokens_per_step'].iloc[0]:g} "
                             f"({s['sol_tok_s_per_user'].iloc[0]:,.0f})." if len(s) else "."))
    elif sol.empty:
        parts.append("No roofline: the model or hardware is not in the spec tables.")
    if len(summary):
        top = summary.iloc[0]
        if not math.isnan(user):
            parts.append(f"The fastest similar measured point is {top['fastest_tok_s_per_user']:,.0f} tok/s/user "
                         f"({top['model']} on {top['hardware']}, {top['precision']}); the claim is "
                         f"{user / top['fastest_tok_s_per_user']:.1f}× that.")
        if not math.isnan(top["max_tok_s_per_gpu"]):
            parts.append(f"At capacity that evidence gives {top['max_tok_s_per_gpu']:,.0f} tok/s/GPU with "
                         f"{top['tok_s_per_user_at_max']:,.0f} tok/s per user.")
    else:
        parts.append("No similar measured points in the points table.")
    unstated = [k for k, v in (("batch", claim.batch_text), ("GPU count", claim.n_gpus if not isinstance(
        claim.n_gpus, (int, float)) else "x"), ("precision", claim.precision_text),
        ("speculative decoding", claim.spec_decode)) if not _stated(v)]
    if unstated:
        parts.append("Not stated: " + ", ".join(unstated) + ".")
    return " ".join(parts)


def claim_card(claim: str | Path | Claim, points: pd.DataFrame | None = None) -> ClaimCard:
    """Compute the card for a claim (an id, a file, or a Claim) against a points table."""
    c = load_claim(claim)
    restated = restate(c)
    sol, info = sol_for_claim(c)
    ev = evidence_for(c, points) if points is not None else pd.DataFrame()
    summary = evidence_summary(ev)
    front = evidence_frontier(ev)
    answers = five_answers(c, sol, ev, summary)
    return ClaimCard(claim=c, restated=restated, answers=answers, sol=sol, sol_info=info,
                     sol_statements=sol_statements(c, sol), evidence=ev, evidence_summary=summary, frontier=front,
                     verdict=verdict(c, restated, sol, summary), model_note=_model_note(c))


# --- the `perfclaims claim` command ----------------------------------------------------------------

NOTEBOOK = "50-claim-card"


def render_card(claim: str | Path, *, out: Path, points_path: str | Path | None = None) -> Path:
    """Execute the claim-card notebook for ``claim`` and write ``out/<id>.html`` (code hidden, images inline)."""
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    c = load_claim(claim)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    is_file = Path(str(claim).split("#")[0]).suffix.lower() in (".csv", ".yaml", ".yml")
    params = {"claim": c.id, "claim_file": str(Path(str(claim)).resolve()) if is_file else None,
              "results_path": str((out / f"{c.id}.results.json").resolve())}
    if points_path:
        params["points_path"] = str(Path(points_path).resolve())
    executed = out / f"{c.id}.ipynb"
    pm.execute_notebook(str(config.NOTEBOOKS_DIR / f"{NOTEBOOK}.ipynb"), str(executed), parameters=params,
                        kernel_name="python3", cwd=str(config.NOTEBOOKS_DIR), progress_bar=False)
    nb = nbformat.read(str(executed), as_version=4)
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                            embed_images=True)
    body, _ = exporter.from_notebook_node(nb)
    html_path = out / f"{c.id}.html"
    html_path.write_text(body, encoding="utf-8")
    return html_path


def cli_claim(claim: str, *, out: Path) -> int:
    """``perfclaims claim ID|FILE --out DIR``: render the card to DIR/<id>.html; 0 on success, 2 on a user error."""
    try:
        load_claim(claim)
    except (FileNotFoundError, KeyError, ValueError) as err:
        print(f"perfclaims claim: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    try:
        html_path = render_card(claim, out=Path(out))
    except Exception as err:  # a failed notebook run: report it in one line, never a traceback
        name = getattr(err, "ename", type(err).__name__)
        print(f"perfclaims claim: the card notebook failed: {name}: {getattr(err, 'evalue', err)}", file=sys.stderr)
        return 1
    print(html_path)
    return 0
