"""Run the notebook suite into ``reports/<date>/`` and write the index: locked, cached, parallel, atomic.

* **Lock**: one run per output folder at a time (:func:`runs.run_lock`); a second is refused in one line.
* **Cache**: a report whose key (content hash of its notebook, the package source, its parameters and the files it
  reads; of the points table, only the rows of its view: :mod:`analysis.report.views`) matches a page already made
  is not re-executed; its page and results are kept (copied into this run's folder) and the index says "unchanged
  since DATE". ``force=True`` reruns everything.
* **Parallel**: reports run in a pool of worker processes (``jobs``, default the number of cores), slowest first
  (by the previous run's times); a papermill report gets its own kernel, in-process reports share their worker's
  imports; a failure fails only its report.
* **Atomic**: a report executes in a private work folder; its page and results are renamed into place when done.
  Its old results are removed before it runs, so a failed rerun never shows the previous headline beside "failed".
* **Merge**: ``only`` reruns some reports; the others keep their rows (from this date's run, else the newest earlier
  run) instead of vanishing from the index.
* **History**: every run appends the numbers of the reports it executed to ``reports/history/<run_id>.parquet``
  (an unchanged report's numbers are on record from the run that made them); a report that reads that store runs
  after it is written, and its own numbers are not recorded there (it would otherwise never be unchanged).
  ``reports/latest`` points at the newest run folder.
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import secrets
import shlex
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from analysis import config
from analysis.report import fingerprint, index_page, runs
from analysis.report.history import FOLDER as HISTORY_FOLDER
from analysis.report.history import append_history, history_rows
from analysis.report.results import load_results
from analysis.report.runs import OutputError, RunLocked  # noqa: F401  (re-exported for callers)
from analysis.report.suite import EXECUTORS, Job, read_suite
from analysis.report.views import ViewHasher
from analysis.text import whole

OK = ("ok", "unchanged", "kept")


def run_suite(suite_file: Path = config.SUITE_FILE, *, out: Path = config.REPORTS_DIR,
              only: list[str] | None = None, date: str | None = None, jobs: int | None = None,
              force: bool = False, executor: str | None = None,
              progress: Callable[[str], None] | None = None, allow_future_date: bool = False) -> int:
    """Run the suite into ``out/<date>/``; write both indexes, ``latest``, a history part. 1 if a report failed.

    Two phases: the reports, then those that read the suite-history store (``{out}/history``), after the numbers
    the first phase computed are recorded there. ``executor`` runs every report with that executor (``papermill``:
    each in its own kernel, as one would to rule out shared state). A disk that fills up ends the run with one
    :class:`OutputError` line, its temporary files removed and the previous outputs left in place."""
    say = progress or (lambda line: None)
    date = runs.check_date(date, allow_future=allow_future_date)
    out = runs.prepare_out(Path(out))
    try:
        return _run_suite(suite_file, out, only, date, jobs, force, executor, say)
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        _remove_temps(out, date)
        raise OutputError(f"--out {out}: the disk is full ({err.strerror or err}); this run stopped, "
                          f"its temporary files are removed and the previous outputs are as they were") from None


def _remove_temps(out: Path, date: str) -> None:
    """This process's temporary files and the run's work folder (left by a write that failed part-way)."""
    shutil.rmtree(Path(out) / date / ".work", ignore_errors=True)
    for folder in (Path(out), Path(out) / date):
        if folder.is_dir():
            for p in folder.glob(f".*.tmp-{os.getpid()}"):
                p.unlink(missing_ok=True)


def _run_suite(suite_file, out: Path, only, date: str, jobs, force: bool, executor, say) -> int:
    suite = read_suite(suite_file, out=out)
    if executor is not None:
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
        for job in suite.jobs:
            job.executor = executor
    selected = suite.jobs
    if only:
        selected = [j for j in suite.jobs if j.notebook in only or j.slug in only]
        if not selected:
            raise ValueError(f"--only {','.join(only)} matches no notebook in {suite_file}")
    chosen = {j.name for j in selected}
    with runs.run_lock(out, say=say):
        started = time.monotonic()
        run_dir = out / date
        run_dir.mkdir(exist_ok=True)
        previous = _previous_records(out)
        hasher, view_hasher = fingerprint.Hasher(), ViewHasher()
        code = fingerprint.code_hash()
        stamp = {"run_date": date, "version": fingerprint.code_version(), "commit": fingerprint.git_commit()}
        store = out / HISTORY_FOLDER
        later = {j.name for j in suite.jobs if any(Path(p) == store for p in j.inputs)}
        run_id = f"{date}_{_dt.datetime.now(_dt.UTC):%Y%m%dT%H%M%SZ}_{secrets.token_hex(3)}"
        for phase in ([j for j in suite.jobs if j.name not in later], [j for j in suite.jobs if j.name in later]):
            hasher.forget(store)  # the first phase may have recorded numbers there
            for job in phase:
                job.key, job.inputs_hash = hasher.job_key(job, code, view_hasher)
            to_run = []
            for job in (j for j in phase if j.name in chosen):
                hit = None if force else _cache_hit(job, previous)
                if hit:
                    _adopt(job, hit, run_dir, status="unchanged")
                    say(f"[{job.name}] unchanged since {job.made_on}")
                else:
                    to_run.append(job)
            _execute(to_run, run_dir, suite, stamp, out, jobs, say)
            # Numbers this run computed (not those it kept unchanged: they are on record from the run that made
            # them); a report that reads the store does not write to it, or it would never be unchanged.
            recorded = {j.name: (j.results, j.inputs_hash) for j in to_run
                        if j.status == "ok" and j.results and j.name not in later}
            append_history(out, history_rows(run_id, date, recorded, stamp["version"], stamp["commit"]), run_id)
        carried = {j.name for j in _carry_over([j for j in suite.jobs if j.name not in chosen], run_dir, previous)}

        shown = [j for j in suite.jobs if j.name in chosen or j.name in carried]
        manifest = {"run_date": date, "suite": str(Path(suite_file).resolve()), "suite_title": suite.title,
                    "code_version": stamp["version"], "commit": stamp["commit"],
                    "inputs": {str(p): hasher.path(p)[:16] for j in shown for p in j.inputs},
                    "seconds": round(time.monotonic() - started, 1), "jobs": [j.record() for j in shown],
                    "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")}
        runs.write_manifest(run_dir, manifest)
        write_indexes(out)
        runs.point_latest(out)
        shutil.rmtree(run_dir / ".work", ignore_errors=True)
    failed = [j for j in selected if j.status not in OK]
    say(f"{len(selected) - len(failed)} of {len(selected)} reports ok "
        f"({sum(j.status == 'unchanged' for j in selected)} unchanged, not re-executed) in "
        f"{whole(time.monotonic() - started, grouped=False)} s; index: {out / 'index.html'}")
    return 1 if failed else 0


# --- cache and carry-over ----------------------------------------------------------------------------

def _previous_records(out: Path) -> dict[str, list[tuple[Path, dict]]]:
    """slug -> [(run folder, record)] over every earlier run, newest first."""
    found: dict[str, list[tuple[Path, dict]]] = {}
    for run_dir in reversed(runs.run_dirs(out)):
        for rec in runs.read_manifest(run_dir).get("jobs", []):
            found.setdefault(rec.get("slug", ""), []).append((run_dir, rec))
    return found


def _cache_hit(job: Job, previous) -> tuple[Path, dict] | None:
    for run_dir, rec in previous.get(job.name, []):
        if (rec.get("key") == job.key and rec.get("status") in OK and (run_dir / job.html_name).is_file()
                and (run_dir / job.results_name).is_file()):
            return run_dir, rec
    return None


def _adopt(job: Job, found: tuple[Path, dict], run_dir: Path, *, status: str) -> None:
    """Use a page made by an earlier run (copied into this run's folder atomically)."""
    src_dir, rec = found
    for name in (job.html_name, job.results_name):
        src, dst = src_dir / name, run_dir / name
        if src.is_file() and src.resolve() != dst.resolve():
            tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
            try:
                shutil.copyfile(src, tmp)
                os.replace(tmp, dst)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
    job.status, job.error = status, ""
    job.made_on = rec.get("made_on") or src_dir.name
    job.seconds = 0.0
    job.results = load_results(run_dir / job.results_name) if (run_dir / job.results_name).is_file() else {}


def _carry_over(others: list[Job], run_dir: Path, previous) -> list[Job]:
    """Reports not selected by ``--only`` keep their row: as recorded for this date, else from the newest run."""
    carried = []
    for job in others:
        recs = previous.get(job.name, [])
        same_day = next((r for d, r in recs if d == run_dir), None)
        if same_day is not None:
            key, inputs_hash = job.key, job.inputs_hash
            done = Job.from_record(same_day)
            for k in ("status", "error", "seconds", "made_on", "title"):
                setattr(job, k, getattr(done, k))
            job.key, job.inputs_hash = done.key or key, done.inputs_hash or inputs_hash
            path = run_dir / job.results_name
            job.results = load_results(path) if path.is_file() and job.status in OK else {}
            carried.append(job)
        elif recs and recs[0][1].get("status") in OK:
            _adopt(job, recs[0], run_dir, status="kept")
            job.key, job.inputs_hash = recs[0][1].get("key", ""), recs[0][1].get("inputs_hash", "")
            carried.append(job)
    return carried


# --- execution -------------------------------------------------------------------------------------

def _command(job: Job, suite, date: str, out: Path) -> str:
    parts = ["perfclaims", "report"]
    if Path(suite.path).resolve() != Path(config.SUITE_FILE).resolve():
        parts += ["--config", index_page.shown_path(suite.path)]
    if Path(out).resolve() != Path(config.REPORTS_DIR).resolve():
        parts += ["--out", index_page.shown_path(out)]
    parts += ["--only", job.name, "--date", date, "--force"]
    return shlex.join(parts)


def _spec(job: Job, run_dir: Path, suite, stamp: dict, out: Path) -> dict:
    work = run_dir / ".work" / job.name
    shutil.rmtree(work, ignore_errors=True)
    page = {**stamp, "made_on": stamp["run_date"], "inputs_hash": job.inputs_hash, "index_href": "index.html",
            "command": _command(job, suite, stamp["run_date"], out)}
    return {"src": str(job.notebook_path), "parameters": job.parameters, "executor": job.executor,
            "work": str(work), "cwd": str(job.notebook_path.parent), "title": job.title, "page": page}


def _order(jobs: list[Job], out: Path) -> list[Job]:
    """Slowest first (by the newest recorded time; unknown papermill reports before in-process ones)."""
    seconds: dict[str, float] = {}
    for run_dir in runs.run_dirs(out):
        for rec in runs.read_manifest(run_dir).get("jobs", []):
            if rec.get("status") in ("ok", "failed") and rec.get("seconds"):
                seconds[rec.get("slug", "")] = float(rec["seconds"])
    default = {"papermill": 1e6, "inprocess": 0.0}
    return sorted(jobs, key=lambda j: -seconds.get(j.name, default.get(j.executor, 0.0)))


def _execute(jobs: list[Job], run_dir: Path, suite, stamp: dict, out: Path, n_workers: int | None, say) -> None:
    if not jobs:
        return
    import multiprocessing

    from analysis.report.execute import preload, run_job_spec

    removed = False
    for job in jobs:  # stale results of an earlier run of this report go before it runs
        if (run_dir / job.results_name).is_file():
            (run_dir / job.results_name).unlink()
            removed = True
    if removed:  # run.json and the index say so at once: killed from here on, nothing claims them
        manifest = runs.read_manifest(run_dir)
        if manifest:
            runs.write_manifest(run_dir, on_disk(run_dir, manifest))
        write_indexes(out)
    n_workers = max(1, min(n_workers or os.cpu_count() or 1, len(jobs)))
    # fork: workers start in milliseconds and re-import nothing; each report's state stays in its worker
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork":  # the parent imports once; every worker (this phase and the next) starts warm
        preload({job.executor for job in jobs})
    ordered = _order(jobs, out)
    specs = {job.name: _spec(job, run_dir, suite, stamp, out) for job in ordered}
    progress = {"done": 0}

    def finished(job: Job, result: dict) -> None:
        _place(job, result, run_dir, Path(specs[job.name]["work"]), stamp["run_date"])
        progress["done"] += 1
        say(f"[{progress['done']}/{len(jobs)}] {job.name} {job.status} ({whole(job.seconds, grouped=False)} s)"
            + (f"  {job.error}" if job.error else ""))

    lost = _pool_run(ordered, specs, n_workers, method, run_job_spec, finished)
    # A worker that dies (a crash in native code, the OOM killer) breaks the pool for the reports queued beside it;
    # those rerun one per fresh worker, so only the report that kills its worker fails.
    for job in lost:
        if _pool_run([job], specs, 1, method, run_job_spec, finished):
            finished(job, {"status": "failed", "error": "the worker running this report stopped (crash or killed)",
                           "results": {}, "title": job.title, "seconds": 0.0})


def _pool_run(jobs: list[Job], specs: dict, n_workers: int, method: str, fn, finished) -> list[Job]:
    """Run ``jobs`` in a pool, calling ``finished(job, result)`` for each; return the jobs whose worker died."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    from analysis import procs  # noqa: F401  (forked workers die with this process)

    lost = []
    with ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context(method)) as pool:
        futures = {pool.submit(fn, specs[job.name]): job for job in jobs}
        for future in as_completed(futures):
            job = futures[future]
            try:
                result = future.result()
            except BrokenProcessPool:
                lost.append(job)
                continue
            except Exception as err:  # the result could not come back: this report failed, the others go on
                result = {"status": "failed", "error": f"{type(err).__name__}: {err}"[:500], "results": {},
                          "title": job.title, "seconds": 0.0}
            finished(job, result)
    return lost


def _place(job: Job, result: dict, run_dir: Path, work: Path, date: str) -> None:
    """Rename the finished page, results and executed notebook into the run folder."""
    job.status, job.error, job.seconds = result["status"], result["error"], result["seconds"]
    job.results, job.made_on = (result["results"] if result["status"] == "ok" else {}), date
    moves = {"page.html": job.html_name, "executed.ipynb": f"{job.name}.ipynb"}
    if job.status == "ok":
        moves["results.json"] = job.results_name
    for src_name, dst_name in moves.items():
        src, dst = work / src_name, run_dir / dst_name
        if src.is_file():
            os.replace(src, dst)
        elif src_name == "page.html":
            dst.unlink(missing_ok=True)


# --- indexes ---------------------------------------------------------------------------------------

def on_disk(run_dir: Path, manifest: dict) -> dict:
    """The manifest as the folder bears it out: a report recorded as ok whose page or results are not on disk
    (a run killed after removing them) is shown as missing, never as ok."""
    jobs = []
    for rec in manifest.get("jobs", []):
        slug = rec.get("slug", "")
        if rec.get("status") in OK and not ((run_dir / f"{slug}.html").is_file()
                                            and (run_dir / f"{slug}.results.json").is_file()):
            rec = {**rec, "status": "missing", "error": "its page or results are not on disk (an interrupted run); "
                                                        "run the report again"}
        jobs.append(rec)
    return {**manifest, "jobs": jobs}


def _results_of(run_dir: Path, manifest: dict) -> dict[str, dict]:
    found = {}
    for rec in manifest.get("jobs", []):
        path = run_dir / f"{rec.get('slug', '')}.results.json"
        if path.is_file() and rec.get("status") in OK:
            try:
                found[rec["slug"]] = load_results(path)
            except (OSError, ValueError):
                pass
    return found


def write_indexes(out: Path) -> None:
    """Each run folder's own ``index.html``, and ``out/index.html`` for the newest run with the earlier runs."""
    from analysis.report.results import write_atomic

    dirs = runs.run_dirs(out)
    for run_dir in dirs:
        manifest = on_disk(run_dir, runs.read_manifest(run_dir))
        results = _results_of(run_dir, manifest)
        present = {rec["slug"] for rec in manifest.get("jobs", []) if (run_dir / f"{rec['slug']}.html").is_file()}
        others = [(d.name, f"../{d.name}/index.html", index_page.run_summary(on_disk(d, runs.read_manifest(d))))
                  for d in reversed(dirs) if d != run_dir]
        write_atomic(run_dir / "index.html", index_page.index_page(
            manifest, results, href=lambda s, present=present: f"{s}.html" if s in present else None, runs=others,
            up_href="../index.html"))
        if run_dir == dirs[-1]:
            earlier = [(d.name, f"{d.name}/index.html", index_page.run_summary(on_disk(d, runs.read_manifest(d))))
                       for d in reversed(dirs[:-1])]
            write_atomic(Path(out) / "index.html", index_page.index_page(
                manifest, results, runs=earlier,
                href=lambda s, run_dir=run_dir, present=present: f"{run_dir.name}/{s}.html" if s in present else None))
