"""Figures for results over time: per model, small multiples of each configuration's two ends against the date.

Rows are hardware, the left column the low-concurrency end (tok/s/user at the lowest concurrency measured on two
dates), the right column the capacity end (tok/s/GPU at the highest). One line per configuration; colour is
precision, line style scope (as in the frontier figures) and marker the input/output lengths. Improvements and
regressions beyond the noise threshold are marked at the later date. Values span orders of magnitude across
configurations, so the y axes are log scale.
"""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import seaborn as sns
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
# seaborn's dash specs for the frontier figures' scope line styles ("" is solid)
_DASHES = {"single-gpu": (4, 1.5, 1, 1.5), "node": "", "rack": (4, 2), "multi-node": (1, 2), "unknown": ""}


def ends_over_time(data: pd.DataFrame, changes: pd.DataFrame, *, title: str = "") -> np.ndarray:
    """One figure of small multiples (a seaborn ``FacetGrid``): rows = hardware, columns = the two ends; one line
    per configuration (``units``), colour its precision, dashes its scope and markers its lengths (one seaborn
    ``style`` level per scope × lengths pair). Returns the array of Axes (hardware × ends)."""
    hardware = sorted(data["hardware"].unique()) or [""]
    roles = [role for role, _ in ROLES]
    length_values = sorted(data["lengths"].unique()) if "lengths" in data else []
    marker_of = {v: LENGTH_MARKERS[i % len(LENGTH_MARKERS)] for i, v in enumerate(length_values)}
    lengths = data["lengths"] if "lengths" in data else pd.Series("", index=data.index)
    shown = data.assign(date=pd.to_datetime(data["date"]), look=data["scope"].astype(str) + " · " + lengths.astype(str))
    looks = shown.drop_duplicates("look").set_index("look")
    dashes = {k: _DASHES.get(r["scope"], "") for k, r in looks.iterrows()}
    markers = {k: marker_of.get(r.get("lengths"), SCOPE_STYLES.get(r["scope"], SCOPE_STYLES["unknown"])[1])
               for k, r in looks.iterrows()}
    palette = {p: PRECISION_COLORS.get(p, "#666666") for p in shown["precision"].unique()}
    grid = sns.FacetGrid(shown, row="hardware", col="role", row_order=hardware, col_order=roles, sharex=True,
                         sharey=False, height=2.3, aspect=11 / 2 / 2.3, despine=False)
    grid.map_dataframe(sns.lineplot, x="date", y="value", hue="precision", palette=palette, style="look",
                       dashes=dashes, markers=markers, units="group", estimator=None, sort=True, legend=False,
                       markersize=3, linewidth=1.1, alpha=0.8)
    grid.set_titles("")
    axes = grid.axes
    for i, hw in enumerate(hardware):
        for j, (role, label) in enumerate(ROLES):
            ax = axes[i, j]
            sel = shown[(shown["hardware"] == hw) & (shown["role"] == role)]
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
            ax.set_xlabel("")
            ax.tick_params(labelsize=7, labelbottom=i == len(hardware) - 1)
    for ax in axes[-1]:
        ax.set_xlabel("measurement date")
        ax.xaxis.set_major_locator(mdates.MonthLocator())
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%b\n%Y"))
    if len(shown):
        pad = pd.Timedelta(days=5)
        axes[0, 0].set_xlim(shown["date"].min() - pad, shown["date"].max() + pad)
    precisions = sorted(data["precision"].unique())
    scopes = [s for s in SCOPE_STYLES if s in set(data["scope"])]
    handles = ([Line2D([], [], color=PRECISION_COLORS.get(p, "#666666"), label=p) for p in precisions]
               + [Line2D([], [], color="#444444", linestyle=SCOPE_STYLES[s][0], label=s) for s in scopes]
               + [Line2D([], [], color="#444444", linestyle="", marker=marker_of[v], markersize=4,
                         label=f"{v} tokens in/out") for v in length_values]
               + [Line2D([], [], linestyle="", marker=m, color=c, label=k) for k, (m, c) in CHANGE_MARKS.items()])
    fig = grid.figure
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.98), fontsize=8, frameon=False,
               title="precision · scope · lengths · change", title_fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10, y=1.0)
    fig.tight_layout()
    return axes
