"""`make bench`: ingest, scale and suite figures in one run, each section's table, then every target side by side.

    .venv/bin/python bench/run.py            # the full bench (about 7.5 minutes on 2 idle cores)
    .venv/bin/python bench/run.py --quick    # smaller sizes and two notebooks, to try it (about 1.5 minutes)

Sections (each is also a script of its own in bench/): ``ingest_speed.py`` (a ~200 MB AIPerf JSONL read by
perfclaims, pandas, msgspec and polars), ``scale.py`` (fit on 1,000 and 10,000 synthetic groups, frontier on
100,000 points), ``suite_speed.py`` (``perfclaims report`` cold, warm, after one raw file changed, one by one and
with ``--jobs 1``; ``perfclaims claim C00``; ``perfclaims --help``), ``perfmodel_speed.py`` (the performance
model's calibration, bootstrap and leave-one-group-out validation on the shipped points), ``tests_speed.py``
(``make test`` beside the test suite of an earlier commit; not with ``--quick``). Exit code 1 if any target is
missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIZES = {
    "full": {"size_mb": 200.0, "groups": [1000, 10000], "points": 100_000, "budget_s": 25.0, "only": None},
    "quick": {"size_mb": 20.0, "groups": [100, 1000], "points": 10_000, "budget_s": 6.0,
              "only": ["01-ingest", "20-frontier"]},
}


def _section(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 100 - len(title)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and two notebooks, to try the bench")
    parser.add_argument("--skip", default="", help="comma-separated sections to leave out: ingest, scale, suite, "
                                                  "perfmodel, tests (tests never run with --quick)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    size = SIZES["quick" if args.quick else "full"]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    started = time.perf_counter()
    rows: list[tuple[str, str, str, bool | None]] = []  # what, value, target, ok (None: no target)
    figures: dict = {"sizes": size}

    if "ingest" not in skip:
        ingest_speed = _load("ingest_speed")
        _section(f"ingest: AIPerf JSONL, about {size['size_mb']:g} MB")
        with tempfile.TemporaryDirectory(prefix="perfclaims-bench-") as tmp:
            path = ingest_speed.build_input(ingest_speed.SAMPLE, size["size_mb"], Path(tmp))
            size_mb = path.stat().st_size / 1e6
            results = ingest_speed.measure(path, None)
        v = ingest_speed.print_table(results, size_mb, ingest_speed.SAMPLE)
        figures["ingest"] = {"results": results, "verdict": v}
        ours = results["perfclaims"]
        rows.append(("ingest MB/s, perfclaims default", f"{ours['mb_s']:.0f}", "", None))
        rows.append(("ingest speed / pandas.read_json", f"{v['vs_pandas']:.2f}x", ">= 5x", v["speed_ok"]))
        if v["fastest_rival"]:
            rows.append((f"ingest speed / fastest ({v['fastest_rival']})", f"{v['vs_fastest_rival']:.2f}x",
                         ">= 1x", v["rival_ok"]))
        if v["vs_polars_no_gaps"] == v["vs_polars_no_gaps"]:
            rows.append(("ingest speed / polars without gaps (no ITL)", f"{v['vs_polars_no_gaps']:.2f}x", "", None))
        rows.append(("ingest peak memory / file size", f"{v['peak_over_size']:.2f}x", "<= 1.5x", v["memory_ok"]))

    if "scale" not in skip:
        scale = _load("scale")
        _section(f"scale: fit on {', '.join(f'{g:,}' for g in size['groups'])} groups, frontier on "
                 f"{size['points']:,} points")
        res = scale.run(size["groups"], size["points"], size["budget_s"])
        scale.print_report(res)
        figures["scale"] = res
        for r in res["fit"]:
            kind = " (projected)" if r["projected"] else ""
            target = f"<= {scale.FIT_TARGET_S:g} s" if r["groups"] >= 10_000 else ""
            rows.append((f"fit {r['groups']:,} groups, n_boot={res['n_boot']}",
                         f"{r['seconds']:.1f} s{kind}, {r['per_group_s'] * 1000:.1f} ms/group", target,
                         r["seconds"] <= scale.FIT_TARGET_S if target else None))
        f = res["frontier"]
        if f:
            rows.append((f"frontier {f['points']:,} points", f"{f['seconds']:.1f} s"
                         f"{' (projected)' if f['projected'] else ''}, {f['per_point_us']:.1f} us/point", "", None))

    if "suite" not in skip:
        suite = _load("suite_speed")
        _section("suite: perfclaims report cold / warm / touched / --jobs 1; claim C00; --help"
                 + (f" (--only {','.join(size['only'])})" if size["only"] else ""))
        res = suite.run(size["only"], suite.DEFAULT_TOUCH)
        v = suite.print_report(res)
        figures["suite"] = {"results": res, "verdict": v}
        whole = "" if size["only"] else " (whole suite)"
        rows.append((f"report cold{whole}", f"{v['cold_s']:.1f} s", f"<= {suite.COLD_TARGET_S:g} s",
                     v["cold_ok"] if not size["only"] else None))
        rows.append(("report cold / one by one (own kernel each, --jobs 1)", f"{v['ratio']:.2f}",
                     f"<= {suite.RATIO_TARGET:g}", v["ratio_ok"] if not size["only"] else None))
        rows.append(("report cold / --jobs 1 (same executors)", f"{v['ratio_jobs1']:.2f}", "", None))
        rows.append(("report warm (nothing changed)", f"{v['warm_s']:.1f} s", f"<= {suite.WARM_TARGET_S:g} s",
                     v["warm_ok"]))
        if "touched" in res["runs"]:
            t = res["runs"]["touched"]
            rerun = sum(r["status"] in ("ok", "failed") for r in t["reports"])
            total = len(t["reports"])
            rows.append(("report after one raw file changed",
                         f"{t['seconds'] + res['runs']['touched-ingest']['seconds']:.1f} s, {rerun} of {total} "
                         "re-executed", "only dependents", v.get("touched_ok")))
        rows.append(("perfclaims claim C00", f"{v['claim_s']:.2f} s", f"<= {suite.CLAIM_TARGET_S:g} s",
                     v["claim_ok"]))
        rows.append(("perfclaims --help", f"{v['help_s']:.3f} s", f"<= {suite.HELP_TARGET_S:g} s", v["help_ok"]))

    if "perfmodel" not in skip:
        perfmodel = _load("perfmodel_speed")
        _section("perfmodel: calibration, bootstrap and leave-one-group-out validation on the shipped points")
        res = perfmodel.run()
        ok = perfmodel.print_report(res)
        figures["perfmodel"] = res
        rows.append((f"perfmodel fit + validation ({res['groups']} groups)", f"{res['total_wall_s']:.1f} s",
                     f"<= {perfmodel.TARGET_S:g} s", ok))

    if "tests" not in skip and not args.quick:
        tests = _load("tests_speed")
        _section(f"tests: make test beside the test suite of {tests.BASELINE} (before it shared a rendered suite)")
        res = tests.run(tests.BASELINE)
        v = tests.print_report(res)
        figures["tests"] = {"results": res, "verdict": v}
        rows.append((f"make test ({v['passed']} passed)", f"{v['test_s']:.1f} s", f"<= {tests.TARGET_S:g} s",
                     v["test_ok"]))
        rows.append((f"make test / test suite of {tests.BASELINE}", f"{v['ratio']:.2f}",
                     f"<= {tests.RATIO_TARGET:g}", v["ratio_ok"]))

    _section("summary: each target beside what this run measured")
    width = max((len(r[0]) for r in rows), default=10) + 2
    value_width = max((len(r[1]) for r in rows), default=10) + 2
    target_width = max((len(r[2]) for r in rows), default=8) + 2
    for what, value, target, ok in rows:
        mark = "" if ok is None else ("ok" if ok else "MISSED")
        print(f"{what:<{width}}{value:<{value_width}}{target:<{target_width}}{mark}")
    total = time.perf_counter() - started
    print(f"bench wall time {total:.0f} s{' (--quick)' if args.quick else ''}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    return 1 if any(ok is False for *_, ok in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
