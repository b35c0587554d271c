"""Figures for frontiers and matched comparisons: tok/s/user against tok/s/GPU, and capacity at equal interactivity.

Colour is precision and line style is interconnect scope throughout, so a reader can follow one group across
panels; the GPU denominator is written into every per-GPU axis label.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from analysis.frontier import DENOMINATOR_TEXT, TTFT_LIMIT_S
from analysis.text import leading_digit, lengths, missing, plain, whole

PRECISION_COLORS = {"fp4": "#d95f02", "fp8": "#1b63a5", "bf16": "#1b9e77", "fp16": "#7570b3", "int8": "#e7298a",
                    "int4": "#66a61e", "mixed": "#a6761d", "unknown": "#666666"}
SCOPE_STYLES = {"single-gpu": ("-.", "D"), "node": ("-", "o"), "rack": ("--", "s"), "multi-node": (":", "^"),
                "unknown": ("-", "x")}
SCOPE_ORDER = ["single-gpu", "node", "rack", "multi-node", "unknown"]
USER_LABEL = "tok/s/user (1000 / median TPOT)"


OTHER_COLORS = ["#1b63a5", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#666666"]


def _line_label(values: dict, line_by: Sequence[str]) -> str:
    """A frontier line's legend entry: its values in ``line_by`` order, missing and ``unknown`` ones left out, the
    lengths as ``8k/1k``."""
    parts = []
    for col in line_by:
        v = values[col]
        if col == "osl" or missing(v) or str(v) == "unknown":
            continue
        if col == "isl":
            if not missing(values.get("osl")):
                parts.append(lengths(v, values["osl"]))
            continue
        parts.append(str(v))
    return " · ".join(parts)


def gpu_label(denominator: str) -> str:
    return f"output tok/s per GPU\n(÷ {DENOMINATOR_TEXT.get(denominator, denominator)})"


def _concurrency_text(value) -> str:
    return "" if missing(value) else whole(value, grouped=False)


def _point_label(concurrency, n_gpus, with_gpus: bool) -> str:
    text = _concurrency_text(concurrency)
    if with_gpus and n_gpus is not None and np.isfinite(n_gpus):
        text += f"/{whole(n_gpus, grouped=False)}g"
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


LABEL_GID = "concurrency-label"
GUIDE_GID = "target-guide-label"
# Where a point label may go, tried in order: above right, below right, above left, below left (offset points).
_LABEL_SPOTS = [((4, 4), "left", "bottom"), ((4, -4), "left", "top"), ((-4, 4), "right", "bottom"),
                ((-4, -4), "right", "top")]


def place_labels(ax, items: list[tuple[float, float, str, str]], obstacles: list | None = None) -> int:
    """Annotate points ``(x, y, text, colour)`` in order, each at the first of four spots beside its point that
    overlaps no label already placed, no point marker (``obstacles``: display-space boxes) and stays inside the
    axes; a label with no free spot is left out. Returns how many were left out. Call after the layout is final."""
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    taken = list(obstacles or [])
    dropped = 0
    for x, y, label, color in items:
        for offset, ha, va in _LABEL_SPOTS:
            ann = ax.annotate(label, (x, y), textcoords="offset points", xytext=offset, ha=ha, va=va, fontsize=7,
                              color=color, gid=LABEL_GID)
            box = ann.get_window_extent(renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(other) for other in taken):
                taken.append(box.expanded(1.08, 1.15))
                break
            ann.remove()
        else:
            dropped += 1
    return dropped


def labels_drawn(axes) -> int:
    """How many point labels the frontier panels kept (the rest were left out to avoid overlaps)."""
    return sum(1 for ax in np.ravel(axes) for t in ax.texts if t.get_gid() == LABEL_GID)


def _marker_boxes(ax, xs, ys, size_pt: float = 6.0) -> list:
    """Display-space boxes of the markers at ``xs``, ``ys`` (``size_pt`` across, in points like the markers; keep
    it below twice the label offset, or a label would always touch its own marker)."""
    from matplotlib.transforms import Bbox

    pts = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    h = size_pt * ax.figure.dpi / 72.0 / 2
    return [Bbox([[px - h, py - h], [px + h, py + h]]) for px, py in pts if np.isfinite(px) and np.isfinite(py)]


def log_gpu_label(denominator: str) -> str:
    return f"output tok/s per GPU (log scale)\n(÷ {DENOMINATOR_TEXT.get(denominator, denominator)})"


LEVEL_MARKERS = ["o", "s", "D", "^", "v"]


def efficiency_dots(long: pd.DataFrame, *, xlabel: str, title: str, lower_is_better: bool = True):
    """One row per group, the value at each tok/s/user level as a dot on a log axis (``long``: columns ``label``,
    ``level``, ``value``, ``reading``, ``bound``). A group only measured faster than a level gets a hollow marker
    at its bound with ``≤`` (lower-is-better metric) or ``≥``; one read across a wide gap is marked ``~``.
    Rows are ordered by the value at the first level, best on top; groups with nothing to draw are left out; the
    legend sits right of the axes. Returns Axes."""
    drawn = np.isfinite(long["value"].astype(float)) | np.isfinite(long["bound"].astype(float))
    long = long[long["label"].isin(long.loc[drawn, "label"])]  # groups with nothing to draw are left out
    levels = sorted(long["level"].unique())
    first = long[long["level"] == levels[0]].set_index("label")
    key = first["value"].fillna(first["bound"])
    order = key.sort_values(ascending=lower_is_better, na_position="last").index.tolist()
    order += [lab for lab in dict.fromkeys(long["label"]) if lab not in order]
    fig, ax = plt.subplots(figsize=(9.5, 1.6 + 0.32 * len(order)))
    ypos = {lab: i for i, lab in enumerate(order)}
    side = "≤" if lower_is_better else "≥"
    for j, level in enumerate(levels):
        at = long[long["level"] == level]
        color, marker = f"C{j}", LEVEL_MARKERS[j % len(LEVEL_MARKERS)]
        y = at["label"].map(ypos).to_numpy(float) + (j - (len(levels) - 1) / 2) * 0.22
        value, bound = at["value"].to_numpy(float), at["bound"].to_numpy(float)
        ax.scatter(value, y, color=color, marker=marker, s=36, zorder=3, label=f"at {plain(level)} tok/s/user")
        ax.scatter(bound, y, facecolors="white", edgecolors=color, marker=marker, s=36, zorder=3)
        for v, b, yy, r in zip(value, bound, y, at["reading"]):
            if np.isfinite(b) and not np.isfinite(v):
                ax.annotate(side, (b, yy), textcoords="offset points", xytext=(-6 if lower_is_better else 6, 0),
                            ha="right" if lower_is_better else "left", va="center", fontsize=8, color=color)
            elif r == "wide gap":
                ax.annotate("~", (v, yy), textcoords="offset points", xytext=(6, 0), ha="left", va="center",
                            fontsize=9, color=color)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order, fontsize=8)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: plain(v)))
    # a range within one decade would show one or no major tick: label the 2s and 5s as well
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: plain(v) if leading_digit(v) in (2, 5) else ""))
    ax.set_xlabel(xlabel + " (log scale)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    handles, texts = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="#444444"))
    texts.append(f"hollow, {side}: bound (only measured faster)")
    handles.append(Line2D([], [], linestyle=""))
    texts.append("~: read across a wide gap (rough)")
    ax.legend(handles, texts, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return ax


def frontier_panels(fronts: pd.DataFrame, points: pd.DataFrame | None = None, *, panel: str = "hardware",
                    denominator: str = "all", targets: Sequence[float] = (), ncols: int = 3,
                    label_concurrency: bool = True, ttft_limit_s: float = TTFT_LIMIT_S, title: str | None = None,
                    line_by: Sequence[str] = ("precision", "scope"), color_by: str = "precision",
                    user_label: str = USER_LABEL):
    """One log-log panel per ``panel`` value: every measured point faint, each precision × scope frontier as a line,
    frontier points labelled with their concurrency (plus GPU count, ``8192/12g``, where it varies within the
    frontier), points whose median TTFT exceeds ``ttft_limit_s`` drawn hollow, dotted verticals at the targets,
    labelled with their tok/s/user above each panel. One legend for the figure, below the panels.

    A point label goes beside its point where it overlaps no other label and no marker; where no such spot exists
    it is left out (``labels_drawn`` counts the kept ones). ``points`` must already carry ``tok_s_per_gpu`` under
    the same denominator (``frontier.usable``). ``line_by``: the columns that keep two frontiers apart within a
    panel (e.g. add ``workload``: agentic traces and random prompts are never one line); ``color_by`` names the
    column that picks the colour (precision by default, else a fixed palette in sorted order); the line style is
    always the scope. Returns the array of Axes.
    """
    line_by = [c for c in line_by if c in fronts.columns and c != panel]
    if "scope" not in line_by:
        line_by.append("scope")
    if color_by not in line_by:
        line_by.insert(0, color_by)
    palette = ({k: v for k, v in PRECISION_COLORS.items()} if color_by == "precision" else
               {v: OTHER_COLORS[i % len(OTHER_COLORS)] for i, v in enumerate(sorted(fronts[color_by].astype(str)
                                                                                     .unique()))})
    names = sorted(fronts[panel].unique())
    nrows = max(1, math.ceil(len(names) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.9 * nrows + 0.9), sharex=True, sharey=True,
                             squeeze=False)
    limit_ms = ttft_limit_s * 1000.0
    legend = {}
    pending = {}
    for ax, name in zip(axes.flat, names):
        if points is not None:
            mine = points[points[panel] == name]
            h = ax.scatter(mine["tok_s_per_user"], mine["tok_s_per_gpu"], s=10, color="#bbbbbb", zorder=1)
            legend.setdefault("measured point (beaten on both axes)", h)
        front = fronts[fronts[panel] == name]
        items = pending.setdefault(ax, {"labels": [], "points": []})
        for key, grp in front.groupby(line_by, sort=True, dropna=False):
            values = dict(zip(line_by, key if isinstance(key, tuple) else (key,)))
            scope = values["scope"]
            style, marker = SCOPE_STYLES.get(scope, SCOPE_STYLES["unknown"])
            color = palette.get(str(values[color_by]), "#444444")
            grp = grp.sort_values("tok_s_per_user")
            (line,) = ax.plot(grp["tok_s_per_user"], grp["tok_s_per_gpu"], linestyle=style, color=color, zorder=3,
                              marker=marker, markersize=5, markerfacecolor=color)
            legend.setdefault(_line_label(values, line_by), line)
            ttft = grp["ttft_ms_p50"].astype(float) if "ttft_ms_p50" in grp else pd.Series(np.nan, index=grp.index)
            slow = (ttft > limit_ms).to_numpy()
            ax.scatter(grp["tok_s_per_user"][slow], grp["tok_s_per_gpu"][slow], marker=marker, s=34,
                       facecolors="white", edgecolors=color, linewidths=1.3, zorder=4)
            items["points"].append((grp["tok_s_per_user"], grp["tok_s_per_gpu"]))
            if label_concurrency:
                gpus = grp["n_gpus"] if "n_gpus" in grp else pd.Series(np.nan, index=grp.index)
                varies = gpus.nunique() > 1
                # fastest point first: the per-user end is the label a reader looks for
                for u, g, c, n in list(zip(grp["tok_s_per_user"], grp["tok_s_per_gpu"], grp["concurrency"],
                                           gpus))[::-1]:
                    items["labels"].append((u, g, _point_label(c, n, varies), color))
        for t in targets:
            ax.axvline(t, color="#999999", linestyle=":", linewidth=0.8, zorder=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(str(name), fontsize=10, pad=12)
        ax.grid(True, which="major", alpha=0.3)
    legend[f"hollow marker: TTFT p50 > {plain(ttft_limit_s)} s"] = Line2D(
        [], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="#444444")
    if targets:
        legend[f"dotted: {', '.join(plain(t) for t in targets)} tok/s/user"] = Line2D(
            [], [], color="#999999", linestyle=":")
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel(user_label + ", log scale")
    for ax in axes[:, 0]:
        ax.set_ylabel(log_gpu_label(denominator))
    fig.suptitle(title or "Pareto frontiers: numbers next to points are client concurrency (/Ng: GPU count where it "
                          f"varies); hollow: median TTFT > {plain(ttft_limit_s)} s; dotted lines mark target tok/s/user",
                 fontsize=11)
    fig.legend(list(legend.values()), list(legend.keys()), loc="lower center", ncol=min(4, len(legend)),
               fontsize=8, frameon=False, bbox_to_anchor=(0.5, 0.0))
    bottom = (0.35 + 0.22 * math.ceil(len(legend) / 4)) / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 0.98))
    fig.canvas.draw()
    for ax in axes.flat[:len(names)]:
        # the axes' x range is final now: the guide labels sit just above the panel, over their dotted line
        lo, hi = ax.get_xlim()
        for t in targets:
            if lo <= t <= hi:
                ax.text(t, 1.005, plain(t), transform=ax.get_xaxis_transform(), ha="center", va="bottom",
                        fontsize=7, color="#777777", gid=GUIDE_GID)
        boxes = [b for xs, ys in pending[ax]["points"] for b in _marker_boxes(ax, xs, ys)]
        place_labels(ax, pending[ax]["labels"], obstacles=boxes)
    return axes


def tick_label(label: str, width: int = 8) -> str:
    """One line per `` · `` part, long parts broken at spaces: tick labels that fit under a bar pair unrotated."""
    return "\n".join(textwrap.fill(part, width, break_on_hyphens=False, break_long_words=False)
                     for part in str(label).split(" · "))
