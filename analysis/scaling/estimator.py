"""The batch model's estimator on arrays, shaped like ``scipy.optimize.curve_fit``.

A decode step for ``B`` sequences at mean context ``L`` costs ``t(B, L) = t0 + t1·B + t2·B·L + tm·C(B)`` ms
(weights once, per-sequence work, KV reads, and for MoE the expert weights of the ``C(B)`` distinct experts the
batch touches). :func:`fit_step_times` takes the measured arrays and returns a :class:`BatchFit`: coefficients,
bootstrap draws, leave-one-batch-out error, and which lower bounds are active. It raises :class:`FitError` when the
solver does not converge and warns with :class:`ScalingWarning` when the fit is degenerate.

The objective is soft-L1 (pseudo-Huber) on relative residuals ``t(B, L)/measured − 1`` with lower bounds on every
coefficient; it is convex, so every start reaches the same minimum. :func:`solve` minimises it for many weightings
at once — the full fit, each cross-validation fold and each bootstrap draw are rows of one batch — by projected
Newton steps with an exhaustive line search, so a thousand groups fit in seconds instead of refitting each draw.
The fit's steps are generators of :class:`Solve` requests (:func:`fit_step_times_steps`), so that many groups'
fits can be driven together (:func:`run_many`): :func:`solve_many` stacks the requests of the same shape into one
batch of rows, each keeping the result it would get alone.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

COEFS = ("t0_ms", "t1_ms", "t2_ms", "tm_ms")
# Relative residual below which soft_l1 is quadratic: step timings repeat to ~1%, configurations differ by more.
F_SCALE = 0.05
_ALPHAS = 0.5 ** np.arange(0, 21)  # line-search steps along the Newton step, tried at once
_GRAD_ALPHAS = 0.5 ** np.arange(0, 21, 4)  # … and along the scaled gradient, a fallback
MAX_ITER = 200


class ScalingWarning(UserWarning):
    """A fit that is degenerate: a coefficient pinned at its bound, too few distinct batches, no MoE geometry."""


class FitError(RuntimeError):
    """The solver did not reach the minimum (not converged, or non-finite on the way)."""


def design(batch, context=None, coverage=None) -> np.ndarray:
    """Design matrix with the four coefficient columns (1, B, B·L, C(B)); a term left out is a zero column."""
    batch = np.asarray(batch, float)
    ctx = np.zeros_like(batch) if context is None else np.nan_to_num(np.asarray(context, float))
    cov = np.zeros_like(batch) if coverage is None else np.nan_to_num(np.asarray(coverage, float))
    return np.column_stack([np.ones_like(batch), batch, batch * ctx, cov])


def step_time(coef, batch, context=None, coverage=None) -> np.ndarray:
    """Step time (ms) of ``coef`` (4,) or draws (D, 4) at the given batches: (n,) or (D, n)."""
    X = design(np.atleast_1d(batch), context, coverage)
    return np.asarray(coef, float) @ X.T


def _loss(r, w, f):
    return (w * 2.0 * f * f * (np.sqrt(1.0 + (r / f) ** 2) - 1.0)).sum(axis=-1)


@dataclass
class Solve:
    """One call of :func:`solve` not made yet (its arguments): what the fit's steps ask for, so that many groups'
    solves can be made together (:func:`solve_many`)."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray | None = None
    lower: np.ndarray | None = None
    x0: np.ndarray | None = None
    f_scale: float = F_SCALE
    max_iter: int = MAX_ITER
    tol: float = 1e-12


def solve(X, y, *, weights=None, lower=None, x0=None, f_scale: float = F_SCALE, max_iter: int = MAX_ITER,
          tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Bounded soft-L1 least squares on relative residuals for D weightings at once.

    ``X`` (n, 4) or (D, n, 4); ``y`` (n,) or (D, n) measured step times; ``weights`` (D, n) row multiplicities
    (0 leaves a row out: a cross-validation fold; counts: a bootstrap draw); ``lower`` (4,) bounds (default 0).
    Terms whose column is zero everywhere stay at 0. Returns ``(coef (D, 4), converged (D,))``.
    """
    return solve_many([Solve(X, y, weights, lower, x0, f_scale, max_iter, tol)])[0]


def solve_many(calls: list[Solve]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The results of many :func:`solve` calls (``(coef, converged)`` each, in order), iterated together.

    Calls with the same number of points and terms (and solver settings) are stacked into one batch of rows and
    iterated at once: a thousand groups cost a few hundred array operations per Newton step instead of a few
    hundred each. Each call's rows keep their own bounds, start, scaling and stopping rule, so every result is the
    one the call alone gives, to the last bit.
    """
    problems = [_Problem.of(c) for c in calls]
    buckets: dict[tuple, list[int]] = {}
    for i, (c, pr) in enumerate(zip(calls, problems)):
        buckets.setdefault((pr.A.shape[1:], c.f_scale, c.max_iter, c.tol), []).append(i)
    out: list = [None] * len(calls)
    for (_, f_scale, max_iter, tol), members in buckets.items():
        for i, result in zip(members, _iterate([problems[i] for i in members], f_scale, max_iter, tol)):
            out[i] = result
    return out


@dataclass
class _Problem:
    """One call's rows, scaled: ``A`` (D, n, p) columns of the terms used over the measured times, normalised."""

    A: np.ndarray
    W: np.ndarray
    lo: np.ndarray
    u: np.ndarray
    norm: np.ndarray
    used: np.ndarray
    n_coef: int

    @classmethod
    def of(cls, c: Solve) -> _Problem:
        X = np.asarray(c.X, float)
        y = np.asarray(c.y, float)
        if y.ndim == 1:
            y = y[None, :]
        D = max(y.shape[0], 1 if c.weights is None else np.asarray(c.weights).shape[0])
        W = np.ones((D, y.shape[-1])) if c.weights is None else np.asarray(c.weights, float)
        Y = np.broadcast_to(y, W.shape)
        Xb = np.broadcast_to(X, (D,) + X.shape[-2:])
        used = np.any(Xb != 0, axis=(0, 1))
        lo_full = np.zeros(X.shape[-1]) if c.lower is None else np.asarray(c.lower, float)
        if not (np.isfinite(Y).all() and (Y > 0).all() and np.isfinite(Xb).all()):
            raise ValueError("step times must be finite and > 0, batch/context/coverage finite")
        A = Xb[:, :, used] / Y[:, :, None]
        norm = np.sqrt((A ** 2).sum(axis=1).max(axis=0))
        norm[norm == 0] = 1.0
        A = A / norm
        lo = lo_full[used] * norm
        p = A.shape[-1]
        if c.x0 is None:  # start from the unweighted linear least squares, clipped to the bounds
            u = np.linalg.lstsq(A[0] * np.sqrt(W[0])[:, None], np.sqrt(W[0]), rcond=None)[0]
            u = np.broadcast_to(u, (D, p)).copy()
        else:
            u = np.broadcast_to(np.asarray(c.x0, float)[..., used] * norm, (D, p)).copy()
        u = np.maximum(np.nan_to_num(u, nan=0.0), lo)
        return cls(A, W, lo, u, norm, used, X.shape[-1])


def _iterate(problems: list[_Problem], f: float, max_iter: int, tol: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Projected Newton iterations on the stacked rows of ``problems`` (same n and p).

    A problem stops as a whole where one alone would: when one of its rows goes non-finite (its rows left
    unconverged), and its box-constrained step is taken on the free/bound splits as soon as one of its rows needs
    them (see :func:`_box_newton_step`).
    """
    sizes = [len(pr.u) for pr in problems]
    A = np.concatenate([pr.A for pr in problems])
    W = np.concatenate([pr.W for pr in problems])
    u = np.concatenate([pr.u for pr in problems])
    lo = np.concatenate([np.broadcast_to(pr.lo, pr.u.shape) for pr in problems])
    owner = np.repeat(np.arange(len(problems)), sizes)
    D, p = u.shape
    At = A.transpose(0, 2, 1)
    eye = np.eye(p)
    subsets = [np.array(m, bool) for m in itertools.product((True, False), repeat=p)]
    converged = np.zeros(D, bool)
    live = np.arange(D)  # rows still iterating: a converged draw is not recomputed
    for _ in range(max_iter):
        if not len(live):
            break
        Al, Atl, Wl, ul, lol = A[live], At[live], W[live], u[live], lo[live]
        r = (Al @ ul[:, :, None])[:, :, 0] - 1.0
        z = 1.0 + (r / f) ** 2
        sq = np.sqrt(z)
        g = (Atl @ (Wl * 2.0 * r / sq)[:, :, None])[:, :, 0]
        H = (Atl * (Wl * 2.0 / (z * sq))[:, None, :]) @ Al
        active = (ul <= lol + 1e-13 * (1.0 + np.abs(lol))) & (g > 0)
        d = _box_newton_step(ul, g, H, lol, subsets, eye, owner[live])
        l0 = _loss(r, Wl, f)
        new = np.maximum(ul + d, lol)
        lbest = _loss((Al @ new[:, :, None])[:, :, 0] - 1.0, Wl, f)
        search = np.flatnonzero(~(lbest < l0))
        if len(search):  # the full step does not lower the loss: shorter Newton steps, then scaled gradient steps
            dg = -g[search] / np.maximum(np.diagonal(H[search], axis1=1, axis2=2), 1e-300)
            steps = np.concatenate([_ALPHAS[None, :, None] * d[search][:, None, :],
                                    _GRAD_ALPHAS[None, :, None] * dg[:, None, :]], axis=1)
            cand = np.maximum(ul[search][:, None, :] + steps, lol[search][:, None, :])  # (rows, steps, p)
            lc = _loss(cand @ Atl[search] - 1.0, Wl[search][:, None, :], f)
            best = np.argmin(lc, axis=1)
            new[search] = cand[np.arange(len(search)), best]
            lbest[search] = lc[np.arange(len(search)), best]
        better = lbest < l0
        new = np.where(better[:, None], new, ul)
        step = np.abs(new - ul).max(axis=1)
        pg = np.abs(np.where(active, 0.0, g)).max(axis=1)
        # Like scipy's ftol: a step that lowers the loss by less than 1e-12 of it ends the search (a flat valley
        # is a term the data do not identify; the predictions no longer move).
        flat = (l0 - lbest) <= 1e-12 * l0 + 1e-30
        done = (step <= tol * (1.0 + np.abs(ul).max(axis=1))) | (pg <= 1e-10 * (1.0 + l0)) | ~better | flat
        u[live] = new
        # A problem with a non-finite row stops there, all its live rows unconverged.
        broken = _any_per_owner(~np.isfinite(new).all(axis=1), owner[live], len(problems))
        converged[live] = done & ~broken
        live = live[~(done | broken)]
    out, at = [], 0
    for pr, n in zip(problems, sizes):
        ui = u[at:at + n]
        coef = np.zeros((n, pr.n_coef))
        coef[:, pr.used] = ui / pr.norm
        out.append((coef, converged[at:at + n] & np.isfinite(ui).all(axis=1)))
        at += n
    return out


def _any_per_owner(flags: np.ndarray, owner: np.ndarray, n_owners: int) -> np.ndarray:
    """Per row: whether any row with the same owner has its flag set."""
    if not flags.any():
        return np.zeros(len(flags), bool)
    return np.bincount(owner[flags], minlength=n_owners)[owner] > 0


def _box_newton_step(u, g, H, lo, subsets, eye, owner=None) -> np.ndarray:
    """The exact minimiser of the quadratic model ``g·d + ½ dᵀHd`` subject to ``u + d ≥ lo``, per row.

    With at most four terms every split into free terms and terms moved to their bound can be tried: each gives
    a candidate, the feasible one with the lowest model value is the constrained minimum (the model is convex).
    This takes a term to its bound in one step even when two columns are nearly collinear (t0 and a saturated
    expert coverage), where a projected Newton step would crawl along the valley. Rows of one ``owner`` (one
    :func:`solve` call) take the unconstrained step together when it stays feasible for all of them, else all go
    through the splits.
    """
    D, p = u.shape
    scale = np.trace(H, axis1=1, axis2=2)[:, None, None] / p
    full = -np.linalg.solve(H + eye * (1e-12 * scale + 1e-300), g[:, :, None])[:, :, 0]
    inside = np.all(u + full >= lo - 1e-12 * (1.0 + np.abs(lo)), axis=1) & np.isfinite(full).all(axis=1)
    if inside.all():  # the unconstrained step stays feasible: it is the constrained minimum too
        return full
    split = (np.ones(D, bool) if owner is None
             else _any_per_owner(~inside, owner, int(owner.max()) + 1))
    rows = np.flatnonzero(split)
    full[rows] = _split_step(u[rows], g[rows], H[rows], lo[rows], scale[rows], subsets, eye)
    return full


def _split_step(u, g, H, lo, scale, subsets, eye) -> np.ndarray:
    """The constrained minimum of the quadratic model over every free/bound split of the terms, per row."""
    D, p = u.shape
    best_q = np.full(D, np.inf)
    best_d = np.zeros((D, p))
    for free in subsets:
        dfix = np.where(free, 0.0, lo - u)
        rhs = -(g + (H @ dfix[:, :, None])[:, :, 0])
        Hm = np.where(free[:, None] & free[None, :], H, 0.0) + eye * np.where(free, 1e-12 * scale + 1e-300, 1.0)
        dfree = np.linalg.solve(Hm, np.where(free, rhs, 0.0)[:, :, None])[:, :, 0]
        d = np.where(free, dfree, dfix)
        feasible = np.all(u + d >= lo - 1e-12 * (1.0 + np.abs(lo)), axis=1) & np.isfinite(d).all(axis=1)
        q = (g * d).sum(axis=1) + 0.5 * (d[:, None, :] @ H @ d[:, :, None])[:, 0, 0]
        take = feasible & (q < best_q)
        best_q = np.where(take, q, best_q)
        best_d[take] = d[take]
    return best_d


@dataclass
class BatchFit:
    """One fitted model form: what :func:`fit_step_times` returns."""

    coef: np.ndarray                      # (4,) t0, t1, t2, tm in ms; a term not in the model is 0
    draws: np.ndarray                     # (n_boot, 4) bootstrap coefficient draws
    lower: np.ndarray                     # (4,) the lower bounds used
    used: np.ndarray                      # (4,) which terms the model has
    cv_error: float = math.nan            # leave-one-batch-out relative error, mean over held-out batches
    cv_error_max: float = math.nan        # … and the worst held-out batch
    fit_error_max: float = math.nan       # worst in-sample relative error
    active_bounds: list = field(default_factory=list)  # (coefficient, bound ms) pairs the fit sits on
    rank_deficient: bool = False
    draws_not_converged: int = 0
    draws_not_identified: int = 0         # resamples left out: they could not identify every term
    solution: np.ndarray | None = None    # (4,) coef as solved, before values within tolerance of a bound are set to it

    @property
    def degenerate(self) -> bool:
        return bool(self.active_bounds) or self.rank_deficient


def cv_errors(batch, X, y, lower=None, *, f_scale: float = F_SCALE) -> tuple[float, float]:
    """Leave-one-batch-out relative error (mean over held-out batches, worst batch); all folds solved at once.

    A fold whose remaining points cannot identify every term (their design has lower rank than the model has
    terms: three batches, three terms) is left out: its prediction would depend on where the solver started.
    NaN when no fold is left.
    """
    return run_steps(cv_error_steps(batch, X, y, lower, f_scale=f_scale))


def cv_error_steps(batch, X, y, lower=None, *, f_scale: float = F_SCALE):
    """:func:`cv_errors` as steps: yields its :class:`Solve`, receives the result, returns the errors."""
    keys = np.round(np.asarray(batch, float), 6)
    used = np.any(X != 0, axis=0)
    held = keys[None, :] == np.unique(keys)[:, None]  # one candidate fold per batch size
    kept = (~held).sum(axis=1)
    identified = kept >= 2
    for size in np.unique(kept[identified]):  # folds keeping as many points: their ranks in one stacked call
        same = np.flatnonzero(identified & (kept == size))
        rows = np.stack([X[~held[j]][:, used] for j in same])
        identified[same] = np.linalg.matrix_rank(rows) == used.sum()
    if not identified.any():
        return math.nan, math.nan
    held = held[identified]
    coef, ok = yield Solve(X, y, weights=(~held).astype(float), lower=lower, f_scale=f_scale)
    if not ok.all():
        raise FitError(f"cross-validation fit did not converge in {(~ok).sum()} of {len(ok)} folds")
    pred = coef @ X.T
    errs = (np.abs(pred - y) / y * held).sum(axis=1) / held.sum(axis=1)
    return float(errs.mean()), float(errs.max())


def bootstrap_inputs(y, samples, *, n_boot: int, rng, X=None, tries: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (n_boot, n) drawn with replacement and their step times: a drawn row with repeats gets the
    median of its repeats resampled with replacement, others their measured value.

    With the design ``X``, a resample that cannot identify every term (its rows have lower rank than the model has
    terms, e.g. one batch drawn three times) is drawn again, up to ``tries`` times, and left out after that: its
    coefficients would depend on where the solver started, not on the data.
    """
    y = np.asarray(y, float)
    n = len(y)
    idx = rng.integers(0, n, (n_boot, n))
    if X is not None:
        used = np.any(X != 0, axis=0)
        Xu = X[:, used] / y[:, None]
        # Only redrawn resamples are checked again: the rank of a resample that was full stays full.
        bad = np.linalg.matrix_rank(Xu[idx]) < used.sum()
        for _ in range(tries):
            if not bad.any():
                break
            redrawn = np.flatnonzero(bad)
            idx[redrawn] = rng.integers(0, n, (len(redrawn), n))
            bad[redrawn] = np.linalg.matrix_rank(Xu[idx[redrawn]]) < used.sum()
        idx = idx[~bad]
    Y = y[idx]
    samples = list(samples) if samples is not None else [None] * n
    lengths = np.array([len(s) if s is not None else 0 for s in samples])
    for k in np.unique(lengths[lengths > 0]):
        rows = np.flatnonzero(lengths == k)
        S = np.array([np.asarray(samples[j], float) for j in rows])
        pos = np.full(n, -1)
        pos[rows] = np.arange(len(rows))
        mask = pos[idx] >= 0
        picks = rng.integers(0, k, (int(mask.sum()), k))
        Y[mask] = np.median(np.take_along_axis(S[pos[idx[mask]]], picks, axis=1), axis=1)
    return idx, Y


def fit_step_times(batch, context, step_ms, *, coverage=None, lower=None, samples=None, n_boot: int = 200,
                   seed: int = 0, cv: bool = True, f_scale: float = F_SCALE, max_iter: int = MAX_ITER,
                   label: str = "", warn: bool = True) -> BatchFit:
    """Fit ``t(B, L) = t0 + t1·B + t2·B·L [+ tm·C(B)]`` to measured step times.

    ``batch``, ``context``, ``step_ms``: arrays of one configuration's points (context None, or one value
    throughout, leaves t2 out: it is not identified). ``coverage``: C(B) per point to include the MoE term.
    ``lower``: (4,) lower bounds in ms (default 0). ``samples``: per point, its repeat timings or None, resampled
    in the bootstrap. Raises :class:`FitError` when the solver fails; warns :class:`ScalingWarning` (``warn``)
    when a coefficient sits on its bound or the design is rank-deficient.
    """
    out = run_steps(fit_step_times_steps(batch, context, step_ms, coverage=coverage, lower=lower, samples=samples,
                                         n_boot=n_boot, seed=seed, cv=cv, f_scale=f_scale, max_iter=max_iter,
                                         label=label))
    if warn and out.degenerate:
        what = [f"{c} at bound {b:.4g} ms" for c, b in out.active_bounds]
        what += ["design rank-deficient"] if out.rank_deficient else []
        warnings.warn(f"{label or 'fit'}: degenerate fit: {'; '.join(what)}", ScalingWarning, stacklevel=2)
    return out


def fit_step_times_steps(batch, context, step_ms, *, coverage=None, lower=None, samples=None, n_boot: int = 200,
                         seed: int = 0, cv: bool = True, f_scale: float = F_SCALE, max_iter: int = MAX_ITER,
                         label: str = "", start: BatchFit | None = None):
    """:func:`fit_step_times` as steps (without its warning): yields each :class:`Solve` it needs and receives
    the result, so that many fits can be driven together (:func:`run_many`); returns the :class:`BatchFit`.
    ``start``: a fit of the same points, form and bounds whose point fit is taken instead of solved again."""
    batch = np.asarray(batch, float)
    y = np.asarray(step_ms, float)
    ctx = None if context is None else np.asarray(context, float)
    if ctx is not None and not (np.isfinite(ctx).all() and np.ptp(ctx) > 0):
        ctx = None
    X = design(batch, ctx, coverage)
    lo = np.zeros(4) if lower is None else np.asarray(lower, float)
    if start is not None:  # the same point fit, solved already
        coef = start.solution.copy()
    else:
        coef, ok = yield Solve(X, y, lower=lo, f_scale=f_scale, max_iter=max_iter)
        if not ok[0]:
            raise FitError(f"{label or 'fit'}: the solver did not converge in {max_iter} iterations")
        coef = coef[0]
    used = np.any(X != 0, axis=0)
    out = BatchFit(coef=coef, draws=np.empty((0, 4)), lower=lo, used=used, solution=coef.copy(),
                   fit_error_max=float(np.max(np.abs(X @ coef - y) / y)))
    if cv:
        out.cv_error, out.cv_error_max = yield from cv_error_steps(batch, X, y, lo, f_scale=f_scale)
    if n_boot > 0:
        idx, Y = bootstrap_inputs(y, samples, n_boot=n_boot, rng=np.random.default_rng(seed), X=X)
        draws, ok = ((yield Solve(X[idx], Y, lower=lo, x0=coef, f_scale=f_scale, max_iter=max_iter)) if len(idx)
                     else (np.empty((0, 4)), np.empty(0, bool)))
        out.draws_not_identified = n_boot - len(idx)
        out.draws_not_converged = int((~ok).sum())
        out.draws = draws[ok]
    # A coefficient within solver tolerance of its bound is reported as the bound.
    scale = np.abs(X).max(axis=0)
    tol = 1e-6 * np.median(y)
    at = [i for i in range(4) if used[i] and (coef[i] - lo[i]) * scale[i] < tol]
    for i in at:
        out.coef[i] = lo[i]
    if len(out.draws):
        out.draws = np.where(((out.draws - lo) * scale < tol) & used, lo, out.draws)
    out.active_bounds = [(COEFS[i], float(lo[i])) for i in at]
    out.rank_deficient = bool(np.linalg.matrix_rank(X[:, used] / y[:, None]) < used.sum())
    return out


def run_steps(steps):
    """Drive one generator of :class:`Solve` steps (see :func:`fit_step_times_steps`) to its return value."""
    return run_many([steps])[0]


def run_many(steps: list) -> list:
    """Drive many generators of :class:`Solve` steps together, their return values in order.

    Each round, the pending solve of every unfinished generator is made in one :func:`solve_many` call, so a
    thousand groups' fits cost a few hundred stacked solves instead of thousands of small ones; every generator
    receives exactly what its own :func:`solve` call would give. An exception in one generator propagates.
    """
    results: list = [None] * len(steps)
    pending: dict[int, Solve] = {}

    def advance(i: int, value) -> None:
        try:
            pending[i] = steps[i].send(value)
        except StopIteration as stop:
            pending.pop(i, None)
            results[i] = stop.value

    for i in range(len(steps)):
        advance(i, None)
    while pending:
        order = list(pending)
        for i, result in zip(order, solve_many([pending[i] for i in order])):
            advance(i, result)
    return results
