"""The precision-and-scope report (``notebooks/30-precision-scope.ipynb``): one object holding what the page shows.

The page leads with its defensible answer: FP4/FP8 tok/s/GPU at equal tok/s/user over the clean pairs (both sides
equal in everything the data records except run date and container image), with what those pairs hold equal and
where a measured ratio goes beyond the roofline's weight-bytes ratio. Below it come the confounded readings, each
labelled so: envelopes pooled over frameworks and layouts, matched pairs whose parallelism or GPU count differ, the
H200 step sweep (the kernel-level cost of unfused activation quantisation) and node ÷ larger-deployment scope
readings with their confounders. A scope reading reaches the headline only when it is clean.

Sentences are built twice from the same numbers: ``*_md`` for the page (every data-derived string through
:func:`analysis.text.esc`) and plain text for ``results()`` (the index escapes it for HTML itself).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import compare, compare_words, data, text
from analysis import frontier as fr
from analysis.text import span, times

LOW, HIGH = "fp4", "fp8"
STEP_LOW, STEP_HIGH = "fp8", "bf16"
PAIR_BY = ["hardware", "framework", "scope", "spec_decode"]
ENVELOPE_BY = ["hardware", "scope"]
SCOPE_FAMILIES = ["B200", "B300"]
FIELD_WORDS = {"model": "model", "hardware": "hardware", "framework": "framework", "scope": "scope",
               "isl": "input length", "osl": "output length", "spec_decode": "speculative decoding",
               "disagg": "disaggregation", "tp": "TP", "ep": "EP", "dp": "DP", "n_gpus": "GPU count",
               "n_decode_gpus": "decode-GPU count", "draft_tokens": "drafted tokens per step (where known)"}
FP4_FORMAT_TEXT = {1.7777777777777777: "NVFP4, 4.5 bits per weight with scales", 1.8823529411764706:
                   "MXFP4, 4.25 bits per weight with scales"}

Esc = Callable[[object], str]


def _bytes_words(ratio: float) -> str:
    for r, words in FP4_FORMAT_TEXT.items():
        if abs(ratio - r) < 1e-9:
            return words
    return "fp4 bytes per weight"


# --- sentences --------------------------------------------------------------------------------------------
def held_equal_text(match: Sequence[str] = compare.PRECISION_MATCH) -> str:
    """'model, hardware, framework, …' — what a clean pair holds equal (fixed words, no data)."""
    words = [FIELD_WORDS.get(c, c) for c in compare.held_equal(match)]
    words = [w for w in dict.fromkeys(words)]
    return ", ".join(words[:-1]) + " and " + words[-1]


def precision_headline(summary: dict, clean: pd.DataFrame, *, model: str, isl: float, osl: float,
                       denominator_text: str, e: Esc = text.esc) -> str:
    """One sentence true without its footnotes: the clean-pair FP4/FP8 estimate, or that there is none."""
    where = f"{e(model)} {isl:g}/{osl:g} tokens in/out, tok/s/GPU per {e(denominator_text)}"
    s = summary
    if not s["n_clean"]:
        return (f"{where}: no {LOW}/{HIGH} pair in this selection differs only in run date and container image "
                f"(within {s.get('date_window_days', compare.pairing.DATE_WINDOW_DAYS)} days or on one image), "
                f"so there is no clean {LOW}/{HIGH} estimate; every ratio below is confounded.")
    names = ", ".join(f"{e(compare.pair_label(r, PAIR_BY))} {compare_words.ratio_words(r, 'ratio_median')}"
                      for _, r in clean.iterrows())
    levels = (f"single levels {times(clean['ratio_min'].min())} to {times(clean['ratio_max'].max())}"
              + _levels_noise(clean))
    pooled = compare_words.pooled_note(s.get("date_window_days", compare.pairing.DATE_WINDOW_DAYS))
    spec = compare_words.speculation_note([e(m) for m in clean["spec_decode"]] if "spec_decode" in clean else [],
                                          low=LOW, high=HIGH)  # the method names are the data's: escaped
    pooled = f"{pooled} {spec}".strip()
    if s["n_clean"] == 1:
        r = clean.iloc[0]
        return (f"{where}: one clean pair only, {e(compare.pair_label(r, PAIR_BY))}, one hardware and engine, so no "
                f"general {LOW} ÷ {HIGH} factor: on it {compare_words.headline_ratio(r, 'ratio_median', low=LOW, high=HIGH)}, "
                f"the median of {int(r['n_levels'])} levels over {r['overlap_tok_s_per_user_lo']:.0f}–"
                f"{r['overlap_tok_s_per_user_hi']:.0f} tok/s/user{_points_used_text(r)} ({levels}). {pooled}")
    if s["n_clean"] <= 3:  # few enough to name: the range is the estimate (a median of two or three says no more)
        return (f"{where}: {LOW} delivers {times(s['clean_min'])} to {times(s['clean_max'])} the tok/s/GPU of {HIGH} at "
                f"equal tok/s/user (the medians of {s['n_clean']} clean pairs over their shared tok/s/user ranges, "
                f"{names}; {levels}). {pooled}")
    return (f"{where}: {LOW} delivers {times(s['clean_median'])} the tok/s/GPU of {HIGH} at equal tok/s/user (median "
            f"of {s['n_clean']} clean pairs' medians, range {times(s['clean_min'])} to {times(s['clean_max'])}; the "
            f"median of medians has no interval of its own, each pair's is: {names}; {levels}). {pooled}")


def _points_used_text(r) -> str:
    """', read between 3 measured fp4 and 4 measured fp8 frontier points' ('' where the table does not say)."""
    a, b = r.get(f"n_frontier_points_used_{LOW}"), r.get(f"n_frontier_points_used_{HIGH}")
    if a is None or b is None or pd.isna(a) or pd.isna(b):
        return ""
    return f", read between {int(a)} measured {LOW} and {int(b)} measured {HIGH} frontier points"


def _levels_noise(pairs: pd.DataFrame) -> str:
    """How many of the pairs' levels are within noise or have no interval ('' when every level is beyond noise)."""
    n = int(pairs["n_levels"].sum()) if "n_levels_within_noise" in pairs else 0
    if not n:
        return ""
    noise, none = int(pairs["n_levels_within_noise"].sum()), int(pairs["n_levels_no_interval"].sum())
    if not noise and not none:
        return f", every one of the {n} interpolated levels beyond noise"
    parts = [f"{noise} of {n} levels within noise"] if noise else []
    if none:
        parts.append(f"{none} without an interval")
    return ", " + " and ".join(parts)


def clean_pairs_text(clean: pd.DataFrame, *, e: Esc = text.esc) -> str:
    """What the clean pairs hold equal, each pair's reading, and any ratio beyond the roofline's bytes ratio."""
    if clean.empty:
        return ""
    parts = [f"A clean pair holds {held_equal_text()} equal; run date and container image are not held equal, but "
             f"its two sides ran on one image or within {compare.pairing.DATE_WINDOW_DAYS} days of each other, and "
             f"each side may pool several runs. {len(clean)} pair{'s' if len(clean) > 1 else ''} in this selection "
             f"{'are' if len(clean) > 1 else 'is'} clean:"]
    items = []
    for _, r in clean.iterrows():
        label = e(compare.pair_label(r, PAIR_BY))
        items.append(f"- {label}: median {compare_words.ratio_words(r, 'ratio_median')} over "
                     f"{r['overlap_tok_s_per_user_lo']:.0f}–{r['overlap_tok_s_per_user_hi']:.0f} tok/s/user (every "
                     f"level {times(r['ratio_min'])} to {times(r['ratio_max'])}{_levels_noise(clean.loc[[_]])}; "
                     f"lowest {compare_words.ratio_words(r, 'ratio_min')}, highest "
                     f"{compare_words.ratio_words(r, 'ratio_max')}); batch-1 roofline bytes bound "
                     f"{times(r['bytes_ratio'])}, not a measurement "
                     f"({_bytes_words(r['bytes_ratio'])} against 8, every weight at FP4: a served FP4 checkpoint "
                     "that keeps some weights at higher precision, as DeepSeek-R1's keep attention at BF16, has a "
                     "lower one), tensor-core rate ratio "
                     f"{times(r['math_ratio'])}.")
    tail = []
    for _, r in clean[clean["beyond_bytes"]].iterrows():
        label = e(compare.pair_label(r, PAIR_BY))
        math = r["math_ratio"]
        rate = (f" (the fp4 ÷ fp8 tensor-core rate ratio is {times(math)})" if np.isfinite(math) else "")
        tail.append(f"{label} reaches {times(r['ratio_max'])}, above its roofline bytes ratio of "
                    f"{times(r['bytes_ratio'])}{rate}. The bytes ratio is what fewer weight bytes give one memory-bound "
                    "step at equal batch; at equal tok/s/user it is no ceiling: the shorter step leaves time for "
                    "more sequences in each step, so tok/s/GPU can rise by more where weights dominate the step. "
                    "What changed with the date and image may add to it.")
    if not tail:
        tail.append("No clean pair goes beyond its roofline bytes ratio.")
    return "\n".join([parts[0], ""] + items) + "\n\n" + "\n\n".join(tail)


def envelope_text(summary: dict, *, wide_gap: float = fr.WIDE_GAP) -> str:
    """The confounded envelope range, labelled as such (no data-derived strings)."""
    s = summary
    if not s["n_envelopes"]:
        return f"No hardware × scope measured {LOW} and {HIGH} over a shared tok/s/user range."
    text_ = (f"Confounded, not an effect of precision: each envelope pools every framework, parallelism layout and "
             f"speculative-decoding setting of one hardware × scope, so its two sides are different deployments. "
             f"Across the shared tok/s/user range of {s['n_envelopes']} envelopes, {LOW}/{HIGH} runs from "
             f"{times(s['ratio_min'])} to {times(s['ratio_max'])}; {s['n_below_1']} dip below 1× ({HIGH} ahead) "
             f"somewhere, {s['n_beyond_bytes']} go beyond the roofline bytes ratio and {s['n_beyond_roofline']} "
             f"beyond the tensor-core rate ratio as well (at equal tok/s/user a faster step also fits more "
             f"sequences, so neither ratio is a ceiling). Each envelope's median "
             f"lies between {times(s['median_min'])} and {times(s['median_max'])}. ")
    narrower = s["ratio_min_close"] > s["ratio_min"] or s["ratio_max_close"] < s["ratio_max"]
    text_ += (f"The extremes are rough too: neighbouring frontier points are up to {s['widest_gap']:.1f}× apart in "
              f"tok/s/user ({s['n_wide_gap']} envelopes have a gap wider than {wide_gap:g}×)")
    if narrower:
        text_ += (f"; at levels where both frontiers have points within {wide_gap:g}× the range is "
                  f"{times(s['ratio_min_close'])} to {times(s['ratio_max_close'])}.")
    else:
        text_ += "; keeping only levels read between close points does not narrow the range."
    return text_


def matched_text(matched: pd.DataFrame, clean: pd.DataFrame, *, e: Esc = text.esc) -> str:
    if matched.empty:
        return f"No configuration was measured at both {LOW} and {HIGH}."
    has = matched["ratio_median"].notna()
    confounded = matched[has & ~matched.index.isin(clean.index)]
    apart = compare.apart_in_time_pairs(matched)
    other = confounded[~confounded.index.isin(apart.index)]
    out = (f"{len(matched)} configurations were measured at both precisions with the same hardware, framework, "
           f"scope, lengths and speculative decoding; {int(has.sum())} share a tok/s/user range and {len(clean)} "
           f"of those are clean (the headline). ")
    if len(apart):
        out += compare_words.apart_in_time_note(
            [(e(compare.pair_label(r, PAIR_BY)), r["apart_in_time"], compare_words.ratio_words(r, "ratio_median"))
             for _, r in apart.iterrows()],
            window_days=compare.pairing.DATE_WINDOW_DAYS) + " "
    out += (f"The other {len(other)} differ in parallelism or GPU count as "
            "well, listed under confounders: their ratios are not the effect of precision alone")
    if len(other):
        known = other["ratio_median_verdict"].isin(["higher", "lower", "within-noise"])
        noise = int((other["ratio_median_verdict"] == "within-noise").sum())
        out += (f" (medians {times(other['ratio_median'].min())} to {times(other['ratio_median'].max())}, at equal "
                f"tok/s/user; {int(known.sum())} of {len(other)} medians carry an interval"
                + (f", {noise} of them within noise" if noise else "") + ", the others' readings have none: see "
                "the table).")
    else:
        out += "."
    missing = int((~has).sum())
    if missing:
        out += (f" {missing} have no tok/s/user level measured at both precisions (the snapshot keeps ≤5 "
                "concurrencies per configuration), so no ratio is read there.")
    return out


def steps_title(pairs: pd.DataFrame) -> str:
    """The H200 section's heading: what the step sweep shows, with its count. It names the sweep's FP8 path as its
    source describes it (activations quantised by separate kernels) as a condition, not as the measured cause: the
    FP8 steps differ from the BF16 ones in their matmul kernel too."""
    base = "One H200, bf16 against fp8 as the sweep ran it (activations quantised by separate, unfused kernels)"
    if pairs.empty:
        return base
    slower = int((pairs["ratio"] < 1).sum())
    verdict = ("fp8 slower at all" if slower == len(pairs) else f"fp8 slower at {slower} of")
    return f"{base}: {verdict} {len(pairs)} matched batches"


def steps_text(summary: pd.DataFrame, *, e: Esc = text.esc) -> str:
    if summary.empty:
        return f"No step-timing points measured at both {STEP_LOW} and {STEP_HIGH}."
    parts = [f"{e(r['model'])} ({e(r['framework'])}, context {r['context_len']:,.0f}): {times(r['ratio_min'])} to "
             f"{times(r['ratio_max'])} (median {times(r['ratio_median'])}, {int(r['n_batches'])} batches)"
             for _, r in summary.iterrows()]
    slower = bool((summary["ratio_max"] < 1).all())
    verdict = (f"{STEP_LOW} is slower than {STEP_HIGH} at every matched batch" if slower
               else f"{STEP_LOW} is not uniformly slower than {STEP_HIGH}")
    return (f"Same GPU, model shape, batch and context, only the precision changed; {STEP_LOW} tok/s ÷ "
            f"{STEP_HIGH} tok/s: " + "; ".join(parts) + f". {verdict}. This is not a precision pair for the "
            f"{LOW}/{HIGH} question above: on this stack the activations are quantised by separate, unfused "
            "kernels (the sweep's README) and its FP8 matmuls run another kernel (torch._scaled_mm) than its BF16 "
            "ones, so its FP8 steps take longer although they read half the weight bytes; the sweep does not "
            "separate the two. It measures FP8 on this stack, not FP8 as an engine that fuses the quantisation runs "
            "it.")


def _scope_line(r: pd.Series, reference_scope: str, e: Esc) -> str:
    ratio = r["reference_over_scope"]
    verdict = r.get("reference_over_scope_verdict", "unknown")
    better = (f"the {reference_scope} is better per GPU here" if verdict == "higher" else
              f"the {e(r['scope'])} deployment is better per GPU here" if verdict == "lower" else
              "within noise: neither is shown better per GPU" if verdict == "within-noise" else
              "no interval: " + compare_words.missing_interval_text(
                  r.get("reference_over_scope_missing", ""), r.get("reference_over_scope_missing_why", ""),
                  low=reference_scope, high=e(r["scope"])))
    line = (f"- {e(r['gpu_family'])} {e(r['precision'])} at {r['target_tok_s_per_user']:g} tok/s/user: "
            f"{e(r['reference'])} ({e(r['reference_n_gpus'])} GPUs) {r['reference_tok_s_per_gpu']:,.0f} vs "
            f"{e(r['hardware'])} {e(r['scope'])} ({e(r['n_gpus'])} GPUs) {r['tok_s_per_gpu']:,.0f} tok/s/GPU — "
            f"{reference_scope} ÷ {e(r['scope'])} = {ratio:.2f}×"
            + (f", {compare_words.interval_cell(r, 'reference_over_scope', low=reference_scope, high=e(r['scope']))}"
               if verdict in ("higher", "lower", "within-noise") else "") + f" ({better}).")
    if r["clean"]:
        return line + " Clean: framework, disaggregation, EP width and speculative decoding are equal."
    return line + f" Confounded by {e(r['confounder_detail'])}."


def scope_headline(comparison: pd.DataFrame, *, e: Esc = text.esc, reference_scope: str = "node") -> str:
    """Scope's place in the headline: the clean readings, or why there is no headline scope ratio."""
    measured = comparison[comparison["status"] == "measured"] if len(comparison) else comparison
    clean = measured[measured["clean"]] if len(measured) else measured
    if len(clean):
        return "Scope (clean readings only): " + " ".join(
            f"{e(r['gpu_family'])} {e(r['precision'])} at {r['target_tok_s_per_user']:g} tok/s/user, "
            f"{reference_scope} ÷ {e(r['scope'])} = "
            f"{compare_words.ratio_words(r, 'reference_over_scope', low=reference_scope, high=e(r['scope']))}."
            for _, r in clean.iterrows())
    disagg = _disagg_split(measured)
    return (f"Scope has no headline number: none of the {len(measured)} measured {reference_scope} ÷ larger-"
            f"deployment readings holds framework, disaggregation, EP width and speculative decoding equal, so "
            f"each mixes the interconnect with a different serving setup (listed with every reading below){disagg}.")


def _disagg_split(measured: pd.DataFrame) -> str:
    """'; in 20 of them the node served aggregated and the larger deployment disaggregated: they compare serving
    architectures as much as interconnects' ('' where no reading pairs the two)."""
    if not len(measured) or "reference_setup_disagg" not in measured or "setup_disagg" not in measured:
        return ""
    n = int(((measured["reference_setup_disagg"] == "aggregated")
             & (measured["setup_disagg"] == "disaggregated")).sum())
    if not n:
        return ""
    of = "all of" if n == len(measured) else f"{n} of"
    return (f"; in {of} them the node served aggregated and the larger deployment "
            "disaggregated: they compare serving architectures as much as interconnects")


def scope_text(comparison: pd.DataFrame, capacity: pd.DataFrame, *, e: Esc = text.esc,
               reference_scope: str = "node") -> str:
    """Every measured scope reading with its confounders, then what was not measured."""
    measured = comparison[comparison["status"] == "measured"]
    lines = [_scope_line(r, reference_scope, e) for _, r in measured.iterrows()]
    n_not = int((comparison["status"] != "measured").sum())
    tail = [f"{n_not} scope comparisons are not measured (one side has no frontier point range covering the "
            "level, or no data at that scope)."]
    single = capacity[capacity["scope"] == "single-gpu"]
    if not single["status"].eq("measured").any():
        tail.append("One GPU alone: not measured for any family in this selection.")
    return "\n".join(lines + [""] + tail) if lines else " ".join(tail)


def denominator_words(effect: pd.DataFrame, *, denominator: str) -> str:
    if effect.empty:
        return "No disaggregated frontier points: the decode-only and all-GPU denominators agree."
    span = f"{effect['decode_over_all_min'].min():.2f}–{effect['decode_over_all_max'].max():.2f}×"
    if denominator == "all":
        return (f"Counting decode GPUs only (as InferenceX's `output_tput_per_gpu` does) would raise the per-GPU "
                f"throughput of disaggregated frontier points by {span}. The prefill GPUs are part of the "
                "deployment, so this report divides by all of them.")
    return (f"This report divides by decode GPUs only: disaggregated points read {span} higher than they would "
            "per GPU of the whole deployment (prefill GPUs are not counted).")


# --- tables for the page (compact: they fit a 1,400 px window) --------------------------------------------
def _interval_cells(pairs: pd.DataFrame, prefix: str) -> list[str]:
    """Each row's interval for one ratio (:func:`analysis.compare_words.interval_cell`)."""
    return [compare_words.interval_cell(r, prefix, low=LOW, high=HIGH) for _, r in pairs.iterrows()]


def _levels_cells(pairs: pd.DataFrame) -> list[str]:
    """Per row: ``0 of 25`` levels within noise, ``no interval`` when none of its levels has one."""
    out = []
    for _, r in pairs.iterrows():
        n = int(r["n_levels"])
        if not n:
            out.append("")
        elif int(r["n_levels_no_interval"]) == n:
            out.append("no interval")
        else:
            extra = f" ({int(r['n_levels_no_interval'])} without)" if r["n_levels_no_interval"] else ""
            out.append(f"{int(r['n_levels_within_noise'])} of {n}{extra}")
    return out


def clean_table(clean: pd.DataFrame) -> pd.DataFrame:
    if clean.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "pair (hardware · framework · scope · spec decoding)": [compare.pair_label(r, PAIR_BY)
                                                               for _, r in clean.iterrows()],
        "shared tok/s/user": [span(a, b) for a, b in zip(clean["overlap_tok_s_per_user_lo"],
                                                           clean["overlap_tok_s_per_user_hi"])],
        f"{LOW}/{HIGH} median at equal tok/s/user": clean["ratio_median"].to_numpy(),
        "median 95% interval": _interval_cells(clean, "ratio_median"),
        "min": clean["ratio_min"].to_numpy(), "min 95% interval": _interval_cells(clean, "ratio_min"),
        "max": clean["ratio_max"].to_numpy(), "max 95% interval": _interval_cells(clean, "ratio_max"),
        "levels within noise": _levels_cells(clean),
        "batch-1 bytes bound (roofline, not measured)": clean["bytes_ratio"].to_numpy(),
        "tensor-core rate ratio": clean["math_ratio"].to_numpy(),
        "what differs": clean["confounder_detail"].to_numpy(),
    })


def envelope_table(envelope: pd.DataFrame, targets: Sequence[float]) -> pd.DataFrame:
    if envelope.empty:
        return pd.DataFrame()
    out = pd.DataFrame({
        "envelope (hardware · scope)": [compare.pair_label(r, ENVELOPE_BY) for _, r in envelope.iterrows()],
        "shared tok/s/user": [span(a, b) for a, b in zip(envelope["overlap_tok_s_per_user_lo"],
                                                           envelope["overlap_tok_s_per_user_hi"])],
        # why a ratio has no interval is in the matched table and the prose; here it only says there is none
        # the interval is each side's sampling within its runs: it says nothing of what the pooled sides differ in
        "median (95% sampling interval; confounded)": [compare_words.ratio_cell(r, "ratio_median", low=LOW, high=HIGH)
                                                       for _, r in envelope.iterrows()],
        "min": envelope["ratio_min"].to_numpy(), "max": envelope["ratio_max"].to_numpy(),
    })
    for t in targets:  # the ratio and its interval in one cell, so the table fits the window
        col = f"ratio_at_{t:g}"
        if col in envelope and envelope[col].notna().any():
            out[f"at {t:g} tok/s/user"] = [compare_words.ratio_cell(r, col, low=LOW, high=HIGH)
                                                          for _, r in envelope.iterrows()]
    out["widest gap"] = envelope["widest_gap"].to_numpy()
    out["roofline bytes ratio (batch 1)"] = envelope["bytes_ratio"].to_numpy()
    out["pooled sides differ in"] = envelope["confounders"].to_numpy()
    for t in targets:  # the two readings' own speculative decoding: pooled sides can hide an MTP-vs-none reading
        col = f"spec_decode_at_{t:g}"
        if f"at {t:g} tok/s/user" in out and col in envelope:
            out[f"spec decoding at {t:g} ({LOW} vs {HIGH})"] = envelope[col].to_numpy()
    return out


def matched_table(matched: pd.DataFrame) -> pd.DataFrame:
    if matched.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "pair (hardware · framework · scope · spec decoding)": [compare.pair_label(r, PAIR_BY)
                                                               for _, r in matched.iterrows()],
        f"tok/s/user {LOW}": matched[f"tok_s_per_user_range_{LOW}"].to_numpy(),
        f"tok/s/user {HIGH}": matched[f"tok_s_per_user_range_{HIGH}"].to_numpy(),
        "median": matched["ratio_median"].to_numpy(),
        "median 95% interval": _interval_cells(matched, "ratio_median"),
        "min": matched["ratio_min"].to_numpy(), "max": matched["ratio_max"].to_numpy(),
        "levels within noise": _levels_cells(matched), "widest gap": matched["widest_gap"].to_numpy(),
        "confounders": matched["confounders"].to_numpy(),
        "apart in time": (matched["apart_in_time"].to_numpy() if "apart_in_time" in matched else ""),
        "note": ["no shared tok/s/user range" if str(n).startswith("no overlapping") else n for n in matched["note"]],
    })


def matched_detail_table(matched: pd.DataFrame) -> pd.DataFrame:
    if matched.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "pair": [compare.pair_label(r, PAIR_BY) for _, r in matched.iterrows()],
        f"what differs ({LOW} values vs {HIGH} values)": matched["confounder_detail"].to_numpy(),
    })


def scope_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Measured scope readings: both sides, the ratio and what else differs."""
    if comparison.empty:
        return pd.DataFrame()
    c = comparison[comparison["status"] == "measured"]
    return pd.DataFrame({
        "family": c["gpu_family"].to_numpy(), "precision": c["precision"].to_numpy(),
        "at tok/s/user": c["target_tok_s_per_user"].to_numpy(),
        "reference (GPUs)": [f"{a} ({b or '–'})" for a, b in zip(c["reference"], c["reference_n_gpus"])],
        "reference tok/s/GPU": c["reference_tok_s_per_gpu"].to_numpy(),
        "larger deployment (GPUs)": [f"{h} {s} ({n or '–'})" for h, s, n in zip(c["hardware"], c["scope"],
                                                                               c["n_gpus"])],
        "its tok/s/GPU": c["tok_s_per_gpu"].to_numpy(),
        # the direction named in the header: a precision ratio reads new ÷ old, this one the smaller side first
        "reference ÷ larger (below 1: the larger gives more per GPU)": c["reference_over_scope"].to_numpy(),
        "95% interval": [compare_words.interval_cell(r, "reference_over_scope", low="reference", high="larger")
                         for _, r in c.iterrows()],
        "confounders": c["confounders"].to_numpy(),
    })


def scope_missing_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Scope readings that could not be made, with why."""
    if comparison.empty:
        return pd.DataFrame()
    c = comparison[comparison["status"] != "measured"]
    return pd.DataFrame({
        "family": c["gpu_family"].to_numpy(), "precision": c["precision"].to_numpy(),
        "at tok/s/user": c["target_tok_s_per_user"].to_numpy(),
        "reference": c["reference"].to_numpy(),
        "larger deployment (GPUs)": [f"{h} {s} ({n or '–'})" for h, s, n in zip(c["hardware"], c["scope"],
                                                                               c["n_gpus"])],
        "why not measured": [str(s).removeprefix("not measured (").removesuffix(")") for s in c["status"]],
    })


def step_table(summary: pd.DataFrame) -> pd.DataFrame:
    if summary.empty:
        return summary
    return summary.rename(columns={"n_batches": "matched batches", "ratio_min": f"{STEP_LOW}/{STEP_HIGH} min",
                                   "ratio_median": "median", "ratio_max": "max", "context_len": "context"})


def denominator_table(effect: pd.DataFrame) -> pd.DataFrame:
    return effect.rename(columns={"decode_over_all_min": "all ÷ decode GPUs min",
                                  "decode_over_all_max": "all ÷ decode GPUs max",
                                  "n_disaggregated": "disaggregated frontier points",
                                  "n_frontier": "frontier points"})


# --- the page ------------------------------------------------------------------------------------------------
@dataclass
class PrecisionScopePage:
    """Everything the precision-and-scope notebook shows, built once from a points table."""

    model: str
    isl: float
    osl: float
    targets: list
    denominator: str
    denominator_text: str
    title: str
    summary: dict
    envelope: pd.DataFrame
    matched: pd.DataFrame
    clean: pd.DataFrame
    clean_curves: pd.DataFrame
    bytes_ratios: dict
    envelope_bars: pd.DataFrame
    bar_targets: list
    bar_note: str
    steps: pd.DataFrame
    step_summary: pd.DataFrame
    scope_capacity: pd.DataFrame
    scope_comparison: pd.DataFrame
    scope_bars: pd.DataFrame
    scope_targets: list
    scope_note: str
    denominator_effect: pd.DataFrame
    clean_measured: pd.DataFrame = field(default_factory=pd.DataFrame)  # the measured points each curve is read between
    md: dict = field(default_factory=dict)       # page sentences (escaped Markdown)
    plain: dict = field(default_factory=dict)    # the same sentences as plain text

    # tables, as shown
    @property
    def tables(self) -> dict:
        return {"clean": clean_table(self.clean), "envelope": envelope_table(self.envelope, self.targets),
                "matched": matched_table(self.matched), "matched_detail": matched_detail_table(self.matched),
                "steps": step_table(self.step_summary), "scope": scope_table(self.scope_comparison),
                "scope_missing": scope_missing_table(self.scope_comparison),
                "denominator": denominator_table(self.denominator_effect)}

    def results(self) -> dict:
        """The numbers and sentences the index and the tests read."""

        def pairs(frame: pd.DataFrame, cols: Sequence[str]) -> dict:
            keep = ["ratio_fastest_end", "ratio_capacity_end", "ratio_min", "ratio_median", "ratio_max", "widest_gap",
                    "overlap_tok_s_per_user_lo", "overlap_tok_s_per_user_hi", "confounders"]
            return {compare.pair_label(r, cols): {k: r[k] for k in keep} for _, r in frame.iterrows()}

        cmp = self.scope_comparison
        return {
            "title": self.title,
            "model": self.model,
            "isl": self.isl,
            "osl": self.osl,
            "headline": self.plain["headline"],
            "headline_detail": self.plain["clean"],
            "scope_headline": self.plain["scope_headline"],
            "envelope_text": self.plain["envelope"],
            "precision_summary": self.summary,
            "clean_pairs": {compare.pair_label(r, PAIR_BY): {
                "ratio_median": r["ratio_median"], "ratio_min": r["ratio_min"], "ratio_max": r["ratio_max"],
                **{f"ratio_{s}_{k}": r[f"ratio_{s}_{k}"] for s in ("median", "min", "max")
                   for k in ("lo", "hi", "verdict")},
                "bytes_ratio": r["bytes_ratio"], "math_ratio": r["math_ratio"],
                "beyond_bytes": bool(r["beyond_bytes"]), "beyond_roofline": bool(r["beyond_roofline"]),
                "confounders": r["confounders"]} for _, r in self.clean.iterrows()},
            "bytes_ratios": self.bytes_ratios,
            "denominator": self.denominator,
            "targets": list(self.targets),
            "bar_targets": list(self.bar_targets),
            "scope_bar_targets": list(self.scope_targets),
            "precision_envelope": pairs(self.envelope, ENVELOPE_BY),
            "matched_pairs": pairs(self.matched, PAIR_BY),
            "n_matched_pairs": len(self.matched),
            "n_matched_with_overlap": int(self.matched["ratio_median"].notna().sum()) if len(self.matched) else 0,
            "h200_title": self.plain["steps_title"],
            "h200_n_batches": len(self.steps),
            "h200_n_fp8_slower": int((self.steps["ratio"] < 1).sum()) if len(self.steps) else 0,
            "h200_fp8_over_bf16": {compare.pair_label(r, ["model", "framework", "context_len"]):
                                   {k: r[k] for k in ["ratio_min", "ratio_median", "ratio_max", "n_batches"]}
                                   for _, r in self.step_summary.iterrows()},
            "scope": [{k: r[k] for k in ["gpu_family", "precision", "target_tok_s_per_user", "reference", "hardware",
                                         "scope", "n_gpus", "reference_n_gpus", "reference_tok_s_per_gpu",
                                         "tok_s_per_gpu", "reference_over_scope", "status", "confounders",
                                         "clean"]}
                      for _, r in cmp.iterrows()],
            "scope_prose": self.plain["scope"],
            "single_gpu_measured": bool(self.scope_capacity.loc[self.scope_capacity["scope"] == "single-gpu",
                                                                "status"].eq("measured").any()),
        }


def _sentences(page: PrecisionScopePage, e: Esc) -> dict:
    return {
        "headline": precision_headline(page.summary, page.clean, model=page.model, isl=page.isl, osl=page.osl,
                                       denominator_text=page.denominator_text, e=e),
        "clean": clean_pairs_text(page.clean, e=e),
        "scope_headline": scope_headline(page.scope_comparison, e=e),
        "envelope": envelope_text(page.summary),
        "matched": matched_text(page.matched, page.clean, e=e),
        "steps_title": steps_title(page.steps),
        "steps": steps_text(page.step_summary, e=e),
        "scope": scope_text(page.scope_comparison, page.scope_capacity, e=e),
        "denominator": denominator_words(page.denominator_effect, denominator=page.denominator),
    }


def rows_read(points: pd.DataFrame, *, model: str | None, isl: float | None, osl: float | None,
              source_format: str | None) -> pd.DataFrame:
    """The rows this page reads: the serving rows of one model and length pair, and the H200 step sweep (the
    report runner hashes the same rows for the page's cache key)."""
    serving = points.index.isin(fr.select(points, model=model, isl=isl, osl=osl, source_format=source_format).index)
    return points[serving | (points["format"] == compare.STEP_FORMAT).to_numpy()]


def build(points: pd.DataFrame, *, model: str = "DeepSeek-R1-0528", isl: float = 1024, osl: float = 1024,
          targets: Sequence[float] = (50, 100, 200), denominator: str = "all",
          source_format: str | None = "inferencex-api", min_measured_share: float = 0.5,
          step_points: pd.DataFrame | None = None) -> PrecisionScopePage:
    """The page for one model and length pair of ``points`` (serving rows of ``source_format``); the H200 step
    sweep is read from ``step_points`` (default: all of ``points``)."""
    targets = list(targets)
    points = rows_read(points, model=model, isl=isl, osl=osl, source_format=source_format)
    sel = fr.select(points, model=model, isl=isl, osl=osl, source_format=source_format)
    if sel.empty:
        raise ValueError(f"no points for {model} isl={isl} osl={osl} format={source_format}")
    _, fronts, table = fr.report_tables(sel, targets=targets, denominator=denominator)
    envelope = compare.with_bytes_ratio(compare.precision_pairs(sel, match=compare.ENVELOPE_MATCH, targets=targets,
                                                                denominator=denominator))
    matched = compare.with_bytes_ratio(compare.precision_pairs(sel, targets=targets, denominator=denominator))
    clean = compare.clean_pairs(matched)
    summary = compare.precision_summary(envelope, matched)
    curves = compare.ratio_curves(sel, clean, denominator=denominator)
    measured = compare.measured_levels(sel, clean, denominator=denominator)
    bytes_ratios = {compare.pair_label(r, PAIR_BY): r["bytes_ratio"] for _, r in clean.iterrows()}

    cap = fr.capacity_long(table.assign(label=table["hardware"] + " · " + table["scope"]), targets=targets,
                           by=["hardware", "precision", "scope", "label"]) if len(table) else pd.DataFrame()
    if len(cap):
        cap = cap[cap.groupby("label")["precision"].transform("nunique") > 1]
        cap = cap.assign(setup=_bar_setups(cap, fronts))  # the bars pool engines and spec decoding: each says its own
    bar_targets, bar_left_out = compare.plotted_targets(cap, targets=targets, min_share=min_measured_share)
    bar_note = compare_words.left_out_note(bar_left_out)

    steps = compare.step_precision_pairs(points if step_points is None else step_points)
    step_summary = compare.summarize_step_pairs(steps) if len(steps) else pd.DataFrame()

    scope_cap = compare.scope_capacity(sel, targets=targets, denominator=denominator)
    scope_cmp = compare.scope_comparison(scope_cap)
    fams = compare.scope_bars_table(scope_cap, families=SCOPE_FAMILIES)
    scope_targets, scope_left_out = compare.plotted_targets(fams, targets=targets, min_share=min_measured_share)
    scope_note = compare_words.left_out_note(scope_left_out)
    fams, empty = compare.drop_unmeasured(fams, x="where", targets=scope_targets)
    if empty:
        levels = " or ".join(f"{t:g}" for t in scope_targets)
        scope_note = (scope_note + " " if scope_note else "") + (
            f"Not drawn: {', '.join(text.esc(g) for g in empty)}, measured at none of {levels} tok/s/user (see the table).")

    effect = compare.denominator_effect(fronts)
    effect = effect[effect["n_disaggregated"] > 0]

    page = PrecisionScopePage(
        model=model, isl=float(isl), osl=float(osl), targets=targets, denominator=denominator,
        denominator_text=fr.DENOMINATOR_TEXT[denominator],
        title=f"FP4 vs FP8 and node vs rack: {model} {isl:g}/{osl:g}",
        summary=summary, envelope=envelope, matched=matched, clean=clean, clean_curves=curves,
        clean_measured=measured,
        bytes_ratios=bytes_ratios, envelope_bars=cap, bar_targets=bar_targets, bar_note=bar_note, steps=steps,
        step_summary=step_summary, scope_capacity=scope_cap, scope_comparison=scope_cmp, scope_bars=fams,
        scope_targets=scope_targets, scope_note=scope_note, denominator_effect=effect)
    page.md = _sentences(page, text.esc)
    page.plain = _sentences(page, text.clean)
    return page


def _bar_setups(cap: pd.DataFrame, fronts: pd.DataFrame) -> list[str]:
    """Each envelope bar's serving setup (:func:`analysis.compare.setup_tag`) from the frontier points its reading
    comes from ('' where the frontier table lacks the group)."""
    keys = [k for k in ("hardware", "precision", "scope") if k in fronts.columns]
    groups = {k if isinstance(k, tuple) else (k,): g for k, g in fronts.groupby(keys, sort=False)} if len(keys) == 3 \
        else {}
    out = []
    for r in cap.to_dict("records"):
        front = groups.get((r["hardware"], r["precision"], r["scope"]))
        reading = r.get("reading") or ""
        out.append("" if front is None else compare.setup_tag(
            compare.reading_settings(front, r["target_tok_s_per_user"], reading)))
    return out


def load(points_path=None, **kwargs) -> PrecisionScopePage:
    """:func:`build` on the points table at ``points_path`` (default ``data/processed/points.parquet``)."""
    return build(data.load_points(points_path), **kwargs)
