"""The batch-scaling report (``notebooks/10-batch-scaling.ipynb``): everything it shows, built once.

:func:`build` fits the batch model and returns a :class:`BatchScalingPage`: the headline, one section for the
measured decode-step sweeps and one for the serving sweeps (each titled for what it holds), display-ready tables
with short headers, the data of every figure, the sentences, and :meth:`BatchScalingPage.results`. The notebook
only displays them. Every data-derived string in a sentence or an HTML block passes through
:func:`analysis.text.esc`; tables are escaped cell by cell where they are shown.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

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


def _b_half_text(row) -> str:
    b, lo, hi = row.get("b_half"), row.get("b_half_lo"), row.get("b_half_hi")
    if not (np.isfinite(b) and b >= 1):
        return "–"
    largest = row.get("largest_batch", np.nan)
    beyond = " (beyond the largest batch measured)" if np.isfinite(largest) and b > largest else ""
    # a per-sequence cost on its physical floor makes B½ an upper bound: no interval around it (as the prose says)
    if any(term in str(row.get("at_bound", "") or "") for term in ("t1", "t2")):
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
        return (f"Fitted on batches up to {b:g}, the model predicts the larger batches with a median error of "
                f"{c['rel_error'].abs().median() * 100:.1f}% and at worst {w['max_abs_rel_error'] * 100:.0f}% "
                f"({text.esc(w['group'])}). Throughput at large batches read off a small-batch sweep is an estimate, "
                "not a measurement.")

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
        }


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
          poor_fit_cv_error: float = POOR_FIT_CV_ERROR) -> BatchScalingPage:
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
    fits = result.table
    try:
        head = scaling.headline_numbers(fits, model=headline_model, precision=headline_precision,
                                        framework=headline_framework, context=headline_context)
    except KeyError:
        head = None
    page = BatchScalingPage(params=params, points=points, fits=fits, draws=result.draws, floors=floors, head=head,
                            residuals=scaling.residuals(points, fits), launch=scaling.launch_overhead(points),
                            check=check, check_summary=scaling.extrapolation_summary(check), moe_checks=moe,
                            sol=roofline.batch1_speed_of_light_for_points(points))
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
        half = f", B½ ≈ {text.num(row['b_half'])} (model)" if meaningful else ""
        title = (f"{row['group']}: {first}{text.num(row['largest_batch_tok_s'])} tok/s at batch "
                 f"{text.num(row['largest_batch'])} (largest measured){half}")
        out.append(Figure(row["group"], page.residuals[page.residuals["group"] == row["group"]],
                          curves[curves["group"] == row["group"]], row, title))
    return out



# --- the performance model's validation (a section of its own; the notebook can show it beside the fits) ---------
def model_validation_section(points: pd.DataFrame, *, worst: int = 5) -> dict:
    """Predicted against measured for every left-out configuration group of ``perfclaims model --validate``:
    ``by_family`` (groups, median and p90 error of tok/s/user and tok/s/GPU per hardware family), ``worst`` (the
    ``worst`` groups by tok/s/GPU error, named), ``points`` (every predicted and measured point with its family, the
    data of a predicted-against-measured figure) and ``text`` (the summary sentence, escaped)."""
    from analysis.perfmodel import validate

    rep = validate.validate(points)
    groups = pd.DataFrame([{"group": g["group"], "family": g["family"], "framework": g["framework"],
                            "points": len(g["points"]), "error tok/s/user %": 100 * g["error_tok_s_per_user"],
                            "error tok/s/GPU %": (100 * g["error_tok_s_per_gpu"]
                                                  if g["error_tok_s_per_gpu"] is not None else np.nan)}
                           for g in rep["groups"]])
    if groups.empty:
        return {"by_family": groups, "worst": groups, "points": pd.DataFrame(), "text": "", "report": rep}
    by_family = (groups.groupby("family", sort=True)
                 .agg(groups=("group", "size"), median_user=("error tok/s/user %", "median"),
                      p90_user=("error tok/s/user %", lambda s: float(np.percentile(s, 90))),
                      median_gpu=("error tok/s/GPU %", "median"))
                 .reset_index()
                 .rename(columns={"median_user": "median error tok/s/user %", "p90_user": "p90 error tok/s/user %",
                                  "median_gpu": "median error tok/s/GPU %"}))
    pts = pd.DataFrame([{**p, "group": g["group"], "family": g["family"]} for g in rep["groups"] for p in g["points"]])
    text_ = (f"Left out one at a time, {rep['n_groups']} configuration groups are predicted with a median error of "
             f"{100 * rep['median_error_tok_s_per_user']:.1f}% in tok/s/user and "
             f"{100 * rep['median_error_tok_s_per_gpu']:.1f}% in tok/s/GPU (p90 "
             f"{100 * rep['p90_error_tok_s_per_user']:.1f}% and {100 * rep['p90_error_tok_s_per_gpu']:.1f}%); the "
             f"worst: {text.esc(rep['groups'][0]['group'])}.")
    return {"by_family": by_family, "worst": groups.head(worst), "points": pts, "text": text_, "report": rep}
