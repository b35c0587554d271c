"""Points that cannot be real are flagged where they are checked (schema.plausibility): TP 16 on 1 GPU, half a GPU,
a TPOT of 0, dates not on the calendar, times of day that do not exist, dates in 2099; a manifest's ``.nan`` no
longer erases a GPU count the log states; and request rows are bounds-checked like points."""

from __future__ import annotations

import datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from analysis.ingest import ingest
from analysis.ingest.requests_table import build_requests, check_requests
from analysis.schema import FLAGS, has_flag, implausible_dates

HEADER = "model,hardware,n_gpus,tp,concurrency,isl,osl,tpot_ms_p50,ttft_ms_p50,output_tok_s,run_id,date\n"
GOOD = "Llama-3.1-8B,H100 SXM,8,8,64,1024,1024,12.5,180,4100,r{n},2026-03-02\n"


def _points(tmp_path: Path, rows: dict[str, str]) -> pd.DataFrame:
    lines = [GOOD.format(n=0)] + [row.replace("{n}", str(i + 1)) for i, row in enumerate(rows.values())]
    path = tmp_path / "typed.csv"
    path.write_text(HEADER + "".join(lines), encoding="utf-8")
    result = ingest([path], manifest=None, fmt="generic-csv")
    assert result.quarantine.empty, result.quarantine.to_dict("records")
    return result.points.set_index(pd.Index(["good", *rows]))


ROWS = {
    "tp 16 on 1 GPU": "Llama-3.1-8B,H100 SXM,1,16,64,1024,1024,12.5,180,4100,r{n},2026-03-02\n",
    "half a GPU": "Llama-3.1-8B,H100 SXM,0.5,,64,1024,1024,12.5,180,4100,r{n},2026-03-02\n",
    "TPOT 0": "Llama-3.1-8B,H100 SXM,8,8,64,1024,1024,0,180,4100,r{n},2026-03-02\n",
}
DATES = {
    "30 February": "Llama-3.1-8B,H100 SXM,8,8,64,1024,1024,12.5,180,4100,r{n},2026-02-30\n",
    "28:90:97": "Llama-3.1-8B,H100 SXM,8,8,64,1024,1024,12.5,180,4100,r{n},2026-03-02T28:90:97\n",
    "2099": "Llama-3.1-8B,H100 SXM,8,8,64,1024,1024,12.5,180,4100,r{n},2099-01-01\n",
}


def test_impossible_setups_are_flagged_implausible(tmp_path):
    pts = _points(tmp_path, ROWS)
    flagged = has_flag(pts, "implausible-value")
    assert flagged.to_dict() == {"good": False, **{k: True for k in ROWS}}


def test_impossible_and_future_dates_are_flagged(tmp_path):
    pts = _points(tmp_path, DATES)
    assert has_flag(pts, "implausible-date").to_dict() == {"good": False, **{k: True for k in DATES}}
    assert "implausible-date" in FLAGS


def test_dates_a_day_ahead_and_unknown_are_accepted():
    today = datetime.date(2026, 3, 2)
    dates = pd.Series(["2026-03-03", "2026-03-05", "unknown", "2024-02-29", "2023-02-29", "2026-03-02 23:59:59"])
    assert implausible_dates(dates, today=today).tolist() == [False, True, False, False, True, False]


def test_a_manifest_nan_does_not_erase_a_known_gpu_count(tmp_path):
    (tmp_path / "typed.csv").write_text(HEADER + GOOD.format(n=0), encoding="utf-8")
    (tmp_path / "manifest.yml").write_text("defaults:\n  n_gpus: .nan\n", encoding="utf-8")
    result = ingest([tmp_path], fmt="generic-csv")
    assert result.points["n_gpus"].tolist() == [8.0]
    q = result.quarantine
    assert q["reason"].tolist() == ["manifest value for n_gpus is NaN (.nan), not a value; ignored"]


@pytest.mark.parametrize("col", ["itl_ms_mean", "tpot_ms", "ttft_ms"])
def test_a_negative_request_time_is_marked_and_reported(col):
    row = {"request_index": 0, "input_tokens": 100, "output_tokens": 50, "ttft_ms": 80.0, "e2e_ms": 900.0,
           "itl_ms_mean": 16.7, "error": ""}
    row[col] = -20.5
    table, problems = check_requests(build_requests("r", [row]))
    assert table.column("error").to_pylist() == [f"implausible: negative {col} -20.5"]
    assert [p["field"] for p in problems] == [col]
    assert isinstance(table, pa.Table)


VLLM = Path(__file__).parent / "data" / "formats" / "vllm" / "fork_gptoss_conc4.json"


@pytest.mark.parametrize(("change", "reason", "field"), [
    ({"duration": 0}, "benchmark duration 0 s with 40 completed requests: no rate can be right", "duration"),
    ({"failed": 1000}, "1000 failed and 40 completed of 40 prompts sent: the counts cannot all be right", "failed"),
])
def test_vllm_counts_that_cannot_be_right_are_quarantined(tmp_path, change, reason, field):
    import json

    rec = json.loads(VLLM.read_text(encoding="utf-8"))
    assert ingest([VLLM], manifest=None).quarantine.empty
    rec.update(change)
    path = tmp_path / VLLM.name
    path.write_text(json.dumps(rec), encoding="utf-8")
    result = ingest([path], manifest=None)
    assert result.points.empty
    assert result.quarantine[["field", "reason"]].values.tolist() == [[field, reason]]
