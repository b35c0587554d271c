"""A future ``--date`` is refused unless ``--allow-future-date``; ``latest``, the index and ``share`` follow the run
that finished last, so a run filed under 2099 never hides today's."""

from __future__ import annotations

import datetime as dt

import pytest
from test_faults_kill import _slow_suite

from analysis import cli, report
from analysis.report import runs, share


def test_future_date_refused_in_one_line(tmp_path, capsys):
    tomorrow = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)).isoformat()
    with pytest.raises(ValueError, match=f"--date {tomorrow}: after today .*--allow-future-date"):
        runs.check_date(tomorrow)
    assert runs.check_date(tomorrow, allow_future=True) == tomorrow
    suite = _slow_suite(tmp_path)
    assert cli.main(["report", "--config", str(suite), "--out", str(tmp_path / "r"), "--date", "2099-01-01"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perfclaims report: --date 2099-01-01: after today")
    assert not (tmp_path / "r").exists()
    assert "--allow-future-date" in cli.build_parser()._subparsers._group_actions[0].choices["report"].format_help()


def test_latest_index_and_share_follow_the_run_that_finished_last(tmp_path):
    suite, out = _slow_suite(tmp_path), tmp_path / "reports"
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert report.run_suite(suite, out=out, date="2099-01-01", allow_future_date=True) == 0
    assert runs.read_manifest(out / "2099-01-01")["finished"][:10] == today
    assert report.run_suite(suite, out=out) == 0  # today's run, finished after the one dated 2099
    assert (out / "latest").resolve() == (out / today).resolve()
    assert f"Run {today}" in (out / "index.html").read_text()
    assert share.write_share(out).name == f"perfclaims-{today}.html"
    assert [d.name for d in runs.run_dirs(out)] == ["2099-01-01", today]
