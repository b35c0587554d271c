"""`perfclaims formats` names, for every reader, the tool versions its tests read."""

from __future__ import annotations

from analysis import cli
from analysis.ingest import formats
from analysis.ingest.tested_on import TESTED_ON


def test_every_reader_says_what_it_was_tested_on():
    assert {f.name for f in formats()} <= set(TESTED_ON)


def test_formats_prints_the_tested_on_column(capsys):
    assert cli.main(["formats"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].rstrip().endswith("tested on")
    for fmt in formats():
        assert TESTED_ON[fmt.name] in out
