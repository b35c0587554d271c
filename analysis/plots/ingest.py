"""Figures for the ingest report: where the points come from."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

SCOPE_ORDER = ["single-gpu", "node", "rack", "multi-node", "unknown"]


def points_by_hardware(points: pd.DataFrame, *, ax=None):
    """Stacked horizontal bars: points per hardware, split by interconnect scope."""
    table = points.groupby(["hardware", "scope"]).size().unstack(fill_value=0)
    table = table[[s for s in SCOPE_ORDER if s in table.columns]]
    table = table.loc[table.sum(axis=1).sort_values().index]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.35 * len(table) + 1.5))
    table.plot.barh(stacked=True, ax=ax, width=0.75, colormap="viridis")
    ax.set_xlabel("points (benchmark measurements)")
    ax.set_ylabel("")
    ax.set_title("Points per hardware, by interconnect scope")
    ax.legend(title="scope", loc="lower right", frameon=False)
    return ax
