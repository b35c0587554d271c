"""The claim-card figure: the nearest measured frontier (tok/s/user against tok/s/GPU) with the claim drawn on it.

Measured points are faint, each model × hardware × precision frontier is a line (colour = precision), the claim is
a vertical line (a per-user number), a horizontal line (a per-GPU number) or a star (both known), and the batch-1
speed of light of one GPU and of one 8-GPU node (datasheet, one token per step) are dotted verticals. Only draws:
every number comes from :class:`analysis.claims.ClaimCard`.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from analysis.plots.frontier import PRECISION_COLORS

CLAIM_COLOR = "#c62828"
SOL_COLOR = "#555555"


def _color(precision: str) -> str:
    return PRECISION_COLORS.get(str(precision).split(",")[0], "#666666")


def claim_on_frontier(card, *, ax=None, title: str | None = None):
    """Draw the evidence, its frontiers, the claim and the batch-1 SOL lines; return the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 5.5))
    ev, front = card.evidence, card.frontier
    restated = card.restated.set_index("axis")["value"]
    per_user = restated.get("tok/s/user", math.nan)
    per_gpu = restated.get("tok/s/GPU", math.nan)
    xs, ys = [], []
    best: set = set()
    if len(ev):
        ok = ev[np.isfinite(ev["tok_s_per_gpu"]) & (ev["tok_s_per_gpu"] > 0)]
        # Frontiers only for the best-matching model × hardware; the rest of the evidence stays grey.
        top = ok[ok["match"] == ok["match"].max()] if len(ok) else ok
        best = set(zip(top["model"], top["hardware"], top["precision"]))
        rest = ok.drop(top.index)
        if len(rest):
            ax.scatter(rest["tok_s_per_user"], rest["tok_s_per_gpu"], s=10, color="#bbbbbb", alpha=0.5, lw=0,
                       label="other similar measured points")
        for prec, g in top.groupby("precision"):
            ax.scatter(g["tok_s_per_user"], g["tok_s_per_gpu"], s=14, color=_color(prec), alpha=0.3, lw=0)
        xs += list(ok["tok_s_per_user"])
        ys += list(ok["tok_s_per_gpu"])
    if len(front):
        for (model, hw, prec), g in front.groupby(["model", "hardware", "precision"], sort=False):
            if (model, hw, prec) not in best:
                continue
            g = g.sort_values("tok_s_per_user")
            ax.plot(g["tok_s_per_user"], g["tok_s_per_gpu"], "-o", ms=3, lw=1.4, color=_color(prec),
                    label=f"{model} · {hw} · {prec} (frontier)")
    # The claim.
    label = f"claim {card.claim.id}: {card.claim.value_text}"
    if np.isfinite(per_user) and np.isfinite(per_gpu):
        ax.scatter([per_user], [per_gpu], marker="*", s=260, color=CLAIM_COLOR, zorder=5, label=label)
        xs.append(per_user)
        ys.append(per_gpu)
    elif np.isfinite(per_user):
        ax.axvline(per_user, color=CLAIM_COLOR, lw=2.2, label=f"{label} (tok/s/GPU not stated)")
        xs.append(per_user)
    elif np.isfinite(per_gpu):
        ax.axhline(per_gpu, color=CLAIM_COLOR, lw=2.2, label=f"{label} (tok/s/user not stated)")
        ys.append(per_gpu)
    # Batch-1 speed of light, one token per step, on 1 GPU and on an 8-GPU node, where the weights fit.
    sol = card.sol
    if len(sol):
        base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"] & sol["gpus"].isin([1, 8])]
        for _, r in base.iterrows():
            ls = ":" if r["gpus"] == 1 else "-."
            ax.axvline(r["sol_tok_s_per_user"], color=_color(r["precision"]), ls=ls, lw=1.1, alpha=0.9,
                       label=f"SOL {card.sol_info.get('model', '')} batch 1, {r['scope']}, "
                             f"{str(r['precision']).split(',')[0].upper()}: "
                             f"{r['sol_tok_s_per_user']:,.0f} tok/s/user")
            xs.append(r["sol_tok_s_per_user"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    if xs:
        ax.set_xlim(min(xs) / 1.6, max(xs) * 1.6)
    if ys:
        ax.set_ylim(min(ys) / 2, max(ys) * 3)
    elif not len(ev):
        ax.set_ylim(1, 1e5)
    ax.set_xlabel("tok/s per user (1000 / median TPOT; batch-1 SOL at the datasheet bandwidth)")
    ax.set_ylabel("output tok/s per GPU\n(÷ all GPUs of the deployment, prefill included)")
    ax.grid(True, which="major", alpha=0.3)
    if not len(ev):
        ax.text(0.5, 0.5, "no similar measured points in the points table", transform=ax.transAxes,
                ha="center", va="center", color="#888")
    ax.set_title(title or card.figure_title, fontsize=10.5)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax
