"""Hostile input never loses a run: one bad file or record is that file's or record's quarantine row (file, line,
field, reason in words), and every other file is still read and written out."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd
from conftest import RAW, TEST_DATA

from analysis.ingest import ingest, write_outputs
from analysis.schema import has_flag

VLLM = TEST_DATA / "formats" / "vllm"
STEPS = RAW / "h200" / "decode_sweep_run1.jsonl"
PYTHON_WORDS = re.compile(r"^(AttributeError|TypeError|KeyError|ValueError|OverflowError|IndexError)")


def _decode_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines(), 1) if '"kind": "decode"' in line]


def _written(result, out: Path) -> dict[str, pd.DataFrame]:
    write_outputs(result, out)
    return {"points": pd.read_parquet(out / "points.parquet"), "files": pd.read_csv(out / "files.csv"),
            "quarantine": pd.read_csv(out / "quarantine.csv")}


def test_lone_surrogate_in_a_name_is_replaced_and_flagged_and_the_rest_is_read(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    doc = json.loads((VLLM / "fork_gptoss_conc4.json").read_text())
    doc["model_id"] = "evil\ud800model"
    (src / "surrogate.json").write_text(json.dumps(doc))  # ensure_ascii: the escape "\ud800" is valid JSON
    shutil.copy(VLLM / "fork_kimi_mtp_conc32.json", src / "good.json")
    result = ingest([src])
    out = _written(result, tmp_path / "out")
    points = out["points"].set_index(out["points"]["source_file"].str.rsplit("/", n=1).str[-1])
    assert points.loc["surrogate.json", "model"] == "evil\ufffdmodel"
    assert "invalid-unicode" in points.loc["surrogate.json", "flags"].split(";")
    assert "invalid-unicode" not in points.loc["good.json", "flags"].split(";")
    assert len(points) == 2 and out["quarantine"].empty


def test_file_name_that_is_not_utf8_is_read_and_shown_with_a_replacement_character(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    bad = os.path.join(os.fsencode(src), b"run\xff\xfe.json")
    with open(bad, "wb") as fh:
        fh.write((VLLM / "fork_gptoss_conc4.json").read_bytes())
    shutil.copy(VLLM / "fork_kimi_mtp_conc32.json", src / "good.json")
    result = ingest([src])
    out = _written(result, tmp_path / "out")
    assert sorted(out["files"]["source_file"]) == ["raw/good.json", "raw/run\ufffd\ufffd.json"]
    assert len(out["points"]) == 2
    assert out["points"]["source_file"].str.contains("\ufffd").sum() == 1


def test_a_400_digit_integer_quarantines_its_record_not_the_file(tmp_path):
    lines = STEPS.read_text().splitlines()
    decode = _decode_lines(STEPS.read_text())
    target = decode[5]
    rec = json.loads(lines[target - 1])
    rec["batch_size"] = int("9" * 400)
    lines[target - 1] = json.dumps(rec)
    (tmp_path / "steps.jsonl").write_text("\n".join(lines) + "\n")
    good = ingest([STEPS])
    result = ingest([tmp_path / "steps.jsonl"])
    assert len(result.points) == len(good.points) - 1
    q = result.quarantine
    assert len(q) == 1 and q.iloc[0]["line"] == target and q.iloc[0]["field"] == "batch_size"
    assert q.iloc[0]["reason"].startswith("number too large")


def test_an_integer_beyond_pythons_digit_limit_is_a_record_row_in_words(tmp_path):
    lines = STEPS.read_text().splitlines()
    target = _decode_lines(STEPS.read_text())[0]
    lines[target - 1] = lines[target - 1].replace('"batch_size": 1,', '"batch_size": ' + "7" * 5000 + ",")
    (tmp_path / "steps.jsonl").write_text("\n".join(lines) + "\n")
    result = ingest([tmp_path / "steps.jsonl"])
    assert len(result.points) == len(ingest([STEPS]).points) - 1
    row = result.quarantine.iloc[0]
    assert row["line"] == target and "unreadable JSON" in row["reason"] and "digits" in row["reason"]


def test_wrong_kind_of_value_in_a_readers_error_path_is_a_quarantine_row_in_words(tmp_path):
    doc = json.loads((TEST_DATA / "formats" / "aiperf" / "inferencex_conc1" / "profile_export_aiperf.json")
                     .read_text())
    doc.pop("error_request_count", None)
    doc["error_summary"] = ["timeout"]  # a list of strings where AIPerf writes objects
    (tmp_path / "profile_export_aiperf.json").write_text(json.dumps(doc))
    result = ingest([tmp_path / "profile_export_aiperf.json"])
    row = result.quarantine.iloc[0]
    assert row["field"] == "error_summary" and "must be objects" in row["reason"]
    assert not PYTHON_WORDS.match(row["reason"])


def test_any_reader_exception_becomes_that_files_row_and_other_files_are_read(tmp_path, monkeypatch):
    from analysis.ingest import trtllm

    src = tmp_path / "raw"
    src.mkdir()
    report = json.loads((TEST_DATA / "formats" / "trtllm" / "report_streaming.json").read_text())
    report["decoding_stats"] = ["not", "an", "object"]
    (src / "trtllm.json").write_text(json.dumps(report))
    shutil.copy(VLLM / "fork_gptoss_conc4.json", src / "good.json")
    result = ingest([src])
    q = result.quarantine
    assert list(q["source_file"]) == ["raw/trtllm.json"]
    assert q.iloc[0]["reason"].startswith("could not parse as trtllm-bench-report: unexpected structure")
    assert len(result.points) == 1 and result.points.iloc[0]["source_file"] == "raw/good.json"
    assert trtllm.FORMATS  # the reader itself was used, not bypassed


def test_an_error_outside_any_reader_still_only_costs_that_file(tmp_path, monkeypatch):
    import analysis.ingest as ing

    src = tmp_path / "raw"
    src.mkdir()
    shutil.copy(VLLM / "fork_gptoss_conc4.json", src / "a.json")
    shutil.copy(VLLM / "fork_kimi_mtp_conc32.json", src / "b.json")
    real = ing._head

    def flaky(path):
        if path.name == "a.json":
            raise RuntimeError("disk hiccup")
        return real(path)

    monkeypatch.setattr(ing, "_head", flaky)
    result = ingest([src])
    assert list(result.quarantine["source_file"]) == ["raw/a.json"]
    assert "disk hiccup" in result.quarantine.iloc[0]["reason"]
    assert list(result.points["source_file"]) == ["raw/b.json"]
    assert list(result.files["status"]) == ["quarantined", "points"]


def test_lone_surrogates_in_a_streamed_jsonl_line_do_not_stop_the_file(tmp_path):
    src = TEST_DATA / "formats" / "aiperf" / "inferencex_conc1" / "profile_export.jsonl"
    lines = src.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["error"] = {"code": 500, "type": "x", "message": "bad \ud800 bytes"}
    lines[1] = json.dumps(rec)
    (tmp_path / "profile_export.jsonl").write_text("\n".join(lines) + "\n")
    result = ingest([tmp_path / "profile_export.jsonl"])
    out = _written(result, tmp_path / "out")
    assert len(out["points"]) == 1 and result.quarantine.empty
    errors = pd.read_parquet(tmp_path / "out" / "requests.parquet")["error"]
    assert (errors == "500 x: bad \ufffd bytes").sum() == 1
    assert has_flag(result.points, "failed-run").sum() == 0
