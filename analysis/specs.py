"""Hardware and model tables (``data/specs/``): loading, number parsing and name lookup.

The tables are copies of ``shared/specs`` whose cells keep their sources' wording ("7.7-8.0", "~2500",
"61 (3 dense + 58 MoE)"). This module turns them into typed records: a range keeps both ends and the
datasheet peak is the *upper* end (the hard bound; the lower end is kept as ``*_low``). Model records are
completed from the ``config.json`` copies in ``data/specs/configs/`` (MoE layer count, MLA ranks, sliding
windows, DeepSeek-V4 compression ratios) and split into weight components so precision can differ per part.
Names match case- and punctuation-insensitively ("llama-3.1-8b" is "Llama 3.1 8B", "GB300 NVL72" is the
GB300 per-GPU row with a 72-GPU rack); a name that matches nothing raises ``KeyError`` listing what is known.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pandas as pd

from analysis import config

HARDWARE_FILE = config.SPECS_DIR / "hardware.csv"
MODELS_FILE = config.SPECS_DIR / "models.csv"
CONFIGS_DIR = config.SPECS_DIR / "configs"

_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_RANGE = re.compile(rf"^\s*[~≈]?\s*({_NUMBER})\s*(?:[-–]\s*({_NUMBER}))?")


def parse_range(text) -> tuple[float, float]:
    """``(low, high)`` from a cell such as ``"7.7-8.0"``, ``"~2500"``, ``"61 (3 dense + 58 MoE)"``; NaN if none."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return (math.nan, math.nan)
    if isinstance(text, (int, float)):
        return (float(text), float(text))
    m = _RANGE.match(str(text))
    if not m:
        return (math.nan, math.nan)
    low = float(m.group(1).replace(",", ""))
    high = float(m.group(2).replace(",", "")) if m.group(2) else low
    return (min(low, high), max(low, high))


def peak(text) -> float:
    """The datasheet peak of a cell: the upper end of a range (see the module note)."""
    return parse_range(text)[1]


def normalize_name(text: str) -> str:
    """Lower case, letters and digits only: the key names are matched on."""
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


# --- hardware --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hardware:
    """One accelerator (per-GPU numbers; a rack name resolves to its GPU with ``rack_gpus`` set)."""

    name: str                       # the table's name
    short_name: str                 # the name without the parenthesised note
    vendor: str
    hbm_gb: float                   # per GPU, upper end of the cell
    hbm_gb_low: float
    hbm_bandwidth_tb_s: float       # datasheet peak = upper end
    hbm_bandwidth_tb_s_low: float
    dense_tflops: dict              # {"bf16": .., "fp8": .., "fp4": ..}; NaN where the part has no such rate
    scale_up_domain_gpus: float
    confidence: str
    source: str
    notes: str
    rack_gpus: int | None = None    # set when the name asked for was a rack ("GB300 NVL72")
    family: str = ""                # the die: GB200 is a B200 family part, GB300 a B300 (hardware.csv ``family``)
    generation: str = ""            # "hopper", "blackwell", "cdna3", "cdna4"; "" where the table has none
    fp4_format: str = ""            # "nvfp4", "mxfp4" or "" (no FP4 tensor cores)
    achievable_bandwidth_tb_s: float = math.nan   # measured (``achievable_basis`` "measured") or NaN
    achievable_tflops: dict = field(default_factory=dict)  # measured dense rates per precision, NaN where none
    achievable_basis: str = "assumption"
    achievable_source: str = ""

    @property
    def achievable_bandwidth_share(self) -> float:
        """Measured HBM bandwidth over the datasheet peak (≤ 1), NaN where nothing was measured."""
        return self.achievable_bandwidth_tb_s / self.hbm_bandwidth_tb_s

    @property
    def label(self) -> str:
        return f"{self.short_name} NVL{self.rack_gpus}" if self.rack_gpus else self.short_name


def _short(name: str) -> str:
    return name.split("(")[0].strip()


@lru_cache(maxsize=4)
def _hardware_rows(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def hardware_table(path: Path | None = None) -> pd.DataFrame:
    """The hardware table as shipped (text cells), one row per accelerator or rack."""
    return _hardware_rows(str(path or HARDWARE_FILE)).copy()


def _hardware_record(row: pd.Series) -> Hardware:
    hbm = parse_range(row["hbm_gb"])
    bw = parse_range(row["hbm_bandwidth_tb_s"])
    return Hardware(
        name=row["name"], short_name=_short(row["name"]), vendor=row["vendor"],
        hbm_gb=hbm[1], hbm_gb_low=hbm[0], hbm_bandwidth_tb_s=bw[1], hbm_bandwidth_tb_s_low=bw[0],
        dense_tflops={p: peak(row[f"dense_{p}_tflops"]) for p in ("bf16", "fp8", "fp4")},
        scale_up_domain_gpus=peak(row["scale_up_domain_gpus"]),
        confidence=row["confidence"], source=row["source"], notes=row["notes"],
        family=row.get("family", "") or _short(row["name"]), generation=row.get("generation", ""),
        fp4_format=row.get("fp4_format", ""),
        achievable_bandwidth_tb_s=peak(row.get("achievable_bandwidth_tb_s", "")),
        achievable_tflops={p: peak(row.get(f"achievable_{p}_tflops", "")) for p in ("bf16", "fp8")},
        achievable_basis=row.get("achievable_basis", "assumption") or "assumption",
        achievable_source=row.get("achievable_source", ""),
    )


def hardware_family(name: str) -> str | None:
    """The die family of a hardware name ("GB200 NVL72" -> "B200"), None when the table does not know it."""
    try:
        return hardware(name).family
    except KeyError:
        return None


def generation(name: str) -> str | None:
    """The architecture generation of a hardware name ("H200" -> "hopper"), None when unknown or not recorded."""
    try:
        return hardware(name).generation or None
    except KeyError:
        return None


# Names used by vendors, logs and claims that the table's own names do not contain.
_HARDWARE_ALIASES = {
    "h200": "H200 SXM", "h100": "H100 SXM", "hgxh200": "H200 SXM", "hgxh100": "H100 SXM",
    "dgxh100": "H100 SXM", "dgxh200": "H200 SXM", "b200": "B200 (HGX/DGX B200)",
    "b300": "B300 (HGX B300, Blackwell Ultra)", "hgxb300": "B300 (HGX B300, Blackwell Ultra)",
    "trillium": "TPU v6e (Trillium)", "ironwood": "TPU7x (Ironwood)", "gaudi3": "Gaudi 3 (OAM HL-325L)",
    # H800: the export H100 (same HBM and tensor cores, NVLink cut to 400 GB/s) - the HBM roofline is the H100's.
    "h800": "H100 SXM", "h800sxm": "H100 SXM",
    "cs3": "Cerebras WSE-3 / CS-3", "wse3": "Cerebras WSE-3 / CS-3", "groq": "Groq LPU (GroqChip v1)",
}


def _hardware_keys(table: pd.DataFrame) -> dict[str, tuple[str, int | None]]:
    """normalized name -> (table name of the per-GPU row, rack size or None)."""
    keys: dict[str, tuple[str, int | None]] = {}
    per_gpu = {}
    for name, form in zip(table["name"], table["form"]):
        if not form.startswith("rack"):
            per_gpu[normalize_name(_short(name).split()[0])] = name
            for key in {normalize_name(name), normalize_name(_short(name))}:
                keys[key] = (name, None)
            for part in re.split(r"[/(),]", name):
                if normalize_name(part) and normalize_name(part) not in keys and len(normalize_name(part)) > 3:
                    keys.setdefault(normalize_name(part), (name, None))
    for name, form, domain in zip(table["name"], table["form"], table["scale_up_domain_gpus"]):
        if form.startswith("rack"):
            gpu = per_gpu.get(normalize_name(_short(name).split()[0]))
            if gpu:
                for key in {normalize_name(name), normalize_name(_short(name))}:
                    keys[key] = (gpu, int(peak(domain)))
    for alias, name in _HARDWARE_ALIASES.items():
        keys.setdefault(alias, (name, None))
    return keys


def hardware(name: str, *, path: Path | None = None) -> Hardware:
    """The record for an accelerator name (case/punctuation-insensitive; "DGX B200", "8x B200", "GB300 NVL72")."""
    return _hardware_cached(str(name), str(path or HARDWARE_FILE))


@lru_cache(maxsize=4)
def _hardware_index(path: str) -> dict[str, tuple[str, int | None]]:
    return _hardware_keys(_hardware_rows(path))


@lru_cache(maxsize=512)
def _hardware_cached(name: str, path: str) -> Hardware:
    """One lookup per name (a claim card asks for the same few accelerators hundreds of times; the record is
    frozen)."""
    table = _hardware_rows(path)
    keys = _hardware_index(path)
    key = normalize_name(name)
    hit = keys.get(key)
    if hit is None:  # "8x B200", "NVIDIA H200", "DGX B200 (8x B200)", "Azure ND GB200 v6 (GB200 NVL72)"
        text = str(name)
        pieces = [re.sub(r"\(.*", "", text)] + re.findall(r"\(([^)]*)\)", text) + re.split(r"[,;(]| vs ", text)
        candidates = pieces + [p.split()[0] for p in pieces if p.split()]
        for cand in candidates:
            stripped = re.sub(r"^\d+x", "", normalize_name(cand))
            stripped = re.sub(r"^(nvidia|amd|intel|google|cerebras|dgx|hgx)+", "", stripped)
            hit = keys.get(stripped) or keys.get("hgx" + stripped)
            if hit:
                break
    if hit is None:
        known = ", ".join(sorted({_short(n) for n in table["name"]}))
        raise KeyError(f"unknown hardware {name!r}; known: {known}")
    table_name, rack = hit
    row = table.loc[table["name"] == table_name].iloc[0]
    rec = _hardware_record(row)
    if rack:
        rec = Hardware(**{**rec.__dict__, "rack_gpus": rack})
    return rec


# --- models ----------------------------------------------------------------------------------------

COMPONENTS = ("attention", "dense_ffn", "shared_experts", "routed_experts", "router", "lm_head", "other")


@dataclass(frozen=True)
class Model:
    """Architecture facts that set bytes and FLOPs per decode step (parameters in billions)."""

    name: str
    total_params_b: float
    active_params_b: float          # as the table states it (excludes the input embedding where it says so)
    n_layers: int
    hidden: int
    n_heads: int
    n_kv_heads: int                 # 1 for MLA / DeepSeek-V4 (one shared latent)
    head_dim: int
    vocab: int
    attention: str                  # "gqa", "mla", "dsa" (V3.2) or "dsv4" (V4 CSA/HCA)
    params_b: dict                  # weight components read per step (COMPONENTS; routed_experts = all experts)
    input_embedding_params_b: float
    n_experts: int = 0
    top_k: int = 0
    n_moe_layers: int = 0
    expert_params_b: float = 0.0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    window_layers: int = 0          # layers whose KV is capped at ``sliding_window``
    sliding_window: int = 0
    compress_ratios: tuple = ()     # DeepSeek-V4: per layer 0 (window only), 4 (CSA) or 128 (HCA)
    index_topk: int = 0
    index_head_dim: int = 0
    native_precision: str = "bf16"  # the shipped checkpoint, as a precision recipe
    mtp_layers: int = 0
    # Attention weights every rank of a tensor-parallel group holds whole: MLA's down-projections (``q_lora`` +
    # ``kv_lora`` + rope columns, plus the DSA indexer's key), one ReplicatedLinear per layer in SGLang's and vLLM's
    # DeepSeek attention; 0 where attention splits entirely by heads (GQA) or is not described here
    attention_replicated_params_b: float = 0.0
    max_context: int = 0
    source: str = ""
    notes: str = ""
    derived: dict = field(default_factory=dict)  # how components were obtained

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def always_read_params_b(self) -> float:
        return sum(v for k, v in self.params_b.items() if k != "routed_experts")


@lru_cache(maxsize=4)
def _model_rows(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def model_table(path: Path | None = None) -> pd.DataFrame:
    """The model table as shipped (text cells)."""
    return _model_rows(str(path or MODELS_FILE)).copy()


def _config_for(name: str, configs_dir: Path) -> dict:
    """The config.json copy whose file name matches the model name (``org--Name_config.json``)."""
    want = normalize_name(_short(name).replace("Instruct", ""))
    best = None
    for f in sorted(configs_dir.glob("*_config.json")):
        stem = normalize_name(f.name.split("--", 1)[-1].replace("_config.json", "").replace("Meta-", "")
                              .replace("Instruct", "").replace("-hf", ""))
        if stem == want or (stem.startswith(want) and re.fullmatch(r"v\d+", stem[len(want):])):
            best = f
    return json.loads(best.read_text()) if best else {}


# Precision the checkpoint ships in, as a recipe (see analysis.roofline.parse_precision); from models.csv notes.
_NATIVE = {
    "deepseekv3": "fp8,router=bf16,lm_head=bf16", "deepseekr1": "fp8,router=bf16,lm_head=bf16",
    "deepseekv32": "fp8,router=bf16,lm_head=bf16", "kimik2": "fp8,router=bf16,lm_head=bf16",
    "deepseekv4pro": "fp8,experts=fp4,router=bf16,lm_head=bf16",
    "deepseekv4flash": "fp8,experts=fp4,router=bf16,lm_head=bf16",
    "gptoss120b": "bf16,experts=mxfp4", "gptoss20b": "bf16,experts=mxfp4",
}


def _attention_params(cfg: dict, hidden: int, n_heads: int, n_kv: int, head_dim: int) -> float:
    """Attention weights of one layer from the config (MLA with its low-rank projections, else GQA)."""
    if cfg.get("kv_lora_rank"):
        q_lora, kv_lora = cfg.get("q_lora_rank") or 0, cfg["kv_lora_rank"]
        rope, nope, v = cfg.get("qk_rope_head_dim", 64), cfg.get("qk_nope_head_dim", 128), cfg.get("v_head_dim", 128)
        q = hidden * q_lora + q_lora * n_heads * (nope + rope) if q_lora else hidden * n_heads * (nope + rope)
        return q + hidden * (kv_lora + rope) + kv_lora * n_heads * (nope + v) + n_heads * v * hidden
    return hidden * (n_heads + 2 * n_kv) * head_dim + n_heads * head_dim * hidden


def _replicated_attention_params(cfg: dict, hidden: int) -> float:
    """Attention weights of one layer that tensor parallelism replicates: MLA's fused down-projection from the hidden
    state to the query latent, the KV latent and the rope key (and a DSA indexer's key)."""
    if not (cfg.get("kv_lora_rank") and cfg.get("q_lora_rank")):
        return 0.0
    cols = cfg["q_lora_rank"] + cfg["kv_lora_rank"] + cfg.get("qk_rope_head_dim", 64) + \
        (cfg.get("index_head_dim") or 0)
    return float(hidden * cols)


def _model_record(row: pd.Series, configs_dir: Path) -> Model:
    name = row["name"]
    key = normalize_name(_short(name))
    cfg = _config_for(name, configs_dir)
    num = lambda col: peak(row[col])  # noqa: E731 - a local shorthand for the table's text cells
    total, active = num("total_params_b"), num("active_params_b")
    n_layers, hidden = int(num("layers")), int(num("hidden"))
    n_heads = int(num("n_heads"))
    vocab = int(num("vocab"))
    attn_type = row["attention_type"].lower()
    if "deepseekv4" in key or cfg.get("compress_ratios"):
        attention = "dsv4"
    elif "dsa" in attn_type:
        attention = "dsa"
    elif "mla" in attn_type or cfg.get("kv_lora_rank"):
        attention = "mla"
    else:
        attention = "gqa"
    n_kv = 1 if attention in ("mla", "dsa", "dsv4") else int(num("n_kv_heads"))
    head_dim = cfg.get("head_dim") or (cfg.get("qk_nope_head_dim", 0) + cfg.get("qk_rope_head_dim", 0))
    head_dim = int(head_dim or (num("head_dim") if not math.isnan(num("head_dim")) else hidden // n_heads))
    embed = vocab * hidden / 1e9
    lm_head = vocab * hidden / 1e9  # read once per step even when tied to the embedding
    derived: dict[str, str] = {}

    n_experts = int(num("moe_experts")) if not math.isnan(num("moe_experts")) else 0
    top_k = int(num("moe_topk")) if n_experts else 0
    shared = int(num("shared_experts")) if n_experts and not math.isnan(num("shared_experts")) else 0
    expert_b = num("expert_params_m") / 1e3 if n_experts else 0.0
    dense_layers = int(cfg.get("first_k_dense_replace", 0)) if n_experts else n_layers
    n_moe = n_layers - dense_layers if n_experts else 0
    inter = cfg.get("intermediate_size", 0)

    params: dict[str, float] = {c: 0.0 for c in COMPONENTS}
    params["lm_head"] = lm_head
    if attention != "dsv4":
        kv_heads = n_kv if math.isnan(num("n_kv_heads")) else int(num("n_kv_heads"))
        params["attention"] = n_layers * _attention_params(cfg or {}, hidden, n_heads, kv_heads, head_dim) / 1e9
        derived["attention"] = "computed from config.json" if cfg else "computed from the table's head counts"
    if n_experts:
        params["routed_experts"] = n_moe * n_experts * expert_b
        params["shared_experts"] = n_moe * shared * expert_b
        params["router"] = n_moe * n_experts * hidden / 1e9
        params["dense_ffn"] = dense_layers * 3 * hidden * inter / 1e9
        always = num("always_read_params_b")
        if math.isnan(always):
            # DeepSeek-V4 rows have no value. The active count ("13B", "49B") has a smaller absolute rounding
            # error than the total ("284B", "1.6T"), so derive from it: active minus the k routed experts per layer
            # (active read as excluding the input embedding, as the V3 row states). Flash: 6.5B, between the
            # total-based 6.4B and a config-based estimate of ~6.7B.
            always = active - n_moe * top_k * expert_b
            derived["always_read"] = "active - k routed experts per MoE layer (models.csv has no value)"
        if attention == "dsv4":
            params["attention"] = always - params["shared_experts"] - params["router"] - params["lm_head"]
            derived["attention"] = "always-read minus shared experts, router, lm_head (incl. indexer, compressor)"
        params["other"] = always - sum(params[c] for c in ("attention", "dense_ffn", "shared_experts", "router",
                                                           "lm_head"))
    else:
        params["dense_ffn"] = n_layers * 3 * hidden * inter / 1e9
        params["other"] = total - embed - sum(params[c] for c in ("attention", "dense_ffn", "lm_head"))
    if abs(params["other"]) < 0.02 * total or params["other"] > 0:
        params["other"] = max(params["other"], 0.0)
    else:  # the recomputed parts exceed the table total: keep the table's total by scaling nothing, say so
        derived["other"] = f"recomputed parts exceed the table by {-params['other']:.2f}B"
        params["other"] = 0.0

    layer_types = cfg.get("layer_types") or []
    window = int(cfg.get("sliding_window") or 0)
    window_layers = sum(t == "sliding_attention" for t in layer_types) if window else 0
    ratios = tuple(int(r) for r in (cfg.get("compress_ratios") or [])[:n_layers])
    return Model(
        name=name, total_params_b=total, active_params_b=active, n_layers=n_layers, hidden=hidden,
        n_heads=n_heads, n_kv_heads=n_kv, head_dim=head_dim, vocab=vocab, attention=attention, params_b=params,
        input_embedding_params_b=embed, n_experts=n_experts, top_k=top_k, n_moe_layers=n_moe,
        expert_params_b=expert_b, kv_lora_rank=int(cfg.get("kv_lora_rank") or 0),
        qk_rope_head_dim=int(cfg.get("qk_rope_head_dim") or 0), window_layers=window_layers,
        sliding_window=window, compress_ratios=ratios, index_topk=int(cfg.get("index_topk") or 0),
        index_head_dim=int(cfg.get("index_head_dim") or 0), native_precision=_NATIVE.get(key, "bf16"),
        mtp_layers=int(cfg.get("num_nextn_predict_layers") or 0),
        attention_replicated_params_b=(n_layers * _replicated_attention_params(cfg, hidden) / 1e9
                                       if attention in ("mla", "dsa") else 0.0),
        max_context=int(num("max_position_embeddings")),
        source=row["source"], notes=row["notes"], derived=derived,
    )


# Names seen in logs and claims that are not spelled like the table (and what they stand for).
MODEL_ALIASES = {
    # DeepSeek V4.1 Flash (claim C00) has no config copy; it is taken to share V4 Flash's architecture.
    "deepseekv41flash": "DeepSeek-V4-Flash",
    "deepseekv41pro": "DeepSeek-V4-Pro",
    "llama4maverick": None,  # no config collected (ROOFLINE.md section 7)
}
# Tokens dropped before matching: checkpoint dates, precision tags, shard and packaging words.
_IGNORABLE = re.compile(r"^(\d{4}|fp4|fp8|bf16|nvfp4|mxfp4|int4|w4a16|instruct|chat|base|hf|meta|shard|tp\d+|"
                        r"ep\d+|thinking|preview|exp)$")
_SIZE = re.compile(r"^\d+(\.\d+)?[bt]$")


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9.]+", str(text).lower()) if t]


def match_model_name(name: str, *, path: Path | None = None) -> str | None:
    """The table name a model name stands for, or None (case/punctuation-insensitive, dates and tags dropped)."""
    return _match_model_cached(str(name), str(path or MODELS_FILE))


@lru_cache(maxsize=4)
def _model_keys(path: str) -> dict[str, str]:
    by_key: dict[str, str] = {}
    for n in _model_rows(path)["name"]:
        by_key.setdefault(normalize_name(n), n)
        by_key.setdefault(normalize_name(_short(n)), n)
    return by_key


@lru_cache(maxsize=1024)
def _match_model_cached(name: str, path: str) -> str | None:
    table, by_key = _model_rows(path), _model_keys(path)
    key = normalize_name(name)
    if key in by_key:
        return by_key[key]
    if key in MODEL_ALIASES:
        return MODEL_ALIASES[key]
    kept = [t for t in _tokens(re.sub(r"\(.*?\)", "", str(name))) if not _IGNORABLE.match(t)]
    key = normalize_name("".join(kept))
    if key in by_key:
        return by_key[key]
    if key in MODEL_ALIASES:
        return MODEL_ALIASES[key]
    # Last try: without parameter-size tokens ("DeepSeek-R1 671B"), accepted only when one model is left.
    bare = normalize_name("".join(t for t in kept if not _SIZE.match(t)))
    hits = {n for n in table["name"] if normalize_name("".join(
        t for t in _tokens(_short(n)) if not _SIZE.match(t))) == bare}
    return hits.pop() if len(hits) == 1 else None


def model(name: str, *, path: Path | None = None, configs_dir: Path | None = None) -> Model:
    """The record for a model name; ``KeyError`` listing the known names when nothing matches."""
    return _model_cached(str(name), path, configs_dir)


@lru_cache(maxsize=512)
def _model_cached(name: str, path: Path | None, configs_dir: Path | None) -> Model:
    """One lookup per name (a claim card asks for the same few models a hundred times; the record is frozen)."""
    table = model_table(path)
    table_name = match_model_name(name, path=path)
    if table_name is None:
        known = ", ".join(_short(n) for n in table["name"])
        raise KeyError(f"unknown model {name!r}; known: {known}")
    row = table.loc[table["name"] == table_name].iloc[0]
    return _model_record(row, Path(configs_dir or CONFIGS_DIR))


def known_names(*, hardware_path: Path | None = None, models_path: Path | None = None) -> dict[str, list[str]]:
    """The model and hardware names (short form) the tables hold."""
    hw = hardware_table(hardware_path)
    return {
        "models": [_short(n) for n in model_table(models_path)["name"]],
        "hardware": [_short(n) for n in hw["name"]],
    }
