"""Worker processes that die with their parent, and process identity (pid plus start time) for run locks.

Every process forked from a perfclaims process (the report pool, the ingest pool) asks the kernel for SIGKILL
when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), and exits at once if the parent is already gone: a
``kill -9`` of ``perfclaims report`` or ``perfclaims ingest`` never leaves workers behind, blocked on a pipe and
holding what the run held. Elsewhere (no prctl) the check that the parent is still the one that forked remains.
"""

from __future__ import annotations

import os
import signal

PR_SET_PDEATHSIG = 1
_PARENT = {"pid": None}


def _before_fork() -> None:
    _PARENT["pid"] = os.getpid()


def _after_fork_in_child() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # no prctl on this system: the parent check below still holds
        pass
    if _PARENT["pid"] is not None and os.getppid() != _PARENT["pid"]:  # the parent died before prctl took hold
        os._exit(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field 22), None if there is none."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the command name may hold spaces and parentheses
    if not fields or fields[0] in ("Z", "X"):  # a zombie or dead process holds nothing
        return None
    return fields[19] if len(fields) > 19 else None


def alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` is the same process that started at ``started`` (a reused pid is not)."""
    if pid <= 0:
        return False
    now = start_time(pid)
    if now is not None:
        return started is None or now == started
    if os.path.isdir("/proc"):
        return False
    try:  # no /proc: only whether the pid exists
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
