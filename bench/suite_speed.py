"""Wall time of the whole suite as a user runs it: cold, warm, after one raw file changed, and one report at a time.

Everything runs through the command line, in a throw-away copy of the project's inputs (``data/raw``,
``data/specs``, ``data/claims``, ``notebooks``) selected with ``PERFCLAIMS_ROOT``, so the checkout's
``data/processed`` and ``reports`` are never touched and "cold" really starts with nothing computed:

1. ``perfclaims ingest`` (stage: ingest)
2. ``perfclaims report --out OUT [--force]``: cold (default ``--jobs``)
3. the same again with nothing changed: warm
4. one value in one raw file changed (``--touch``), then ``perfclaims ingest`` and ``perfclaims report``: touched
5. ``perfclaims report --out OUT2 --jobs 1 --executor papermill --force``: one by one, each report in its own
   kernel, as the suite ran before it had a pool, in-process cards, views and a cache; the target ratio is
   cold / this run
6. ``perfclaims report --out OUT3 --jobs 1 --force``: one at a time with the suite's own executors (how much of
   the gain is the pool alone; printed, no target)
8. ``perfclaims claim C00`` (median of 3) and ``perfclaims --help`` (median of 5)

Flags the runner does not have yet (``--jobs``, ``--force``; read from ``perfclaims report --help``) are left
out: without ``--jobs`` the cold run already is the one-at-a-time run and is not repeated; without ``--force``
there is no cache, so the touched run would equal the cold one and is skipped. Per-report times are read from
the runner's progress lines (``name ... status (N s)``) when it prints them.

    .venv/bin/python bench/suite_speed.py [--only 01-ingest,20-frontier] [--touch RELATIVE_RAW_FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
COPIED = ("data/raw", "data/specs", "data/claims", "notebooks")
DEFAULT_TOUCH = ("inferencex-samples/agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_"
                 "MI355-gbt350-odcdh5-wbb3.json")
COLD_TARGET_S, WARM_TARGET_S, RATIO_TARGET = 60.0, 10.0, 0.4
CLAIM_TARGET_S, HELP_TARGET_S = 2.0, 0.5
# "[3/25] 20-frontier ... ok (12 s)": the status may come lines after the name (a kernel's stderr in between);
# other runners: any line naming a report, then a status word and "(N s)"
JOB_START = re.compile(r"^\s*\[\d+/\d+\]\s+(?P<name>[\w.-]+)", re.MULTILINE)
STATUS = re.compile(r"\b(?P<status>ok|failed|unchanged|cached|skipped|reused)\b[^\n]*?\((?P<seconds>\d+(?:\.\d+)?)\s*s\)")
PROGRESS = re.compile(r"^\s*(?:\[[^\]\n]*\]\s*)?(?P<name>[\w.-]+)\s[^\n]*?"
                      r"\b(?P<status>ok|failed|unchanged|cached|skipped|reused)\b[^\n]*?\((?P<seconds>\d+(?:\.\d+)?)\s*s\)",
                      re.MULTILINE)
NUMBER = re.compile(rb'("(?:median|mean)_ttft"\s*:\s*)(\d+\.\d+)')


def perfclaims() -> str:
    found = BIN / "perfclaims"
    return str(found) if found.exists() else shutil.which("perfclaims") or "perfclaims"


def make_root(folder: Path, source: Path = ROOT) -> Path:
    """A project root holding copies of the suite's inputs and nothing computed."""
    for rel in COPIED:
        if (source / rel).exists():
            shutil.copytree(source / rel, folder / rel)
    (folder / "data" / "processed").mkdir(parents=True, exist_ok=True)
    return folder


def change_one_value(path: Path) -> str:
    """Raise the first mean/median TTFT in ``path`` by 1% (a real change of one number); what changed, in words."""
    data = path.read_bytes()
    match = NUMBER.search(data)
    if match is None:
        path.write_bytes(data + b"\n")
        return f"{path.name}: newline appended (no TTFT value found)"
    old = float(match.group(2))
    new = repr(old * 1.01).encode()
    path.write_bytes(data[:match.start(2)] + new + data[match.end(2):])
    key = match.group(1).decode().split(":")[0].strip().strip('"')
    return f"{path.name}: {key} {old:.6g} -> {old * 1.01:.6g}"


def report_flags(env: dict) -> set[str]:
    out = subprocess.run([perfclaims(), "report", "--help"], capture_output=True, text=True, env=env)
    return {flag for flag in ("--jobs", "--force", "--only", "--executor") if flag in out.stdout}


def timed(cmd: list[str], env: dict) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=env["PERFCLAIMS_ROOT"])
    seconds = time.perf_counter() - started
    text = proc.stdout + "\n" + proc.stderr
    reports = progress(text)
    return {"cmd": cmd, "seconds": seconds, "rc": proc.returncode, "reports": reports,
            "tail": [ln for ln in text.strip().splitlines() if ln.strip()][-3:]}


UNCHANGED = re.compile(r"^\[(?P<name>[\w.-]+)\] unchanged since", re.MULTILINE)


def progress(text: str) -> list[dict]:
    """Each report's name, status and seconds from the runner's output (reports the cache kept: ``unchanged``)."""
    kept = [{"name": m["name"], "status": "unchanged", "seconds": 0.0} for m in UNCHANGED.finditer(text)]
    return kept + _executed(text)


def _executed(text: str) -> list[dict]:
    starts = list(JOB_START.finditer(text))
    if not starts:
        return [{"name": m["name"], "status": m["status"], "seconds": float(m["seconds"])}
                for m in PROGRESS.finditer(text)]
    out = []
    for start, nxt in zip(starts, starts[1:] + [None]):
        found = STATUS.search(text, start.end(), nxt.start() if nxt else len(text))
        if found:
            out.append({"name": start["name"], "status": found["status"], "seconds": float(found["seconds"])})
        else:
            out.append({"name": start["name"], "status": "unknown", "seconds": float("nan")})
    return out


def run(only: list[str] | None, touch: str, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="perfclaims-suite-") as tmp:
        root = make_root(Path(keep or tmp) / "root")
        env = {**os.environ, "PERFCLAIMS_ROOT": str(root), "MPLBACKEND": "Agg"}
        flags = report_flags(env)
        pc = perfclaims()
        only_args = ["--only", ",".join(only)] if only else []
        force = ["--force"] if "--force" in flags else []
        out = {"flags": sorted(flags), "only": only, "runs": {}}
        runs = out["runs"]
        runs["ingest"] = timed([pc, "ingest", "--quiet"], env)
        report = [pc, "report", "--out", str(root / "reports")] + only_args
        runs["cold"] = timed(report + force, env)
        runs["warm"] = timed(report, env)
        if force:
            out["touched_file"] = change_one_value(root / "data" / "raw" / touch)
            runs["touched-ingest"] = timed([pc, "ingest", "--quiet"], env)
            runs["touched"] = timed(report, env)
        if "--jobs" in flags and "--executor" in flags:
            runs["one-by-one"] = timed([pc, "report", "--out", str(root / "reports-0"), "--jobs", "1",
                                        "--executor", "papermill"] + force + only_args, env)
        if "--jobs" in flags:
            runs["cold-jobs-1"] = timed([pc, "report", "--out", str(root / "reports-1"), "--jobs", "1"]
                                        + force + only_args, env)
        if "touched" in runs and "cold-jobs-1" in runs:
            out["touched_check"] = skipped_match_forced(runs["touched"], root / "reports", root / "reports-1")
        claims = [timed([pc, "claim", "C00", "--out", str(root / "claims")], env) for _ in range(3)]
        runs["claim"] = {**claims[0], "seconds": statistics.median(c["seconds"] for c in claims),
                         "all": [c["seconds"] for c in claims]}
        helps = [timed([pc, "--help"], env)["seconds"] for _ in range(5)]
        runs["help"] = {"seconds": statistics.median(helps), "rc": 0, "reports": [], "all": helps}
    return out


def skipped_match_forced(touched: dict, kept_out: Path, forced_out: Path) -> dict:
    """Each report the touched run did not re-execute, against the forced run on the same changed data: are its
    saved numbers the same? (A report that depended on the changed value and was skipped would differ.)"""
    skipped = [r["name"] for r in touched["reports"] if r["status"] == "unchanged"]
    differ = []
    for name in skipped:
        kept = sorted(kept_out.glob(f"*/{name}.results.json"))[-1:]
        forced = sorted(forced_out.glob(f"*/{name}.results.json"))[-1:]
        if not kept or not forced or json.loads(kept[0].read_text()) != json.loads(forced[0].read_text()):
            differ.append(name)
    return {"skipped": skipped, "differ": differ}


def _slowest(reports: list[dict], n: int = 3) -> str:
    top = sorted(reports, key=lambda r: -r["seconds"])[:n]
    return ", ".join(f"{r['name']} {r['seconds']:.0f} s" for r in top)


def print_report(res: dict) -> dict:
    runs = res["runs"]
    print(f"suite: perfclaims report{' --only ' + ','.join(res['only']) if res['only'] else ''} in a fresh copy of "
          f"the inputs; runner flags found: {', '.join(res['flags']) or 'none'}")
    print(f"{'run':<16}{'wall s':>8}  {'reports (status: count)':<34}slowest reports")
    for name, r in runs.items():
        if name in ("claim", "help"):
            continue
        counts = {}
        for rep in r["reports"]:
            counts[rep["status"]] = counts.get(rep["status"], 0) + 1
        status = ", ".join(f"{k}: {v}" for k, v in counts.items()) or "-"
        flag = "" if r["rc"] == 0 else f"  exit {r['rc']}: {' | '.join(r['tail'])}"
        print(f"{name:<16}{r['seconds']:>8.1f}  {status:<34}{_slowest(r['reports'])}{flag}")
    if "touched_file" in res:
        print(f"touched: {res['touched_file']}")
    cold = runs["cold"]["seconds"]
    one = runs.get("one-by-one", runs.get("cold-jobs-1", runs["cold"]))["seconds"]
    jobs1 = runs.get("cold-jobs-1", runs["cold"])["seconds"]
    verdict = {
        "cold_s": cold, "cold_ok": cold <= COLD_TARGET_S,
        "ratio": cold / one, "ratio_ok": cold / one <= RATIO_TARGET, "one_by_one_s": one,
        "ratio_jobs1": cold / jobs1,
        "warm_s": runs["warm"]["seconds"], "warm_ok": runs["warm"]["seconds"] <= WARM_TARGET_S,
        "claim_s": runs["claim"]["seconds"], "claim_ok": runs["claim"]["seconds"] <= CLAIM_TARGET_S,
        "help_s": runs["help"]["seconds"], "help_ok": runs["help"]["seconds"] <= HELP_TARGET_S,
    }
    ok = lambda b: "ok" if b else "MISSED"  # noqa: E731
    print(f"  cold {cold:.1f} s (target <= {COLD_TARGET_S:g} s): {ok(verdict['cold_ok'])}")
    if "one-by-one" in runs:
        print(f"  cold / one by one (--jobs 1 --executor papermill: each report in its own kernel) = "
              f"{verdict['ratio']:.2f} (target <= {RATIO_TARGET:g}): {ok(verdict['ratio_ok'])}")
    if "cold-jobs-1" in runs:
        print(f"  cold / cold --jobs 1 (the suite's own executors, one at a time) = {verdict['ratio_jobs1']:.2f} "
              "(the pool alone; no target)")
    else:
        print(f"  cold / one-at-a-time: no --jobs flag, the cold run is one at a time (ratio 1.00, target <= "
              f"{RATIO_TARGET:g}): MISSED")
    note = "" if "--force" in res["flags"] else " (no cache: no --force flag; touched run skipped)"
    print(f"  warm {verdict['warm_s']:.1f} s (target <= {WARM_TARGET_S:g} s): {ok(verdict['warm_ok'])}{note}")
    if "touched" in runs:
        rerun = [r["name"] for r in runs["touched"]["reports"] if r["status"] in ("ok", "failed")]
        print(f"  touched: {runs['touched-ingest']['seconds']:.1f} s ingest + {runs['touched']['seconds']:.1f} s "
              f"report, re-executed {len(rerun)}: {', '.join(rerun) or 'none'}")
        check = res.get("touched_check")
        if check:
            verdict["touched_ok"] = not check["differ"]
            print(f"  touched: {len(check['skipped'])} reports not re-executed; their numbers equal a forced rerun's "
                  f"on the changed data: {ok(verdict['touched_ok'])}"
                  + (f" (differ: {', '.join(check['differ'])})" if check["differ"] else ""))
    print(f"  perfclaims claim C00 {verdict['claim_s']:.2f} s median of 3 (target <= {CLAIM_TARGET_S:g} s): "
          f"{ok(verdict['claim_ok'])}")
    print(f"  perfclaims --help {verdict['help_s']:.3f} s median of 5 (target <= {HELP_TARGET_S:g} s): "
          f"{ok(verdict['help_ok'])}")
    return verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated notebooks to run (default: the whole suite)")
    parser.add_argument("--touch", default=DEFAULT_TOUCH, help="raw file (under data/raw) whose value to change")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    only = [x for x in (args.only or "").split(",") if x] or None
    res = run(only, args.touch)
    print_report(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
