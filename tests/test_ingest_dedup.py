"""Same-run dedup: a byte-identical copy of a file already read is quarantined as a duplicate run naming the first
file, a file of the same size with one different byte (even past the detection head) is read, and only files whose
size another file shares are hashed at all (the hash no longer costs a pass over every byte of every file)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import analysis.ingest as ingest_pkg
from analysis.ingest import ingest
from analysis.ingest.base import HEAD_BYTES

FORMATS = Path(__file__).parent / "data" / "formats"
MALFORMED = Path(__file__).parent / "data" / "malformed"
JSONL = FORMATS / "aiperf" / "inferencex_conc1" / "profile_export.jsonl"
SUMMARY = MALFORMED / "mlperf_duplicate_a" / "mlperf_log_summary.txt"


def _copy(src: Path, dst: Path, data: bytes | None = None) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        shutil.copyfile(src, dst)
    else:
        dst.write_bytes(data)
    return dst


def _one_digit_changed_near_the_end(data: bytes) -> bytes:
    """The same bytes with one digit in the last record changed to another digit (same length, still valid)."""
    at = data.rindex(b'"http_req_total":{"value":') + len(b'"http_req_total":{"value":')
    digit = data[at:at + 1]
    assert digit.isdigit()
    return data[:at] + (b"7" if digit != b"7" else b"3") + data[at + 1:]


@pytest.fixture
def hashed(monkeypatch):
    """Names of the files ingest hashes, in order."""
    calls: list[str] = []
    real = ingest_pkg._sha256

    def spy(path):
        calls.append(Path(path).parent.name)
        return real(path)

    monkeypatch.setattr(ingest_pkg, "_sha256", spy)
    return calls


def test_identical_copy_is_a_duplicate_run_named_after_the_first(tmp_path, hashed):
    _copy(JSONL, tmp_path / "a" / "profile_export.jsonl")
    _copy(JSONL, tmp_path / "b" / "profile_export.jsonl")
    result = ingest([tmp_path], manifest=None)
    files = result.files.set_index("source_file")
    first, second = sorted(files.index)
    assert first.endswith("a/profile_export.jsonl") and second.endswith("b/profile_export.jsonl")
    assert files.loc[first, "n_requests"] > 0 and files.loc[first, "quarantined"] == 0
    assert files.loc[second, "status"] == "quarantined" and files.loc[second, "n_requests"] == 0
    reasons = result.quarantine.set_index("source_file")["reason"]
    assert reasons[second] == f"duplicate run: identical to {first}"
    assert hashed == ["a", "b"]


def test_same_size_with_one_byte_different_past_the_head_is_read(tmp_path, hashed):
    data = JSONL.read_bytes()
    changed = _one_digit_changed_near_the_end(data)
    assert len(changed) == len(data) and changed[:HEAD_BYTES] == data[:HEAD_BYTES] and changed != data
    _copy(JSONL, tmp_path / "a" / "profile_export.jsonl")
    _copy(JSONL, tmp_path / "b" / "profile_export.jsonl", changed)
    result = ingest([tmp_path], manifest=None)
    assert not result.quarantine["reason"].str.startswith("duplicate run").any()
    per_file = result.files.set_index("source_file")["n_requests"]
    assert per_file.iloc[0] == per_file.iloc[1] > 0
    assert hashed == ["a", "b"]  # same size, so both had to be hashed to tell them apart


def test_files_of_a_size_no_other_file_has_are_not_hashed(tmp_path, hashed):
    summary = SUMMARY.read_bytes()
    _copy(SUMMARY, tmp_path / "a" / "mlperf_log_summary.txt")
    _copy(SUMMARY, tmp_path / "b" / "mlperf_log_summary.txt")
    # same run, one more digit in a value: a different size, so it cannot be a copy of a or b
    longer = summary.replace(b"Samples per second: 120.235", b"Samples per second: 120.2351")
    assert len(longer) == len(summary) + 1
    _copy(SUMMARY, tmp_path / "c" / "mlperf_log_summary.txt", longer)
    _copy(JSONL, tmp_path / "d" / "profile_export.jsonl")
    result = ingest([tmp_path], manifest=None)
    assert hashed == ["a", "b"]
    status = dict(zip(result.files["source_file"].map(lambda s: s.split("/")[-2]), result.files["status"]))
    assert status == {"a": "points", "b": "quarantined", "c": "points", "d": "points"}
    assert list(result.quarantine["reason"]) == [
        f"duplicate run: identical to {result.files['source_file'].iloc[0]}"]


def test_sha256_is_the_whole_file_digest(tmp_path):
    data = JSONL.read_bytes()
    assert ingest_pkg._sha256(JSONL) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert ingest_pkg._sha256(empty) == hashlib.sha256(b"").hexdigest()


def test_sizes_held_by_several():
    assert ingest_pkg._sizes_held_by_several([1, 2, 2, 3, 3, 3, 0]) == {2, 3}
    assert ingest_pkg._sizes_held_by_several([]) == set()
