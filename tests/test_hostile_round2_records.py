"""Hostile input, second round: one point reported twice (conflicting numbers or an exact copy re-saved with CRLF
line ends or a byte-order mark) and a generic CSV with one row that is not UTF-8."""

from __future__ import annotations

from pathlib import Path

from analysis import history
from analysis.history_words import conflicts_text
from analysis.ingest import ingest
from analysis.schema import FLAGS, UNTRUSTED_FLAGS, has_flag

GENERIC = Path(__file__).parent / "data" / "formats" / "generic_csv" / "claims_typed_in.csv"
HEADER = "model,hardware,n_gpus,precision,concurrency,isl,osl,tpot_ms_p50,output_tok_s,run_id,date\n"
ROW = "Llama-3.1-8B,H100 SXM,1,fp8,64,1024,1024,12.5,{gpu},nightly-7,2026-03-02\n"


def _write(path: Path, text: str, *, crlf=False, bom=False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.replace("\n", "\r\n") if crlf else text
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data.encode())
    return path


def test_conflicting_records_are_both_kept_and_flagged(tmp_path):
    _write(tmp_path / "a" / "run.csv", HEADER + ROW.format(gpu=63.4))
    _write(tmp_path / "b" / "run.csv", HEADER + ROW.format(gpu=31.7))
    result = ingest([tmp_path], manifest=None)
    pts = result.points
    assert sorted(pts["output_tok_s"]) == [31.7, 63.4]
    assert has_flag(pts, "conflicting-duplicate").all()
    assert "conflicting-duplicate" in FLAGS and "conflicting-duplicate" in UNTRUSTED_FLAGS
    found = history.conflicts(pts)
    assert [s.split("/", 1)[1] for s in found["source"]] == ["a/run.csv:2", "b/run.csv:2"]
    said = conflicts_text(found)
    assert said.startswith("2 records of 1 points conflict") and "63.4" in said and "31.7" in said
    assert history.dated_points(pts).empty  # neither record is compared as if it were the measurement


def test_history_page_names_the_conflict_in_its_headline(tmp_path):
    from analysis.pages import history as page
    _write(tmp_path / "a" / "run.csv", HEADER + ROW.format(gpu=63.4))
    _write(tmp_path / "b" / "run.csv", HEADER + ROW.format(gpu=31.7))
    built = page.build(ingest([tmp_path], manifest=None).points)
    assert built.headline().startswith("2 records of 1 points conflict")


def test_copies_resaved_with_crlf_or_bom_count_once_and_are_listed(tmp_path):
    text = HEADER + ROW.format(gpu=63.4)
    _write(tmp_path / "a" / "run.csv", text)
    _write(tmp_path / "b" / "run.csv", text, crlf=True)
    _write(tmp_path / "c" / "run.csv", text, bom=True)
    result = ingest([tmp_path], manifest=None)
    assert len(result.points) == 1 and not has_flag(result.points, "conflicting-duplicate").any()
    q = result.quarantine
    assert len(q) == 2 and (q["line"] == 2).all()
    assert all(r.startswith("duplicate record: identical to ") and r.endswith("a/run.csv line 2") for r in q["reason"])
    files = result.files.set_index(result.files["source_file"].str.split("/").str[-2])
    assert files.loc["a", "points"] == 1 and files.loc["b", "points"] == 0 and files.loc["b", "quarantined"] == 1


def test_a_latin1_row_quarantines_that_row_alone_with_its_line(tmp_path):
    lines = GENERIC.read_bytes().splitlines(keepends=True)
    bad_at = 3  # the first data row, typed in a Latin-1 spreadsheet
    lines[bad_at - 1] = lines[bad_at - 1].replace(b"B200", "B200 Münster".encode("latin-1"))
    path = tmp_path / "typed.csv"
    path.write_bytes(b"".join(lines))
    result = ingest([path], manifest=None, fmt="generic-csv")
    good = ingest([GENERIC], manifest=None, fmt="generic-csv")
    assert len(result.points) == len(good.points) - 1 > 0
    q = result.quarantine[~result.quarantine["line"].isin(good.quarantine["line"])]
    assert len(result.quarantine) == len(good.quarantine) + 1
    assert list(q["line"]) == [bad_at]
    assert q["reason"].iloc[0] == "not UTF-8 text (byte 0xfc at column 24); row not read"
    assert list(result.points["source_line"]) == list(good.points["source_line"])[1:]
