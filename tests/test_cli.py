"""The perfclaims command line: ingest writes the tables, formats lists every reader, errors are one line."""

import pandas as pd
from conftest import RAW

from analysis import cli
from analysis.ingest import formats


def test_ingest_writes_points_requests_and_quarantine(tmp_path, capsys):
    assert cli.main(["ingest", str(RAW), "--out", str(tmp_path), "--quiet"]) == 0
    points = pd.read_parquet(tmp_path / "points.parquet")
    assert (tmp_path / "requests.parquet").exists() and (tmp_path / "quarantine.csv").exists()
    out = capsys.readouterr().out
    assert "h200-steps" in out and "inferencex" in out
    assert len(points) > 600
    assert set(points["tool"]) >= {"h200-steps", "inferencex"}


def test_formats_lists_every_reader(capsys):
    assert cli.main(["formats"]) == 0
    out = capsys.readouterr().out
    for fmt in formats():
        assert fmt.name in out


def test_missing_path_is_one_line_on_stderr(tmp_path, capsys):
    assert cli.main(["ingest", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no such file or folder" in err and "Traceback" not in err


def test_console_script_runs_main_then_freezes_the_collector(monkeypatch):
    """The installed `perfclaims` is cli.run: main's exit code, with every object left moved out of the shutdown's
    cycle sweep (gc.freeze); in-process callers of main keep the collector as it was."""
    import gc
    import tomllib
    from pathlib import Path

    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["perfclaims"] == "analysis.cli:run"
    monkeypatch.setattr(cli, "main", lambda argv=None: 3)
    before = gc.get_freeze_count()
    try:
        assert cli.run() == 3
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
