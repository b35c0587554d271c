"""Runs that fail leave no mess: ingest outputs are written all or none, and an --out that cannot take them is a
one-line error with exit code 2, checked before anything is read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest
from conftest import ROOT, TEST_DATA

from analysis import cli
from analysis.ingest import ingest, write_outputs

VLLM = TEST_DATA / "formats" / "vllm"


def _perfclaims(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_a_failure_while_writing_leaves_the_previous_outputs_whole(tmp_path, monkeypatch):
    out = tmp_path / "processed"
    old = ingest([VLLM / "fork_gptoss_conc4.json"])
    write_outputs(old, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    new = ingest([VLLM])
    assert len(new.points) > len(old.points)
    real = pd.DataFrame.to_csv

    def full_disk(self, path, *args, **kwargs):
        if "files.csv" in str(path):
            raise OSError(28, "No space left on device")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    with pytest.raises(OSError):
        write_outputs(new, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no new points.parquet beside old files.csv
    monkeypatch.undo()
    write_outputs(new, out)
    assert len(pd.read_parquet(out / "points.parquet")) == len(new.points)
    assert sorted(p.name for p in out.iterdir()) == ["files.csv", "points.parquet", "quarantine.csv",
                                                     "requests.parquet"]


def test_out_that_is_a_file_is_a_one_line_error(tmp_path):
    (tmp_path / "taken").write_text("not a folder")
    for out, words in ((tmp_path / "taken", "is a file, not a folder"),
                       (tmp_path / "taken" / "sub", "taken is a file, not a folder")):
        run = _perfclaims("ingest", VLLM / "fork_gptoss_conc4.json", "--out", out, "--quiet")
        assert run.returncode == 2, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1 and words in run.stderr and "Traceback" not in run.stderr


def test_read_only_out_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    out = tmp_path / "ro"
    out.mkdir()
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # root writes anywhere: refuse the way a read-only mount would
        monkeypatch.setattr(os, "access", lambda path, mode: os.path.realpath(path) != str(out.resolve()))
    else:
        out.chmod(0o500)
    try:
        code = cli.main(["ingest", str(VLLM / "fork_gptoss_conc4.json"), "--out", str(out), "--quiet"])
    finally:
        out.chmod(0o755)
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == f"perfclaims ingest: --out {out}: folder is not writable"
    assert list(out.iterdir()) == []


def test_a_write_that_fails_late_is_a_one_line_error_too(tmp_path, monkeypatch, capsys):
    import analysis.ingest as ing

    def denied(result, out_dir, **options):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(ing, "write_outputs", denied)
    code = cli.main(["ingest", str(VLLM / "fork_gptoss_conc4.json"), "--out", str(tmp_path / "x"), "--quiet"])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"perfclaims ingest: cannot write to {tmp_path / 'x'}: Permission denied"


def test_valid_out_still_writes_and_reports(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    shutil.copy(VLLM / "fork_gptoss_conc4.json", src)
    run = _perfclaims("ingest", src, "--out", tmp_path / "new" / "processed", "--quiet")
    assert run.returncode == 0, run.stderr
    assert "1 points" in run.stdout and (tmp_path / "new" / "processed" / "points.parquet").exists()
