"""Calibrating the step-time model's efficiency parameters on measured points, with bootstrap intervals.

Each usable point (``analysis.scaling.inputs.prepare``: batch, step time) whose model and hardware the spec tables
know becomes one training row: its deployment, τ and verify tokens, the physical terms at its measured decode batch
per worker, and its measured time per output token. Parameters are fitted in two stages, by least squares on
``log(predicted / measured)`` with every configuration group weighted equally: first one set for all rows (with the
τ of speculative decoding where the table has no acceptance length, and ``bw_share`` held at the measured streaming
share, :func:`streaming_share`), then one set per family and per hardware family × framework cell (a cell's with
each group's squared error softened past :data:`GROUP_LOSS_SCALE`, :func:`_group_loss`), each pulled
towards the level above by a prior (:data:`PRIOR_SCALE`: all but the per-layer fixed cost and the unfused-quantisation
cost), within :data:`analysis.perfmodel.step.BOUNDS`.
The decode duty (the share of a serving run's time its requests spend decoding, which turns tok/s/user into
tok/s/GPU) is the median of each cell's measured points whose source states ISL and OSL. The bootstrap resamples
configuration groups.

The parameters are fitted on each configuration's newest measurement, and only where its source states the
conditions the model prices (:func:`conditions_stated`: a serving point's ISL, OSL and TP) and its recorded layout
accounts for its GPUs (:func:`layout_consistent`); the others are predicted and scored by the validation but fit
nothing. Its dated re-runs (InferenceX history, flag ``dated-history``) enter only as software drift
(:func:`drift_table`): how much slower or faster the same configuration ran on another date, measured, with no model
in between. A point measured on a date on which the cell's software ran slower or faster is predicted with the median
drift its cell's configurations showed on that date at its concurrency (:meth:`Calibration.date_factor`,
:func:`drift_curves`), and each newest point
calibrates at its cell's newest software, its time divided by that same factor (:func:`at_newest_software`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from analysis import physics, schema, specs
from analysis.perfmodel import recipes, words
from analysis.perfmodel import step as st
from analysis.scaling.inputs import DEFAULT_BY, prepare

PARAMS = ("bw_share", "flop_share", "overhead_ms_per_layer", "overlap", "comm_scale", "unfused_quant", "expert_bw")
NP = len(PARAMS)  # x[NP] is τ, x[NP + 1] the routing concentration
TAU_BOUNDS = (1.0, 4.0)
ROUTING_BOUNDS = (0.05, 1.0)
# The prior pulls a cell towards the level above in log units (shares, comm scale: a factor e per unit) and overlap in
# its own units. Two parameters have none (None), so a cell takes them from its own rows alone:
# - the unfused-quantisation cost: only rows flagged quant-unfused carry information on it;
# - the per-layer fixed cost: it counts the kernels a layer of that engine runs for those models, and the levels above
#   pool other engines and models. On the H200 sweep the batch-1 step less its weight bytes at the measured copy
#   bandwidth is about 77 µs per dense layer under CUDA graphs (the cell's fit: 0.072 ms; an MoE layer counts two,
#   step.MOE_LAYER_FIXED) and 0.5 ms and more per layer launched from Python (host time); the DeepSeek serving cells
#   fit 0.036-0.139 ms per layer so counted.
PRIOR_SCALE = {"bw_share": 1.0, "flop_share": 1.0, "overhead_ms_per_layer": None, "overlap": 1.0, "comm_scale": 1.0,
               "unfused_quant": None, "expert_bw": 1.0}
_LOG_OFFSET = {"bw_share": 0.0, "flop_share": 0.0, "overhead_ms_per_layer": 0.005, "overlap": None, "comm_scale": 0.05,
               "unfused_quant": None, "expert_bw": 0.0}


def _prior_units(x) -> np.ndarray:
    return np.array([x[i] if _LOG_OFFSET[p] is None else math.log(x[i] + _LOG_OFFSET[p])
                     for i, p in enumerate(PARAMS)])  # a parameter without a prior (PRIOR_SCALE None) is not read
START = st.Efficiency(bw_share=0.6, flop_share=0.4, overhead_ms_per_layer=0.05, overlap=1.0, comm_scale=1.0,
                      unfused_quant=0.5, expert_bw=0.8)
MIN_CONCURRENCIES = 3


def _num(v, default=math.nan) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return f if f == f else default


# Benchmarks whose requests draw their lengths at random, and the range: InferenceX's serving client (its fork of
# vLLM's benchmark_serving.py, sample_random_requests) draws each prompt and output length uniformly on
# [int(L·ratio), L], with RANDOM_RANGE_RATIO 0.8 set by its workflow templates (.github/workflows/benchmark-tmpl.yml and
# benchmark-multinode-tmpl.yml), so its requests average 0.9 of the nominal ISL and OSL. The shipped runs say the same:
# output tokens per request, (E2E − TTFT) / TPOT + 1, come to 0.900 of the OSL (median of 438 runs, 0.875-0.919;
# tests/test_perfmodel.py; the source lines: tests/data/published/inferencex-range-ratio.source.md). Keyed by the
# points table's format, the reader that read the row: the records of that client (InferenceX's API and its history,
# its agg_*.json files). InferenceX's token-position tables (inferencex-trimmed) ran fixed lengths (GLM-5 FP8
# at ISL 10,240 / OSL 128, concurrency 16: 1,638,400 prompt and 20,480 output tokens over 160 requests), and a runner
# log records its own client's settings. A row of
# such a format with stated ISL and OSL is priced at those lengths' mean context.
INFERENCEX_RANGE_RATIO = 0.8
INFERENCEX_CLIENT_FORMATS = recipes.INFERENCEX_CLIENT_FORMATS  # rows of that client
LENGTH_RANGE_RATIO = dict.fromkeys(INFERENCEX_CLIENT_FORMATS, INFERENCEX_RANGE_RATIO)


def range_ratio(row: dict) -> float:
    """The random range ratio of the row's benchmark client (:data:`LENGTH_RANGE_RATIO`, by the row's ``format``);
    1 (fixed lengths) otherwise and for a row without stated ISL and OSL (an agentic trace has no nominal length to
    draw around)."""
    if _num(row.get("isl")) != _num(row.get("isl")) or _num(row.get("osl")) != _num(row.get("osl")):
        return 1.0
    return LENGTH_RANGE_RATIO.get(str(row.get("format") or ""), 1.0)


def kv_dtype(row: dict) -> str:
    """The row's KV-cache dtype: its own ``kv_dtype`` where the source gave one, else, for a row of InferenceX's
    client (:data:`INFERENCEX_CLIENT_FORMATS`), the one its recipe set on that date
    (:func:`analysis.perfmodel.recipes.served_kv_dtype`: the scripts and recipe files, read); "" otherwise (the
    precision recipe's assumption applies)."""
    own = _text(row.get("kv_dtype"))
    if own and own != "unknown":
        return own
    if str(row.get("format") or "") not in INFERENCEX_CLIENT_FORMATS:
        return ""
    found = recipes.served_kv_dtype(str(row.get("model")), str(row.get("hardware")), str(row.get("framework")),
                                    str(row.get("precision") or ""), _day(row.get("date")))
    return found[0] if found else ""


def draft_tokens(row: dict) -> float:
    """The tokens the row's speculative decoding drafted per step: its own ``draft_tokens`` where the source gave
    them, else, for an MTP row of InferenceX's client (:data:`INFERENCEX_CLIENT_FORMATS`), the count its launch script
    or recipe set on that date (:func:`analysis.perfmodel.recipes.served_draft_tokens`; attention data-parallel when
    the row's DP is above 1, as the InferenceX reader records it); NaN otherwise (the step model's labelled
    assumption applies)."""
    own = _num(row.get("draft_tokens"))
    return own if own == own else recipes.row_draft_tokens(row)


def deployment(row: dict) -> st.Deployment:
    """A :class:`~analysis.perfmodel.step.Deployment` from a points row (its own column names)."""
    flags = str(row.get("flags") or "")
    n = _num(row.get("n_gpus"), 1.0)
    return st.Deployment(
        model=str(row["model"]), hardware=str(row["hardware"]), n_gpus=int(n), tp=int(_num(row.get("tp"), 0)),
        ep=int(_num(row.get("ep"), 1)), dp=int(_num(row.get("dp"), 1)), precision=str(row.get("precision") or "native"),
        spec_method=str(row.get("spec_method") or "none"), acceptance_length=_num(row.get("acceptance_length")),
        draft_tokens=draft_tokens(row), isl=_num(row.get("isl"), 1024.0), osl=_num(row.get("osl"), 1024.0),
        context_len=_num(row.get("context_len")), framework=str(row.get("framework") or "unknown"),
        disagg=bool(row.get("disagg") is True), n_prefill_gpus=_num(row.get("n_prefill_gpus")),
        n_decode_gpus=_num(row.get("n_decode_gpus")), n_workers=_num(row.get("n_workers")),
        kv_dtype=kv_dtype(row), date=_text(row.get("date")),
        comm_timed="shard-measured" not in flags.split(";"), quant_unfused="quant-unfused" in flags.split(";"),
        uniform_routing="random-weights" in flags.split(";"), range_ratio=range_ratio(row))


def _text(v) -> str:
    s = "" if v is None else str(v)
    return "" if s in ("nan", "None", "NaT", "<NA>") else s


def _day(v) -> str:
    """A date's day (YYYY-MM-DD; a time of day dropped): software drift is measured and applied per day."""
    return _text(v)[:10]


def known(model, hardware) -> bool:
    try:
        specs.model(str(model))
        specs.hardware(str(hardware))
    except KeyError:
        return False
    return True


HISTORY_FLAG = "dated-history"


def with_history(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` with a ``history`` column: the dated re-runs (flag ``dated-history``, the same configurations
    measured on earlier dates) made usable, unless another flag distrusts them."""
    if "flags" not in points.columns:
        return points.assign(history=False)
    hist = schema.has_flag(points, HISTORY_FLAG)
    h = points[hist].copy()
    h["flags"] = [";".join(f for f in str(v).split(";") if f and f != HISTORY_FLAG) for v in h["flags"]]
    return pd.concat([points[~hist].assign(history=False), h[schema.trusted(h)].assign(history=True)],
                     ignore_index=True)


def newest(train: pd.DataFrame) -> pd.Series:
    """Mask of the rows the parameters are fitted on: each configuration's newest points, not its re-runs."""
    if "history" not in train.columns:
        return pd.Series(True, index=train.index)
    return ~train["history"].astype(bool)


STATED = ("isl", "osl", "tp")  # the conditions a serving point's source must state for the point to calibrate


def conditions_stated(train: pd.DataFrame) -> pd.Series:
    """Mask of the rows whose source states what the model needs to price them: a serving point its ISL, OSL and
    TP (a step-timing sweep times one step at a known batch and context, and needs none of them). A point without
    them is predicted at the defaults (ISL and OSL 1,024, TP across its GPUs); calibrating on it would fit the
    efficiency parameters to those defaults, as a point whose conditions come from another file (flag
    conditions-assumed) would fit them to that file. Such points are still predicted and scored by the validation."""
    stated = pd.Series(True, index=train.index)
    for c in STATED:
        if c in train.columns:
            stated &= pd.to_numeric(train[c], errors="coerce").notna()
        else:
            stated &= False
    return stated | ~train["serving"].astype(bool)


def layout_consistent(train: pd.DataFrame) -> pd.Series:
    """Mask of the rows whose recorded layout accounts for their decode GPUs: workers × GPUs per worker (TP, EP and
    attention DP as recorded, widened to hold the weights) equals the decode GPUs, in whole workers (12 GPUs of TP8
    workers are no layout). InferenceX records some GB200 Dynamo-SGLang runs of December 2025 as TP1/EP1/DP1 (the raw
    record marks attention data-parallel on) with one decode worker on 32 or 48 decode GPUs: the model would price one
    4-GPU worker holding every sequence, and steps 2.3-14× slower than measured would weigh more in the fit than all
    the consistent groups together. Such points are predicted as recorded but calibrate nothing."""
    if "decode_gpus" not in train.columns:
        return pd.Series(True, index=train.index)
    workers = train["workers"].astype(float)
    whole = (workers - workers.round()).abs() < 1e-6
    return whole & ((workers * train["worker_gpus"] - train["decode_gpus"]).abs() < 0.5)


def left_out_of_fit(train: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Masks of the newest rows that calibrate nothing, by reason: (conditions not stated, stated but a layout that
    cannot hold their GPUs)."""
    unstated = newest(train) & ~conditions_stated(train)
    return unstated, newest(train) & ~unstated & ~layout_consistent(train)


def calibrating(train: pd.DataFrame) -> pd.Series:
    """Mask of the rows the efficiency parameters are fitted on: newest points (:func:`newest`) whose conditions
    are stated (:func:`conditions_stated`) and whose layout accounts for their GPUs (:func:`layout_consistent`)."""
    return newest(train) & conditions_stated(train) & layout_consistent(train)


def training_table(points: pd.DataFrame, *, by: list[str] | None = None) -> pd.DataFrame:
    """One row per usable point with its group, cell, τ/verify source and the terms at its measured batch. The dated
    re-runs come too, marked ``history`` (a re-run that repeats a newest point, same group, date and concurrency, is
    dropped): :func:`calibrate` reads them for the software drift only (which also puts each newest point at its
    cell's newest software, :func:`at_newest_software`)."""
    p = prepare(with_history(points))
    by = [c for c in (by or DEFAULT_BY) if c in p.columns]
    # a point whose precision is not known has no bytes to charge (a published row that does not say), and one whose
    # deployment was read from elsewhere (flag conditions-assumed: GPU count, parallelism or speculation not in its
    # own source) would calibrate the model on an assumption
    ok = [known(m, h) and str(prec) not in ("unknown", "nan", "") and "conditions-assumed" not in str(flags)
          for m, h, prec, flags in zip(p["model"], p["hardware"], p["precision"], p["flags"])]
    p = p.loc[ok].copy()
    if p.empty:
        return p
    keys = p[by].astype(object).where(p[by].notna(), None)
    p["group_id"] = [st.group_id(dict(zip(by, vals))) for vals in keys.itertuples(index=False, name=None)]
    hist = p["history"].astype(bool)
    key = p["group_id"] + "|" + p["date"].astype(str) + "|" + p["concurrency"].astype(str)
    p = p[~(hist & key.isin(set(key[~hist])))]
    rows = []
    for rec in p.to_dict(orient="records"):
        dep = deployment(rec)
        spec = st.speculates(dep.spec_method)
        measured_tau = dep.acceptance_length == dep.acceptance_length
        _, verify, _ = st.speculation(dep, assumed_tau=2.0)
        geo = st.geometry(dep, verify=verify)
        par = st.parallelism(dep)
        batch_w = float(rec["batch"]) / par.workers
        serving = rec.get("step_source") == "tpot"
        prefill = st.prefill_tokens_per_seq(_num(rec.get("isl")), _num(rec.get("osl")), _num(rec.get("tau"), 1.0),
                                            serving=serving, disagg=bool(dep.disagg))
        t = st.terms(geo, batch_w, prefill_per_seq=prefill)
        conc = _num(rec.get("concurrency"), float(rec["batch"]))
        tps_gpu = _num(rec.get("tok_s_per_gpu"))
        duty = tps_gpu * dep.n_gpus / (conc * _num(rec.get("tok_s_per_user"))) if serving else 1.0
        rows.append({
            "memory_ms": float(t["memory_ms"][0]), "compute_ms": float(t["compute_ms"][0]),
            "prefill_ms": float(t["prefill_compute_ms"][0]),
            "prompt_prefill_ms": (dep.mean_isl if _num(rec.get("isl")) == _num(rec.get("isl")) else math.nan)
            * geo.prefill_ms_per_token,
            "ttft_ms": _num(rec.get("ttft_ms_p50"), _num(rec.get("ttft_ms_mean"))),
            "mem_fixed_ms": float(st.memory_ms(geo, 0.0)[0]),
            "mem_expert_ms": geo.expert_bytes / (geo.bandwidth_tb_s * 1e12) * 1e3,
            "mem_per_seq_ms": (geo.kv_bytes_per_seq + geo.verify * geo.bytes_per_token)
            / (geo.bandwidth_tb_s * 1e12) * 1e3, "tokens": batch_w * verify, "n_experts": geo.n_experts,
            "top_k": geo.top_k,
            "kv_per_seq_ms": geo.kv_bytes_per_seq / (geo.bandwidth_tb_s * 1e12) * 1e3,
            "attention_ms": float(t["attention_ms"][0]), "host_bound": float(st.host_bound(dep)),
            "collectives_ms": float(t["collectives_ms"][0]), "layers": geo.fixed_layers,
            "batch_per_worker": batch_w,
            "workers": par.workers, "decode_gpus": dep.decode_gpus,
            "worker_gpus": par.worker_gpus, "parallelism_note": par.note, "family": specs.hardware(dep.hardware).family,
            "spec": spec, "tau_measured": dep.acceptance_length if measured_tau else math.nan,
            "verify": verify, "unfused": float(dep.quant_unfused), "uniform": float(dep.uniform_routing),
            "serving": serving, "duty": duty, "concurrency_nominal": conc,
            "measured_ms_per_token": float(rec["step_ms"]) / float(rec.get("tau") or 1.0),
        })
    out = pd.concat([p.reset_index(drop=True), pd.DataFrame(rows)], axis=1)
    out["cell"] = out["family"] + " · " + out["framework"].astype(str)
    return out[out["measured_ms_per_token"] > 0].reset_index(drop=True)


# --- fitting ----------------------------------------------------------------------------------------

def _eff(x) -> st.Efficiency:
    return st.Efficiency(*[float(v) for v in x[:NP]])


_ARRAY_COLUMNS = ("spec", "tau_measured", "n_experts", "top_k", "tokens", "mem_fixed_ms", "mem_expert_ms",
                  "mem_per_seq_ms", "verify", "unfused", "uniform", "compute_ms", "prefill_ms", "prefill_share",
                  "collectives_ms", "layers", "measured_ms_per_token", "kv_per_seq_ms", "attention_ms", "host_bound")


class _Arrays(dict):
    """The training columns a residual reads, as numpy arrays (a DataFrame column read costs more than the math),
    plus each row's group code."""

    @classmethod
    def of(cls, rows: pd.DataFrame) -> _Arrays:
        a = cls({c: rows[c].to_numpy() for c in _ARRAY_COLUMNS})
        a["group"] = pd.factorize(rows["group_id"])[0]
        return a


def _tau(rows, tau_spec: float) -> np.ndarray:
    """Each row's τ: its measured acceptance, else, for a speculative row, the assumed ``tau_spec`` (τ at
    :data:`analysis.perfmodel.step.DEFAULT_DRAFT_TOKENS` drafts) at the row's own drafts
    (:func:`analysis.perfmodel.step.tau_at_drafts`: the same per-draft acceptance, so never more than the tokens a
    step verifies)."""
    drafts = np.maximum(rows["verify"].astype(float) - 1.0, 0.0)
    tau = np.where(rows["spec"].astype(bool), st.tau_at_drafts(tau_spec, drafts), 1.0)
    measured = rows["tau_measured"].astype(float)
    return np.where(measured == measured, measured, tau)


def _memory(rows, routing: float) -> tuple[np.ndarray, np.ndarray]:
    """The rows' HBM time at ``routing`` (step.memory_ms from the stored pieces, vectorised over rows) and the
    routed experts' part of it."""
    e, k, t = rows["n_experts"].astype(float), rows["top_k"].astype(float), rows["tokens"].astype(float)
    rho = np.where(rows["uniform"].astype(float) > 0, 1.0, routing)  # random weights route uniformly
    touched = np.where(e > 0, np.maximum(physics.expert_coverage(t * rho, np.where(e > 0, e, 1.0), k), k), 0.0)
    fixed = rows["mem_fixed_ms"] - np.where(e > 0, np.minimum(k, e), 0.0) * rows["mem_expert_ms"]
    experts = touched * rows["mem_expert_ms"]
    return fixed + experts + rows["mem_per_seq_ms"] * t / np.maximum(rows["verify"].astype(float), 1.0), experts


TAU_PRIOR_SCALE = 0.3  # log units: a cell's τ within about ±35% of its family's unless its data say otherwise


# A cell's fit counts each configuration group by its error, not its error squared, past this root-mean-square log
# error (a soft-L1 loss on the group's mean squared log error, :func:`_group_loss`): a cell holds two to eight groups,
# and one the model cannot fit for want of an input no source states (the H200 SGLang 1K/1K MTP group's acceptance,
# 1.2x its cell's cost per step) would otherwise set the cell's efficiency for the others. 0.1 is the error a group
# within the validation's per-user target shows. Chosen on the validation (`perfclaims model --validate`, held-out
# median per user; the other scales were one-off runs of a patched copy): 11.7% with plain least squares, 9.5% / 9.2% /
# 9.9% / 10.3% / 10.8% at 0.05 / 0.1 / 0.2 / 0.3 / 0.5. At the family level too it gave 9.5-9.9%, but the dense H200
# sweeps, a few groups among many there, were then followed less (3-5% -> 10-14%); at the pooled level too, 11.1-11.5%:
# the levels above keep least squares. README, "What the fit rests on", step 12.
GROUP_LOSS_SCALE = 0.1


def _group_loss(lr: np.ndarray, weights: np.ndarray, groups: np.ndarray, scale: float) -> np.ndarray:
    """``lr`` (log predicted ÷ measured per row) rescaled per group so that the weighted sum of squares of a group's
    rows is the soft-L1 loss ρ(s) = 2c²(√(1 + s/c²) − 1) of its own sum s (its mean squared log error, the weights
    being 1/√points), c = ``scale``: least squares for a group within c, about 2c(√s − c) beyond."""
    s = np.bincount(groups, weights=(weights * lr) ** 2)
    rho = 2.0 * scale ** 2 * (np.sqrt(1.0 + s / scale ** 2) - 1.0)
    f = np.sqrt(np.divide(rho, s, out=np.ones_like(s), where=s > 0))
    return lr * f[groups]


def _residuals(x, rows, weights, tau_spec=None, prior=None, routing=None, group_loss=None):
    eff = _eff(x)
    tau = _tau(rows, x[NP] if tau_spec is None else tau_spec)
    rho = x[NP + 1] if routing is None else routing
    memory, experts = _memory(rows, rho)
    pred = st.step_time(memory, rows["compute_ms"], rows["collectives_ms"], eff,
                        rows["layers"], rows["prefill_ms"], rows["unfused"], rows["prefill_share"],
                        kv_ms=rows["kv_per_seq_ms"] * rows["tokens"] / np.maximum(rows["verify"].astype(float), 1.0),
                        attention_ms=rows["attention_ms"], host_bound=rows["host_bound"],
                        expert_ms=experts)["step_ms"] / tau
    lr = np.log(pred / rows["measured_ms_per_token"])
    if group_loss:
        lr = _group_loss(lr, weights, rows["group"], group_loss)
    r = weights * lr
    if prior is not None:
        d = _prior_units(x) - _prior_units(prior)
        r = np.concatenate([r, [d[i] / PRIOR_SCALE[p] for i, p in enumerate(PARAMS) if PRIOR_SCALE[p]]])
        if tau_spec is None:
            r = np.concatenate([r, [math.log(x[NP] / prior[NP]) / TAU_PRIOR_SCALE]])
    return r


def _weights(rows) -> np.ndarray:
    """1/√(points of the row's group): every configuration group weighs the same."""
    counts = np.bincount(rows["group"])
    return 1.0 / np.sqrt(counts[rows["group"]].astype(float))


def _bounds(with_tau: bool):
    lo = [st.BOUNDS[p][0] for p in PARAMS] + ([TAU_BOUNDS[0], ROUTING_BOUNDS[0]] if with_tau else [])
    hi = [st.BOUNDS[p][1] for p in PARAMS] + ([TAU_BOUNDS[1], ROUTING_BOUNDS[1]] if with_tau else [])
    return lo, hi


def _clip(x, with_tau):
    lo, hi = _bounds(with_tau)
    return np.clip(np.asarray(x, float), np.asarray(lo) + 1e-9, np.asarray(hi) - 1e-9)


def _level(table: dict, family: str, framework: str) -> tuple | None:
    """(value, key) of the most specific level ``table`` holds: the cell, the family, then ``all``; None if none."""
    for k in (f"{family} · {framework}", family, "all"):
        if k in table:
            return table[k], k
    return None


def _prefill_share(shares: dict, family: str, framework: str, precision: str = "") -> tuple[float, str]:
    """The measured prefill share of :func:`prefill_shares` at the most specific level, and which level: the pairs
    of the configuration's precision at its cell, then the cell's, the family's and all pairs';
    :data:`analysis.perfmodel.step.PREFILL_MFU` (an assumption) and ``""`` where nothing was measured. Within a cell
    the shipped pairs differ by precision: SGLang's DeepSeek-R1 prefill ran at 0.27 (FP4) against 0.10 (FP8) of the
    datasheet rate on B300 and 0.32 against 0.09 on B200 (tests/test_perfmodel.py). Across cells the precision's
    pairs are not taken before the cell's own: they would price the prefill GPUs of the GB300 disaggregated runs,
    which no aggregated pair measured, at all FP4 pairs' 0.18 instead of all pairs' 0.13, and predict 45% instead of
    28% above their measured tok/s/GPU (left out in turn)."""
    key = f"{family} · {framework} · {_text(precision).lower()}"
    if _text(precision) and key in shares:
        return float(shares[key][0]), key
    found = _level(shares, family, framework)
    return (st.PREFILL_MFU, "") if found is None else (float(found[0][0]), found[1])


@dataclass
class Calibration:
    """Fitted parameters: global, per family, per family × framework cell, the τ for speculation without an
    acceptance length, the decode duty per level, and what each was fitted on."""

    global_: st.Efficiency
    tau_spec: float
    routing: float = 1.0
    taus: dict = field(default_factory=dict)         # level key -> τ of speculation without an acceptance length
    families: dict = field(default_factory=dict)     # family -> Efficiency
    cells: dict = field(default_factory=dict)        # "family · framework" -> Efficiency
    duty: dict = field(default_factory=dict)         # level key -> median decode duty
    drift: dict = field(default_factory=dict)        # cell -> group -> date -> measured log step-time drift
    drift_curves: dict = field(default_factory=dict)  # cell -> group -> date -> [[concurrency, log drift], ...]
    prefill: dict = field(default_factory=dict)      # level key -> [measured prefill share, pairs it rests on]
    rows: dict = field(default_factory=dict)         # level key -> training rows
    groups: int = 0

    def efficiency(self, family: str, framework: str) -> tuple[st.Efficiency, str]:
        cell = f"{family} · {framework}"
        if cell in self.cells:
            return self.cells[cell], cell
        if family in self.families:
            return self.families[family], words.ANY_FRAMEWORK.format(family=family)
        return self.global_, words.ALL_HARDWARE

    def tau_for(self, family: str, framework: str) -> float:
        """The calibrated τ for speculation without a measured acceptance length at the cell, family or all."""
        found = _level(self.taus, family, framework)
        return self.tau_spec if found is None else float(found[0])

    def date_factor(self, family: str, framework: str, date: str, concurrency: float | None = None
                    ) -> tuple[float, int, str]:
        """The step-time factor of the software the cell ran on ``date`` against its newest software
        (:func:`software_factor` over this calibration's measured drift), at ``concurrency`` where given."""
        return software_factor(self.drift, family, framework, date, concurrency, self.drift_curves)

    def prefill_share(self, family: str, framework: str, precision: str = "") -> tuple[float, str]:
        """The prefill share of the datasheet FLOP rate measured at the cell, family or all (:func:`prefill_shares`),
        and which; :data:`analysis.perfmodel.step.PREFILL_MFU` (an assumption) where nothing was measured."""
        return _prefill_share(self.prefill, family, framework, precision)

    def decode_duty(self, family: str, framework: str) -> float:
        found = _level(self.duty, family, framework)
        return 1.0 if found is None else float(found[0])

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        """The inverse of :meth:`to_dict` (a cached calibration read back)."""
        eff = lambda v: st.Efficiency(**v)  # noqa: E731
        return cls(global_=eff(d["global"]), tau_spec=float(d["tau_spec_assumed"]), routing=float(d["routing"]),
                   taus=dict(d["taus"]), families={k: eff(v) for k, v in d["families"].items()},
                   cells={k: eff(v) for k, v in d["cells"].items()}, duty=dict(d["duty"]), rows=dict(d["rows"]),
                   drift=dict(d.get("drift", {})), drift_curves=dict(d.get("drift_curves", {})),
                   prefill=dict(d.get("prefill", {})),
                   groups=int(d["groups"]))

    def to_dict(self) -> dict:
        return {"global": self.global_.to_dict(), "tau_spec_assumed": self.tau_spec, "routing": self.routing,
                "families": {k: v.to_dict() for k, v in self.families.items()},
                "cells": {k: v.to_dict() for k, v in self.cells.items()},
                "taus": self.taus, "duty": self.duty, "drift": self.drift, "drift_curves": self.drift_curves,
                "prefill": self.prefill, "rows": self.rows,
                "groups": self.groups}


def software_factor(drift: dict, family: str, framework: str, date: str, concurrency: float | None = None,
                    curves: dict | None = None) -> tuple[float, int, str]:
    """The step-time factor of the software a cell ran on ``date``, against the newest runs the parameters rest on:
    exp of the median measured drift (:func:`drift_table`) of the cell's configurations run on that date (a
    configuration whose newest run is that day counts 0: that software is its reference). Without a re-run that day,
    the last re-run date before it (software changes with an image, not in between); without the cell, the family's
    cells. With ``concurrency`` and the drift's ``curves`` (:func:`drift_curves`), each configuration's drift is read
    at that concurrency (:func:`_curve_at`) instead of its mean over concurrencies: of the 40 configuration-dates
    re-run at three or more concurrencies at least 8× apart whose older software was slower, 37 were slower by less at
    many users than at few (tests/test_perfmodel.py).
    (factor, configurations, the date used); (1, 0, "") when nothing applies."""
    date = _day(date)
    if not date:
        return 1.0, 0, ""
    cell = f"{family} · {framework}"
    keys = [cell] if cell in drift else [k for k in drift if k.split(" · ")[0] == family]
    dates = sorted({d for k in keys for g in drift[k].values() for d in g if d <= date})
    if not dates:
        return 1.0, 0, ""
    on, found = dates[-1], []
    use_curves = concurrency is not None and bool(curves)
    for k in keys:
        for gid, g in drift[k].items():
            if on not in g:
                continue
            curve = ((curves or {}).get(k, {}).get(gid, {}).get(on) if use_curves else None)
            found.append(_curve_at(curve, float(concurrency)) if curve else g[on])
    return math.exp(float(np.median(found))), len(found), on


def _curve_at(curve: list, concurrency: float) -> float:
    """A configuration's measured drift at ``concurrency``: linear in log concurrency between the concurrencies its
    re-run shares with its newest run, the nearest end's beyond them (never extrapolated)."""
    c = np.array([p[0] for p in curve], dtype=float)
    v = np.array([p[1] for p in curve], dtype=float)
    return float(np.interp(math.log(max(concurrency, 1e-9)), np.log(c), v))


def at_newest_software(train: pd.DataFrame, drift: dict, curves: dict | None = None) -> pd.DataFrame:
    """``train`` with each row's measured time per token divided by its date's :func:`software_factor` at its
    concurrency: the time its cell's newest software would have taken, which the parameters describe and a
    prediction scales back by its own date's factor. Without it a configuration last run on older software (a sweep
    the benchmark later dropped) calibrates its cell slower than the software every newer point ran (MI300X's ISL
    1,024 / OSL 8,192 rows of 2026-02-27 ran 1.31× the step time, the median of the same cell's configurations run
    that day against their newest)."""
    if not drift or train.empty:
        return train
    keys = pd.DataFrame({"f": train["family"].astype(str), "w": train["framework"].astype(str),
                         "d": train["date"].map(_day), "c": train["concurrency_nominal"].astype(float).round(3)})
    factor = {k: software_factor(drift, *k[:3], k[3], curves)[0] for k in set(keys.itertuples(index=False, name=None))}
    f = np.array([factor[k] for k in keys.itertuples(index=False, name=None)])
    return train.assign(measured_ms_per_token=train["measured_ms_per_token"].to_numpy() / f)


def _solve(x0, free, lo, hi, args, *, max_nfev):
    """:func:`_residuals` minimised by bounded least squares over the ``free`` entries of ``x0`` (the others held)."""
    idx = np.flatnonzero(free)

    def reduced(xr, *a):
        x = x0.copy()
        x[idx] = xr
        return _residuals(x, *a)

    from scipy.optimize import least_squares  # here: a claim card reads a cached calibration and never fits

    res = least_squares(reduced, x0[idx], bounds=(np.asarray(lo)[idx], np.asarray(hi)[idx]), args=args,
                        method="trf", x_scale="jac", max_nfev=max_nfev)
    x = x0.copy()
    x[idx] = res.x
    return x


@lru_cache(maxsize=1)
def streaming_share() -> tuple[float, tuple[str, ...]]:
    """The HBM share a dense stream of bytes achieves where it was measured: the median of the hardware table's
    measured achievable bandwidth over datasheet (``achievable_basis`` measured: H200's device-to-device copy 0.887,
    GB200's Azure measurement 0.919, both NVIDIA parts; for the other hardware, AMD's included, it is an assumption
    that theirs is alike), and which hardware it rests on. The pooled level's ``bw_share`` is held at it:
    on the MoE rows that dominate the pooled fit the routed experts are most of the bytes, so the fit cannot tell the
    share of all bytes from the experts' own (``expert_bw``) and settles on either (all at 0.44, or all at 1.0 with
    the experts at 0.43) with the dense sweeps on neither side."""
    table = specs.hardware_table()
    measured = {h.name: h for h in map(specs.hardware, table["name"]) if h.achievable_basis == "measured"
                and h.achievable_bandwidth_tb_s == h.achievable_bandwidth_tb_s and h.hbm_bandwidth_tb_s > 0}.values()
    if not measured:
        return st.Efficiency().bw_share, ()
    return float(np.median([min(h.achievable_bandwidth_tb_s / h.hbm_bandwidth_tb_s, 1.0) for h in measured])), \
        tuple(sorted(h.name for h in measured))


def _fit_level(rows, start, prior, routing, tau_start, group_loss=None):
    """One level's efficiency and (where it has speculative rows) its τ, pulled towards ``prior``; ``group_loss``:
    the scale of :func:`_group_loss` (a cell's fit), None for least squares. A level without a
    quant-unfused row carries no information on ``unfused_quant`` (which has no prior): it keeps the level above's
    value instead of leaving the solver a direction that changes nothing."""
    spec = bool(rows["spec"].any() and rows["tau_measured"].isna().any())
    has_unfused = bool(rows["unfused"].astype(float).any())
    rows = _Arrays.of(rows)
    lo, hi = _bounds(False)
    if spec:
        lo, hi = lo + [TAU_BOUNDS[0]], hi + [TAU_BOUNDS[1]]
        x0 = np.concatenate([start, [tau_start]])
        args = (rows, _weights(rows), None, prior, routing, group_loss)
    else:
        x0 = np.asarray(start, float)
        args = (rows, _weights(rows), prior[NP], prior, routing, group_loss)
    x0 = np.clip(np.asarray(x0, float), np.asarray(lo) + 1e-9, np.asarray(hi) - 1e-9)
    free = np.ones(len(x0), dtype=bool)
    if not has_unfused:
        k = PARAMS.index("unfused_quant")
        free[k] = False
        x0[k] = float(np.clip(prior[k], lo[k], hi[k]))
    x = _solve(x0, free, lo, hi, args, max_nfev=200)
    return _eff(x), float(x[NP]) if spec else float(prior[NP])


def _reruns(train: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The dated re-runs beside their configuration's newest points: (per group, date and concurrency both share,
    the cell, the log time per token that date ``l`` and the newest one's ``l_newest``; each group's newest dates), or
    None where ``train`` holds no re-run."""
    if "history" not in train.columns or not train["history"].astype(bool).any():
        return None
    t = pd.DataFrame({"g": train["group_id"].astype(str).to_numpy(), "cell": train["cell"].astype(str).to_numpy(),
                      "d": train["date"].map(_day).to_numpy(), "c": train["concurrency_nominal"].round(3).to_numpy(),
                      "l": np.log(train["measured_ms_per_token"].astype(float)).to_numpy(),
                      "h": train["history"].astype(bool).to_numpy()})
    both = t.groupby("g")["h"].agg(["any", "all"])
    t = t[t["g"].isin(both.index[both["any"] & ~both["all"]]) & (t["d"] != "")]
    newest = t[~t["h"]].groupby(["g", "c"], as_index=False)["l"].mean()  # each concurrency's newest measurement
    then = t[t["h"]].groupby(["cell", "g", "d", "c"], as_index=False)["l"].mean().merge(
        newest, on=["g", "c"], suffixes=("", "_newest"))  # the concurrencies both share
    return then, t.loc[~t["h"], ["cell", "g", "d"]].drop_duplicates()


def drift_tables(train: pd.DataFrame) -> tuple[dict, dict]:
    """(:func:`drift_table`, :func:`drift_curves`) from one pass over the re-runs (what a calibration reads)."""
    found = _reruns(train)
    return (_drift_means(*found), _drift_curves(found[0])) if found is not None else ({}, {})


def drift_table(train: pd.DataFrame) -> dict:
    """Software drift measured by re-runs: for each configuration group with dated re-runs, per date, the mean over
    the concurrencies the re-run shares with the group's newest points of log(time per token that date ÷ the newest
    point's at that concurrency); 0 on the dates of the newest points where no re-run says otherwise.
    ``{cell: {group_id: {date: log ratio}}}``; only the same configuration measured twice enters it, no model."""
    return drift_tables(train)[0]


def _drift_means(then: pd.DataFrame, newest_dates: pd.DataFrame) -> dict:
    per_date = (then["l"] - then["l_newest"]).groupby([then["cell"], then["g"], then["d"]]).mean()
    out: dict = {}
    for cell, g, d in newest_dates.itertuples(index=False, name=None):  # the newest runs' own dates: the reference
        out.setdefault(cell, {}).setdefault(g, {})[d] = 0.0
    for (cell, g, d), v in per_date.items():
        out.setdefault(cell, {}).setdefault(g, {})[d] = float(v)
    return out


def drift_curves(train: pd.DataFrame) -> dict:
    """The drift of :func:`drift_table` at each concurrency a re-run shares with its configuration's newest points:
    ``{cell: {group_id: {date: [[concurrency, log ratio], ...]}}}`` (ascending concurrency; the newest runs' own
    dates, 0 everywhere, are not listed)."""
    return drift_tables(train)[1]


def _drift_curves(then: pd.DataFrame) -> dict:
    out: dict = {}
    for (cell, g, d), x in then.sort_values("c").groupby(["cell", "g", "d"], sort=False):
        out.setdefault(cell, {}).setdefault(g, {})[d] = [[float(c), float(a - b)] for c, a, b in
                                                         zip(x["c"], x["l"], x["l_newest"])]
    return out


PAIR_MAX_CONCURRENCY = 16  # prompts queue for prefill above it: the shipped runs' TTFT rises with concurrency there
PAIR_KEY = ("cell", "model", "precision", "spec_method", "tp", "ep", "dp", "osl", "concurrency_nominal", "day")


def prefill_shares(train: pd.DataFrame) -> dict:
    """The share of the datasheet FLOP rate prefill achieves, measured from TTFT (p50, else mean): for each
    aggregated serving configuration measured with prompts of two lengths on the same day (everything else alike:
    model, precision, speculation, parallelism, OSL, concurrency ≤ :data:`PAIR_MAX_CONCURRENCY`), the datasheet time
    of the longer prompt's extra tokens (:func:`analysis.perfmodel.step.prefill_ms_per_token`, at the lengths the
    benchmark drew: :attr:`~analysis.perfmodel.step.Deployment.mean_isl` tokens at the token-weighted prompt,
    :func:`range_ratio`) over the extra TTFT it took; a TTFT's fixed part (request handling, the
    first decode step, a prefill pass's weight reads) cancels in the difference. It is the rate prompts went through
    in those runs: any queueing behind other prompts at that concurrency counts against it. ``{level: [median
    share, pairs]}`` per cell, family and ``all``, and per precision at each cell (``"B300 · sglang · fp4"``); only
    pairs whose longer prompt took longer."""
    ok = train["serving"].astype(bool) & ~train["disagg"].fillna(False).astype(bool) & \
        (train["concurrency_nominal"] <= PAIR_MAX_CONCURRENCY) & (train["ttft_ms"] > 0) & \
        (train["prompt_prefill_ms"] > 0)
    t = train.loc[ok].assign(day=train.loc[ok, "date"].map(_text).str.slice(0, 10))
    t = t[[*PAIR_KEY, "family", "isl", "prompt_prefill_ms", "ttft_ms"]]
    key = list(PAIR_KEY)
    span = t.groupby(key, dropna=False, sort=False)["isl"].transform
    lo, hi = span("min"), span("max")
    short, long_ = t[(t["isl"] == lo) & (lo < hi)], t[(t["isl"] == hi) & (lo < hi)]
    pairs = short.merge(long_[[*key, "prompt_prefill_ms", "ttft_ms"]], on=key, suffixes=("", "_long"))
    pairs = pairs[pairs["ttft_ms_long"] > pairs["ttft_ms"]]
    out: dict = {}
    if pairs.empty:
        return out
    f = pairs.assign(share=(pairs["prompt_prefill_ms_long"] - pairs["prompt_prefill_ms"])
                     / (pairs["ttft_ms_long"] - pairs["ttft_ms"]))
    out["all"] = [float(f["share"].median()), int(len(f))]
    for col in ("family", "cell"):
        for k, g in f.groupby(col):
            out[k] = [float(g["share"].median()), int(len(g))]
    for (cell, prec), g in f.groupby([f["cell"], f["precision"].astype(str).str.lower()]):
        out[f"{cell} · {prec}"] = [float(g["share"].median()), int(len(g))]
    return out


def _with_prefill_share(train: pd.DataFrame, shares: dict) -> pd.DataFrame:
    """``train`` with each row's measured prefill share (``shares`` from :func:`prefill_shares`, at its cell and
    precision: :func:`_prefill_share`)."""
    keys = list(zip(train["family"].astype(str), train["framework"].astype(str), train["precision"].astype(str)))
    found = {k: _prefill_share(shares, *k)[0] for k in set(keys)}
    return train.assign(prefill_share=np.array([found[k] for k in keys], dtype=float))


def calibrate(train: pd.DataFrame, *, warm: Calibration | None = None, only: tuple[str, str] | None = None
              ) -> Calibration:
    """Fit :class:`Calibration` on ``train`` (:func:`training_table` rows). ``only`` = (family, framework): fit just
    that cell and family below the global level (what a left-out group's prediction needs); ``warm`` starts from
    an earlier calibration's parameters (the minimum found does not depend on it beyond the solver's tolerance)."""
    drift, curves = drift_tables(train)
    train = at_newest_software(train[calibrating(train)], drift, curves)
    prefill = prefill_shares(train)
    train = _with_prefill_share(train, prefill)
    g0 = warm.global_ if warm else START
    x0 = _clip(list(g0.to_dict().values()) + [warm.tau_spec if warm else 2.0, warm.routing if warm else 0.5], True)
    arrays = _Arrays.of(train)
    free = np.ones(len(x0), dtype=bool)
    free[PARAMS.index("bw_share")] = False  # held at the measured streaming share (:func:`streaming_share`)
    x0[PARAMS.index("bw_share")] = streaming_share()[0]
    lo, hi = _bounds(True)
    x = _solve(x0, free, lo, hi, (arrays, _weights(arrays)), max_nfev=300)
    cal = Calibration(global_=_eff(x), tau_spec=float(x[NP]), routing=float(x[NP + 1]),
                      groups=int(train["group_id"].nunique()), prefill=prefill)
    prior0 = np.concatenate([x[:NP], [cal.tau_spec]])
    fams = [only[0]] if only else sorted(train["family"].unique())
    for fam in fams:
        fr = train[train["family"] == fam]
        if fr.empty:
            continue
        start = list((warm.families.get(fam, cal.global_) if warm else cal.global_).to_dict().values())
        tau0 = warm.tau_for(fam, "") if warm else cal.tau_spec
        cal.families[fam], cal.taus[fam] = _fit_level(fr, start, prior0, cal.routing, tau0)
        cal.rows[fam] = int(len(fr))
        prior_f = np.concatenate([list(cal.families[fam].to_dict().values()), [cal.taus[fam]]])
        cells = [f"{only[0]} · {only[1]}"] if only else sorted(fr["cell"].unique())
        for cell in cells:
            cr = fr[fr["cell"] == cell]
            if cr.empty:
                continue
            start = list((warm.cells.get(cell, cal.families[fam]) if warm else cal.families[fam]).to_dict().values())
            tau0 = warm.taus.get(cell, cal.taus[fam]) if warm else cal.taus[fam]
            cal.cells[cell], cal.taus[cell] = _fit_level(cr, start, prior_f, cal.routing, tau0, GROUP_LOSS_SCALE)
            cal.rows[cell] = int(len(cr))
    cal.drift, cal.drift_curves = drift, curves
    # The duty is a fixed-length serving run's: ``train`` holds calibrating rows only, so a run whose source states no
    # ISL/OSL (an agentic trace replay, whose turns spend most of their time in prefill) lends its duty to no cell.
    serving = train[train["serving"] & np.isfinite(train["duty"]) & (train["duty"] > 0)]
    cal.duty["all"] = float(serving["duty"].median()) if len(serving) else 1.0
    for col in ("family", "cell"):
        for k, g in serving.groupby(col):
            cal.duty[k] = float(g["duty"].median())
    return cal


def bootstrap(train: pd.DataFrame, base: Calibration, *, n_boot: int = 20, seed: int = 0,
              only: tuple[str, str] | None = None) -> list[Calibration]:
    """Calibrations on configuration groups resampled with replacement (warm-started from ``base``; ``only`` as in
    :func:`calibrate`: the one cell a prediction reads)."""
    rng = np.random.default_rng(seed)
    ids = train.loc[calibrating(train), "group_id"].unique()  # a group drawn carries its re-runs; others fit nothing
    by_group = train.groupby("group_id").indices
    draws = []
    for _ in range(n_boot):
        pick = rng.choice(ids, size=len(ids), replace=True)
        idx = np.concatenate([by_group[g] for g in pick])
        labels = np.repeat(np.arange(len(pick)), [len(by_group[g]) for g in pick])
        sample = train.iloc[idx].reset_index(drop=True)
        sample["group_id"] = labels.astype(str)  # a group drawn twice counts as two groups
        draws.append(calibrate(sample, warm=base, only=only))
    return draws
