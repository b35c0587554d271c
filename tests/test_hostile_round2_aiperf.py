"""The default AIPerf fast path (gap arrays cut out unparsed) and ``--itl-gaps`` (every gap parsed) refuse the same
records: a seeded fuzz of malformed gap arrays (empty elements, a space or a NUL for a comma, two dots, a leading
zero, a stray sign or letter) must quarantine the same lines in both modes, and the records both keep must carry
the same ITL mean."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from analysis.ingest import ingest

JSONL = Path(__file__).parent / "data" / "formats" / "aiperf" / "run1_records" / "profile_export.jsonl"
KEY = b'"inter_chunk_latency":{"value":['


def _array(line: bytes) -> tuple[int, int] | None:
    k = line.find(KEY)
    if k < 0:
        return None
    a = k + len(KEY)
    return a, line.index(b"]", a)


def _commas(body: bytes) -> list[int]:
    return [i for i, c in enumerate(body) if c == ord(",")]


MUTATIONS = {
    "empty elements": lambda body, r: body + b",,,,",
    "empty inside": lambda body, r: (lambda i: body[:i] + b"," + body[i:])(r.choice(_commas(body))),
    "space for a comma": lambda body, r: (lambda i: body[:i] + b" " + body[i + 1:])(r.choice(_commas(body))),
    "NUL for a comma": lambda body, r: (lambda i: body[:i] + b"\0" + body[i + 1:])(r.choice(_commas(body))),
    "NUL inside": lambda body, r: (lambda i: body[:i] + b"\0" + body[i:])(r.randrange(1, len(body))),
    "leading comma": lambda body, r: b"," + body,
    "two dots": lambda body, r: body.replace(b".", b"..", 1),
    "a dot for a comma": lambda body, r: (lambda i: body[:i] + b"." + body[i + 1:])(r.choice(_commas(body))),
    "dot after comma": lambda body, r: (lambda i: body[:i + 1] + b"." + body[i + 1:])(r.choice(_commas(body))),
    "leading zero": lambda body, r: (lambda i: body[:i + 1] + b"0" + body[i + 1:])(r.choice(_commas(body))),
    "trailing dot": lambda body, r: body + b".",
    "a letter": lambda body, r: (lambda i: body[:i] + b"x" + body[i:])(r.randrange(1, len(body))),
    "a minus": lambda body, r: (lambda i: body[:i + 1] + b"-" + body[i + 1:])(r.choice(_commas(body))),
    # valid JSON the fast path does not cut: read alike, with the same mean
    "spaces around commas": lambda body, r: body.replace(b",", b" , "),
}


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    rng = random.Random(27)
    lines = JSONL.read_bytes().splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines) if (span := _array(line)) and span[1] - span[0] > 40]
    names = sorted(MUTATIONS)
    picked = rng.sample(candidates, min(len(candidates), 3 * len(names)))
    done = {}
    for n, i in enumerate(picked):
        name = names[n % len(names)]
        a, b = _array(lines[i])
        lines[i] = lines[i][:a] + MUTATIONS[name](lines[i][a:b], rng) + lines[i][b:]
        done[i + 1] = name
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "profile_export.jsonl").write_bytes(b"".join(lines))
    return folder / "profile_export.jsonl", done


def test_both_modes_refuse_the_same_records(mutated):
    path, done = mutated
    fast = ingest([path], manifest=None)
    full = ingest([path], manifest=None, itl_gaps=True)
    refused_fast = set(fast.quarantine["line"].dropna().astype(int))
    refused_full = set(full.quarantine["line"].dropna().astype(int))
    assert refused_fast == refused_full
    malformed = {line for line, name in done.items() if name != "spaces around commas"}
    assert refused_full == malformed  # every malformed array refused, nothing else
    assert len(fast.requests) == len(full.requests) > 0
    for a, b in zip(fast.requests["itl_ms_mean"], full.requests["itl_ms_mean"]):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9)
