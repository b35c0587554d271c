"""The ``perfclaims`` command line (stable: tests, cron jobs and users call it).

Each subcommand parses its arguments here and calls one function in the module that owns the work;
errors a user can fix are printed as one line on stderr with exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis import config
from analysis.lazy_imports import defer_iri_grammar


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _cols(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="perfclaims", description=__doc__.splitlines()[0])
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

    s = sub.add_parser("fit", help="fit the batch model per group")
    s.add_argument("points", nargs="?", type=Path, default=config.POINTS_FILE)
    s.add_argument("--by", type=_cols, help="grouping columns (default: the configuration columns)")
    s.add_argument("--out", type=Path, help="write fits CSV here (default: stdout)")
    default_logs = config.RAW_DATA_DIR / "h200"
    s.add_argument("--step-logs", type=Path, default=default_logs if default_logs.exists() else None,
                   help="step-timing logs giving per-sequence physical floors (default: data/raw/h200; '' for none)")

    s = sub.add_parser("predict", help="predict step time and throughput from fitted groups")
    s.add_argument("fits", type=Path)
    s.add_argument("--batch", type=float, required=True)
    s.add_argument("--context", type=float)

    s = sub.add_parser("frontier", help="tok/s/GPU at target tok/s/user per group, and the single-user end")
    s.add_argument("points", nargs="?", type=Path, default=config.POINTS_FILE)
    s.add_argument("--at", type=_floats, default=[50.0, 100.0, 200.0])
    s.add_argument("--by", type=_cols)
    s.add_argument("--denominator", choices=["all", "decode"], default="all")

    s = sub.add_parser("sol", help="speed of light for a model on hardware at a precision")
    s.add_argument("--model")
    s.add_argument("--hardware")
    s.add_argument("--precision")
    s.add_argument("--gpus", type=int, default=1)
    s.add_argument("--batch", type=int, default=1)
    s.add_argument("--context", type=int, default=1024)
    s.add_argument("--tokens-per-step", type=float, default=1.0)
    s.add_argument("--list", action="store_true", help="list known model and hardware names")

    s = sub.add_parser("claim", help="render a claim card (HTML)")
    s.add_argument("claim", help="a claim id from data/claims/ or a claim file (YAML or CSV)")
    s.add_argument("--out", type=Path, default=config.REPORTS_DIR / "claims")

    s = sub.add_parser("report", help="run the notebook suite and write HTML reports plus index.html")
    s.add_argument("--config", type=Path, default=config.SUITE_FILE)
    s.add_argument("--out", type=Path, default=config.REPORTS_DIR)
    s.add_argument("--only", type=_cols, help="run only these notebooks (names from the suite file)")
    return p


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
        from analysis import scaling

        step_logs = args.step_logs if args.step_logs and str(args.step_logs) not in ("", ".") else None
        return scaling.cli_fit(args.points, by=args.by, out=args.out, step_logs=step_logs)
    if args.command == "predict":
        from analysis import scaling

        return scaling.cli_predict(args.fits, batch=args.batch, context=args.context)
    if args.command == "frontier":
        from analysis import frontier

        return frontier.cli_frontier(args.points, at=args.at, by=args.by, denominator=args.denominator)
    if args.command == "sol":
        from analysis import roofline

        return roofline.cli_sol(
            model=args.model, hardware=args.hardware, precision=args.precision, gpus=args.gpus,
            batch=args.batch, context=args.context, tokens_per_step=args.tokens_per_step, list_names=args.list,
        )
    if args.command == "claim":
        from analysis import claims

        return claims.cli_claim(args.claim, out=args.out)
    if args.command == "report":
        from analysis import report

        return report.run_suite(args.config, out=args.out, only=args.only)
    raise ValueError(f"unknown command {args.command}")


def _ingest(args) -> int:
    from analysis.ingest import ingest, write_outputs

    result = ingest(args.paths, args.manifest, fmt=args.fmt, progress=False if args.quiet else None,
                    itl_gaps=args.itl_gaps)
    paths = write_outputs(result, args.out, partition=args.partition)
    summary = result.summary()
    print(summary.to_string(index=False))
    print(f"\n{len(result.points)} points, {len(result.requests)} requests, "
          f"{len(result.quarantine)} quarantined -> {paths['points'].parent}")
    if len(result.quarantine):
        print(f"quarantine reasons: see {paths['quarantine']}")
    return 0


def _formats() -> int:
    from analysis.ingest import formats

    rows = [(f.name, f.tool, f.detected_by, f.example) for f in formats()]
    widths = [max(len(r[i]) for r in rows + [("format", "tool", "detected by", "example")]) for i in range(4)]
    widths[2] = min(widths[2], 70)
    header = ("format", "tool", "detected by", "example")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
