"""The array-level estimator on synthetic data with known answers: recovery, degeneracy, failure, the batched
bootstrap against the one-draw-at-a-time refit it replaced, and fits that keep their draws."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import least_squares, nnls

from analysis import data, physics, scaling
from analysis.scaling import estimator

BATCHES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512], float)
TRUE = np.array([5.0, 0.02, 2e-6, 0.0])  # t0, t1, t2, tm in ms


def _sweep(coef, *, contexts=(1024.0, 4096.0), experts=None):
    b = np.tile(BATCHES, len(contexts))
    ctx = np.repeat(contexts, len(BATCHES))
    cov = physics.expert_coverage(b, *experts) if experts else None
    return b, ctx, cov, estimator.step_time(coef, b, ctx, cov)


def test_noise_free_dense_coefficients_are_recovered():
    b, ctx, _, y = _sweep(TRUE)
    fit = scaling.fit_step_times(b, ctx, y, n_boot=0)
    np.testing.assert_allclose(fit.coef[:3], TRUE[:3], rtol=1e-7)
    assert fit.coef[3] == 0 and list(fit.used) == [True, True, True, False]
    assert fit.cv_error < 1e-8 and fit.fit_error_max < 1e-9 and not fit.degenerate


def test_noise_free_moe_coefficients_are_recovered():
    coef = np.array([4.0, 0.015, 0.0, 0.05])
    b, _, cov, y = _sweep(coef, contexts=(1024.0,), experts=(128, 8))
    fit = scaling.fit_step_times(b, None, y, coverage=cov, n_boot=0)
    np.testing.assert_allclose(fit.coef, coef, rtol=1e-7)


def test_an_unidentified_term_is_reported_and_warned():
    # Data whose best line has t1 < 0 (no physical step does): the fit rests on the bound 0, says so, and warns.
    coef = np.array([5.0, -0.002, 3e-6, 0.0])
    b, ctx, _, y = _sweep(coef)
    with pytest.warns(scaling.ScalingWarning, match="t1_ms at bound 0 ms"):
        fit = scaling.fit_step_times(b, ctx, y, n_boot=0, label="synthetic")
    assert fit.active_bounds == [("t1_ms", 0.0)] and fit.coef[1] == 0.0
    # A coverage column that is constant is the same column as t0: the design is rank-deficient.
    with pytest.warns(scaling.ScalingWarning, match="rank-deficient"):
        fit = scaling.fit_step_times(b, ctx, estimator.step_time(TRUE, b, ctx), coverage=np.full(len(b), 128.0),
                                     n_boot=0)
    assert fit.rank_deficient


def test_a_physical_floor_is_an_active_bound_when_the_data_sit_below_it():
    b, ctx, _, y = _sweep(TRUE)
    fit = scaling.fit_step_times(b, ctx, y, lower=[0, 0.03, 0, 0], n_boot=0, warn=False)
    # t1 is held at its floor (above the true 0.02); t2 compensates down to its own bound.
    assert fit.coef[1] == 0.03 and ("t1_ms", 0.03) in fit.active_bounds


def test_solver_failure_raises():
    b, ctx, _, y = _sweep(TRUE)
    y = y * np.exp(np.sin(np.arange(len(y))) * 0.3)  # far from the start: one iteration cannot converge
    with pytest.raises(scaling.FitError, match="did not converge in 1 iterations"):
        scaling.fit_step_times(b, ctx, y, n_boot=0, max_iter=1)
    with pytest.raises(ValueError, match="finite and > 0"):
        scaling.fit_step_times(b, ctx, np.where(b == 8, np.nan, y), n_boot=0)


# --- the batched solver against scipy, one problem at a time ------------------------------------------
def _scipy_solve(X, y, lower):
    """The one-at-a-time solver the batch model used before (bounded soft-L1 on relative residuals)."""
    used = np.any(X != 0, axis=0)
    A = X[:, used] / y[:, None]
    start = np.maximum(nnls(A, np.ones(len(y)))[0], lower[used])
    res = least_squares(lambda t: A @ t - 1.0, start, jac=lambda t: A, bounds=(lower[used], np.inf),
                        loss="soft_l1", f_scale=scaling.F_SCALE, x_scale="jac", method="trf", ftol=1e-12,
                        xtol=1e-12, gtol=1e-12)
    out = np.zeros(X.shape[1])
    out[used] = res.x
    return out


def _noisy_sweep(seed=3, repeats=5, noise=0.03):
    rng = np.random.default_rng(seed)
    b, ctx, _, y = _sweep(TRUE)
    samples = [yi * rng.lognormal(0, noise, repeats) for yi in y]
    return b, ctx, np.array([np.median(s) for s in samples]), samples


def test_batched_draws_equal_scipy_refits_of_the_same_draws():
    b, ctx, y, samples = _noisy_sweep()
    X = estimator.design(b, ctx)
    lower = np.array([0.0, 0.0, 0.0, 0.0])
    idx, Y = estimator.bootstrap_inputs(y, samples, n_boot=40, rng=np.random.default_rng(0))
    coef, ok = scaling.solve(X[idx], Y, lower=lower)
    assert ok.all()
    for d in range(len(idx)):
        ref = _scipy_solve(X[idx[d]], Y[d], lower)
        # Same data, same minimum: predicted step times agree to solver tolerance.
        np.testing.assert_allclose(X @ coef[d], X @ ref, rtol=1e-6)


def _reference_bootstrap(X, y, samples, lower, n_boot, seed):
    """The old bootstrap: one scipy refit per draw, repeats resampled point by point."""
    rng = np.random.default_rng(seed)
    draws = np.empty((n_boot, 4))
    for i in range(n_boot):
        idx = rng.integers(0, len(y), len(y))
        yi = np.array([np.median(rng.choice(samples[j], len(samples[j]))) for j in idx])
        draws[i] = _scipy_solve(X[idx], yi, lower)
    return draws


def test_batched_bootstrap_gives_the_same_intervals_within_monte_carlo_error():
    b, ctx, y, samples = _noisy_sweep()
    X = estimator.design(b, ctx)
    n = 400
    fast = scaling.fit_step_times(b, ctx, y, samples=samples, n_boot=n, seed=1, cv=False, warn=False).draws
    slow = _reference_bootstrap(X, y, samples, np.zeros(4), n, seed=2)
    assert len(fast) == n
    for i in range(3):
        f_lo, f_hi = np.percentile(fast[:, i], [2.5, 97.5])
        s_lo, s_hi = np.percentile(slow[:, i], [2.5, 97.5])
        width = s_hi - s_lo
        # Two independent 400-draw bootstraps: their interval ends differ by Monte-Carlo error, a fraction of
        # the width (about a tenth here), never by the width itself.
        assert abs(f_lo - s_lo) < 0.25 * width and abs(f_hi - s_hi) < 0.25 * width
        assert np.std(fast[:, i]) == pytest.approx(np.std(slow[:, i]), rel=0.2)


def _synthetic_points(n_groups: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_groups):
        coef = TRUE * rng.uniform(0.5, 2.0, 4)
        b, ctx, _, y = _sweep(coef)
        for bi, ci, yi in zip(b, ctx, y):
            reps = list(yi * rng.lognormal(0, 0.02, 5))
            rows.append({"model": f"synthetic-{g:04d}", "phase": "decode", "batch_size": bi, "context_len": ci,
                         "step_ms": float(np.median(reps)), "step_ms_samples": reps, "tokens_per_step": 1.0,
                         "n_gpus": 1.0})
    return pd.DataFrame(rows)


def test_fitting_a_hundred_groups_takes_cpu_seconds_not_minutes():
    points = _synthetic_points(100)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)
        result = scaling.fit_with_draws(points, by=["model"], n_boot=200)
    cpu = time.process_time() - start
    assert (result.table["status"] == "fitted").all() and len(result.draws) == 100 * 200
    # One scipy refit per draw cost ~0.27 s of CPU per group (27 s here); batched draws cost ~0.01 s.
    assert cpu < 10.0, f"{cpu:.1f} s of CPU for 100 groups"


def test_fits_keep_no_state_in_attrs_and_their_draws_round_trip(tmp_path):
    points = _synthetic_points(3)
    result = scaling.fit_with_draws(points, by=["model"], n_boot=30)
    assert result.table.attrs == {}
    assert (result.table["group_by"] == "model").all()
    fits_path, side = data.write_fits(result.table, result.draws, tmp_path / "fits.csv")
    assert side == tmp_path / "fits.draws.parquet"
    fits, draws = data.load_fits(fits_path)
    in_memory = scaling.predict(result.table, batch=[8, 64], draws=result.draws)
    from_files = scaling.predict(fits, batch=[8, 64], draws=draws)
    cols = ["step_ms", "step_ms_lo", "step_ms_hi", "tok_s_lo", "tok_s_hi"]
    np.testing.assert_allclose(from_files[cols].to_numpy(float), in_memory[cols].to_numpy(float), rtol=1e-12)
    # Residuals find the grouping in the table itself.
    res = scaling.residuals(points, fits)
    assert len(res) == len(points) and res["rel_error"].abs().max() < 0.1


def test_stacked_solves_equal_each_solve_alone_to_the_last_bit():
    """Calls with the same shape share their Newton steps in solve_many; each keeps its own bounds, start and
    stopping rule, so its result is the one it gets alone (bootstrap draws, folds, floors, MoE terms mixed)."""
    rng = np.random.default_rng(7)
    calls = []
    for k in range(40):
        coef = TRUE * rng.uniform(0.5, 2.0, 4) + np.array([0, 0, 0, 0.05 if k % 3 == 0 else 0.0])
        b, ctx, cov, y = _sweep(coef, contexts=(1024.0, 4096.0)[: 1 + k % 2], experts=(128, 8) if k % 3 == 0 else None)
        y = y * rng.lognormal(0, 0.03, len(y))
        X = estimator.design(b, ctx if k % 2 else None, cov)
        lower = np.array([0.0, 0.02 * (k % 4 == 1), 0.0, 0.0])  # some fits sit on a t1 floor
        idx = rng.integers(0, len(y), (int(rng.integers(1, 60)), len(y)))
        calls += [estimator.Solve(X, y, lower=lower),
                  estimator.Solve(X, y, weights=rng.integers(0, 2, (5, len(y))).astype(float), lower=lower),
                  estimator.Solve(X[idx], y[idx], lower=lower, x0=coef)]
    stacked = estimator.solve_many(calls)
    assert len({(c.X.shape[-2], int(np.any(np.asarray(c.X) != 0, axis=tuple(range(c.X.ndim - 1))).sum()))
                for c in calls}) < len(calls) / 10  # most calls share a stack
    for call, (coef, ok) in zip(calls, stacked):
        alone, ok_alone = estimator.solve(call.X, call.y, weights=call.weights, lower=call.lower, x0=call.x0)
        assert np.array_equal(coef, alone) and np.array_equal(ok, ok_alone)
    assert all(ok.all() for _, ok in stacked)


def test_groups_fitted_together_equal_groups_fitted_one_by_one(monkeypatch):
    from analysis.scaling import fitting

    points = _synthetic_points(24)
    points.loc[points["model"] == "synthetic-0003", "step_ms_samples"] = None  # no repeats: measured values drawn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)
        together = scaling.fit_with_draws(points, by=["model"], n_boot=50, jobs=1)
        monkeypatch.setattr(fitting, "GROUPS_PER_BATCH", 1)
        alone = scaling.fit_with_draws(points, by=["model"], n_boot=50, jobs=1)
    pd.testing.assert_frame_equal(together.table, alone.table, check_exact=True)
    pd.testing.assert_frame_equal(together.draws, alone.draws, check_exact=True)


def test_batches_of_groups_are_bounded_by_groups_and_points(monkeypatch):
    from analysis.scaling import fitting

    monkeypatch.setattr(fitting, "GROUPS_PER_BATCH", 3)
    monkeypatch.setattr(fitting, "POINTS_PER_BATCH", 100)
    sizes = [10, 10, 10, 10, 60, 60, 500, 5]
    batches = fitting._batches(list(range(len(sizes))), sizes)
    assert batches == [[0, 1, 2], [3, 4], [5], [6], [7]]
    assert [i for b in batches for i in b] == list(range(len(sizes)))
