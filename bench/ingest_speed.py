"""Ingest speed and memory of a per-request JSONL: perfclaims' streaming reader against pandas.read_json.

Builds a file of about ``--size-mb`` MB by repeating a real AIPerf ``profile_export.jsonl`` (the InferenceX conc-1
run shipped in tests/data/formats/aiperf/), then runs each method in a fresh Python process and prints MB/s,
peak memory above the interpreter baseline, and peak memory / file size side by side. Two perfclaims modes run:
the default ingest (per-chunk gap arrays skipped unparsed, exact per-request ITL mean) and ``itl_gaps=True``
(every gap parsed, per-request ITL p50/p99 too). The targets apply to the default mode, and the script exits 1
when it misses one: at least 5x the MB/s of pandas, and peak memory at most 1.5x the file size.

Memory method: each child reports ``ru_maxrss`` of itself plus ``ru_maxrss`` of its own children (the reader's
worker processes, when it uses them; the sum is an upper bound because the peaks need not coincide). A baseline
child imports the same modules and parses nothing; its peak is subtracted, so the figure is what parsing the
file costs, not what importing pandas costs. Time is wall-clock around the parse call only.

    .venv/bin/python bench/ingest_speed.py [--size-mb 200] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "formats" / "aiperf" / "inferencex_conc1" / "profile_export.jsonl"
SPEED_TARGET = 5.0  # perfclaims MB/s over pandas MB/s
MEMORY_TARGET = 1.5  # perfclaims peak memory over file size


def build_input(sample: Path, size_mb: float, folder: Path) -> Path:
    """Repeat ``sample`` until the file reaches ``size_mb`` MB (whole copies, so every line is a real record)."""
    data = sample.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    target = int(size_mb * 1e6)
    path = folder / "profile_export.jsonl"
    written = 0
    with open(path, "wb") as fh:
        while written < target:
            fh.write(data)
            written += len(data)
    return path


# --- children: one method per fresh process ------------------------------------------------------------
def child(method: str, path: Path) -> dict:
    if method.startswith("pandas"):
        import pandas as pd
    else:
        from analysis.ingest import aiperf
        from analysis.ingest.base import Sink
    rows = 0
    started = time.perf_counter()
    if method == "pandas":
        frame = pd.read_json(path, lines=True)
        rows = len(frame)
    elif method in ("perfclaims", "perfclaims-itl-gaps"):
        # exactly what `perfclaims ingest [--itl-gaps]` runs for this file: stream, per-request table, counts
        sink = Sink(path, options={"itl_gaps": method == "perfclaims-itl-gaps"})
        next(f for f in aiperf.FORMATS if f.name == "aiperf-jsonl").parse(path, sink)
        rows = sum(t.num_rows for t in sink.request_tables) + sink.counts.get("warmup", 0)
    seconds = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": seconds, "rows": rows, "maxrss_kb": own + kids}


def run_child(method: str, path: Path, workers: int | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", method, "--file", str(path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if workers is not None:
        env["PERFCLAIMS_INGEST_WORKERS"] = str(workers)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=200.0, help="size of the generated JSONL (default 200)")
    parser.add_argument("--sample", type=Path, default=SAMPLE, help="JSONL to repeat (default: the AIPerf sample)")
    parser.add_argument("--workers", type=int, default=None,
                        help="reader processes, via PERFCLAIMS_INGEST_WORKERS (default: what ingest chooses)")
    parser.add_argument("--child", choices=["pandas", "perfclaims", "perfclaims-itl-gaps", "pandas-baseline",
                                            "perfclaims-baseline", "perfclaims-itl-gaps-baseline"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(child(args.child, args.file)))
        return 0
    if not args.sample.exists():
        print(f"error: sample {args.sample} not found", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="perfclaims-bench-") as tmp:
        path = build_input(args.sample, args.size_mb, Path(tmp))
        size_mb = path.stat().st_size / 1e6
        print(f"input: {size_mb:.1f} MB, {args.sample.name} repeated ({args.sample.stat().st_size / 1e6:.2f} MB each)")
        results = {}
        for method in ("pandas", "perfclaims", "perfclaims-itl-gaps"):
            base = run_child(f"{method}-baseline", path, args.workers)
            run = run_child(method, path, args.workers)
            peak_mb = (run["maxrss_kb"] - base["maxrss_kb"]) * 1024 / 1e6
            results[method] = {
                "mb_s": size_mb / run["seconds"], "seconds": run["seconds"], "rows": run["rows"],
                "peak_mb": peak_mb, "peak_over_size": peak_mb / size_mb,
            }

    pandas_mb_s = results["pandas"]["mb_s"]
    print(f"{'method':<44}{'seconds':>8}{'MB/s':>8}{'rows':>7}{'peak MB':>9}{'peak/size':>10}{'vs pandas':>10}")
    labels = {"pandas": "pandas.read_json(lines=True)",
              "perfclaims": "perfclaims ingest (default: gaps skipped)",
              "perfclaims-itl-gaps": "perfclaims ingest itl_gaps=True"}
    for method, r in results.items():
        print(f"{labels[method]:<44}{r['seconds']:>8.2f}{r['mb_s']:>8.1f}{r['rows']:>7d}"
              f"{r['peak_mb']:>9.1f}{r['peak_over_size']:>9.2f}x{r['mb_s'] / pandas_mb_s:>9.2f}x")
    speedup = results["perfclaims"]["mb_s"] / pandas_mb_s
    memory = results["perfclaims"]["peak_over_size"]
    speed_ok, memory_ok = speedup >= SPEED_TARGET, memory <= MEMORY_TARGET
    gaps = results["perfclaims-itl-gaps"]
    print("targets apply to the default mode (per-chunk gap arrays skipped; itl_ms_p50/p99 left NaN):")
    print(f"  speed: default perfclaims is {speedup:.2f}x pandas (target >= {SPEED_TARGET:g}x): "
          f"{'ok' if speed_ok else 'MISSED'}")
    print(f"  memory: default perfclaims peak is {memory:.2f}x the file size (target <= {MEMORY_TARGET:g}x; "
          f"pandas {results['pandas']['peak_over_size']:.2f}x): {'ok' if memory_ok else 'MISSED'}")
    print(f"for information, itl_gaps=True (every gap parsed): {gaps['mb_s'] / pandas_mb_s:.2f}x pandas, "
          f"peak {gaps['peak_over_size']:.2f}x the file size (no target)")
    return 0 if speed_ok and memory_ok else 1

if __name__ == "__main__":
    sys.exit(main())
