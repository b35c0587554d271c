"""Killed runs let go: after ``kill -9`` of a real ``perfclaims report`` or ``perfclaims ingest --partition``
mid-run, no worker survives it, the next run starts (the stale lock is broken, saying so) and recovers, and the
index never claims a result that is not on disk."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from analysis import config, procs, report
from analysis.report import runs

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SLOW = ("import time\nfrom pathlib import Path\nfrom analysis.report import save_results\n"
        "wait = float(Path(data).read_text())\nif started:\n    Path(started).write_text('1')\ntime.sleep(wait)\n"
        "save_results({'headline': f'{name} waited {wait:g} s'}, results_path)")


def _cli(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "analysis.cli", *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _mentioning(text: str) -> list[int]:
    """Live processes (not zombies) whose command line names ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and procs.start_time(int(entry.name)) is not None:
            found.append(int(entry.name))
    return found


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text(errors="replace")
            except OSError:
                continue
            if stat.rpartition(")")[2].split()[1] == str(pid):
                kids.append(int(entry.name))
    return kids


def _none_left(text: str, within: float = 3.0) -> list[int]:
    deadline = time.monotonic() + within
    while (left := _mentioning(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:  # leave the machine clean even when the test fails
        os.kill(pid, signal.SIGKILL)
    return left


def _slow_suite(tmp_path: Path) -> Path:
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    nb = new_notebook(cells=[new_code_cell("name = 'x'\ndata = ''\nstarted = ''\nresults_path = None",
                                           metadata={"tags": ["parameters"]}), new_code_cell(SLOW)])
    nbformat.write(nb, str(nb_dir / "slow.ipynb"))
    lines = ["title: Slow suite", "notebooks: .", "reports:"]
    for slug in ("a", "b"):
        (tmp_path / f"{slug}.txt").write_text("0")
        lines += [f"  - notebook: slow\n    slug: {slug}\n    executor: inprocess\n    inputs: [../{slug}.txt]\n"
                  f"    parameters: {{name: {slug}, data: \"{tmp_path / (slug + '.txt')}\", "
                  f"started: \"{tmp_path / (slug + '.started')}\"}}"]
    suite = nb_dir / "suite.yml"
    suite.write_text("\n".join(lines) + "\n")
    return suite


def test_killed_report_leaves_no_worker_no_lock_and_no_false_index(tmp_path):
    suite, out, date = _slow_suite(tmp_path), tmp_path / "reports", "2026-03-01"
    assert report.run_suite(suite, out=out, date=date, jobs=2) == 0  # the previous run: both reports ok
    for slug in ("a", "b"):
        (tmp_path / f"{slug}.txt").write_text("30")  # changed inputs: both rerun, each for 30 s
        (tmp_path / f"{slug}.started").unlink(missing_ok=True)
    proc = _cli("report", "--config", str(suite), "--out", str(out), "--date", date, "--jobs", "2")
    deadline = time.monotonic() + 30  # a loaded machine starts kernels slowly; the wait ends once they start
    while not all((tmp_path / f"{s}.started").exists() for s in "ab") and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.05)
    assert all((tmp_path / f"{s}.started").exists() for s in "ab"), "the reports never started"
    workers = _children(proc.pid)
    assert len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert _none_left(str(out)) == []  # the workers died with their parent

    # The killed run had removed both old results: neither its manifest nor the index claims them.
    assert [j["status"] for j in runs.read_manifest(out / date)["jobs"]] == ["missing", "missing"]
    index = (out / "index.html").read_text()
    assert index.count("not on disk") == 2 and "0 of 2 reports ok" in index

    for slug in ("a", "b"):
        (tmp_path / f"{slug}.txt").write_text("0")
    said: list[str] = []
    assert report.run_suite(suite, out=out, date=date, jobs=2, progress=said.append) == 0
    assert any(line.startswith(f"broke the stale run lock of {out} (pid {proc.pid} is gone)") for line in said)
    manifest = runs.read_manifest(out / date)
    assert [j["status"] for j in manifest["jobs"]] == ["ok", "ok"]
    assert "2 of 2 reports ok" in (out / "index.html").read_text()
    assert not (out / runs.LOCK_FILE).exists()


def test_a_live_lock_is_kept_and_a_reused_pid_is_stale(tmp_path):
    out = tmp_path / "reports"
    out.mkdir()
    with runs.run_lock(out):
        pid, started = (out / runs.LOCK_FILE).read_text().split()
        assert int(pid) == os.getpid() and started == procs.start_time(os.getpid())
        with pytest.raises(runs.RunLocked, match=f"another run \\(pid {os.getpid()}\\) is writing"):
            with runs.run_lock(out):
                pass
    assert not (out / runs.LOCK_FILE).exists()
    # our own pid, but a start time that is not ours: the process that took the lock is gone
    (out / runs.LOCK_FILE).write_text(f"{os.getpid()} 1\n")
    said: list[str] = []
    with runs.run_lock(out, say=said.append):
        pass
    assert said == [f"broke the stale run lock of {out} (pid {os.getpid()} is gone)"]


def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_killed_partitioned_ingest_leaves_no_worker_and_outputs_as_they_were(tmp_path):
    raw = tmp_path / "raw" / "run1"
    shutil.copytree(config.RAW_DATA_DIR / "per-request" / "aiperf-examples-run1", raw)
    body = (raw / "profile_export.jsonl").read_bytes()
    (raw / "profile_export.jsonl").write_bytes(body * 60)  # about 22 MB: two workers read it for a while
    out = tmp_path / "processed"
    env = {"PERFCLAIMS_INGEST_WORKERS": "2"}
    first = _cli("ingest", str(raw.parent), "--out", str(out), "--partition", "--quiet", env=env)
    assert first.wait(timeout=60) == 0, first.stderr.read().decode()
    first.stderr.close()
    before = _listing(out)
    assert any(name.startswith("requests/") for name in before)

    proc = _cli("ingest", str(raw.parent), "--out", str(out), "--partition", "--quiet", env=env)
    deadline = time.monotonic() + 30  # as above
    while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert _children(proc.pid), "the ingest never started its workers"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert _none_left(str(raw.parent)) == []
    assert _listing(out) == before  # every previous output as it was, no temporary file beside them

    again = _cli("ingest", str(raw.parent), "--out", str(out), "--partition", "--quiet", env=env)
    assert again.wait(timeout=60) == 0, again.stderr.read().decode()
    again.stderr.close()
    assert set(_listing(out)) == set(before)
    assert json.loads(json.dumps(sorted(_listing(out)))) == sorted(before)
