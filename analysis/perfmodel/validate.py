"""Leave-one-group-out validation: calibrate without a configuration group, predict its measured points.

For every configuration group (the batch fit's grouping, :data:`analysis.scaling.inputs.DEFAULT_BY`) the whole
calibration is refitted on the other groups' rows, and the group's points are predicted at their measured
concurrencies (step-timing sweeps: at their batch sizes). A group's error is mean |predicted / measured − 1| over
its points, for tok/s/user and tok/s/GPU; the summary is the median and 90th percentile over the groups with at
least :data:`MIN_CONCURRENCIES` distinct concurrencies. Each point keeps the term that dominates its predicted step
(``dominant``), its date and the software drift its prediction applied (``software_drift``: the step-time factor
of its cell's re-runs on that date, 1 for the newest runs' software; :meth:`Calibration.date_factor`). The left-out
group's points never enter its calibration (the solver starts from the all-data fit, which moves its start point
only). Each group is also predicted by the all-data calibration, its own points included (``in_sample``): how much
of the error is the model's form rather than the leaving out.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import predict as pr
from analysis.text import plain

MIN_CONCURRENCIES = 3


def validate(points: pd.DataFrame, *, min_concurrencies: int = MIN_CONCURRENCIES,
             train: pd.DataFrame | None = None, full: cb.Calibration | None = None) -> dict:
    """The JSON-ready validation report (keys as ``perfclaims model --validate --json`` prints them). ``train``
    and ``full``: the training table of ``points`` and its calibration where the caller already has them."""
    train = cb.training_table(points) if train is None else train
    full = cb.calibrate(train) if full is None else full
    groups = []
    fitted = cb.newest(train)  # every newest group is predicted and scored ...
    fits = cb.calibrating(train)  # ... the parameters rest on those whose source states their conditions and layout
    unstated, layout = cb.left_out_of_fit(train)
    for gid, g in train[fitted].groupby("group_id", sort=True):
        conc_col = np.where(g["serving"], g["concurrency_nominal"], g["batch"])
        if len(np.unique(conc_col)) < min_concurrencies:
            continue
        rest = train[train["group_id"] != gid]
        first = g.iloc[0]
        cal = cb.calibrate(rest, warm=full, only=(first["family"], str(first["framework"])))
        errs_u, errs_g, pts, plain_u, plain_g, own_u, own_g = [], [], [], [], [], [], []
        share, share_at = cal.prefill_share(first["family"], str(first["framework"]), str(first["precision"]))
        for (_, row), c in zip(g.iterrows(), conc_col):
            dep = cb.deployment(row.to_dict())
            pred = pr.predict(dep, [c], cal, serving=bool(row["serving"]))
            p = pred.rows[0]
            meas_u = float(row["tok_s_per_user_measured"])
            meas_g = float(row["tok_s_per_gpu"]) if bool(row["serving"]) else \
                float(row["tok_s_measured"]) / max(dep.n_gpus, 1)
            errs_u.append(abs(p["tok_s_per_user"] / meas_u - 1))
            if meas_g == meas_g and meas_g > 0:
                errs_g.append(abs(p["tok_s_per_gpu"] / meas_g - 1))
            # the same point at the newest runs' software: what the errors would be without the measured drift
            q = p if pred.calibration["software_drift"]["step_time_factor"] == 1.0 else \
                pr.predict(replace(dep, date=""), [c], cal, serving=bool(row["serving"])).rows[0]
            plain_u.append(abs(q["tok_s_per_user"] / meas_u - 1))
            # the same point with the group in the calibration: what the model's form leaves, held out or not
            o = pr.predict(dep, [c], full, serving=bool(row["serving"])).rows[0]
            own_u.append(abs(o["tok_s_per_user"] / meas_u - 1))
            if meas_g == meas_g and meas_g > 0:
                plain_g.append(abs(q["tok_s_per_gpu"] / meas_g - 1))
                own_g.append(abs(o["tok_s_per_gpu"] / meas_g - 1))
            pts.append({"concurrency": float(c), "measured_tok_s_per_user": meas_u,
                        "predicted_tok_s_per_user": p["tok_s_per_user"], "measured_tok_s_per_gpu": meas_g,
                        "predicted_tok_s_per_gpu": p["tok_s_per_gpu"], "dominant": p["dominant"],
                        "date": dep.date or None,
                        "software_drift": pred.calibration["software_drift"]["step_time_factor"]})
        groups.append({
            "group": " | ".join(str(first[k]) for k in ("model", "hardware", "precision", "framework")) +
                     f" | {int(first['n_gpus'])} GPU | TP{plain(first['tp'])} EP{plain(first['ep'])} "
                     f"DP{plain(first['dp'])} | {first['spec_method']} | ISL {plain(first['isl'])} OSL {plain(first['osl'])}",
            "group_id": gid, "family": first["family"], "framework": str(first["framework"]),
            "workload": None if pd.isna(first.get("workload")) else str(first["workload"]),
            "serving": bool(first["serving"]), "calibrates": bool(cb.calibrating(g).all()),
            "range_ratio": cb.range_ratio(first.to_dict()),  # lengths drawn on [ratio·L, L] (1: fixed)
            "conditions_stated": bool(cb.conditions_stated(g).all()),
            "layout_consistent": bool(cb.layout_consistent(g).all()),
            "config": {k: (None if pd.isna(first[k]) else (first[k].item() if hasattr(first[k], "item") else first[k]))
                       for k in ("model", "hardware", "n_gpus", "tp", "ep", "dp", "precision", "spec_method",
                                 "isl", "osl", "framework", "disagg", "n_prefill_gpus", "n_decode_gpus")},
            "points": pts, "error_tok_s_per_user": float(np.mean(errs_u)),
            "error_tok_s_per_gpu": float(np.mean(errs_g)) if errs_g else None,
            "calibrated_on": cal.rows.get(f"{first['family']} · {first['framework']}", 0),
            "prefill_share": share, "prefill_share_measured_at": share_at or None,
            "error_tok_s_per_user_without_drift": float(np.mean(plain_u)),
            "error_tok_s_per_gpu_without_drift": float(np.mean(plain_g)) if plain_g else None,
            "error_tok_s_per_user_in_sample": float(np.mean(own_u)),
            "error_tok_s_per_gpu_in_sample": float(np.mean(own_g)) if own_g else None,
        })
    eu, eg = _errors(groups)
    return {"groups": sorted(groups, key=lambda g: -(g["error_tok_s_per_gpu"] or 0)), **_summary(groups),
            # the same percentile by nearest rank (no interpolation between two groups), and the groups beyond 35%
            "p90_rank_error_tok_s_per_gpu": _rank(eg, 0.9), "p90_rank_error_tok_s_per_user": _rank(eu, 0.9),
            # how far the median moves with which groups happened to be measured: [5th, 95th] percentile of the
            # median over the groups resampled with replacement
            "median_interval_tok_s_per_gpu": _median_interval(eg), "median_interval_tok_s_per_user": _median_interval(eu),
            "beyond_35_tok_s_per_gpu": int((eg > 0.35).sum()), "beyond_35_tok_s_per_user": int((eu > 0.35).sum()),
            "by_kind": _by_kind(groups), "models": _models(groups), "without_drift": _without_drift(groups),
            # every group predicted by the calibration on all groups, its own included: the error the model's form
            # leaves when nothing is held out, against which the held-out medians above read
            "in_sample": _summary(groups, "_in_sample"),
            "held_out_ratio": held_out_ratio(groups),
            "n_groups": len(groups), "min_concurrencies": min_concurrencies,
            "rerun_spread": rerun_spread(train),
            "training_rows": int(fits.sum()), "training_groups": int(train.loc[fits, "group_id"].nunique()),
            "rerun_rows": int((~fitted).sum()), "unstated_rows": int(unstated.sum()),
            "unstated_groups": int(train.loc[unstated, "group_id"].nunique()),
            "layout_rows": int(layout.sum()), "layout_groups": int(train.loc[layout, "group_id"].nunique())}


BAND = (5, 95)  # percentiles of measured ÷ predicted over the held-out points: a prediction's error band


def held_out_ratio(groups: list[dict]) -> dict:
    """Measured ÷ predicted over every held-out point of ``groups`` (tok/s/user and tok/s/GPU): the
    :data:`BAND` percentiles, what a prediction of a configuration nobody measured should be widened by, since
    the calibration's bootstrap and the collectives' range leave the model's own error out. Each group weighs the
    same (its points share one group's weight, :func:`weighted_percentile`): a new configuration is one more group,
    and pooling points would let the 18-concurrency H200 sweeps, which the model predicts best, narrow the band
    for the serving runs of three concurrencies."""
    out: dict = {"percentiles": list(BAND), "weighting": "group"}
    for key in ("tok_s_per_user", "tok_s_per_gpu"):
        ratios, weights, n_groups = [], [], 0
        for g in groups:
            r = [pt[f"measured_{key}"] / pt[f"predicted_{key}"] for pt in g["points"]
                 if pt[f"predicted_{key}"] and pt[f"predicted_{key}"] > 0 and pt[f"measured_{key}"] > 0]
            if r:
                ratios += r
                weights += [1.0 / len(r)] * len(r)
                n_groups += 1
        out[key] = [weighted_percentile(ratios, weights, q) for q in BAND] if ratios else None
        out[f"points_{key}"] = len(ratios)
        out[f"groups_{key}"] = n_groups
    return out


def weighted_percentile(values, weights, q: float) -> float:
    """The ``q``-th percentile of ``values`` under ``weights``: each value sits at the middle of its weight's share
    of the cumulative weight, linear in between (equal weights: the Hazen percentile, ``(i − ½) / n``)."""
    v, w = np.asarray(values, float), np.asarray(weights, float)
    order = np.argsort(v)
    v, w = v[order], w[order]
    at = (np.cumsum(w) - 0.5 * w) / w.sum()
    return float(np.interp(q / 100.0, at, v))


MEDIAN_BOOTSTRAP = 4000  # resamples of the groups for the median's interval (seeded: the same report every run)


def _median_interval(a: np.ndarray, n: int = MEDIAN_BOOTSTRAP, seed: int = 0) -> list[float] | None:
    """[5th, 95th] percentile of the median of ``a`` over ``n`` resamples of its groups with replacement."""
    if len(a) < 2:
        return None
    draws = np.random.default_rng(seed).choice(a, size=(n, len(a)), replace=True)
    return [float(v) for v in np.percentile(np.median(draws, axis=1), [5, 95])]


def _rank(a: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile by nearest rank: the smallest error at least a share ``q`` of the groups do not exceed."""
    if not len(a):
        return None
    return float(np.sort(a)[int(np.ceil(q * len(a))) - 1])


def _errors(groups: list[dict], suffix: str = "") -> tuple[np.ndarray, np.ndarray]:
    """The groups' tok/s/user and tok/s/GPU errors (``suffix``: ``_without_drift`` for the drift-free ones), the
    latter over the groups that have one."""
    eu = np.array([g[f"error_tok_s_per_user{suffix}"] for g in groups])
    eg = np.array([g[f"error_tok_s_per_gpu{suffix}"] for g in groups if g[f"error_tok_s_per_gpu{suffix}"] is not None])
    return eu, eg


def _summary(groups: list[dict], suffix: str = "") -> dict:
    """Median and (interpolated) 90th percentile of both errors over ``groups`` (None without any)."""
    eu, eg = _errors(groups, suffix)
    q = lambda a, p: float(np.percentile(a, p)) if len(a) else None  # noqa: E731
    return {"median_error_tok_s_per_gpu": q(eg, 50), "median_error_tok_s_per_user": q(eu, 50),
            "p90_error_tok_s_per_gpu": q(eg, 90), "p90_error_tok_s_per_user": q(eu, 90)}


def _by_kind(groups: list[dict]) -> dict:
    """:func:`_summary` over the serving runs and over the step-timing sweeps, apart: a sweep times one GPU's step
    with no scheduler, so its tok/s/GPU error is its tok/s/user error."""
    out = {}
    for kind, serving in (("serving", True), ("step_sweeps", False)):
        gs = [g for g in groups if bool(g.get("serving")) is serving]
        out[kind] = {"n_groups": len(gs), **_summary(gs)}
    return out


def _models(groups: list[dict]) -> dict:
    """Validated groups per model (the left-out group's model is still calibrated through its other groups)."""
    out: dict = {}
    for g in groups:
        out[str(g["config"]["model"])] = out.get(str(g["config"]["model"]), 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _without_drift(groups: list[dict]) -> dict:
    """:func:`_summary` with every point predicted at the newest runs' software (no measured drift), and how many
    groups the drift moved: what the summary owes to re-runs of sibling configurations on the same dates."""
    moved = sum(any(abs(pt["software_drift"] - 1) >= 5e-4 for pt in g["points"]) for g in groups)
    return {"groups_with_drift": int(moved), **_summary(groups, "_without_drift")}


RERUN_GAPS = ((0, 7), (8, 30), (31, 90), (91, 100_000))  # days between a re-run and its configuration's newest run


def rerun_spread(train: pd.DataFrame) -> list[dict]:
    """How far the same configuration's step time moved between dated re-runs (:func:`analysis.perfmodel.calibrate
    .drift_table`, no model in between), by the days between a re-run and the configuration's newest run: the median
    |step-time ratio − 1| and how many configuration-dates: the drift between groups measured on different dates,
    which the model corrects only where a cell's re-runs measured it."""
    gaps, moves = [], []
    for cell in cb.drift_table(train).values():
        for dates in cell.values():
            ref = [d for d, v in dates.items() if v == 0.0]
            if not ref:
                continue
            newest = pd.Timestamp(max(ref)[:10])
            for d, v in dates.items():
                if v != 0.0:
                    gaps.append((newest - pd.Timestamp(d[:10])).days)
                    moves.append(abs(float(np.expm1(abs(v)))))
    gaps, moves = np.array(gaps), np.array(moves)
    out = []
    for lo, hi in RERUN_GAPS:
        m = (gaps >= lo) & (gaps <= hi)
        out.append({"days_from": lo, "days_to": hi, "configuration_dates": int(m.sum()),
                    "median_step_time_change": float(np.median(moves[m])) if m.any() else None})
    return out
