"""The measured points beside a prediction: the same model on the same hardware family, each predicted again at its
own conditions with a calibration that never saw its configuration group.

A prediction for a configuration nobody measured is only as good as the model is where someone did. For every
measured point of the config's model on its hardware family (a published table or a raw log), this module gives:

- the point as measured (GPUs, concurrency, speculation and acceptance, lengths, workload, source and row);
- the model's prediction at the point's **own** deployment (its GPUs, parallelism, speculation, lengths), calibrated
  with the point's configuration group left out (:func:`analysis.perfmodel.validate.validate`'s rule), and how far
  that is from the measurement;
- when the point has the config's GPU count and one of its concurrencies, the config's own prediction there and what
  differs between the two (speculation, precision, lengths, framework), so a gap is read with its reasons.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import physics, schema, specs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import predict as pr
from analysis.perfmodel import step as st

COMPARED = ("spec_method", "precision", "isl", "osl", "framework", "workload")


def _same(a, b) -> bool:
    fa, fb = cb._num(a), cb._num(b)
    if fa == fa and fb == fb:
        return fa == fb
    return str(a or "").strip().lower() == str(b or "").strip().lower()


def differences(dep: st.Deployment, row: dict) -> list[str]:
    """The conditions in which the measured ``row`` differs from the config ``dep`` (column names; a workload
    other than random lengths, e.g. AgentX traces, counts as a difference; a config at ``recipe: native`` matches
    any precision label; a config's ``date``, when it names one, is compared too; ``kv_dtype`` where the run's KV
    cache (its own, or its recipe's: :func:`analysis.perfmodel.calibrate.kv_dtype`) takes other bytes than the
    config's; ``length_spread`` where the same ISL and OSL were drawn at random around them,
    :func:`analysis.perfmodel.calibrate.range_ratio`)."""
    out = []
    for k in COMPARED:
        if k == "workload":
            w = str(row.get("workload") or "")
            if w and w not in ("random", "unknown", "nan", "None"):
                out.append(k)
            continue
        if k == "precision" and str(dep.precision).lower() == "native":
            continue  # the shipped recipe: whatever the source labels the checkpoint it ran
        if not _same(getattr(dep, k), row.get(k)):
            out.append(k)
    run = cb.deployment(row)  # the run as the model prices it: its recipe's KV cache, its lengths' spread
    if _kv_bytes(dep) != _kv_bytes(run):
        out.append("kv_dtype")  # the KV cache the run's recipe set (calibrate.kv_dtype) against the config's
    if run.range_ratio != dep.range_ratio and "isl" not in out and "osl" not in out:
        # the same nominal lengths, drawn differently: InferenceX's client draws each request's on [0.8·L, L]
        # (calibrate.LENGTH_RANGE_RATIO), a config runs them as given
        out.append("length_spread")
    if dep.date and str(row.get("date") or "") != dep.date:
        out.append("date")  # a config that names its software date is compared on it too
    return out


def _kv_bytes(dep: st.Deployment) -> float:
    """Bytes per cached value of the KV cache ``dep`` is priced at (:func:`analysis.perfmodel.step.kv_cache_dtype`);
    NaN when its model or dtype is unknown."""
    try:
        return physics.KV_BYTES_PER_VALUE.get(st.kv_cache_dtype(dep).lower(), math.nan)
    except (KeyError, ValueError):
        return math.nan


def same_model_rows(dep: st.Deployment, points: pd.DataFrame) -> pd.DataFrame:
    """Trusted serving points of ``dep``'s model on hardware of ``dep``'s family: the exact name (any case), else,
    when no point has that name, the names the spec tables read as the same model (``DeepSeek-R1`` finds
    ``DeepSeek-R1-0528``; :func:`matched_by` says which)."""
    if points.empty or "model" not in points.columns:
        return points.iloc[0:0]
    fam = specs.hardware(dep.hardware).family

    def family_of(h) -> str:
        try:
            return specs.hardware(str(h)).family
        except KeyError:
            return ""
    pts = points[schema.trusted(points)] if "flags" in points.columns else points
    names = pts["model"].astype(str)
    same = (names.str.lower() == dep.model.lower()).to_numpy()
    if not same.any():
        canon = specs.match_model_name(dep.model)
        same = np.array([canon is not None and specs.match_model_name(n) == canon for n in names], dtype=bool)
    on_family = np.array([family_of(h) == fam for h in pts["hardware"]], dtype=bool)
    sub = pts[same & on_family]
    return sub[pd.to_numeric(sub["tok_s_per_user"], errors="coerce") > 0]


def matched_by(dep: st.Deployment, rows: pd.DataFrame) -> str:
    """``"name"`` when the rows carry the config's model name, else the names they carry (the same model by the spec
    tables)."""
    names = sorted(set(rows["model"].astype(str)))
    return "name" if all(n.lower() == dep.model.lower() for n in names) else ", ".join(names)


def measured_beside(dep: st.Deployment, points: pd.DataFrame, prediction_rows: list[dict], *,
                    train: pd.DataFrame | None = None, full: cb.Calibration | None = None) -> dict:
    """``{"points": [...], "gpu_counts_measured": [...], "note": ...}`` for :func:`model_report`'s JSON."""
    rows = same_model_rows(dep, points)
    if rows.empty:
        return {"points": [], "gpu_counts_measured": [], "nearest_gpu_count": None, "matched_by": None}
    train = cb.training_table(points) if train is None else train
    full = cb.calibrate(train) if full is None else full
    by_conc = {float(r["concurrency"]): r for r in prediction_rows}
    newest = train[cb.newest(train)]
    key = lambda r: f"{r.get('source_file')}|{r.get('run_id')}|{r.get('source_line')}"  # noqa: E731
    group_of = {key(r): g for r, g in zip(newest[["source_file", "run_id", "source_line"]].to_dict("records"),
                                          newest["group_id"])}
    cals: dict = {}
    out = []
    for rec in rows.to_dict(orient="records"):
        own = cb.deployment(rec)
        conc = cb._num(rec.get("concurrency"))
        if conc != conc:
            conc = cb._num(rec.get("batch_size"))
        gid = group_of.get(key(rec))
        if gid is not None and gid not in cals:
            g = train[train["group_id"] == gid].iloc[0]
            cals[gid] = cb.calibrate(train[train["group_id"] != gid], warm=full, only=(g["family"], str(g["framework"])))
        cal = cals.get(gid, full)
        own_pred = pr.predict(own, [conc], cal, serving=True) if conc == conc else None
        p_own = own_pred.rows[0] if own_pred else None
        meas_u, meas_g = cb._num(rec.get("tok_s_per_user")), cb._num(rec.get("tok_s_per_gpu"))
        item = {
            "model": rec.get("model"), "hardware": rec.get("hardware"), "n_gpus": cb._num(rec.get("n_gpus")),
            "concurrency": conc, "spec_method": rec.get("spec_method"),
            "acceptance_length": cb._num(rec.get("acceptance_length")),
            "acceptance_source": rec.get("acceptance_source"), "precision": rec.get("precision"),
            "isl": cb._num(rec.get("isl")), "osl": cb._num(rec.get("osl")), "workload": rec.get("workload"),
            "framework": rec.get("framework"), "tok_s_per_user": meas_u, "tok_s_per_user_def":
            rec.get("tok_s_per_user_def"), "tok_s_per_gpu": meas_g, "source": _source(rec),
            "left_out_group": gid is not None,
            "predicted_at_own_conditions": None if p_own is None else {
                "tok_s_per_user": p_own["tok_s_per_user"], "tok_s_per_gpu": p_own["tok_s_per_gpu"],
                "tau": own_pred.config["tau"],
                "error_tok_s_per_user": p_own["tok_s_per_user"] / meas_u - 1.0,
                "error_tok_s_per_gpu": (p_own["tok_s_per_gpu"] / meas_g - 1.0) if meas_g > 0 else None},
            "config_prediction": None, "differs_from_config": differences(dep, rec),
            "input_tokens_per_output_token": input_per_output(rec),
        }
        if cb._num(rec.get("n_gpus")) == dep.n_gpus and conc in by_conc:
            r = by_conc[conc]
            item["config_prediction"] = {
                "tok_s_per_user": r["tok_s_per_user"], "tok_s_per_gpu": r["tok_s_per_gpu"],
                "ratio_tok_s_per_user": r["tok_s_per_user"] / meas_u,
                "ratio_tok_s_per_gpu": (r["tok_s_per_gpu"] / meas_g) if meas_g > 0 else None}
        out.append(item)
    counts = sorted({int(x["n_gpus"]) for x in out if x["n_gpus"] == x["n_gpus"]})
    nearest = min(counts, key=lambda n: (abs(math.log(n / max(dep.n_gpus, 1))), n)) if counts else None
    return {"points": out, "gpu_counts_measured": counts, "nearest_gpu_count": nearest,
            "matched_by": matched_by(dep, rows),
            "median_error_tok_s_per_user_at_own_conditions": _median(
                [x["predicted_at_own_conditions"]["error_tok_s_per_user"] for x in out
                 if x["predicted_at_own_conditions"]])}


def input_per_output(rec: dict) -> float | None:
    """Input tokens per output token the run served, from its own throughput columns: (total − output) ÷ output
    tok/s (input tokens counted whether prefilled or served from a prefix cache, as the source's total counts
    them). None where either is missing, not finite or not positive, or the total is below the output."""
    total, out = cb._num(rec.get("total_tok_s")), cb._num(rec.get("output_tok_s"))
    if not (total == total and out == out and out > 0 and total >= out and math.isfinite(total)):
        return None
    return (total - out) / out


def _source(rec: dict) -> str:
    """The point's source address, else its file (``unknown`` is no address)."""
    url = str(rec.get("source_url") or "")
    return url if url and url not in ("unknown", "nan", "None") else str(rec.get("source_file") or "unknown")


def _median(xs) -> float | None:
    xs = [abs(x) for x in xs if x == x]
    return float(np.median(xs)) if xs else None
