"""``python -m analysis.report.stamp STAMP PATH...``: rewrite STAMP only when the files under PATH changed.

Make compares modification times of named prerequisites, and a list of raw log files breaks on names with spaces
or colons. Instead ``make`` runs this on every call: it lists every file under the paths (names, sizes, modification
times) and rewrites the stamp only when that listing changed, so the stamp is the one prerequisite that stands for
all of them.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def listing_hash(paths: list[str]) -> str:
    h = hashlib.sha256()
    for top in sorted(paths):
        for root, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                p = os.path.join(root, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                h.update(os.fsencode(p) + f"\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        if os.path.isfile(top):
            st = os.stat(top)
            h.update(os.fsencode(top) + f"\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def update(stamp: Path, paths: list[str]) -> bool:
    """Write the listing hash to ``stamp`` if it differs from what is there; True when rewritten."""
    digest = listing_hash(paths) + "\n"
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_name(f".{stamp.name}.tmp-{os.getpid()}")
    tmp.write_text(digest)
    os.replace(tmp, stamp)
    return True


if __name__ == "__main__":
    update(Path(sys.argv[1]), sys.argv[2:])
