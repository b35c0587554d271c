"""What ``perfclaims frontier``, ``perfclaims sol``, ``perfclaims model`` and ``perfclaims goodput`` print: the command
line's output, kept out of the domain modules (``analysis.frontier``, ``analysis.roofline``, ``analysis.perfmodel``,
``analysis.goodput``), which compute and never print."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

from analysis import cost, data, specs
from analysis import frontier as fr
from analysis import roofline as rl
from analysis.text import csv_safe


def cli_frontier(points_path, *, at: Sequence[float], by: Sequence[str] | None, denominator: str,
                 ttft_max_ms: float | None = None, metric: str = fr.DEFAULT_METRIC,
                 prices_path: str | Path | None = None, price: Sequence[str] = ()) -> int:
    """``perfclaims frontier``: per group ``<metric>_at_<level>`` at each ``at`` tok/s/user, as CSV. For
    tok/s/GPU also the fastest per-user point (its concurrency, GPU count and median TTFT); for $/M tokens the
    price each row used, and on stderr the hardware left out for want of a price; for energy ``power_scope``
    (GPU power only) and on stderr the groups left out for want of measured power."""
    points = data.load_points(points_path)
    by = fr._check_by(points, fr.DEFAULT_BY if not by else by)
    prices = None
    if metric in cost.COST_METRICS:
        prices = cost.load_prices(extra=prices_path, overrides=cost.parse_price_args(price))
    fronts = fr.metric_frontier(points, metric=metric, by=by, denominator=denominator, ttft_max_ms=ttft_max_ms,
                             prices=prices)
    notes = []
    if metric in cost.COST_METRICS:
        missing = cost.missing_prices(prices, fr.usable(points, denominator=denominator)["hardware"])
        if missing:
            notes.append(cost.no_price_message(missing))
    elif metric in cost.ENERGY_METRICS:
        left = fr.no_metric_groups(points, fronts, metric=metric, by=by, denominator=denominator,
                                ttft_max_ms=ttft_max_ms)
        if len(left):
            notes.append(f"{len(left)} group(s) have no measured GPU power and no energy figure")
    for note in notes:
        print(f"perfclaims frontier: {note}", file=sys.stderr)
    if fronts.empty:
        print(f"perfclaims frontier: {points_path}: no fr.usable points (need tok/s/user and {metric})",
              file=sys.stderr)
        return 1
    table = fr.metric_table(fronts, targets=at, metric=metric, by=by)
    cols = by + ["gpu_denominator", "n_points", "n_frontier", "n_gpus_min", "n_gpus_max", "tok_s_per_user_min",
                 "tok_s_per_user_max"]
    if metric == fr.DEFAULT_METRIC:
        cols += [fr.target_column(t) for t in at] + fr.CLI_END_COLUMNS
        # what each reading rests on: the acceptance of its points (measured, forced, not stated) and its sources
        cols += [fr.acceptance_column(t) for t in at] + ["source_kinds"]
    else:
        cols += [fr.metric_column(metric, t) for t in at]
        cols += fr.PRICE_COLUMNS if metric in cost.COST_METRICS else ["power_scope"]
    text = csv_safe(table[cols]).to_csv(index=False, float_format="%.6g")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `perfclaims frontier | head` is normal use, not an error
        pass
    return 0


def cli_goodput(table_path, *, slo: str, as_json: bool = False, capacity: float | None = None,
                denominator: str = "all", model: str | None = None) -> int:
    """``perfclaims goodput``: per point the share of requests meeting every SLO term and goodput in req/s, output
    tok/s and output tok/s per GPU (CSV, or ``{"points": [...]}`` JSON); with ``capacity`` also the largest measured
    concurrency per configuration whose share stays at or above it. The definitions go to stderr with the CSV."""
    import json

    from analysis import goodput as gp
    from analysis import latency_words

    terms = gp.parse_slo(slo)
    if capacity is not None and not 0 < capacity <= 1:
        raise ValueError(f"--capacity {capacity:g}: a share between 0 and 1")
    points, requests = data.load_points_and_requests(table_path)
    if model:
        points = points[points["model"] == model]
    table = gp.goodput(points, requests, terms, denominator=denominator)
    cap = gp.capacity(points, table, level=capacity) if capacity is not None else None
    judged = table["basis"] != "none"
    if (~judged).any():
        print(f"perfclaims goodput: {int((~judged).sum())} point(s) left out: "
              f"{latency_words.BASIS_WORDS['none']}", file=sys.stderr)
    table = table[judged]
    if as_json:
        doc = gp.as_json(table)
        if cap is not None:
            doc["capacity"] = json.loads(cap.drop(columns="group").to_json(orient="records"))
            doc["capacity_share"] = capacity
        text = json.dumps(doc, indent=2) + "\n"
    else:
        for basis in ("requests", "summary-lower-bound"):
            if (table["basis"] == basis).any():
                print(f"perfclaims goodput: {basis}: {latency_words.BASIS_WORDS[basis]}", file=sys.stderr)
        cols = [c for c in gp.COLUMNS if c != "point"]
        text = csv_safe(table[cols]).to_csv(index=False, float_format="%.6g")
        if cap is not None:
            text += "\n" + csv_safe(cap.drop(columns="group")).to_csv(index=False, float_format="%.6g")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0 if len(table) else 1


def cli_sol(*, model: str | None, hardware: str | None, precision: str | None, gpus: int = 1, batch: int = 1,
            context: int = 1024, tokens_per_step: float = 1.0, list_names: bool = False) -> int:
    """Print bytes, FLOPs, bound step_ms, tok/s/user and tok/s/GPU (datasheet and achievable); 0 on success."""
    if list_names:
        names = specs.known_names()
        print("models:")
        for n in names["models"]:
            print(f"  {n}")
        print("hardware:")
        for n in names["hardware"]:
            print(f"  {n}")
        print("precisions: " + ", ".join(rl.BITS_PER_WEIGHT) + ", native; per component: e.g. "
              "'fp4,attention=bf16,router=bf16,kv=fp8'")
        return 0
    missing = [f"--{n}" for n, v in (("model", model), ("hardware", hardware)) if not v]
    if missing:
        print(f"perfclaims sol: {' and '.join(missing)} required (or --list for the known names)", file=sys.stderr)
        return 2
    try:
        lines = [rl.speed_of_light(model, hardware, precision or "native", gpus=gpus, batch=batch, context=context,
                                tokens_per_step=tokens_per_step, ceiling=c) for c in ("datasheet", "achievable")]
    except (KeyError, ValueError) as err:
        print(f"perfclaims sol: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    ds, ac = lines
    print(f"model              {ds.model}")
    print(f"hardware           {ds.hardware} x {ds.gpus} GPU{'s' if ds.gpus > 1 else ''}")
    print(f"precision          {ds.precision}")
    print(f"batch              {ds.batch} sequences at context {ds.context} tokens, "
          f"tokens_per_step {ds.tokens_per_step:g}")
    print(f"weight_bytes_gb    {ds.weight_bytes / 1e9:,.2f}")
    print(f"kv_bytes_gb        {ds.kv_bytes / 1e9:,.3f}" + (f"  ({ds.kv_replicas:g} replicas)"
                                                            if ds.kv_replicas > 1 else ""))
    print(f"bytes_per_step_gb  {ds.bytes_per_step / 1e9:,.2f}")
    print(f"flops_per_step     {ds.flops_per_step:.4g}")
    if ds.experts_touched_per_layer:
        print(f"experts_per_layer  {ds.experts_touched_per_layer:.1f}")
    print(f"hbm                {'fits' if ds.fits else 'DOES NOT FIT'}: needs {ds.hbm_needed_gb:,.1f} GB "
          f"of {ds.hbm_available_gb:,.0f} GB")
    print()
    print(f"{'':19s}{'datasheet':>14s}{'achievable':>14s}")
    for label, attr in (("bandwidth_tb_s", "aggregate_bandwidth_tb_s"), ("step_ms", "step_ms"),
                        ("t_memory_ms", "t_memory_ms"), ("t_compute_ms", "t_compute_ms"),
                        ("tok_s_per_user", "tok_s_per_user"), ("tok_s_per_gpu", "tok_s_per_gpu"),
                        ("tok_s_total", "tok_s_total")):
        print(f"{label:19s}{_fmt(getattr(ds, attr)):>14s}{_fmt(getattr(ac, attr)):>14s}")
    print(f"{'bound':19s}{ds.bound:>14s}{ac.bound:>14s}")
    print()
    print(f"datasheet:  {ds.ceiling_source}")
    print(f"achievable: {ac.ceiling_source}")
    for note in ds.notes:
        print(f"note: {note}")
    return 0


def _fmt(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:,.{digits}g}" if abs(x) < 1e5 else f"{x:,.0f}"


def cli_model(*, config_path: Path | None, validate: bool, points_path: Path | None, concurrency=None,
              n_boot: int = 20, as_json: bool = False, min_concurrencies: int = 3) -> int:
    """``perfclaims model``: a configuration's predicted speeds (``--config``) or the leave-one-group-out
    validation (``--validate``), as a table or JSON; 0 on success, 2 (one line on stderr) when the input is wrong."""

    from analysis.perfmodel import configfile, run
    from analysis.perfmodel import step as st

    if bool(config_path) == bool(validate):
        print("perfclaims model: give exactly one of --config CONFIG or --validate", file=sys.stderr)
        return 2
    if config_path:
        dep = configfile.load(config_path)  # ValueError/KeyError: one line, exit 2 (analysis.cli.main)
    points = data.load_points(points_path)
    if points.empty:
        where = points_path or "the points table"
        raise ValueError(f"{where}: no points" + (" (a folder is read as raw logs; name a points table file to read "
                                                  "one)" if points_path and Path(points_path).is_dir() else ""))
    if validate:
        if min_concurrencies < 1:
            raise ValueError(f"--min-concurrencies must be >= 1, got {min_concurrencies}")
        rep = run.validation_report(points, min_concurrencies=min_concurrencies)
        if as_json:
            print(_strict_json(rep))
            return 0
        print(f"{'error tok/s/GPU':>16s}{'error tok/s/user':>17s}  points  group")
        for g in rep["groups"]:
            eg = g["error_tok_s_per_gpu"]
            print(f"{'' if eg is None else f'{eg:.1%}':>16s}{g['error_tok_s_per_user']:>17.1%}  "
                  f"{len(g['points']):>6d}  {g['group']}")
        print(f"median: {_pct(rep['median_error_tok_s_per_gpu'], 2)} tok/s/GPU, "  # 15.02% is not "15.0%" of a 15% target
              f"{_pct(rep['median_error_tok_s_per_user'], 2)} tok/s/user; p90: {_pct(rep['p90_error_tok_s_per_gpu'])} "
              f"tok/s/GPU, {_pct(rep['p90_error_tok_s_per_user'])} tok/s/user over {rep['n_groups']} groups with "
              f"at least {rep['min_concurrencies']} concurrencies")
        iu, ig = rep.get("median_interval_tok_s_per_user"), rep.get("median_interval_tok_s_per_gpu")
        if iu and ig:
            print(f"median over the groups resampled (90% bootstrap interval): {_pct(ig[0])}–{_pct(ig[1])} tok/s/GPU, "
                  f"{_pct(iu[0])}–{_pct(iu[1])} tok/s/user")
        print(f"p90 by nearest rank: {_pct(rep['p90_rank_error_tok_s_per_gpu'])} tok/s/GPU, "
              f"{_pct(rep['p90_rank_error_tok_s_per_user'])} tok/s/user ({rep['beyond_35_tok_s_per_gpu']} and "
              f"{rep['beyond_35_tok_s_per_user']} groups beyond 35%)")
        nd = rep["without_drift"]
        print(f"without the measured software drift ({nd['groups_with_drift']} groups from older dates at the newest "
              f"software): median {_pct(nd['median_error_tok_s_per_gpu'])} tok/s/GPU, "
              f"{_pct(nd['median_error_tok_s_per_user'])} tok/s/user; p90 {_pct(nd['p90_error_tok_s_per_gpu'])}, "
              f"{_pct(nd['p90_error_tok_s_per_user'])}")
        ins = rep["in_sample"]
        print(f"in-sample (every group in the calibration, its own included): median "
              f"{_pct(ins['median_error_tok_s_per_gpu'], 2)} tok/s/GPU, {_pct(ins['median_error_tok_s_per_user'], 2)} "
              f"tok/s/user; p90 {_pct(ins['p90_error_tok_s_per_gpu'])}, {_pct(ins['p90_error_tok_s_per_user'])}")
        print("groups per model (a left-out group's model and cell still calibrate through its other groups): "
              + ", ".join(f"{m} {n}" for m, n in rep["models"].items()))
        print(f"calibrated on {rep['training_rows']} newest points of {rep['training_groups']} groups; "
              f"{rep['unstated_rows']} points of {rep['unstated_groups']} groups state no ISL, OSL or TP and "
              f"{rep['layout_rows']} points of {rep['layout_groups']} groups record a layout that cannot hold their "
              f"decode GPUs: they calibrate nothing; {rep['rerun_rows']} dated re-runs enter as drift only")
        spread = [b for b in rep.get("rerun_spread") or [] if b["configuration_dates"]]
        if spread:
            print("the same configuration re-run, median step-time change by days from its newest run: " + "; ".join(
                f"{b['days_from']}–{b['days_to']} days {_pct(b['median_step_time_change'])} ({b['configuration_dates']})"
                if b["days_to"] < 100_000 else
                f"over {b['days_from'] - 1} days {_pct(b['median_step_time_change'])} ({b['configuration_dates']})"
                for b in spread))
        return 0
    rep = run.model_report(dep, points, concurrency=concurrency or run.DEFAULT_CONCURRENCY, n_boot=n_boot)
    if as_json:
        print(_strict_json(rep))
        return 0
    c, cal = rep["config"], rep["calibration"]
    print(f"{c['model']} on {c['n_gpus']} x {c['hardware']} ({c['workers']:g} worker(s) of {c['worker_gpus']} GPUs), "
          f"{c['recipe']}, {c['framework']}, ISL {c['isl']:g} / OSL {c['osl']:g}; tau {c['tau']:.2f} "
          f"({c['tau_source']})")
    print(f"calibration: {cal['level']}, {cal['bootstrap_draws']} bootstrap draws; "
          + ", ".join(f"{k} {round(v, 4):.3g}" for k, v in cal["efficiency"].items()  # 3e-27 prints as 0
                      if k != "unfused_quant" or c.get("quant_unfused"))  # it prices nothing a fused config runs
          + f"; decode duty {cal['decode_duty']:.2f} (the median share of time its level's fixed-length serving runs "
            "spent decoding, measured; tok/s/GPU scales with it)")
    print(f"{'concurrency':>11s}{'tok/s/user':>12s}{'interval':>18s}{'tok/s/GPU':>11s}{'interval':>20s}"
          f"{'step ms':>9s}{'overhead':>9s}{'memory':>8s}{'compute':>8s}{'collect.':>9s}  dominant")
    for r in rep["rows"]:
        t = r["terms"]
        print(f"{r['concurrency']:>11g}{r['tok_s_per_user']:>12,.1f}"
              f"{r['tok_s_per_user_lo']:>9,.0f}–{r['tok_s_per_user_hi']:<8,.0f}{r['tok_s_per_gpu']:>11,.1f}"
              f"{r['tok_s_per_gpu_lo']:>10,.0f}–{r['tok_s_per_gpu_hi']:<9,.0f}{r['step_ms']:>9.3f}"
              f"{t['overhead_ms']:>9.3f}{t['memory_ms']:>8.3f}{t['compute_ms']:>8.3f}{t['collectives_ms']:>9.3f}"
              f"  {r['dominant']}")
    band = cal.get("held_out_ratio") or {}
    if band.get("tok_s_per_user") or band.get("tok_s_per_gpu"):
        weighing = ", each group weighing the same" if band.get("weighting") == "group" else ""
        ranges = ", ".join(f"{band[k][0]:.2f}–{band[k][1]:.2f} per {name} ({band[f'points_{k}']} points"
                           + (f" of {band[f'groups_{k}']} groups" if band.get(f"groups_{k}") else "") + ")"
                           for k, name in (("tok_s_per_user", "user"), ("tok_s_per_gpu", "GPU")) if band.get(k))
        print(f"intervals: the widest of the calibration's bootstrap, the collectives' measured range and the model's "
              f"own error on the configurations its validation left out (perfclaims model --validate, groups with "
              f"three or more concurrencies: measured ÷ predicted {ranges}, {band['percentiles'][0]}th–"
              f"{band['percentiles'][1]}th percentile{weighing}); a deployment unlike those groups (attention data-parallel, "
              f"a model no group calibrates) can miss by more (--validate --min-concurrencies 1)")
        if cal.get("model_calibrating_groups") == 0:
            print(f"no group that calibrates the parameters runs {c['model']}: the band above is the error on "
                  "configurations of models the calibration has seen; this prediction prices the model's own bytes and "
                  "FLOPs at efficiencies fitted on other models, and can miss by more")
        if c.get("dp") and c["dp"] > 1:
            print("this config runs attention data-parallel (DP > 1): the validated groups include 3 such, and over "
                  "all groups those miss by more than the band above")
    else:
        print("intervals: the calibration's bootstrap and the collectives' measured range only, not the model's own "
              "error (no held-out group to measure it by)")
    first = rep["rows"][0] if rep["rows"] else None
    if first and first["terms"]["overhead_ms"] > 0.3 * first["step_ms"]:
        scale = cal["efficiency"].get("comm_scale", 1.0)
        head = (f"fixed cost: {first['terms']['overhead_ms']:.3f} of the {first['step_ms']:.3f} ms step at concurrency "
                f"{first['concurrency']:g}, calibrated on {cal['level']} runs; an engine that removed it entirely would "
                f"run {first['tok_s_per_user_without_overhead']:,.1f} tok/s/user there")
        if first["terms"]["collectives_ms"] > 0:
            print(head + f" with the collectives as calibrated ({scale:.3g} × their measured latency), "
                  f"{first['tok_s_per_user_without_overhead_measured_collectives']:,.1f} at their measured latency (at "
                  "one GPU count the fit cannot tell a per-layer fixed cost from per-layer collectives)")
        else:
            print(head + " (no collectives: one GPU, or one GPU's slice timed alone)")
    if st.speculates(c.get("spec_method")) and str(c["spec_method"]).lower() not in st.MTP_METHODS:
        print(f"drafting: not priced for {c['spec_method']} (the spec tables describe no such drafter); only MTP drafts "
              f"({', '.join(st.MTP_METHODS)}) pay their passes, and the calibrated tau is fitted net of MTP drafting")
    spread = cal.get("fixed_cost_spread") or {}
    if first and spread:
        parts = []
        for name, where in (("family", f"the engines measured on {cal['level'].split(' (')[0]}"),
                            ("all", "all engines measured (host-bound launches left out)")):
            if f"overhead_ms_per_layer_{name}" in spread:
                lo, hi = spread[f"overhead_ms_per_layer_{name}"]
                u = first["tok_s_per_user_fixed_cost_spread"][name]
                parts.append(f"{where} ({spread[f'cells_{name}']} cells) span {lo:.3f}–{hi:.3f} ms per layer: "
                             f"{u[0]:,.1f}–{u[1]:,.1f} tok/s/user at concurrency {first['concurrency']:g}")
        print(f"assumed fixed cost: no calibrating run of {c['framework']} on this hardware family, so its per-layer "
              f"fixed cost ({cal['efficiency']['overhead_ms_per_layer']:.3f} ms) is the pooled fit of other engines; "
              + "; ".join(parts))
    if c.get("parallelism_note"):
        print(f"note: {c['parallelism_note']}")
    for s in cal["collectives"]:
        print(f"collectives: {s}")
    pre = cal.get("prefill_share") or {}
    if pre and c.get("isl") and not c.get("disagg"):
        print(f"prefill: {pre['share']:.3f} of the datasheet FLOP rate, " + (
            f"measured from TTFT at {pre['measured_at']} (a longer prompt's extra TTFT, same configuration)"
            if pre.get("measured_at") else "an assumption: no aggregated run measured it"))
    drift = cal.get("software_drift") or {}
    if drift.get("date"):
        on = drift.get("measured_on")
        each = drift.get("step_time_factor_by_concurrency") or [drift["step_time_factor"]]
        factor = f"{min(each):.2f}" if f"{min(each):.2f}" == f"{max(each):.2f}" else \
            f"{each[0]:.2f} at the first concurrency to {each[-1]:.2f} at the last"
        print(f"software date {drift['date']}: " + (
            f"step time × {factor}, the median drift of {drift['configurations']} "
            f"configuration(s) of this hardware and framework re-run on {on} against their newest runs, at each "
            "concurrency"
            + ("" if on == drift["date"] else " (the last re-run date on or before it)") if drift["configurations"]
            else "no configuration of this hardware was re-run on or before it: the newest runs' software"))
    _print_measured(rep["measured"], c)
    return 0


def _print_measured(m: dict, c: dict) -> None:
    """The same model's measured points beside the prediction (``perfclaims model --config``)."""
    from analysis.perfmodel import words as pw
    from analysis.text import plain

    if not m["points"]:
        print(f"measured: no point of {c['model']} on this hardware family in the points table")
        return
    if c["n_gpus"] not in m["gpu_counts_measured"]:
        print(f"measured: no point of {c['model']} at {c['n_gpus']} GPUs; measured at "
              + ", ".join(f"{n} GPUs" for n in m["gpu_counts_measured"]) + " (below)")
    named = c["model"] if m.get("matched_by") in (None, "name") else \
        f"{m['matched_by']} (no point is named {c['model']}; the spec tables read these as the same model)"
    print(f"measured {named} points (each predicted at its own conditions, its group left out of the "
          "calibration):")
    print(f"{'GPUs':>5s}{'conc.':>7s}  {'spec (acceptance; τ predicted at)':<34s}{'tok/s/user':>11s}{'own pred.':>10s}"
          f"{'err':>7s}{'tok/s/GPU':>10s}{'own pred.':>10s}{'err':>7s}   this config / measured; differs in")
    for p in m["points"]:
        o = p["predicted_at_own_conditions"] or {}
        acc = p["acceptance_length"]
        used = f"; τ {o['tau']:.2f}" if o.get("tau") is not None and o["tau"] > 1 else ""
        spec = f"{p['spec_method']} ({'τ ' + format(acc, '.2f') if acc == acc else p['acceptance_source']}{used})"
        cp = p["config_prediction"]
        beside = (f"{cp['ratio_tok_s_per_user']:.2f}× per user; differs in {', '.join(p['differs_from_config']) or '–'}"
                  if cp else "")
        eg = o.get("error_tok_s_per_gpu")
        print(f"{plain(p['n_gpus']):>5s}{plain(p['concurrency']):>7s}  {spec:<34.34s}{p['tok_s_per_user']:>11,.1f}"
              f"{o.get('tok_s_per_user', float('nan')):>10,.1f}{o.get('error_tok_s_per_user', float('nan')):>+7.0%}"
              f"{p['tok_s_per_gpu']:>10,.1f}{o.get('tok_s_per_gpu', float('nan')):>10,.1f}"
              f"{'' if eg is None else format(eg, '+.0%'):>7s}   {beside}")
    assumed = [p for p in m["points"] if (p["predicted_at_own_conditions"] or {}).get("tau", 1.0) > 1
               and not p["acceptance_length"] == p["acceptance_length"]]
    if assumed:
        from analysis import golden_al

        taus = sorted({round(p["predicted_at_own_conditions"]["tau"], 2) for p in assumed})
        methods = sorted({str(p["spec_method"]) for p in assumed})
        g = golden_al.golden_table()
        rows = g[(g["model"].map(golden_al.model_key) == golden_al.model_key(c["model"]))
                 & g["method"].isin(methods)] if len(g) else g
        print(pw.assumed_tau_beside(taus, methods, c["model"], rows))
    unstated = [p for p in m["points"] if p.get("input_tokens_per_output_token") is not None
                and not (p["isl"] == p["isl"] and p["osl"] == p["osl"])]
    if unstated:
        from analysis.perfmodel import step as st

        ratios = [p["input_tokens_per_output_token"] for p in unstated]
        kinds = sorted({str(p.get("workload") or "unstated-length") for p in unstated})
        print(pw.unpriced_input(min(ratios), max(ratios), len(unstated), "/".join(kinds),
                                st.DEFAULTS["isl"], st.DEFAULTS["osl"]))
    if any("kv_dtype" in p["differs_from_config"] for p in m["points"]):
        print("kv_dtype: those runs' recipes set another KV-cache dtype than this config prices "
              "(data/specs/kv-cache-recipes.csv); set kv_dtype in the config to price theirs")
    if any("length_spread" in p["differs_from_config"] for p in m["points"]):
        from analysis.perfmodel import calibrate as cb

        print(f"length_spread: those runs drew each request's ISL and OSL uniformly between "
              f"{cb.INFERENCEX_RANGE_RATIO:g}× and 1× of the nominal (InferenceX's client; their own predictions price "
              "that), this config runs them as given: a longer mean context than the runs had")
    srcs = list(dict.fromkeys(str(p["source"]).split(" [")[0] for p in m["points"]))
    print("sources: " + "; ".join(srcs[:4]) + (f" and {len(srcs) - 4} more" if len(srcs) > 4 else ""))


def _pct(x, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}%}"


def _strict_json(doc) -> str:
    """``doc`` as strict JSON: NaN and infinities (no value) are null, so every JSON parser reads it."""
    import json

    from analysis.report.results import _jsonable

    return json.dumps(_jsonable(doc), indent=1, allow_nan=False, default=_json_default)


def _json_default(o):
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if np.isnan(o) else float(o)
    if isinstance(o, (np.bool_,)):
        return bool(o)
    return str(o)
