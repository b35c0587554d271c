"""Figures for results over time: per model, small multiples of each configuration's two ends against the date.

Rows are hardware, the left column the low-concurrency end (tok/s/user at the lowest concurrency measured on two
dates), the right column the capacity end (tok/s/GPU at the highest). One line per configuration; colour is
precision, line style scope (as in the frontier figures) and marker the input/output lengths. Improvements and
regressions beyond the noise threshold are marked at the later date. Values span orders of magnitude across
configurations, so the y axes are log scale.
"""

from __future__ import annotations

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from analysis.plots.frontier import PRECISION_COLORS, SCOPE_STYLES
from analysis.text import plain, whole

ROLES = [("low-concurrency end", "low-concurrency end: tok/s/user\n(lowest concurrency on ≥2 dates)"),
         ("capacity end", "capacity end: tok/s/GPU, all GPUs\n(highest concurrency on ≥2 dates)")]
CHANGE_MARKS = {"improvement": ("^", "#1a7f37"), "regression": ("v", "#c62828")}
# Input/output lengths by marker (line style is scope, colour precision): configurations at other lengths share a
# panel, and a reader must be able to tell a 1k/1k line from an 8k/1k one.
LENGTH_MARKERS = ["o", "s", "D", "P", "X", "*", "h"]


def ends_over_time(data: pd.DataFrame, changes: pd.DataFrame, *, title: str = "") -> np.ndarray:
    """One figure: rows = hardware, columns = the two ends; returns the array of Axes."""
    hardware = sorted(data["hardware"].unique())
    n_rows = max(len(hardware), 1)
    fig, axes = plt.subplots(n_rows, 2, figsize=(11, 2.3 * n_rows + 0.8), sharex=True, squeeze=False)
    dates = pd.to_datetime(data["date"])
    length_values = sorted(data["lengths"].unique()) if "lengths" in data else []
    marker_of = {v: LENGTH_MARKERS[i % len(LENGTH_MARKERS)] for i, v in enumerate(length_values)}
    for i, hw in enumerate(hardware):
        for j, (role, label) in enumerate(ROLES):
            ax = axes[i, j]
            sel = data[(data["hardware"] == hw) & (data["role"] == role)]
            for _, line in sel.groupby("group", sort=True):
                line = line.sort_values("date")
                style, marker = SCOPE_STYLES.get(line["scope"].iloc[0], SCOPE_STYLES["unknown"])
                marker = marker_of.get(line["lengths"].iloc[0], marker) if "lengths" in line else marker
                ax.plot(pd.to_datetime(line["date"]), line["value"], linestyle=style, marker=marker, markersize=3,
                        linewidth=1.1, alpha=0.8, color=PRECISION_COLORS.get(line["precision"].iloc[0], "#666666"))
            marks = changes[(changes["hardware"] == hw) & (changes["role"] == role)]
            for kind, (mark, colour) in CHANGE_MARKS.items():
                m = marks[marks["kind"] == kind]
                if len(m):
                    ax.scatter(pd.to_datetime(m["date_after"]), m["after"], marker=mark, s=46, color=colour,
                               edgecolor="white", linewidth=0.5, zorder=5)
            if len(sel) and (sel["value"] > 0).all():
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: whole(v) if v >= 1 else plain(v)))
                ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title(f"{hw}", fontsize=9, loc="left")
            ax.grid(True, which="major", alpha=0.3)
            if i == 0:
                ax.annotate(label, xy=(0.5, 1.25), xycoords="axes fraction", ha="center", fontsize=9,
                            fontweight="bold")
            ax.set_ylabel("tok/s/user" if role == "low-concurrency end" else "tok/s/GPU", fontsize=8)
            ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("measurement date")
        ax.xaxis.set_major_locator(mdates.MonthLocator())
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%b\n%Y"))
    if len(dates):
        pad = pd.Timedelta(days=5)
        axes[0, 0].set_xlim(dates.min() - pad, dates.max() + pad)
    precisions = sorted(data["precision"].unique())
    scopes = [s for s in SCOPE_STYLES if s in set(data["scope"])]
    handles = ([Line2D([], [], color=PRECISION_COLORS.get(p, "#666666"), label=p) for p in precisions]
               + [Line2D([], [], color="#444444", linestyle=SCOPE_STYLES[s][0], label=s) for s in scopes]
               + [Line2D([], [], color="#444444", linestyle="", marker=marker_of[v], markersize=4,
                         label=f"{v} tokens in/out") for v in length_values]
               + [Line2D([], [], linestyle="", marker=m, color=c, label=k) for k, (m, c) in CHANGE_MARKS.items()])
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.98), fontsize=8, frameon=False,
               title="precision · scope · lengths · change", title_fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10, y=1.0)
    fig.tight_layout()
    return axes
