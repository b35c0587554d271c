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
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from analysis import config, frontier, roofline, specs
from analysis.frontier import capacity_at
from analysis.schema import trusted

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
    parts: list = field(default_factory=list)  # every number of a compound claim (see ClaimPart); [] = the value
    path: str = ""

    def number(self, name: str) -> float:
        v = getattr(self, name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


PART_FIELDS = ("kind", "value", "text", "at_tok_s_per_user", "n_gpus", "hardware", "precision", "scope", "baseline",
               "baseline_scope", "axis")


@dataclass
class ClaimPart:
    """One number of a claim, checked on its own: ">30,000 tok/s max throughput" is a capacity part of C01.

    ``kind`` as for claims; ``hardware``/``precision``/``scope`` narrow the evidence (default: the claim's); a
    per-GPU or per-system part with ``at_tok_s_per_user`` is read off the frontier at that interactivity, without it
    it is compared with the measured capacity (the highest tok/s/GPU). A ratio part compares ``hardware`` with the
    ``baseline`` generation (e.g. ``hopper``) on ``axis``: ``tok/s/user`` (fastest points) or ``tok/s/GPU`` (capacity
    at ``at_tok_s_per_user``); any other axis (per MW, cost) is recorded as not checkable from the points table.
    """

    kind: str
    value: float
    text: str
    at_tok_s_per_user: float = math.nan
    n_gpus: float = math.nan
    hardware: str | None = None
    precision: str | None = None
    scope: str | None = None
    baseline: str | None = None        # ratio: a hardware name ("B200") or a generation ("hopper")
    baseline_scope: str | None = None
    axis: str | None = None


def claim_parts(claim: "Claim") -> list[ClaimPart]:
    """The claim's parts (the registry's ``parts`` list), or its one headline value as a single part."""
    if not claim.parts:
        return [ClaimPart(kind=claim.kind, value=claim.value, text=claim_title(claim),
                          at_tok_s_per_user=claim.number("at_tok_s_per_user"), n_gpus=claim.number("n_gpus"))]
    out = []
    for i, d in enumerate(claim.parts):
        where = f"{claim.path or claim.id}: parts[{i}]"
        if not isinstance(d, dict):
            raise ValueError(f"{where}: expected a mapping with kind, value, text")
        unknown = sorted(set(d) - set(PART_FIELDS))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}")
        if d.get("kind") not in KINDS:
            raise ValueError(f"{where}: field 'kind' must be one of {', '.join(KINDS)}, got {d.get('kind')!r}")
        value = d.get("value")
        value = parse_value(value)[0] if isinstance(value, str) else float(value) if value is not None else math.nan
        if math.isnan(value):
            raise ValueError(f"{where}: field 'value' has no number")
        num = lambda k: float(d[k]) if isinstance(d.get(k), (int, float)) else math.nan  # noqa: E731
        n = num("n_gpus")
        if math.isnan(n) and d["kind"] != "ratio":
            n = claim.number("n_gpus")
        out.append(ClaimPart(kind=d["kind"], value=value, text=str(d.get("text") or value),
                             at_tok_s_per_user=num("at_tok_s_per_user"), n_gpus=n, hardware=d.get("hardware"),
                             precision=d.get("precision"), scope=d.get("scope"), baseline=d.get("baseline"),
                             baseline_scope=d.get("baseline_scope"), axis=d.get("axis")))
    return out


def claim_title(claim: "Claim") -> str:
    """The claim as one readable phrase: the published text, with the unit only when the text lacks one."""
    text = str(claim.value_text).strip()
    if len(text) > 100 and claim.parts:  # a long published sentence: its checked parts say it shorter
        joined = "; ".join(str(p.get("text", "")) for p in claim.parts if isinstance(p, dict))
        return joined if len(joined) <= 140 else str(claim.parts[0].get("text")) + "; …"
    if re.search(r"tok/s|\d\s*[x×](?![a-z])|\bms\b|per MW|/GPU|/user", text, re.I):
        return text
    return f"{text} {claim.unit}"


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

def stated_lengths(claim: Claim) -> tuple[float, float] | None:
    """(ISL, OSL) in tokens when the claim states them as ``1024/2048``, ``1k/1k`` or ``32K / 8K``; else None."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kK])?\s*/\s*(\d+(?:\.\d+)?)\s*([kK])?", str(claim.isl_osl))
    if not (_stated(claim.isl_osl) and m):
        return None
    return (float(m.group(1)) * (1024 if m.group(2) else 1), float(m.group(3)) * (1024 if m.group(4) else 1))


def lengths_text(isl, osl) -> str:
    """``ISL 1,024 / OSL 8,192`` (``ISL/OSL n/a`` when the point has none)."""
    if isl is None or osl is None or pd.isna(isl) or pd.isna(osl):
        return "ISL/OSL n/a"
    return f"ISL {isl:,.0f} / OSL {osl:,.0f}"


def context_for(claim: Claim) -> tuple[int, str]:
    """Mean context during decode: ISL + OSL/2 when lengths are stated as ``1024/2048`` or ``1k/1k``, else 1024."""
    lengths = stated_lengths(claim)
    if lengths:
        isl, osl = lengths
        return int(isl + osl / 2), f"ISL {isl:,.0f} + OSL/2 {osl / 2:,.0f} (from the stated lengths)"
    return DEFAULT_CONTEXT, f"{DEFAULT_CONTEXT} tokens assumed (lengths not stated)"


def matched_lengths(claim: Claim, points: pd.DataFrame) -> tuple[list[tuple[float, float]], str]:
    """The ISL/OSL pairs evidence may be compared at, and why.

    Stated lengths with evidence: only those. Stated lengths without evidence: the measured pair(s) nearest in
    log2 distance, said so. Not stated: every measured pair, each compared only with itself (like with like).
    """
    if points is None or points.empty or not {"isl", "osl"} <= set(points.columns):
        return [], "no lengths in the evidence"
    both = points[["isl", "osl"]].dropna().drop_duplicates()
    pairs = sorted((float(a), float(b)) for a, b in zip(both["isl"], both["osl"]) if a > 0 and b > 0)
    want = stated_lengths(claim)
    if want is None:
        return pairs, "lengths not stated: every comparison stays within one ISL/OSL pair"
    if want in pairs:
        return [want], f"at the stated {lengths_text(*want)}"
    if not pairs:
        return [], f"no evidence with lengths (stated {lengths_text(*want)})"
    dist = {p: abs(math.log2(p[0] / want[0])) + abs(math.log2(p[1] / want[1])) for p in pairs}
    best = min(dist.values())
    near = [p for p in pairs if dist[p] == best]
    return near, (f"no evidence at the stated {lengths_text(*want)}; nearest measured: "
                  + " and ".join(lengths_text(*p) for p in near))


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
    """Plain words for one SOL row, from the datasheet bound, the achievable line and the communication floor:
    possible, possible only at near-peak bandwidth, impossible (by bandwidth or by communication), or no fit."""
    user = row["claim_tok_s_per_user"]
    if not row["fits"]:
        return "does not fit in HBM"
    tight = row["hbm_needed_gb"] > 0.95 * row["hbm_available_gb"]
    suffix = f"; weights fill {row['hbm_needed_gb'] / row['hbm_available_gb']:.0%} of HBM" if tight else ""
    if math.isnan(user):
        return "no per-user number to compare" + suffix
    bw, comm, ach = row["sol_tok_s_per_user"], row["sol_tok_s_per_user_comm"], row["sol_tok_s_per_user_achievable_comm"]
    if user > bw:
        return f"impossible ({user / bw:.1f}× the bandwidth bound){suffix}"
    if user > comm:
        return (f"impossible with communication ({user / comm:.1f}× the bound with the communication floor; "
                f"bandwidth alone would allow it){suffix}")
    if user > ach:
        return (f"above the achievable line: possible only at near-peak bandwidth ({_pct(user / comm)} of SOL, "
                f"{_pct(user / ach)} of achievable){suffix}")
    return f"possible ({_pct(user / comm)} of SOL, {_pct(user / ach)} of achievable){suffix}"


def _possible_at(row) -> str:
    """"possible", "near-peak" or "impossible" for one SOL row (for the verdict)."""
    user = row["claim_tok_s_per_user"]
    if not row["fits"] or math.isnan(user) or user > row["sol_tok_s_per_user_comm"]:
        return "impossible"
    return "near-peak" if user > row["sol_tok_s_per_user_achievable_comm"] else "possible"


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
    # Multi-GPU batch-1 bounds from bandwidth alone ignore that every layer waits for its collectives.
    floors = {g: roofline.communication_floor(model, hw, gpus=int(g)) for g in out["gpus"].unique()}
    out["comm_floor_ms"] = out["gpus"].map(lambda g: floors[g].floor_ms)
    out["collective_latency_us"] = out["gpus"].map(lambda g: floors[g].latency_us)
    comm_cap = np.where(out["comm_floor_ms"] > 0, 1000.0 * out["tokens_per_step"] / out["comm_floor_ms"].where(
        out["comm_floor_ms"] > 0, 1.0), np.inf)
    out["sol_tok_s_per_user_comm"] = np.minimum(out["sol_tok_s_per_user"], comm_cap)
    out["sol_tok_s_per_user_achievable_comm"] = np.minimum(out["sol_tok_s_per_user_achievable"], comm_cap)
    out["fraction_of_sol_comm"] = user / out["sol_tok_s_per_user_comm"]
    out["reading"] = out.apply(reading_for, axis=1)
    out = out.sort_values(["precision", "gpus", "tokens_per_step"],
                          key=lambda s: s.map({"bf16": 0, "fp8": 1, "fp4": 2, "int4": 3}).fillna(9)
                          if s.name == "precision" else s).reset_index(drop=True)
    info.update(model=model.name, hardware=hw.label, context=context, context_text=context_text,
                tau_text=tau_text, precisions=precisions, gpus=gpus,
                achievable_source=table.loc[table["ceiling"] == "achievable", "ceiling_source"].iloc[0],
                comm_floor_text=roofline.COMM_FLOOR_TEXT, n_layers=model.n_layers,
                datasheet_bandwidth_tb_s=hw.hbm_bandwidth_tb_s)
    return out, info


def sol_statements(claim: Claim, sol: pd.DataFrame) -> list[str]:
    """Plain sentences: where a reading is impossible (by bandwidth, or by the communication floor of a
    multi-GPU step) or possible only at near-peak bandwidth, and what speculative decoding or lower precision
    would change."""
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
        state = _possible_at(r)
        if state == "possible":
            continue
        if state == "near-peak":
            out.append(f"On {where} {user:,.0f} tok/s/user is above the achievable line "
                       f"({r['sol_tok_s_per_user_achievable_comm']:,.0f}) but below the datasheet bound "
                       f"({r['sol_tok_s_per_user_comm']:,.0f}): possible only at near-peak bandwidth.")
            continue
        if user > r["sol_tok_s_per_user"]:
            text = (f"On {where} {user:,.0f} tok/s/user is above the bandwidth bound of "
                    f"{r['sol_tok_s_per_user']:,.0f} tok/s/user (one token per step)")
        else:
            text = (f"On {where} {user:,.0f} tok/s/user is above the bound with the communication floor "
                    f"({r['sol_tok_s_per_user_comm']:,.0f} tok/s/user: {r['comm_floor_ms'] * 1000:,.0f} µs of "
                    f"collectives per step), though bandwidth alone would allow {r['sol_tok_s_per_user']:,.0f}")
        s = spec[(spec["precision"] == r["precision"]) & (spec["gpus"] == r["gpus"])]
        if len(s):
            t = s.iloc[0]
            verdict_tau = "enough" if user <= t["sol_tok_s_per_user_comm"] else "still short"
            text += (f"; with speculative decoding at τ = {t['tokens_per_step']:g} the bound is "
                     f"{t['sol_tok_s_per_user_comm']:,.0f} ({verdict_tau}"
                     + ("; the verify step reads more experts" if claim.model_table and
                        specs.model(claim.model_table).is_moe else "") + ")")
        lower = base[(base["gpus"] == r["gpus"]) & (base["sol_tok_s_per_user_comm"] >= user) & base["fits"]]
        if len(lower):
            text += "; lower precision reaches it (" + ", ".join(
                f"{_plabel(p)}: {v:,.0f}" for p, v in zip(lower["precision"], lower["sol_tok_s_per_user_comm"])) + ")"
        out.append(text + ".")
    return out


# --- 4. evidence -----------------------------------------------------------------------------------

_GENERATIONS = {"h100": "hopper", "h200": "hopper", "h800": "hopper", "b200": "blackwell", "b300": "blackwell",
                "gb200": "blackwell", "gb300": "blackwell", "mi300x": "cdna3", "mi325x": "cdna3", "mi355x": "cdna4"}


def _generation(key: str) -> str | None:
    """"hopper" for h200 and h200sxm alike (the longest part name the key starts with)."""
    for part in sorted(_GENERATIONS, key=len, reverse=True):
        if str(key).startswith(part):
            return _GENERATIONS[part]
    return None


def _hw_keys(points: pd.DataFrame) -> pd.Series:
    """``_hw_key`` of every point's hardware, looked up once per distinct name."""
    return points["hardware"].map({h: _hw_key(h) for h in points["hardware"].dropna().unique()})


@lru_cache(maxsize=256)
def _hw_key(name) -> str:
    try:
        return specs.normalize_name(specs.hardware(str(name)).short_name)
    except KeyError:
        return specs.normalize_name(name)


def _family(name) -> str:
    m = re.match(r"[a-z]+", specs.normalize_name(name))
    return m.group(0) if m else ""


def load_points(path=None):
    """The points table at ``path`` (see :func:`analysis.data.load_points`); with no path and nothing ingested yet,
    the shipped ``data/raw`` ingested on the fly, so a card renders on a fresh clone."""
    from analysis import data

    if path is None and not config.POINTS_FILE.exists():
        path = config.RAW_DATA_DIR
    return data.load_points(path)


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
    pts = points[trusted(points) & points["tok_s_per_user"].notna() & (points["tok_s_per_user"] > 0)].copy()
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
    gen = _generation(want)
    pts["hardware_match"] = np.where(pts["hardware_key"] == want, 2,
                                     np.where(pts["hardware_key"].map(_generation) == gen, 1, 0) if gen else 0)
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


def own_sol(row) -> tuple[float, float]:
    """Batch-1 SOL tok/s/user of a measured point's own model, hardware, precision and GPU count (one token per
    step, context ISL + OSL/2): bandwidth only, and with the communication floor. NaN when not in the spec tables."""
    name = specs.match_model_name(str(row.get("model")))
    n = row.get("n_gpus")
    if not name or n is None or pd.isna(n) or str(row.get("precision")) not in roofline.BITS_PER_WEIGHT:
        return (math.nan, math.nan)
    isl, osl = row.get("isl"), row.get("osl")
    context = int(isl + osl / 2) if pd.notna(isl) and pd.notna(osl) else DEFAULT_CONTEXT
    try:
        hw = specs.hardware(str(row.get("hardware")))
        s = roofline.speed_of_light(name, hw, str(row["precision"]), gpus=int(n), batch=1, context=context)
        floor = roofline.communication_floor(name, hw, gpus=int(n)).floor_ms
    except (KeyError, ValueError):
        return (math.nan, math.nan)
    return (s.tok_s_per_user, 1000.0 / max(s.step_ms, floor))


def evidence_summary(evidence: pd.DataFrame) -> pd.DataFrame:
    """Per model × hardware × precision × ISL/OSL: the fastest per-user point and the highest per-GPU point (rows
    named), both at the same lengths, and the fastest point's share of its own model's batch-1 SOL on its GPUs."""
    if evidence.empty:
        return pd.DataFrame()
    out = []
    keys = ["model", "hardware", "precision", "isl", "osl"]
    for key, g in evidence.groupby(keys, dropna=False, sort=False):
        fast = g.loc[g["tok_s_per_user"].idxmax()]
        gpu = g["tok_s_per_gpu"]
        cap = g.loc[gpu.idxmax()] if gpu.notna().any() else None
        sol_bw, sol_comm = own_sol(fast)
        out.append({
            "model": key[0], "hardware": key[1], "precision": key[2], "isl": key[3], "osl": key[4],
            "lengths": lengths_text(key[3], key[4]), "n_points": len(g),
            "fastest_tok_s_per_user": fast["tok_s_per_user"], "fastest_concurrency": fast.get("concurrency"),
            "fastest_n_gpus": fast.get("n_gpus"), "fastest_spec_decode": fast.get("spec_decode"),
            "fastest_row": fast["row"],
            "max_tok_s_per_gpu": cap["tok_s_per_gpu"] if cap is not None else math.nan,
            "tok_s_per_user_at_max": cap["tok_s_per_user"] if cap is not None else math.nan,
            "concurrency_at_max": cap.get("concurrency") if cap is not None else math.nan,
            "max_row": cap["row"] if cap is not None else "",
            "fastest_own_sol_tok_s_per_user": sol_bw,
            "fastest_share_of_own_sol": fast["tok_s_per_user"] / sol_bw,
            "fastest_own_sol_comm_tok_s_per_user": sol_comm,
            "fastest_share_of_own_sol_comm": fast["tok_s_per_user"] / sol_comm,
            "match": g["match"].max(),
        })
    return pd.DataFrame(out).sort_values(["match", "fastest_tok_s_per_user"], ascending=False).reset_index(drop=True)


def evidence_frontier(evidence: pd.DataFrame) -> pd.DataFrame:
    """Pareto frontier (tok/s/user against tok/s/GPU, all GPUs counted) per model × hardware × precision."""
    if evidence.empty:
        return pd.DataFrame()
    from analysis import frontier

    cols = ["model", "hardware", "precision", "isl", "osl"]
    front = frontier.frontier(evidence, by=cols)
    return front


# --- 4b. each number of the claim against the measured frontier ---------------------------------------

CHECK_BY = ["hardware", "precision", "scope", "isl", "osl"]
# Ratio claims on tok/s/GPU that name no interactivity are compared at this per-user speed (stated on the card).
REFERENCE_TOK_S_PER_USER = 50.0
SNAPSHOT_CAVEAT = ("the InferenceX snapshot is down-sampled (a few points per curve), so a value between two "
                   "measured frontier points is a log-log interpolation across the gap, not a measurement")


def _vendor_family(name) -> str:
    """"deepseek" for DeepSeek-V4-Flash and DeepSeek-R1-0528 alike (the first word of the name)."""
    m = re.match(r"[A-Za-z]+", str(name))
    return m.group(0).lower() if m else ""


def _model_points(claim: Claim, points: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Trusted points of the claim's model (its model-table entry), else of its family, and which was used."""
    if points is None or points.empty:
        return pd.DataFrame(), "no points"
    pts = points[trusted(points)]
    names = pts["model"].map({m: specs.match_model_name(m) for m in pts["model"].dropna().unique()})
    same = pts[names.notna() & (names == claim.model_table)]
    if len(same):
        return same, f"{', '.join(sorted(same['model'].unique()))} points"
    fam = _vendor_family(claim.model_table or claim.model)
    kin = pts[pts["model"].map(_vendor_family) == fam] if fam else pts.iloc[0:0]
    return kin, (f"{', '.join(sorted(kin['model'].unique()))} points (no {claim.model} points; same family)"
                 if len(kin) else f"no {claim.model} points")


def _base_precision(text) -> str | None:
    return None if text in (None, NOT_STATED) else str(text).split(",")[0]


def _select_for_part(claim: Claim, part: ClaimPart, pts: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The points a part is checked on: its hardware (else the same generation), precision and scope."""
    if pts.empty:
        return pts, ""
    want = part.hardware or claim.hardware_table or claim.hardware
    keys = _hw_keys(pts)
    sel, note = pts[keys == _hw_key(want)], ""
    if sel.empty and _generation(_hw_key(want)):
        sel = pts[keys.map(_generation) == _generation(_hw_key(want))]
        note = f"no {want} points; same generation used"
    prec = part.precision or _base_precision(claim.precision)
    if prec:
        sel = sel[sel["precision"] == prec]
    if part.scope:
        sel = sel[sel["scope"] == part.scope]
    return sel, note


def _at_lengths(points: pd.DataFrame, pairs: list) -> pd.DataFrame:
    if not pairs or points.empty:
        return points.iloc[0:0]
    keys = set(pairs)
    return points[[(a, b) in keys for a, b in zip(points["isl"], points["osl"])]]


def _groups_of(front: pd.DataFrame, by=CHECK_BY):
    if front.empty:
        return []
    return list(front.groupby(by, dropna=False, sort=True))


def _group_name(key) -> str:
    hw, prec, scope = key[0], key[1], key[2]
    return f"{hw} · {str(prec).upper()} · {scope}"


def _neighbours(front: pd.DataFrame, target: float) -> tuple:
    """The measured frontier points just below and just above ``target`` tok/s/user (None at an open end)."""
    f = front.sort_values("tok_s_per_user")
    below, above = f[f["tok_s_per_user"] <= target], f[f["tok_s_per_user"] >= target]
    return (below.iloc[-1] if len(below) else None, above.iloc[0] if len(above) else None)


def single_user_end(front: pd.DataFrame) -> pd.Series:
    """The fastest per-user point of one frontier group (kept here: the frontier module's name for it is moving)."""
    return front.loc[front["tok_s_per_user"].idxmax()]


def _point_text(r) -> str:
    return (f"{r['tok_s_per_gpu']:,.0f} tok/s/GPU at {r['tok_s_per_user']:,.1f} tok/s/user "
            f"(concurrency {_fmt(r.get('concurrency'))}, {row_id(r)})")


def _capacity_rows(claim, part, sel, pairs, lengths_note) -> list[dict]:
    claimed = part.value if part.kind == "per-GPU" else (part.value / part.n_gpus if part.n_gpus > 0 else math.nan)
    at = part.at_tok_s_per_user
    fronts = {d: frontier.frontier(_at_lengths(sel, pairs), by=CHECK_BY, denominator=d) for d in ("all", "decode")}
    decode_groups = dict(_groups_of(fronts["decode"]))
    rows = []
    for key, g in _groups_of(fronts["all"]):
        gd = decode_groups.get(key, g.iloc[0:0])
        base = {"part": part.text, "kind": part.kind, "claimed": claimed, "unit": "tok/s/GPU",
                "group": _group_name(key), "lengths": lengths_text(key[3], key[4]), "lengths_note": lengths_note}
        if not math.isnan(at):
            m_all, m_dec = capacity_at(g, [at])[0], capacity_at(gd, [at])[0] if len(gd) else math.nan
            lo, hi = _neighbours(g, at)
            if math.isnan(m_all):
                how = (f"{at:g} tok/s/user is outside the measured frontier "
                       f"({g['tok_s_per_user'].min():,.1f}–{g['tok_s_per_user'].max():,.1f} tok/s/user)")
                ids = []
            elif lo is not None and hi is not None and lo["tok_s_per_user"] != hi["tok_s_per_user"]:
                how = f"interpolated between {_point_text(lo)} and {_point_text(hi)}"
                ids = [row_id(lo), row_id(hi)]
            else:
                r = lo if lo is not None else hi
                how, ids = f"measured: {_point_text(r)}", [row_id(r)]
            rows.append({**base, "tok_s_per_user": at, "measured_all": m_all, "measured_decode": m_dec,
                         "measured_over_claimed": m_all / claimed, "how": how, "rows": ids})
        else:
            cap = g.loc[g["tok_s_per_gpu"].idxmax()]
            capd = gd.loc[gd["tok_s_per_gpu"].idxmax()]["tok_s_per_gpu"] if len(gd) else math.nan
            rows.append({**base, "tok_s_per_user": cap["tok_s_per_user"], "measured_all": cap["tok_s_per_gpu"],
                         "measured_decode": capd, "measured_over_claimed": cap["tok_s_per_gpu"] / claimed,
                         "how": f"measured capacity (highest tok/s/GPU): {_point_text(cap)}", "rows": [row_id(cap)]})
    return rows


def _per_user_rows(claim, part, sel, pairs, lengths_note) -> list[dict]:
    rows = []
    full = sel.set_index(["source_file", "source_line"]) if len(sel) else sel
    for key, g in _groups_of(frontier.frontier(_at_lengths(sel, pairs), by=CHECK_BY)):
        end = single_user_end(g)
        cap = g.loc[g["tok_s_per_gpu"].idxmax()]
        src = full.loc[(end["source_file"], end["source_line"])]
        src = (src.iloc[0] if isinstance(src, pd.DataFrame) else src).to_dict()
        sol_bw, sol_comm = own_sol(src)
        rows.append({"model": src.get("model"), "n_gpus": end.get("n_gpus"), "own_sol_tok_s_per_user": sol_bw,
                     "own_sol_comm_tok_s_per_user": sol_comm, "share_of_own_sol_comm": end["tok_s_per_user"] / sol_comm,
                     "capacity_tok_s_per_gpu": cap["tok_s_per_gpu"], "capacity_tok_s_per_user": cap["tok_s_per_user"],
                     "capacity_row": row_id(cap),"part": part.text, "kind": part.kind, "claimed": part.value, "unit": "tok/s/user",
                     "group": _group_name(key), "lengths": lengths_text(key[3], key[4]),
                     "lengths_note": lengths_note, "tok_s_per_user": end["tok_s_per_user"],
                     "measured_all": end["tok_s_per_user"], "measured_decode": math.nan,
                     "measured_over_claimed": end["tok_s_per_user"] / part.value,
                     "how": f"fastest measured point: {end['tok_s_per_user']:,.1f} tok/s/user at concurrency "
                            f"{_fmt(end.get('concurrency'))}, {end['tok_s_per_gpu']:,.0f} tok/s/GPU ({row_id(end)})",
                     "rows": [row_id(end)]})
    return rows


def _best_side(front: pd.DataFrame, pair, axis: str, at: float):
    """The best group of one side of a ratio at one length pair: (value, group name, row ids)."""
    best = (math.nan, "", [])
    for key, g in _groups_of(front):
        if (key[3], key[4]) != pair:
            continue
        if axis == "tok/s/user":
            end = single_user_end(g)
            v, ids = end["tok_s_per_user"], [row_id(end)]
        else:
            v, ids = capacity_at(g, [at])[0], []
        if not math.isnan(v) and (math.isnan(best[0]) or v > best[0]):
            best = (v, _group_name(key), ids)
    return best


def _ratio_rows(claim, part, pts) -> list[dict]:
    base = {"part": part.text, "kind": "ratio", "claimed": part.value, "unit": f"× ({part.axis or 'not stated'})",
            "measured_decode": math.nan, "lengths_note": ""}
    axis = part.axis or ""
    proxy = ""
    if axis not in ("tok/s/user", "tok/s/GPU") or not part.baseline:
        uncheckable = [{**base, "group": "", "lengths": "", "tok_s_per_user": math.nan, "measured_all": math.nan,
                        "measured_over_claimed": math.nan, "rows": [],
                        "how": f"not checkable from the points table (axis {axis or 'not stated'}: no power or cost "
                               "data" + ("" if part.baseline else "; no baseline named") + ")"}]
        if not part.baseline or math.isnan(part.at_tok_s_per_user) and "MW" not in axis:
            return uncheckable
        # Throughput per MW is closest to throughput per GPU at equal interactivity: shown as a labelled proxy.
        axis, proxy = "tok/s/GPU", f"proxy for {part.axis} (per GPU, no power data): "
    side_a, _ = _select_for_part(claim, part, pts)
    keys = _hw_keys(pts)
    side_b = pts[(keys == _hw_key(part.baseline)) | (keys.map(_generation) == str(part.baseline).lower())]
    if part.baseline_scope:
        side_b = side_b[side_b["scope"] == part.baseline_scope]
    at = part.at_tok_s_per_user if not math.isnan(part.at_tok_s_per_user) else REFERENCE_TOK_S_PER_USER
    front_a, front_b = frontier.frontier(side_a, by=CHECK_BY), frontier.frontier(side_b, by=CHECK_BY)
    pairs_a = {(k[3], k[4]) for k, _ in _groups_of(front_a)}
    pairs_b = {(k[3], k[4]) for k, _ in _groups_of(front_b)}
    common = sorted(p for p in pairs_a & pairs_b if not any(pd.isna(x) for x in p))
    want = stated_lengths(claim)
    note = ("at the stated lengths" if want in common else
            f"no pair measured on both sides at the stated {lengths_text(*want)}; every common pair shown"
            if want else "lengths not stated: both sides at the same ISL/OSL")
    rows = []
    for pair in ([want] if want in common else common):
        a, b = _best_side(front_a, pair, axis, at), _best_side(front_b, pair, axis, at)
        measured = a[0] / b[0]
        what = "fastest per-user point" if axis == "tok/s/user" else f"tok/s/GPU at {at:g} tok/s/user"
        rows.append({**base, "group": f"{a[1]} vs {b[1]}", "lengths": lengths_text(*pair), "lengths_note": note,
                     "tok_s_per_user": at if axis == "tok/s/GPU" else math.nan, "measured_all": measured,
                     "measured_over_claimed": measured / part.value, "rows": a[2] + b[2],
                     "how": f"{proxy}{what}: {a[0]:,.1f} ({a[1]}) / {b[0]:,.1f} ({b[1]}, best {part.baseline} "
                            f"frontier) = {measured:.2f}×"
                            + ("" if axis == "tok/s/user" or not math.isnan(part.at_tok_s_per_user) else
                               f" ({REFERENCE_TOK_S_PER_USER:g} tok/s/user chosen: the claim names no level)")})
    if not rows:
        rows.append({**base, "group": "", "lengths": "", "tok_s_per_user": math.nan, "measured_all": math.nan,
                     "measured_over_claimed": math.nan, "rows": [],
                     "how": f"no length pair measured on both {part.hardware or claim.hardware} and {part.baseline}"})
    return rows


CHECK_COLUMNS = ["part", "kind", "claimed", "unit", "group", "lengths", "tok_s_per_user", "measured_all",
                 "measured_decode", "measured_over_claimed", "how", "rows", "lengths_note", "model", "n_gpus",
                 "own_sol_tok_s_per_user", "own_sol_comm_tok_s_per_user", "share_of_own_sol_comm",
                 "capacity_tok_s_per_gpu", "capacity_tok_s_per_user", "capacity_row"]


def check_parts(claim: Claim, points: pd.DataFrame | None) -> tuple[pd.DataFrame, str]:
    """Each number of the claim against the measured frontier of matching hardware, precision and lengths.

    One row per part × measured group (hardware · precision · scope at one ISL/OSL): per-user parts against the
    fastest point, per-GPU parts at their stated tok/s/user (both GPU denominators) or against the measured
    capacity, ratio parts computed from both sides at equal lengths. Returns the table and which points were used.
    """
    pts, used = _model_points(claim, points)
    rows: list[dict] = []
    for part in claim_parts(claim):
        if part.kind == "ratio":
            rows += _ratio_rows(claim, part, pts) if len(pts) else []
            continue
        if part.kind not in ("per-user", "per-GPU", "per-system"):
            continue
        sel, hw_note = _select_for_part(claim, part, pts)
        pairs, lengths_note = matched_lengths(claim, sel)
        note = "; ".join(x for x in (lengths_note, hw_note) if x)
        if part.kind == "per-user":
            rows += _per_user_rows(claim, part, sel, pairs, note)
        else:
            rows += _capacity_rows(claim, part, sel, pairs, note)
    table = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    return table.sort_values(["part", "measured_all"], ascending=[True, False], key=lambda s: s if s.name !=
                             "part" else s.map({p.text: i for i, p in enumerate(claim_parts(claim))}),
                             na_position="last").reset_index(drop=True), used


def check_statements(claim: Claim, checks: pd.DataFrame) -> list[str]:
    """One sentence per part: the claim against the best matching measured group (lengths and rows named)."""
    out = []
    for part in claim_parts(claim):
        c = checks[checks["part"] == part.text]
        if c.empty:
            out.append(f"“{part.text}”: no matching measured points.")
            continue
        ok = c[c["measured_all"].notna()]
        if ok.empty:
            out.append(f"“{part.text}”: {c.iloc[0]['how']}.")
            continue
        top = ok.iloc[0]
        if part.kind == "ratio":
            spread = (f" (range {ok['measured_all'].min():.1f}–{ok['measured_all'].max():.1f}× over "
                      f"{len(ok)} length pairs)" if len(ok) > 1 else "")
            out.append(f"“{part.text}”: the data give {top['measured_all']:.1f}× ({top['lengths']}; "
                       f"{top['how']}){spread}, {top['measured_over_claimed']:.0%} of the claimed "
                       f"{part.value:g}×.")
            continue
        unit = top["unit"]
        where = (f"at {part.at_tok_s_per_user:g} tok/s/user " if part.kind != "per-user"
                 and not math.isnan(part.at_tok_s_per_user) else "")
        text = (f"“{part.text}”: claimed {top['claimed']:,.0f} {unit}; the best matching measured frontier "
                f"{where}gives {top['measured_all']:,.1f} {unit} ({top['group']}, {top['lengths']}; "
                f"{top['how']}) = {top['measured_over_claimed']:.1%} of the claim")
        if part.kind != "per-user" and not math.isnan(top["measured_decode"]) and \
                abs(top["measured_decode"] - top["measured_all"]) > 1e-9 * max(1.0, top["measured_all"]):
            text += (f"; counting decode GPUs only it is {top['measured_decode']:,.1f} "
                     f"({top['measured_decode'] / top['claimed']:.1%})")
        if part.kind != "per-user" and "interpolated" in str(top["how"]):
            text += f". Caveat: {SNAPSHOT_CAVEAT}"
        if top["lengths_note"]:
            text += f" [{top['lengths_note']}]"
        out.append(text + ".")
    return out


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
            f"{fastest['precision']}, {lengths_text(fastest.get('isl'), fastest.get('osl'))}, "
            f"spec decode {fastest.get('spec_decode')}) reaches "
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
            f"The claim does not say. In the nearest evidence ({top['model']} on {top['hardware']}, {top['precision']}, "
            f"{top['lengths']}) "
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
                    f"{f:.0%} ({_plabel(p)})" for p, f in zip(node["precision"], node["fraction_of_sol_comm"]))
                    + " of the bound with the communication floor "
                    f"({node['sol_tok_s_per_user_comm'].iloc[0]:,.0f} tok/s/user; bandwidth alone: " + ", ".join(
                        f"{v:,.0f}" for v in node["sol_tok_s_per_user"]) + ").")
        if fastest is not None:
            parts.append(f"The fastest similar measured point ({lengths_text(fastest.get('isl'), fastest.get('osl'))}) "
                         f"ran on {_fmt(fastest.get('n_gpus'))} GPUs (scope {fastest.get('scope')}).")
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
                         f"TTFT p50 {fastest.get('ttft_ms_p50'):,.0f} ms ({lengths_text(fastest.get('isl'), fastest.get('osl'))}).")
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
            # FP4 against FP8 only at equal input/output lengths: the lengths change per-user speed by themselves.
            pairs, _ = matched_lengths(claim, same)
            found = []
            for isl, osl in pairs:
                at = same[(same["isl"] == isl) & (same["osl"] == osl)]
                fp4, fp8 = at[at["precision"] == "fp4"], at[at["precision"] == "fp8"]
                if len(fp4) and len(fp8):
                    f4, f8 = fp4.loc[fp4["tok_s_per_user"].idxmax()], fp8.loc[fp8["tok_s_per_user"].idxmax()]
                    found.append(f"{lengths_text(isl, osl)}: {f4['tok_s_per_user']:,.0f} vs "
                                 f"{f8['tok_s_per_user']:,.0f} ({f4['tok_s_per_user'] / f8['tok_s_per_user']:.2f}×)")
                    rows += [f4["row"], f8["row"]]
            if found:
                parts.append(f"Measured on {hw0}, fastest FP4 point against fastest FP8 point at the same lengths: "
                             + "; ".join(found) + ".")
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
    checks: pd.DataFrame = field(default_factory=pd.DataFrame)
    checked_on: str = ""
    evidence_lengths: list = field(default_factory=list)   # the ISL/OSL pairs drawn in colour
    evidence_lengths_note: str = ""

    @property
    def figure_title(self) -> str:
        """A title that states the finding: the claim against the fastest measured point and the batch-1 bound."""
        user = per_user_value(self.claim)
        c = self.claim
        unit = {"per-user": "tok/s/user", "per-GPU": "tok/s/GPU", "per-system": "tok/s per system"}.get(c.kind, c.unit)
        parts = [f"{c.id}: {c.value_qualifier + ' ' if c.value_qualifier else ''}{_num(c.value)} {unit}"]
        if c.kind != "per-user" and not math.isnan(user):
            parts.append(f"at {_num(user)} tok/s/user; that speed")
        if c.kind != "per-user" and len(self.checks) and self.checks["measured_all"].notna().any():
            r = self.checks[self.checks["measured_all"].notna()].iloc[0]
            what = f"{r['measured_all']:.1f}×" if r["kind"] == "ratio" else f"{_num(r['measured_all'])} {r['unit']}"
            return (f"{c.id}: claimed {_num(r['claimed'])}{'×' if r['kind'] == 'ratio' else ' ' + r['unit']}"
                    + (f" at {r['tok_s_per_user']:g} tok/s/user" if r["kind"] != "ratio" and
                       pd.notna(r["tok_s_per_user"]) and not math.isnan(user) else "")
                    + f";\nmeasured {what} ({r['group']}, {r['lengths']})")
        if len(self.evidence_summary) and not math.isnan(user):
            top = self.evidence_summary.iloc[0]
            parts.append(f"is {user / top['fastest_tok_s_per_user']:.1f}× the fastest measured {top['model']} point "
                         f"on {top['hardware']} ({top['lengths']})")
        base = self.sol[(self.sol["tokens_per_step"] == 1.0) & self.sol["fits"]] if len(self.sol) else self.sol
        if len(base) and not math.isnan(user):
            r = base.sort_values(["gpus", "sol_tok_s_per_user"], ascending=[True, False]).iloc[0]
            parts.append(f"and {_pct(user / r['sol_tok_s_per_user_comm'])} of the batch-1 bound of {r['scope']} at "
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
            "SOL tok/s/user (bandwidth only, no communication floor)": s["sol_tok_s_per_user"].map(_num),
            "communication floor µs/step": (s["comm_floor_ms"] * 1000).map(lambda v: f"{v:,.0f}"),
            "SOL tok/s/user with communication": s["sol_tok_s_per_user_comm"].map(_num),
            "achievable tok/s/user with communication": s["sol_tok_s_per_user_achievable_comm"].map(_num),
            "GB read per step": s["bytes_per_step_gb"].map(lambda v: f"{v:,.1f}"),
            "HBM GB needed / available": [f"{a:,.0f} / {b:,.0f}" for a, b in zip(s["hbm_needed_gb"],
                                                                                s["hbm_available_gb"])],
            "claim / SOL with communication": s["fraction_of_sol_comm"].map(lambda f: "–" if math.isnan(f) else _pct(f)),
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
            "checks": self.checks.to_dict("records"), "checked_on": self.checked_on,
            "check_statements": check_statements(self.claim, self.checks),
            "verdict": self.verdict, "headline": self.headline,
        }

    @property
    def headline(self) -> str:
        """One line for the report index: the claim, its kind, and the first part's check."""
        first = self.checks[self.checks["measured_over_claimed"].notna()] if len(self.checks) else self.checks
        text = f"{self.claim.id}: {claim_title(self.claim)} — {kinds_text(self.claim)}"
        if len(first):
            r = first.iloc[0]
            v = r["measured_all"]
            what = f"{v:.1f}×" if r["kind"] == "ratio" else f"{v:,.0f} {r['unit']}" if v >= 1000 else \
                f"{v:,.1f} {r['unit']}"
            at = (f" at {r['tok_s_per_user']:g} tok/s/user" if r["kind"] in ("per-GPU", "per-system")
                  and pd.notna(r["tok_s_per_user"]) and not str(r["how"]).startswith("measured capacity") else "")
            text += (f"; measured {what}{at} ({r['group']}, {r['lengths']}) = {_pct(r['measured_over_claimed'])} "
                     "of the claim")
        return text + "."

    def checks_display(self) -> pd.DataFrame:
        """The checks as a reader sees them: the part, the measured group and lengths, both GPU denominators."""
        if self.checks.empty:
            return self.checks
        c = self.checks
        return pd.DataFrame({
            "claimed": [f"{p} ({v:,.4g} {u})" for p, v, u in zip(c["part"], c["claimed"], c["unit"])],
            "measured group": c["group"], "ISL/OSL": c["lengths"],
            "at tok/s/user": c["tok_s_per_user"],
            "measured (all GPUs)": c["measured_all"], "measured (decode GPUs only)": c["measured_decode"],
            "measured / claimed": c["measured_over_claimed"].map(lambda f: "–" if pd.isna(f) else _pct(f)),
            "how": c["how"],
        })


def _model_note(claim: Claim) -> str:
    if not claim.model_table:
        return f"{claim.model} is not in the model table: no roofline for it."
    if claim.model_note:
        return claim.model_note
    if specs.normalize_name(claim.model) != specs.normalize_name(claim.model_table):
        return f"{claim.model} is computed as {claim.model_table} (data/specs/models.csv)."
    return ""


KIND_TEXT = {"per-user": "a single-user (per-user) speed", "per-GPU": "a per-GPU throughput",
             "per-system": "a whole-system throughput", "ratio": "a ratio between systems",
             "latency": "a latency constraint"}


def kinds_text(claim: Claim) -> str:
    """"a single-user (per-user) speed and a whole-system throughput" for a compound claim."""
    kinds = list(dict.fromkeys(p.kind for p in claim_parts(claim)))
    many = {k for k in kinds if sum(p.kind == k for p in claim_parts(claim)) > 1}
    words = ["ratios between systems" if k == "ratio" and k in many else KIND_TEXT[k] for k in kinds]
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def _sol_sentence(claim: Claim, sol: pd.DataFrame) -> str:
    """The smallest setting whose batch-1 bound allows the per-user speed, from the achievable line and the
    communication floor as well as the datasheet."""
    user = per_user_value(claim)
    base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]].sort_values(["gpus", "sol_tok_s_per_user"])
    states = base.apply(_possible_at, axis=1) if len(base) else pd.Series(dtype=str)
    ok = base[states == "possible"]
    near = base[states == "near-peak"]
    parts = []
    if len(near) and (ok.empty or near.iloc[0]["gpus"] < ok.iloc[0]["gpus"]):
        r = near.iloc[0]
        parts.append(f"Without speculative decoding, {r['scope']} at {_plabel(r['precision'])} is above the "
                     f"achievable line: possible only at near-peak bandwidth ({user:,.0f} is "
                     f"{_pct(user / r['sol_tok_s_per_user_comm'])} of the datasheet bound "
                     f"{r['sol_tok_s_per_user_comm']:,.0f} and {_pct(user / r['sol_tok_s_per_user_achievable_comm'])}"
                     f" of the achievable {r['sol_tok_s_per_user_achievable_comm']:,.0f}).")
    if len(ok):
        r = ok.iloc[0]
        comm = r["comm_floor_ms"] > 0
        parts.append(f"The smallest setting whose bound comfortably allows it is {r['scope']} at "
                     f"{_plabel(r['precision'])} (claim = {_pct(user / r['sol_tok_s_per_user_comm'])} of "
                     f"{r['sol_tok_s_per_user_comm']:,.0f}"
                     + (f", a bound set by the communication floor of {r['comm_floor_ms'] * 1000:,.0f} µs per step, "
                        f"not by bandwidth ({r['sol_tok_s_per_user']:,.0f})" if comm and
                        r["sol_tok_s_per_user_comm"] < r["sol_tok_s_per_user"] else "") + ").")
    if not parts:
        parts.append("No plausible precision and scope reaches it at batch 1 without speculative decoding.")
    return " ".join(parts)


def verdict(claim: Claim, restated: pd.DataFrame, sol: pd.DataFrame, summary: pd.DataFrame,
            checks: pd.DataFrame | None = None) -> str:
    """A few sentences from the computed facts: what kind of number each part is, how it compares with the
    measured frontier at matching hardware, precision and lengths, the batch-1 bound (per-user parts only: a
    capacity is not bounded by batch-1 speed), and what is missing."""
    user = per_user_value(claim)
    kinds = {p.kind for p in claim_parts(claim)}
    parts = [f"{claim.id} (“{claim_title(claim)}”) is {kinds_text(claim)}."]
    per_gpu = restated.set_index("axis").get("value", pd.Series(dtype=float)).get("tok/s/GPU", math.nan)
    if claim.kind == "per-user" and (per_gpu is None or math.isnan(per_gpu)) and kinds == {"per-user"}:
        parts.append("It cannot be restated per GPU: the batch and GPU count are not both stated.")
    if checks is not None and len(checks):
        parts += check_statements(claim, checks)
    if "per-user" in kinds:
        if not sol.empty and not math.isnan(user):
            parts.append(_sol_sentence(claim, sol))
        elif sol.empty:
            parts.append("No roofline: the model or hardware is not in the spec tables.")
        users = checks[checks["kind"] == "per-user"] if checks is not None and len(checks) else pd.DataFrame()
        if len(users):
            top = users.iloc[0]
            if pd.notna(top["share_of_own_sol_comm"]):
                share_claim = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]]["fraction_of_sol_comm"].min() \
                    if len(sol) else math.nan
                parts.append(f"For efficiency rather than raw speed: that evidence ({top['model']}, {top['group']}, "
                             f"{top['lengths']}) runs at {_pct(top['share_of_own_sol_comm'])} of its own model's "
                             f"batch-1 bound on its {_fmt(top['n_gpus'])} GPUs "
                             f"({top['own_sol_comm_tok_s_per_user']:,.0f} tok/s/user with the communication floor)"
                             + (f"; the claim needs at least {_pct(share_claim)} of {claim.model_table}'s bound in "
                                "the most favourable setting above" if not math.isnan(share_claim) else "") + ".")
            if "per-GPU" not in kinds and "per-system" not in kinds:
                parts.append(f"At capacity the same group ({top['group']}, {top['lengths']}) gives "
                             f"{top['capacity_tok_s_per_gpu']:,.0f} tok/s/GPU with "
                             f"{top['capacity_tok_s_per_user']:,.0f} tok/s per user.")
    if not len(summary) and (checks is None or checks.empty):
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
    checks, checked_on = check_parts(c, points)
    pairs, pairs_note = matched_lengths(c, ev)
    return ClaimCard(claim=c, restated=restated, answers=answers, sol=sol, sol_info=info,
                     sol_statements=sol_statements(c, sol), evidence=ev, evidence_summary=summary, frontier=front,
                     verdict=verdict(c, restated, sol, summary, checks), model_note=_model_note(c),
                     checks=checks, checked_on=checked_on, evidence_lengths=pairs, evidence_lengths_note=pairs_note)


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
    from analysis.report import quiet_kernel_stderr

    with quiet_kernel_stderr():  # the kernel's "running over TCP without encryption" warning is not the user's
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
