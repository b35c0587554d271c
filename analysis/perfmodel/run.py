"""The two things ``perfclaims model`` does, as JSON-ready dicts: predict a configuration, validate the model."""

from __future__ import annotations

import pandas as pd

from analysis import specs
from analysis.perfmodel import beside as bs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import predict as pr
from analysis.perfmodel import step as st
from analysis.perfmodel import validate as va
from analysis.perfmodel import words

DEFAULT_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def model_report(dep: st.Deployment, points: pd.DataFrame, *, concurrency=DEFAULT_CONCURRENCY, n_boot: int = 20,
                 seed: int = 0, band: dict | None = None) -> dict:
    """``{"rows": [...], "config": {...}, "calibration": {...}, "measured": {...}}`` for ``dep`` calibrated on
    ``points``; ``measured`` holds the same model's measured points on the same hardware family, each predicted at
    its own conditions with its group left out (:mod:`analysis.perfmodel.beside`).

    Each row's interval is the widest of the calibration's bootstrap, the collectives' measured range and the
    model's own error on configurations it never saw (``band``: :func:`held_out_band`, the validation's measured ÷
    predicted percentiles; computed from ``points`` when not given); ``interval_parts`` keeps the first two apart."""
    train = cb.training_table(points)
    if train.empty:
        raise ValueError("the points table has no usable point of a model and hardware the spec tables know: "
                         "nothing to calibrate on")
    cal = cb.calibrate(train)
    only = (specs.hardware(dep.hardware).family, dep.framework)
    draws = cb.bootstrap(train, cal, n_boot=n_boot, seed=seed, only=only) if n_boot else []
    p = pr.predict(dep, concurrency, cal, draws, serving=True)
    if p.config["tau_source"] == words.TAU_MEASURED:  # a config's acceptance length is what it asks, not a run's
        p.config["tau_source"] = words.TAU_GIVEN
    fitted, fits = cb.newest(train), cb.calibrating(train)
    unstated, layout = cb.left_out_of_fit(train)
    calibration = {**p.calibration, "training_rows": int(fits.sum()), "rerun_rows": int((~fitted).sum()),
                   "unstated_rows": int(unstated.sum()), "layout_rows": int(layout.sum()),
                   "training_groups": cal.groups,
                   "rows_in_level": cal.rows.get(p.calibration["level"].replace(" (any framework)", ""), len(train))}
    # groups of the config's model (as the spec tables name it) that calibrate the parameters: 0 for a model the
    # calibration has not seen, whose prediction the held-out band (measured on seen models) covers least
    name = specs.match_model_name(dep.model) or dep.model
    same = {m for m in train["model"].astype(str).unique() if (specs.match_model_name(m) or m) == name}
    own = train["model"].astype(str).isin(same)
    calibration["model_calibrating_groups"] = int(train.loc[fits & own, "group_id"].nunique())
    measured = bs.measured_beside(dep, points, p.rows, train=train, full=cal)
    band = band if band is not None else held_out_band(points, train=train, full=cal)
    calibration["held_out_ratio"] = band
    for row in p.rows:
        widen(row, band)
    return {"rows": p.rows, "config": p.config, "calibration": calibration, "measured": measured}


def widen(row: dict, band: dict) -> None:
    """``row``'s intervals widened to the held-out error band (measured ÷ predicted percentiles): a 90% band of
    what the validation measured, not only the calibration's spread; the calibration's own interval stays in
    ``interval_parts``."""
    parts = {}
    for key in ("tok_s_per_user", "tok_s_per_gpu"):
        lo, hi, v = row[f"{key}_lo"], row[f"{key}_hi"], row[key]
        parts[key] = {"calibration": [lo, hi]}
        ratio = (band or {}).get(key)
        if ratio:
            parts[key]["held_out"] = [v * ratio[0], v * ratio[1]]
            row[f"{key}_lo"], row[f"{key}_hi"] = min(lo, v * ratio[0]), max(hi, v * ratio[1])
    row["interval_parts"] = parts


_BANDS: dict = {}


def held_out_band(points: pd.DataFrame, *, train: pd.DataFrame | None = None,
                  full: cb.Calibration | None = None) -> dict:
    """:func:`analysis.perfmodel.validate.held_out_ratio` of ``points``' validation, kept per table content in this
    process (the validation refits the model once per group: seconds); ``train`` and ``full`` as
    :func:`analysis.perfmodel.validate.validate` takes them."""
    key = int(pd.util.hash_pandas_object(points.astype(str), index=False).sum())
    if key not in _BANDS:
        _BANDS[key] = va.validate(points, train=train, full=full)["held_out_ratio"]
    return _BANDS[key]


def validation_report(points: pd.DataFrame, *, min_concurrencies: int = va.MIN_CONCURRENCIES) -> dict:
    train = cb.training_table(points)
    if train.empty:
        raise ValueError("the points table has no usable point of a model and hardware the spec tables know: "
                         "nothing to validate")
    return va.validate(points, min_concurrencies=min_concurrencies, train=train)
