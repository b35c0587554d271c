"""Fits, their bootstrap draws and predictions are keyed by a stable group_id (a hash of the key columns), not by
the joined label."""

from __future__ import annotations

import warnings

from conftest import RAW

from analysis import scaling
from analysis.ingest import ingest
from analysis.perfmodel.step import group_id


def test_fits_and_draws_carry_the_group_id():
    points = ingest([RAW / "h200"], RAW / "manifest.yml", progress=False).points
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)
        fits = scaling.fit_with_draws(points, n_boot=5)
    table, draws = fits.table, fits.draws
    keys = table["group_by"].iloc[0].split(",")
    for _, row in table.iterrows():
        assert row["group_id"] == group_id({k: row[k] for k in keys})
    assert table["group_id"].is_unique and set(draws["group_id"]) <= set(table["group_id"])
    assert (draws.groupby("group_id")["group"].nunique() == 1).all()
    # Predictions read the draws by id: relabelling every draw row changes nothing.
    relabelled = draws.assign(group="renamed")
    a = scaling.predict(table, batch=[4, 64], draws=draws)
    b = scaling.predict(table, batch=[4, 64], draws=relabelled)
    assert a["step_ms_lo"].notna().any() and a["step_ms_lo"].equals(b["step_ms_lo"])
