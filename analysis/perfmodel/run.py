"""The two things ``perfclaims model`` does, as JSON-ready dicts: predict a configuration, validate the model."""

from __future__ import annotations

import pandas as pd

from analysis import specs
from analysis.perfmodel import beside as bs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import predict as pr
from analysis.perfmodel import step as st
from analysis.perfmodel import validate as va

DEFAULT_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def model_report(dep: st.Deployment, points: pd.DataFrame, *, concurrency=DEFAULT_CONCURRENCY, n_boot: int = 20,
                 seed: int = 0) -> dict:
    """``{"rows": [...], "config": {...}, "calibration": {...}, "measured": {...}}`` for ``dep`` calibrated on
    ``points``; ``measured`` holds the same model's measured points on the same hardware family, each predicted at
    its own conditions with its group left out (:mod:`analysis.perfmodel.beside`)."""
    train = cb.training_table(points)
    if train.empty:
        raise ValueError("the points table has no usable point of a model and hardware the spec tables know: "
                         "nothing to calibrate on")
    cal = cb.calibrate(train)
    only = (specs.hardware(dep.hardware).family, dep.framework)
    draws = cb.bootstrap(train, cal, n_boot=n_boot, seed=seed, only=only) if n_boot else []
    p = pr.predict(dep, concurrency, cal, draws, serving=True)
    fitted, fits = cb.newest(train), cb.calibrating(train)
    calibration = {**p.calibration, "training_rows": int(fits.sum()), "rerun_rows": int((~fitted).sum()),
                   "unstated_rows": int((fitted & ~fits).sum()),
                   "training_groups": cal.groups,
                   "rows_in_level": cal.rows.get(p.calibration["level"].replace(" (any framework)", ""), len(train))}
    measured = bs.measured_beside(dep, points, p.rows, train=train, full=cal)
    return {"rows": p.rows, "config": p.config, "calibration": calibration, "measured": measured}


def validation_report(points: pd.DataFrame) -> dict:
    return va.validate(points)
