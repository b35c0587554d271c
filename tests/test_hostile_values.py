"""Nonsense is not accepted: plausibility bounds per column on points and per-request rows, impossible summaries give
no point, MLPerf INVALID results stay out of fits, and bad manifest numbers are a quarantine row, not a traceback."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import TEST_DATA

from analysis.ingest import ingest, write_outputs
from analysis.schema import has_flag, trusted

VLLM = TEST_DATA / "formats" / "vllm"
HEADER = "model,hardware,n_gpus,tok_s_per_user,tok_s_per_gpu,ttft_ms_p50,ttft_ms_p90,ttft_ms_p99"


def _csv(tmp_path: Path, *rows: str, extra_header: str = "") -> Path:
    path = tmp_path / "typed_in.csv"
    path.write_text("\n".join([HEADER + extra_header, *rows]) + "\n")
    return path


def test_values_beyond_physical_bounds_are_flagged_untrusted(tmp_path):
    path = _csv(tmp_path,
                "a,H200 SXM,8,1e308,500,100,200,300",      # tok/s/user of 1e308
                "b,H200 SXM,8,50,2000000,100,200,300",     # tok/s/GPU above 1e6
                "c,H200 SXM,8,50,500,100,200,300")         # plausible
    points = ingest([path]).points.set_index("model")
    assert has_flag(points, "implausible-value").tolist() == [True, True, False]
    assert trusted(points).tolist() == [False, False, True]


def test_percentiles_out_of_order_are_flagged_untrusted(tmp_path):
    path = _csv(tmp_path, "a,H200 SXM,8,50,500,300,200,100", "b,H200 SXM,8,50,500,100,100,100")
    points = ingest([path]).points
    assert has_flag(points, "percentiles-unordered").tolist() == [True, False]
    assert trusted(points).tolist() == [False, True]


@pytest.mark.parametrize("column", ["request_rate", "moe_experts", "moe_top_k", "scale_up_domain",
                                    "n_decode_gpus", "tokens_per_step"])
def test_negative_counts_and_rates_quarantine_the_row_naming_the_field(tmp_path, column):
    path = _csv(tmp_path, "a,H200 SXM,8,50,500,100,200,300,-4", "b,H200 SXM,8,50,500,100,200,300,4",
                extra_header=f",{column}")
    result = ingest([path])
    assert list(result.points["model"]) == ["b"]
    row = result.quarantine.iloc[0]
    assert row["line"] == 2 and row["field"] == column and ">" in row["reason"] and "-4" in row["reason"]


def test_negative_duration_in_a_serving_summary_gives_no_point(tmp_path):
    doc = json.loads((VLLM / "fork_gptoss_conc4.json").read_text())
    doc["duration"] = -89.19
    (tmp_path / "run.json").write_text(json.dumps(doc))
    result = ingest([tmp_path / "run.json"])
    assert result.points.empty
    row = result.quarantine.iloc[0]
    assert row["field"] == "duration" and row["reason"] == "negative benchmark duration -89.19 s"


def test_a_file_whose_metrics_are_all_null_is_quarantined_not_an_empty_point(tmp_path):
    doc = json.loads((VLLM / "fork_gptoss_conc4.json").read_text())
    for key in list(doc):
        if key.endswith(("_ms", "throughput")):
            doc[key] = None
    (tmp_path / "run.json").write_text(json.dumps(doc))
    result = ingest([tmp_path / "run.json"])
    assert result.points.empty
    assert result.quarantine.iloc[0]["reason"].startswith("no measured value")
    assert result.files.iloc[0]["status"] == "quarantined"


def test_negative_itl_and_ttft_in_per_request_rows_are_marked_and_left_out(tmp_path):
    doc = json.loads((VLLM / "bench_serve_detailed_spec.json").read_text())
    for key in [k for k in doc if k.endswith("_ms")]:
        del doc[key]  # statistics then come from the per-request rows
    doc["itls"][0][3] = -0.5
    doc["ttfts"][1] = -0.1
    (tmp_path / "run.json").write_text(json.dumps(doc))
    result = ingest([tmp_path / "run.json"])
    write_outputs(result, tmp_path / "out")
    requests = pd.read_parquet(tmp_path / "out" / "requests.parquet").set_index("request_index")
    assert requests.loc[0, "error"] == "implausible: negative inter-token gap -500 ms"
    assert requests.loc[1, "error"].startswith("implausible: negative ttft_ms -100")
    q = result.quarantine.set_index("field")
    assert q.loc["itl_ms", "reason"].startswith("request 0: negative inter-token gap")
    assert q.loc["ttft_ms", "reason"].startswith("request 1: negative ttft_ms")
    point = result.points.iloc[0]
    ok = requests[requests["error"] == ""]
    assert point["ttft_ms_mean"] == pytest.approx(ok["ttft_ms"].mean())  # the marked rows are left out
    assert point["ttft_ms_mean"] > 0 and (ok["ttft_ms"] > 0).all()


def test_mlperf_invalid_result_is_kept_but_untrusted(tmp_path):
    summary = TEST_DATA / "formats" / "mlperf" / "ntuhpc_v5.1_ASUSTeK_ESC_N8_H200x8_TRT_llama2-70b-99_Server" \
        / "mlperf_log_summary.txt"
    folder = tmp_path / summary.parent.name
    folder.mkdir()
    (folder / summary.name).write_text(summary.read_text().replace("Result is : VALID", "Result is : INVALID"))
    points = ingest([folder]).points
    assert len(points) == 1 and has_flag(points, "invalid-result").all()
    assert not trusted(points).any()
    assert trusted(ingest([summary]).points).all()


def test_manifest_numbers_beyond_1e308_or_negative_are_error_rows_not_a_traceback(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    (src / "run.json").write_text((VLLM / "fork_gptoss_conc4.json").read_text())
    (src / "manifest.yml").write_text(
        "files:\n"
        "  - glob: '*.json'\n"
        "    hardware: H200 SXM\n"
        "    n_gpus: 1.0e+999\n"
        "    scale_up_domain: -8\n"
        f"    moe_experts: {'9' * 400}\n"
        "    tp: [1, 2]\n")
    result = ingest([src])
    point = result.points.iloc[0]
    assert point["hardware"] == "H200 SXM" and math.isnan(point["n_gpus"])  # the good value applied, bad ones not
    q = result.quarantine.set_index("field")
    assert list(q["format"].unique()) == ["manifest"] and set(q["source_file"]) == {"raw/manifest.yml"}
    assert "Infinity" in q.loc["files[0] (*.json).n_gpus", "reason"]
    assert "must be > 0, got -8" in q.loc["files[0] (*.json).scale_up_domain", "reason"]
    assert "number too large" in q.loc["files[0] (*.json).moe_experts", "reason"]
    assert "single value" in q.loc["files[0] (*.json).tp", "reason"]
    row = result.files.set_index("source_file").loc["raw/manifest.yml"]
    assert row["status"] == "skipped" and row["note"].endswith("4 of its values ignored (see the quarantine)")
