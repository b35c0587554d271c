"""Figures for latency distributions: ECDFs of TTFT, TPOT and E2E per run (seaborn), and the tail ratio p99/p50
against concurrency per configuration. Tables in (from :mod:`analysis.latency`), Axes out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter, NullFormatter

from analysis.text import plain

PANEL_TITLES = {"ttft_ms": "TTFT: time to first token", "tpot_ms": "TPOT: time per output token (per request)",
                "e2e_ms": "E2E: whole request"}


def _plain(label) -> str:
    """A label drawn as written: a '$' in a model or file name would start matplotlib's math mode."""
    return str(label).replace("$", r"\$")


def _ms(x: float, _pos=None) -> str:
    if x >= 1000:
        return f"{plain(x / 1000)} s"
    return f"{plain(x)} ms"


def ecdf_panels(long: pd.DataFrame, labels: Mapping, *, metrics: Sequence[str] = ("ttft_ms", "tpot_ms", "e2e_ms"),
                slo_ms: Mapping[str, float] | None = None, title: str = "") -> np.ndarray:
    """One panel per metric: the ECDF of each run's successful requests (x: log scale), one colour per run
    (``labels``: point -> legend text, in legend order). ``slo_ms`` draws a dashed vertical per metric limit."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(13, 4.2), squeeze=False)
    order = list(labels)
    palette = dict(zip(order, sns.color_palette("colorblind", len(order))))
    frame = long[long["point"].isin(order)].assign(run=lambda d: d["point"].map(labels))
    hue_order = [labels[p] for p in order]
    colours = {labels[p]: palette[p] for p in order}
    for ax, metric in zip(axes[0], metrics):
        sel = frame[frame["metric"] == metric]
        if len(sel):
            sns.ecdfplot(data=sel, x="value_ms", hue="run", hue_order=[h for h in hue_order if h in set(sel["run"])],
                         palette=colours, log_scale=True, ax=ax, legend=False)
        limit = (slo_ms or {}).get(metric)
        if limit:
            ax.axvline(limit, color="#555", ls="--", lw=1)
            ax.annotate(f"SLO {_ms(limit)}", (limit, 0.02), xytext=(3, 0), textcoords="offset points", fontsize=8,
                        color="#555")
        ax.set_title(PANEL_TITLES.get(metric, metric), fontsize=10)
        ax.set_xlabel("milliseconds (log scale)")
        ax.set_ylabel("share of requests at or below" if ax is axes[0][0] else "")
        ax.xaxis.set_major_formatter(FuncFormatter(_ms))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(0, 1.01)
        ax.grid(alpha=0.3, which="both")
    handles = [plt.Line2D([], [], color=colours[h], lw=2) for h in hue_order]
    fig.legend(handles, [_plain(h) for h in hue_order], loc="lower center", ncol=1, frameon=False, fontsize=9,
               bbox_to_anchor=(0.5, -0.02 - 0.045 * len(hue_order)))
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return axes


def tail_growth_lines(growth: pd.DataFrame, labels: Mapping[int, str], *, title: str = "",
                      ylabel: str = "TPOT p99 / p50") -> plt.Axes:
    """Tail ratio p99/p50 against concurrency (log 2), one line per configuration group (``labels``: group -> text)."""
    fig, ax = plt.subplots(figsize=(11, 4.6))
    groups = [g for g in labels if g in set(growth["group"])]
    palette = dict(zip(groups, sns.color_palette("tab20", len(groups))))
    for g in groups:
        sel = growth[growth["group"] == g].sort_values("concurrency")
        ax.plot(sel["concurrency"], sel["tail_ratio"], marker="o", ms=4, lw=1.4, color=palette[g], label=_plain(labels[g]))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: plain(x)))
    ax.axhline(1.0, color="#999", lw=0.8)
    ax.set_xlabel("client concurrency (log scale)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")
    if groups:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return ax
