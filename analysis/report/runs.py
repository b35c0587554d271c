"""The output folder: one dated folder per run date (``reports/2026-06-01/``) with a manifest (``run.json``),
``reports/latest`` pointing at the newest, a run lock, and checks that the folder can be written at all."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import shutil
from pathlib import Path

from analysis.report.results import write_atomic

MANIFEST = "run.json"
LOCK_FILE = ".perfclaims-run.lock"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class OutputError(ValueError):
    """The output folder cannot be used (not a folder, not writable)."""


class RunLocked(ValueError):
    """Another run is writing to the same output folder."""


def check_date(date: str | None, *, allow_future: bool = False) -> str:
    """``YYYY-MM-DD`` (default today, UTC) or a one-line error; a date after today (UTC) only with
    ``allow_future`` (a typo or a skewed clock would otherwise file a run where no later run is seen)."""
    today = _dt.datetime.now(_dt.UTC).date()
    if date is None:
        return today.isoformat()
    try:
        if not _DATE.match(str(date)):
            raise ValueError
        day = _dt.date.fromisoformat(str(date))
    except ValueError:
        raise ValueError(f"--date {date!r}: expected a date as YYYY-MM-DD") from None
    if day > today and not allow_future:
        raise ValueError(f"--date {date}: after today ({today.isoformat()}, UTC); "
                         f"pass --allow-future-date if that is meant")
    return day.isoformat()


def prepare_out(out: Path) -> Path:
    """Create ``out`` if needed and prove it writable; otherwise one clear error (never a traceback)."""
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(f"--out {out}: exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OutputError:
        raise
    except OSError as err:
        raise OutputError(f"--out {out}: cannot write there ({err.strerror or err})") from None
    return out


@contextlib.contextmanager
def run_lock(out: Path, say=None):
    """Hold the output folder's run lock; a second run on the same folder is refused with a one-line message.

    The lock is the file ``out/.perfclaims-run.lock`` holding its owner's pid and process start time, created
    atomically (a hard link of a finished temporary file, which fails if the lock exists). A lock whose owner is
    gone (no such process, or the pid now belongs to a process started later) is stale: it is broken, and
    ``say`` gets one line saying so. The lock is removed when the run ends, however it ends short of ``kill -9``.
    """
    from analysis import procs

    say = say or (lambda line: None)
    path = Path(out) / LOCK_FILE
    me = f"{os.getpid()} {procs.start_time(os.getpid()) or '?'}\n"
    tmp = Path(out) / f".{LOCK_FILE}.{os.getpid()}.tmp"
    write_atomic(tmp, me)
    try:
        for _ in range(3):
            try:
                os.link(tmp, path)
                break
            except FileExistsError:
                pid, started = _lock_owner(path)
                if pid is not None and procs.alive(pid, started):
                    raise RunLocked(f"another run (pid {pid}) is writing to {out}; wait for it to finish "
                                    f"or use another --out") from None
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                say(f"broke the stale run lock of {out} (pid {pid if pid is not None else '?'} is gone)")
        else:
            raise RunLocked(f"{out}: could not take the run lock; another run keeps taking it")
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if path.read_text() == me:
                path.unlink()


def _lock_owner(path: Path) -> tuple[int | None, str | None]:
    """(pid, start time) recorded in a lock file; (None, None) for an empty or unreadable one (a stale lock)."""
    try:
        parts = path.read_text(errors="replace").split()
        return int(parts[0]), (parts[1] if len(parts) > 1 and parts[1] != "?" else None)
    except (OSError, ValueError, IndexError):
        return None, None


def run_dirs(out: Path) -> list[Path]:
    """Dated run folders with a manifest, oldest first: by date, where a folder dated after the day its run
    finished counts as that day, then by the time each run finished (``finished`` in the manifest, else the
    manifest's modification time). A backfill stays behind newer dates, and a run filed under a future date
    (``--allow-future-date``, a skewed clock) never hides the runs that finished after it."""
    out = Path(out)
    if not out.is_dir():
        return []
    dirs = [p for p in out.iterdir() if _DATE.match(p.name) and (p / MANIFEST).is_file() and not p.is_symlink()]

    def order(p: Path) -> tuple[str, str, str]:
        done = finished_at(p)
        return (min(p.name, done[:10]) if done else p.name, done, p.name)

    return sorted(dirs, key=order)


def finished_at(run_dir: Path) -> str:
    """When the run in ``run_dir`` finished, as a UTC ISO time (from its manifest, else the manifest's mtime)."""
    when = read_manifest(run_dir).get("finished")
    if isinstance(when, str) and when:
        return when
    try:
        mtime = (Path(run_dir) / MANIFEST).stat().st_mtime
    except OSError:
        return ""
    return _dt.datetime.fromtimestamp(mtime, _dt.UTC).isoformat(timespec="microseconds")


def read_manifest(run_dir: Path) -> dict:
    try:
        return json.loads((Path(run_dir) / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def write_manifest(run_dir: Path, manifest: dict) -> None:
    write_atomic(Path(run_dir) / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, default=str))


def point_latest(out: Path) -> Path | None:
    """Make ``out/latest`` the newest run folder (a relative symlink swapped in atomically; a copy where links fail)."""
    dirs = run_dirs(out)
    if not dirs:
        return None
    newest, latest = dirs[-1], Path(out) / "latest"
    tmp = Path(out) / f".latest-{os.getpid()}"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(newest.name, tmp, target_is_directory=True)
        if latest.is_dir() and not latest.is_symlink():
            shutil.rmtree(latest)
        os.replace(tmp, latest)
    except OSError:
        if latest.is_symlink():
            latest.unlink()
        elif latest.exists():
            shutil.rmtree(latest)
        shutil.copytree(newest, tmp)
        os.replace(tmp, latest)
    return newest
