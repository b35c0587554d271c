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


def check_date(date: str | None) -> str:
    """``YYYY-MM-DD`` (default today, UTC) or a one-line error."""
    if date is None:
        return _dt.datetime.now(_dt.UTC).date().isoformat()
    try:
        if not _DATE.match(str(date)):
            raise ValueError
        return _dt.date.fromisoformat(str(date)).isoformat()
    except ValueError:
        raise ValueError(f"--date {date!r}: expected a date as YYYY-MM-DD") from None


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
def run_lock(out: Path):
    """Hold the output folder's run lock; a second run on the same folder is refused with a one-line message.

    The lock is an advisory ``flock`` on ``out/.perfclaims-run.lock``: the system releases it when the process ends,
    so a killed run never leaves the folder locked.
    """
    import fcntl

    path = Path(out) / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise RunLocked(f"another run (pid {holder}) is writing to {out}; wait for it to finish "
                            f"or use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def run_dirs(out: Path) -> list[Path]:
    """Dated run folders with a manifest, oldest first."""
    out = Path(out)
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if _DATE.match(p.name) and (p / MANIFEST).is_file() and not p.is_symlink())


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
