"""The ``perfclaims`` command line (stable: tests, cron jobs and users call it).

Each subcommand parses its arguments here and calls one function in the module that owns the work;
errors a user can fix are printed as one line on stderr with exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from analysis import config
from analysis.lazy_imports import defer_iri_grammar
from analysis.text import csv_safe


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


MAX_CONCURRENCY = 1_000_000  # users in flight: beyond any serving deployment the model prices
MAX_N_BOOT = 1000  # bootstrap calibrations: about 0.25 s each on two cores


def _concurrencies(text: str) -> list[float]:
    """``--concurrency``: whole numbers of users from 1 to :data:`MAX_CONCURRENCY`, comma-separated, none empty."""
    parts = text.split(",")
    out = []
    for part in parts:
        try:
            v = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {part.strip()!r} in "
                                             f"{text!r}") from None
        if not (math.isfinite(v) and v == int(v) and 1 <= v <= MAX_CONCURRENCY):
            raise argparse.ArgumentTypeError(f"a concurrency is a whole number of users from 1 to "
                                             f"{MAX_CONCURRENCY:,}, got {part.strip()!r}")
        out.append(v)
    return out


def _n_boot(text: str) -> int:
    """``--n-boot`` for ``perfclaims model``: 0 to :data:`MAX_N_BOOT`."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= v <= MAX_N_BOOT:
        raise argparse.ArgumentTypeError(f"from 0 to {MAX_N_BOOT} bootstrap calibrations, got {v}")
    return v


def _cols(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="perfclaims", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("ingest", help="read raw logs into points.parquet, requests.parquet, quarantine.csv")
    s.add_argument("paths", nargs="*", type=Path, default=[config.RAW_DATA_DIR])
    s.add_argument("--manifest", type=Path, help="manifest.yml (default: manifest.yml in the first folder)")
    s.add_argument("--out", type=Path, default=config.PROCESSED_DATA_DIR)
    s.add_argument("--format", dest="fmt", help="force one format (see `perfclaims formats`)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--itl-gaps", action="store_true",
                   help="parse every per-chunk gap of AIPerf JSONL for per-request ITL p50/p99 (slower)")
    s.add_argument("--partition", action="store_true",
                   help="also write points/ and requests/ as Parquet datasets partitioned by tool and date "
                        "(for DuckDB, Polars, Dask)")

    sub.add_parser("formats", help="list the formats perfclaims reads, how each is detected, an example file")

    s = sub.add_parser("fit", help="fit the batch model (step time against batch and context) per group")
    s.add_argument("points", nargs="?", type=Path, default=config.POINTS_FILE,
                   help="points table, parquet or CSV, or a folder of raw logs (default: %(default)s)")
    s.add_argument("--by", type=_cols, metavar="COLS",
                   help="comma-separated grouping columns (default: model, hardware, precision, framework, scope, "
                        "n_gpus, tp, ep, disagg, spec_decode, isl, osl)")
    s.add_argument("--out", type=Path, metavar="FITS_CSV",
                   help="write the fits CSV here and the bootstrap draws beside it as <name>.draws.parquet, which "
                        "`perfclaims predict` reads for its bands (default: CSV on stdout, no draws kept)")
    default_logs = config.RAW_DATA_DIR / "h200"
    s.add_argument("--step-logs", type=Path, default=default_logs if default_logs.exists() else None,
                   metavar="PATH",
                   help="step-timing logs (file or folder) whose model and calibration records give per-sequence "
                        "physical floors of t1/t2 (default: data/raw/h200; '' for none: coefficients bounded by 0)")
    s.add_argument("--n-boot", type=int, default=200, metavar="N",
                   help="bootstrap draws per group behind every interval (default: %(default)s; 0 for none)")
    s.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap (default: %(default)s)")
    s.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes fitting groups at once; the fits are the same for any N (default: every "
                        "core, and one process when there are fewer than 200 groups per worker)")

    s = sub.add_parser("predict", help="predict step time and throughput from fitted groups, with bootstrap bands")
    s.add_argument("fits", type=Path,
                   help="fits CSV written by `perfclaims fit --out`; its .draws.parquet sidecar gives the bands")
    s.add_argument("--batch", type=float, required=True, metavar="B",
                   help="batch size B: sequences decoded together (may be fractional, e.g. an achieved "
                        "concurrency); required")
    s.add_argument("--context", type=float, metavar="TOKENS",
                   help="mean context length L in tokens (default: each group's context at its largest measured "
                        "batch)")
    s.add_argument("--max-extrapolation", type=float, default=None, metavar="FACTOR",
                   help="refuse when a group would be predicted more than FACTOR times beyond its measured batches "
                        "(default: 4)")
    s.add_argument("--allow-extrapolation", action="store_true",
                   help="print every group however far beyond its measured batches (default: refuse beyond the "
                        "factor)")

    s = sub.add_parser("frontier", help="tok/s/GPU at target tok/s/user per group, and the single-user end")
    s.add_argument("points", nargs="?", type=Path, default=config.POINTS_FILE)
    s.add_argument("--at", type=_floats, default=[50.0, 100.0, 200.0])
    s.add_argument("--by", type=_cols)
    s.add_argument("--denominator", choices=["all", "decode"], default="all")
    s.add_argument("--metric", choices=["tok_s_per_gpu", "usd_per_mtok", "tok_s_per_mw", "j_per_output_token"],
                   default="tok_s_per_gpu", help="what to read at equal tok/s/user; $/M tokens and J/token: lower "
                   "is better (the lower envelope); energy is GPU power only")
    s.add_argument("--ttft-max-ms", type=float, help="only points with median TTFT at most this compete")
    s.add_argument("--prices", type=Path, help="your own price CSV (hardware,usd_per_gpu_hour,basis,source,date)")
    s.add_argument("--price", action="append", default=[], help='one price, e.g. "MI355X=2.10" ($/GPU-hour)')

    s = sub.add_parser("history", help="like-for-like results over dates per configuration, and the changes "
                                        "larger than the run-to-run noise")
    s.add_argument("points", nargs="?", type=Path, default=config.POINTS_FILE)
    s.add_argument("--json", action="store_true", help="print {\"series\": [...], \"changes\": [...]} as JSON")

    s = sub.add_parser("goodput", help="share of requests meeting every SLO, and goodput in req/s and output tok/s "
                                        "(per GPU too), per point; capacity at an SLO with --capacity")
    s.add_argument("table", nargs="?", type=Path, default=config.POINTS_FILE, metavar="POINTS|REQUESTS",
                   help="points or requests table (the other is read from the same folder), or a folder of raw logs "
                        "(default: %(default)s)")
    s.add_argument("--slo", required=True, help='terms joined by ";", e.g. "ttft_p99<=2s; tpot<=50ms" (metrics ttft, '
                   "tpot, itl, e2e; units ms or s; an optional _p50/_p90/_p99/_mean names the percentile it bounds)")
    s.add_argument("--json", action="store_true", help='print {"points": [...]} (and "capacity") as JSON')
    s.add_argument("--capacity", type=float, metavar="SHARE",
                   help="also the largest measured concurrency per configuration whose goodput share stays >= SHARE")
    s.add_argument("--denominator", choices=["all", "decode"], default="all",
                   help="GPUs that goodput tok/s/GPU divides by (default: %(default)s)")
    s.add_argument("--model", help="only points of this model")

    s = sub.add_parser("sol", help="speed of light for a model on hardware at a precision")
    s.add_argument("--model")
    s.add_argument("--hardware")
    s.add_argument("--precision")
    s.add_argument("--gpus", type=int, default=1)
    s.add_argument("--batch", type=int, default=1)
    s.add_argument("--context", type=int, default=1024)
    s.add_argument("--tokens-per-step", type=float, default=1.0)
    s.add_argument("--list", action="store_true", help="list known model and hardware names")

    s = sub.add_parser("model", help="predict tok/s/user and tok/s/GPU for a configuration nobody measured "
                                     "(--config), or validate the performance model group by group (--validate)")
    s.add_argument("--config", type=Path, metavar="CONFIG",
                   help="YAML or JSON file of points-table columns (model, hardware, n_gpus, tp, ep, dp, precision "
                        "or recipe: native, spec_method, acceptance_length, isl, osl, framework, disagg, "
                        "n_prefill_gpus, n_decode_gpus); missing keys take the defaults in the README")
    s.add_argument("--validate", action="store_true",
                   help="leave each configuration group out, calibrate on the rest, predict it; errors per group, "
                        "median and p90")
    s.add_argument("--points", type=Path, default=None,
                   help="calibrate on this points table (parquet or CSV, or a folder of raw logs; default: "
                        "data/processed/points.parquet)")
    s.add_argument("--concurrency", type=_concurrencies, default=None, metavar="C1,C2,...",
                   help="concurrencies to predict, whole numbers of users (default: 1,2,4,...,256)")
    s.add_argument("--n-boot", type=_n_boot, default=20, metavar="N",
                   help=f"bootstrap calibrations behind the intervals (default: %(default)s; 0 for none, at most "
                        f"{MAX_N_BOOT})")
    s.add_argument("--min-concurrencies", type=int, default=3, metavar="N",
                   help="--validate: score the groups measured at N or more concurrencies (default: %(default)s, "
                        "the issue's target set; 1 scores every group, about 7x the time)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")

    s = sub.add_parser("claim", help="a claim card: HTML (default), or its content as JSON (--json)")
    s.add_argument("claim", help="a claim id from data/claims/, or a claim file (YAML, or CSV with file.csv#ID)")
    s.add_argument("--points", type=Path, default=None,
                   help="points table (parquet or CSV) or a folder of raw logs (default: "
                        "data/processed/points.parquet)")
    s.add_argument("--json", action="store_true",
                   help="print the card's content as JSON on stdout (answers, comparisons, precision pairs) "
                        "instead of rendering HTML")
    s.add_argument("--out", type=Path, default=config.REPORTS_DIR / "claims",
                   help="folder for the HTML card <id>.html (default: reports/claims)")

    s = sub.add_parser("report", help="run the notebook suite and write HTML reports plus index.html",
                       description="Run the notebook suite into OUT/DATE/ and write the indexes. One run per OUT at "
                                   "a time (a lock naming its owner; a stale lock left by a killed run is broken, "
                                   "saying so); every file is written to a temporary sibling and renamed, so a "
                                   "failed or killed run (disk full included) leaves the previous outputs as they "
                                   "were; workers die with the run.")
    s.add_argument("--config", type=Path, default=config.SUITE_FILE)
    s.add_argument("--out", type=Path, default=config.REPORTS_DIR)
    s.add_argument("--only", type=_cols, help="run only these notebooks (names from the suite file)")
    s.add_argument("--date", help="the run's date, YYYY-MM-DD (default today, UTC): reports go to OUT/DATE/; "
                                  "a date after today is refused unless --allow-future-date")
    s.add_argument("--allow-future-date", action="store_true",
                   help="accept a --date after today; OUT/latest, the index and share still follow the run that "
                        "finished last")
    s.add_argument("--jobs", "-j", type=int, help="reports run at once (default: the number of cores)")
    s.add_argument("--force", action="store_true", help="re-execute reports whose inputs and code are unchanged")
    s.add_argument("--executor", choices=("papermill", "inprocess"),
                   help="run every report with this executor (papermill: each in its own kernel; default: as the "
                        "suite file says)")

    s = sub.add_parser("share", help="write the newest report run as one self-contained HTML file")
    s.add_argument("--reports", type=Path, default=config.REPORTS_DIR, help="the reports folder (default reports/)")
    s.add_argument("--out", type=Path, help="the file to write (default REPORTS/perfclaims-DATE.html)")
    return p


def _version() -> str:
    from analysis.report.fingerprint import version

    return version()


def run() -> int:
    """The ``perfclaims`` command (the console script): :func:`main`, then leave without the shutdown's sweep for
    reference cycles over every object the loaded libraries made (pandas, matplotlib, nbconvert, IPython): about
    0.3 s of each command, a sixth of ``perfclaims claim C00``. ``gc.freeze()`` puts those objects where no
    collection looks; the process ends right after, and atexit handlers, stream flushes and reference-counted
    clean-up still run. In-process callers (the tests) call :func:`main`, which leaves the collector as it was."""
    import gc

    rc = main()
    gc.freeze()
    return rc


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    defer_iri_grammar()  # papermill/nbconvert import jsonschema, which would build an unused IRI grammar (~1.4 s)
    try:
        return _dispatch(args)
    except BrokenPipeError:  # `perfclaims fit | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except (FileNotFoundError, ValueError, KeyError) as err:
        msg = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"perfclaims {args.command}: {msg}", file=sys.stderr)
        return 2


def _dispatch(args) -> int:
    if args.command == "ingest":
        return _ingest(args)
    if args.command == "formats":
        return _formats()
    if args.command == "fit":
        return _fit(args)
    if args.command == "predict":
        return _predict(args)
    if args.command == "frontier":
        from analysis import commands

        return commands.cli_frontier(args.points, at=args.at, by=args.by, denominator=args.denominator,
                                     ttft_max_ms=args.ttft_max_ms, metric=args.metric, prices_path=args.prices,
                                     price=args.price)
    if args.command == "history":
        return _history(args)
    if args.command == "goodput":
        from analysis import commands

        return commands.cli_goodput(args.table, slo=args.slo, as_json=args.json, capacity=args.capacity,
                                    denominator=args.denominator, model=args.model)
    if args.command == "sol":
        from analysis import commands

        return commands.cli_sol(
            model=args.model, hardware=args.hardware, precision=args.precision, gpus=args.gpus,
            batch=args.batch, context=args.context, tokens_per_step=args.tokens_per_step, list_names=args.list,
        )
    if args.command == "model":
        from analysis import commands

        return commands.cli_model(config_path=args.config, validate=args.validate, points_path=args.points,
                                  concurrency=args.concurrency, n_boot=args.n_boot, as_json=args.json,
                                  min_concurrencies=args.min_concurrencies)
    if args.command == "claim":
        return _claim(args)
    if args.command == "report":
        from analysis import report

        return report.run_suite(args.config, out=args.out, only=args.only, date=args.date, jobs=args.jobs,
                                force=args.force, executor=args.executor,
                                progress=lambda line: print(line, file=sys.stderr, flush=True),
                                allow_future_date=args.allow_future_date)
    if args.command == "share":
        from analysis.report import share

        path = share.write_share(args.reports, args.out)
        print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
        return 0
    raise ValueError(f"unknown command {args.command}")


def _ingest(args) -> int:
    from analysis.ingest import ingest, write_outputs

    problem = _unwritable_folder(args.out)
    if problem:  # before reading anything: a run that cannot be saved is not started
        print(f"perfclaims ingest: --out {args.out}: {problem}", file=sys.stderr)
        return 2
    result = ingest(args.paths, args.manifest, fmt=args.fmt, progress=False if args.quiet else None,
                    itl_gaps=args.itl_gaps)
    try:
        paths = write_outputs(result, args.out, partition=args.partition)
    except OSError as err:  # outputs are written all or none: the previous run's files are untouched
        print(f"perfclaims ingest: cannot write to {args.out}: {err.strerror or err}", file=sys.stderr)
        return 2
    summary = result.summary()
    print(summary.to_string(index=False))
    print(f"\n{len(result.points)} points, {len(result.requests)} requests, "
          f"{len(result.quarantine)} quarantined -> {paths['points'].parent}")
    if len(result.quarantine):
        print(f"quarantine reasons: see {paths['quarantine']}")
    skipped = int((result.files["status"] == "skipped").sum()) if len(result.files) else 0
    if skipped:
        print(f"{skipped} paths not read (hidden, symlinks, special files, manifests, docs): see {paths['files']}")
    return 0


def _history(args) -> int:
    import json

    from analysis import data, history, history_words

    try:
        points = data.load_points(args.points)
    except (FileNotFoundError, ValueError):
        raise
    except Exception as err:  # not a points table (e.g. a file of another kind)
        raise ValueError(f"{args.points}: not a points table ({type(err).__name__})") from None
    table = history.series(points)
    if table.empty:
        raise ValueError(f"{args.points}: no configuration measured on two or more dates")
    noise = history.noise(points)
    found = history.changes(points, noise_by=noise, table=table)
    if args.json:
        print(json.dumps(history.as_json(table, found)))
        return 0
    print(f"{table['group'].nunique()} configurations measured on two or more dates, {len(table)} values.")
    print("Noise threshold (from the data):")
    for item in noise.values():
        print(f"  {item.describe()}")
    print(f"{(found['kind'] == 'improvement').sum()} improvements, {(found['kind'] == 'regression').sum()} "
          "regressions (neighbouring dates; largest first)")
    within = int((found["verdict"] == "within-noise").sum())
    if within:
        print(f"{within} of them within noise: their 95% interval includes ×1 (verdict within-noise)")
    shown = found.assign(differs=found["differs"].map(lambda d: "; ".join(history_words.differences_text(d))),
                         ratio=found["ratio"].round(3), before=found["before"].round(1), after=found["after"].round(1),
                         ratio_lo=found["ratio_lo"].round(3), ratio_hi=found["ratio_hi"].round(3))
    cols = ["kind", "group", "metric", "date_before", "date_after", "before", "after", "ratio", "ratio_lo", "ratio_hi",
            "verdict", "differs"]
    print(shown[cols].to_string(index=False, max_colwidth=120))
    return 0


def _claim(args) -> int:
    """``perfclaims claim``: the card as JSON on stdout, or rendered to ``--out/<id>.html``; 2 on a user error."""
    import json

    from analysis import claims, data

    claim = claims.load_claim(args.claim)  # an unknown id, a bad file or an unsafe id: exit 2 via main()
    if args.json:
        card = claims.claim_card(claim, data.load_points(args.points))
        print(json.dumps(card.to_json(), indent=2, ensure_ascii=False, allow_nan=False))
        return 0
    try:
        html_path = _render_claim_card(args.claim, claim.id, out=args.out, points_path=args.points,
                                       title=f"Claim {claim.id}: {claim.model} on {claim.hardware}")
    except Exception as err:  # a failed notebook run: report it in one line, never a traceback
        name = getattr(err, "ename", type(err).__name__)
        print(f"perfclaims claim: the card notebook failed: {name}: {getattr(err, 'evalue', err)}", file=sys.stderr)
        return 1
    print(html_path)
    return 0


CLAIM_NOTEBOOK = "50-claim-card"


def _render_claim_card(claim: str, claim_id: str, *, out: Path, points_path: Path | None = None,
                       title: str = "") -> Path:
    """Render the claim-card notebook for ``claim`` to ``out/<id>.html`` in this process (no kernel start), through
    the suite's template: the same CSP, title, back link and footer as every report page."""
    from analysis import report

    out = Path(out)
    is_file = Path(str(claim).split("#")[0]).suffix.lower() in (".csv", ".yaml", ".yml")
    params = {"claim": claim_id, "claim_file": str(Path(str(claim)).resolve()) if is_file else None}
    if points_path:
        params["points_path"] = str(Path(points_path).resolve())
    html_path = out / f"{claim_id}.html"
    command = f"perfclaims claim {claim}" + (f" --points {points_path}" if points_path else "") + f" --out {out}"
    report.render_notebook(CLAIM_NOTEBOOK, params, html_path, title=title or f"Claim {claim_id}",
                           page={"command": command})
    return html_path
def _unwritable_folder(folder: Path) -> str | None:
    """Why ``folder`` cannot take the outputs (a file, under a file, not writable), or None."""
    folder = Path(folder)
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        return "is a file, not a folder" if existing == folder else f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return "folder is not writable" if existing == folder else f"cannot create it: {existing} is not writable"
    return None


def _fit(args) -> int:
    import warnings

    from analysis import data, scaling

    points = data.load_points(args.points)
    if args.by:
        missing = [c for c in args.by if c not in points.columns]
        if missing:
            raise ValueError(f"--by: {', '.join(missing)} not a column of {args.points}")
    if args.n_boot < 0:
        raise ValueError(f"--n-boot must be >= 0, got {args.n_boot}")
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    step_logs = args.step_logs if args.step_logs and str(args.step_logs) not in ("", ".") else None
    floors = scaling.floor_inputs(data.load_calibration(step_logs), points=points) if step_logs else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", scaling.ScalingWarning)
        result = scaling.fit_with_draws(points, by=args.by, floors=floors, n_boot=args.n_boot, seed=args.seed,
                                        jobs=args.jobs)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    fits = result.table
    if args.out:
        out, side = data.write_fits(fits, result.draws, args.out)
        n = int((fits["status"] == "fitted").sum()) if len(fits) else 0
        print(f"{n} of {len(fits)} groups fitted -> {out} (bootstrap draws: {side})")
    else:
        csv_safe(fits).to_csv(sys.stdout, index=False)
    return 0


def _predict(args) -> int:
    from analysis import data, scaling

    fits, draws = data.load_fits(args.fits)
    needed = {"group", "status", *scaling.COEFS, "batch_min", "batch_max", "context_ref"}
    missing = sorted(needed - set(fits.columns))
    if missing:
        raise ValueError(f"{args.fits}: not a fits file from `perfclaims fit` (missing {', '.join(missing)})")
    if not args.batch > 0:
        raise ValueError(f"--batch must be > 0, got {args.batch:g}")
    limit = scaling.MAX_EXTRAPOLATION if args.max_extrapolation is None else args.max_extrapolation
    if not limit >= 1:
        raise ValueError(f"--max-extrapolation must be >= 1, got {limit:g}")
    predicted = scaling.predict(fits, batch=args.batch, context=args.context,
                                draws=draws if draws is not None else {})
    predicted.insert(predicted.columns.get_loc("extrapolated") + 1, "extrapolation_factor",
                     scaling.extrapolation_factor(predicted, fits) if len(predicted) else [])
    report = scaling.extrapolation_report(fits, predicted)
    far = report[report["factor"] > limit]
    if len(far) and not args.allow_extrapolation:
        worst = far.loc[far["factor"].idxmax()]
        print(f"perfclaims predict: refusing: {len(far)} of {len(predicted)} group(s) would be predicted more than "
              f"{limit:g}x beyond their measured batches (worst {worst['factor']:.1f}x: {worst['group']}); pass "
              "--allow-extrapolation to print them anyway", file=sys.stderr)
        return 2
    if len(report):
        print(f"warning: {len(report)} of {len(predicted)} predicted groups are extrapolated "
              f"({len(far)} more than {limit:g}x beyond their measured batches):", file=sys.stderr)
        for r in report.sort_values("factor", ascending=False).itertuples():
            where = (f"batch {r.batch:g} vs measured {r.batch_min:g}-{r.batch_max:g} ({r.factor:.1f}x)"
                     if r.factor > 1 else f"context {r.context:g} outside the measured contexts")
            bound = f"; {r.at_bound}: throughput keeps rising with batch" if r.at_bound else ""
            print(f"  {r.group}: {where}{bound}", file=sys.stderr)
    if draws is None:
        print(f"warning: no {data.draws_path(args.fits).name} beside {args.fits}: predictions without bands",
              file=sys.stderr)
    csv_safe(predicted).to_csv(sys.stdout, index=False)
    return 0


def _formats() -> int:
    from analysis.ingest import formats
    from analysis.ingest.tested_on import tested_on

    rows = [(f.name, f.tool, f.detected_by, f.example, tested_on(f.name)) for f in formats()]
    header = ("format", "tool", "detected by", "example", "tested on")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(5)]
    widths[2] = min(widths[2], 70)
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(run())
