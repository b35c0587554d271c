"""The step-time model: one equation for every prediction, and the physical terms it takes.

``step_ms = layers·overhead_per_layer·(1 + unfused_quant·unfused) + roof(weights) + roof(attention)
+ prefill ÷ prefill_share + comm_scale·collectives``, with ``roof(op) = max(memory, compute) + (1 − overlap)·min(memory,
compute)`` per kind of kernel

where a decode step runs two kinds of kernels one after the other, each costed on its own bytes and its own FLOPs
(the split :mod:`analysis.scaling.roofline_form` fits too): the weight GEMMs (the weights one GPU of a worker group
reads, with the routed experts the batch touches, and 2 FLOPs per active weight per token) and attention (the KV
cache the batch reads and its attention FLOPs). ``overlap`` is fitted; near 0, as most cells fit it, a kind costs its
bytes' time plus its FLOPs' time rather than a roofline's max. ``memory`` is HBM bytes over the achieved
bandwidth (``bw_share`` × datasheet; the routed experts' bytes at ``expert_bw`` of that again, fitted: a grouped GEMM
over many experts with few tokens each streams its weights slower than one large GEMM; on the H200 MoE sweep about
0.6 of the copy bandwidth once the KV and FLOP growth are taken out), ``compute`` FLOPs over the achieved rate
(``flop_share`` × dense peak, each weight component at its own precision's rate), and ``collectives`` the measured
latency of every collective of the step
(``data/specs/collectives.csv`` through :mod:`analysis.perfmodel.collectives`): TP all-reduces, EP dispatch and
combine, per layer, at the step's message size (:func:`attention_data_parallel`: dispatch and combine only where a MoE layer's
ranks hold different tokens); ``prefill`` the datasheet FLOP time of the input tokens an aggregated
serving worker prefills per decode step (each request's ISL over its OSL ÷ τ steps; zero for a disaggregated decode
worker, whose prefill GPUs instead cap the request rate). A decode step emits ``τ`` tokens per sequence (speculative
decoding) and pushes ``verify`` tokens per sequence through the model; with drafts from the model's own MTP layers
(:data:`MTP_METHODS`) it also runs ``verify − 1`` draft passes of those layers and the output head, whose bytes and
layers it pays. Physics bounds the parameters: shares in (0, 1], overhead ≥ 0, overlap in [0, 1], comm_scale ≥ 0,
unfused_quant ≥ 0. The fixed cost is per layer (kernel launches and synchronisation scale with the layers a step runs,
not with its bytes), an MoE layer counting :data:`MOE_LAYER_FIXED` more than a dense one (``layers`` is
:attr:`Geometry.fixed_layers`). A deployment that quantises activations by separate kernels before each low-precision matmul
(``unfused`` = 1: flag ``quant-unfused``, the H200 sweep's fp8 runs) runs more kernels per layer and pays
``unfused_quant`` times that fixed cost again, and its matmuls are priced at the BF16 rate (that sweep's FP8 steps are
no faster than its BF16 ones even where the GEMMs bound the step); serving engines fuse the quantisation into the
kernel before it (``unfused`` = 0). A deployment whose host launches every kernel from Python
(:data:`HOST_BOUND_FRAMEWORKS`) pays its fixed cost on the host while the GPU works: its step is the longer of the two,
not their sum.

:func:`step_time` is that equation and nothing else; :func:`geometry` turns a deployment into the per-GPU coefficients
(bytes and milliseconds per unit of batch) so that the terms at any batch are :func:`terms`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np

from analysis import physics, roofline, specs
from analysis.perfmodel import collectives, recipes, words

TERMS = ("overhead_ms", "memory_ms", "compute_ms", "collectives_ms")
# Speculative methods whose drafts run the model's own MTP (next-token prediction) layers: each draft token is one
# sequential pass of those layers and the shared output head over the batch (SGLang's and vLLM's EAGLE worker with
# DeepSeek's NextN layer). Other drafters (EAGLE-3 heads, DSpark, n-gram) are not priced: no spec row describes them.
MTP_METHODS = recipes.MTP_METHODS
DEFAULT_DRAFT_TOKENS = 3  # MTP/EAGLE drafts where neither the row nor data/specs/mtp-recipes.csv says (an assumption)
# Share of each request's input that is prefilled (not served from a prefix cache): an assumption, none of the
# shipped sources records its cache hit rate; the random-prompt InferenceX sweeps share no prefix.
PREFILL_UNCACHED = 1.0
# Share of the datasheet FLOP rate prefill achieves where no measurement applies: an assumption. The calibration
# measures it per cell from the runs' TTFT (:func:`analysis.perfmodel.calibrate.prefill_shares`: the same
# configuration at the same concurrency, prompts of two lengths). On the shipped points the cells' medians run from
# 0.06 to 0.35 and the median over all 28 pairs is 0.133 (0.153 when InferenceX's prompts were priced at their nominal
# length instead of the 0.9 of it its client draws); this fallback, for a points table with no such pair, is near it.
PREFILL_MFU = 0.15


@dataclass(frozen=True)
class Efficiency:
    """The calibrated parameters of :func:`step_time` (see the module note for their bounds)."""

    bw_share: float = 0.8
    flop_share: float = 0.5
    overhead_ms_per_layer: float = 0.0
    overlap: float = 1.0
    comm_scale: float = 1.0
    unfused_quant: float = 0.0
    expert_bw: float = 1.0

    def to_dict(self) -> dict:
        return asdict(self)


BOUNDS = {"bw_share": (0.02, 1.0), "flop_share": (0.01, 1.0), "overhead_ms_per_layer": (0.0, 2.0), "overlap": (0.0, 1.0),
          "comm_scale": (0.0, 5.0), "unfused_quant": (0.0, 3.0), "expert_bw": (0.2, 1.0)}


def step_time(memory_ms, compute_ms, collectives_ms, eff: Efficiency, layers, prefill_ms=0.0, unfused=0.0,
              prefill_share=PREFILL_MFU, kv_ms=0.0, attention_ms=0.0, host_bound=0.0, expert_ms=0.0) -> dict:
    """THE equation (module note): the step time in ms and its terms as contributed (scalars or arrays).
    ``prefill_ms`` (datasheet-rate FLOP time of the input tokens an aggregated worker prefills per decode step) runs
    as its own passes between decode steps (SGLang, vLLM and TensorRT-LLM schedule prefill chunks as separate or
    compute-bound work), so it adds at ``prefill_share`` of the datasheet rate (measured per cell from TTFT by the
    calibration; :data:`PREFILL_MFU` where nothing was measured) rather than hiding under the decode step's memory time.
    ``unfused`` is 1 where activations are quantised by separate kernels before each low-precision matmul (flag
    ``quant-unfused``): the layer runs more kernels, and its fixed cost grows by ``unfused_quant`` times. ``kv_ms``
    and ``attention_ms`` are the parts of ``memory_ms`` and ``compute_ms`` attention's kernels read and run,
    ``expert_ms`` the routed experts' part of ``memory_ms``; ``host_bound`` 1 for a host-bound launch."""
    kv = np.asarray(kv_ms, dtype=float) / eff.bw_share
    att = np.asarray(attention_ms, dtype=float) / eff.flop_share
    mem = hbm_ms(memory_ms, expert_ms, eff)
    comp = np.asarray(compute_ms, dtype=float) / eff.flop_share
    wm, wc = mem - kv, comp - att  # the weight GEMMs' bytes and FLOPs; attention's are its own kernels
    roof_w = np.maximum(wm, wc) + (1.0 - eff.overlap) * np.minimum(wm, wc)
    roof_a = np.maximum(kv, att) + (1.0 - eff.overlap) * np.minimum(kv, att)
    roof = roof_w + roof_a
    mem_part = np.where(wm >= wc, roof_w, 0.0) + np.where(kv >= att, roof_a, 0.0)
    comm = eff.comm_scale * np.asarray(collectives_ms, dtype=float)
    kernels = 1.0 + eff.unfused_quant * np.asarray(unfused, dtype=float)
    overhead = eff.overhead_ms_per_layer * np.asarray(layers, dtype=float) * kernels + 0.0 * roof
    pre = np.asarray(prefill_ms, dtype=float) / np.asarray(prefill_share, dtype=float) + 0.0 * roof
    # launched kernel by kernel from Python (host-bound): the host issues the next kernels while the GPU runs the
    # last ones, so the step is the longer of the two, not their sum
    host = np.asarray(host_bound, dtype=float) > 0
    gpu = roof + comm
    total = np.where(host, np.maximum(overhead, gpu), overhead + gpu) + pre
    overhead = np.where(host, total - pre - gpu, overhead)
    return {"step_ms": total, "overhead_ms": overhead, "memory_ms": mem_part + 0.0 * roof,
            "compute_ms": roof - mem_part + pre, "collectives_ms": comm}


def hbm_ms(memory_ms, expert_ms, eff: Efficiency):
    """The step's HBM time at the achieved bandwidth: ``memory_ms`` (datasheet rate) over ``bw_share``, the routed
    experts' part of it (``expert_ms``) at ``expert_bw`` of that rate."""
    return (np.asarray(memory_ms, dtype=float) + np.asarray(expert_ms, dtype=float) * (1.0 / eff.expert_bw - 1.0)) \
        / eff.bw_share


def dominant(parts: dict) -> str:
    """Which term contributes most to one step (``memory``, ``compute``, ``collectives`` or ``overhead``)."""
    vals = {t.replace("_ms", ""): float(np.asarray(parts[t]).ravel()[0]) for t in TERMS}
    return max(vals, key=vals.get)


# --- a deployment ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Deployment:
    """One serving configuration in the points table's own column names (defaults: module :data:`DEFAULTS`)."""

    model: str
    hardware: str
    n_gpus: int = 1
    tp: int = 0              # 0: the worker's GPU count
    ep: int = 1
    dp: int = 1
    precision: str = "native"
    spec_method: str = "none"
    acceptance_length: float = math.nan
    draft_tokens: float = math.nan
    isl: float = 1024.0
    osl: float = 1024.0
    context_len: float = math.nan   # mean context during decode; NaN: isl + osl/2
    framework: str = "unknown"
    disagg: bool = False
    n_prefill_gpus: float = math.nan
    n_decode_gpus: float = math.nan
    n_workers: float = math.nan
    kv_dtype: str = ""
    date: str = ""                  # the run's date: its cell's measured software drift applies ("": the newest runs')
    comm_timed: bool = True         # False for one GPU's slice of a TP deployment timed alone (shard-measured)
    quant_unfused: bool = False     # activations quantised by separate kernels (flag quant-unfused)
    uniform_routing: bool = False   # random weights: an MoE router routes uniformly (flag random-weights)
    range_ratio: float = 1.0        # lengths drawn uniformly on [range_ratio·ISL, ISL], likewise OSL; 1: fixed lengths

    @property
    def decode_gpus(self) -> int:
        if self.n_decode_gpus == self.n_decode_gpus and self.n_decode_gpus > 0:
            return int(self.n_decode_gpus)
        if self.disagg and self.n_prefill_gpus == self.n_prefill_gpus:
            return max(int(self.n_gpus - self.n_prefill_gpus), 1)
        return int(self.n_gpus)

    @property
    def worker_gpus(self) -> int:
        """GPUs of one decode worker (one model instance): the widest of TP, EP and attention DP."""
        w = max(int(self.tp or 0), int(self.ep or 1), int(self.dp or 1))
        return w if w > 0 else self.decode_gpus

    @property
    def workers(self) -> float:
        if self.n_workers == self.n_workers and self.n_workers > 0:
            return float(self.n_workers)
        return max(self.decode_gpus / self.worker_gpus, 1.0)

    @property
    def mean_isl(self) -> float:
        """The mean prompt length the benchmark sent (:func:`uniform_lengths`)."""
        return uniform_lengths(self.isl, self.range_ratio)[0]

    @property
    def prefill_isl(self) -> float:
        """The prompt length a prompt token's attention is priced at: its prompt's length weighted by its tokens
        (``E[ISL²] / E[ISL]``; a prompt token attends to half of that on average)."""
        mean, square = uniform_lengths(self.isl, self.range_ratio)
        return square / mean if mean > 0 else self.isl

    @property
    def context(self) -> float:
        """The mean context of a decode step: the given ``context_len``, else the prompt plus half the output,
        averaged over steps (a request with a longer output runs more of them): ``E[ISL] + E[OSL²] / (2·E[OSL])``,
        ISL + OSL/2 for fixed lengths."""
        if self.context_len == self.context_len:
            return float(self.context_len)
        mean, square = uniform_lengths(self.osl, self.range_ratio)
        return self.mean_isl + (square / (2.0 * mean) if mean > 0 else self.osl / 2.0)

    def group_id(self) -> str:
        return group_id(asdict(self))


DEFAULTS = {f.name: f.default for f in Deployment.__dataclass_fields__.values() if f.default is not f.default_factory}
CONFIG_KEYS = tuple(k for k in Deployment.__dataclass_fields__
                    if k not in ("comm_timed", "quant_unfused", "uniform_routing", "range_ratio"))


def uniform_lengths(length: float, ratio: float = 1.0) -> tuple[float, float]:
    """(mean, mean square) of a length drawn uniformly on [ratio·length, length] (a benchmark's random range ratio;
    ratio 1: the fixed length). The draw is of whole tokens, which moves neither by more than a token."""
    length, ratio = float(length), min(max(float(ratio), 0.0), 1.0)
    lo = ratio * length
    return (lo + length) / 2.0, (lo * lo + lo * length + length * length) / 3.0


def group_id(keys: dict) -> str:
    """A stable 12-hex id of a configuration's key columns (sorted, NaN and None spelt alike)."""
    norm = {str(k): (None if v is None or (isinstance(v, float) and math.isnan(v)) else
                     (v.item() if hasattr(v, "item") else v)) for k, v in sorted(keys.items())}
    return hashlib.sha1(json.dumps(norm, sort_keys=True, default=str).encode()).hexdigest()[:12]


# The fixed cost of an MoE layer over a dense layer's, less one: an MoE layer runs a router, a top-k, the tokens'
# permutation and a grouped GEMM's launches where a dense MLP runs two GEMMs. Inferred from the H200 sweep (one engine,
# CUDA graphs, BF16, batch 1, context 1,024): the step less its weight and KV bytes at the measured copy bandwidth
# (4.259 TB/s) is 76.9 µs per layer for Llama-3.1-8B, 75.7 µs for the 70B TP8 shard, and 150.9 µs per layer for
# Qwen3-30B-A3B, whose 48 layers are all MoE: 1.98× a dense layer's, so one more (tested against the shipped sweep,
# tests/test_perfmodel.py). It rests on that bandwidth: at 0.80 of the datasheet instead of the copy's 0.887 the ratio
# is 2.19, at the 0.75 the CUDA-graph cell now fits 2.38. On the DeepSeek serving cells it mostly rescales the
# per-layer cost the fit finds (58 of DeepSeek-R1's 61 layers are MoE), but not only: an MTP draft pass counts three
# layers instead of two, and the levels' priors move the other parameters. The Qwen3 step that measures it is also a
# group the validation leaves out, whose error is then not a held-out one.
MOE_LAYER_FIXED = 1.0
MOE_LAYER_FIXED_FROM = ("llama-3.1-8b", "llama-3.1-70b-tp8-shard", "qwen3-30b-a3b")  # the sweep models it rests on

HOST_BOUND_FRAMEWORKS = ("pytorch-eager",)  # kernels launched one by one from Python, no CUDA graph


def attention_data_parallel(tp: int, ep: int, dp: int) -> bool:
    """Whether each GPU of a worker attends to its own sequences (and holds the whole attention): attention DP
    (DP > 1), or EP with no TP (InferenceX records some MoRI runs as TP1 EP8 DP1: eight ranks that do not split the
    attention each hold their own tokens).

    It decides how expert parallelism moves tokens. Only where a MoE layer's ranks hold different tokens does it
    dispatch them to their experts and combine them back (all-to-all); under tensor-parallel attention every rank
    holds every token after the attention's all-reduce, and the experts' outputs are summed with one all-reduce per
    MoE layer, as tensor parallelism does: SGLang's default `--moe-a2a-backend none` "Disables all-to-all for EP. Uses
    All-Reduce or All-Gather for token dispatch" (docs.sglang.io, advanced_features/expert_parallelism);
    TensorRT-LLM's WideEPMoE.select_alltoall_method_type returns NotEnabled when `not mapping.enable_attention_dp`
    (tensorrt_llm/_torch/modules/fused_moe/fused_moe_wide_ep.py at 01303b38); InferenceX's AMD disaggregated recipes
    append `--moe-a2a-backend mori` with `--enable-dp-attention` only (benchmarks/multi_node/amd_utils/models.yaml,
    `dp_flags`, from 2026-02-06; its MoRI runs before then ran recipes not stored here)."""
    return dp > 1 or (tp <= 1 and ep > 1)


def host_bound(dep: Deployment) -> bool:
    """Whether the deployment's kernels are launched one by one by the host (eager PyTorch): its per-layer fixed cost
    is host time that overlaps the GPU's work rather than adding to it."""
    return str(dep.framework) in HOST_BOUND_FRAMEWORKS


def speculates(method) -> bool:
    """Whether a points-table ``spec_method`` names speculative decoding (``none``, ``unknown`` and blanks do not)."""
    return str(method or "none").lower() not in ("none", "", "unknown", "nan")


def speculation(dep: Deployment, *, assumed_tau: float) -> tuple[float, float, str]:
    """(τ tokens emitted per step, verify tokens per step, where τ came from) for one deployment."""
    method = str(dep.spec_method or "none").lower()
    if not speculates(method):
        return 1.0, 1.0, words.TAU_NONE
    drafts = dep.draft_tokens if dep.draft_tokens == dep.draft_tokens else DEFAULT_DRAFT_TOKENS
    if dep.acceptance_length == dep.acceptance_length and dep.acceptance_length >= 1:
        return float(dep.acceptance_length), float(drafts) + 1.0, words.TAU_MEASURED
    tau = float(tau_at_drafts(assumed_tau, drafts))
    return tau, float(drafts) + 1.0, words.tau_assumed(tau, method, float(drafts), float(assumed_tau),
                                                       float(DEFAULT_DRAFT_TOKENS))


# The share of first drafts the target model accepts, from DeepSeek's own measurement of its MTP module: "the
# acceptance rate of the second token prediction ranges between 85% and 90% across various generation topics"
# (DeepSeek-V3 Technical Report, arXiv 2412.19437, section 5.4.3; read here in a quotation of that sentence, not in
# the PDF). The midpoint. Drafts after the first are accepted at a rate the calibration's τ sets.
FIRST_DRAFT_ACCEPTANCE = 0.875


def draft_acceptance(tau: float, drafts: float = DEFAULT_DRAFT_TOKENS) -> tuple[float, float]:
    """(first-draft acceptance a1, later drafts' acceptance α) at which ``drafts`` (a whole number k) drafted tokens
    give ``tau`` tokens per step, ``1 + a1·(1 + α + … + α^(k − 1)) = tau``: a1 = :data:`FIRST_DRAFT_ACCEPTANCE` and α
    on [0, 1] (a quadratic's root at k = 3, bisection otherwise); a τ the first draft alone exceeds (below 1 + a1)
    puts all of it on the first draft (α = 0), a τ above 1 + k·a1 accepts every later draft (α = 1) and raises a1 to
    match, so that τ(k) is ``tau`` and continuous in it. ``tau`` outside [1, k + 1] is held at the nearer end."""
    k = max(int(round(float(drafts))), 0)
    rest = min(max(float(tau), 1.0), k + 1.0) - 1.0
    first = FIRST_DRAFT_ACCEPTANCE
    if k == 0:
        return 0.0, 0.0
    if rest <= first:
        return rest, 0.0
    if rest >= first * k:
        return rest / k, 1.0
    if k == 3:  # 1 + α + α² = rest / a1, the count the calibration fits at: the quadratic's root in [0, 1]
        return first, min(max((math.sqrt(4.0 * rest / first - 3.0) - 1.0) / 2.0, 0.0), 1.0)
    lo, hi = 0.0, 1.0
    for _ in range(50):
        a = 0.5 * (lo + hi)
        if first * sum(a ** i for i in range(k)) < rest:
            lo = a
        else:
            hi = a
    return first, 0.5 * (lo + hi)


def tau_at_drafts(tau: float, drafts):
    """τ at ``drafts`` drafted tokens per step for a speculation whose τ at :data:`DEFAULT_DRAFT_TOKENS` drafts is
    ``tau`` (the calibration's assumed τ is fitted at that count): the first draft accepted at
    :data:`FIRST_DRAFT_ACCEPTANCE`, each later one at the rate that gives ``tau`` (:func:`draft_acceptance`), so never
    more than the tokens a step verifies. τ = 2.11 at three drafts is 1.88 at one and 2.07 at two. The rates'
    independence of the prompt and of the draft count is an assumption, labelled with every assumed τ."""
    first, a = draft_acceptance(tau)
    k = np.maximum(np.asarray(drafts, dtype=float), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = np.where(np.abs(1.0 - a) < 1e-12, k, (1.0 - a ** k) / (1.0 - a))  # 1 + α + … + α^(k−1)
    return 1.0 + first * later


# --- the physical terms ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Geometry:
    """Per-GPU coefficients of one deployment at one context: the terms at batch ``B`` (sequences per worker) are
    linear in ``B`` except the routed experts, which follow the expected coverage of ``B·verify`` tokens."""

    fixed_bytes: float          # weights every step reads, per GPU
    expert_bytes: float         # one touched expert in every MoE layer, per GPU
    n_experts: int
    top_k: int
    kv_bytes_per_seq: float     # per GPU
    bytes_per_token: float      # embedding rows, per GPU
    compute_ms_per_token: float  # at the datasheet rates, per GPU
    attention_ms_per_token: float  # the attention part of it, at the decode context
    prefill_ms_per_token: float  # one prompt token at the deployment's ISL (:func:`prefill_ms_per_token`), per GPU
    bandwidth_tb_s: float       # datasheet, per GPU
    verify: float
    hidden: int
    comm: tuple                 # ((collective, interconnect, group, count, tokens_divisor), ...)
    hardware: str
    recipe: str
    layers: int
    notes: tuple = field(default_factory=tuple)
    model: str = ""             # the spec tables' model name
    gpus: int = 1               # GPUs of the worker the per-GPU figures divide by
    draft_layers: float = 0.0   # layers the draft passes of a step run (MTP: each pass its MTP layer and the head)
    moe_layers: float = 0.0     # MoE layers a step runs, its draft passes' included

    @property
    def fixed_layers(self) -> float:
        """The layers a step's fixed cost counts: each layer and draft pass once, each MoE layer
        :data:`MOE_LAYER_FIXED` more."""
        return self.layers + self.draft_layers + MOE_LAYER_FIXED * self.moe_layers


def _rate(hw: specs.Hardware, math_precision: str) -> float:
    return roofline.dense_rate(hw.dense_tflops, math_precision)


@lru_cache(maxsize=4096)
def _geometry(model: str, hardware: str, recipe_text: str, kv_dtype: str, g: int, tp: int, ep: int, dp: int,
              context: float, verify: float, comm_timed: bool, isl: float = math.nan,
              mtp_drafts: bool = False, bf16_math: bool = False) -> Geometry:
    m, hw = specs.model(model), specs.hardware(hardware)
    r = roofline.parse_precision(recipe_text, model=m, kv_dtype=kv_dtype or "bf16")
    b = {c: roofline.bytes_per_weight(p) for c, p in r.parts.items()}
    attention_dp = attention_data_parallel(tp, ep, dp)
    fixed = sum(m.params_b[c] * 1e9 * b[c] for c in specs.COMPONENTS if c != "routed_experts")
    attn = m.params_b["attention"] * 1e9 * b["attention"]
    # attention DP: every rank holds the whole attention; attention TP: every rank holds MLA's down-projections
    replicated = attn if attention_dp else \
        (m.attention_replicated_params_b * 1e9 * b["attention"] if tp > 1 else 0.0)
    fixed_gpu = fixed / g + replicated * (1.0 - 1.0 / g)
    expert_gpu = m.n_moe_layers * m.expert_params_b * 1e9 * b["routed_experts"] / g if m.is_moe else 0.0
    kv = roofline.kv_bytes_per_sequence(m, context, kv_dtype=r.kv_dtype)
    replicas = 1.0 if attention_dp else roofline.kv_replicas(m, max(tp, 1))
    kv_gpu = kv["read"] * replicas / g
    # FLOPs per token: 2 per active weight at each component's math rate, attention over the entries read (bf16).
    # Unfused low-precision matmuls (flag quant-unfused) at the BF16 rate: the H200 sweep's FP8 steps are slower
    # than its BF16 ones at batch 512 too, where the GEMMs bound the step (8B: 37.4 against 35.7 ms).
    active = {c: m.params_b[c] for c in specs.COMPONENTS if c != "routed_experts"}
    active["routed_experts"] = m.n_moe_layers * m.top_k * m.expert_params_b
    ms = 0.0
    for c, p_b in active.items():
        rate = _rate(hw, "bf16" if bf16_math else roofline.MATH_PRECISION[r.parts[c]])
        ms += 2.0 * p_b * 1e9 / (g * rate * 1e12) * 1e3 if rate == rate else 0.0
    d = (2 * m.kv_lora_rank + m.qk_rope_head_dim) if m.attention in ("mla", "dsa") else 2 * m.head_dim
    bf16 = _rate(hw, "bf16")
    attn_ms = 2.0 * m.n_heads * d * kv["entries_read"] / (g * bf16 * 1e12) * 1e3 if bf16 == bf16 else 0.0
    ms += attn_ms
    prefill_ms = _prefill_token_ms(ms, attn_ms, m, isl, g, bf16)
    passes = max(float(verify) - 1.0, 0.0) if m.mtp_layers and mtp_drafts else 0.0
    draft_layers = 0.0
    if passes:  # each draft token is one pass of the MTP layer(s) and the output head over the batch
        per_layer = (m.params_b["attention"] * b["attention"] + m.params_b["shared_experts"] * b["shared_experts"]
                     + m.params_b["router"] * b["router"]) / max(m.n_moe_layers or m.n_layers, 1)
        head = m.params_b["lm_head"] * b["lm_head"]
        fixed_gpu += passes * (m.mtp_layers * per_layer + head) * 1e9 / g
        expert_gpu *= 1.0 + passes * m.mtp_layers / max(m.n_moe_layers, 1)
        draft_layers = passes * (m.mtp_layers + 1)
    moe_layers = (m.n_moe_layers + passes * m.mtp_layers) if m.is_moe else 0.0
    comm = []
    if comm_timed and g > 1:
        dense_layers = m.n_layers - m.n_moe_layers
        if tp > 1 and not attention_dp:
            comm.append(("all-reduce", collectives.interconnect_for(hw, tp), tp, m.n_layers, 1))  # after attention
            if dense_layers:
                comm.append(("all-reduce", collectives.interconnect_for(hw, tp), tp, dense_layers, 1))
        if m.is_moe and ep > 1 and attention_dp:  # each rank holds its own tokens: all-to-all
            divisor = max(dp, ep if tp <= 1 else 1)
            comm.append(("ep-dispatch", collectives.interconnect_for(hw, ep), ep, m.n_moe_layers, divisor))
            comm.append(("ep-combine", collectives.interconnect_for(hw, ep), ep, m.n_moe_layers, divisor))
        elif m.is_moe and tp > 1 and not attention_dp:  # every rank holds every token: the experts' sum
            group = max(tp, ep)
            comm.append(("all-reduce", collectives.interconnect_for(hw, group), group, m.n_moe_layers, 1))
    notes = []
    if not comm_timed:
        notes.append(words.SHARD_NOTE)
    return Geometry(fixed_gpu, expert_gpu, m.n_experts, m.top_k, kv_gpu, m.hidden * b["embedding"] / g, ms, attn_ms,
                    prefill_ms, hw.hbm_bandwidth_tb_s, float(verify), m.hidden, tuple(comm), hw.short_name, r.label,
                    m.n_layers, tuple(notes), model, int(g), draft_layers, float(moe_layers))


@lru_cache(maxsize=1024)
def min_worker_gpus(model: str, hardware: str, recipe_text: str, usable_share: float = 0.95) -> int:
    """The fewest GPUs (a power of two) whose HBM holds the model's weights with ``usable_share`` of it."""
    m, hw = specs.model(model), specs.hardware(hardware)
    r = roofline.parse_precision(recipe_text, model=m)
    stored = sum(m.params_b[c] * 1e9 * roofline.bytes_per_weight(r.parts[c]) for c in specs.COMPONENTS)
    need = stored / (hw.hbm_gb * 1e9 * usable_share)
    g = 1
    while g < need:
        g *= 2
    return g


@dataclass(frozen=True)
class Parallelism:
    """GPUs per worker, its TP/EP/attention-DP, workers, and why the recorded columns were overridden."""

    worker_gpus: int
    tp: int
    ep: int
    dp: int
    workers: float
    note: str = ""


def parallelism(dep: Deployment) -> Parallelism:
    """The worker layout of ``dep``; a recorded worker too small to hold the weights is widened to the smallest
    power of two that does (within the decode GPUs), with a note (the points table's TP/EP/DP are then not the
    decode worker's)."""
    rc = recipes.recipe(dep.model, dep.precision)
    name = specs.match_model_name(dep.model) or dep.model
    g = dep.worker_gpus
    need = min_worker_gpus(name, dep.hardware, rc.text)
    note = ""
    tp, ep, dp = int(dep.tp or g), int(dep.ep or 1), int(dep.dp or 1)
    need = min(need, dep.decode_gpus)
    if g < need:
        note = words.widened(tp, ep, dp, need)
        g, tp = need, need
    workers = float(dep.n_workers) if dep.n_workers == dep.n_workers and dep.n_workers > 0 else \
        max(dep.decode_gpus / g, 1.0)
    return Parallelism(g, tp, ep, dp, workers, note)


def kv_cache_dtype(dep: Deployment) -> str:
    """The KV-cache dtype ``dep`` is priced at: its own ``kv_dtype``, else its precision recipe's."""
    given = str(dep.kv_dtype or "")
    return given if given and given != "unknown" else recipes.recipe(dep.model, dep.precision).kv_dtype


def geometry(dep: Deployment, *, verify: float) -> Geometry:
    """The per-GPU coefficients of ``dep`` at its context (recipe from :mod:`analysis.perfmodel.recipes`)."""
    rc = recipes.recipe(dep.model, dep.precision)
    kv = kv_cache_dtype(dep)
    par = parallelism(dep)
    return _geometry(specs.match_model_name(dep.model) or dep.model, dep.hardware, rc.text, kv, int(par.worker_gpus),
                     int(par.tp), int(par.ep), int(par.dp), round(float(dep.context), 1),
                     float(verify), bool(dep.comm_timed), float(dep.prefill_isl),
                     str(dep.spec_method or "").lower() in MTP_METHODS, bool(dep.quant_unfused))


@lru_cache(maxsize=65536)
def _collective_us(collective: str, interconnect: str, group: int, message_bytes: float, hardware: str
                   ) -> tuple[float, float, float, str]:
    r = collectives.latency(collective, interconnect, group_size=group, message_bytes=message_bytes, hardware=hardware)
    mid = r.latency_us if r.latency_us == r.latency_us else math.sqrt(r.low_us * r.high_us)
    return mid, r.low_us, r.high_us, r.status


def _quantize(x: float) -> float:
    """Message sizes rounded to a quarter octave, so the latency lookups of nearby batches share a cache entry."""
    return float(2.0 ** (round(math.log2(max(x, 1.0)) * 4) / 4))


def memory_ms(geo: Geometry, batch, routing: float = 1.0) -> np.ndarray:
    """HBM time per GPU at the datasheet bandwidth for ``batch`` sequences per worker. ``routing`` ≤ 1 shrinks the
    tokens the expert coverage sees (real routers concentrate on fewer experts than uniform routing would touch:
    ROOFLINE.md 3.2 caveat (a)); 1 is uniform routing."""
    B = np.atleast_1d(np.asarray(batch, dtype=float))
    tokens = B * geo.verify
    nbytes = geo.fixed_bytes + experts_touched(geo, tokens, routing) * geo.expert_bytes + B * geo.kv_bytes_per_seq \
        + tokens * geo.bytes_per_token
    return nbytes / (geo.bandwidth_tb_s * 1e12) * 1e3


def experts_touched(geo: Geometry, tokens: np.ndarray, routing: float = 1.0) -> np.ndarray:
    """Routed experts per MoE layer that ``tokens`` (per worker, verify tokens included) touch: their expected
    coverage at ``routing`` (:func:`memory_ms`), at least the top-k one token reads; 0 for a dense model."""
    if not geo.n_experts:
        return 0.0 * tokens
    return np.maximum(physics.expert_coverage(tokens * routing, geo.n_experts, geo.top_k),
                      min(geo.top_k, geo.n_experts))




def prefill_tokens_per_seq(isl: float, osl: float, tau: float, *, serving: bool, disagg: bool) -> float:
    """Input tokens an aggregated serving worker prefills per decode step, per sequence in flight: each request's
    ISL spread over its OSL ÷ τ decode steps (chunked prefill shares the step with decode). 0 for a step-timing sweep,
    a disaggregated decode worker, or a point whose source gives no ISL/OSL."""
    if not serving or disagg or not (isl == isl and osl == osl and isl > 0 and osl > 0):
        return 0.0
    return float(tau) * float(isl) / float(osl) * PREFILL_UNCACHED




def prefill_attention_width(m: specs.Model) -> int:
    """Multiply-adds per head per KV entry a prompt token's attention runs (QKᵀ plus PV). Prefill runs MLA in its
    expanded multi-head form (every head's ``qk_nope + rope`` key and ``v`` value; SGLang, vLLM and TensorRT-LLM
    prefill DeepSeek MLA that way), not the absorbed form a decode step runs over the latent (``2·kv_lora_rank +
    rope``); the DeepSeek V3 config's ``v_head_dim`` equals ``qk_nope_head_dim`` = ``head_dim − rope``. Other
    attention kinds run the same form in both phases."""
    if m.attention == "mla":
        return int(m.head_dim + (m.head_dim - m.qk_rope_head_dim))
    if m.attention in ("dsa", "dsv4"):
        return int(2 * m.kv_lora_rank + m.qk_rope_head_dim)
    return int(2 * m.head_dim)


def _prefill_attention_ms(m: specs.Model, isl: float, g: int, bf16_tflops: float) -> float:
    """Datasheet-rate attention time per GPU of one prompt token of an ``isl``-token prompt: causal, so a token
    attends to ISL/2 earlier tokens on average (capped by sliding windows and sparse top-k as a decode step is)."""
    if not bf16_tflops == bf16_tflops:
        return 0.0
    entries = roofline.kv_bytes_per_sequence(m, float(isl) / 2.0)["entries_read"]
    return 2.0 * m.n_heads * prefill_attention_width(m) * entries / (g * bf16_tflops * 1e12) * 1e3


def prefill_ms_per_token(geo: Geometry, isl: float | None = None) -> float:
    """Datasheet-rate time per GPU to prefill one input token: the matmuls of a decode token plus attention over
    ISL/2 earlier tokens on average, in prefill's form (:func:`prefill_attention_width`). ``isl`` None: the
    deployment's own ISL the geometry was built at."""
    return geo.prefill_ms_per_token if isl is None else _prefill_at(geo, float(isl))


def _prefill_at(geo: Geometry, isl: float) -> float:
    return _prefill_token_ms(geo.compute_ms_per_token, geo.attention_ms_per_token, specs.model(geo.model), isl,
                             geo.gpus, _rate(specs.hardware(geo.hardware), "bf16"))


def _prefill_token_ms(decode_ms: float, decode_attention_ms: float, m: specs.Model, isl: float, g: int,
                      bf16_tflops: float) -> float:
    """A decode token's datasheet time with its attention replaced by a prompt token's at ``isl`` (the decode
    token's own time where the ISL is unknown)."""
    if not (isl == isl and isl > 0):
        return decode_ms
    return decode_ms - decode_attention_ms + _prefill_attention_ms(m, isl, g, bf16_tflops)


def prefill_capacity(dep: Deployment, geo: Geometry, worker_gpus: int, share: float = PREFILL_MFU) -> float:
    """Input tokens per second the prefill GPUs of a disaggregated deployment can take at ``share`` of the datasheet
    FLOP rate (NaN when the deployment is not disaggregated or its prefill GPUs or lengths are unknown)."""
    n = dep.n_prefill_gpus
    if not dep.disagg or not (n == n and n > 0) or not (dep.isl == dep.isl and dep.isl > 0):
        return math.nan
    one_gpu_ms = prefill_ms_per_token(geo, dep.prefill_isl) * worker_gpus
    return n * share * 1000.0 / one_gpu_ms if one_gpu_ms > 0 else math.nan


def terms(geo: Geometry, batch, routing: float = 1.0, prefill_per_seq: float = 0.0) -> dict:
    """``memory_ms``, ``compute_ms`` at the datasheet ceilings and ``collectives_ms`` (measured latencies, with
    ``collectives_low_ms`` / ``collectives_high_ms`` from the table's range) for ``batch`` sequences per worker.
    ``prefill_per_seq`` input tokens per sequence (:func:`prefill_tokens_per_seq`) add their FLOPs to the step's
    compute (``prefill_compute_ms``, at :func:`prefill_ms_per_token` of the deployment's ISL)."""
    B = np.atleast_1d(np.asarray(batch, dtype=float))
    tokens = B * geo.verify
    memory = memory_ms(geo, B, routing)
    touched = experts_touched(geo, tokens, routing)
    nbytes = memory / 1e3 * geo.bandwidth_tb_s * 1e12
    prefill = B * float(prefill_per_seq) * geo.prefill_ms_per_token
    compute = tokens * geo.compute_ms_per_token
    comm, low, high = np.zeros_like(B), np.zeros_like(B), np.zeros_like(B)
    statuses: set = set()
    for coll, where, group, count, divisor in geo.comm:
        for i, t in enumerate(tokens):
            msg = _quantize(max(t / divisor, 1.0) * geo.hidden * 2.0)
            mid, lo, hi, status = _collective_us(coll, where, int(group), msg, geo.hardware)
            comm[i] += count * mid / 1e3
            low[i] += count * lo / 1e3
            high[i] += count * hi / 1e3
            statuses.add(words.collective_status(coll, where, int(group), status))
    return {"memory_ms": memory, "compute_ms": compute, "prefill_compute_ms": prefill, "collectives_ms": comm,
            "kv_ms": B * geo.kv_bytes_per_seq / (geo.bandwidth_tb_s * 1e12) * 1e3,
            "expert_ms": touched * geo.expert_bytes / (geo.bandwidth_tb_s * 1e12) * 1e3,
            "attention_ms": tokens * geo.attention_ms_per_token,
            "collectives_low_ms": low,
            "collectives_high_ms": high, "collective_status": sorted(statuses), "bytes_per_gpu": nbytes}
