"""Content hashes that decide whether a report must be re-executed, and the version stamps each page carries."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path

from analysis import config

PACKAGE_DIR = Path(__file__).resolve().parents[1]


class Hasher:
    """Content hashes of files and folders, each computed once per run."""

    def __init__(self):
        self._memo: dict[Path, str] = {}

    def path(self, p: Path) -> str:
        p = Path(p)
        if p not in self._memo:
            self._memo[p] = _hash_path(p)
        return self._memo[p]

    def forget(self, p: Path) -> None:
        """Hash ``p`` again next time (the runner wrote to it during the run)."""
        self._memo.pop(Path(p), None)

    def inputs(self, paths, *, points_file: Path | None = None, view_digest: str = "") -> str:
        """Hash of ``paths``; the points table ``points_file`` counts by ``view_digest`` (its rows the report
        reads) instead of its bytes when a digest is given."""
        h = hashlib.sha256()
        for p in sorted({Path(x) for x in paths}, key=str):
            digest = view_digest if view_digest and points_file is not None and p == Path(points_file) \
                else self.path(p)
            h.update(f"{p}\0{digest}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()[:16]

    def job_key(self, job, code: str, views=None) -> tuple[str, str]:
        """(key, inputs hash) of a job: its notebook, the package source, its parameters and executor, its inputs
        (the points table by the rows of the job's view, when it names one and ``views`` is given)."""
        points_file, digest = None, ""
        if job.view and views is not None:
            points_file = Path(job.parameters.get("points_path") or config.POINTS_FILE)
            digest = views.digest(points_file, job.view, {**job.defaults, **job.parameters})
        inputs_hash = self.inputs(job.inputs, points_file=points_file, view_digest=digest)
        blob = json.dumps({"notebook": self.path(job.notebook_path), "code": code, "inputs": inputs_hash,
                           "parameters": job.parameters, "executor": job.executor}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16], inputs_hash


def _hash_path(p: Path) -> str:
    if p.is_file():
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    if p.is_dir():
        h = hashlib.sha256()
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                f = Path(root) / name
                rel = f.relative_to(p).as_posix()
                h.update(f"{rel}\0{_hash_path(f) if f.is_file() else 'special'}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()
    return "missing"


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """Hash of the package source (every module and template): a code change reruns every report."""
    h = hashlib.sha256()
    for f in sorted(PACKAGE_DIR.rglob("*")):
        if f.is_file() and f.suffix in (".py", ".j2", ".json", ".css") and "__pycache__" not in f.parts:
            h.update(f"{f.relative_to(PACKAGE_DIR).as_posix()}\0{_hash_path(f)}\n".encode())
    return h.hexdigest()[:12]


def version() -> str:
    """The installed package's version; the source's ``__version__`` when it runs uninstalled (from a checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("perfclaims")
    except PackageNotFoundError:
        from analysis import __version__

        return __version__


def code_version() -> str:
    """Package version and source hash, e.g. ``0.1.0+src.1a2b3c4d5e6f``."""
    return f"{version()}+src.{code_hash()}"


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    """The checkout's commit (``-dirty`` when tracked files changed), or ``unknown`` outside git."""
    try:
        def git(*args):
            return subprocess.run(["git", "-C", str(config.PROJ_ROOT), *args], capture_output=True, text=True,
                                  timeout=10, check=True).stdout.strip()

        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
