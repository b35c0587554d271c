"""Speed of light for LLM decode: bytes and FLOPs per step, and the fastest step the hardware allows.

``t_step >= max((W_step + KV_step) / (N·BW), FLOP_step / (N·F))`` (docs/ROOFLINE.md section 3). Weights are read
once per step (the input embedding only as one row per token); an MoE layer reads the experts its tokens touch,
``E·(1 − (1 − k/E)^T)`` for ``T = B·τ`` routed tokens; the KV cache is read per sequence (MLA latents and GQA heads
are replicated when attention tensor parallelism is wider than the KV heads; sliding-window layers stop at the
window; DeepSeek-V3.2 and V4 read their sparse selections). Precision can differ per weight component
(``"fp4,attention=bf16,router=bf16"``). Two ceilings: the datasheet peak (the hard bound; for a range such as
"7.7-8.0" TB/s the upper end) and an achievable line (measured where a measurement exists: the H200 calibration
records, Azure's GB200 figures; otherwise 0.8 × datasheet, aiconfigurator's empirical factor).
Everything here returns dataclasses or DataFrames; nothing draws.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import config, physics, specs

# --- bytes per weight ------------------------------------------------------------------------------

# Bits per weight including the scales each format stores: NVFP4 = 4-bit values + one FP8 scale per 16 (+ a
# per-tensor FP32, negligible) = 4.5; MXFP4 = 4-bit + one 8-bit scale per 32 = 4.25; INT4 as shipped for W4A16
# (group 32, bf16 scale) = 4.5; FP8 block scales (one FP32 per 128x128) are negligible. "fp4-noscale" is the bare
# 4 bits that docs/ROOFLINE.md section 4 uses for its Llama-405B FP4 figure (C17).
BITS_PER_WEIGHT = {
    "fp32": 32.0, "bf16": 16.0, "fp16": 16.0, "fp8": 8.0, "int8": 8.0,
    "nvfp4": 4.5, "fp4": 4.5, "mxfp4": 4.25, "int4": 4.5, "fp4-noscale": 4.0,
}
# Which tensor-core rate the matmuls run at (W4A16 INT4 dequantises to bf16).
MATH_PRECISION = {
    "fp32": "bf16", "bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "int8": "fp8",
    "nvfp4": "fp4", "fp4": "fp4", "mxfp4": "fp4", "int4": "bf16", "fp4-noscale": "fp4",
}
_PRECISION_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "e4m3": "fp8", "fp8e4m3": "fp8",
                      "w4a16": "int4", "fp4noscale": "fp4-noscale", "fp4_noscale": "fp4-noscale"}
# Component groups a recipe may name.
_COMPONENT_GROUPS = {
    "attention": ("attention",), "attn": ("attention",),
    "dense_ffn": ("dense_ffn",), "ffn": ("dense_ffn",), "dense": ("dense_ffn",),
    "shared_experts": ("shared_experts",), "routed_experts": ("routed_experts",),
    "experts": ("shared_experts", "routed_experts"), "moe": ("shared_experts", "routed_experts"),
    "router": ("router",), "gate": ("router",), "lm_head": ("lm_head",), "head": ("lm_head",),
    "embedding": ("embedding",), "other": ("other",),
}
KV_BYTES = physics.KV_BYTES_PER_VALUE  # one table for every model (analysis.physics)


def _precision_name(text: str) -> str:
    key = str(text).strip().lower()
    key = _PRECISION_ALIASES.get(key, key)
    if key not in BITS_PER_WEIGHT:
        raise ValueError(f"unknown precision {text!r}; known: {', '.join(BITS_PER_WEIGHT)} (and 'native')")
    return key


def bytes_per_weight(precision: str) -> float:
    """Bytes per stored weight, scales included (``fp4`` = NVFP4 = 0.5625)."""
    return BITS_PER_WEIGHT[_precision_name(precision)] / 8.0


@dataclass(frozen=True)
class Recipe:
    """Precision of each weight component, plus the KV-cache dtype."""

    base: str
    parts: dict          # component -> precision (every component of specs.COMPONENTS plus "embedding")
    kv_dtype: str = "bf16"

    @property
    def label(self) -> str:
        extra = [f"{c} {p}" for c, p in self.parts.items() if p != self.base and c not in ("other", "embedding")]
        kv = [] if self.kv_dtype == "bf16" else [f"KV {self.kv_dtype}"]
        return self.base + (f" ({', '.join(extra + kv)})" if extra or kv else "")


def parse_precision(text: str, *, model: specs.Model | None = None, kv_dtype: str = "bf16") -> Recipe:
    """``"fp8"``, ``"native"`` (the model's shipped checkpoint) or ``"fp4,attention=bf16,router=bf16,kv=fp8"``."""
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ValueError("empty precision")
    if items[0].lower() == "native":
        if model is None:
            raise ValueError("precision 'native' needs a model")
        items = [t.strip() for t in model.native_precision.split(",")] + items[1:]
    if "=" in items[0]:
        raise ValueError(f"precision {text!r} must start with a base precision, e.g. 'fp4,attention=bf16'")
    base = _precision_name(items[0])
    parts = {c: base for c in specs.COMPONENTS + ("embedding",)}
    parts["embedding"] = "bf16" if BITS_PER_WEIGHT[base] < 16 else base  # a row lookup; stored as shipped
    for item in items[1:]:
        if "=" not in item:
            raise ValueError(f"precision part {item!r} should be component=precision")
        comp, prec = (s.strip().lower() for s in item.split("=", 1))
        if comp in ("kv", "kv_cache", "kv_dtype"):
            kv_dtype = prec
            continue
        if comp not in _COMPONENT_GROUPS:
            raise ValueError(f"unknown weight component {comp!r}; known: {', '.join(_COMPONENT_GROUPS)}, kv")
        for c in _COMPONENT_GROUPS[comp]:
            parts[c] = _precision_name(prec)
    if kv_dtype not in KV_BYTES:
        raise ValueError(f"unknown KV dtype {kv_dtype!r}; known: {', '.join(KV_BYTES)}")
    return Recipe(base=base, parts=parts, kv_dtype=kv_dtype)


# --- MoE coverage and speculative decoding ---------------------------------------------------------

def experts_touched(tokens: float, *, n_experts: int, top_k: int) -> float:
    """Expected distinct experts one MoE layer reads for ``tokens`` routed tokens (uniform routing)."""
    return physics.expert_coverage(tokens, n_experts, top_k)


def tokens_per_step(acceptance, *, draft_tokens: int | None = None) -> float:
    """τ = 1 + Σ_i Π_{j≤i} p_j (chain acceptance). ``acceptance``: one rate for every position, or a list."""
    if np.isscalar(acceptance):
        if draft_tokens is None:
            raise ValueError("a constant acceptance rate needs draft_tokens (γ)")
        rates = [float(acceptance)] * int(draft_tokens)
    else:
        rates = [float(p) for p in acceptance]
    tau, running = 1.0, 1.0
    for p in rates:
        running *= p
        tau += running
    return tau


# --- KV cache --------------------------------------------------------------------------------------

def _kv_entry_bytes(model: specs.Model, kv_dtype: str) -> float:
    """Bytes one cached token takes in one full-attention layer."""
    b = KV_BYTES[kv_dtype]
    if model.attention in ("mla", "dsa"):
        return (model.kv_lora_rank + model.qk_rope_head_dim) * b
    if model.attention == "dsv4":
        return model.head_dim * b  # one shared K=V head
    return 2 * model.n_kv_heads * model.head_dim * b


def _layer_entries(model: specs.Model, context: float) -> tuple[float, float, float]:
    """Over all layers for one sequence: (KV entries read, KV entries stored, indexer-key bytes read)."""
    L = max(float(context), 0.0)
    if model.attention == "dsv4":
        w = float(model.sliding_window or 128)
        read = stored = index = 0.0
        for r in model.compress_ratios or (0,) * model.n_layers:
            read += min(L, w)
            stored += min(L, w)
            if r:
                compressed = math.floor(L / r)
                stored += compressed
                if r == 4 and model.index_topk:  # CSA: the indexer scores every entry, attention reads top-k
                    read += min(compressed, model.index_topk)
                    index += compressed * model.index_head_dim * 0.5  # FP4 indexer keys
                else:
                    read += compressed
        return read, stored, index
    if model.attention == "dsa":
        n = model.n_layers
        return n * min(L, model.index_topk or L), n * L, n * L * 132.0  # FP8 indexer key + scale per token
    full_layers = model.n_layers - model.window_layers
    window = min(L, model.sliding_window) * model.window_layers if model.window_layers else 0.0
    return full_layers * L + window, full_layers * L + window, 0.0


def kv_bytes_per_sequence(model: specs.Model, context: float, *, kv_dtype: str = "bf16") -> dict:
    """KV bytes one sequence at ``context`` tokens reads per decode step and keeps in HBM (one copy)."""
    read, stored, index = _layer_entries(model, context)
    entry = _kv_entry_bytes(model, kv_dtype)
    extra_store = 0.0
    if model.attention == "dsv4":  # stored indexer keys (the read ones are counted in ``index``)
        extra_store = sum(math.floor(max(context, 0) / 4) * model.index_head_dim * 0.5
                          for r in model.compress_ratios if r == 4)
    if model.attention == "dsa":
        extra_store = index
    return {"read": read * entry + index, "stored": stored * entry + extra_store, "entries_read": read}


def kv_replicas(model: specs.Model, attention_tp: int) -> float:
    """Copies of each sequence's KV when attention is split over ``attention_tp`` GPUs by heads.

    A GPU can only split what has heads: an MLA / V4 latent (one shared head) is held whole on every rank; GQA
    heads are replicated once the TP degree exceeds the KV heads (vLLM and TensorRT-LLM do this).
    """
    return max(1.0, attention_tp / max(model.n_kv_heads, 1))


# --- hardware ceilings -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Ceiling:
    """Per-GPU bandwidth and dense rates used for one line (datasheet or achievable), with where they come from."""

    name: str                 # "datasheet" or "achievable"
    bandwidth_tb_s: float
    tflops: dict
    source: str


ACHIEVABLE_FACTOR = 0.8  # aiconfigurator mem_bw_empirical_scaling_factor (ROOFLINE.md section 1.4)
H200_COPY_TB_S = 4.26  # data/raw/h200 README, used when no calibration record is found
# Families whose own calibration records ship with the data (the records win over the table's rounded copy).
CALIBRATION_RECORDS = {"H200": config.RAW_DATA_DIR / "h200"}


@lru_cache(maxsize=8)
def h200_calibration(path: str | None = None) -> dict:
    """The H200 sweep's measured ceilings (median over its calibration records): copy TB/s, matmul TF/s."""
    from analysis import data

    table = data.load_calibration(Path(path) if path else CALIBRATION_RECORDS["H200"])
    recs = (table[table["kind"] == "calibration"].to_dict(orient="records") if "kind" in table.columns else [])
    recs = [{k: v for k, v in r.items() if v == v} for r in recs]  # NaN: a field this record does not have
    pick = lambda what, key: float(np.median([r[key] for r in recs if r.get("what") == what and key in r])) \
        if any(r.get("what") == what for r in recs) else math.nan  # noqa: E731
    out = {"bandwidth_tb_s": pick("d2d_copy", "tb_s"), "bf16": pick("matmul_bf16", "tflop_s"),
           "fp8": pick("matmul_fp8_e4m3", "tflop_s"), "fp4": math.nan,
           "source": "measured on one H200 (data/raw/h200 calibration records: d2d copy, 8192^3 matmuls)"}
    if math.isnan(out["bandwidth_tb_s"]):
        out.update(bandwidth_tb_s=H200_COPY_TB_S, source="H200 copy bandwidth 4.26 TB/s (data/raw/h200 README)")
    return out


def _measured_rates(peak_rates: dict, measured: dict) -> dict:
    """Measured dense rates where measured; the other precisions at the measured share of their peak (FP8's share
    first, else BF16's); a precision the part lacks stays NaN."""
    share = next((measured[p] / peak_rates[p] for p in ("fp8", "bf16")
                  if measured.get(p) == measured.get(p) and peak_rates.get(p)), 1.0)
    return {p: (measured[p] if measured.get(p) == measured.get(p) and p in measured else v * share)
            for p, v in peak_rates.items()}


def ceilings(hw: specs.Hardware, which: str = "datasheet") -> Ceiling:
    """The datasheet peak, or the achievable line: measured where hardware.csv (``achievable_*`` columns) or the
    family's calibration records hold a measurement, else 0.8 × datasheet, labelled as assumed."""
    peak_rates = dict(hw.dense_tflops)
    if which == "datasheet":
        return Ceiling("datasheet", hw.hbm_bandwidth_tb_s, peak_rates,
                       f"datasheet peak ({hw.short_name}: {hw.hbm_bandwidth_tb_s:g} TB/s per GPU)")
    if which != "achievable":
        raise ValueError(f"ceiling must be 'datasheet' or 'achievable', got {which!r}")
    if hw.family in CALIBRATION_RECORDS:
        cal = h200_calibration()
        rates = {p: (cal[p] if not math.isnan(cal[p]) else peak_rates[p]) for p in peak_rates}
        return Ceiling("achievable", cal["bandwidth_tb_s"], rates, cal["source"])
    if hw.achievable_basis == "measured" and not math.isnan(hw.achievable_bandwidth_tb_s):
        return Ceiling("achievable", hw.achievable_bandwidth_tb_s, _measured_rates(peak_rates, hw.achievable_tflops),
                       hw.achievable_source)
    return Ceiling("achievable", hw.hbm_bandwidth_tb_s * ACHIEVABLE_FACTOR,
                   {p: v * ACHIEVABLE_FACTOR for p, v in peak_rates.items()},
                   f"assumed {ACHIEVABLE_FACTOR:g} x datasheet (aiconfigurator's empirical factor; not measured)")


def aggregate_bandwidth_tb_s(hw: specs.Hardware, gpus: int, *, which: str = "datasheet") -> float:
    """HBM bandwidth of ``gpus`` GPUs together (perfect sharding)."""
    return gpus * ceilings(hw, which).bandwidth_tb_s


def dense_rate(tflops: dict, math_precision: str) -> float:
    """TFLOP/s for a math precision from a {precision: TFLOP/s} table, falling back to the next wider one the part
    has (no FP4 on Hopper)."""
    order = ["fp4", "fp8", "bf16"]
    for p in order[order.index(math_precision):]:
        v = tflops.get(p, math.nan)
        if v and not math.isnan(v):
            return v
    return math.nan


def _rate(ceiling: Ceiling, math_precision: str) -> float:
    return dense_rate(ceiling.tflops, math_precision)


# --- one speed-of-light point ----------------------------------------------------------------------

@dataclass
class SpeedOfLight:
    """Bytes, FLOPs and the bound for one model × hardware × precision × GPUs × batch × context × τ."""

    model: str
    hardware: str
    precision: str
    gpus: int
    batch: int
    context: int
    tokens_per_step: float
    verify_tokens: float
    ceiling: str
    bandwidth_tb_s_per_gpu: float
    aggregate_bandwidth_tb_s: float
    weight_bytes: float           # read per step (all GPUs together)
    kv_bytes: float               # read per step, replicas included
    bytes_per_step: float
    flops_per_step: float
    t_memory_ms: float
    t_compute_ms: float
    step_ms: float
    bound: str                    # "memory" or "compute"
    tok_s_per_user: float
    tok_s_total: float
    tok_s_per_gpu: float
    experts_touched_per_layer: float
    kv_replicas: float
    hbm_needed_gb: float
    hbm_available_gb: float
    fits: bool
    ceiling_source: str
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["notes"] = "; ".join(self.notes)
        return d


def _resolve(model, hardware):
    m = model if isinstance(model, specs.Model) else specs.model(model)
    hw = hardware if isinstance(hardware, specs.Hardware) else specs.hardware(hardware)
    return m, hw


def speed_of_light(model, hardware, precision: str = "native", *, gpus: int = 1, batch: int = 1,
                   context: int = 1024, tokens_per_step: float = 1.0, verify_tokens: float | None = None,
                   kv_dtype: str = "bf16", attention_tp: int | None = None, ceiling: str = "datasheet",
                   draft_params_b: float = 0.0) -> SpeedOfLight:
    """The fastest decode step for ``batch`` sequences at ``context`` tokens on ``gpus`` GPUs.

    ``tokens_per_step`` is τ (tokens each sequence emits per step); ``verify_tokens`` the tokens each sequence
    pushes through the model per step (γ+1 with γ drafted tokens; defaults to τ, DESIGN.md's ``B·τ``), which sets
    the MoE coverage and the FLOPs. ``attention_tp`` (default: all ``gpus``) decides KV replication.
    ``draft_params_b`` adds a draft model's (or extra MTP layers') weights, read once per step.
    """
    m, hw = _resolve(model, hardware)
    if gpus < 1 or batch < 1 or context < 0 or tokens_per_step <= 0:
        raise ValueError("gpus and batch must be >= 1, context >= 0, tokens_per_step > 0")
    recipe = parse_precision(precision, model=m, kv_dtype=kv_dtype)
    verify = float(verify_tokens if verify_tokens is not None else tokens_per_step)
    notes: list[str] = []
    b = {c: bytes_per_weight(p) for c, p in recipe.parts.items()}
    routed_tokens = batch * verify

    # Weights read once per step; routed experts by coverage; the input embedding as one row per token.
    touched = experts_touched(routed_tokens, n_experts=m.n_experts, top_k=m.top_k) if m.is_moe else 0.0
    weight = sum(m.params_b[c] * 1e9 * b[c] for c in specs.COMPONENTS if c != "routed_experts")
    weight += m.n_moe_layers * touched * m.expert_params_b * 1e9 * b["routed_experts"]
    weight += routed_tokens * m.hidden * b["embedding"]
    weight += draft_params_b * 1e9 * bytes_per_weight(recipe.base)

    tp = int(attention_tp or gpus)
    replicas = kv_replicas(m, tp)
    kv = kv_bytes_per_sequence(m, context, kv_dtype=recipe.kv_dtype)
    kv_read = batch * kv["read"] * replicas
    total_bytes = weight + kv_read

    # FLOPs: 2 per active weight per token (at each component's math rate) + attention over the entries read.
    ceil = ceilings(hw, ceiling)
    active = {c: m.params_b[c] for c in specs.COMPONENTS if c != "routed_experts"}
    active["routed_experts"] = m.n_moe_layers * m.top_k * m.expert_params_b
    t_compute_s, flops = 0.0, 0.0
    for c, p_b in active.items():
        f = 2.0 * p_b * 1e9 * routed_tokens
        flops += f
        rate = _rate(ceil, MATH_PRECISION[recipe.parts[c]])
        t_compute_s += f / (gpus * rate * 1e12) if rate and not math.isnan(rate) else 0.0
    d_qk_v = (2 * m.kv_lora_rank + m.qk_rope_head_dim) if m.attention in ("mla", "dsa") else 2 * m.head_dim
    attn_flops = 2.0 * m.n_heads * d_qk_v * kv["entries_read"] * routed_tokens
    flops += attn_flops
    bf16_rate = _rate(ceil, "bf16")
    if bf16_rate and not math.isnan(bf16_rate):
        t_compute_s += attn_flops / (gpus * bf16_rate * 1e12)
    else:
        notes.append("no dense rate in the table: compute bound not evaluated")

    bw = ceil.bandwidth_tb_s
    t_memory_s = total_bytes / (gpus * bw * 1e12)
    step_s = max(t_memory_s, t_compute_s)
    bound = "memory" if t_memory_s >= t_compute_s else "compute"

    # HBM capacity: every weight stored once over the instance, KV per sequence (with replicas); no workspace.
    stored = sum(m.params_b[c] * 1e9 * b[c] for c in specs.COMPONENTS)
    stored += m.input_embedding_params_b * 1e9 * b["embedding"]
    stored += draft_params_b * 1e9 * bytes_per_weight(recipe.base)
    needed = stored + batch * kv["stored"] * replicas
    available = gpus * hw.hbm_gb * 1e9
    fits = bool(needed <= available)
    if not fits:
        notes.append(f"does not fit: needs {needed / 1e9:,.0f} GB of {available / 1e9:,.0f} GB HBM")
    if hw.rack_gpus and gpus < hw.rack_gpus:
        notes.append(f"{hw.label} is a {hw.rack_gpus}-GPU rack; this counts {gpus} of its GPUs")
    if math.isnan(hw.dense_tflops.get("fp4", math.nan)) and MATH_PRECISION[recipe.base] == "fp4":
        notes.append(f"{hw.short_name} has no FP4 tensor cores: FP4 weights run at the FP8 rate")
    if m.derived.get("always_read"):
        notes.append(f"{m.name} always-read weights derived: {m.derived['always_read']}")

    tok_user = tokens_per_step / step_s
    return SpeedOfLight(
        model=m.name, hardware=hw.label, precision=recipe.label, gpus=int(gpus), batch=int(batch),
        context=int(context), tokens_per_step=float(tokens_per_step), verify_tokens=verify, ceiling=ceil.name,
        bandwidth_tb_s_per_gpu=bw, aggregate_bandwidth_tb_s=gpus * bw, weight_bytes=weight, kv_bytes=kv_read,
        bytes_per_step=total_bytes, flops_per_step=flops, t_memory_ms=t_memory_s * 1e3,
        t_compute_ms=t_compute_s * 1e3, step_ms=step_s * 1e3, bound=bound, tok_s_per_user=tok_user,
        tok_s_total=tok_user * batch, tok_s_per_gpu=tok_user * batch / gpus,
        experts_touched_per_layer=touched, kv_replicas=replicas, hbm_needed_gb=needed / 1e9,
        hbm_available_gb=available / 1e9, fits=fits, ceiling_source=ceil.source, notes=notes,
    )


def sol_table(model, hardware, *, precisions: list[str], gpus: list[int], batch: int = 1, context: int = 1024,
              tokens_per_step: list[float] = (1.0,), verify_tokens: dict | None = None,
              ceilings_: tuple[str, ...] = ("datasheet", "achievable"), kv_dtype: str = "bf16") -> pd.DataFrame:
    """One row per precision × GPU count × τ × ceiling; ``verify_tokens`` maps τ to tokens verified per step."""
    rows = []
    for prec in precisions:
        for n in gpus:
            for tau in tokens_per_step:
                for ceil in ceilings_:
                    s = speed_of_light(model, hardware, prec, gpus=n, batch=batch, context=context,
                                       tokens_per_step=tau, kv_dtype=kv_dtype, ceiling=ceil,
                                       verify_tokens=(verify_tokens or {}).get(tau))
                    rows.append({**s.to_dict(), "precision_asked": prec})
    return pd.DataFrame(rows)


# --- communication floor for multi-GPU batch-1 decode -------------------------------------------------

# At batch 1 every layer waits for its collectives (the next layer needs their result), so a sharded model
# cannot step faster than n_layers × collectives per layer × one collective's latency, however much HBM
# bandwidth it adds. ROOFLINE.md 3.5: TP needs 2 all-reduces per layer (after attention, after the FFN/MoE);
# EP needs dispatch + combine per MoE layer, also 2. The per-collective small-message latencies per interconnect
# (8-GPU NVLink node, NVL72 domain, scale-out network) come from data/specs/interconnect.csv, each row with its
# source and basis: every row is an ASSUMPTION, used only where data/specs/collectives.csv (published measurements:
# TensorRT-LLM NVLinkOneSided, DeepEP, NCCL) has none for the hardware's interconnect; the floor uses the measured
# latency, its range is carried to the claim card, and the basis says which.
COLLECTIVES_PER_LAYER = 2
INTERCONNECT_FILE = config.SPECS_DIR / "interconnect.csv"
_DEFAULT_LATENCY_US = {"node": 5.0, "rack": 8.0, "scale-out": 20.0}


@lru_cache(maxsize=4)
def interconnect_table(path: str | None = None) -> pd.DataFrame:
    """The interconnect latency table (``data/specs/interconnect.csv``): one row per interconnect × collective ×
    bound (low / central / high), with ``basis`` (``measured`` or ``assumption``) and ``source``."""
    p = Path(path) if path else INTERCONNECT_FILE
    if not p.exists():
        return pd.DataFrame(columns=["interconnect", "where", "collective", "message_size", "latency_us", "bound",
                                     "basis", "source", "date"])
    return pd.read_csv(p)


def collective_latency_us(where: str, bound: str = "central", collective: str = "all-reduce") -> float:
    """One small-message collective's latency on ``where`` (node, rack, scale-out) at ``bound``."""
    t = interconnect_table()
    hit = t[(t["where"] == where) & (t["bound"] == bound) & (t["collective"] == collective)]
    if hit.empty and bound != "central":
        return collective_latency_us(where, "central", collective)
    return float(hit["latency_us"].iloc[0]) if len(hit) else _DEFAULT_LATENCY_US[where]


def collective_latency_basis(where: str) -> str:
    """``measured`` when every row for ``where`` is measured, else ``assumption``."""
    t = interconnect_table()
    basis = set(t.loc[t["where"] == where, "basis"])
    return "measured" if basis == {"measured"} else "assumption"


COLLECTIVE_LATENCY_US = {w: collective_latency_us(w) for w in _DEFAULT_LATENCY_US}
COMM_FLOOR_TEXT = ("communication floor = layers × 2 collectives per layer (ROOFLINE.md 3.5: TP all-reduce or "
                   "EP dispatch + combine, the faster measured one for a mixture of experts, TP only where it splits "
                   "the attention heads evenly) × the small-message latency per collective measured for the hardware's "
                   "interconnect and group size (data/specs/collectives.csv: TensorRT-LLM NVLinkOneSided, DeepEP, "
                   "NCCL; a batch-1 message of one hidden vector, interpolated and never extrapolated silently: the "
                   "table says which); where no measurement exists, data/specs/interconnect.csv's assumption "
                   f"({COLLECTIVE_LATENCY_US['node']:g} µs node, {COLLECTIVE_LATENCY_US['rack']:g} µs 72-GPU domain, "
                   f"{COLLECTIVE_LATENCY_US['scale-out']:g} µs scale-out), labelled as such; one GPU has none")


@dataclass(frozen=True)
class CommunicationFloor:
    """The shortest batch-1 decode step that a model sharded over ``gpus`` GPUs' collectives allow."""

    gpus: int
    n_layers: int
    collectives_per_step: int
    latency_us: float
    where: str            # "none" (1 GPU), "node", "rack" or "scale-out"
    floor_ms: float
    basis: str = ""       # "measured", "interpolated", "extrapolated" (collectives.csv) or "assumption"
    sources: tuple = ()
    layout: str = ""      # TP_ALL_REDUCE or EP_DISPATCH_COMBINE: the measured collectives the floor used
    measured_on: tuple = ()  # (hardware, GPUs) of the rows read: another part's or group's when extrapolated


TP_ALL_REDUCE = "TP all-reduce"
EP_DISPATCH_COMBINE = "EP dispatch + combine"


def tp_splits_heads(m: specs.Model, gpus: int) -> bool:
    """Whether TP over ``gpus`` GPUs splits ``m``'s attention heads evenly (TP shards attention by heads)."""
    return 1 <= gpus <= m.n_heads and m.n_heads % gpus == 0


@lru_cache(maxsize=256)
def measured_collective_us(model_name: str, hardware_name: str, gpus: int) -> tuple | None:
    """(latency, low, high, status, sources, layout, measured_on) per collective from the measured collectives table for a
    batch-1 message (one hidden vector in BF16) over ``gpus`` GPUs. A dense model shards by TP (its all-reduce); a
    MoE by TP (all-reduce, where ``gpus`` splits its attention heads evenly) or by EP (the mean of dispatch and combine), both
    two collectives per layer, and the floor takes the faster measured one: a bound is the most favourable
    deployment. None where the table has no measurement for that interconnect."""
    from analysis.perfmodel import collectives as measured

    m, hw = _resolve(model_name, hardware_name)
    where = measured.interconnect_for(hw, gpus)
    if where is None or hw.vendor.upper() not in ("NVIDIA", "AMD"):  # the table measures NVLink, xGMI and RDMA only
        return None
    layouts = [(TP_ALL_REDUCE, ("all-reduce",))] if not m.is_moe or tp_splits_heads(m, gpus) else []
    if m.is_moe:
        layouts.append((EP_DISPATCH_COMBINE, ("ep-dispatch", "ep-combine")))
    mean = lambda xs: float(sum(xs) / len(xs))  # noqa: E731
    order = ("measured", "interpolated", "extrapolated")
    found = []
    for layout, names in layouts:
        got = [measured.latency(c, where, group_size=gpus, message_bytes=m.hidden * 2.0, hardware=hw.short_name)
               for c in names]
        if any(r.status in ("assumption", "no measurement") or r.latency_us != r.latency_us for r in got):
            continue
        status = max((r.status for r in got), key=order.index)
        found.append((mean([r.latency_us for r in got]), mean([r.low_us for r in got]), mean([r.high_us for r in got]),
                      status, tuple(sorted({u for r in got for u in r.sources})), layout,
                      tuple(sorted({x for r in got for x in r.measured_on}))))
    return min(found, key=lambda f: f[0]) if found else None


def communication_floor(model, hardware, *, gpus: int, collectives_per_layer: int = COLLECTIVES_PER_LAYER,
                        latency_us: float | str | None = None) -> CommunicationFloor:
    """Latency floor of one decode step from collectives alone (0 on one GPU). The per-collective latency is the
    measured one (:func:`measured_collective_us`) where the collectives table has it, else the interconnect table's
    assumption (:data:`COLLECTIVE_LATENCY_US`); ``latency_us`` overrides it (``"low"``/``"high"`` takes that end
    of the measured range, or of the interconnect table's)."""
    m, hw = _resolve(model, hardware)
    if gpus <= 1:
        return CommunicationFloor(gpus, m.n_layers, 0, 0.0, "none", 0.0)
    domain = hw.rack_gpus or hw.scale_up_domain_gpus or 8
    where = "node" if gpus <= 8 else ("rack" if gpus <= domain else "scale-out")
    meas = measured_collective_us(m.name, hw.name, int(gpus)) if not isinstance(latency_us, (int, float)) else None
    basis, sources, layout, on = ("assumption", (), "", ())
    if meas is not None:
        lat = {"low": meas[1], "high": meas[2]}.get(latency_us, meas[0])  # None or "central": the estimate
        basis, sources, layout, on = meas[3], meas[4], meas[5], meas[6]
    elif latency_us is None:
        lat = COLLECTIVE_LATENCY_US[where]
    elif isinstance(latency_us, str):
        lat = collective_latency_us(where, latency_us)
    else:
        lat = float(latency_us)
        basis = "given"
    steps = m.n_layers * collectives_per_layer
    return CommunicationFloor(gpus, m.n_layers, steps, lat, where, steps * lat / 1000.0, basis, sources, layout, on)


# --- H200 sweep points at batch 1 ------------------------------------------------------------------

# How the H200 sweep stored its weights (data/raw/h200 README): fp8 runs keep the LM head in bf16.
_H200_SWEEP_RECIPES = {"fp8": "fp8,lm_head=bf16", "bf16": "bf16"}


def _gpus_from_shape(name: str) -> int:
    """``llama-3.1-70b-tp8-shard`` is one GPU's slice of a TP=8 deployment: its SOL is the 8-GPU one."""
    m = re.search(r"tp(\d+)", str(name).lower())
    return int(m.group(1)) if m else 1


def batch1_speed_of_light_for_points(points: pd.DataFrame) -> pd.DataFrame:
    """For H200 decode points at batch 1: SOL tok/s/user at the datasheet and the measured bandwidth.

    One row per point (``source_file``, ``source_line`` kept) with the model the shape maps to, the bytes read
    per step, ``sol_tok_s_per_user_datasheet`` (4.8 TB/s), ``sol_tok_s_per_user_measured`` (copy bandwidth),
    and ``fraction_of_sol_*`` = measured tok/s/user over SOL. Shapes with no model-table entry keep NaN and a note.
    """
    if points is None or not len(points):
        return pd.DataFrame()
    hw_key = points["hardware"].astype(str).map(specs.normalize_name)
    batch = points["batch_size"].fillna(points["concurrency"]) if "batch_size" in points else points["concurrency"]
    sel = points[hw_key.str.startswith("h200") & (batch == 1)]
    if "phase" in sel:
        sel = sel[sel["phase"].isin(["decode", "unknown"]) | sel["phase"].isna()]
    hw = specs.hardware("H200 SXM")
    rows = []
    for _, p in sel.iterrows():
        row = {c: p.get(c) for c in ("source_file", "source_line", "model", "precision", "framework",
                                     "context_len", "tok_s_per_user")}
        table_name = specs.match_model_name(p["model"])
        gpus = _gpus_from_shape(p["model"])
        context = int(p["context_len"]) if pd.notna(p.get("context_len")) else 1024
        recipe = _H200_SWEEP_RECIPES.get(str(p["precision"]), str(p["precision"]))
        row.update(model_table=table_name, gpus=gpus, recipe=recipe)
        if table_name is None:
            row["note"] = f"{p['model']} is not in data/specs/models.csv"
            rows.append(row)
            continue
        try:
            ds = speed_of_light(table_name, hw, recipe, gpus=gpus, batch=1, context=context, ceiling="datasheet")
            me = speed_of_light(table_name, hw, recipe, gpus=gpus, batch=1, context=context, ceiling="achievable")
        except (KeyError, ValueError) as err:
            row["note"] = str(err)
            rows.append(row)
            continue
        row.update(
            bytes_per_step_gb=ds.bytes_per_step / 1e9, weight_bytes_gb=ds.weight_bytes / 1e9,
            kv_bytes_gb=ds.kv_bytes / 1e9, bandwidth_tb_s_datasheet=ds.bandwidth_tb_s_per_gpu,
            bandwidth_tb_s_measured=me.bandwidth_tb_s_per_gpu,
            sol_tok_s_per_user_datasheet=ds.tok_s_per_user, sol_tok_s_per_user_measured=me.tok_s_per_user,
            fraction_of_sol_datasheet=p["tok_s_per_user"] / ds.tok_s_per_user,
            fraction_of_sol_measured=p["tok_s_per_user"] / me.tok_s_per_user,
            note=(f"one GPU's slice of a TP={gpus:d} deployment: SOL of the whole deployment, all-reduce ignored"
                  if gpus > 1 else ""),
        )
        rows.append(row)
    return pd.DataFrame(rows)


# --- the `perfclaims sol` command ------------------------------------------------------------------
