"""Property-based fuzzing of every reader: arbitrary mutations of the real fixtures (cut, spliced, numbers and
strings swapped for hostile values, hostile file names) never raise out of ``ingest``, never give a trusted point
that breaks the plausibility bounds, always account for the file, and always write out.

Examples are bounded (``max_examples``) and derandomized, so the module runs in a few seconds and a failure
reproduces; set ``FUZZ_EXAMPLES=500`` to search longer and ``FUZZ_RANDOM=1`` to draw new examples each run.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.ingest import formats, ingest, write_outputs
from analysis.schema import (
    NON_NEGATIVE,
    NUMERIC_COLUMNS,
    PERCENTILE_CHAINS,
    POSITIVE,
    STRING_COLUMNS,
    UPPER_BOUNDS,
    trusted,
)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="FUZZ_RANDOM" not in os.environ, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ACCOUNTED = {"points", "points (some records quarantined)", "requests", "quarantined", "same run read elsewhere"}


def _seed(path: Path) -> bytes:
    """The fixture's bytes, cut down to a few records when it is large (the fuzzing is about shape, not size)."""
    data = path.read_bytes()
    if len(data) < 50_000:
        return data
    if data.lstrip().startswith(b"["):
        return json.dumps(json.loads(data)[:3], indent=1).encode()
    return b"".join(data.splitlines(keepends=True)[:5])


SEEDS = {f.name: (Path(f.example), _seed(ROOT / f.example)) for f in formats() if (ROOT / f.example).is_file()}
NUMBER = re.compile(rb"-?\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
STRING = re.compile(rb'"[^"\\\n]{1,40}"')
HOSTILE_NUMBERS = [b"-1", b"-0.5", b"0", b"1e308", b"1.7e308", b"1e5", b"1e7", b"9" * 400, b"7" * 5000, b"NaN",
                   b"Infinity", b"-Infinity", b"null", b'"12"', b'"fast"', b"true", b"[]", b"{}"]
HOSTILE_STRINGS = [b'"\\ud800"', b'"a\\udc00b"', b'"<script>alert(1)</script>"', b'"\xff\xfe"', b'""',
                   b'"[x](javascript:alert(1))"', b'"$x$ *y* |z|"', b'"../../etc/passwd"', b'"INVALID"', b"null",
                   b"-1", b'"\\u0000"']
HOSTILE_BYTES = [b"\xff", b"\x00", b"\xef\xbb\xbf", b'"', b"-", b"\n", b"}", b"]", b"\\ud800", b"1e999", b"\r\n"]
HOSTILE_NAMES = ["run.json", "a b:c.json", "<img src=x onerror=alert(1)>.json", "x\nnewline.log", ".hidden.json",
                 "caf\udce9.json", "[link](javascript:x).csv", "émoji-🙂.jsonl"]


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(sorted(SEEDS)))
    path, data = SEEDS[name]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cut", "insert", "delete", "number", "string"]))
        if kind == "cut":
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "insert":
            at = draw(st.integers(0, len(data)))
            data = data[:at] + draw(st.sampled_from(HOSTILE_BYTES) | st.binary(max_size=6)) + data[at:]
        elif kind == "delete":
            at = draw(st.integers(0, len(data)))
            data = data[:at] + data[at + draw(st.integers(1, 64)):]
        else:
            pattern, values = (NUMBER, HOSTILE_NUMBERS) if kind == "number" else (STRING, HOSTILE_STRINGS)
            spans = [m.span() for m in pattern.finditer(data)]
            if spans:
                a, b = spans[draw(st.integers(0, len(spans) - 1))]
                data = data[:a] + draw(st.sampled_from(values)) + data[b:]
    return name, path, data


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _check(result, folder: Path) -> None:
    # every file is accounted for
    files = result.files
    assert len(files) >= 1
    assert set(files["status"]) <= ACCOUNTED | {"skipped"}, files
    quarantined = set(result.quarantine["source_file"])
    for row in files.to_dict("records"):
        if row["status"] == "quarantined":
            assert row["source_file"] in quarantined
    assert result.quarantine["reason"].astype(str).str.len().gt(0).all()
    # no trusted point breaks the bounds
    points = result.points
    ok = points[trusted(points)] if len(points) else points
    for col in NUMERIC_COLUMNS:
        values = ok[col].to_numpy(dtype=float)
        assert not np.isinf(values).any(), col
        known = values[~np.isnan(values)]
        if col in NON_NEGATIVE:
            assert (known >= 0).all(), (col, known)
        if col in POSITIVE:
            assert (known > 0).all(), (col, known)
        if col in UPPER_BOUNDS:
            assert (known <= UPPER_BOUNDS[col]).all(), (col, known)
    for chain in PERCENTILE_CHAINS:
        for lo, hi in zip(chain, chain[1:]):
            both = ok[[lo, hi]].dropna()
            assert (both[lo] <= both[hi] * (1 + 1e-6) + 1e-9).all(), (lo, hi)
    for col in STRING_COLUMNS:
        assert not points[col].astype(str).map(_has_surrogate).any(), col
    # per-request rows a statistic can use are physically possible
    if len(result.requests):
        good = result.requests[result.requests["error"].fillna("") == ""]
        for col in ("input_tokens", "output_tokens", "ttft_ms", "e2e_ms", "itl_ms_mean", "tpot_ms"):
            assert not (good[col] < 0).any(), col
    # and the run can always be written out
    write_outputs(result, folder / "out")
    assert len(pd.read_parquet(folder / "out" / "points.parquet")) == len(points)


@FUZZ
@given(mutated())
def test_mutated_fixtures_never_break_ingest(case):
    name, path, data = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "raw" / path.parent.name  # the parent folder name carries meaning (MLPerf)
        folder.mkdir(parents=True)
        (folder / path.name).write_bytes(data)
        result = ingest([Path(tmp) / "raw"])
        assert len(result.files) == 1, name
        _check(result, Path(tmp))


@settings(FUZZ, max_examples=max(EXAMPLES // 3, 5))
@given(st.sampled_from(sorted(SEEDS)), st.sampled_from(HOSTILE_NAMES), st.sampled_from(HOSTILE_BYTES))
def test_hostile_file_names_never_break_ingest(name, filename, extra):
    path, data = SEEDS[name]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "raw"
        folder.mkdir()
        target = os.path.join(os.fsencode(folder), os.fsencode(filename))
        with open(target, "wb") as fh:
            fh.write(data)
        with open(os.path.join(os.fsencode(folder), b"second\xff" + os.fsencode(filename)), "wb") as fh:
            fh.write(data + extra)
        result = ingest([folder])
        assert len(result.files) == 2
        _check(result, Path(tmp))
        assert not result.files["source_file"].map(_has_surrogate).any()


def test_every_reader_has_a_seed():
    assert set(SEEDS) == {f.name for f in formats() if (ROOT / f.example).is_file()}
    assert len(SEEDS) >= 20 and all(0 < len(d) < 50_000 for _, d in SEEDS.values())
