"""The claim-card figure: the nearest measured frontiers (tok/s/user against tok/s/GPU) with the claim drawn on them.

Measured points are faint; each model × hardware × precision × ISL/OSL frontier of the best-matching hardware is a
line (colour = precision, line style = input/output lengths, so a reader never compares across lengths without
seeing it), labelled with its evidence tier (``same-model``, or ``proxy`` with the other model's name); other
evidence is grey. Each part of the claim is drawn: a star where both axes are known (a per-GPU
number at a stated tok/s/user), a vertical line for a per-user number, a horizontal line for a per-GPU number
alone. The batch-1 speed of light on each scope of the SOL table (one GPU, an 8-GPU node, the claim's NVLink
domain; datasheet, one token per step, with the communication floor) are verticals; bounds within 3% of each other
share a line and a label. Legend labels stay short; the full claim text is in the card. Only
draws: every number comes from :class:`analysis.claims.ClaimCard`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from analysis.plots.frontier import PRECISION_COLORS
from analysis.text import fixed, plain, whole
from analysis.text import tokens as text_tokens

CLAIM_COLOR = "#c62828"
SOL_COLOR = "#555555"
LENGTH_STYLES = ["-", "--", ":", "-."]


def _color(precision: str) -> str:
    return PRECISION_COLORS.get(str(precision).split(",")[0], "#666666")


def _k(tokens: float) -> str:
    return text_tokens(tokens)


NO_LENGTHS = ("no fixed", "lengths")   # the style key of points with no fixed ISL/OSL (agentic traces)


def _lkey(isl, osl) -> tuple:
    return NO_LENGTHS if isl is None or osl is None or not (np.isfinite(isl) and np.isfinite(osl)) else (isl, osl)


def _lengths_label(isl, osl, workload=None) -> str:
    if isl is None or osl is None or not (np.isfinite(isl) and np.isfinite(osl)):
        return f"{workload} workload" if workload else "ISL/OSL n/a"
    if str(workload) == "random-capped":  # random lengths up to these caps
        return f"ISL/OSL ≤ {_k(isl)}/≤ {_k(osl)} (random)"
    return f"ISL/OSL {_k(isl)}/{_k(osl)}"


def _part_label(card, part) -> str:
    unit, value = part.unit, part.compared_value
    at = f" @ {plain(part.at_tok_s_per_user)} tok/s/user" if np.isfinite(part.at_tok_s_per_user) else ""
    hw = f" ({part.hardware})" if part.hardware else ""
    from analysis.claims.words import decode_counted

    # the y axis divides by all GPUs: a claim counted per decode GPU sits higher than like-for-like, and says so
    dec = (" per decode GPU" if part.kind in ("per-GPU", "per-system")
           and decode_counted(card.claim, {"part": part.text}) else "")
    return f"claim {card.claim.id}: {whole(value)} {unit}{at}{hw}{dec}"


def claim_on_frontier(card, *, ax=None, title: str | None = None):
    """Draw the evidence, its frontiers, each part of the claim and the batch-1 SOL lines; return the Axes."""
    from analysis.claims.conditions import lengths_match
    from analysis.claims.evidence import same_checkpoint
    from analysis.claims.labels import sol_precision

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 5.5))
    ev, front = card.evidence, card.frontier
    # The evidence tier of each model drawn (proxy: another model), named in the legend.
    tiers = dict(zip(ev["model"], ev["tier"])) if len(ev) and "tier" in ev else {}
    lengths = [tuple(p) for p in card.evidence_lengths] + [NO_LENGTHS]
    style = {p: LENGTH_STYLES[i % len(LENGTH_STYLES)] for i, p in enumerate(lengths)}
    xs, ys = [], []
    best: set = set()
    workloads: dict = {}
    if len(ev):
        ok = ev[np.isfinite(ev["tok_s_per_gpu"]) & (ev["tok_s_per_gpu"] > 0)]
        # Coloured: what the evidence object says to colour (ClaimEvidence.drawn); the rest is grey context.
        top = card.basis.drawn
        best = {(m, h, p, _lkey(i, o)) for m, h, p, i, o in zip(top["model"], top["hardware"], top["precision"],
                                                                  top["isl"], top["osl"])}
        workloads = {(m, h, p, _lkey(i, o)): w for m, h, p, i, o, w in zip(
            top["model"], top["hardware"], top["precision"], top["isl"], top["osl"], top.get("workload", top["model"]))
            if str(w) not in ("unknown", "nan")}
        rest = ok.drop(top.index)
        if len(rest):
            ax.scatter(rest["tok_s_per_user"], rest["tok_s_per_gpu"], s=10, color="#bbbbbb", alpha=0.5, lw=0,
                       label="other measured points (context)")
        for prec, g in top.groupby("precision"):
            ax.scatter(g["tok_s_per_user"], g["tok_s_per_gpu"], s=14, color=_color(prec), alpha=0.3, lw=0)
        xs += list(ok["tok_s_per_user"])
        ys += list(ok["tok_s_per_gpu"])
    if len(front):
        for (model, hw, prec, isl, osl), g in front.groupby(["model", "hardware", "precision", "isl", "osl"],
                                                            sort=True, dropna=False):
            if (model, hw, prec, _lkey(isl, osl)) not in best:
                continue
            g = g.sort_values("tok_s_per_user")
            tier = tiers.get(model, "proxy")
            who = f"{tier} ({model})" if tier in ("proxy", "other model") else tier
            if lengths_match(card.claim, isl, osl) is False:
                who += ", other lengths"
            if not same_checkpoint(card.claim.model, model) and tier == "same-model":
                who += f" ({model}, another checkpoint)"
            work = workloads.get((model, hw, prec, _lkey(isl, osl)))
            # the speculative decoding its points ran: a point that drafted may pass a bound drawn at one token a step
            specs_run = sorted({str(v) for v in (g["spec_decode"] if "spec_decode" in g else [])
                                if str(v) not in ("", "nan", "None")})
            # one frontier over runs with and without drafting: an envelope, not one setting's curve
            spec = (f"envelope over {' and '.join(specs_run)} runs" if len(specs_run) > 1 else
                    specs_run[0] if specs_run else "spec decoding not stated")
            ax.plot(g["tok_s_per_user"], g["tok_s_per_gpu"], style[_lkey(isl, osl)], marker="o", ms=3, lw=1.4,
                    color=_color(prec), label=f"{who}: {hw} · {str(prec).upper()} · {_lengths_label(isl, osl, work)}"
                                              f" · {spec}")
    # Points of the claim's model that give a per-user speed but no output tok/s/GPU (a published row with total
    # tokens only): ticks along the bottom, so the fastest measured speed is never missing from the picture.
    like = card.basis.stand_ins if card.basis is not None else ev.iloc[0:0]
    speed_only = like[like["tok_s_per_user"].notna() & like["tok_s_per_gpu"].isna()] if len(like) else like
    if len(speed_only):
        ax.scatter(speed_only["tok_s_per_user"], [0.03] * len(speed_only), transform=ax.get_xaxis_transform(),
                   marker="|", s=160, color="#444444", label="same-model per-user speed only (no tok/s/GPU given)")
        xs += list(speed_only["tok_s_per_user"])
        fastest = float(speed_only["tok_s_per_user"].max())  # named: among the bound lines a tick is easy to miss
        ax.annotate(f"fastest: {whole(fastest)}", (fastest, 0.07), xycoords=ax.get_xaxis_transform(),
                    xytext=(0, 14), textcoords="offset points", ha="center", fontsize=8.5, color="#222222",
                    arrowprops={"arrowstyle": "-", "color": "#444444", "lw": 0.8},
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85})
    # Each part of the claim.
    markers = iter(["*", "P", "X", "D"])
    for part in card.basis.parts:
        if part.kind == "per-user":
            ax.axvline(part.value, color=CLAIM_COLOR, lw=2.2, label=_part_label(card, part))
            xs.append(part.value)
        elif part.kind in ("per-GPU", "per-system"):
            per_gpu = part.compared_value
            if not np.isfinite(per_gpu):
                continue
            if np.isfinite(part.at_tok_s_per_user):
                ax.scatter([part.at_tok_s_per_user], [per_gpu], marker=next(markers, "*"), s=220, color=CLAIM_COLOR,
                           edgecolor="white", zorder=5, label=_part_label(card, part))
                xs.append(part.at_tok_s_per_user)
            else:
                ax.axhline(per_gpu, color=CLAIM_COLOR, lw=2.2, ls="--", label=_part_label(card, part))
            ys.append(per_gpu)
    # Batch-1 bound, one token per step, on each scope the SOL table has (1 GPU, the 4-GPU tray, an 8-GPU node, the
    # claim's NVLink domain), where the weights fit: datasheet bandwidth with the measured collectives paid after
    # each layer's weight read (the step-time model's bound, the one its verdict reads; the SOL table also gives the
    # overlapped one). Bounds within 3% of each other, whatever their scope, share one line and one label, so no
    # bound hides under another.
    sol = card.sol
    sol_model = card.claim.model_table or card.claim.model  # the claim's model: evidence of another is labelled so
    if len(sol):
        base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]].copy()
        base["bound"] = base["sol_tok_s_per_user_paid"]
        base = base.sort_values(["bound", "gpus"])
        if len(base):  # one entry for all of them: a point that drafted tokens can pass a one-token-a-step bound
            ax.plot([], [], " ", label="bounds (lines): τ 1, no speculation;\na point that drafted may pass them")
        styles = {1: ":", 4: (0, (6, 2, 1, 2, 1, 2)), 8: "-."}  # 72 GPUs: dashed
        groups: list[list] = []
        for _, r in base.iterrows():
            if groups and r["bound"] <= groups[-1][0]["bound"] * 1.03:
                groups[-1].append(r)
            else:
                groups.append([r])
        starred: dict = {}  # a precision whose shipped recipe mixes formats: "FP4*", spelt out in one legend entry
        for grp in groups:
            r = grp[0]
            by_scope: dict = {}
            for x in grp:
                short = str(x["precision"]).split(",")[0].upper()
                full = sol_precision(x)
                if full != short:
                    starred[short] = full
                    short += "*"
                by_scope.setdefault(x["scope"], []).append(short)
            what = "; ".join(f"{sc} {' and '.join(ps)}" for sc, ps in by_scope.items())
            lo, hi = min(x["bound"] for x in grp), max(x["bound"] for x in grp)
            value = whole(lo) if round(lo) == round(hi) else f"{whole(lo)}–{whole(hi)}"
            ax.axvline(r["bound"], color=_color(r["precision"]), ls=styles.get(int(r["gpus"]), "--"), lw=1.1,
                       alpha=0.9, label=f"batch-1 bound of {sol_model}, {what}: {value}")
            xs.append(r["bound"])
        for short, full in starred.items():
            ax.plot([], [], " ", label=f"{short}*: {full}, as its checkpoint is served")
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs, ys = [x for x in xs if x > 0], [y for y in ys if y > 0]  # a log axis has room for positive values only
    if xs:
        ax.set_xlim(min(xs) / 1.6, max(xs) * 1.6)
    else:
        ax.set_xlim(1, 1e4)
    if ys:
        ax.set_ylim(min(ys) / 2, max(ys) * 3)
    else:  # no tok/s/GPU to place (no evidence, or evidence that gives per-user speed only): a log axis still
        ax.set_ylim(1, 1e5)
    ax.set_xlabel("tok/s per user (1000 / TPOT at the source's statistic: mean or median, as each source gives it)\n"
                  "bound lines: batch 1, τ = 1 (no speculative decoding), datasheet bandwidth, no fixed overhead, "
                  "measured\ncollective latencies paid after each layer's weight read (the SOL table also gives them "
                  "hidden under it)" + _speculative_bounds_note(sol))
    ax.set_ylabel("output tok/s per GPU\n(÷ all GPUs of the deployment, prefill included)")
    ax.grid(True, which="major", alpha=0.3)
    if not len(ev):
        ax.text(0.5, 0.5, "no similar measured points in the points table", transform=ax.transAxes,
                ha="center", va="center", color="#888")
    ax.set_title(title or card.figure_title, fontsize=10.5)
    _legend_below(ax)
    return ax


def _legend_below(ax, fontsize: float = 9.0):
    """The legend under the axes and their (several-line) x label, in a size a 1,400 px page keeps readable: beside
    the axes its long entries had shrunk the whole figure when the page scaled it to its width. Its place is worked
    out from the label's line count and font size (tick labels, then each line at 1.25 × its size), not by drawing
    the figure once more (a draw costs the claim card a fifth of a second)."""
    fig = ax.figure
    label = ax.xaxis.label
    lines = label.get_text().count("\n") + 1
    points = 14.0 + 3.5 + lines * 1.25 * label.get_fontsize() + 6.0  # tick labels and pads, the label, a gap
    height_in = ax.get_position().height * fig.get_figheight()
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(-0.12, -points / 72.0 / height_in),
              frameon=False, ncol=1)


def _speculative_bounds_note(sol) -> str:
    """What the same bounds read at the SOL table's largest τ (evidence run with speculative decoding can pass a
    τ = 1 line without passing its bound): ``""`` without a τ above 1."""
    if not len(sol) or "tokens_per_step" not in sol:
        return ""
    top = float(sol["tokens_per_step"].max())
    at = sol[(sol["tokens_per_step"] == top) & sol["fits"]]["sol_tok_s_per_user_paid"]
    if top <= 1.0 or not len(at):
        return ""
    return (f";\nwith speculative decoding they move with τ: at τ = {fixed(top, 2)} the same bounds read "
            f"{whole(at.min())}–{whole(at.max())} tok/s/user\n(collectives paid after each layer's read, as drawn here; "
            "the SOL table's overlapped column is higher)")

