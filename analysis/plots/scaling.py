"""Drawing for the batch model: speed against batch with fitted curves and bands, residuals, launch overhead.

Inputs are the tables :mod:`analysis.scaling` computes (``residuals`` for measured points, ``curves`` for the model
with bootstrap bands, ``launch_overhead``) or the figure data of :mod:`analysis.pages.batch_scaling`; nothing is
fitted here. Every function returns its Axes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from analysis.text import fixed, pct, plain, signed, whole


def _axes(ax, n=1, width=11.0, height=4.2):
    if ax is not None:
        return ax
    _, axes = plt.subplots(1, n, figsize=(width, height), constrained_layout=True)
    return axes


def _gpu_text(fit_row) -> str:
    n = fit_row.get("n_gpus_denominator", np.nan)
    return f"per GPU, {plain(n)} GPU{'s' if n != 1 else ''}" if np.isfinite(n) else "per GPU (GPU count unknown)"


def throughput_vs_batch(measured: pd.DataFrame, curve: pd.DataFrame, fit_row: pd.Series, *, ax=None):
    """tok/s/user and tok/s/GPU against batch (log x) for one group: points, fit, 95% band, extrapolation dashed.

    ``measured`` are this group's rows of :func:`analysis.scaling.residuals`, ``curve`` its rows of
    :func:`analysis.scaling.curves` (one context), ``fit_row`` its row of the fits.
    """
    left, right = _axes(ax, 2, height=3.4)
    n_gpus = fit_row.get("n_gpus_denominator", np.nan)
    contexts = sorted(measured["context"].dropna().unique()) or [np.nan]
    markers = ["o", "s", "^", "D", "v"]
    for i, ctx in enumerate(contexts):
        m = measured[measured["context"] == ctx] if np.isfinite(ctx) else measured
        label = f"measured, context {whole(ctx)}" if np.isfinite(ctx) else "measured"
        left.plot(m["batch"], m["tok_s_per_user"], markers[i % 5], color=f"C{i}", label=label, zorder=3)
        right.plot(m["batch"], m["tok_s"] / n_gpus if n_gpus > 0 else np.nan * m["tok_s"], markers[i % 5],
                   color=f"C{i}", zorder=3)
    scale_gpu = n_gpus if n_gpus > 0 else np.nan
    for j, (ctx, cv) in enumerate(curve.groupby("context", sort=True)):
        color = f"C{contexts.index(ctx)}" if ctx in contexts else "k"
        at_ctx = measured[measured["context"] == ctx]
        b_hi = at_ctx["batch"].max() if len(at_ctx) else fit_row["batch_max"]
        b_lo = at_ctx["batch"].min() if len(at_ctx) else fit_row["batch_min"]
        b = cv["batch"]
        inside = (b >= b_lo) & (b <= b_hi)
        for a, col, scale in ((left, "tok_s_per_user", 1.0), (right, "tok_s", scale_gpu)):
            a.fill_between(b, cv[f"{col}_lo"] / scale, cv[f"{col}_hi"] / scale, color=color, alpha=0.18, lw=0,
                           label="95% bootstrap band" if j == 0 else None)
            a.plot(b.where(inside), cv[col].where(inside) / scale, "-", color=color,
                   label=f"{fit_row['variant']} model, context {whole(ctx)}")
            for k, part in enumerate((b <= b_lo, b >= b_hi)):
                if part.sum() > 1:
                    a.plot(b[part], cv[col][part] / scale, "--", color=color,
                           label="model beyond measured batches" if (j, k) == (0, 1) else None)
    for a in (left, right):
        a.set_xscale("log", base=2)
        a.set_xlabel("batch size B (sequences decoded together)")
        a.grid(True, which="major", alpha=0.3)
    left.set_ylabel("tok/s/user (one sequence's speed)")
    right.set_ylabel(f"tok/s/GPU ({_gpu_text(fit_row)})")
    left.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    left.set_title("per-user speed falls as batch grows")
    right.set_title("throughput per GPU rises toward its asymptote")
    left.legend(fontsize=8, loc="upper right")
    return left, right


def speed_figures(figures) -> list:
    """One :func:`throughput_vs_batch` figure per item of ``figures`` (objects with ``measured``, ``curve``,
    ``row`` and ``title``), the title above both panels. Returns the Axes pairs."""
    out = []
    for fig in figures:
        left, right = throughput_vs_batch(fig.measured, fig.curve, fig.row)
        left.figure.suptitle(fig.title, fontsize=10)
        out.append((left, right))
    return out


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")


def _group_styles(groups) -> tuple[dict, dict]:
    """A colour and a marker per group, no two groups alike up to 20 (tab20: the dark shades first, then the light;
    ten markers, so two groups sharing a marker differ in colour)."""
    colours = sns.color_palette("tab20", 20)
    order = [2 * i % 20 if i < 10 else (2 * i + 1) % 20 for i in range(len(groups))]
    return ({g: colours[k] for g, k in zip(groups, order)},
            {g: _MARKERS[i % len(_MARKERS)] for i, g in enumerate(groups)})


RESIDUAL_LINEAR_PCT = 20.0  # the residual axis is linear to ±20%; beyond (a fit off by up to 100%) it turns symlog


def residuals(resid: pd.DataFrame, *, ax=None, band: float = 0.10):
    """Relative error of the fitted step time at every measured point of ``resid``'s groups, by group, against batch
    (log x).

    seaborn draws one line per group and context (``units``: a group fitted at several contexts is several
    curves, never joined), each group with its own colour and marker (one legend entry per group). The y axis
    always includes the worst residual, which is annotated with its value and group; when one lies beyond
    ±2 × :data:`RESIDUAL_LINEAR_PCT` the axis is symmetric-log past ±:data:`RESIDUAL_LINEAR_PCT`, so one fit off by
    97% does not flatten the others' residuals into the ±10% band.
    """
    if ax is None:  # legend below the axes: beside them, a dozen long group names squeeze the plot to a stamp
        _, ax = plt.subplots(figsize=(11.0, 7.0), constrained_layout=True)
    groups = sorted(resid["group"].unique())
    palette, markers = _group_styles(groups)
    shown = resid.assign(error_pct=100 * resid["rel_error"], curve=resid["context"].fillna(-1.0))
    if len(shown):
        sns.lineplot(data=shown, x="batch", y="error_pct", hue="group", style="group", units="curve",
                     estimator=None, sort=True, hue_order=groups, style_order=groups, palette=palette,
                     markers=markers, dashes=False, markersize=4.5, linewidth=0.8, markeredgewidth=0, ax=ax)
    ax.axhspan(-100 * band, 100 * band, color="0.85", alpha=0.5, lw=0, label=f"±{pct(band)}")
    ax.axhline(0, color="k", lw=0.8)
    if len(resid):
        worst = resid.loc[resid["rel_error"].abs().idxmax()]
        lo = min(-100 * band, 100 * float(resid["rel_error"].min()))
        hi = max(100 * band, 100 * float(resid["rel_error"].max()))
        if max(-lo, hi) > 2 * RESIDUAL_LINEAR_PCT:
            ax.set_yscale("symlog", linthresh=RESIDUAL_LINEAR_PCT, linscale=2.0)
            ylo = lo * 1.15 if lo < -RESIDUAL_LINEAR_PCT else lo - 2
            yhi = hi * 1.15 if hi > RESIDUAL_LINEAR_PCT else hi + 2
            ax.set_ylim(ylo, yhi)
            ticks = [t for t in (-1000, -500, -200, -100, -50, -20, -10, 0, 10, 20, 50, 100, 200, 500, 1000)
                     if ylo <= t <= yhi]
            ax.set_yticks(ticks, [whole(t, grouped=False) for t in ticks])
            ax.yaxis.set_minor_locator(plt.NullLocator())
        else:
            pad = 0.08 * (hi - lo)
            ax.set_ylim(lo - pad, hi + pad)
        name = worst["group"].split(" | ")[0]
        ax.annotate(f"worst {signed(100 * worst['rel_error'])}% at B={whole(worst['batch'], grouped=False)}\n{name}",
                    (worst["batch"], 100 * worst["rel_error"]), xytext=(12, 0), textcoords="offset points",
                    fontsize=8, va="center", arrowprops=dict(arrowstyle="-", lw=0.6))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size B")
    symlog = ax.get_yscale() == "symlog"
    ax.set_ylabel("fit − measured step time (% of measured)"
                  + (f"; linear within ±{whole(RESIDUAL_LINEAR_PCT)}%, log beyond" if symlog else ""))
    ax.set_title("Residuals of the batch model at each measured point of these configurations")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    return ax


def launch_overhead(table: pd.DataFrame, *, ax=None):
    """Batch-1 tok/s/user with eager launches against CUDA graphs, per model, precision and context (nothing
    drawn, None returned, for an empty table)."""
    if table is None or not len(table):
        return None
    ax = _axes(ax, width=8.0)
    labels = [f"{r.model}\n{r.precision}, ctx {whole(r.context)}" for r in table.itertuples()]
    x = np.arange(len(table))
    ax.bar(x - 0.2, table["tok_s_per_user_cudagraph"], 0.4, label="CUDA graph (one launch per step)")
    ax.bar(x + 0.2, table["tok_s_per_user_eager"], 0.4, label="eager (every kernel launched from Python)")
    # Above the eager bar in dark text: inside a narrow bar the label overflows onto the white background.
    for xi, ratio, top in zip(x, table["eager_over_cudagraph"], table["tok_s_per_user_eager"]):
        ax.annotate(f"×{fixed(ratio, 1)} slower", (xi + 0.2, top), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8, color="0.15")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("tok/s/user at batch 1")
    ax.set_ylim(0, 1.3 * float(np.nanmax(table[["tok_s_per_user_cudagraph", "tok_s_per_user_eager"]].to_numpy())))
    ax.set_title("Launch overhead: eager PyTorch loses most of the single-user speed")
    ax.legend(fontsize=8, loc="upper right")
    return ax


def _plain_log_ticks(ax, lo: float, hi: float):
    """Log axes labelled in plain numbers (1, 10, 100, 1,000; with 2 and 5 between over three decades or fewer),
    not powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    subs = (1.0, 2.0, 5.0) if np.log10(hi / lo) <= 3.2 else (1.0,)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, subs=subs))
        axis.set_major_formatter(FuncFormatter(lambda v, _: whole(v) if v >= 1 else plain(v)))
        axis.set_minor_formatter(NullFormatter())


def _place_labels(ax, anchors: list, *, min_px: float = 22.0):
    """Number labels beside their points, each on the side of the line y = x away from it (the empty side), moved
    further out until it is ``min_px`` from every label already placed, with a thin leader to its point.
    ``anchors``: ``(text, x, y, above)`` in data coordinates."""
    placed = []
    ax.figure.canvas.draw()  # the transform needs the final axes size (constrained layout)
    box = ax.get_window_extent()
    scale = ax.figure.dpi / 72.0  # offsets are in points, positions in pixels
    steps = [(12, 10), (12, 26), (26, 12), (12, 42), (40, 24), (26, 40), (56, 12), (12, 58)]
    for label, x, y, above in anchors:
        px, py = ax.transData.transform((x, y))
        sides = [(-1, 1), (1, -1)] if above else [(1, -1), (-1, 1)]
        options = [(sx * dx, sy * dy) for sx, sy in sides for dx, dy in steps]
        for ox, oy in options:
            cx, cy = px + ox * scale, py + oy * scale
            inside = box.x0 + 12 * scale < cx < box.x1 - 12 * scale and box.y0 + 10 * scale < cy < box.y1 - 10 * scale
            if inside and all(np.hypot(cx - qx, cy - qy) >= min_px * scale for qx, qy in placed):
                break
        else:
            ox, oy = options[0]
            cx, cy = px + ox * scale, py + oy * scale
        placed.append((cx, cy))
        ax.annotate(label, (x, y), xytext=(ox, oy), textcoords="offset points",
                    ha="center", va="center", fontsize=9, fontweight="bold", zorder=5,
                    arrowprops=dict(arrowstyle="-", lw=0.6, color="0.25", shrinkA=5, shrinkB=4))


def predicted_vs_measured(points: pd.DataFrame, worst: pd.DataFrame, *, bands=(0.10, 0.35), gpu_inner=0.15,
                          axes=None):
    """Predicted against measured, tok/s/user (left) and tok/s/GPU (right), log-log, one colour per hardware family
    (a step-timing sweep's points hollow, a serving run's filled, where ``points`` has a ``serving`` column):
    the line y = x with ±``bands`` around it (the inner band ±``gpu_inner`` on the tok/s/GPU panel, its median
    target), and the points of the ``worst`` groups ringed in black and numbered
    (their ``#``) at the point farthest from the line in each panel.

    ``points``: one row per predicted point (``group``, ``family``, ``measured_tok_s_per_user``,
    ``predicted_tok_s_per_user``, ``measured_tok_s_per_gpu``, ``predicted_tok_s_per_gpu``), as
    :func:`analysis.pages.batch_scaling.validation_points` gives them; ``worst``: ``#`` and ``group``. The legend sits
    below the panels, off the data. Returns the two Axes."""
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(12.0, 6.6), constrained_layout=True)
    left, right = axes
    families = sorted(points["family"].astype(str).unique())
    # Dark2's eight hues stay apart at a scatter's marker size (tab10's red, brown and pink did not); tab10 beyond
    palette = dict(zip(families, sns.color_palette("Dark2" if len(families) <= 8 else "tab10", max(len(families), 1))))
    markers = dict(zip(families, _MARKERS))
    number = dict(zip(worst["group"], worst["#"])) if len(worst) else {}
    inner, outer = sorted(bands)
    panel_inner = {"tok_s_per_user": inner, "tok_s_per_gpu": gpu_inner}
    for ax, metric, name in ((left, "tok_s_per_user", "tok/s/user"), (right, "tok_s_per_gpu", "tok/s/GPU")):
        m, p = points[f"measured_{metric}"].astype(float), points[f"predicted_{metric}"].astype(float)
        ok = (m > 0) & (p > 0)
        shown = points[ok].assign(_m=m[ok], _p=p[ok])
        if shown.empty:
            ax.set_axis_off()
            continue
        lo = float(min(shown["_m"].min(), shown["_p"].min())) / 1.6
        hi = float(max(shown["_m"].max(), shown["_p"].max())) * 1.6
        x = np.geomspace(lo, hi, 50)
        ax.fill_between(x, x * (1 - outer), x * (1 + outer), color="0.92", lw=0, zorder=0,
                        label=f"±{pct(outer)} (p90 target)")
        ax.fill_between(x, x * (1 - panel_inner[metric]), x * (1 + panel_inner[metric]), color="0.80", lw=0, zorder=0,
                        label=f"±{pct(inner)} per user, ±{pct(gpu_inner)} per GPU (the median targets, which "
                              "apply to group means, not points)")
        ax.plot(x, x, color="k", lw=0.8, zorder=1, label="predicted = measured")
        serving = shown["serving"].astype(bool) if "serving" in shown else pd.Series(True, index=shown.index)
        for fam in families:
            of = shown["family"].astype(str) == fam
            f = shown[of & serving]
            if len(f):
                ax.scatter(f["_m"], f["_p"], s=28, color=palette[fam], marker=markers[fam], alpha=0.85, lw=0,
                           zorder=2, label=fam)
            f = shown[of & ~serving]
            if len(f):
                ax.scatter(f["_m"], f["_p"], s=28, facecolors="none", edgecolors=palette[fam], marker=markers[fam],
                           lw=1.0, zorder=2, label=f"{fam} step sweeps (hollow: one GPU's timed step, no scheduler)")
        ringed = shown[shown["group"].isin(number)]
        ax.scatter(ringed["_m"], ringed["_p"], s=70, facecolors="none", edgecolors="k", lw=0.9, zorder=3,
                   label="a worst group's point, joined in concurrency order, numbered as in the table")
        anchors = []
        for group, g in sorted(ringed.groupby("group", sort=False), key=lambda kv: number[kv[0]]):
            g = g.sort_values("concurrency") if "concurrency" in g else g
            ax.plot(g["_m"], g["_p"], "-", color="k", lw=0.6, alpha=0.6, zorder=3)
            far = g.loc[np.abs(np.log(g["_p"] / g["_m"])).idxmax()]
            anchors.append((f"#{number[group]}", far["_m"], far["_p"], bool(far["_p"] >= far["_m"])))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        _plain_log_ticks(ax, lo, hi)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel(f"measured {name}")
        ax.set_ylabel(f"predicted {name}\n(its group left out of the calibration)")
        ax.set_title(f"{name}: {len(shown)} points of {shown['group'].nunique()} groups")
        ax.anchors = anchors
    handles, labels = left.get_legend_handles_labels()
    # three columns at 9 pt: six had run the long entries past the figure's edge, too small to read at 1,400 px
    left.figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 3), fontsize=9,
                       frameon=False)
    for ax in (left, right):  # once the legend has taken its room: labels are placed in final display positions
        _place_labels(ax, getattr(ax, "anchors", []))
    return left, right
