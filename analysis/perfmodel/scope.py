"""What each interconnect scope needs and what was measured: the facts the claim card's scope answer cites.

For a per-user speed claimed at τ tokens per step, a batch-1 step must last at most ``1000·τ / claim`` ms. With
``n`` collectives per step (TP all-reduces or EP dispatch + combine, per layer, as :func:`analysis.perfmodel.step
.geometry` counts them for that scope and layout; a mixture of experts is weighed both ways and the faster taken)
the budget left for collectives after the HBM read at the calibrated bandwidth share and the per-layer overhead
gives the latency each collective may take; beside it the measured latency at that scope
(``data/specs/collectives.csv``), its range and sources. Scopes: 1 GPU, a 4-GPU tray, an 8-GPU node, the 72-GPU
domain.
"""

from __future__ import annotations

import math
from functools import lru_cache

from analysis import specs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import collectives as co
from analysis.perfmodel import step as st
from analysis.perfmodel import words

SCOPES = {1: "1 GPU", 4: "4-GPU tray", 8: "8-GPU node", 72: "72-GPU domain"}


def _layouts(m: specs.Model, g: int) -> list[tuple[str, dict]]:
    """The ways to shard ``m`` over ``g`` GPUs a scope answer weighs: a dense model by TP; a mixture of experts by
    TP (where ``g`` splits its attention heads evenly: two all-reduces per layer) or by EP with attention
    data-parallel (dispatch and combine per MoE layer)."""
    from analysis import roofline

    if g <= 1:
        return [("", {"tp": 1, "ep": 1, "dp": 1})]
    out = []
    if not m.is_moe or roofline.tp_splits_heads(m, g):
        out.append((roofline.TP_ALL_REDUCE, {"tp": g, "ep": 1, "dp": 1}))
    if m.is_moe:
        out.append((roofline.EP_DISPATCH_COMBINE, {"tp": 1, "ep": g, "dp": g}))
    return out


def _layout_facts(model: str, hardware: str, g: int, shard: dict, *, budget_ms: float, tau: float, verify: float | None,
                  precision: str,
                  context: float, eff: st.Efficiency, routing: float) -> dict:
    dep = st.Deployment(model=model, hardware=hardware, n_gpus=g, precision=precision, context_len=context, **shard)
    verify = max(verify or tau, 1.0)  # the tokens a verify step pushes through: drafted + 1 where known
    geo = st.geometry(dep, verify=verify)
    t = st.terms(geo, 1.0, routing=routing)
    hbm_ms = float(st.hbm_ms(t["memory_ms"], t["expert_ms"], eff)[0])
    overhead_ms = eff.overhead_ms_per_layer * geo.fixed_layers
    n_coll = sum(c[3] for c in geo.comm)
    left = budget_ms - hbm_ms - overhead_ms
    measured = []
    for coll, where, group, count, divisor in geo.comm:
        r = co.latency(coll, where, group_size=group, message_bytes=geo.hidden * 2.0 * verify / divisor
                       if divisor == 1 else geo.hidden * 2.0, hardware=geo.hardware)
        measured.append({"collective": coll, "interconnect": where, "group": group, "per_step": count,
                         **{k: v for k, v in r.to_dict().items() if k not in ("collective", "interconnect")}})
    mean_measured = (sum(m["latency_us"] * m["per_step"] for m in measured) / n_coll) if n_coll else math.nan
    per_coll = [m["latency_us"] for m in measured]
    verdict = (("alone-fits" if left > 0 else "alone-exceeds") if not n_coll else
               "exceeds" if left <= 0 else "within" if mean_measured <= left * 1000.0 / n_coll else "over")
    return {"hbm_ms": hbm_ms, "overhead_ms": overhead_ms, "collectives_per_step": int(n_coll),
            "needs_us_per_collective": (left * 1000.0 / n_coll) if n_coll else math.nan,
            "measured_us_per_collective": mean_measured,
            "measured_dispatch_plus_combine_us": (sum(per_coll) if any(c == "ep-dispatch" for c, *_ in geo.comm)
                                                  and len(per_coll) == 2 else math.nan),
            "measured": measured,
            # the step these measured latencies give: how the layouts are ranked
            "step_ms": hbm_ms + overhead_ms + (n_coll * mean_measured / 1000.0 if n_coll else 0.0),
            "verdict": words.verdict(verdict, overhead=overhead_ms > 0), "reaches": verdict in ("alone-fits", "within")}


def scope_facts(model: str, hardware: str, *, claim_tok_s_per_user: float, tau: float = 1.0,
                verify: float | None = None, precision: str = "native", context: float = 1024.0,
                cal: cb.Calibration | None = None, framework: str = "unknown", scopes=tuple(SCOPES)) -> list[dict]:
    """One dict per scope: the step budget, the collectives per step and the latency each may take, the measured
    latency per collective (TP all-reduce or EP dispatch + combine) with its range, status and sources, and whether
    the weights fit. A mixture of experts can shard either way (:func:`_layouts`): the scope's numbers are those of
    the layout whose measured collectives give the shorter step (a bound takes the most favourable deployment),
    ``layout`` names it and ``other`` holds the other's."""
    out = []
    budget_ms = 1000.0 * tau / claim_tok_s_per_user
    family = specs.hardware(hardware).family
    eff = cal.efficiency(family, framework)[0] if cal else st.Efficiency(bw_share=1.0, flop_share=1.0)
    routing = cal.routing if cal else 1.0
    m = specs.model(model)
    for g in scopes:
        options = [(name, _layout_facts(model, hardware, g, shard, budget_ms=budget_ms, tau=tau, verify=verify,
                                        precision=precision,
                                        context=context, eff=eff, routing=routing))
                   for name, shard in _layouts(m, g)]
        options.sort(key=lambda o: o[1]["step_ms"] if o[1]["step_ms"] == o[1]["step_ms"] else math.inf)
        (layout, best), others = options[0], options[1:]
        fits = st.min_worker_gpus(specs.match_model_name(model) or model, hardware,
                                  st.recipes.recipe(model, precision).text) <= g
        out.append({
            "gpus": g, "scope": words.scope_name(g, SCOPES, specs.hardware(hardware)), "fits": bool(fits),
            "step_budget_ms": budget_ms,
            "layout": layout, "tp_limit": int(m.n_heads) if m.is_moe else None,
            **{k: v for k, v in best.items() if k != "step_ms"},
            "other": [{"layout": n, **{k: v for k, v in o.items() if k != "step_ms"}} for n, o in others],
            "reading": words.READING_CALIBRATED if cal else words.READING_BOUND,
        })
    return out


def default_layout(model: str, n_gpus: int) -> dict:
    """TP/EP/DP for ``n_gpus`` when nothing says which: TP across them where it splits the attention heads evenly
    (what the shipped serving points of the tray and node ran), else a mixture of experts by EP with data-parallel
    attention (:func:`_layouts`' order)."""
    return dict(_layouts(specs.model(model), int(n_gpus))[0][1])


def precision_facts(model: str, hardware: str, *, n_gpus: int = 1, concurrency: float = 1.0,
                    cal: cb.Calibration, framework: str = "unknown", tau: float | None = None,
                    isl: float = 1024.0, osl: float = 1024.0, precisions=("native", "fp8", "fp4"),
                    layout: dict | None = None) -> list[dict]:
    """Predicted tok/s/user at each precision recipe (``native`` is the shipped recipe of data/specs/recipes.csv;
    ``fp8`` / ``fp4`` that precision on every component, or the serving recipe the table has for it), with the
    ratio to FP8 and the HBM bytes per step that decide it; ``layout`` (tp, ep, dp) else :func:`default_layout`."""
    from analysis.perfmodel import predict as pr

    shard = layout or default_layout(model, n_gpus)
    out = []
    for prec in precisions:
        spec = {} if tau is None or tau <= 1 else {"spec_method": "mtp", "acceptance_length": float(tau)}
        dep = st.Deployment(model=model, hardware=hardware, n_gpus=n_gpus, tp=int(shard["tp"]), ep=int(shard["ep"]),
                            dp=int(shard["dp"]), precision=prec, framework=framework, isl=isl, osl=osl, **spec)
        p = pr.predict(dep, [concurrency], cal, serving=True)
        row = p.rows[0]
        out.append({"precision": prec, "recipe": p.config["recipe"], "tok_s_per_user": row["tok_s_per_user"],
                    "step_ms": row["step_ms"], "terms": row["terms"], "dominant": row["dominant"],
                    "tau": p.config["tau"], "tau_source": p.config["tau_source"]})
    fp8 = next((r["tok_s_per_user"] for r in out if r["precision"] == "fp8"), math.nan)
    for r in out:
        r["vs_fp8"] = r["tok_s_per_user"] / fp8 if fp8 == fp8 else math.nan
    return out


CACHE_NAME = "calibration.json"


def _cache_key(points_file) -> str:
    """A digest of what a calibration depends on: the points table, the model's code and the spec tables."""
    import hashlib
    from pathlib import Path

    from analysis import config

    h = hashlib.sha256(Path(points_file).read_bytes())
    for p in sorted(Path(__file__).parent.glob("*.py")) + sorted(config.SPECS_DIR.glob("*.csv")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def shipped_calibration() -> cb.Calibration:
    """The calibration on the shipped points table, fitted once and kept beside it (``calibration.json`` in
    data/processed, keyed by a digest of the points, the model's code and the spec tables), since every claim card
    of a report run asks for it and the fit takes seconds; an unreadable or stale cache is refitted, and a cache
    that cannot be written is skipped."""
    import json
    import os

    import pandas as pd

    from analysis import config

    key = _cache_key(config.POINTS_FILE)
    cache = config.POINTS_FILE.parent / CACHE_NAME
    try:
        d = json.loads(cache.read_text())
        if d.get("key") == key:
            return cb.Calibration.from_dict(d["calibration"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    cal = cb.calibrate(cb.training_table(pd.read_parquet(config.POINTS_FILE)))
    tmp = cache.with_name(f".{CACHE_NAME}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"key": key, "calibration": cal.to_dict()}))
        os.replace(tmp, cache)
    except OSError:
        tmp.unlink(missing_ok=True)
    return cal


def fp4_vs_fp8(model: str, hardware: str, *, n_gpus: int = 1, concurrency: float = 1.0, framework: str = "unknown",
               tau: float | None = None, isl: float = 1024.0, osl: float = 1024.0,
               cal: cb.Calibration | None = None, layout: dict | None = None) -> dict:
    """FP4 against FP8 at the shipped recipe, for a claim card: :func:`precision_facts` at ``native``, ``fp8`` and
    ``fp4`` on the shipped calibration (cached) unless ``cal`` is given, keyed by precision, plus the FP4 ÷ FP8 and
    native ÷ FP8 ratios of tok/s/user."""
    shard = layout or default_layout(model, n_gpus)
    rows = precision_facts(model, hardware, n_gpus=n_gpus, concurrency=concurrency, cal=cal or shipped_calibration(),
                           framework=framework, tau=tau, isl=isl, osl=osl, layout=shard)
    by = {r["precision"]: r for r in rows}
    return {"rows": by, "fp4_over_fp8": by["fp4"]["vs_fp8"], "native_over_fp8": by["native"]["vs_fp8"],
            "native_recipe": by["native"]["recipe"], "layout": {k: int(v) for k, v in shard.items()}}
