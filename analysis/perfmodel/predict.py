"""Predictions of tok/s/user and tok/s/GPU for a deployment at given concurrencies, with intervals.

The decode batch per worker is ``concurrency × decode duty ÷ workers`` (the duty calibrated per cell: the share of a
serving run's time its requests spend decoding; 1 for a step-timing sweep). Per step: :func:`analysis.perfmodel.step
.step_time` at that batch; tok/s/user = ``1000·τ / step_ms``; tok/s/GPU = tok/s/user × concurrency × duty ÷ all GPUs
(prefill GPUs included, as the points table's ``gpu_denominator`` "all"). A disaggregated deployment's output is
capped at its prefill GPUs' capacity × OSL/ISL (:func:`analysis.perfmodel.step.prefill_capacity`); past the cap the
sequences in decode are the number whose output meets it, the rest wait for prefill. The interval spans the bootstrap
calibrations (5th to 95th percentile) and the collectives table's low/high latencies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from analysis import specs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import step as st


@dataclass
class Prediction:
    rows: list            # one dict per concurrency
    config: dict
    calibration: dict


def _one(dep: st.Deployment, conc: np.ndarray, cal: cb.Calibration, *, serving: bool, collectives: str = "mid",
         overhead: float | None = None):
    """tok/s/user, tok/s/GPU, the step's terms and the batch per worker at each concurrency for one calibration
    (``overhead``: the per-layer fixed cost in place of the calibrated one)."""
    family = specs.hardware(dep.hardware).family
    eff, level = cal.efficiency(family, dep.framework)
    if overhead is not None:
        eff = replace(eff, overhead_ms_per_layer=float(overhead))
    duty = cal.decode_duty(family, dep.framework) if serving else 1.0
    tau, verify, tau_source = st.speculation(dep, assumed_tau=cal.tau_for(family, dep.framework))
    geo = st.geometry(dep, verify=verify)
    par = st.parallelism(dep)
    prefill = st.prefill_tokens_per_seq(dep.isl, dep.osl, tau, serving=serving, disagg=bool(dep.disagg))
    key = {"mid": "collectives_ms", "low": "collectives_low_ms", "high": "collectives_high_ms"}[collectives]
    factors = [cal.date_factor(family, dep.framework, dep.date, float(c)) for c in conc]
    drift = np.array([f[0] for f in factors]) if len(factors) else np.ones(0)
    drift_groups, drift_date = (factors[0][1], factors[0][2]) if factors else (0, "")
    routing = 1.0 if dep.uniform_routing else cal.routing  # a random-weight router spreads tokens uniformly
    share, share_level = cal.prefill_share(family, dep.framework, dep.precision)

    def at(decoding):  # tok/s/user and the step's parts with `decoding` sequences in decode across all workers
        t = st.terms(geo, np.maximum(decoding / par.workers, 1e-9), routing=routing, prefill_per_seq=prefill)
        parts = st.step_time(t["memory_ms"], t["compute_ms"], t[key], eff, geo.fixed_layers,
                             t["prefill_compute_ms"], float(dep.quant_unfused), share, kv_ms=t["kv_ms"],
                             attention_ms=t["attention_ms"], host_bound=float(st.host_bound(dep)),
                             expert_ms=t["expert_ms"])
        if (drift != 1.0).any():  # the software of the run's date, measured by the cell's re-runs: every term scales
            parts = {k: v * drift if k == "step_ms" or k in st.TERMS else v for k, v in parts.items()}
        return 1000.0 * tau / parts["step_ms"], parts, t

    decoding = conc * duty
    user, parts, t = at(decoding)
    out_rate = user * decoding
    # A disaggregated deployment's prefill GPUs cap the request rate: output ≤ prefill tokens/s × OSL/ISL. Past the
    # cap the other users wait for prefill, so fewer sequences decode: solve decoding × user(decoding) = cap.
    cap = st.prefill_capacity(dep, geo, par.worker_gpus, share) * dep.osl / dep.isl if serving else math.nan
    if cap == cap and (out_rate > cap).any():
        over = out_rate > cap
        d = np.where(over, decoding, decoding)
        for _ in range(30):
            u, _, _ = at(d)
            d = np.where(over, np.minimum(cap / u, decoding), decoding)
        user, parts, t = at(d)
        out_rate = np.where(over, np.minimum(user * d, cap), out_rate)
        decoding = d
    batch = np.maximum(decoding / par.workers, 1e-9)
    gpu = out_rate / max(dep.n_gpus, 1)
    return {"user": user, "gpu": gpu, "parts": parts, "batch": batch, "tau": tau, "verify": verify,
            "tau_source": tau_source, "level": level, "duty": duty, "eff": eff, "geo": geo, "par": par,
            "drift": drift, "drift_groups": drift_groups, "drift_date": drift_date, "routing": routing,
            "status": t["collective_status"], "prefill_share": share, "prefill_level": share_level}


def predict(dep: st.Deployment, concurrencies, cal: cb.Calibration, draws: list | None = None, *,
            serving: bool = True) -> Prediction:
    """Per concurrency: tok/s/user and tok/s/GPU with intervals, the step time split into its terms, the dominant
    term; the config as read (with defaults) and the calibration it used."""
    conc = np.asarray(list(concurrencies), dtype=float)
    base = _one(dep, conc, cal, serving=serving)
    spread_u, spread_g = [base["user"]], [base["gpu"]]
    for d in draws or []:
        o = _one(dep, conc, d, serving=serving)
        spread_u.append(o["user"])
        spread_g.append(o["gpu"])
    for end in ("low", "high"):
        o = _one(dep, conc, cal, serving=serving, collectives=end)
        spread_u.append(o["user"])
        spread_g.append(o["gpu"])
    su, sg = np.vstack(spread_u), np.vstack(spread_g)
    rows = []
    for i, c in enumerate(conc):
        terms = {k: float(base["parts"][k][i]) for k in st.TERMS}
        rows.append({
            "concurrency": float(c), "tok_s_per_user": float(base["user"][i]),
            "tok_s_per_user_lo": float(min(np.percentile(su[:, i], 5), base["user"][i])),
            "tok_s_per_user_hi": float(max(np.percentile(su[:, i], 95), base["user"][i])),
            "tok_s_per_gpu": float(base["gpu"][i]),
            "tok_s_per_gpu_lo": float(min(np.percentile(sg[:, i], 5), base["gpu"][i])),
            "tok_s_per_gpu_hi": float(max(np.percentile(sg[:, i], 95), base["gpu"][i])),
            "step_ms": float(base["parts"]["step_ms"][i]), "terms": terms,
            "dominant": st.dominant({k: base["parts"][k][i:i + 1] for k in st.TERMS}),
            "batch_per_worker": float(base["batch"][i]),
            # the same step without its calibrated fixed cost: what an engine that removed per-layer launches and
            # synchronisation entirely would run, every other term as calibrated
            "tok_s_per_user_without_overhead": float(1000.0 * base["tau"] / (base["parts"]["step_ms"][i]
                                                                             - base["parts"]["overhead_ms"][i])),
            # ... and with the collectives at their measured latency instead of the calibrated scale of it (at one GPU
            # count a per-layer fixed cost and per-layer collectives are both constant: the fit cannot tell them apart)
            "tok_s_per_user_without_overhead_measured_collectives": float(1000.0 * base["tau"] / (
                base["parts"]["step_ms"][i] - base["parts"]["overhead_ms"][i] - base["parts"]["collectives_ms"][i]
                + (base["parts"]["collectives_ms"][i] / base["eff"].comm_scale if base["eff"].comm_scale > 0
                   else 0.0))),
        })
    fixed = _fixed_cost_spread(dep, conc, cal, serving=serving)
    for i, row in enumerate(rows):
        row["tok_s_per_user_fixed_cost_spread"] = {k: [float(v[0][i]), float(v[1][i])]
                                                   for k, v in fixed.get("tok_s_per_user", {}).items()}
    par = base["par"]
    config = {**{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in dep.__dict__.items()},
              "worker_gpus": par.worker_gpus, "workers": par.workers, "recipe": base["geo"].recipe,
              "tau": base["tau"], "tau_source": base["tau_source"], "verify_tokens": base["verify"],
              "parallelism_note": par.note}
    calibration = {"level": base["level"], "efficiency": base["eff"].to_dict(), "decode_duty": base["duty"],
                   "tau_spec_assumed": cal.tau_for(specs.hardware(dep.hardware).family, dep.framework),
                   "tau_spec_assumed_at_drafts": st.DEFAULT_DRAFT_TOKENS,  # the count it is fitted at; config.tau: own
                   "routing": base["routing"], "bootstrap_draws": len(draws or []),
                   "prefill_share": {"share": base["prefill_share"], "measured_at": base["prefill_level"] or None},
                   "software_drift": {"date": dep.date or None,
                                      "step_time_factor": float(base["drift"][0]) if len(base["drift"]) else 1.0,
                                      "step_time_factor_by_concurrency": [float(v) for v in base["drift"]],
                                      "configurations": base["drift_groups"],
                                      "measured_on": base["drift_date"] or None},
                   "collectives": base["status"], "groups": cal.groups,
                   "fixed_cost_spread": {k: v for k, v in fixed.items() if k != "tok_s_per_user"}}
    return Prediction(rows, config, calibration)


def _fixed_cost_spread(dep: st.Deployment, conc: np.ndarray, cal: cb.Calibration, *, serving: bool) -> dict:
    """Where no calibrating run of the deployment's engine on its hardware family exists (its efficiency is the
    family's or all hardware's pooled fit), the per-layer fixed cost is the one parameter that belongs to an engine
    (calibrate.PRIOR_SCALE): the range the engines measured on that family, and on all hardware, span (host-bound
    cells left out), and tok/s/user at each end. ``{}`` when the engine's own cell is calibrated."""
    family = specs.hardware(dep.hardware).family
    if f"{family} · {dep.framework}" in cal.cells:
        return {}
    out: dict = {"tok_s_per_user": {}}
    for name, keys in (("family", [k for k in cal.cells if k.split(" · ")[0] == family]), ("all", list(cal.cells))):
        values = [cal.cells[k].overhead_ms_per_layer for k in keys
                  if k.split(" · ", 1)[-1] not in st.HOST_BOUND_FRAMEWORKS]
        if len(values) < 2:
            continue
        lo, hi = min(values), max(values)
        out[f"overhead_ms_per_layer_{name}"] = [float(lo), float(hi)]
        out[f"cells_{name}"] = len(values)
        out["tok_s_per_user"][name] = (_one(dep, conc, cal, serving=serving, overhead=hi)["user"],
                                       _one(dep, conc, cal, serving=serving, overhead=lo)["user"])
    return out if out["tok_s_per_user"] else {}
