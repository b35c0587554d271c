"""Measured evidence for a claim: the nearest points, their own speed of light, their frontiers."""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
import pandas as pd

from analysis import roofline, specs
from analysis.claims.conditions import DEFAULT_CONTEXT
from analysis.claims.jsonform import plain
from analysis.claims.labels import lengths_label
from analysis.claims.registry import Claim
from analysis.schema import trusted
from analysis.text import plain as plain_text

# --- 4. evidence -----------------------------------------------------------------------------------

_GENERATIONS = {"h100": "hopper", "h200": "hopper", "h800": "hopper", "b200": "blackwell", "b300": "blackwell",
                "gb200": "blackwell", "gb300": "blackwell", "mi300x": "cdna3", "mi325x": "cdna3", "mi355x": "cdna4"}


def generation(key: str) -> str | None:
    """"hopper" for h200 and h200sxm alike (the longest part name the key starts with)."""
    for part in sorted(_GENERATIONS, key=len, reverse=True):
        if str(key).startswith(part):
            return _GENERATIONS[part]
    return None


def hw_keys(points: pd.DataFrame) -> pd.Series:
    """``hw_key`` of every point's hardware, looked up once per distinct name."""
    return points["hardware"].map({h: hw_key(h) for h in points["hardware"].dropna().unique()})


@lru_cache(maxsize=256)
def hw_key(name) -> str:
    try:
        return specs.normalize_name(specs.hardware(str(name)).short_name)
    except KeyError:
        return specs.normalize_name(name)


def family(name) -> str:
    """"deepseek" for DeepSeek-V4-Flash and DeepSeek-R1-0528 alike, "llama" for every Llama (the first word of
    the name): a model of the same family may stand in for another only at a comparable size (:data:`PROXY_RULE`)."""
    m = re.match(r"[A-Za-z]+", str(name))
    return m.group(0).lower() if m else ""


# Another model stands in for the claim's (proxy evidence) only when it is of the same family, built the same way
# (mixture of experts or dense) and within this factor in active parameters (total where active is not known):
# Llama 3.1 8B says nothing about Llama 4 Maverick (400B MoE, 17B active), DeepSeek-R1 (37B active) something
# about DeepSeek-V4-Flash (13B active), labelled proxy.
PROXY_SIZE_RATIO = 4.0
OTHER_MODEL = "other model"
PROXY_RULE = (f"same family, both mixture-of-experts or both dense, active parameters within "
              f"{plain_text(PROXY_SIZE_RATIO)}×")
_SIZE = r"(\d+(?:\.\d+)?)\s*([bt])"


@lru_cache(maxsize=512)
def model_size(name) -> tuple[float | None, float | None]:
    """(total, active) parameters in billions: from the model table, else from the name ("400B total, 17B active",
    "Qwen3-235B-A22B", "70B"); None where not known (a name with one size gives the total only)."""
    try:
        m = specs.model(str(name))
        return float(m.total_params_b), float(m.active_params_b)
    except KeyError:
        pass
    text = str(name).lower()

    def billions(match) -> float:
        return float(match.group(1)) * (1000.0 if match.group(2) == "t" else 1.0)

    total = re.search(_SIZE + r"\s*(?:total|params|parameters)", text)
    active = re.search(_SIZE + r"\s*active", text) or re.search(r"\ba(\d+(?:\.\d+)?)(b)\b", text)
    sizes = list(re.finditer(r"(?<![\d.x])" + _SIZE + r"\b", text))
    total_b = billions(total) if total else (billions(sizes[0]) if len(sizes) == 1 and not active else None)
    return total_b, billions(active) if active else None


_QUANT_SUFFIX = re.compile(r"(?:nvfp4|mxfp4|fp4|fp8|int4|int8|w4a16|w8a8|bf16|fp16)$")
_SIZE_SUFFIX = re.compile(r"\s+\d+(?:\.\d+)?\s*[bt]$", re.IGNORECASE)


def model_key(name) -> str:
    """A model's name as a checkpoint key: letters and digits, without a trailing quantization word or size
    (``DeepSeek-V4-Flash-NVFP4`` is ``deepseekv4flash``, ``DeepSeek-V4-Pro 1.6T`` is ``deepseekv4pro``)."""
    return _QUANT_SUFFIX.sub("", specs.normalize_name(_SIZE_SUFFIX.sub("", str(name).strip())))


def _alternatives(name) -> list[str]:
    """The checkpoints a claim's model name names: "DeepSeek V3/R1 671B" names DeepSeek V3 and DeepSeek R1."""
    text = re.sub(r"\([^)]*\)", "", str(name)).strip()
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if len(parts) < 2:
        return [text]
    head = re.sub(r"[A-Za-z0-9.]+$", "", parts[0])   # "DeepSeek " of "DeepSeek V3"
    word = head.strip().lower()
    return [parts[0]] + [p if not word or p.lower().startswith(word) else head + p for p in parts[1:]]


def same_checkpoint(claim_model, point_model) -> bool:
    """Whether a point ran the checkpoint the claim names: the same key, or a revision the claim's name covers
    (a claim for "DeepSeek-R1" covers DeepSeek-R1-0528, "DeepSeek V3/R1" covers both; one for "DeepSeek V4.1 Flash"
    does not cover DeepSeek-V4-Flash-0731, another checkpoint of the same architecture)."""
    b = model_key(point_model)
    for alt in _alternatives(claim_model):
        a = model_key(alt)
        if a and (a == b or b.startswith(a)):
            return True
    return False


_ARCHITECTURE = ("total_params_b", "active_params_b", "n_layers", "hidden", "n_heads", "n_kv_heads", "head_dim",
                 "vocab", "attention", "n_experts", "top_k", "n_moe_layers", "kv_lora_rank", "qk_rope_head_dim")


@lru_cache(maxsize=512)
def same_architecture(a, b) -> bool:
    """True when two model-table entries describe one architecture (DeepSeek-V3 and DeepSeek-R1: the same
    config, another training): evidence of one is same-model evidence for the other, labelled with both names."""
    if not a or not b:
        return False
    if a == b:
        return True
    try:
        ma, mb = specs.model(str(a)), specs.model(str(b))
    except KeyError:
        return False
    return all(getattr(ma, f) == getattr(mb, f) for f in _ARCHITECTURE)


def _is_moe(size: tuple[float | None, float | None]) -> bool | None:
    total, active = size
    return None if total is None or active is None else total > 1.05 * active


def comparable_size(claim_model, point_model) -> bool:
    """True when ``point_model`` may stand in for ``claim_model`` by size (see :data:`PROXY_RULE`); unknown sizes
    do not rule a model out."""
    a, b = model_size(claim_model), model_size(point_model)
    moe_a, moe_b = _is_moe(a), _is_moe(b)
    if moe_a is not None and moe_b is not None and moe_a != moe_b:
        return False
    for x, y in ((a[1], b[1]), (a[0], b[0])):  # active parameters first, else total
        if x and y:
            return max(x, y) / min(x, y) <= PROXY_SIZE_RATIO
    return True


# Formats whose source_line is the 1-based index of a record in one JSON array (InferenceX API snapshot); a
# reader opens that record with the JSON pointer ``file#/<index - 1>``, not a line number.
JSON_ARRAY_FORMATS = {"inferencex-api"}
EVIDENCE_FIELDS = ["source", "model", "hardware", "precision", "isl", "osl", "spec_decode", "framework", "disagg",
                   "n_gpus", "concurrency", "tok_s_per_user", "tok_s_per_gpu", "ttft_ms_p50", "ttft_ms_p99",
                   "tpot_ms_p50", "tpot_ms_p99",
                   # added: where a published row comes from, what it measured and at which statistic
                   "source_url", "source_kind", "workload", "scope", "tok_s_per_user_def", "ttft_ms_mean",
                   "tpot_ms_mean", "num_requests", "spec_method", "acceptance_length", "acceptance_source", "date",
                   # added: how many requests stand behind the point and the 95% interval of each speed
                   # (analysis.claims.selection.UNCERTAINTY_FIELDS)
                   "n_requests", "n_requests_source", "n_requests_ref", "tok_s_per_user_lo", "tok_s_per_user_hi",
                   "tok_s_per_user_interval", "tok_s_per_gpu_lo", "tok_s_per_gpu_hi", "tok_s_per_gpu_interval",
                   "interval_level", "n_repeats", "repeat_spread_tok_s_per_user", "repeat_spread_tok_s_per_gpu"]


def row_id(row) -> str:
    """Where a point can be opened: ``file:line`` for line-based files, ``file#/<i>`` (a JSON pointer) for a
    record of a JSON array, the file alone for a file that is one record."""
    line = row.get("source_line")
    name = str(row.get("source_file"))
    if line is None or (isinstance(line, float) and math.isnan(line)):
        return name
    if row.get("format") in JSON_ARRAY_FORMATS:
        return f"{name}#/{int(line) - 1}"
    if name.lower().endswith(".json") and int(line) == 1:
        return name
    return f"{name}:{int(line)}"


def evidence_object(row) -> dict:
    """One measured point as the card's JSON gives it (``null`` where unknown): source, model, hardware,
    precision, lengths, speculative decoding, GPUs, concurrency, both speeds and TTFT/TPOT percentiles."""
    row = dict(row)
    out = {k: plain(row.get(k)) for k in EVIDENCE_FIELDS if k != "source"}
    return {"source": row_id(row), **out}


def evidence_for(claim: Claim, points: pd.DataFrame) -> pd.DataFrame:
    """Measured points nearest the claim: same or similar model (family), same or same-generation hardware.

    ``model_match`` is 2 for the same model-table entry (or one of the same architecture), 1 for a model that may
    stand in for it (same family and comparable size: :data:`PROXY_RULE`), 0 for another model on the claim's
    hardware; ``hardware_match`` 2 for the same part, 1 for the same generation. The best-scoring tier is returned,
    with a ``row`` id (source_file:line).
    """
    if points is None or points.empty:
        return pd.DataFrame()
    pts = points[trusted(points) & points["tok_s_per_user"].notna() & (points["tok_s_per_user"] > 0)].copy()
    if "phase" in pts:
        pts = pts[pts["phase"].fillna("unknown") != "prefill"]
    if pts.empty:
        return pd.DataFrame()
    table_names = {m: specs.match_model_name(m) for m in pts["model"].dropna().unique()}
    fam = family(claim.model_table or claim.model)
    pts["model_table"] = pts["model"].map(table_names)
    claim_model = claim.model_table or claim.model
    kin = {m: bool(fam) and family(m) == fam and comparable_size(claim_model, m) for m in pts["model"].dropna().unique()}
    same = {t: same_architecture(t, claim.model_table) for t in pts["model_table"].dropna().unique()}
    pts["model_match"] = np.where(pts["model_table"].map(same).eq(True), 2,
                                  np.where(pts["model"].map(kin).fillna(False).astype(bool), 1, 0))
    hw_keys = {h: hw_key(h) for h in pts["hardware"].dropna().unique()}
    want = hw_key(claim.hardware_table or claim.hardware)
    pts["hardware_key"] = pts["hardware"].map(hw_keys)
    gen = generation(want)
    pts["hardware_match"] = np.where(pts["hardware_key"] == want, 2,
                                     np.where(pts["hardware_key"].map(generation) == gen, 1, 0) if gen else 0)
    pts = pts[(pts["model_match"] > 0) | (pts["hardware_match"] == 2)]
    if pts.empty:
        return pd.DataFrame()
    pts["match"] = pts["model_match"] * 3 + pts["hardware_match"]
    # Another model's points are proxy evidence wherever they appear; the claim's own model is at best same-model
    # here (the checks decide direct, once lengths, speculative decoding and latency limits are compared).
    # ``other model``: another model on the claim's hardware, drawn and listed as context, never an answer
    pts["tier"] = np.select([pts["model_match"] == 2, pts["model_match"] == 1], ["same-model", "proxy"], OTHER_MODEL)
    best = pts["match"].max()
    # Keep the best tier and anything with the same model match on other hardware of the generation.
    keep = pts[(pts["match"] == best) | ((pts["model_match"] == pts.loc[pts["match"] == best, "model_match"].max())
                                        & (pts["hardware_match"] >= 1))]
    keep = keep.assign(row=[row_id(r) for r in keep.to_dict("records")])
    return keep.sort_values("tok_s_per_user", ascending=False).reset_index(drop=True)


def stand_ins(evidence: pd.DataFrame) -> pd.DataFrame:
    """The evidence rows of the claim's own model or of a model that may stand in for it (:data:`PROXY_RULE`):
    what the card's answers rest on. Other models on the claim's hardware stay in the evidence as context only."""
    if evidence is None or evidence.empty or "model_match" not in evidence:
        return evidence
    return evidence[evidence["model_match"] >= 1]


def own_sol_tau(row) -> tuple[float, str]:
    """(τ, its source) the bound of :func:`own_sol` is read at for ``row``: 1 and ``none`` without speculation."""
    from analysis.specdecode import tau_for

    t = tau_for(row)
    return (t.tokens_per_step, t.source) if t.speculative else (1.0, "none")


def own_sol(row) -> tuple[float, float]:
    """Batch-1 SOL tok/s/user of a measured point's own model, hardware, precision and GPUs (context ISL + OSL/2):
    bandwidth only, and with the communication floor. NaN when not in the spec tables.

    The bound is set up as the point ran: on its decode GPUs when it is disaggregated (they set its per-user
    speed), on one worker's GPUs when several decode workers ran (``n_workers``: each worker's collectives span
    only its own GPUs, so a deployment of 5 TP8 workers is charged 8-GPU latencies, not 40-GPU ones), and with
    speculative decoding at the point's own τ (:func:`analysis.specdecode.tau_for`: its measured, forced or stated
    acceptance length, else a golden curve, else the documented 2.5 assumption), verifying its drafted tokens + 1,
    so an MTP point is not held against a one-token-per-step bound."""
    from analysis.specdecode import tau_for

    name = specs.match_model_name(str(row.get("model")))
    n = row.get("n_gpus")
    if not name or n is None or pd.isna(n) or str(row.get("precision")) not in roofline.BITS_PER_WEIGHT:
        return (math.nan, math.nan)
    decode = row.get("n_decode_gpus")
    disagg = row.get("disagg")
    if disagg is not None and pd.notna(disagg) and bool(disagg) and decode is not None and pd.notna(decode) \
            and decode > 0:
        n = decode
    workers = row.get("n_workers")
    if workers is not None and pd.notna(workers) and float(workers) > 1:
        n = max(int(round(float(n) / float(workers))), 1)  # one worker's GPUs: the group its collectives span
    t = tau_for(row)
    tau, verify = (t.tokens_per_step, t.verify_tokens) if t.speculative else (1.0, None)
    isl, osl = row.get("isl"), row.get("osl")
    context = int(isl + osl / 2) if pd.notna(isl) and pd.notna(osl) else DEFAULT_CONTEXT
    try:
        hw = specs.hardware(str(row.get("hardware")))
        s = roofline.speed_of_light(name, hw, str(row["precision"]), gpus=int(n), batch=1, context=context,
                                    tokens_per_step=tau, verify_tokens=verify)
        floor = roofline.communication_floor(name, hw, gpus=int(n)).floor_ms
    except (KeyError, ValueError):
        return (math.nan, math.nan)
    return (s.tok_s_per_user, tau * 1000.0 / max(s.step_ms, floor))


def evidence_summary(evidence: pd.DataFrame) -> pd.DataFrame:
    """Per model × hardware × precision × ISL/OSL: the fastest per-user point and the highest per-GPU point (rows
    named), both at the same lengths, and the fastest point's share of its own model's batch-1 SOL on its GPUs."""
    if evidence.empty:
        return pd.DataFrame()
    out = []
    keys = ["model", "hardware", "precision", "isl", "osl"]
    # fixed lengths and lengths drawn up to caps are apart: a row never pools the two under one label
    evidence = evidence.assign(workload=evidence["workload"].astype(object).where(evidence["workload"].notna(), "")
                               if "workload" in evidence.columns else "")
    for key, g in evidence.groupby(keys + ["workload"], dropna=False, sort=False):
        fast = g.loc[g["tok_s_per_user"].idxmax()]
        gpu = g["tok_s_per_gpu"]
        cap = g.loc[gpu.idxmax()] if gpu.notna().any() else None
        sol_bw, sol_comm = own_sol(fast)
        tau, tau_source = own_sol_tau(fast)
        out.append({
            "model": key[0], "hardware": key[1], "precision": key[2], "isl": key[3], "osl": key[4],
            "lengths": lengths_label(key[3], key[4], key[5] or None), "n_points": len(g),
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
            "fastest_own_sol_tau": tau, "fastest_own_sol_tau_source": tau_source,
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


