"""Figures for frontiers and matched comparisons: tok/s/user against tok/s/GPU, and capacity at equal interactivity.

Colour is precision and line style is interconnect scope throughout, so a reader can follow one group across
panels; the GPU denominator is written into every per-GPU axis label.
"""

from __future__ import annotations

import math
import textwrap
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis.frontier import DENOMINATOR_TEXT, TTFT_LIMIT_S

PRECISION_COLORS = {"fp4": "#d95f02", "fp8": "#1b63a5", "bf16": "#1b9e77", "fp16": "#7570b3", "int8": "#e7298a",
                    "int4": "#66a61e", "mixed": "#a6761d", "unknown": "#666666"}
SCOPE_STYLES = {"single-gpu": ("-.", "D"), "node": ("-", "o"), "rack": ("--", "s"), "multi-node": (":", "^"),
                "unknown": ("-", "x")}
SCOPE_ORDER = ["single-gpu", "node", "rack", "multi-node", "unknown"]
USER_LABEL = "tok/s/user (1000 / median TPOT)"


def gpu_label(denominator: str) -> str:
    return f"output tok/s per GPU\n(÷ {DENOMINATOR_TEXT.get(denominator, denominator)})"


def _concurrency_text(value) -> str:
    if value is None or not np.isfinite(value):
        return ""
    return f"{value:.0f}"


def _point_label(concurrency, n_gpus, with_gpus: bool) -> str:
    text = _concurrency_text(concurrency)
    if with_gpus and n_gpus is not None and np.isfinite(n_gpus):
        text += f"/{n_gpus:.0f}g"
    return text


def drop_overlapping_labels(ax, labels: list) -> int:
    """Remove annotations that would overlap one already kept (in drawing order); returns how many were removed."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    kept, removed = [], 0
    for label in labels:
        box = label.get_window_extent(renderer=renderer).expanded(1.05, 1.1)
        if any(box.overlaps(other) for other in kept):
            label.remove()
            removed += 1
        else:
            kept.append(box)
    return removed


def frontier_panels(fronts: pd.DataFrame, points: pd.DataFrame | None = None, *, panel: str = "hardware",
                    denominator: str = "all", targets: Sequence[float] = (), ncols: int = 3,
                    label_concurrency: bool = True, ttft_limit_s: float = TTFT_LIMIT_S, title: str | None = None):
    """One log-log panel per ``panel`` value: every measured point faint, each precision × scope frontier as a line,
    frontier points labelled with their concurrency (plus GPU count, ``8192/12g``, where it varies within the
    frontier), points whose median TTFT exceeds ``ttft_limit_s`` drawn hollow, dotted verticals at the targets.

    Labels that would overlap one already drawn are skipped. ``points`` must already carry ``tok_s_per_gpu`` under
    the same denominator (``frontier.usable``). Returns the array of Axes.
    """
    names = sorted(fronts[panel].unique())
    nrows = max(1, math.ceil(len(names) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.9 * nrows), sharex=True, sharey=True,
                             squeeze=False)
    limit_ms = ttft_limit_s * 1000.0
    labels_by_ax = {}
    for ax, name in zip(axes.flat, names):
        if points is not None:
            mine = points[points[panel] == name]
            ax.scatter(mine["tok_s_per_user"], mine["tok_s_per_gpu"], s=10, color="#bbbbbb", zorder=1,
                       label="measured point (not on frontier)")
        front = fronts[fronts[panel] == name]
        labels = labels_by_ax.setdefault(ax, [])
        for (precision, scope), grp in front.groupby(["precision", "scope"], sort=True):
            style, marker = SCOPE_STYLES.get(scope, SCOPE_STYLES["unknown"])
            color = PRECISION_COLORS.get(precision, "#444444")
            grp = grp.sort_values("tok_s_per_user")
            ax.plot(grp["tok_s_per_user"], grp["tok_s_per_gpu"], linestyle=style, color=color, zorder=3,
                    marker=marker, markersize=5, markerfacecolor=color, markevery=[], label=f"{precision} · {scope}")
            ttft = grp["ttft_ms_p50"].astype(float) if "ttft_ms_p50" in grp else pd.Series(np.nan, index=grp.index)
            slow = (ttft > limit_ms).to_numpy()
            ax.scatter(grp["tok_s_per_user"][~slow], grp["tok_s_per_gpu"][~slow], marker=marker, s=28, color=color,
                       zorder=4)
            ax.scatter(grp["tok_s_per_user"][slow], grp["tok_s_per_gpu"][slow], marker=marker, s=34,
                       facecolors="white", edgecolors=color, linewidths=1.3, zorder=4)
            if label_concurrency:
                gpus = grp["n_gpus"] if "n_gpus" in grp else pd.Series(np.nan, index=grp.index)
                varies = gpus.nunique() > 1
                # fastest point first: the single-user end is the label a reader looks for
                for u, g, c, n in list(zip(grp["tok_s_per_user"], grp["tok_s_per_gpu"], grp["concurrency"], gpus))[::-1]:
                    labels.append(ax.annotate(_point_label(c, n, varies), (u, g), textcoords="offset points",
                                              xytext=(3, 3), fontsize=7, color=color))
        for t in targets:
            ax.axvline(t, color="#999999", linestyle=":", linewidth=0.8, zorder=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(str(name), fontsize=10)
        handles, texts = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="#444444"))
        texts.append(f"hollow: TTFT p50 > {ttft_limit_s:g} s")
        ax.legend(handles, texts, fontsize=7, loc="lower left", frameon=False)
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel(USER_LABEL)
    for ax in axes[:, 0]:
        ax.set_ylabel(gpu_label(denominator))
    fig.suptitle(title or "Pareto frontiers: numbers next to points are client concurrency (/Ng: GPU count where it "
                          f"varies); hollow: median TTFT > {ttft_limit_s:g} s; dotted lines mark target tok/s/user",
                 fontsize=11)
    fig.tight_layout()
    for ax, labels in labels_by_ax.items():
        drop_overlapping_labels(ax, labels)
    return axes


def _wrap(label: str, width: int = 8) -> str:
    """One line per `` · `` part, long parts broken at spaces: tick labels that fit under a bar pair unrotated."""
    return "\n".join(textwrap.fill(part, width, break_on_hyphens=False, break_long_words=False)
                     for part in str(label).split(" · "))
