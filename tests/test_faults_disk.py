"""A full disk: ``report`` and ``ingest --partition`` stop with one line, remove their temporary files and leave
every previous output as it was (the write is made to raise ENOSPC where the disk would fill)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from test_faults_kill import _listing, _slow_suite

from analysis import cli, config, ingest, report
from analysis.report import runner


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _temps(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if ".tmp" in p.name or ".old" in p.name or p.name == ".work"]


@pytest.mark.parametrize("where", ["copy", "manifest"])
def test_full_disk_during_report_is_one_line_and_leaves_the_previous_run(tmp_path, monkeypatch, capsys, where):
    suite, out = _slow_suite(tmp_path), tmp_path / "reports"
    assert report.run_suite(suite, out=out, date="2026-03-01") == 0
    before = _listing(out)
    if where == "copy":  # the next date copies both unchanged pages
        monkeypatch.setattr(runner.shutil, "copyfile", lambda src, dst: (Path(dst).write_bytes(b"x" * 10),
                                                                         _enospc()))
        date = "2026-03-02"
    else:  # writing run.json fails half way, after its temporary file has begun
        real = Path.write_text

        def half(self, data, *a, **k):
            if self.name.startswith(".run.json.tmp"):
                real(self, data[:10], *a, **k)
                _enospc()
            return real(self, data, *a, **k)

        monkeypatch.setattr(Path, "write_text", half)
        date = "2026-03-01"
    code = cli.main(["report", "--config", str(suite), "--out", str(out), "--date", date])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert err[-1].startswith(f"perfclaims report: --out {out}: the disk is full (No space left on device)"), err
    assert "Traceback" not in "\n".join(err)
    assert _temps(out) == []
    after = _listing(out)
    for name in ("index.html", "2026-03-01/run.json", "2026-03-01/a.html", "2026-03-01/b.results.json"):
        assert after[name] == before[name]
    assert not (out / ".perfclaims-run.lock").exists()


def test_full_disk_while_writing_partitions_leaves_tables_and_datasets_as_they_were(tmp_path, monkeypatch):
    result = ingest.ingest(config.RAW_DATA_DIR / "per-request" / "aiperf-examples-run1", progress=False)
    out = tmp_path / "processed"
    ingest.write_outputs(result, out, partition=True)
    before = _listing(out)
    assert any(n.startswith("points/") for n in before) and any(n.startswith("requests/") for n in before)
    real, calls = ingest._write_dataset, []

    def fill_up(frame, folder):
        calls.append(folder)
        if len(calls) == 2:  # the points dataset is written, the requests dataset fills the disk
            real(frame, folder)
            _enospc()
        return real(frame, folder)

    monkeypatch.setattr(ingest, "_write_dataset", fill_up)
    smaller = ingest.IngestResult(points=result.points.head(3), requests=result.requests.head(3),
                                  quarantine=result.quarantine, files=result.files)
    with pytest.raises(OSError, match="No space left"):
        ingest.write_outputs(smaller, out, partition=True)
    assert all(folder.name.startswith(".") for folder in calls)  # written beside, never in place
    assert _listing(out) == before and _temps(out) == []
