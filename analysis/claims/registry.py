"""The claim registry: a claim's fields, parsed from a YAML file or a row in the columns of claims.csv."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from analysis import config, safe_yaml, specs
from analysis.schema import UPPER_BOUNDS
from analysis.text import whole

NOT_STATED = "not stated"
STATED, INFERRED = "stated", "inferred from data"
# A claim id names files (``<id>.yaml``, ``<out>/<id>.html``), so it may hold nothing that leaves a folder.
ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]+$")
KINDS = ("per-user", "per-GPU", "per-system", "ratio", "latency")
CSV_COLUMNS = ["id", "value", "unit", "hardware", "n_accelerators", "model", "precision", "isl_osl",
               "batch_or_concurrency", "spec_decode", "software", "date", "source", "source_type",
               "what_is_unstated", "sol_note"]

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


def is_stated(text) -> bool:
    return text is not None and str(text).strip() != "" and not str(text).strip().lower().startswith(NOT_STATED)


def _first_number(text) -> float:
    if not is_stated(text):
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
    if not is_stated(text):
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
    # the acceptance length the source states (mean tokens committed per verify step, bonus token included), how it
    # was measured, and the tokens drafted per step
    acceptance_length: object = NOT_STATED
    acceptance_text: str = NOT_STATED
    draft_tokens: object = NOT_STATED
    isl_osl: str = NOT_STATED
    latency: str = NOT_STATED            # limits such as "TTFT p99 <= 2 s; TPOT p50 <= 20 ms", or reported values
    scenario: str = NOT_STATED           # a benchmark scenario whose latency limits apply ("MLPerf Server")
    at_tok_s_per_user: object = NOT_STATED  # the per-user speed a per-GPU claim was made at
    counts: str = "output"               # the tokens a throughput claim counts: output, or total (input + output)
    software: str = NOT_STATED
    date: str = NOT_STATED
    source: str = NOT_STATED
    source_type: str = NOT_STATED
    provenance: str = ""                 # where the registry entry was read from: "shared/specs/claims.csv:21"
    value_qualifier: str = ""
    model_table: str | None = None        # the models.csv entry the roofline uses (None: not in the table)
    model_note: str = ""
    hardware_table: str | None = None     # the hardware.csv name the roofline uses
    what_is_unstated: str = ""
    sol_note: str = ""
    source_check: str = ""                # what the primary source says where the recorded claim differs from it
    parts: list = field(default_factory=list)  # every number of a compound claim (see ClaimPart); [] = the value
    path: str = ""

    def number(self, name: str) -> float:
        v = getattr(self, name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


PART_FIELDS = ("kind", "value", "text", "at_tok_s_per_user", "n_gpus", "hardware", "precision", "scope", "baseline",
               "baseline_scope", "axis")


# The unit each kind of part is compared in: a per-system number is compared per GPU (its value ÷ its GPU count).
PART_UNITS = {"per-user": "tok/s/user", "per-GPU": "tok/s/GPU", "per-system": "tok/s/GPU", "ratio": "×",
              "latency": "ms"}
# A ratio part's axis, read once: what the two sides are compared on (see :attr:`ClaimPart.axis_key`).
AXIS_KEYS = ("tok/s/user", "tok/s/GPU", "cost", "per-MW", "other")


@dataclass(frozen=True)
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

    @property
    def unit(self) -> str:
        """The unit the part is compared in (a per-system part per GPU)."""
        return PART_UNITS.get(self.kind, "")

    @property
    def compared_value(self) -> float:
        """The number compared with the evidence, in :attr:`unit`: a per-system total ÷ its GPU count (NaN when the
        count is not a positive number), any other kind as stated."""
        if self.kind != "per-system":
            return self.value
        n = self.n_gpus
        return self.value / n if isinstance(n, (int, float)) and math.isfinite(n) and n > 0 else math.nan

    @property
    def axis_key(self) -> str | None:
        """A ratio part's axis as one of :data:`AXIS_KEYS` (None for other kinds): the check table's second key."""
        if self.kind != "ratio":
            return None
        axis = str(self.axis or "")
        if "cost" in axis.lower() and self.baseline:
            return "cost"
        if "MW" in axis and self.baseline:
            return "per-MW"
        if axis in ("tok/s/user", "tok/s/GPU") and self.baseline:
            return axis
        return "other"


def claim_parts(claim: Claim) -> list[ClaimPart]:
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
        check_number(value, "value", where)
        for name in ("n_gpus", "at_tok_s_per_user"):
            if d.get(name) is not None:
                check_number(d[name], name, where)
        num = lambda k, d=d: float(d[k]) if isinstance(d.get(k), (int, float)) else math.nan  # noqa: E731
        n = num("n_gpus")
        if math.isnan(n) and d["kind"] != "ratio":
            n = claim.number("n_gpus")
        out.append(ClaimPart(kind=d["kind"], value=value, text=str(d.get("text") or value),
                             at_tok_s_per_user=num("at_tok_s_per_user"), n_gpus=n, hardware=d.get("hardware"),
                             precision=d.get("precision"), scope=d.get("scope"), baseline=d.get("baseline"),
                             baseline_scope=d.get("baseline_scope"), axis=d.get("axis")))
    return out


# The numbers a claim file may hold: (lowest allowed, whether it must be whole, highest). A count of GPUs is a whole
# number from 1; the claimed value is above zero (a claim of 0 or less says nothing a check could test).
NUMBER_FIELDS = {
    "value": (0.0, False, 1e12), "n_gpus": (1.0, True, UPPER_BOUNDS["n_gpus"]),
    "batch": (1.0, False, UPPER_BOUNDS["batch_size"]), "tokens_per_step": (1.0, False, UPPER_BOUNDS["tokens_per_step"]),
    "at_tok_s_per_user": (0.0, False, UPPER_BOUNDS["tok_s_per_user"]),
    "acceptance_length": (1.0, False, UPPER_BOUNDS["acceptance_length"]),
    "draft_tokens": (1.0, True, UPPER_BOUNDS["draft_tokens"]),
}


def check_number(value, name: str, where: str, *, stated_text_ok: bool = True) -> None:
    """ValueError (one line naming ``where`` and the field) unless ``value`` is "not stated" (or other text, when
    ``stated_text_ok``) or a finite number in the range :data:`NUMBER_FIELDS` gives ``name``."""
    lo, whole_only, hi = NUMBER_FIELDS[name]
    x = _as_number(value)
    if x is None and isinstance(value, str) and stated_text_ok:
        return  # words ("not stated", "8 (one node)") are read by the checks, not here
    if x is None:
        raise ValueError(f"{where}: field {name!r} must be a number or 'not stated', got {value!r}")
    if not math.isfinite(x):
        raise ValueError(f"{where}: field {name!r} must be a finite number, got {value!r}")
    low_ok = x > lo if lo == 0.0 else x >= lo
    if not low_ok or x > hi or (whole_only and x != int(x)):
        kind = "a whole number" if whole_only else "a number"
        bound = f"above {whole(lo)}" if lo == 0.0 else f"from {whole(lo)}"
        raise ValueError(f"{where}: field {name!r} must be {kind} {bound} to {whole(hi)}, got {value!r}")


def _as_number(value) -> float | None:
    """``value`` as a float when it is a number, or text that is one (YAML reads ``1e30`` as text); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    return None


def _check_numbers(doc: dict, where: str) -> None:
    for name in NUMBER_FIELDS:
        if name in doc and doc[name] is not None:
            check_number(doc[name], name, where, stated_text_ok=name != "value")


def lengths_in_tokens(text) -> tuple[float, float] | None:
    """(ISL, OSL) in tokens from lengths written ``1024/2048``, ``1k/1k`` or ``32K / 8K`` (``k`` is 1,024); None
    where the text is not stated or holds no such pair."""
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kK])?\s*/\s*(\d+(?:\.\d+)?)\s*([kK])?", str(text))
    if not (is_stated(text) and m):
        return None
    return (float(m.group(1)) * (1024 if m.group(2) else 1), float(m.group(3)) * (1024 if m.group(4) else 1))


def check_conditions(doc: dict, where: str) -> None:
    """Stated conditions a card would compute with: lengths written as ``ISL/OSL`` must be token counts of at least
    1 (``0/0`` had divided by zero deep in the card), and a precision label must be one the spec tables price."""
    from analysis import roofline

    lengths = doc.get("isl_osl")
    tokens = lengths_in_tokens(lengths)  # as the card reads them: 0.5k/1k is 512 / 1,024 tokens
    if tokens and min(tokens) < 1:
        raise ValueError(f"{where}: field 'isl_osl' must give lengths of at least 1 token each, got {lengths!r}")
    precision = doc.get("precision")
    if is_stated(precision) and str(precision).strip().lower() != "native":  # native: the model's own recipe
        try:
            roofline.parse_precision(str(precision))
        except (KeyError, ValueError) as err:
            raise ValueError(f"{where}: field 'precision': {err.args[0] if err.args else err}") from None


def claim_title(claim: Claim) -> str:
    """The claim as one readable phrase: the published text, with the unit only when the text lacks one."""
    text = str(claim.value_text).strip()
    if len(text) > 100 and claim.parts:  # a long published sentence: its checked parts say it shorter
        joined = "; ".join(str(p.get("text", "")) for p in claim.parts if isinstance(p, dict))
        return joined if len(joined) <= 140 else str(claim.parts[0].get("text")) + "; …"
    if re.search(r"tok/s|\d\s*[x×](?![a-z])|\bms\b|per MW|/GPU|/user", text, re.I):
        return text
    return f"{text} {claim.unit}"


def check_id(claim_id, *, where: str = "") -> str:
    """``claim_id`` as text when it is a safe file stem (letters, digits, ``.``, ``_``, ``-``); else ValueError."""
    text = str(claim_id)
    if not ID_PATTERN.match(text) or text in (".", ".."):
        raise ValueError(f"{where + ': ' if where else ''}claim id {text!r} may only hold letters, digits, "
                         "'.', '_' and '-'")
    return text


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
    check_number(value, "value", where)
    model_table = specs.match_model_name(row["model"])
    try:
        hw_table = specs.hardware(row["hardware"]).label
    except KeyError:
        hw_table = None
    n = _first_number(row.get("n_accelerators"))
    batch = _first_number(row.get("batch_or_concurrency"))
    if not math.isnan(n):
        check_number(n, "n_gpus", f"{where}: n_accelerators")
    spec = row.get("spec_decode", NOT_STATED)
    if is_stated(spec) and re.match(r"(no|none)\b", str(spec).lower()):
        spec = "none"
    return Claim(
        id=check_id(row["id"], where=where), value=value, value_text=str(row["value"]), value_qualifier=qual,
        unit=row["unit"],
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


def read_claims_csv(path: str | Path, *, only: str | None = None) -> list[Claim]:
    """Every claim in a CSV with the columns of ``shared/specs/claims.csv`` (``only``: just the row with that id,
    KeyError when none has it)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: claim file not found")
    if not path.is_file():
        raise ValueError(f"{path}: not a file")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a readable claims CSV ({str(err).strip().splitlines()[0][:160]})") from None
    absent = [c for c in ("id", "value", "unit", "model", "hardware") if c not in table.columns]
    if absent:
        raise ValueError(f"{path}: missing column(s) {', '.join(absent)} (expected the columns of claims.csv)")
    rows = [(i, r) for i, r in enumerate(table.to_dict("records")) if only is None or str(r["id"]).strip() == only]
    if only is not None and not rows:
        raise KeyError(f"{path}: no claim with id {only!r}")
    out = []
    for i, r in rows:
        claim = claim_from_row(r, where=f"{path}:{i + 2}")
        check_conditions({"isl_osl": claim.isl_osl, "precision": claim.precision}, f"{path}:{i + 2}")
        out.append(claim)
    return out


def read_claim_yaml(path: str | Path) -> Claim:
    """One claim from a registry YAML file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: claim file not found")
    if not path.is_file():
        raise ValueError(f"{path}: not a file (a claim is one YAML file, or a row of a CSV file)")
    try:
        doc = safe_yaml.load(path.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except safe_yaml.AliasBomb as err:
        raise ValueError(f"{path}: {err}") from None
    except RecursionError:
        raise ValueError(f"{path}: YAML nested too deeply") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise ValueError(f"{path}: {where}not valid YAML ({getattr(err, 'problem', None) or type(err).__name__})") \
            from None
    except ValueError as err:  # PyYAML builds 2025-13-45 as a date and fails outside its YAMLError
        raise ValueError(f"{path}: {err} (a date is YYYY-MM-DD, or text in quotes)") from None
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
        text = doc["value"]
        doc["value"], qual = parse_value(text)
        if math.isnan(doc["value"]):
            raise ValueError(f"{path}: field 'value': no number in {text!r}")
        doc.setdefault("value_qualifier", qual)
    _check_numbers(doc, str(path))
    check_conditions(doc, str(path))
    if doc["kind"] not in KINDS:
        raise ValueError(f"{path}: field 'kind' must be one of {', '.join(KINDS)}, got {doc['kind']!r}")
    doc.setdefault("value_text", str(doc["value"]))
    doc = {k: (NOT_STATED if v is None and k in ("n_gpus", "batch", "tokens_per_step", "at_tok_s_per_user",
                                                "acceptance_length", "draft_tokens") else v)
           for k, v in doc.items()}
    claim = Claim(**doc)
    claim.id = check_id(claim.id, where=str(path))
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
        if wanted:  # only the asked row is read: a fault in another row does not block it
            return read_claims_csv(path, only=wanted)[0]
        rows = read_claims_csv(path)
        if not rows:
            raise ValueError(f"{path}: no claim rows")
        return rows[0]
    if path.suffix.lower() in (".yaml", ".yml"):
        return read_claim_yaml(path)
    d = Path(claims_dir or config.CLAIMS_DIR)
    check_id(text)
    candidate = d / f"{text}.yaml"
    if not candidate.exists():
        raise KeyError(f"unknown claim {text!r}: no {candidate}; known: {', '.join(claim_ids(d)) or 'none'}")
    return read_claim_yaml(candidate)


def registry(claims_dir: str | Path | None = None) -> list[Claim]:
    """Every claim in the registry."""
    return [load_claim(i, claims_dir=claims_dir) for i in claim_ids(claims_dir)]


