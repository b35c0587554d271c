"""The batch-scaling report (``notebooks/10-batch-scaling.ipynb``): everything it shows, built once.

:func:`build` fits the batch model and returns a :class:`BatchScalingPage`: the headline, one section for the
measured decode-step sweeps and one for the serving sweeps (each titled for what it holds), the held-out batch
checks of the linear and the roofline form, the performance model's leave-one-group-out validation
(:func:`model_validation_section`), display-ready tables with short headers, the data of every figure, the
sentences, and :meth:`BatchScalingPage.results`. The notebook only displays them. Every data-derived string in a
sentence or an HTML block passes through :func:`analysis.text.esc`; tables are escaped cell by cell where they are
shown.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from analysis import config, data, roofline, scaling, text

# A fit whose leave-one-batch-out error is above this is listed apart: it misses batches it did not see.
POOR_FIT_CV_ERROR = 0.10
# A batch-1 speed read off a sweep whose smallest batch is larger than this is too far an extrapolation to show.
PEAK_MODEL_MAX_BATCH_MIN = 16.0
_PERCENT = ("cv_error", "peak_model_error", "median_abs_rel_error", "max_abs_rel_error", "rel_error",
            "fraction_of_sol_measured", "fraction_of_sol_datasheet")
# Long names for the full (collapsible) tables: fractions as %, the largest_batch_* columns said in words.
DISPLAY_NAMES = {
    "fitted_form": "fitted form", "batch_min": "smallest measured batch", "largest_batch": "largest measured batch",
    "fraction_of_sol_measured": "% of SOL (measured bandwidth)",
    "fraction_of_sol_datasheet": "% of SOL (datasheet bandwidth)",
    "largest_batch_tok_s": "tok_s at largest measured batch",
    "largest_batch_tok_s_per_gpu": "tok_s_per_gpu at largest measured batch",
    "largest_batch_tok_s_per_user": "tok_s_per_user at largest measured batch",
    "asymptote_tok_s": "asymptote tok_s (B → ∞)", "b_half": "B½", "b_half_lo": "B½ lo", "b_half_hi": "B½ hi",
    "peak_tok_s_per_user": "batch-1 tok_s_per_user (measured)",
    "peak_tok_s_per_user_model": "batch-1 tok_s_per_user (model)",
    "cv_error": "cv error %", "peak_model_error": "model vs measured at batch 1 %",
    "median_abs_rel_error": "median abs error %", "max_abs_rel_error": "max abs error %",
    "marginal_ms_per_seq_top": "measured ms per added seq (top two batches)",
    "floor_ms_per_seq_at_ref": "floor ms per seq at ref",
}


def display_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of a summary, floors or extrapolation table for a reader: fractions ×100 under ``%`` headers, the
    ``largest_batch_*`` columns named "at largest measured batch", B½ below 1 blanked (no half-speed batch exists
    below one sequence), the model's batch-1 speed blanked where the smallest measured batch exceeds
    ``PEAK_MODEL_MAX_BATCH_MIN`` (t0 is not identified that far out), and per-sequence costs measured on host-bound
    (eager) rows blanked: there added GPU work first fills idle launch gaps, so the measured cost of one more
    sequence can be negative and says nothing about a floor. Values in the fits stay fractions."""
    out = frame.copy()
    for c in _PERCENT:
        if c in out.columns:
            out[c] = 100.0 * pd.to_numeric(out[c], errors="coerce")
    for c in ("b_half", "b_half_lo", "b_half_hi"):
        if c in out.columns:
            out[c] = out[c].where(out[c] >= 1)
    if "marginal_ms_per_seq_top" in out.columns and "floor_source" in out.columns:
        host = out["floor_source"].fillna("").astype(str).str.contains("host-bound")
        out.loc[host, "marginal_ms_per_seq_top"] = np.nan
    if "peak_tok_s_per_user_model" in out.columns and "batch_min" in out.columns:
        out.loc[out["batch_min"] > PEAK_MODEL_MAX_BATCH_MIN, "peak_tok_s_per_user_model"] = np.nan
    return out.rename(columns=DISPLAY_NAMES)


def short_labels(fits: pd.DataFrame) -> pd.Series:
    """Group labels without the key values every row shares (the section title names those)."""
    by = [c for c in str(fits["group_by"].iloc[0]).split(",") if c] if len(fits) and "group_by" in fits else []
    varying = [c for c in by if fits[c].astype(str).nunique() > 1]
    labels = fits.apply(lambda r: scaling.group_label({c: r[c] for c in varying}), axis=1) if varying else None
    return labels if labels is not None else fits["group"]


def _b_half_caveat(row) -> str:
    """What a B½ is beside an estimate: ``upper`` where a per-sequence cost sits on its physical floor (B½ is then an
    upper bound), ``beyond`` where it lies past the largest batch measured (the model's extrapolation), else ``""``."""
    if any(term in str(row.get("at_bound", "") or "") for term in ("t1", "t2")):
        return "upper"
    largest = row.get("largest_batch", np.nan)
    return "beyond" if np.isfinite(largest) and row["b_half"] > largest else ""


def _b_half_title(row) -> str:
    """B½ in a figure's title with the caveats its table cell carries (:func:`_b_half_text`)."""
    caveat, b = _b_half_caveat(row), text.num(row["b_half"])
    return (f"≤ {b} (upper bound)" if caveat == "upper" else
            f"≈ {b} (model, beyond the largest batch measured)" if caveat == "beyond" else f"≈ {b} (model)")


def _b_half_text(row) -> str:
    b, lo, hi = row.get("b_half"), row.get("b_half_lo"), row.get("b_half_hi")
    if not (np.isfinite(b) and b >= 1):
        return "–"
    caveat = _b_half_caveat(row)
    largest = row.get("largest_batch", np.nan)
    beyond = " (beyond the largest batch measured)" if np.isfinite(largest) and b > largest else ""
    # a per-sequence cost on its physical floor makes B½ an upper bound: no interval around it (as the prose says)
    if caveat == "upper":
        return f"≤ {text.num(b)} (upper bound){beyond}"
    if beyond:  # past the largest batch the interval is the model's, not the data's: print none
        return f"{text.num(b)} (no interval){beyond}"
    if np.isfinite(lo) and np.isfinite(hi) and lo >= 1:
        return f"{text.num(b)} ({text.num(lo)}–{text.num(hi)}){beyond}"
    return f"{text.num(b)} (interval not identified){beyond}"


def _short_form(form: str) -> str:
    return "moe" if str(form).startswith("moe") else "dense"


def compact_table(fits: pd.DataFrame, *, measured_peak: bool) -> pd.DataFrame:
    """The table a section shows: short headers, one batch-1 speed (measured, or the model's labelled so)."""
    if fits.empty:
        return pd.DataFrame()
    out = pd.DataFrame({"configuration": short_labels(fits).to_numpy(),
                        "form": fits["fitted_form"].map(_short_form).to_numpy()})
    if measured_peak:
        out["B=1 tok/s/user (measured)"] = fits["peak_tok_s_per_user"].to_numpy()
    else:
        model = fits["peak_tok_s_per_user_model"].where(fits["batch_min"] <= PEAK_MODEL_MAX_BATCH_MIN)
        out["smallest B"] = fits["batch_min"].to_numpy()
        out["B=1 tok/s/user (model, not measured)"] = model.to_numpy()
    out["largest B"] = fits["largest_batch"].to_numpy()
    out["tok/s at largest B"] = fits["largest_batch_tok_s"].to_numpy()
    out["tok/s/GPU at largest B"] = fits["largest_batch_tok_s_per_gpu"].to_numpy()
    out["tok/s/user at largest B"] = fits["largest_batch_tok_s_per_user"].to_numpy()
    out["B½ (95% interval)"] = [_b_half_text(r) for _, r in fits.iterrows()]
    out["cv error %"] = 100.0 * fits["cv_error"].to_numpy()
    return out


def poor_fit_table(fits: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Fits demoted for missing held-out batches: which, over which batches, by how much, and why it matters."""
    if fits.empty:
        return pd.DataFrame()
    why = [(f"refit without one batch, the model misses it by {100 * r['cv_error']:.0f}% on average "
            f"(worst {100 * r['cv_error_max']:.0f}%)" if np.isfinite(r["cv_error"]) else
            "too few batches to test the model on one it did not see")
           + ("; " + str(r["at_bound"]).replace("_ms", "") if r.get("at_bound") else "")
           for _, r in fits.iterrows()]
    return pd.DataFrame({"configuration": fits["group"].to_numpy(),
                         "batches": [f"{r['n_batches']:.0f} ({text.num(r['batch_min'])}–{text.num(r['batch_max'])})"
                                     for _, r in fits.iterrows()],
                         "cv error %": 100.0 * fits["cv_error"].to_numpy(), "why listed apart": why})


def not_fitted_summary(fits: pd.DataFrame) -> pd.DataFrame:
    """Groups not fitted, by reason: how many, and which models they belong to."""
    nf = fits[fits["status"] != "fitted"]
    if nf.empty:
        return pd.DataFrame(columns=["reason", "groups", "models"])
    rows = []
    for reason, g in nf.groupby("status", sort=True):
        counts = g["model"].astype(str).value_counts() if "model" in g else pd.Series(dtype=int)
        models = ", ".join(f"{m} ({n})" for m, n in counts.head(4).items())
        rows.append({"reason": str(reason).removeprefix("not fitted: "), "groups": len(g),
                     "models": models + (f", {len(counts) - 4} more" if len(counts) > 4 else "")})
    return pd.DataFrame(rows).sort_values("groups", ascending=False, ignore_index=True)


def details_html(summary: str, frame: pd.DataFrame) -> str:
    """A collapsible block holding a full table (escaped cell by cell and header by header)."""
    if frame.empty:
        return ""
    html = text.table_html(frame, wrap_over=30, min_width="12em",
                           attributes='class="pc-table" style="font-size:85%"')
    return (f"<details><summary>{text.esc(summary)}</summary><div style=\"overflow-x:auto;max-width:100%\">"
            f"{html}</div></details>")


# A fit is testable (its form can be checked on held-out batches) from this many batch sizes on.
TESTABLE_BATCHES = 5


@dataclass
class Figure:
    """One speed-against-batch figure: measured points, model curve with band, the fit row and a title."""

    group: str
    measured: pd.DataFrame
    curve: pd.DataFrame
    row: pd.Series
    title: str


@dataclass
class BatchScalingPage:
    """Everything the batch-scaling report shows (see the module note)."""

    params: dict
    points: pd.DataFrame
    fits: pd.DataFrame
    draws: pd.DataFrame
    floors: dict | None
    head: dict | None
    residuals: pd.DataFrame
    figures: list = field(default_factory=list)
    launch: pd.DataFrame = field(default_factory=pd.DataFrame)
    check: pd.DataFrame = field(default_factory=pd.DataFrame)
    check_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    moe_checks: dict = field(default_factory=dict)
    sol: pd.DataFrame = field(default_factory=pd.DataFrame)
    roofline_check: pd.DataFrame = field(default_factory=pd.DataFrame)   # roofline form, fitted on B ≤ 24
    roofline_linear: pd.DataFrame = field(default_factory=pd.DataFrame)  # linear form, the same batches fitted
    validation: dict = field(default_factory=dict)                       # model_validation_section

    # --- which fits go where ---------------------------------------------------------------------------
    @property
    def fitted(self) -> pd.DataFrame:
        return scaling.fitted(self.fits)

    def _section(self, step: bool, good: bool | None = None) -> pd.DataFrame:
        f = self.fitted
        f = f[(f["step_source"] == "step_ms") == step]
        if good is not None:
            f = f[(f["cv_error"] <= self.params["poor_fit_cv_error"]) == good]
        return f

    @property
    def step_fits(self) -> pd.DataFrame:
        return self._section(True)

    @property
    def serving_fits(self) -> pd.DataFrame:
        return self._section(False)

    @property
    def degenerate(self) -> pd.DataFrame:
        """Fitted groups with a coefficient on its bound or a rank-deficient design."""
        f = self.fitted
        bad = f["at_bound"].fillna("").astype(str).ne("") | f["notes"].fillna("").str.contains("rank-deficient")
        return f[bad]

    # --- sentences (Markdown; data-derived names escaped) ----------------------------------------------
    def headline(self) -> str:
        """The answer first — measured numbers only, true without footnotes — then the model's reading of it."""
        f, n_all = self.fitted, len(self.fits)
        count = (f"{len(f)} of {n_all} configurations fitted ({len(self.points)} points): {len(self.step_fits)} "
                 f"measured decode-step sweeps and {len(self.serving_fits)} serving sweeps.")
        if not self.head:
            return count
        row = scaling.select(self.fits, group=self.head["group"])
        paragraph = scaling.describe(row, level=self.params["level_tok_s_per_user"], named=False)
        return f"**{scaling.short_headline(row)}**\n\n{paragraph}\n\n{count}"

    def step_title(self) -> str:
        f = self.step_fits
        hw = ", ".join(text.esc(h) for h in sorted(f["hardware"].astype(str).unique())) if len(f) else "none"
        return f"## Measured decode steps ({hw}): single-user speed and throughput against batch"

    def step_intro(self) -> str:
        f, limit = self.step_fits, self.params["poor_fit_cv_error"]
        good = self._section(True, good=True)
        out = (f"{len(f)} sweeps timed decode steps directly, batch 1 included, so the single-user speed in the "
               f"table is measured. {len(good)} fit within {100 * limit:.0f}% leave-one-batch-out error and are "
               "tabled; the others are listed after the table with why. The model's batch-1 value is in the full "
               "table below (collapsed).")
        note = scaling.shard_note(self.points)
        return out + (f"\n\n**TP-shard sweeps.** {note}" if note else "")

    def degenerate_text(self) -> str:
        d = self.degenerate
        d = d[d["step_source"] == "step_ms"]
        if d.empty:
            return "No fit in this section has a coefficient on its bound."
        return (f"{len(d)} of these {len(self.step_fits)} fits have a coefficient on its bound (0 or its physical "
                "floor): the batches measured do not identify it above the bound, so their B½ and asymptote rest on "
                "it. The full table at the end names the coefficient (column \"at bound\").")

    def figures_for(self, *, step: bool) -> list:
        """The speed-against-batch figures of one section (serving: at most ``max_serving_figures``)."""
        figs = [fig for fig in self.figures if (fig.row["step_source"] == "step_ms") == step]
        return figs if step else figs[: self.params["max_serving_figures"]]

    def _residuals_of(self, step: bool) -> pd.DataFrame:
        groups = set(self._section(step)["group"])
        return self.residuals[self.residuals["group"].isin(groups)]

    def residual_groups(self, *, step: bool) -> pd.DataFrame:
        """Residuals of the section's groups drawn above, plus the section's worst residual wherever it is."""
        r = self._residuals_of(step)
        shown = [fig.group for fig in self.figures_for(step=step)]
        if len(r):
            shown.append(r.loc[r["rel_error"].abs().idxmax(), "group"])
        return r[r["group"].isin(shown)]

    def residual_text(self, *, step: bool) -> str:
        r = self._residuals_of(step)
        if r.empty:
            return ""
        w = r.loc[r["rel_error"].abs().idxmax()]
        return (f"Largest residual of the {r['group'].nunique()} fits in this section: {w['rel_error'] * 100:+.1f}% at "
                f"batch {w['batch']:.0f} in {text.esc(w['group'])} (annotated in the figure). "
                f"{(r['rel_error'].abs() <= 0.10).mean() * 100:.0f}% of the {len(r)} measured points are within 10% "
                "of their fit.")

    def launch_text(self) -> str:
        t = self.launch
        if t.empty:
            return "No configuration was measured both eager and with CUDA graphs at batch 1."
        top, low = t.loc[t["eager_over_cudagraph"].idxmax()], t.loc[t["eager_over_cudagraph"].idxmin()]
        return (f"Launching every kernel from Python costs {low['launch_overhead_ms']:.1f}–"
                f"{top['launch_overhead_ms']:.1f} ms per step at batch 1: {text.esc(top['model'])} "
                f"{text.esc(top['precision'])} runs {top['eager_over_cudagraph']:.1f}× slower eager "
                f"({top['tok_s_per_user_eager']:.0f} against {top['tok_s_per_user_cudagraph']:.0f} tok/s/user). "
                "Single-user peaks depend on how kernels are launched (CUDA graphs, fusion), not only on the GPU.")

    def check_text(self) -> str:
        c, s, b = self.check, self.check_summary, self.params["fit_max_batch"]
        if c.empty:
            return f"No configuration has three batches up to {b:g} and a larger one to check."
        w = s.loc[s["max_abs_rel_error"].idxmax()]
        return (f"Fitted on batches up to {b:g}, the linear form predicts the larger batches with a median error of "
                f"{c['rel_error'].abs().median() * 100:.1f}% and at worst {w['max_abs_rel_error'] * 100:.0f}% "
                f"({text.esc(w['group'])}). Throughput at large batches read off a small-batch sweep is an estimate, "
                "not a measurement.")

    def check_intro(self) -> str:
        """What the two held-out checks below are, each table named by its form."""
        b, r = self.params["fit_max_batch"], self.params["roofline_fit_max_batch"]
        lo, hi = (f * r for f in ROOFLINE_BEYOND)
        return (f"Two forms of the batch model are fitted on small batches and checked on larger ones they did not "
                f"see. **The first table is the linear form** `t0 + t1·B + t2·B·L`, the in-range estimator every fit "
                f"above uses (curves, B½, asymptote), fitted on batches ≤ {b:g}: its per-sequence slope is read where "
                "small GEMMs cost more per row, so past the fitted batches it keeps rising and over-states the step. "
                "**The second table is the roofline form**: the performance model's step equation applied to each "
                "kind of kernel (the GEMMs stream the weights, the attention kernels the KV cache, each at the share "
                "of HBM bandwidth or peak FLOP rate measured for it), only the overhead per layer (and an MoE's "
                f"weights' share) fitted, on batches ≤ {r:g}, and checked {text.plain(ROOFLINE_BEYOND[0])}× to "
                f"{text.plain(ROOFLINE_BEYOND[1])}× beyond ({text.whole(lo)}–{text.whole(hi)}). Negative errors: "
                "predicted too fast.")

    def linear_check_caption(self) -> str:
        return (f"**Linear form (in-range estimator), fitted on batches ≤ {self.params['fit_max_batch']:g}**: "
                "step-time error at each larger batch, for the sweeps with whole batch sizes; every group's "
                "summary, serving sweeps included, is in the collapsed block below the table.")

    def roofline_caption(self) -> str:
        r = self.params["roofline_fit_max_batch"]
        lo, hi = (f * r for f in ROOFLINE_BEYOND)
        return (f"**Roofline form, fitted on batches ≤ {r:g}**, per configuration and context: the step-time error "
                f"at the batches {text.plain(ROOFLINE_BEYOND[0])}×–{text.plain(ROOFLINE_BEYOND[1])}× beyond "
                f"({text.whole(lo)}–{text.whole(hi)}; the worst where there are several), the linear form's error at "
                "the same point fitted on the same batches, and, for information, the other held-out batches (rows "
                "with a batch in that range first); below it, the shares each fit used and where each came from.")

    def roofline_summary(self) -> pd.DataFrame:
        return roofline_summary(self.roofline_check, self.roofline_linear,
                                fit_max_batch=self.params["roofline_fit_max_batch"])

    def roofline_table(self) -> pd.DataFrame:
        """The roofline check as the page shows it: errors in %, one row per configuration and context."""
        t = self.roofline_summary()
        if t.empty:
            return t
        r = self.params["roofline_fit_max_batch"]
        lo, hi = (f * r for f in ROOFLINE_BEYOND)
        return pd.DataFrame({
            "configuration": t["group"].to_numpy(), "context": t["context"].to_numpy(),
            f"batches fitted (B ≤ {r:g})": t["n_fit_batches"].to_numpy(),
            f"B at {text.plain(ROOFLINE_BEYOND[0])}×–{text.plain(ROOFLINE_BEYOND[1])}× "
            f"({text.whole(lo)}–{text.whole(hi)})": t["batches_in_range"].replace("", text.MISSING).to_numpy(),
            "roofline error % there": error_cells(100 * t["rel_error_in_range"]),
            f"linear error % there (fitted on B ≤ {r:g} too)": error_cells(100 * t["linear_rel_error_in_range"]),
            "other held-out B: roofline error %": t["other_batches"].replace("", text.MISSING).to_numpy()})

    def roofline_shares_table(self) -> pd.DataFrame:
        """One row per configuration: the three shares its roofline fit used, each with where it came from, and the
        fitted overhead per layer."""
        t = self.roofline_summary()
        if t.empty:
            return t
        t = t.drop_duplicates("group")
        return pd.DataFrame({
            "configuration": t["group"].to_numpy(),
            "weights' share": t["bw_share"].to_numpy(), "weights' share from": t["bw_share_source"].to_numpy(),
            "KV share": t["kv_bw_share"].to_numpy(), "KV share from": t["kv_bw_share_source"].to_numpy(),
            "FLOP share": t["flop_share"].to_numpy(), "FLOP share from": t["flop_share_source"].to_numpy(),
            "overhead ms per layer (fitted)": t["overhead_ms_per_layer"].to_numpy()})

    def roofline_text(self, *, markdown: bool = True) -> str:
        """Whether every dense H200 step sweep is within the tolerance 4×–8× beyond the fitted batches, the worst
        named, the linear form at the same points, the other groups with a batch there, and the dense sweeps'
        errors nearer in and farther out."""
        e, bold = (text.esc, "**") if markdown else (str, "")
        t, r, tol = self.roofline_summary(), self.params["roofline_fit_max_batch"], self.params["roofline_tolerance"]
        lo, hi = (f * r for f in ROOFLINE_BEYOND)
        beyond = f"{text.plain(ROOFLINE_BEYOND[0])}×–{text.plain(ROOFLINE_BEYOND[1])}× beyond"
        if t.empty:
            return f"No configuration has three batches up to {r:g} and a larger one to check in the roofline form."
        d = dense_h200_sweeps(t)
        others = t[t["batch_in_range"].notna() & ~t.index.isin(d.index)]
        out = []
        if len(d):
            err = d["rel_error_in_range"]
            w = d.loc[err.abs().idxmax()]
            within = err.abs() <= tol
            where = (f"{e(w['group'])} at context {text.whole(w['context'])}" if w["context"] == w["context"]
                     else e(w["group"]))
            n = (f"{text.count(len(d), 'dense H200 step sweep')} "
                 f"({text.count(d['group'].nunique(), 'configuration')}, each context a sweep)")
            verdict = (f"{int(within.sum())} of the {n} are within {text.pct(tol)}" if not within.all() else
                       f"All {n} are within {text.pct(tol)}" if len(d) > 1 else f"The {n} is within {text.pct(tol)}")
            out.append(f"{bold}{verdict} at {text.plain(ROOFLINE_BEYOND[0])}×–{text.plain(ROOFLINE_BEYOND[1])}× "
                       f"the largest batch fitted ({r:g}): batch {scaling.batch_list(d['batch_in_range'])}, errors "
                       f"{text.signed(100 * err.min())}% to {text.signed(100 * err.max())}%"
                       f"{_others_clause(others, tol)}.{bold} The worst is "
                       f"{text.signed(100 * w['rel_error_in_range'])}% at batch {text.num(w['batch_in_range'])}: "
                       f"{where}.")
            if not within.all():
                out.append("Outside: " + "; ".join(
                    f"{e(x['group'])} at context {text.whole(x['context'])}, "
                    f"{text.signed(100 * x['rel_error_in_range'])}%" for _, x in d[~within].iterrows()) + ".")
            lin = d["linear_rel_error_in_range"].abs().dropna()
            if len(lin):
                out.append(f"The linear form fitted on the same batches misses the same points by "
                           f"{text.span(100 * lin.min(), 100 * lin.max(), lambda v: text.fixed(v, 1))}%.")
            c = self.roofline_check
            rows = c[c["group"].isin(set(d["group"]))]
            far, near = rows[rows["batch"] > hi], rows[rows["batch"] < lo]
            if len(far):
                out.append(f"For information, farther out (batch {scaling.batch_list(far['batch'])}) every error of "
                           f"these sweeps is within {text.fixed(100 * far['rel_error'].abs().max(), 1)}%")
            if len(near):
                under = " and every one predicted too fast" if (near["rel_error"] < 0).all() else ""
                out.append(("; nearer in" if len(far) else "For information, nearer in") +
                           f" (batch {scaling.batch_list(near['batch'])}) within "
                           f"{text.fixed(100 * near['rel_error'].abs().max(), 1)}%{under}.")
            elif len(far):
                out[-1] += "."
        else:
            out.append(f"No dense H200 step sweep has a batch {beyond} the {r:g} fitted.")
        if len(others):
            out.append(f"Other configurations with a batch {beyond}: " + "; ".join(
                f"{e(x['group'])} ({'step sweep' if x['step'] else 'serving sweep'}, "
                f"{'MoE' if x['moe'] else 'dense'}), {text.signed(100 * x['rel_error_in_range'])}% at batch "
                f"{text.num(x['batch_in_range'])}" for _, x in others.iterrows()) + ".")
        return " ".join(out).replace(" ; nearer", "; nearer")

    # --- the performance model on configurations left out of its calibration ---------------------
    def validation_text(self, *, markdown: bool = True) -> str:
        v = self.validation
        if not v:
            return "The performance model was not validated on this page's points."
        return validation_summary_text(v["report"], v["groups"], markdown=markdown)

    def validation_family_table(self) -> pd.DataFrame:
        return validation_family_table(self.validation.get("by_family", pd.DataFrame()))

    def validation_worst_table(self) -> pd.DataFrame:
        return validation_worst_table(self.validation.get("worst", pd.DataFrame()))

    def validation_family_caption(self) -> str:
        if self.validation.get("by_family", pd.DataFrame()).empty:
            return ""
        return ("**Per hardware family**, serving runs and step sweeps on rows of their own. A group's error is the mean "
                "|predicted ÷ measured − 1| over its points; the median, p90 and largest columns are over the "
                f"family's groups (a p90 only where a row holds {FAMILY_P90_MIN_GROUPS} groups or more, – otherwise), "
                "not over points: a group's worst point can be further off than its mean.")

    def validation_worst_caption(self) -> str:
        w = self.validation.get("worst", pd.DataFrame())
        if w.empty:
            return ""
        beyond = bool((w["worst_error"] > VALIDATION_TARGETS["p90"]).all())
        which = (f"the {len(w)} groups off by more than {text.pct(VALIDATION_TARGETS['p90'])} (the p90 target) in "
                 "tok/s/user or tok/s/GPU" if beyond else f"the {len(w)} groups with the largest errors")
        return (f"**The worst groups**, numbered as in the figure: {which}, worst first. The dominant term is the "
                "largest term of each predicted step (overhead per layer, HBM memory, compute or collectives), by "
                "concurrency.")

    def validation_notes_text(self, *, markdown: bool = True) -> str:
        v = self.validation
        if not v or v["groups"].empty:
            return ""
        notes = validation_notes(v["groups"], v["worst"], v["points"], self.launch, markdown=markdown)
        return "\n\n".join(notes) if markdown else " ".join(notes)

    def floors_text(self) -> str:
        t = scaling.floors_table(self.fits)
        has = t["floor_source"].fillna("").astype(str) != ""
        host = t[has & t["floor_source"].astype(str).str.contains("host-bound")]
        out = ""
        if len(host):
            low = host.loc[host["marginal_ms_per_seq_top"].idxmin()]
            out = (f"The measured cost of one more sequence is left blank for the {len(host)} eager rows: with every "
                   "kernel launched from Python the GPU idles between launches, and added work first fills those "
                   f"gaps, so the step can even get shorter as the batch grows ({low['marginal_ms_per_seq_top']:+.3f} "
                   f"ms per added sequence in {text.esc(low['group'])}). Those rows have no floor. ")
        return out + (f"{int((~has).sum())} other fitted groups have no model geometry or measured ceilings, so "
                      "their per-sequence coefficients are only bounded by 0.")

    def moe_check_text(self) -> str:
        m, p = self.moe_checks, self.params
        c = m.get("floored", pd.DataFrame())
        if c.empty:
            return (f"No {text.esc(p['moe_model'])} sweep with three batches ≤ {p['moe_fit_max_batch']:g} and a "
                    "larger one to check.")
        first, worst = c.iloc[0], float(c["rel_error"].abs().max())
        errs = ", ".join(f"B={b:g} {e * 100:+.1f}%" for b, e in zip(c["batch"], c["rel_error"]))
        u = m["unbounded"]
        errs0 = ", ".join(f"B={b:g} {e * 100:+.1f}%" for b, e in zip(u["batch"], u["rel_error"]))
        o = m["overlap"]
        verdict = "within" if worst <= p["moe_tolerance"] else "not within"
        return (f"**{text.esc(first['group'])}**, fitted on batches ≤ {p['moe_fit_max_batch']:g} only "
                f"({first['variant']} model): {errs} — worst {worst * 100:.1f}%, {verdict} "
                f"{p['moe_tolerance'] * 100:.0f}%. Below batch {p['moe_fit_max_batch']:g} the experts touched grow "
                "almost in step with the batch, so these batches cannot separate the per-sequence cost t1 from the "
                f"expert term: t1 = {first['t1_ms']:.4f} ms sits at its physical floor {first['t1_floor_ms']:.4f} ms "
                f"({text.esc(first['floor_source']) if first['floor_source'] else 'no floor known'}). With t1 only "
                f"bounded by 0 the same fit gives {errs0}. The floor adds the KV read and the matmul time because a "
                "layer's projections and FFN wait for its attention output; assuming they overlapped perfectly (the "
                f"larger of the two, {o['t1_floor_ms'].iloc[0]:.4f} ms) would give "
                f"{o['rel_error'].iloc[-1] * 100:+.1f}% "
                f"at batch {o['batch'].iloc[-1]:g}.")

    def sol_text(self) -> str:
        p, s = self.params, self.sol
        if s.empty or "sol_tok_s_per_user_measured" not in s:
            return "No batch-1 decode point has a model and hardware known to the spec tables."
        ref = s[(s["model"] == p["headline_model"]) & (s["precision"] == p["headline_precision"])
                & (s["framework"] == p["headline_framework"]) & (s["context_len"] == p["headline_context"])]
        if ref.empty:
            return ""
        r = ref.iloc[0]
        return (f"**{text.esc(p['headline_model'])} {text.esc(p['headline_precision'])}, batch 1, context "
                f"{p['headline_context']:,}**: measured {r['tok_s_per_user']:.0f} tok/s/user. One step reads "
                f"{r['bytes_per_step_gb']:.1f} GB ({r['weight_bytes_gb']:.2f} GB of weights, the input embedding only "
                f"as a row lookup, plus {r['kv_bytes_gb']:.2f} GB of KV cache), so the speed of light is "
                f"{r['sol_tok_s_per_user_measured']:.0f} tok/s/user at the measured {r['bandwidth_tb_s_measured']:.2f} "
                f"TB/s and {r['sol_tok_s_per_user_datasheet']:.0f} at the datasheet "
                f"{r['bandwidth_tb_s_datasheet']:.1f} "
                f"TB/s: the measurement reaches {text.pct(r['fraction_of_sol_measured'])} and "
                f"{text.pct(r['fraction_of_sol_datasheet'])} of them.")

    def serving_title(self) -> str:
        f = self.serving_fits
        n_hw = f["hardware"].astype(str).nunique() if len(f) else 0
        return (f"## Serving sweeps: {len(f)} configurations on {n_hw} GPU type{'s' if n_hw != 1 else ''} "
                "(batch = achieved decoding concurrency)")

    def serving_intro(self) -> str:
        f, limit = self.serving_fits, self.params["poor_fit_cv_error"]
        if f.empty:
            return "No serving sweep has three or more concurrencies."
        good = self._section(False, good=True)
        n_moe = int(f["fitted_form"].astype(str).str.startswith("moe").sum())
        not_tried = sorted({str(m) for m, form in zip(f["model"], f["fitted_form"])
                            if "MoE form not tried" in str(form)})
        return (f"Serving logs do not measure batch 1: B is the achieved decoding concurrency "
                "(concurrency × (e2e − ttft)/e2e) and the step time is TPOT, so every batch-1 speed here is the "
                f"model's, shown only where the smallest measured batch is at most {PEAK_MODEL_MAX_BATCH_MIN:g}. "
                f"{len(good)} of {len(f)} sweeps fit within {100 * limit:.0f}% leave-one-batch-out error (tabled, best "
                f"first); the rest are listed after the table with why. The MoE form is chosen where it predicts "
                f"held-out batches better ({n_moe} of {len(f)})"
                + (f"; no expert geometry is known for {', '.join(text.esc(m) for m in not_tried)}, so only the dense "
                   "form was tried for them" if not_tried else "")
                + ". The largest measured batch is the largest concurrency fitted here, not the capacity: the "
                "frontier report, which reads every point, can show higher throughput for the same hardware.")

    def not_fitted_text(self) -> str:
        n = int((self.fits["status"] != "fitted").sum())
        if not n:
            return "Every configuration has at least three batch sizes."
        return (f"**Not fitted ({n} configurations)**, by reason: fewer than three batch sizes. Most are "
                "configurations of the down-sampled InferenceX snapshot; the frontier reports use them instead.")

    # --- tables ---------------------------------------------------------------------------------------
    def step_table(self) -> pd.DataFrame:
        return compact_table(self._section(True, good=True), measured_peak=True)

    def step_poor_table(self) -> pd.DataFrame:
        return poor_fit_table(self._section(True, good=False), self.params["poor_fit_cv_error"])

    def serving_ranked_fits(self, testable: bool = True) -> pd.DataFrame:
        """Good serving fits with (testable) or without enough batches to hold one out and still test the form."""
        f = self._section(False, good=True)
        return f[(f["n_batches"] >= TESTABLE_BATCHES) == testable].sort_values("cv_error")

    def serving_table(self) -> pd.DataFrame:
        """Ranked by cv error, testable fits only: a 3-batch fit's tiny interval says nothing about its form."""
        return compact_table(self.serving_ranked_fits(True), measured_peak=False)

    def serving_untestable_table(self) -> pd.DataFrame:
        """The good serving fits on fewer than TESTABLE_BATCHES batches, shown apart and not ranked."""
        return compact_table(self.serving_ranked_fits(False), measured_peak=False)

    def serving_untestable_caption(self) -> str:
        n = len(self.serving_ranked_fits(False))
        return (f"**Not ranked: {n} fit{'s' if n != 1 else ''} on fewer than {TESTABLE_BATCHES} batch sizes.** "
                "Too few batches to test the form on held-out ones; a narrow interval here is not confidence.")

    def serving_poor_table(self) -> pd.DataFrame:
        f = self._section(False, good=False)
        return poor_fit_table(f.sort_values("cv_error", na_position="last"), self.params["poor_fit_cv_error"])

    def serving_poor_html(self) -> str:
        """The serving fits listed apart, in a collapsible block (ranked by cv error, best first)."""
        n = len(self._section(False, good=False))
        return details_html(f"{n} serving fits listed apart (cv error above "
                            f"{100 * self.params['poor_fit_cv_error']:.0f}%): configurations, batches and why",
                            self.serving_poor_table())

    def check_html(self) -> str:
        """The per-group extrapolation summary (every group, serving sweeps included), collapsed."""
        return details_html(f"Per group: batches predicted, median and worst error, t1 against its floor "
                            f"({len(self.check_summary)} groups)", self.check_table())

    def not_fitted_table(self) -> pd.DataFrame:
        return not_fitted_summary(self.fits)

    def all_fits_html(self) -> str:
        table = scaling.summary(self.fits).assign(n_batches=self.fitted["n_batches"].to_numpy(),
                                                  at_bound=self.fitted["at_bound"].fillna("").to_numpy())
        shown = display_table(table).rename(columns={"at_bound": "at bound"})
        # B½ and its interval in one column, and no smallest batch (n batches says it): the table fits 1,400 px.
        names = [DISPLAY_NAMES.get(c, c) for c in ("b_half", "b_half_lo", "b_half_hi", "batch_min")]
        shown.insert(shown.columns.get_loc(names[0]), "B½ (95% interval)",
                     [_b_half_text(r) for _, r in table.iterrows()])
        # Throughput per instance and the batch-1 model error are in the section tables above; per GPU stays here.
        names += [DISPLAY_NAMES.get(c, c) for c in ("largest_batch_tok_s", "peak_model_error")]
        shown = shown.drop(columns=[c for c in names if c in shown.columns])
        return details_html(f"Every fitted configuration ({len(self.fitted)} rows)", shown)

    def poor_caption(self, *, step: bool) -> str:
        n = len(self._section(step, good=False))
        if not n:
            return ""
        return (f"**Listed apart: {n} fit{'s' if n != 1 else ''} above {100 * self.params['poor_fit_cv_error']:.0f}% "
                "leave-one-batch-out error.** Their B½ and asymptote are not shown: a model that misses batches it "
                "did not see says little about batches nobody measured.")

    def check_pivot(self) -> pd.DataFrame:
        """Held-out error % per group and batch, for sweeps with whole batch sizes (step timings)."""
        whole = self.check[self.check["batch"] % 1 == 0] if len(self.check) else self.check
        if whole.empty:
            return pd.DataFrame()
        pivot = whole.pivot_table(index="group", columns="batch", values="rel_error").mul(100)
        pivot.columns = [f"error % at B={b:g}" for b in pivot.columns]
        return pivot.reset_index().rename(columns={"group": "configuration"})

    def check_table(self) -> pd.DataFrame:
        s = self.check_summary
        if s.empty:
            return s
        return display_table(s.drop(columns=["fit_max_batch", "floor_source", "variant"], errors="ignore"))

    def floors_display(self) -> pd.DataFrame:
        t = scaling.floors_table(self.fits)
        return display_table(t[t["floor_source"].fillna("").astype(str) != ""])

    def moe_table(self) -> pd.DataFrame:
        m = self.moe_checks
        if not len(m.get("floored", [])):
            return pd.DataFrame()
        return pd.DataFrame({"batch": m["floored"]["batch"].to_numpy(),
                             "step_ms": m["floored"]["step_ms"].to_numpy(),
                             "step_ms predicted": m["floored"]["step_ms_predicted"].to_numpy(),
                             "error % (t1 ≥ its floor)": 100 * m["floored"]["rel_error"].to_numpy(),
                             "error % (floor if KV and matmul overlapped)": 100 * m["overlap"]["rel_error"].to_numpy(),
                             "error % (t1 ≥ 0 only)": 100 * m["unbounded"]["rel_error"].to_numpy()})

    def sol_table(self) -> pd.DataFrame:
        cols = ["model", "precision", "framework", "context_len", "tok_s_per_user", "gpus", "bytes_per_step_gb",
                "sol_tok_s_per_user_measured", "sol_tok_s_per_user_datasheet", "fraction_of_sol_measured",
                "fraction_of_sol_datasheet"]
        return display_table(self.sol[[c for c in cols if c in self.sol.columns]]) if len(self.sol) else self.sol

    # --- results file -----------------------------------------------------------------------------------
    def results(self) -> dict:
        """What the report found, for ``save_results`` (plain text: no Markdown, no HTML escapes)."""
        f, head = self.fitted, self.head
        row = scaling.select(self.fits, group=head["group"]) if head else None
        r = self.residuals
        worst = r.loc[r["rel_error"].abs().idxmax()] if len(r) else None
        m = self.moe_checks
        as_dict = lambda c: {f"{b:g}": float(e) for b, e in zip(c["batch"], c["rel_error"])}  # noqa: E731
        return {
            "headline": (scaling.short_headline(row, markdown=False) + " "
                         + scaling.describe(row, level=self.params["level_tok_s_per_user"], markdown=False)
                         if row is not None else ""),
            "headline_numbers": head or {},
            "n_groups": len(self.fits), "n_fitted": len(f),
            "n_step_sweeps": len(self.step_fits), "n_serving_sweeps": len(self.serving_fits),
            "poor_fits": list(f.loc[~(f["cv_error"] <= self.params["poor_fit_cv_error"]), "group"]),
            "summary": scaling.summary(self.fits).to_dict(orient="records"),
            "launch_overhead": self.launch.to_dict(orient="records"),
            "extrapolation": self.check_summary.to_dict(orient="records"),
            "extrapolation_max_abs_rel_error": (float(self.check["rel_error"].abs().max())
                                                if len(self.check) else None),
            "degenerate_fits": [f"{g}: {b}" for g, b in zip(self.degenerate["group"], self.degenerate["at_bound"])],
            "headline_at_bound": head["at_bound"] if head else "",
            "fitted_forms": dict(zip(f["group"], f["fitted_form"])),
            "shard_note": scaling.shard_note(self.points, markdown=False),
            "worst_residual": ({"group": worst["group"], "batch": float(worst["batch"]),
                                "rel_error": float(worst["rel_error"])} if worst is not None else None),
            "speed_of_light_available": len(self.sol) > 0,
            "speed_of_light": self.sol.drop(columns=["note"], errors="ignore").to_dict(orient="records"),
            "floors": scaling.floors_table(self.fits).to_dict(orient="records"),
            "not_fitted": self.not_fitted_table().to_dict(orient="records"),
            "moe_small_batch_check": as_dict(m["floored"]) if len(m.get("floored", [])) else {},
            "moe_small_batch_check_unbounded": as_dict(m["unbounded"]) if len(m.get("unbounded", [])) else {},
            "moe_small_batch_check_overlap": as_dict(m["overlap"]) if len(m.get("overlap", [])) else {},
            "moe_small_batch_max_abs_rel_error": (float(m["floored"]["rel_error"].abs().max())
                                                  if len(m.get("floored", [])) else None),
            "moe_small_batch_t1_floor_ms": (float(m["floored"]["t1_floor_ms"].iloc[0])
                                            if len(m.get("floored", [])) else None),
            **self._roofline_results(), **self._validation_results(),
        }

    def _roofline_results(self) -> dict:
        t, r = self.roofline_summary(), self.params["roofline_fit_max_batch"]
        inside = t[t["batch_in_range"].notna()] if len(t) else t
        dense = dense_h200_sweeps(t)
        worst = inside.loc[inside["rel_error_in_range"].abs().idxmax()] if len(inside) else None
        cols = ["group", "context", "n_fit_batches", "batch_in_range", "rel_error_in_range",
                "linear_rel_error_in_range", "other_batches", "bw_share", "bw_share_source", "kv_bw_share",
                "kv_bw_share_source", "flop_share", "flop_share_source", "overhead_ms_per_layer", "step", "moe"]
        return {
            "roofline_fit_max_batch": r, "roofline_beyond": list(ROOFLINE_BEYOND),
            "roofline_extrapolation": t[cols].to_dict(orient="records") if len(t) else [],
            "roofline_max_abs_rel_error_4x_8x": float(inside["rel_error_in_range"].abs().max()) if len(inside) else None,
            "roofline_worst_4x_8x": ({"group": worst["group"], "context": worst["context"],
                                      "batch": worst["batch_in_range"], "rel_error": worst["rel_error_in_range"]}
                                     if worst is not None else None),
            "roofline_dense_h200_n": len(dense),
            "roofline_dense_h200_max_abs_rel_error_4x_8x": (float(dense["rel_error_in_range"].abs().max())
                                                            if len(dense) else None),
            "roofline_text": self.roofline_text(markdown=False)}

    def _validation_results(self) -> dict:
        v = self.validation
        if not v:
            return {"model_validation": None}
        w = v["worst"]
        return {"model_validation": {
            **v["facts"],
            "worst_groups": [{"group": r["group"], "error_tok_s_per_user": r["error_tok_s_per_user"],
                              "error_tok_s_per_gpu": r["error_tok_s_per_gpu"], "points": r["points"],
                              "dominant": r["dominant"], "software_drift": r["software_drift"]}
                             for _, r in w.iterrows()],
            "by_family": v["by_family"].to_dict(orient="records"),
            "text": self.validation_text(markdown=False), "notes": self.validation_notes_text(markdown=False)}}


def rows_read(points: pd.DataFrame, *, models=None, precisions=None) -> pd.DataFrame:
    """The rows this page fits: those of ``models`` and ``precisions`` (all when not given); the report runner
    hashes the same rows for the page's cache key."""
    if models:
        points = points[points["model"].isin(models)]
    if precisions:
        points = points[points["precision"].isin(precisions)]
    return points


def build(points: pd.DataFrame | None = None, *, points_path=None, step_logs_path=None, models=None, precisions=None,
          headline_model: str = "llama-3.1-8b", headline_precision: str | None = "bf16",
          headline_context: float | None = 1024, headline_framework: str | None = "pytorch-cudagraph",
          fit_max_batch: float = 32, moe_model: str = "qwen3-30b-a3b", moe_fit_max_batch: float = 16,
          moe_tolerance: float = 0.10, level_tok_s_per_user: float = 50.0, n_boot: int = 200, seed: int = 0,
          max_figures: int = 12, max_serving_figures: int = 3,
          poor_fit_cv_error: float = POOR_FIT_CV_ERROR, roofline_fit_max_batch: float = 24,
          roofline_tolerance: float = 0.10) -> BatchScalingPage:
    """Load, fit and check everything the report shows (parameters as in the notebook's parameters cell); the
    points table is ``points``, else the one at ``points_path``."""
    params = {k: v for k, v in locals().items() if k != "points"}
    points = rows_read(data.load_points(points_path) if points is None else points, models=models,
                       precisions=precisions)
    if points.empty:
        raise ValueError(f"no points to fit (models={models!r}, precisions={precisions!r})")
    logs = config.RAW_DATA_DIR / "h200" if step_logs_path is None else step_logs_path
    floors = scaling.floor_inputs(data.load_calibration(logs), points=points) if logs else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)  # degenerate fits are read off the table
        result = scaling.fit_with_draws(points, n_boot=n_boot, seed=seed, floors=floors,
                                        levels=tuple(sorted({100.0, level_tok_s_per_user, 20.0}, reverse=True)))
        check = scaling.extrapolation_check(points, fit_max_batch=fit_max_batch, floors=floors)
        moe_points = points[points["model"] == moe_model]
        moe = {"floored": scaling.extrapolation_check(moe_points, fit_max_batch=moe_fit_max_batch, floors=floors),
               "unbounded": scaling.extrapolation_check(moe_points, fit_max_batch=moe_fit_max_batch)}
        moe["overlap"] = (scaling.extrapolation_check(moe_points, fit_max_batch=moe_fit_max_batch,
                                                      floors={**floors, "combine": "max"})
                          if floors else moe["unbounded"])
        roof = scaling.extrapolation_check(points, fit_max_batch=roofline_fit_max_batch, form="roofline")
        roof_linear = scaling.extrapolation_check(points, fit_max_batch=roofline_fit_max_batch, floors=floors)
    fits = result.table
    try:
        head = scaling.headline_numbers(fits, model=headline_model, precision=headline_precision,
                                        framework=headline_framework, context=headline_context)
    except KeyError:
        head = None
    page = BatchScalingPage(params=params, points=points, fits=fits, draws=result.draws, floors=floors, head=head,
                            residuals=scaling.residuals(points, fits), launch=scaling.launch_overhead(points),
                            check=check, check_summary=scaling.extrapolation_summary(check), moe_checks=moe,
                            sol=roofline.batch1_speed_of_light_for_points(points), roofline_check=roof,
                            roofline_linear=roof_linear,
                            validation=model_validation_section(points))
    page.figures = _figures(page, max_figures)
    return page


def _figures(page: BatchScalingPage, max_figures: int) -> list[Figure]:
    """Speed against batch for the headline group first, then the longest well-fitted sweeps (five batches or
    more: through three or four a curve would over-state what is known)."""
    f = page.fitted
    f = f[(f["n_batches"] >= 5) & (f["cv_error"] <= page.params["poor_fit_cv_error"])]
    head_group = page.head["group"] if page.head else None
    order = f.assign(_head=f["group"] != head_group).sort_values(["_head", "n_batches"], ascending=[True, False])
    chosen = order.head(max_figures)
    curves = scaling.curves(chosen, draws=page.draws, context="measured")
    out = []
    for _, row in chosen.iterrows():
        peak = row["peak_tok_s_per_user"]
        if np.isfinite(peak):
            first = f"{text.num(peak)} tok/s/user at batch 1 (measured), "
        elif row["batch_min"] <= PEAK_MODEL_MAX_BATCH_MIN:
            first = f"{text.num(row['peak_tok_s_per_user_model'])} tok/s/user at batch 1 (model; not measured), "
        else:
            first = ""
        meaningful = np.isfinite(row["b_half"]) and row["b_half"] >= 1
        half = f", B½ {_b_half_title(row)}" if meaningful else ""
        title = (f"{row['group']}: {first}{text.num(row['largest_batch_tok_s'])} tok/s at batch "
                 f"{text.num(row['largest_batch'])} (largest measured){half}")
        out.append(Figure(row["group"], page.residuals[page.residuals["group"] == row["group"]],
                          curves[curves["group"] == row["group"]], row, title))
    return out


# --- the performance model on configurations left out of its calibration -----------------------------------------
# The model's targets for its leave-one-group-out validation (README "perfclaims model"): median error per user and
# per GPU, and the 90th percentile over the groups of both.
VALIDATION_TARGETS = {"median_tok_s_per_user": 0.10, "median_tok_s_per_gpu": 0.15, "p90": 0.35}
# The bands of the predicted-against-measured figure: the per-user median target and the p90 target.
VALIDATION_BANDS = (0.10, 0.35)
# the per-family table leaves the p90 blank below this many groups: with fewer than ten, the interpolated 90th
# percentile lies between the two largest errors and matches no group (B300's seven gave 128% between 29% and 276%)
FAMILY_P90_MIN_GROUPS = 10
# The worst groups named: those off by more than the p90 target in either metric, worst first, at most this many.
VALIDATION_WORST_MAX = 8


def _dominant_runs(pts: pd.DataFrame) -> str:
    """The dominant term of a group's predicted steps by concurrency: ``memory at every point`` or
    ``overhead at 1–8, memory at 16–128``."""
    runs: list[list] = []
    for term, c in zip(pts["dominant"], pts["concurrency"]):
        if runs and runs[-1][0] == term:
            runs[-1][2] = c
        else:
            runs.append([term, c, c])
    if len(runs) == 1:
        return f"{runs[0][0]} at every point"
    return ", ".join(f"{t} at {text.span(a, b, text.num)}" for t, a, b in runs)


def validation_points(rep: dict) -> pd.DataFrame:
    """Every predicted and measured point of a validation report (:func:`analysis.perfmodel.validate.validate`), with
    its group, hardware family and its error in both metrics (predicted ÷ measured − 1): the figure's data."""
    rows = [{**pt, "group": g["group"], "family": g["family"], "serving": bool(g.get("serving", True))}
            for g in rep["groups"] for pt in g["points"]]
    if not rows:
        return pd.DataFrame(columns=["group", "family", "serving", "concurrency", "measured_tok_s_per_user",
                                     "predicted_tok_s_per_user", "measured_tok_s_per_gpu", "predicted_tok_s_per_gpu"])
    out = pd.DataFrame(rows)
    gpu = out["measured_tok_s_per_gpu"].where(out["measured_tok_s_per_gpu"] > 0)
    return out.assign(error_tok_s_per_user=out["predicted_tok_s_per_user"] / out["measured_tok_s_per_user"] - 1,
                      error_tok_s_per_gpu=out["predicted_tok_s_per_gpu"] / gpu - 1)


def validation_groups(rep: dict) -> pd.DataFrame:
    """One row per left-out group: family, hardware, its points and concurrencies, both errors (fractions), the
    larger of the two, the dominant term of its predicted steps, its date and the software drift its prediction
    applied, and the configuration fields its source left empty."""
    rows = []
    for g in rep["groups"]:
        pts = pd.DataFrame(g["points"]).sort_values("concurrency")
        cfg = g["config"]
        eg = g["error_tok_s_per_gpu"]
        drift = pts["software_drift"].astype(float) if "software_drift" in pts else pd.Series([1.0])
        rows.append({
            "group": g["group"], "family": g["family"], "hardware": cfg["hardware"], "framework": g["framework"],
            "serving": bool(g.get("serving", True)), "range_ratio": float(g.get("range_ratio", 1.0)),
            "workload": g.get("workload"), "n_gpus": cfg["n_gpus"], "points": len(pts),
            "concurrency_min": float(pts["concurrency"].min()), "concurrency_max": float(pts["concurrency"].max()),
            "error_tok_s_per_user": g["error_tok_s_per_user"],
            "error_tok_s_per_gpu": np.nan if eg is None else eg,
            "worst_error": np.nanmax([g["error_tok_s_per_user"], np.nan if eg is None else eg]),
            "dominant": _dominant_runs(pts),
            "date": pts["date"].dropna().iloc[0] if "date" in pts and pts["date"].notna().any() else None,
            "software_drift": float(drift.iloc[int(np.argmax(np.abs(np.log(drift.to_numpy()))))]),
            "not_stated": [k for k in ("tp", "ep", "dp", "isl", "osl") if cfg.get(k) is None],
            "model": cfg.get("model"), "disagg": bool(cfg.get("disagg") is True),
            "calibrates": bool(g.get("calibrates", True)),
            "conditions_stated": bool(g.get("conditions_stated", g.get("calibrates", True))),
            "layout_consistent": bool(g.get("layout_consistent", True)),
            "layout": f"TP{text.plain(cfg.get('tp'))} EP{text.plain(cfg.get('ep'))} DP{text.plain(cfg.get('dp'))}",
            "n_decode_gpus": np.nan if cfg.get("n_decode_gpus") is None else float(cfg["n_decode_gpus"]),
            "n_prefill_gpus": np.nan if cfg.get("n_prefill_gpus") is None else float(cfg["n_prefill_gpus"]),
            "isl": np.nan if cfg.get("isl") is None else float(cfg["isl"]),
            "osl": np.nan if cfg.get("osl") is None else float(cfg["osl"]),
            "prefill_share": float(g.get("prefill_share") or np.nan),
            "prefill_share_measured_at": g.get("prefill_share_measured_at"),
            **_ratio_span(pts, "tok_s_per_user"), **_ratio_span(pts, "tok_s_per_gpu"), "config": cfg})
    return pd.DataFrame(rows)


def _ratio_span(pts: pd.DataFrame, metric: str) -> dict:
    """The smallest and largest predicted ÷ measured of one metric over a group's points (signed: an error table's
    |ratio − 1| hides whether a group is predicted too fast or too slow)."""
    if f"measured_{metric}" not in pts:
        return {f"ratio_{metric}_min": np.nan, f"ratio_{metric}_max": np.nan}
    m = pts[f"measured_{metric}"].astype(float)
    r = (pts[f"predicted_{metric}"].astype(float) / m.where(m > 0)).dropna()
    return {f"ratio_{metric}_min": float(r.min()) if len(r) else np.nan,
            f"ratio_{metric}_max": float(r.max()) if len(r) else np.nan}


def _span_times(lo: float, hi: float) -> str:
    """``0.73–3.2×`` (two significant digits), ``1.1×`` when both ends round alike, ``–`` without a ratio."""
    if not (lo == lo and hi == hi):
        return "–"
    a, b = f"{lo:.2g}", f"{hi:.2g}"
    return f"{a}×" if a == b else f"{a}–{b}×"


RUNS = {True: "serving", False: "step sweeps"}  # the kinds of run the family table keeps apart


def validation_by_family(groups: pd.DataFrame) -> pd.DataFrame:
    """Per hardware family and kind of run (``runs``: serving runs or step-timing sweeps, kept apart: a family's
    single-GPU sweeps, timed with no scheduler and predicted best, would otherwise set the median its serving runs
    are read by): the hardware it holds, groups, points, and the median and 90th percentile of the group errors of
    both metrics, as % (tok/s/GPU over the groups that have one)."""
    if groups.empty:
        return pd.DataFrame()
    rows = []
    serving = groups["serving"] if "serving" in groups else pd.Series(True, index=groups.index)
    for (fam, kind), g in groups.assign(_serving=~serving.astype(bool)).groupby(["family", "_serving"], sort=True):
        u, gp = 100 * g["error_tok_s_per_user"], 100 * g["error_tok_s_per_gpu"].dropna()
        few = len(g) < FAMILY_P90_MIN_GROUPS
        rows.append({"family": fam, "runs": RUNS[not kind],
                     "hardware": ", ".join(sorted(g["hardware"].astype(str).unique())),
                     "groups": len(g), "points": int(g["points"].sum()),
                     "median error tok/s/user %": u.median(),
                     "p90 error tok/s/user %": np.nan if few else np.percentile(u, 90),
                     "largest error tok/s/user %": u.max(),
                     "median error tok/s/GPU %": gp.median() if len(gp) else np.nan,
                     "p90 error tok/s/GPU %": np.nan if few or not len(gp) else np.percentile(gp, 90),
                     "largest error tok/s/GPU %": gp.max() if len(gp) else np.nan})
    return pd.DataFrame(rows)


def validation_family_table(by_family: pd.DataFrame) -> pd.DataFrame:
    """:func:`validation_by_family` as the page shows it (errors rounded by :func:`error_cells`)."""
    out = by_family.copy()
    for c in [c for c in out.columns if c.endswith("%")]:
        out[c] = error_cells(out[c])
    return out


def validation_worst(groups: pd.DataFrame, *, threshold: float = VALIDATION_TARGETS["p90"],
                     limit: int = VALIDATION_WORST_MAX) -> pd.DataFrame:
    """The groups off by more than ``threshold`` in tok/s/user or tok/s/GPU, worst first (by the larger of the two),
    at most ``limit``, numbered from 1 (column ``#``, as the figure labels them); the three worst when none is."""
    ranked = groups.sort_values("worst_error", ascending=False, kind="stable")
    worst = ranked[ranked["worst_error"] > threshold]
    worst = (worst if len(worst) else ranked.head(3)).head(limit).reset_index(drop=True)
    return worst.assign(**{"#": np.arange(1, len(worst) + 1)})


def error_cells(percent) -> np.ndarray:
    """Errors in % as a table shows them: whole above 10%, one decimal below (−9.7, 0.7, 16, 216): no more digits
    than an error of a model carries, and none fewer where a 10% target is read."""
    x = np.asarray(percent, dtype=float)
    return np.where(np.abs(x) >= 10, np.round(x), np.round(x, 1))


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}" if items else ""


def _percent_against(value: float, target: float) -> str:
    """``value`` (a fraction) as a percentage to one decimal, or to two where one decimal would round it onto the
    target it misses or meets (15.04% against a 15% target is not "15.0%, not met")."""
    one = round(100 * value, 1)
    return text.pct(value, 2) if one == round(100 * target, 1) and value != target else text.pct(value, 1)


def validation_facts(rep: dict) -> dict:
    """The summary numbers of a validation report, the targets and whether each is met (None without groups)."""
    t = VALIDATION_TARGETS
    keys = ("median_error_tok_s_per_user", "median_error_tok_s_per_gpu", "p90_error_tok_s_per_user",
            "p90_error_tok_s_per_gpu")
    nums = {k: rep.get(k) for k in keys}
    limit = {"median_error_tok_s_per_user": t["median_tok_s_per_user"],
             "median_error_tok_s_per_gpu": t["median_tok_s_per_gpu"],
             "p90_error_tok_s_per_user": t["p90"], "p90_error_tok_s_per_gpu": t["p90"]}
    met = {k: (None if nums[k] is None else bool(nums[k] <= limit[k])) for k in keys}
    return {"n_groups": rep.get("n_groups", 0), "min_concurrencies": rep.get("min_concurrencies"), **nums,
            "targets": limit, "targets_met": met}


def _interval_note(rep: dict) -> str:
    """The medians' bootstrap intervals beside them in the headline: a median just under its target whose interval
    holds the target is a different finding from one well under it."""
    iu, ig = rep.get("median_interval_tok_s_per_user"), rep.get("median_interval_tok_s_per_gpu")
    if not iu or not ig:
        return ""
    return (f" (each group's error its mean |predicted ÷ measured − 1|; the groups resampled, 90% bootstrap interval "
            f"{text.pct(iu[0], 1)}–{text.pct(iu[1], 1)} and {text.pct(ig[0], 1)}–{text.pct(ig[1], 1)})")


def validation_summary_text(rep: dict, groups: pd.DataFrame, *, markdown: bool = True) -> str:
    """The section's summary: how many groups, median and p90 errors of both metrics, each target and whether it is
    met, and how many groups are within the tighter band per user and per GPU."""
    f = validation_facts(rep)
    if not f["n_groups"]:
        return (f"No configuration group has {f['min_concurrencies'] or 3} or more concurrencies to leave out and "
                "predict.")
    b = "**" if markdown else ""
    mu, mg = f["median_error_tok_s_per_user"], f["median_error_tok_s_per_gpu"]
    pu, pg = f["p90_error_tok_s_per_user"], f["p90_error_tok_s_per_gpu"]
    lim = f["targets"]

    def verdict(key):
        iv = rep.get(key.replace("median_error", "median_interval"))
        if f["targets_met"][key] and iv and iv[1] > lim[key]:
            return f"met by the median, not by its interval (up to {_percent_against(iv[1], lim[key])}, below)"
        return "met" if f["targets_met"][key] else "not met"

    p90_met = f["targets_met"]["p90_error_tok_s_per_user"] and f["targets_met"]["p90_error_tok_s_per_gpu"]
    band = VALIDATION_BANDS[0]
    n_gpu = int(groups["error_tok_s_per_gpu"].notna().sum())
    nd = rep.get("without_drift") or {}
    drifted = int(nd.get("groups_with_drift") or 0)
    # the headline's numbers rest on the measured software drift where older runs carry it: say so, and what the p90
    # is without it, beside them rather than paragraphs below
    drift_note = "" if not drifted or nd.get("p90_error_tok_s_per_user") is None else (
        f" (with the software drift its cell's re-runs measured applied to the {drifted} groups run on older "
        f"software; without it, p90 {text.pct(nd['p90_error_tok_s_per_user'], 1)} and "
        f"{text.pct(nd['p90_error_tok_s_per_gpu'], 1)})")
    p90_keys = ("p90_error_tok_s_per_user", "p90_error_tok_s_per_gpu")
    p90_caveat = "" if not p90_met or not drifted or all(nd.get(k) is None or nd[k] <= lim[k] for k in p90_keys) \
        else " with the drift; not without it"
    return (f"{b}Left out one at a time, {f['n_groups']} configuration groups (every group with at least "
            f"{f['min_concurrencies']} concurrencies) are predicted with a median error of "
            f"{_percent_against(mu, lim['median_error_tok_s_per_user'])} in tok/s/user and "
            f"{_percent_against(mg, lim['median_error_tok_s_per_gpu'])} in tok/s/GPU{_interval_note(rep)}; p90 "
            f"{_percent_against(pu, lim['p90_error_tok_s_per_user'])} and "
            f"{_percent_against(pg, lim['p90_error_tok_s_per_gpu'])}{drift_note}{_unseen_model_text(rep, markdown)}.{b} "
            f"Targets: median tok/s/user ≤ {text.pct(lim['median_error_tok_s_per_user'])}: "
            f"{verdict('median_error_tok_s_per_user')}; median tok/s/GPU ≤ "
            f"{text.pct(lim['median_error_tok_s_per_gpu'])}: {verdict('median_error_tok_s_per_gpu')}; p90 ≤ "
            f"{text.pct(lim['p90_error_tok_s_per_user'])} in both metrics: {'met' if p90_met else 'not met'}{p90_caveat}"
            + (" (over these groups; the groups measured at fewer concurrencies, which perfclaims model --validate "
               "--min-concurrencies 1 scores, attention data-parallel ones most, miss by more). "
               if f["min_concurrencies"] > 1 else ". ")
            + f"{int((groups['error_tok_s_per_user'] <= band).sum())} of the {len(groups)} groups are within "
            f"{text.pct(band)} per user, {int((groups['error_tok_s_per_gpu'] <= band).sum())} of {n_gpu} per GPU "
            f"({int((groups['error_tok_s_per_gpu'] <= lim['median_error_tok_s_per_gpu']).sum())} within "
            f"{text.pct(lim['median_error_tok_s_per_gpu'])})." + _band_text(rep, f["min_concurrencies"])
            + _median_interval_text(rep, lim)
            + _validation_scope_text(rep, markdown=markdown))


def _unseen_model_text(rep: dict, markdown: bool = True) -> str:
    """For the headline: what is left out is a configuration, and the groups of a model no other group measured
    (the only test of an unseen model) with their own errors, so the median is not read as one for new models."""
    e = text.esc if markdown else str
    alone = _unseen_groups(rep)
    if not alone:
        return ""
    each = [f"{text.pct(g['error_tok_s_per_user'], 1)} per user and {text.pct(g['error_tok_s_per_gpu'], 1)} per GPU "
            f"({e(str(g['config']['model']))})" for g in alone
            if g.get("error_tok_s_per_user") is not None and g.get("error_tok_s_per_gpu") is not None]
    n = len(rep.get("groups", [])) - len(alone)
    return (f"; in {n} of them other groups measure the same model, and the {len(each)} "
            f"group{'' if len(each) == 1 else 's'} of a model no other group measured miss by " + _and(each)
            if each else "")


def _unseen_groups(rep: dict) -> list[dict]:
    """The validated groups of a model no other validated group measured (``rep["models"]`` counts 1)."""
    models = rep.get("models") or {}
    return [g for g in rep.get("groups", []) if models.get(str(g["config"]["model"])) == 1]


def _band_text(rep: dict, min_concurrencies: int) -> str:
    """The held-out error band (``held_out_ratio``), and, for the default validation, that it is the band a
    prediction of an unmeasured configuration carries."""
    from analysis.perfmodel.validate import MIN_CONCURRENCIES

    band = rep.get("held_out_ratio") or {}
    parts = [f"{text.fixed(band[k][0], 2)} to {text.fixed(band[k][1], 2)} per {name}"
             for k, name in (("tok_s_per_user", "user"), ("tok_s_per_gpu", "GPU")) if band.get(k)]
    if not parts:
        return ""
    lo, hi = band["percentiles"]
    groups = band.get("groups_tok_s_per_user")
    return (f" Measured ÷ predicted over the {band['points_tok_s_per_user']} held-out points"
            + (f" of {groups} groups, each group weighing the same," if groups else "") + " runs from "
            + " and ".join(parts) + f" ({lo}th–{hi}th percentile)"
            + (": the band perfclaims model --config widens its intervals to." if min_concurrencies ==
               MIN_CONCURRENCIES else "."))


def _median_interval_text(rep: dict, lim: dict) -> str:
    """How far each median moves with which groups were measured (the report's bootstrap interval), and which
    targets lie inside: a verdict the point estimate gives but the interval does not settle."""
    out, inside = [], []
    for key, name in (("tok_s_per_user", "tok/s/user"), ("tok_s_per_gpu", "tok/s/GPU")):
        iv, target = rep.get(f"median_interval_{key}"), lim[f"median_error_{key}"]
        if iv:
            out.append(f"{_percent_against(iv[0], target)}–{_percent_against(iv[1], target)} in {name}")
            if iv[0] <= target <= iv[1]:
                inside.append(f"the {text.pct(target)} {name} target")
    if not out:
        return ""
    return (" Resampling the groups (90% bootstrap interval) puts the median at " + _and(out)
            + (f", {_and(inside)} inside {'it' if len(inside) == 1 else 'them'}" if inside else "")
            + "; and the model's form was chosen on this same validation, which flatters it by an amount these "
            "groups cannot measure.")


def _validation_scope_text(rep: dict, *, markdown: bool = True) -> str:
    """What the p90 is (interpolated, and by nearest rank with the groups beyond 35%), what a left-out group still
    shares with the calibration (its model, its cell), and the serving runs and step sweeps apart."""
    e = text.esc if markdown else str
    out = ""
    ru, rg = rep.get("p90_rank_error_tok_s_per_user"), rep.get("p90_rank_error_tok_s_per_gpu")
    if ru is not None and rg is not None:
        out += (f" The p90 interpolates between groups; by nearest rank it is {text.pct(ru, 1)} and {text.pct(rg, 1)} "
                f"({rep.get('beyond_35_tok_s_per_user', 0)} and {rep.get('beyond_35_tok_s_per_gpu', 0)} of the "
                f"{rep['n_groups']} groups are beyond 35%).")
    models = rep.get("models") or {}
    if models:
        listed = _and([f"{n} {e(m)}" for m, n in models.items()])
        out += (f" What is left out is a configuration, not a model or a cell: the groups are {listed}, and each is "
                "predicted with its hardware × framework cell fitted on that cell's other groups, most of them the "
                "same model.")
        alone = [e(m) for m, n in models.items() if n == 1]
        if alone:
            out += (f" Only {_and(alone)} {'is a model' if len(alone) == 1 else 'are models'} the calibration sees in "
                    "no other group: the test of a model it has not seen rests on "
                    f"{'that group' if len(alone) == 1 else 'those groups'}.")
            unstated = [e(str(g["config"]["model"])) for g in _unseen_groups(rep)
                        if not g.get("conditions_stated", g.get("calibrates", True))]
            if unstated:
                out += (f" {_and(unstated)}'s source does not state all of ISL, OSL and TP, so its group is predicted at "
                        "the defaults: a weaker test than its number suggests.")
            from analysis.perfmodel.step import MOE_LAYER_FIXED_FROM

            inferred = [m for m, n in models.items() if n == 1 and m in MOE_LAYER_FIXED_FROM]
            if inferred:
                out += (f" {_and([e(m) for m in inferred])}'s batch-1 step is one of the three the MoE layer's fixed "
                        "cost (twice a dense layer's) is inferred from: its error is not a held-out one.")
    nd = rep.get("without_drift") or {}
    if nd.get("groups_with_drift") and nd.get("median_error_tok_s_per_user") is not None:
        out += (f" Without the measured software drift ({nd['groups_with_drift']} groups from older dates predicted at "
                f"the newest runs' software instead): median {text.pct(nd['median_error_tok_s_per_user'], 1)} / "
                f"{text.pct(nd['median_error_tok_s_per_gpu'], 1)}, p90 {text.pct(nd['p90_error_tok_s_per_user'], 1)} / "
                f"{text.pct(nd['p90_error_tok_s_per_gpu'], 1)}.")
    ins = rep.get("in_sample") or {}
    if ins.get("median_error_tok_s_per_user") is not None:  # medians to two decimals: 9.99% is not "10.0%" of a 10% target
        out += (f" With every group in the calibration, its own included, the same groups are predicted with a median "
                f"of {text.pct(ins['median_error_tok_s_per_user'], 2)} / {text.pct(ins['median_error_tok_s_per_gpu'], 2)}"
                f" and a p90 of {text.pct(ins['p90_error_tok_s_per_user'], 1)} / "
                f"{text.pct(ins['p90_error_tok_s_per_gpu'], 1)}: what the model's form leaves with nothing held out.")
    kinds = rep.get("by_kind") or {}
    sv, sw = kinds.get("serving") or {}, kinds.get("step_sweeps") or {}
    if sv.get("n_groups") and sw.get("n_groups"):
        out += (f" Serving runs alone ({sv['n_groups']} groups): median {text.pct(sv['median_error_tok_s_per_user'], 1)}"
                f" / {text.pct(sv['median_error_tok_s_per_gpu'], 1)}, p90 {text.pct(sv['p90_error_tok_s_per_user'], 1)}"
                f" / {text.pct(sv['p90_error_tok_s_per_gpu'], 1)}; step-timing sweeps alone ({sw['n_groups']} "
                f"groups, one GPU timed, so their two errors are one): median "
                f"{text.pct(sw['median_error_tok_s_per_user'], 1)}, p90 {text.pct(sw['p90_error_tok_s_per_user'], 1)}.")
    spread = [b for b in rep.get("rerun_spread") or [] if b.get("configuration_dates")]
    if len(spread) > 1:
        parts = [(f"{text.pct(b['median_step_time_change'], 1)} within {b['days_to']} days" if b["days_from"] == 0 else
                  f"{text.pct(b['median_step_time_change'], 1)} {b['days_from']}–{b['days_to']} days apart"
                  if b["days_to"] < 100_000 else
                  f"{text.pct(b['median_step_time_change'], 1)} more than {b['days_from'] - 1} days apart")
                 + f" ({b['configuration_dates']} configuration-dates)" for b in spread]
        out += (" The same configuration re-run moved its step time by a median " + _and(parts) + ": the drift "
                "between a cell's groups measured on different dates, which the model corrects only where re-runs "
                "measured it.")
    return out


def validation_worst_table(worst: pd.DataFrame) -> pd.DataFrame:
    """The named worst groups as the page shows them (errors in %, the software drift as a step-time factor)."""
    if worst.empty:
        return pd.DataFrame()
    drift = [("none" if abs(d - 1) < 5e-4 else f"×{text.fixed(d, 2)} ({text.plain(day)})")
             for d, day in zip(worst["software_drift"], worst["date"])]
    return pd.DataFrame({
        "#": worst["#"].to_numpy(), "configuration (left out)": worst["group"].to_numpy(),
        "points (concurrency)": [f"{n} ({text.span(a, b, text.num)})" for n, a, b in
                                 zip(worst["points"], worst["concurrency_min"], worst["concurrency_max"])],
        # one decimal: a group just past the 35% line reads 35.1, not "35"
        "error tok/s/user %": np.round(100 * worst["error_tok_s_per_user"].to_numpy(float), 1),
        "error tok/s/GPU %": np.round(100 * worst["error_tok_s_per_gpu"].to_numpy(float), 1),
        "predicted ÷ measured, per user; per GPU": [
            f"{_span_times(a, b)}; {_span_times(c, d)}" for a, b, c, d in
            zip(worst.get("ratio_tok_s_per_user_min", np.nan * worst["points"]),
                worst.get("ratio_tok_s_per_user_max", np.nan * worst["points"]),
                worst.get("ratio_tok_s_per_gpu_min", np.nan * worst["points"]),
                worst.get("ratio_tok_s_per_gpu_max", np.nan * worst["points"]))],
        "dominant term of the predicted step": worst["dominant"].to_numpy(),
        "software drift applied": drift})


def validation_notes(groups: pd.DataFrame, worst: pd.DataFrame, points: pd.DataFrame, launch: pd.DataFrame, *,
                     markdown: bool = True) -> list[str]:
    """Facts behind the worst groups, read off the validation and this page: the software drift the predictions
    carry, eager step sweeps against their CUDA-graph twins, groups whose source states no parallelism or lengths,
    and an AgentX group's tok/s/GPU against its tok/s/user (only for groups in ``worst``)."""
    e = text.esc if markdown else str
    notes = []
    drifted = groups[(groups["software_drift"] - 1).abs() >= 5e-4]
    if len(drifted):
        top = drifted.loc[(np.log(drifted["software_drift"])).abs().idxmax()]
        notes.append(
            f"Predictions of runs from older dates carry the software drift their cell measured: {len(drifted)} of "
            f"the {len(groups)} groups were measured on a date on which their cell's other configurations, re-run on "
            "several dates, ran at another speed than on their newest runs, and their predicted step time is scaled "
            "by that drift, read at each point's concurrency; each group's largest factor runs from "
            f"×{text.fixed(drifted['software_drift'].min(), 2)} to "
            f"×{text.fixed(drifted['software_drift'].max(), 2)} (largest: {e(top['group'])}, "
            f"{e(text.plain(top['date']))}, ×{text.fixed(top['software_drift'], 2)}). The other groups are predicted "
            "at the newest runs' software.")
    eager = worst[worst["framework"].astype(str).str.endswith("eager")]
    for (fam, fw), cell_worst in eager.groupby(["family", "framework"], sort=False):
        ratios = []
        for _, r in cell_worst.iterrows():
            parts = r["group"].split(" | ")
            hit = (launch[(launch["model"] == parts[0]) & (launch["precision"] == parts[2])]
                   if len(launch) and len(parts) > 2 else pd.DataFrame())
            ratios.append(text.times(hit["eager_over_cudagraph"].iloc[0], 1) if len(hit) else None)
        ids = _and([f"#{n}" for n in cell_worst["#"]])
        cell = groups[(groups["family"] == fam) & (groups["framework"] == fw)]
        timed = (f": at batch 1 their steps take {_and([x for x in ratios if x])} the CUDA-graph step of the same "
                 "model and precision (launch overhead, above)" if all(ratios) else "")
        unfused = int(cell["group"].str.contains(" | fp8 | ", regex=False).sum())
        others = (f"the other {len(cell) - 1}" + (f" ({unfused} of them FP8, whose unfused activation quantisation "
                                                   "the cell's fit must separate from its fixed cost per layer)"
                                                   if unfused and len(cell_worst) == 1 else ""))
        notes.append(f"Groups {ids} are eager step sweeps (every kernel launched from Python){timed}. Their cell "
                     f"({e(fam)} · {e(fw)}) holds {len(cell)} groups, so each is predicted from the other "
                     f"{len(cell) - 1}." if len(cell_worst) > 1 else
                     f"Group {ids} is an eager step sweep (every kernel launched from Python)"
                     f"{timed.replace('their', 'its')}. Its cell ({e(fam)} · {e(fw)}) holds {len(cell)} groups, so "
                     f"it is predicted from {others}.")
    col = lambda name, default: worst[name] if name in worst else pd.Series(default, index=worst.index)  # noqa: E731
    agentx = worst["workload"].astype(str).str.lower().eq("agentx")  # its own note says it
    stated = col("conditions_stated", True) if "conditions_stated" in worst else col("calibrates", True)
    unstated = worst[~stated.astype(bool) & ~agentx]
    for _, r in unstated.iterrows():
        notes.append(f"Group #{r['#']}'s source states no {_and([k.upper() for k in r['not_stated']])}: it is predicted "
                     "at the defaults (TP across its GPUs, EP and DP 1, ISL and OSL 1,024), and its points calibrate "
                     "nothing (only points whose source states ISL, OSL and TP do).")
    for _, r in worst[stated.astype(bool) & ~col("layout_consistent", True).astype(bool)].iterrows():
        decode = r["n_decode_gpus"] if r["n_decode_gpus"] == r["n_decode_gpus"] else r["n_gpus"]
        notes.append(f"Group #{r['#']}'s recorded layout ({e(r['layout'])}, its workers as recorded) cannot hold its "
                     f"{text.plain(decode)} decode GPUs: it is predicted as recorded, and its points calibrate nothing "
                     "(only points whose layout accounts for their GPUs do).")
    for _, r in worst[col("disagg", False).astype(bool)].iterrows():
        note = _prefill_bound_note(r, points[points["group"] == r["group"]].sort_values("concurrency"))
        if note:
            notes.append(note)
    from analysis.perfmodel.step import MOE_LAYER_FIXED

    moe_alone = _moe_alone(worst, groups) if "model" in groups else worst.iloc[:0]
    for _, r in moe_alone.iterrows():
        cell = groups[(groups["family"] == r["family"]) & (groups["framework"] == r["framework"])]
        notes.append(f"Group #{r['#']} is the only MoE model in its cell ({e(r['family'])} · {e(r['framework'])}): "
                     f"the cell's parameters come from {len(cell) - 1} dense groups, none of which reads experts or "
                     "runs an MoE layer's routing kernels (router, top-k, token sort, grouped GEMM, scatter); the model "
                     f"counts an MoE layer's fixed cost as {text.plain(1 + MOE_LAYER_FIXED)} dense layers', inferred from "
                     "the H200 sweep's batch-1 steps, this group's among them.")
    agentic = worst[worst["workload"].astype(str).str.lower().eq("agentx")]
    for _, r in agentic.iterrows():
        pts = points[points["group"] == r["group"]].sort_values("concurrency")
        first = pts.iloc[0]
        duty = pts["measured_tok_s_per_gpu"] * r["n_gpus"] / (pts["measured_tok_s_per_user"] * pts["concurrency"])
        user = pts["predicted_tok_s_per_user"] / pts["measured_tok_s_per_user"] - 1
        gpu = pts["predicted_tok_s_per_gpu"] / pts["measured_tok_s_per_gpu"]
        notes.append(
            f"Group #{r['#']} is an AgentX run, and its source states no ISL or OSL, so it is predicted at 1,024 / "
            f"1,024 tokens and calibrates nothing. Its tok/s/user is off by {text.signed(100 * user.min(), 0)}% to "
            f"{text.signed(100 * user.max(), 0)}% "
            f"over its {r['points']} points (within {text.pct(abs(first['error_tok_s_per_user']))} at concurrency "
            f"{text.num(first['concurrency'])}; the measured speed falls "
            f"{text.times(pts['measured_tok_s_per_user'].iloc[0] / pts['measured_tok_s_per_user'].iloc[-1], 1)} from "
            f"concurrency {text.num(first['concurrency'])} to {text.num(pts['concurrency'].iloc[-1])}, the predicted "
            f"{text.times(pts['predicted_tok_s_per_user'].iloc[0] / pts['predicted_tok_s_per_user'].iloc[-1], 1)}), "
            f"and its tok/s/GPU is {text.times(gpu.min(), 1)} to {text.times(gpu.max(), 1)} too high: the published "
            f"tok/s/GPU is {text.fixed(duty.min(), 2)} to {text.fixed(duty.max(), 2)} of tok/s/user × concurrency ÷ "
            f"GPUs ({text.fixed(duty.iloc[0], 2)} at concurrency {text.num(first['concurrency'])}: "
            f"{text.fixed(first['measured_tok_s_per_gpu'], 1)} against {text.fixed(first['measured_tok_s_per_user'], 1)}"
            f" × {text.num(first['concurrency'])} ÷ {text.whole(r['n_gpus'])}), so its output rate counts time its "
            "requests spent outside decode (each turn's time to first token, which the table gives), while the "
            "model's decode duty is the median share of its family's fixed-length serving runs spent decoding.")
    first, rest = notes[:1] if len(drifted) else [], notes[1:] if len(drifted) else notes
    named = {int(m.group(1)) for n in rest for m in re.finditer(r"#(\d+)", n)}
    for _, r in worst[~worst["#"].isin(named)].iterrows():  # no mechanism named: what its cell's other groups ran
        note = _sibling_note(r, groups, points, e)
        if note:
            rest.append(note)
    return first + sorted(rest, key=lambda n: int(re.search(r"#(\d+)", n).group(1)))  # in the table's order


def _sibling_note(r, groups: pd.DataFrame, points: pd.DataFrame, e) -> str:
    """For a worst group no other note explains: at a concurrency it shares with other validated groups of its cell
    (the lowest such), their measured time per output token against its own measured and predicted one (facts to read
    the miss against, no cause claimed); ``""`` when no other group of the cell shares a concurrency with it."""
    mine = points[points["group"] == r["group"]].set_index("concurrency")
    others = groups[(groups["family"] == r["family"]) & (groups["framework"] == r["framework"])
                    & (groups["group"] != r["group"])]
    best = None
    for _, o in others.iterrows():
        theirs = points[points["group"] == o["group"]].set_index("concurrency")
        shared = sorted(set(mine.index) & set(theirs.index))
        if shared and (best is None or shared[0] < best[0]):
            best = (shared[0], [])
        if shared and best[0] == shared[0]:
            best[1].append((o["group"], 1000.0 / float(theirs.loc[shared[0], "measured_tok_s_per_user"])))
    if best is None:
        return ""
    c, sib = best
    ms = lambda v: text.fixed(1000.0 / float(v), 1)  # noqa: E731
    theirs = _and([f"{text.fixed(t, 1)} ms ({e(g)})" for g, t in sib])
    return (f"Group #{r['#']} is predicted from the other {len(others)} validated group"
            f"{'s' if len(others) != 1 else ''} of its cell ({e(r['family'])} · {e(r['framework'])}) and those "
            "below three concurrencies. At concurrency "
            f"{text.num(c)}, the one it shares with {'them' if len(sib) > 1 else 'one of them'}, they took {theirs} "
            f"per output token, this group {ms(mine.loc[c, 'measured_tok_s_per_user'])} ms, its prediction "
            f"{ms(mine.loc[c, 'predicted_tok_s_per_user'])} ms.")


def _moe_alone(worst: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """The worst groups whose model is an MoE while every other group of their cell is dense."""
    from analysis import specs

    def moe(name) -> bool | None:
        try:
            return specs.model(str(name)).is_moe
        except KeyError:
            return None

    kinds = groups.assign(moe=groups["model"].map(moe))
    keep = []
    for _, r in worst.iterrows():
        others = kinds[(kinds["family"] == r["family"]) & (kinds["framework"] == r["framework"])
                       & (kinds["group"] != r["group"])]
        keep.append(moe(r["model"]) is True and len(others) > 0 and (others["moe"] == False).all())  # noqa: E712
    return worst[np.array(keep, dtype=bool)] if len(worst) else worst


def _prefill_bound_note(r, pts: pd.DataFrame) -> str:
    """For a disaggregated worst group: how its measured tok/s/GPU flattens between its two largest concurrencies
    against the prediction, and the input tokens per second each of its prefill GPUs took at the largest (measured
    output × GPUs × ISL/OSL ÷ prefill GPUs). ``""`` when the group lacks what that needs or does not flatten."""
    n_pre, isl, osl = r["n_prefill_gpus"], r["isl"], r["osl"]
    if len(pts) < 2 or not (n_pre == n_pre and n_pre > 0 and isl == isl and osl == osl and osl > 0):
        return ""
    a, b = pts.iloc[-2], pts.iloc[-1]
    measured = b["measured_tok_s_per_gpu"] / a["measured_tok_s_per_gpu"]
    predicted = b["predicted_tok_s_per_gpu"] / a["predicted_tok_s_per_gpu"]
    if not measured < predicted:
        return ""
    per_prefill = b["measured_tok_s_per_gpu"] * r["n_gpus"] * isl / osl / n_pre
    share = _prefill_share(r.get("config"), per_prefill, r.get("range_ratio", 1.0))
    cap, at = r.get("prefill_share", np.nan), r.get("prefill_share_measured_at")
    basis = ("an assumption: no aggregated run measured it" if not at else
             "measured from the TTFT of the shipped aggregated runs, all hardware together: none of this family"
             if at == "all" else f"measured from the TTFT of the {text.plain(at)} aggregated runs")
    took = (f"; at the datasheet's FLOP rate that is {text.share(share)} of one GPU's peak, well under the model's "
            f"prefill cap of {text.pct(cap)} ({basis}): the cap does not bind, so what flattened this run's output is "
            "not a rate the model prices."
            if share == share and cap == cap and share < cap else
            f"; at the datasheet's FLOP rate that is {text.share(share)} of one GPU's peak, against the model's cap of "
            f"{text.pct(cap)} ({basis})." if share == share and cap == cap else
            "; the model caps prefill at a share of peak FLOPs this run's prefill did not reach.")
    return (f"Group #{r['#']} is disaggregated ({text.whole(n_pre)} of its {text.whole(r['n_gpus'])} GPUs prefill): "
            f"from concurrency {text.num(a['concurrency'])} to {text.num(b['concurrency'])} its measured tok/s/GPU "
            f"rises {text.times(measured, 1)}, the prediction {text.times(predicted, 1)}. At "
            f"{text.num(b['concurrency'])} each prefill GPU took about {text.whole(per_prefill)} input tokens per second "
            f"({text.fixed(b['measured_tok_s_per_gpu'], 1)} tok/s/GPU × {text.whole(r['n_gpus'])} GPUs × ISL/OSL "
            f"{text.num(isl / osl)} ÷ {text.whole(n_pre)}){took}")


def _prefill_share(cfg, tok_s_per_gpu: float, range_ratio: float = 1.0) -> float:
    """The share of one GPU's datasheet FLOP rate that prefilling ``tok_s_per_gpu`` input tokens per second of the
    group's configuration takes, its prompts at the lengths its benchmark drew (``range_ratio``, as the model prices
    them), NaN when its configuration cannot be priced."""
    from analysis.perfmodel import calibrate as cb
    from analysis.perfmodel import step as st

    if not isinstance(cfg, dict):
        return np.nan
    try:
        dep = replace(cb.deployment({k: v for k, v in cfg.items() if v is not None}),
                      range_ratio=float(range_ratio if range_ratio == range_ratio else 1.0))
        geo = st.geometry(dep, verify=1.0)
        per_token_ms = st.prefill_ms_per_token(geo, dep.prefill_isl) * st.parallelism(dep).worker_gpus
    except (KeyError, ValueError, TypeError):
        return np.nan
    return tok_s_per_gpu * per_token_ms / 1000.0 if per_token_ms > 0 else np.nan


def model_validation_section(points: pd.DataFrame, *, worst: int = VALIDATION_WORST_MAX, report: dict | None = None
                             ) -> dict:
    """Predicted against measured for every left-out configuration group of ``perfclaims model --validate``
    (:func:`analysis.perfmodel.validate.validate`): ``report`` (the validation report), ``groups``
    (:func:`validation_groups`), ``points`` (:func:`validation_points`, the figure's data), ``by_family``
    (:func:`validation_by_family`), ``worst`` (:func:`validation_worst`) and ``facts``
    (:func:`validation_facts`)."""
    from analysis.perfmodel import validate

    rep = validate.validate(points) if report is None else report  # ``report``: that validation of ``points``
    groups = validation_groups(rep)
    return {"report": rep, "groups": groups, "points": validation_points(rep),
            "by_family": validation_by_family(groups),
            "worst": validation_worst(groups, limit=worst) if len(groups) else groups,
            "facts": validation_facts(rep)}


# --- the roofline form's held-out batch check ------------------------------------------------------------------
# The roofline form is fitted on the small batches and checked this many times beyond the largest of them.
ROOFLINE_BEYOND = (4.0, 8.0)


def _signed_list(rows: pd.DataFrame) -> str:
    return ", ".join(f"{text.num(b)}: {text.signed(100 * e)}" for b, e in zip(rows["batch"], rows["rel_error"]))


def roofline_summary(check: pd.DataFrame, linear: pd.DataFrame, *, fit_max_batch: float,
                     beyond=ROOFLINE_BEYOND) -> pd.DataFrame:
    """Per group and context of a roofline-form :func:`analysis.scaling.extrapolation_check`: the held-out batches
    ``beyond`` × ``fit_max_batch`` and the worst error there (signed), the linear form's error at the same point
    fitted on the same batches (``linear``, may be empty), the other held-out batches with their errors, and the
    shares the fit used. Rows with a batch in the range first (dense step sweeps first), then the others."""
    if check.empty:
        return pd.DataFrame()
    lo, hi = beyond[0] * fit_max_batch, beyond[1] * fit_max_batch
    def key(group, context, batch):  # a point of either check: no context (NaN) is a context of its own
        return group, (round(float(context), 3) if context == context else None), round(float(batch), 3)

    lin = ({key(g, c, b): e for g, c, b, e in zip(linear["group"], linear["context"], linear["batch"],
                                                  linear["rel_error"])} if len(linear) else {})
    rows = []
    for (group, context), g in check.groupby(["group", "context"], sort=False, dropna=False):
        inside = g[g["batch"].between(lo, hi)]
        w = inside.loc[inside["rel_error"].abs().idxmax()] if len(inside) else None
        first = g.iloc[0]
        rows.append({
            "group": group, "context": context, "hardware": first["hardware"],
            "step": bool((g["step_source"] == "step_ms").all()), "moe": bool(first["moe"]),
            "n_fit_batches": int(first["n_fit_batches"]), "batches_in_range": scaling.batch_list(inside["batch"]),
            "batch_in_range": np.nan if w is None else float(w["batch"]),
            "rel_error_in_range": np.nan if w is None else float(w["rel_error"]),
            "linear_rel_error_in_range": np.nan if w is None else lin.get(key(group, context, w["batch"]), np.nan),
            "other_batches": _signed_list(g[~g["batch"].between(lo, hi)]),
            "bw_share": float(first["bw_share"]), "kv_bw_share": float(first["kv_bw_share"]),
            "flop_share": float(first["flop_share"]), "overhead_ms_per_layer": float(first["overhead_ms_per_layer"]),
            "bw_share_source": first["bw_share_source"], "kv_bw_share_source": first["kv_bw_share_source"],
            "flop_share_source": first["flop_share_source"]})
    out = pd.DataFrame(rows)
    out["dense_step"] = out["step"] & ~out["moe"]
    keys = {"_none": out["batch_in_range"].isna(), "_moe": ~out["dense_step"], "_serving": ~out["step"]}
    return (out.assign(**keys).sort_values([*keys, "group", "context"], kind="stable")
            .drop(columns=list(keys)).reset_index(drop=True))


def _others_clause(others: pd.DataFrame, tol: float) -> str:
    """The headline's word on the configurations beyond the dense sweeps checked the same way (the MoE sweeps and
    serving runs), so that it does not read as the check of every configuration: how many are within ``tol`` and
    the worst, with its kind."""
    if others.empty:
        return ""
    err = others["rel_error_in_range"]
    w = others.loc[err.abs().idxmax()]
    kind = f"{'step' if w['step'] else 'serving'} sweep of {'an MoE' if w['moe'] else 'a dense model'}"
    return (f"; of the {text.count(len(others), 'other configuration')} with a batch there, "
            f"{int((err.abs() <= tol).sum())} within {text.pct(tol)}, the worst a {kind} at "
            f"{text.signed(100 * w['rel_error_in_range'])}%")


def dense_h200_sweeps(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of a :func:`roofline_summary` that are dense-model H200 step sweeps with a batch in the range."""
    if summary.empty:
        return summary
    h200 = summary["hardware"].astype(str).str.startswith("H200")
    return summary[summary["dense_step"] & h200 & summary["batch_in_range"].notna()]
