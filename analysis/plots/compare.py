"""Figures for precision and scope comparisons: clean-pair ratios against interactivity, capacity bars at equal
interactivity, and step-timing precision ratios against batch size.

Colour is precision wherever bars are drawn (as in the frontier figures); legends sit outside the data and every
log axis says so in its label.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from analysis.plots.frontier import PRECISION_COLORS, USER_LABEL, gpu_label, tick_label
from analysis.text import num, plain, sig, times

LOG = " (log scale)"


NICE_TICKS = [1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000]


def _plain_log_ticks(ax, values: np.ndarray) -> None:
    """Plain-number ticks on a log x axis (``60``, not ``6×10¹``), from a fixed list inside the data range."""
    values = values[np.isfinite(values) & (values > 0)]
    if not len(values):
        return
    lo, hi = values.min(), values.max()
    ticks = [t for t in NICE_TICKS if lo / 1.05 <= t <= hi * 1.05]
    if len(ticks) < 3:  # a narrow range (68–86 tok/s/user) gets evenly spaced round values, not one lone tick
        ticks = sorted({float(round(v, 1 - int(np.floor(np.log10(v))))) for v in np.linspace(lo, hi, 4)})
    ax.set_xticks(ticks)
    ax.set_xticklabels([plain(t) for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


def ratio_curves(curves: pd.DataFrame, *, bytes_ratios: dict | None = None, low: str = "fp4", high: str = "fp8",
                 measured: pd.DataFrame | None = None, ax=None, title: str | None = None):
    """``low``/``high`` tok/s/GPU against tok/s/user, one line per pair (``curves``: ``label``, ``tok_s_per_user``,
    ``ratio``), each pair's roofline bytes ratio as a dashed line of its colour, and 1× (no gain) in grey.
    ``measured`` (``analysis.compare.measured_levels``): the frontier points each line is read between, a filled
    circle where ``low`` was measured and an open square where ``high`` was, so a reader sees how few they are."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.2))
    bytes_ratios = bytes_ratios or {}
    for i, (label, grp) in enumerate(curves.groupby("label", sort=True)):
        color = f"C{i}"
        grp = grp.sort_values("tok_s_per_user")
        # a line without markers: its levels are read between a few measured frontier points, not measured each
        ax.plot(grp["tok_s_per_user"], grp["ratio"], color=color, label=f"{label} (interpolated between measured points)")
        at = measured[measured["label"] == label] if measured is not None and len(measured) else None
        for side, marker, face in ((low, "o", color), (high, "s", "white")):
            if at is None:
                continue
            pts = at[(at["side"] == side) & at["inside"]]
            out = " and ".join(num(u) for u in at[(at["side"] == side) & ~at["inside"]]["tok_s_per_user"])
            beyond = f"; read up to its points at {out} tok/s/user, outside this range" if out else ""
            if len(pts):
                ax.plot(pts["tok_s_per_user"], pts["ratio"], linestyle="none", marker=marker, markersize=7,
                        markerfacecolor=face, markeredgecolor=color,
                        label=f"{side} measured here ({len(pts)} point{'s' if len(pts) > 1 else ''}; "
                              f"the other side interpolated{beyond})")
            elif out:  # a legend line without a mark: this side has no point inside the range
                ax.plot([], [], linestyle="none", marker=marker, markerfacecolor="none", markeredgecolor="none",
                        label=f"{side}: no point measured in this range; read between its points at {out} tok/s/user")
        if label in bytes_ratios and np.isfinite(bytes_ratios[label]):
            ax.axhline(bytes_ratios[label], color=color, linestyle="--", linewidth=1.0,
                       label=f"all-FP4 bytes bound {times(bytes_ratios[label])} ({label.split(' · ')[0]}; every weight "
                             "at FP4)")
    ax.axhline(1.0, color="#555555", linewidth=0.8, label=f"1×: {low} and {high} equal")
    ax.set_xscale("log")
    _plain_log_ticks(ax, curves["tok_s_per_user"].to_numpy(float))
    ax.set_xlabel(USER_LABEL + LOG)
    ax.set_ylabel(f"tok/s/GPU {low} ÷ {high}\nat equal tok/s/user")
    top = np.nanmax(curves["ratio"].to_numpy(float)) if len(curves) else 2.0
    ax.set_ylim(0, max(top, max(bytes_ratios.values(), default=1.0)) * 1.15)
    ax.set_title(title or f"{low} ÷ {high} over each pair's shared tok/s/user range")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, which="major", alpha=0.3)
    return ax


def capacity_bars(capacity: pd.DataFrame, *, x: str = "label", hue: str = "precision",
                  hue_order: Sequence[str] = ("fp8", "fp4"), ratio: tuple[str, str] | None = ("fp4", "fp8"),
                  ratio_label: str | None = None, targets: Sequence[float] = (50, 100, 200),
                  denominator: str = "all", title: str | None = None, setup: str | None = None):
    """Grouped bars of tok/s/GPU at each target tok/s/user (one panel per target), ``ratio[0]/ratio[1]`` written
    over every group where both bars exist (in grey italics: ``ratio_label`` names what the ratio is, e.g. a
    confounded envelope ratio, in the legend). A group only measured faster than the target gets a hatched bar at
    its lower bound marked "≥" (when ``capacity`` has ``reading``/``lower_bound_tok_s_per_gpu``); one faster than
    anything measured gets no bar and "n/m". Ratios read across a wide gap between frontier points get a "~".

    ``capacity`` is long: columns ``x``, ``hue``, ``target_tok_s_per_user``, ``tok_s_per_gpu``. ``setup``: a column
    of short texts written up the foot of each bar (the serving setup its reading comes from), for bars that differ
    in more than ``x`` and ``hue``. Returns the array of Axes.
    """
    targets = list(targets)
    labels = list(dict.fromkeys(capacity[x]))
    has_reading = "reading" in capacity.columns
    panel_width = max(4.0, 0.62 * len(labels) + 1.0)
    fig, axes = plt.subplots(1, len(targets), figsize=(panel_width * len(targets) + 1.2, 4.8), sharey=True,
                             squeeze=False)
    width = 0.8 / max(1, len(hue_order))
    for ax, t in zip(axes.flat, targets):
        at = capacity[capacity["target_tok_s_per_user"] == float(t)]
        table = at.pivot_table(index=x, columns=hue, values="tok_s_per_gpu", aggfunc="first").reindex(labels)
        if has_reading:
            reading = at.pivot_table(index=x, columns=hue, values="reading", aggfunc="first").reindex(labels)
            floor = at.pivot_table(index=x, columns=hue, values="lower_bound_tok_s_per_gpu",
                                   aggfunc="first").reindex(labels)
        pos = np.arange(len(labels))
        tags = at.pivot_table(index=x, columns=hue, values=setup, aggfunc="first").reindex(labels) \
            if setup and setup in at.columns else None
        for i, h in enumerate(hue_order):
            values = table[h].to_numpy(float) if h in table else np.full(len(labels), np.nan)
            color = PRECISION_COLORS.get(h, f"C{i}")
            bars = ax.bar(pos + (i - (len(hue_order) - 1) / 2) * width, np.nan_to_num(values, nan=0.0), width,
                          color=color, label=h)
            lows = floor[h].to_numpy(float) if has_reading and h in floor else np.full(len(labels), np.nan)
            reads = reading[h].to_numpy(object) if has_reading and h in reading else np.full(len(labels), None)
            tag = tags[h].to_numpy(object) if tags is not None and h in tags else np.full(len(labels), None)
            for bar, v, lb, how, tg in zip(bars, values, lows, reads, tag):
                xc = bar.get_x() + bar.get_width() / 2
                if isinstance(tg, str) and tg and (np.isfinite(v) or np.isfinite(lb)):
                    ax.text(xc, 0.015, tg, transform=ax.get_xaxis_transform(), ha="center", va="bottom",
                            fontsize=6, rotation=90, color="#222222",
                            bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "alpha": 0.75, "linewidth": 0})
                if np.isfinite(v) and how == "wide gap":  # rough: read across a wide gap between frontier points
                    ax.annotate("~", (xc, v), textcoords="offset points", xytext=(0, 1), ha="center", fontsize=8,
                                color=color)
                if not np.isfinite(v) and np.isfinite(lb):
                    ax.bar(xc, lb, bar.get_width(), color="white", edgecolor=color, hatch="///", linewidth=0.8)
                    ax.annotate("≥", (xc, lb), textcoords="offset points", xytext=(0, 2), ha="center", fontsize=7,
                                color=color)
                elif not np.isfinite(v):
                    # axes-fraction y: a log axis has no zero to stand a missing bar on
                    ax.text(xc, 0.02, "n/m", transform=ax.get_xaxis_transform(), ha="center", va="bottom",
                            fontsize=6, color="#777777", rotation=90)
        if ratio is not None and ratio[0] in table and ratio[1] in table:
            r = table[ratio[0]] / table[ratio[1]]
            tops = table[[ratio[0], ratio[1]]].max(axis=1)
            rough = (reading[[ratio[0], ratio[1]]] == "wide gap").any(axis=1) if has_reading else \
                pd.Series(False, index=table.index)
            for p, rv, top, wide in zip(pos, r, tops, rough):
                if np.isfinite(rv):
                    ax.annotate(f"{'~' if wide else ''}{sig(rv, 2)}×", (p, top), textcoords="offset points",
                                xytext=(0, 3), ha="center", fontsize=7, fontstyle="italic", color="#555555")
        ax.set_yscale("log")
        ax.set_xticks(pos)
        ax.set_xticklabels([tick_label(label) for label in labels], fontsize=7.5)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_title(f"at {plain(t)} tok/s/user", fontsize=10)
        ax.grid(True, axis="y", which="major", alpha=0.3)
    axes[0, 0].set_ylabel(gpu_label(denominator) + LOG)
    handles, texts = axes[0, -1].get_legend_handles_labels()
    if has_reading:
        handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="#444444", hatch="///"))
        texts.append("≥: lower bound\n(only measured faster)")
        handles.append(Line2D([], [], linestyle=""))
        texts.append("~ over a bar: read across a\nwide gap (rough)")
    if setup:
        handles.append(Line2D([], [], linestyle=""))
        texts.append("text up a bar: the serving\nsetup its reading comes from\n(framework · agg/disagg ·\nspec decoding)")
    if ratio is not None:
        handles.append(Line2D([], [], linestyle=""))
        texts.append(textwrap.fill(f"n.n×: {ratio_label or f'{ratio[0]}/{ratio[1]} ratio'}; ~ read across a "
                                   "wide gap", 26))
    # outside the last panel: inside, it would sit on bars
    axes[0, -1].legend(handles, texts, title=hue, fontsize=8, frameon=False, loc="upper left",
                       bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(title or "tok/s/GPU at equal interactivity (n/m: not measured at that level)", fontsize=11)
    fig.tight_layout()
    return axes


def step_ratio(pairs: pd.DataFrame, *, low: str = "fp8", high: str = "bf16", ax=None, title: str | None = None):
    """Step-timing pairs: tok/s ratio low/high against batch size, one line per model × launch × context."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.2))
    for (model, framework, ctx), grp in pairs.groupby(["model", "framework", "context_len"], sort=True):
        grp = grp.sort_values("batch_size")
        ax.plot(grp["batch_size"], grp["ratio"], marker="o", markersize=4,
                linestyle="-" if "cudagraph" in framework else "--", label=f"{model} · {framework} · ctx {plain(ctx)}")
    ax.axhline(1.0, color="#555555", linewidth=0.8, label=f"1×: {low} as fast as {high}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size (sequences per decode step)" + LOG)
    ax.set_ylabel(f"tok/s {low} ÷ tok/s {high}\n(1 GPU, same batch and context)")
    ax.set_title(title or f"{low} against {high} at equal batch and context (below 1: {low} is slower)")
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, alpha=0.3)
    return ax
