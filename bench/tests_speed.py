"""`make test` against the test suite as it was before it shared one rendered suite and ran on two workers, both
timed in this run on this machine (so a busy machine slows both alike).

The baseline is a commit of this repository (``BASELINE``: the suite where every notebook test started its own
kernel and ran one after another) checked out as a git worktree beside this checkout (so ``../shared`` resolves
for it as for this one), run with this checkout's virtual environment and its own package source first on the
path, with its own ``make test`` command of the time (``pytest -q``). The current suite runs as ``make test``
runs it. Neither run includes a bench: the test suite's bench tests only check the bench's machinery.

    .venv/bin/python bench/tests_speed.py [--baseline REV] [--no-baseline]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "39e9ef3"  # main before issue 15's test work: 636 tests, notebook tests one kernel each, one process
TARGET_S, RATIO_TARGET = 60.0, 0.5
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?)\b")


def timed(cmd: list[str], cwd: Path, env: dict) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    tail = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()][-3:]
    summary = next((ln for ln in reversed(tail) if " in " in ln and COUNT.search(ln)), "")
    counts = {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in COUNT.findall(summary)}
    return {"cmd": " ".join(cmd), "seconds": seconds, "rc": proc.returncode, "tail": tail,
            "passed": counts.get("passed", 0), "failed": counts.get("failed", 0) + counts.get("error", 0)}


def baseline_checkout(rev: str) -> Path | None:
    """A detached worktree of ``rev`` beside this checkout, or None when git cannot make one."""
    where = ROOT.parent / f".perfclaims-bench-baseline-{os.getpid()}"
    proc = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(where), rev],
                          capture_output=True, text=True)
    return where if proc.returncode == 0 else None


def remove_checkout(where: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], capture_output=True)
    shutil.rmtree(where, ignore_errors=True)


def run(baseline: str | None = BASELINE) -> dict:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    out = {"baseline_rev": baseline, "runs": {}}
    out["runs"]["make test"] = timed(["make", "-s", "test"], ROOT, env)
    if baseline:
        where = baseline_checkout(baseline)
        if where is None:
            out["baseline_error"] = f"git could not check out {baseline} (no git history here?)"
        else:
            try:
                base_env = {**env, "PYTHONPATH": str(where)}  # its package source before this checkout's
                out["runs"][f"baseline {baseline}"] = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist"],
                                                           where, base_env)
            finally:
                remove_checkout(where)
    return out


def print_report(res: dict) -> dict:
    print(f"{'run':<24}{'wall s':>8}  {'passed':>7}  {'failed':>7}  command")
    for name, r in res["runs"].items():
        flag = "" if r["rc"] == 0 else f"  exit {r['rc']}: {' | '.join(r['tail'])}"
        print(f"{name:<24}{r['seconds']:>8.1f}  {r['passed']:>7}  {r['failed']:>7}  {r['cmd']}{flag}")
    if "baseline_error" in res:
        print(f"baseline: {res['baseline_error']}")
    now = res["runs"]["make test"]
    base = next((r for n, r in res["runs"].items() if n.startswith("baseline")), None)
    verdict = {"test_s": now["seconds"], "test_ok": now["seconds"] <= TARGET_S and now["rc"] == 0,
               "passed": now["passed"], "ratio": now["seconds"] / base["seconds"] if base else float("nan")}
    verdict["ratio_ok"] = bool(base) and verdict["ratio"] <= RATIO_TARGET and base["rc"] == 0
    ok = lambda b: "ok" if b else "MISSED"  # noqa: E731
    print(f"  make test {now['seconds']:.1f} s, {now['passed']} passed (target <= {TARGET_S:g} s): {ok(verdict['test_ok'])}")
    if base:
        print(f"  make test / baseline suite ({base['passed']} passed, {base['seconds']:.1f} s) = {verdict['ratio']:.2f} "
              f"(target <= {RATIO_TARGET:g}): {ok(verdict['ratio_ok'])}")
    return verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"commit whose test suite to time beside (default "
                                                             f"{BASELINE})")
    parser.add_argument("--no-baseline", action="store_true", help="time make test alone")
    args = parser.parse_args(argv)
    print_report(run(None if args.no_baseline else args.baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
