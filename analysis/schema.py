"""The points table: one row per benchmark point, units fixed by column name.

Every parser produces plain dicts keyed by these column names; :func:`to_points` turns them into a typed
DataFrame, fills what can be derived (tok/s/user from TPOT, tok/s/GPU from system throughput), and
:func:`validate_row` names the field and the reason when a value cannot be right (infinite, negative, a
word where a number belongs). Unknown is NaN or ``"unknown"``, never a guess.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.text import clean

UNKNOWN = "unknown"

# --- columns, grouped as in the design ------------------------------------------------------------
PROVENANCE = ["source_file", "source_line", "tool", "tool_version", "format", "run_id", "date", "flags",
              # raw-log (a tool's own output) or published-table (numbers transcribed from a publication), and
              # for a published row the address of the table it came from
              "source_kind", "source_url"]
CONFIGURATION = [
    "model", "hardware", "n_gpus", "scope", "scale_up_domain", "precision", "kv_dtype", "framework",
    "tp", "ep", "pp", "dp", "disagg", "n_prefill_gpus", "n_decode_gpus", "spec_decode", "scenario", "phase",
    # speculative decoding as a measured condition (spec_decode stays, the old one-word column)
    "spec_method", "draft_tokens", "acceptance_length", "acceptance_source",
    # independent model instances the GPUs run (decode workers when disaggregated), and what the load was
    "n_workers", "workload",
    # what a published table states beside the one-word columns: the checkpoint revision, the framework's version or
    # container image, and the per-component precision recipe in the source's words
    "model_revision", "framework_version", "precision_recipe",
]
LOAD = [
    "concurrency", "batch_size", "request_rate", "isl", "osl", "context_len", "num_requests", "failed_requests",
]
LATENCY = (
    [f"ttft_ms_{s}" for s in ("mean", "p50", "p90", "p99")]
    + [f"tpot_ms_{s}" for s in ("mean", "p50", "p90", "p99")]
    + [f"itl_ms_{s}" for s in ("mean", "p50", "p99")]
    + [f"e2e_ms_{s}" for s in ("mean", "p50", "p99")]
    + ["step_ms"]
)
THROUGHPUT = ["output_tok_s", "total_tok_s", "request_s"]
DERIVED = ["tok_s_per_user", "tok_s_per_user_def", "tok_s_per_gpu", "gpu_denominator"]
# power_w: average measured board power of ONE GPU (readers divide a deployment total by its GPU count).
ENERGY = ["power_w", "joules_per_output_token"]
# Step-timing extras: repeats for bootstrap, MoE geometry and measured coverage, bytes moved, spec-decode tau.
EXTRAS = [
    "step_ms_samples", "moe_experts", "moe_top_k", "experts_touched", "weight_bytes", "kv_bytes_read",
    "tokens_per_step",
]

COLUMNS = PROVENANCE + CONFIGURATION + LOAD + LATENCY + THROUGHPUT + DERIVED + ENERGY + EXTRAS

STRING_COLUMNS = {
    "source_file", "tool", "tool_version", "format", "run_id", "date", "flags", "model", "hardware", "scope",
    "precision", "kv_dtype", "framework", "spec_decode", "scenario", "phase", "tok_s_per_user_def",
    "gpu_denominator", "source_kind", "source_url", "spec_method", "acceptance_source", "workload",
    "model_revision", "framework_version", "precision_recipe",
}
BOOL_COLUMNS = {"disagg"}
OBJECT_COLUMNS = {"step_ms_samples"}
NUMERIC_COLUMNS = [c for c in COLUMNS if c not in STRING_COLUMNS | BOOL_COLUMNS | OBJECT_COLUMNS]

# Columns that hold a duration, a rate, a count or a size: never negative, never infinite.
NON_NEGATIVE = set(LATENCY) | set(THROUGHPUT) | {
    "tok_s_per_user", "tok_s_per_gpu", "power_w", "joules_per_output_token", "isl", "osl", "context_len",
    "num_requests", "failed_requests", "concurrency", "batch_size", "request_rate", "n_prefill_gpus",
    "n_decode_gpus", "moe_experts", "moe_top_k", "experts_touched", "weight_bytes", "kv_bytes_read",
    "tokens_per_step", "step_ms_samples", "draft_tokens",
}
POSITIVE = {"n_gpus", "tp", "ep", "pp", "dp", "step_ms", "scale_up_domain", "acceptance_length", "n_workers"}
# Above these a value is not physically plausible for LLM serving on today's hardware: the point is kept and
# flagged implausible-value (untrusted). Latencies are ms (1e9 ms is eleven days).
UPPER_BOUNDS = {
    "tok_s_per_user": 1e5, "tok_s_per_gpu": 1e6, "output_tok_s": 1e9, "total_tok_s": 1e10, "request_s": 1e7,
    "n_gpus": 1e5, "tp": 1e4, "ep": 1e4, "pp": 1e4, "dp": 1e5, "scale_up_domain": 1e5, "concurrency": 1e8,
    "batch_size": 1e8, "isl": 1e8, "osl": 1e8, "context_len": 1e8, "moe_experts": 1e5, "moe_top_k": 1e4,
    "tokens_per_step": 64, "acceptance_length": 64, "draft_tokens": 63, "n_workers": 1e5, "power_w": 1e8,
    **{c: 1e9 for c in LATENCY},
}
# Percentile chains that must be ordered; a chain broken beyond rounding flags percentiles-unordered.
PERCENTILE_CHAINS = [
    [f"{m}_ms_{s}" for s in ("p50", "p90", "p99") if f"{m}_ms_{s}" in LATENCY] for m in ("ttft", "tpot", "itl", "e2e")
]
# A point must hold at least one of these (or be flagged failed-run); a file whose metrics are all null gives none.
METRIC_COLUMNS = [c for c in LATENCY + THROUGHPUT + ["tok_s_per_user", "tok_s_per_gpu", "power_w"]]

# --- vocabularies ---------------------------------------------------------------------------------
SCOPES = ("single-gpu", "node", "rack", "multi-node", UNKNOWN)
PRECISIONS = ("bf16", "fp16", "fp8", "fp4", "int8", "int4", "mixed", UNKNOWN)
DENOMINATORS = ("all", "decode", "prefill")
PHASES = ("decode", "prefill", "serving", "offline", UNKNOWN)
SOURCE_KINDS = ("raw-log", "published-table")
SPEC_METHODS = ("none", "mtp", "eagle", "eagle3", "dspark", "dflash", "ngram", "draft-model", UNKNOWN)
# Where an acceptance length comes from: measured on the run's own prompts, forced (synthetic or simulated
# acceptance set at launch), golden (a committed reference curve the run was pinned to), stated (a publication's
# figure), assumed (perfclaims' own default); "unknown" where a point ran speculative decoding and none is known.
ACCEPTANCE_SOURCES = ("measured", "forced", "golden", "stated", "assumed", UNKNOWN)
_SPEC_ALIASES = {
    "none": "none", "off": "none", "no": "none", "false": "none", "disabled": "none", "": "none",
    "mtp": "mtp", "nextn": "mtp", "deepseek_mtp": "mtp", "eagle": "eagle", "eagle2": "eagle", "eagle3": "eagle3",
    "dspark": "dspark", "dflash": "dflash", "ngram": "ngram", "draft_model": "draft-model",
    "draftmodel": "draft-model", "draft-model": "draft-model", "medusa": "draft-model",
    # engines' own spellings: TensorRT-LLM decoding_type DraftTarget, SGLang STANDALONE (a separate draft model)
    "drafttarget": "draft-model", "draft_target": "draft-model", "standalone": "draft-model",
}


def normalize_spec_method(value: Any) -> str:
    """Map a tool's or a manifest's speculative-decoding word onto :data:`SPEC_METHODS` (``unknown`` otherwise)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    key = re.sub(r"[\s]", "", str(value).strip().lower()).replace("-", "_")
    if key in ("unknown", "nan", "not_stated"):
        return UNKNOWN
    if key.endswith("_mtp"):  # vLLM's per-model MTP methods: ernie_mtp, qwen3_next_mtp, glm4_moe_mtp ...
        return "mtp"
    return _SPEC_ALIASES.get(key, _SPEC_ALIASES.get(key.replace("_", "-"), UNKNOWN))

TOK_S_PER_USER_DEFS = {
    "1000/tpot_ms_p50": "median time per output token, decode only (the default)",
    "1000/step_ms": "one decode step of the whole batch (step-timing logs)",
    "1000/tpot_ms_mean": "mean time per output token",
    "output/concurrency": "system output tok/s divided by concurrency (includes TTFT and idle time)",
    "osl/e2e": "output tokens over end-to-end latency (includes TTFT)",
    "tool-per-user": "the tool's own per-user figure",
}

_PRECISION_ALIASES = {
    "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "fp8": "fp8", "float8": "fp8", "fp8_e4m3": "fp8", "e4m3": "fp8", "w8a8": "fp8",
    "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4", "w4a4": "fp4",
    "int8": "int8", "w8a16": "int8", "int4": "int4", "w4a16": "int4", "awq": "int4", "gptq": "int4",
    "mixed": "mixed",
}


def normalize_precision(value: Any) -> str:
    """Map a tool's precision spelling onto the vocabulary; anything else is ``unknown``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    key = re.sub(r"[\s\-]", "", str(value).strip().lower())
    return _PRECISION_ALIASES.get(key, UNKNOWN if key not in PRECISIONS else key)


def scope_for(n_gpus: float, scale_up_domain: float | None = None, multinode: bool | None = None) -> str:
    """Scope class from GPU count and the size of the NVLink/Infinity-Fabric domain they sit in."""
    if n_gpus is None or not np.isfinite(n_gpus):
        return UNKNOWN
    if n_gpus <= 1:
        return "single-gpu"
    domain = scale_up_domain if scale_up_domain and np.isfinite(scale_up_domain) else 8
    if n_gpus <= min(8, domain) and not multinode:
        return "node"
    if n_gpus <= domain and domain > 8:
        return "rack"
    return "multi-node"


def add_flag(flags: str | None, flag: str) -> str:
    parts = [f for f in (flags or "").split(";") if f]
    if flag not in parts:
        parts.append(flag)
    return ";".join(parts)


def has_flag(points: pd.DataFrame, flag: str) -> pd.Series:
    """Boolean mask of rows carrying ``flag``."""
    codes, values = pd.factorize(points["flags"].fillna(""))  # each distinct flag string is split once
    carries = np.array([flag in str(v).split(";") for v in values], dtype=bool)
    return pd.Series(carries[codes] if len(values) else np.zeros(len(codes), dtype=bool), index=points.index)


# --- validation -----------------------------------------------------------------------------------
@dataclass
class FieldError(Exception):
    """A value that cannot be right; names the field and why."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


def as_number(value: Any, field: str) -> float:
    """A finite float or NaN for missing; raises FieldError for words, booleans, infinities.

    Thousands separators (``"1,146.31"``) and numeric strings (LLMPerf writes ints as strings) are accepted.
    """
    if value is None:
        return math.nan
    if isinstance(value, bool):
        raise FieldError(field, f"expected a number, got boolean {value!r}")
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            x = float(value)
        except OverflowError:  # an integer with hundreds of digits
            digits = int(value).bit_length() * 0.30103
            raise FieldError(field, f"number too large (about {digits:.0f} digits)") from None
    elif isinstance(value, str):
        text = value.strip().replace(",", "")
        if text == "" or text.lower() in {"none", "null", "n/a", "na"}:
            return math.nan
        try:
            x = float(text)
        except ValueError:
            raise FieldError(field, f"expected a number, got {value!r}") from None
    else:
        raise FieldError(field, f"expected a number, got {type(value).__name__}")
    if math.isnan(x):
        raise FieldError(field, "NaN where a number is required")
    if math.isinf(x):
        raise FieldError(field, "Infinity where a finite number is required")
    return x


def validate_row(row: dict) -> dict:
    """Coerce one parsed row to the schema's types; raises FieldError naming the first bad field."""
    out: dict[str, Any] = {}
    replaced = False
    for key, value in row.items():
        if key not in COLUMNS:
            raise FieldError(key, "not a column of the points table")
        if key in NUMERIC_COLUMNS:
            if isinstance(value, float) and math.isnan(value):
                out[key] = math.nan
                continue
            x = as_number(value, key)
            if key in POSITIVE and not math.isnan(x) and x <= 0:
                raise FieldError(key, f"must be > 0, got {x:g}")
            if key in NON_NEGATIVE and not math.isnan(x) and x < 0:
                raise FieldError(key, f"must be >= 0, got {x:g}")
            out[key] = x
        elif key in BOOL_COLUMNS:
            if value is None or (isinstance(value, float) and math.isnan(value)):
                out[key] = pd.NA
            elif isinstance(value, str):
                out[key] = value.strip().lower() in {"true", "1", "yes"}
            else:
                out[key] = bool(value)
        elif key in OBJECT_COLUMNS:
            if value is not None and not isinstance(value, (list, tuple)):
                raise FieldError(key, f"expected a list of numbers, got {type(value).__name__}")
            out[key] = None if value is None else [as_number(v, key) for v in value]
            if key in NON_NEGATIVE and out[key] and min(out[key]) < 0:
                raise FieldError(key, f"must be >= 0, got {min(out[key]):g}")
        else:
            text = UNKNOWN if value is None or value == "" else str(value)
            safe = clean(text)  # lone surrogates (valid JSON escapes, invalid Unicode) become U+FFFD
            if "\ufffd" in safe and key != "flags":
                replaced = True
            out[key] = safe
    if replaced:
        out["flags"] = add_flag(out.get("flags") if out.get("flags") != UNKNOWN else "", "invalid-unicode")
    if "precision" in out:
        out["precision"] = normalize_precision(out["precision"])
        if out["precision"] == UNKNOWN and row.get("precision") not in (None, "", UNKNOWN):
            raise FieldError("precision", f"unknown precision {row.get('precision')!r}")
    if "scope" in out and out["scope"] not in SCOPES:
        raise FieldError("scope", f"must be one of {', '.join(SCOPES)}, got {out['scope']!r}")
    if "gpu_denominator" in out and out["gpu_denominator"] not in DENOMINATORS + (UNKNOWN,):
        raise FieldError("gpu_denominator", f"must be one of {', '.join(DENOMINATORS)}")
    check_spec(out, row)
    return out


def check_spec(out: dict, row: dict) -> None:
    """Speculative-decoding columns that cannot be right: a method or an acceptance source outside the vocabulary,
    an acceptance length below 1 (it counts the bonus token every verify step commits), a fractional number of
    drafted tokens, more tokens accepted per step than were verified (drafted + 1), or an acceptance length above 1
    on a point that ran no speculative decoding. ``spec_method`` words are normalised (``EAGLE3`` -> ``eagle3``)."""
    if "spec_method" in out:
        method = normalize_spec_method(out["spec_method"])
        raw = row.get("spec_method")
        if method == UNKNOWN and str(raw if raw is not None else "").strip().lower() not in ("", UNKNOWN, "nan"):
            raise FieldError("spec_method", f"unknown speculative-decoding method {raw!r}; one of "
                                            f"{', '.join(SPEC_METHODS)}")
        out["spec_method"] = method
    if "acceptance_source" in out:
        source = str(out["acceptance_source"]).strip().lower()
        if source not in ACCEPTANCE_SOURCES:
            raise FieldError("acceptance_source", f"must be one of {', '.join(ACCEPTANCE_SOURCES)}, got "
                                                  f"{out['acceptance_source']!r}")
        out["acceptance_source"] = source
    accepted = out.get("acceptance_length", math.nan)
    if accepted == accepted and accepted < 1:
        raise FieldError("acceptance_length", f"must be >= 1 (tokens committed per verify step, the bonus token "
                                              f"included), got {accepted:g}")
    drafted = out.get("draft_tokens", math.nan)
    if drafted == drafted and drafted != round(drafted):
        raise FieldError("draft_tokens", f"must be a whole number of drafted tokens, got {drafted:g}")
    if accepted == accepted and drafted == drafted and accepted > drafted + 1 + 1e-6:
        raise FieldError("acceptance_length", f"{accepted:g} tokens per step exceeds the {drafted:g} drafted + 1 "
                                              "verified")
    if accepted == accepted and accepted > 1 and out.get("spec_method") == "none":
        raise FieldError("acceptance_length", f"{accepted:g} tokens per step on a point whose spec_method is none")


# --- the table ------------------------------------------------------------------------------------
def empty_points() -> pd.DataFrame:
    return to_points([])


def _default(col: str):
    if col in STRING_COLUMNS:
        return UNKNOWN
    if col in BOOL_COLUMNS:
        return pd.NA
    if col in OBJECT_COLUMNS:
        return None
    return math.nan


def to_points(rows: Iterable[dict]) -> pd.DataFrame:
    """Typed points table from validated rows, with the derived columns filled where possible.

    Built column by column in one go (not by inserting columns into a frame), so a table of a few rows costs
    milliseconds: ingest calls this once per run, and the fuzz tests once per example.
    """
    records = list(rows)
    raw = pd.DataFrame.from_records(records, columns=COLUMNS) if records else None
    n = len(records)
    columns = {}
    for col in COLUMNS:
        series = raw[col] if raw is not None else pd.Series([], dtype="object")
        if col in NUMERIC_COLUMNS:
            columns[col] = pd.to_numeric(series, errors="coerce").astype("float64")
        elif col in STRING_COLUMNS:
            columns[col] = series.where(series.notna(), UNKNOWN).astype(str)
        elif col in BOOL_COLUMNS:
            columns[col] = series.astype("boolean")
        else:  # lists (repeat timings): None where a row has none
            columns[col] = pd.Series([None if _missing(v) else v for v in series], dtype="object",
                                     index=series.index) if n else series
    df = pd.DataFrame(columns)
    df["flags"] = df["flags"].replace(UNKNOWN, "")
    return plausibility(derive(df))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def plausibility(df: pd.DataFrame) -> pd.DataFrame:
    """Flag points whose values cannot all be real: above :data:`UPPER_BOUNDS` (``implausible-value``) or with
    percentiles out of order (``percentiles-unordered``). Negative values never get here (validate_row)."""
    if not len(df):
        return df
    bounded = list(UPPER_BOUNDS)
    with np.errstate(invalid="ignore"):
        over = (df[bounded].to_numpy(dtype=float) > np.array([UPPER_BOUNDS[c] for c in bounded])).any(axis=1)
        pairs = [(lo, hi) for chain in PERCENTILE_CHAINS for lo, hi in zip(chain, chain[1:])]
        lo = df[[p[0] for p in pairs]].to_numpy(dtype=float)
        hi = df[[p[1] for p in pairs]].to_numpy(dtype=float)
        unordered = (lo > hi * (1 + 1e-6) + 1e-9).any(axis=1)
    over |= impossible_setup(df)
    for mask, flag in ((over, "implausible-value"), (unordered, "percentiles-unordered"),
                       (output_above_total(df), "output-above-total"),
                       (implausible_dates(df["date"]), "implausible-date")):
        if mask.any():
            df.loc[mask, "flags"] = [add_flag(f, flag) for f in df.loc[mask, "flags"]]
    return df


def output_above_total(df: pd.DataFrame) -> np.ndarray:
    """Rows whose output tok/s exceeds their total (input + output) tok/s beyond rounding: over one window the
    output tokens are a part of all tokens, so one of the two rates is not what its name says."""
    with np.errstate(invalid="ignore"):
        out = df["output_tok_s"].to_numpy(dtype=float)
        total = df["total_tok_s"].to_numpy(dtype=float)
        return out > total * (1 + 1e-3) + 0.01


WHOLE_COUNTS = ("n_gpus", "tp", "ep", "pp", "dp", "n_workers", "n_prefill_gpus", "n_decode_gpus")
ZERO_IMPOSSIBLE = [c for c in LATENCY if c != "step_ms"]  # a time from request to token cannot be zero


def impossible_setup(df: pd.DataFrame) -> np.ndarray:
    """Rows whose configuration cannot exist: a fractional GPU or parallel degree (0.5 GPUs), more GPUs in one
    model copy than the deployment has (TP 16 on 1 GPU: tp × pp or ep above n_gpus), or a latency of exactly
    zero (a TPOT of 0 would make tok/s/user infinite)."""
    with np.errstate(invalid="ignore"):
        counts = df[list(WHOLE_COUNTS)].to_numpy(dtype=float)
        bad = (np.isfinite(counts) & (counts != np.floor(counts))).any(axis=1)
        n = df["n_gpus"].to_numpy(dtype=float)
        tp, pp, ep = (df[c].to_numpy(dtype=float) for c in ("tp", "pp", "ep"))
        per_copy = np.where(np.isnan(tp), 1.0, tp) * np.where(np.isnan(pp), 1.0, pp)
        bad |= (per_copy > n) | (ep > n)
        bad |= (df[ZERO_IMPOSSIBLE].to_numpy(dtype=float) == 0).any(axis=1)
    return bad


_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?)?")
FUTURE_SLACK_DAYS = 1  # clocks and time zones: a date up to a day ahead of today is accepted


def implausible_dates(dates: pd.Series, *, today: datetime.date | None = None) -> np.ndarray:
    """Dates that cannot be when a run happened: not on the calendar (2026-02-30), a time of day that does not
    exist (28:90:97), or later than today (2099-01-01). Text that is not a date ("unknown") is left alone."""
    today = today or datetime.date.today()
    limit = today + datetime.timedelta(days=FUTURE_SLACK_DAYS)
    verdict = {}
    for text in pd.unique(dates.astype(object)):
        m = _DATE.match(str(text)) if isinstance(text, str) else None
        if not m:
            verdict[text] = False
            continue
        y, mo, d, hh, mm, ss = m.groups()
        try:
            when = datetime.date(int(y), int(mo), int(d))
            if hh is not None:
                datetime.time(int(hh), int(mm), int(float(ss or 0)))
            verdict[text] = when > limit
        except ValueError:
            verdict[text] = True
    return np.array([verdict[t] for t in dates.astype(object)], dtype=bool)


def has_metric(row: dict) -> bool:
    """Whether a validated row holds any measured value (a latency, a throughput, a per-user or per-GPU speed)."""
    for col in METRIC_COLUMNS:
        x = row.get(col)
        if isinstance(x, float) and math.isfinite(x):
            return True
    return False


def littles_law_ratio(df: pd.DataFrame) -> pd.Series:
    """Streams decoding at once as the throughputs imply them ÷ as concurrency and latencies imply them.

    Little's law: streams decoding at once = output tok/s ÷ per-stream decode speed, which should match the client
    concurrency times the share of a request's life spent decoding. Both sides are built from **means** when the
    point has them (mean TTFT, mean e2e, mean TPOT): Little's law holds for means, and a median of a bimodal
    distribution (prefill/decode-disaggregated runs, where some requests wait for a prefill slot and others do
    not) can sit anywhere between the modes. A point without means falls back to the medians and tok/s/user.
    Far from 1 means a field is wrong."""
    have_means = (df["e2e_ms_mean"] > 0) & df["ttft_ms_mean"].notna()
    e2e = df["e2e_ms_mean"].where(have_means, df["e2e_ms_p50"])
    ttft = df["ttft_ms_mean"].where(have_means, df["ttft_ms_p50"])
    decoding = df["concurrency"] * (e2e - ttft) / e2e
    per_stream = (1000.0 / df["tpot_ms_mean"]).where(have_means & (df["tpot_ms_mean"] > 0), df["tok_s_per_user"])
    return (df["output_tok_s"] / per_stream) / decoding


def derive(df: pd.DataFrame) -> pd.DataFrame:
    """Fill tok/s/user and tok/s/GPU where the tool left them out but the inputs are there; ``spec_method`` from
    the old one-word ``spec_decode`` where a reader gave only that (old tables stay readable)."""
    df = df.copy()
    no_method = df["spec_method"] == UNKNOWN
    if no_method.any():
        words = df.loc[no_method, "spec_decode"]
        df.loc[no_method, "spec_method"] = words.map({w: normalize_spec_method(w) for w in words.unique()})
    known_method = df["spec_method"] != UNKNOWN
    df.loc[known_method & (df["spec_decode"] == UNKNOWN), "spec_decode"] = df.loc[
        known_method & (df["spec_decode"] == UNKNOWN), "spec_method"]
    df.loc[df["source_kind"] == UNKNOWN, "source_kind"] = "raw-log"
    missing_user = df["tok_s_per_user"].isna()
    from_tpot = missing_user & (df["tpot_ms_p50"] > 0)
    df.loc[from_tpot, "tok_s_per_user"] = 1000.0 / df.loc[from_tpot, "tpot_ms_p50"]
    df.loc[from_tpot, "tok_s_per_user_def"] = "1000/tpot_ms_p50"
    from_step = df["tok_s_per_user"].isna() & (df["step_ms"] > 0) & (df["phase"] == "decode")
    tau = df["tokens_per_step"].fillna(1.0)
    df.loc[from_step, "tok_s_per_user"] = 1000.0 * tau[from_step] / df.loc[from_step, "step_ms"]
    df.loc[from_step, "tok_s_per_user_def"] = "1000/step_ms"

    missing_out = df["output_tok_s"].isna() & df["tok_s_per_user"].notna() & (df["phase"] == "decode")
    df.loc[missing_out, "output_tok_s"] = df.loc[missing_out, "tok_s_per_user"] * df.loc[missing_out, "batch_size"]

    missing_gpu = df["tok_s_per_gpu"].isna() & (df["output_tok_s"] >= 0) & (df["n_gpus"] > 0)
    df.loc[missing_gpu, "tok_s_per_gpu"] = df.loc[missing_gpu, "output_tok_s"] / df.loc[missing_gpu, "n_gpus"]
    df.loc[missing_gpu & (df["gpu_denominator"] == UNKNOWN), "gpu_denominator"] = "all"

    ratio = littles_law_ratio(df)
    off = ratio.between(0.25, 2.0) == False  # noqa: E712 (NaN stays unflagged)
    off &= ratio.notna()
    if off.any():
        df.loc[off, "flags"] = [add_flag(f, "inconsistent-throughput") for f in df.loc[off, "flags"]]

    no_scope = df["scope"] == UNKNOWN
    if no_scope.any():
        df.loc[no_scope, "scope"] = [
            scope_for(n, d) for n, d in zip(df.loc[no_scope, "n_gpus"], df.loc[no_scope, "scale_up_domain"])
        ]
    return df


# --- flags ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Flag:
    """One flag a point can carry: what it means, whether fits and frontiers must leave the point out
    (``untrusted``), and whether it is a ``warning`` (a reader should doubt the point) or a ``note`` (a property of
    the tool or the setup, worth knowing, nothing wrong)."""

    name: str
    meaning: str
    untrusted: bool = False
    level: str = "warning"


FLAG_LIST = [
    Flag("failed-run", "the run completed no request; kept for the record, left out of every fit", untrusted=True),
    Flag("inconsistent-throughput", "output tok/s ÷ tok/s/user is far from concurrency × decode share of latency "
         "(Little's law); a field of this point is likely wrong", untrusted=True),
    Flag("invalid-result", "MLPerf LoadGen judged the run INVALID (a latency or minimum-duration constraint was "
         "not met)", untrusted=True),
    Flag("implausible-value", "a value lies outside what hardware can do (tok/s/user above 1e5, tok/s/GPU above "
         "1e6, an impossible count, a fractional GPU count, more GPUs per model copy than the deployment has, or a "
         "latency of zero); the point is kept but not believed", untrusted=True),
    Flag("percentiles-unordered", "a latency's percentiles are out of order (p50 > p90 or p90 > p99, or a mean "
         "outside min–max); the statistics cannot all be right", untrusted=True),
    Flag("output-above-total", "the output tok/s exceeds the total (input + output) tok/s, which cannot happen over "
         "one window: the source's output rate was taken over a shorter window than its name says (SGLang "
         "bench_one_batch_server's output_throughput divides by latency − the last request's TTFT). Where the "
         "reader could, it restated the rates from end-to-end quantities (flag derived-from-e2e); the run's timing "
         "is not believed either way", untrusted=True),
    Flag("zero-token-requests", "some requests the tool counted as completed returned no token (vLLM 0.5-0.6 writes "
         "TTFT 0 and no gaps for them); they are kept in the request table marked errored, counted in "
         "failed_requests, and left out of num_requests, isl/osl and the TTFT and e2e statistics, which are "
         "recomputed from the other requests"),
    Flag("truncated", "the summary was cut off before its closing section; values may be missing or partial",
         untrusted=True),
    Flag("conflicting-duplicate", "another file reports the same run, configuration, day and load with different "
         "numbers; both records are kept and neither is believed until one is removed", untrusted=True),
    Flag("implausible-date", "the run's date is not on the calendar (2026-02-30), its time of day does not exist "
         "(28:90:97), or it lies in the future (a typo or a skewed clock); history cannot place the point"),
    Flag("validity-unknown", "the MLPerf log states no VALID/INVALID result"),
    Flag("gpu-accounting-uncertain", "per-GPU fields do not add up under the documented GPU accounting"),
    Flag("tok-s-per-user-approx", "tok/s/user restated from another definition; approximate"),
    Flag("high-error-rate", "more than 5% of the run's requests failed"),
    Flag("was-cancelled", "the benchmark was cancelled before it finished"),
    Flag("invalid-unicode", "a name in the log held invalid Unicode; those characters are shown as \ufffd"),
    Flag("request-rate-inf", "all requests sent at once (request rate infinite); load set by concurrency",
         level="note"),
    Flag("per-user-includes-ttft", "the tool's per-user speed includes time to first token", level="note"),
    Flag("percentile-inverted", "the source's p99 interactivity is the slow tail (1000/p99 TPOT), as InferenceX "
         "always writes it; perfclaims reads TPOT percentiles instead", level="note"),
    Flag("derived-from-e2e", "per-user speed derived from end-to-end latency", level="note"),
    Flag("shard-measured", "one GPU's slice of a tensor-parallel deployment was timed (interconnect not timed); "
         "per-GPU throughput divides by the deployment's GPU count", level="note"),
    Flag("quant-unfused", "activations are quantised by separate kernels before each low-precision matmul (not "
         "fused into the kernel before it, as serving engines do); the step runs more kernels per layer",
         level="note"),
    Flag("random-weights", "the timed model has random weights: dense layers time as trained ones do, but an MoE "
         "router routes near-uniformly (a trained one concentrates on fewer experts)", level="note"),
    Flag("concurrency-achieved", "concurrency is the measured average in flight, not the client setting",
         level="note"),
    Flag("output-from-total", "output tok/s restated from the source's total (input + output) tok/s by the "
         "formula the source itself documents (output = total × osl / (isl + osl)); not a measured output figure",
         level="note"),
    Flag("conditions-assumed", "a condition of this published row (its latency statistic, GPU count, parallelism or "
         "request count) comes from another file or commit of the same source, not from the table itself; the "
         "table's note says which and why"),
    Flag("tokens-inferred", "the token rate is inferred by the tool (MLPerf LoadGen: samples per second × a fixed "
         "tokens-per-sample factor), not a count of generated tokens", level="note"),
    Flag("logical-tokens", "the source counts 'logical' tokens (its own definition, e.g. cached prefix tokens "
         "counted as processed); not comparable with tokens a GPU computed", level="note"),
    Flag("dated-history", "a dated re-run from the InferenceX history; read by the history report only, left out of "
         "frontiers, fits and claim checks so that one measurement is not counted twice", untrusted=True,
         level="note"),
]
FLAGS: dict[str, Flag] = {f.name: f for f in FLAG_LIST}
FLAG_LEVELS = ("warning", "note")

# Points kept in the table (and listed in the ingest report) but left out of fits and frontiers.
UNTRUSTED_FLAGS = tuple(f.name for f in FLAG_LIST if f.untrusted)


def flag_info(name: str) -> Flag:
    """The registered flag, or an unregistered warning (e.g. a flag a manifest sets) that says so."""
    return FLAGS.get(name) or Flag(name, "not a flag perfclaims defines (set by a manifest?)")


def trusted(points: pd.DataFrame) -> pd.Series:
    """Mask of points that carry none of the flags that make their numbers unusable."""
    mask = pd.Series(True, index=points.index)
    for flag in UNTRUSTED_FLAGS:
        mask &= ~has_flag(points, flag)
    return mask


def usable_for_fits(points: pd.DataFrame) -> pd.Series:
    """Rows a fit may use: trusted, with a per-user speed."""
    return trusted(points) & points["tok_s_per_user"].notna()
