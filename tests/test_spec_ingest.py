"""Speculative-decoding columns from every reader that can fill them, checked against the raw files read here.

Real files: the upstream ``vllm bench serve`` console log under ``data/raw/inferencex-samples`` (SemiAnalysisAI/
InferenceX @bf030960, its "Speculative Decoding" block), the InferenceX API snapshot and ``agg_*.json``. The SGLang,
vLLM-JSON and TensorRT-LLM fixtures in ``tests/data/formats`` are the ones the format tests already use (made from
the tools' source, as their test modules say: no real files of those kinds were found). The AIPerf spec-decode
aggregate is MADE in each test from the real InferenceX AIPerf 0.8.0 aggregate (``inferencex_conc4``) by adding
metric objects named as in ``aiperf/metrics/types/spec_decode_metrics.py`` (values made up, consistent).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.ingest.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
FORMATS = ROOT / "tests" / "data" / "formats"
CONSOLE = RAW / "inferencex-samples/local-results/mtp-fixed-ar-minimax-lcb-v8-20260529-092323/vllm_bench_serve_conc32.log"


def _console_value(label: str) -> str:
    m = re.search(rf"^{re.escape(label)}:\s+(\S+)", CONSOLE.read_text(), re.MULTILINE)
    return m.group(1)


def test_the_vllm_console_log_gives_its_measured_acceptance_length():
    points = ingest([CONSOLE], manifest=load_manifest(None)).points
    assert len(points) == 1
    row = points.iloc[0]
    assert _console_value("Acceptance length") == "2.33"
    assert row["acceptance_length"] == pytest.approx(2.33)
    assert row["acceptance_source"] == "measured"
    # "Draft tokens" / "Drafts" = 65808 / 21936 = 3 drafted per step
    assert float(_console_value("Draft tokens")) / float(_console_value("Drafts")) == 3
    assert row["draft_tokens"] == 3
    assert row["spec_method"] == "unknown"  # the console does not name the method ...


def test_the_shipped_manifest_names_the_method_of_the_console_run():
    points = ingest([CONSOLE]).points  # ... the shipped manifest does (from the upstream server log)
    row = points.iloc[0]
    assert (row["spec_method"], row["draft_tokens"], row["acceptance_length"], row["acceptance_source"]) == \
        ("eagle3", 3.0, pytest.approx(2.33), "measured")


def test_sglang_one_batch_server_acc_length_minus_one_means_no_speculative_decoding():
    path = FORMATS / "sglang" / "one_batch_server.jsonl"
    raw = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    points = ingest([path]).points.sort_values("batch_size")
    assert raw[0]["acc_length"] == -1
    first, second = points.iloc[0], points.iloc[1]
    assert first["spec_method"] == "none" and first["spec_decode"] == "none"
    assert math.isnan(first["acceptance_length"]) and first["acceptance_source"] == "unknown"
    assert second["acceptance_length"] == pytest.approx(raw[1]["acc_length"])
    assert second["acceptance_source"] == "measured" and second["spec_method"] == "unknown"


def test_sglang_bench_serving_accept_length_and_server_info(tmp_path):
    path = FORMATS / "sglang" / "bench_serving.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    points = ingest([path]).points
    with_accept = points[points["acceptance_length"].notna()]
    assert with_accept["acceptance_length"].tolist() == pytest.approx(
        [r["accept_length"] for r in lines if r.get("accept_length")])
    assert set(with_accept["acceptance_source"]) == {"measured"}
    # MADE from the same line: its accept_length removed, server_info carrying SGLang's /server_info fields
    # (internal_states[].avg_spec_accept_length and the speculative server arguments)
    rec = dict(next(r for r in lines if r.get("accept_length")))
    rec.pop("accept_length")
    rec["server_info"] = {**rec.get("server_info", {}), "speculative_algorithm": "EAGLE",
                          "speculative_num_steps": 3, "speculative_num_draft_tokens": 4,
                          "internal_states": [{"avg_spec_accept_length": 2.71, "last_gen_throughput": 90.0}]}
    made = tmp_path / "made_bench_serving_server_info.jsonl"
    made.write_text(json.dumps(rec) + "\n")
    row = ingest([made], manifest=load_manifest(None)).points.iloc[0]
    assert (row["acceptance_length"], row["acceptance_source"], row["spec_method"], row["draft_tokens"]) == \
        (pytest.approx(2.71), "measured", "mtp", 3.0)  # EAGLE without a draft model path: the model's own MTP


def test_vllm_json_spec_decode_metrics():
    path = FORMATS / "vllm" / "bench_serve_detailed_spec.json"
    raw = json.loads(path.read_text())
    row = ingest([path]).points.iloc[0]
    assert row["acceptance_length"] == pytest.approx(raw["spec_decode_acceptance_length"])
    assert row["acceptance_source"] == "measured"
    assert row["draft_tokens"] == raw["spec_decode_draft_tokens"] / raw["spec_decode_num_drafts"]


def test_trtllm_decoding_stats():
    path = FORMATS / "trtllm" / "report_streaming.json"
    stats = json.loads(path.read_text())["decoding_stats"]
    row = ingest([path]).points.iloc[0]
    assert row["acceptance_length"] == pytest.approx(stats["acceptance_length_percentiles"]["average"])
    assert row["acceptance_source"] == "measured"
    assert row["spec_method"] == stats["mode"].lower() == "mtp"
    assert math.isnan(row["draft_tokens"])  # per-request draft counts, not per step


def _aiperf_with_spec(tmp_path: Path, extra: dict) -> Path:
    """MADE: the real InferenceX AIPerf 0.8.0 aggregate with spec-decode metric objects added."""
    folder = tmp_path / "made_spec_run"
    folder.mkdir()
    doc = json.loads((FORMATS / "aiperf" / "inferencex_conc4" / "profile_export_aiperf.json").read_text())
    doc.update(extra)
    (folder / "profile_export_aiperf.json").write_text(json.dumps(doc))
    return folder


def test_aiperf_spec_decode_metrics(tmp_path):
    folder = _aiperf_with_spec(tmp_path, {
        "spec_decode_acceptance_length": {"unit": "ratio", "avg": 2.58, "p50": 2.6},
        "spec_decode_token_weighted_acceptance_length": {"unit": "ratio", "avg": 2.64},
        "total_spec_decode_steps": {"unit": "count", "avg": 1000},
        "total_draft_tokens": {"unit": "tokens", "avg": 3000},
        "total_accepted_draft_tokens": {"unit": "tokens", "avg": 1640},
    })
    row = ingest([folder], manifest=load_manifest(None)).points.iloc[0]
    assert row["acceptance_length"] == pytest.approx(2.64)  # the run-level token-weighted one first
    assert row["acceptance_source"] == "measured"
    assert row["draft_tokens"] == 3.0


def test_aiperf_without_spec_decode_metrics_says_nothing():
    row = ingest([FORMATS / "aiperf" / "inferencex_conc4" / "profile_export_aiperf.json"]).points.iloc[0]
    assert math.isnan(row["acceptance_length"]) and row["acceptance_source"] == "unknown"


def test_aiperf_per_request_mean_when_no_token_weighted_length(tmp_path):
    folder = _aiperf_with_spec(tmp_path, {"spec_decode_acceptance_length": {"unit": "ratio", "avg": 2.58}})
    row = ingest([folder], manifest=load_manifest(None)).points.iloc[0]
    assert row["acceptance_length"] == pytest.approx(2.58) and math.isnan(row["draft_tokens"])


def test_inferencex_rows_name_their_method_but_not_their_acceptance():
    api = json.loads((RAW / "inferencex" / "benchmarks.json").read_text())
    points = ingest([RAW / "inferencex" / "benchmarks.json"]).points
    assert sorted(points["spec_method"].unique()) == sorted({r["spec_method"] for r in api}) == ["mtp", "none"]
    assert (points["spec_method"].value_counts()["mtp"]
            == sum(r["spec_method"] == "mtp" for r in api))
    assert points["acceptance_length"].isna().all() and set(points["acceptance_source"]) == {"unknown"}
    agg = next((RAW / "inferencex-samples").glob("agg_*conc4*.json"))
    row = ingest([agg]).points.iloc[0]
    assert row["spec_method"] == json.loads(agg.read_text())["spec_decoding"] == "mtp"


def test_a_forced_launch_setting_overrides_the_logs_measured_source(tmp_path):
    """Mechanism test: a real log paired in a tmp manifest with a real recipe (this pairing is not a real run)."""
    shutil.copy(CONSOLE, tmp_path / "run.log")
    shutil.copy(ROOT / "tests/data/launch/vllm_1p1d-tep4-tp4-c1-agentic.yaml", tmp_path / "recipe.yaml")
    (tmp_path / "manifest.yml").write_text('files:\n  - glob: "run.log"\n    launch_settings: recipe.yaml\n')
    result = ingest([tmp_path / "run.log"])
    row = result.points.iloc[0]
    assert (row["acceptance_source"], row["acceptance_length"], row["spec_method"], row["draft_tokens"]) == \
        ("forced", pytest.approx(2.78), "eagle3", 3.0)
    assert result.quarantine.empty


def test_vllm_metadata_can_name_the_method_and_a_bad_word_is_reported(tmp_path):
    # MADE from bench_serve_detailed_spec.json: `--metadata spec_method=...` pairs as vLLM writes them (strings)
    raw = json.loads((FORMATS / "vllm" / "bench_serve_detailed_spec.json").read_text())
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({**raw, "spec_method": "deepseek_mtp", "acceptance_source": "forced"}))
    bad.write_text(json.dumps({**raw, "spec_method": "tree-of-thought", "acceptance_source": "vibes"}))
    result = ingest([good, bad], manifest=load_manifest(None))
    by_file = result.points.set_index(result.points["source_file"].str.rsplit("/", n=1).str[-1])
    assert by_file.loc["good.json", "spec_method"] == "mtp"
    assert by_file.loc["good.json", "acceptance_source"] == "forced"  # the run's metadata says it was forced
    assert by_file.loc["bad.json", "spec_method"] == "unknown"
    assert by_file.loc["bad.json", "acceptance_source"] == "measured"  # the file's own counters still count
    q = result.quarantine.sort_values("field")
    assert q["field"].tolist() == ["acceptance_source", "spec_method"]
    assert "'tree-of-thought' not recognised" in q["reason"].iloc[1]


def test_a_failed_run_measured_no_acceptance(tmp_path):
    # MADE from bench_serve_detailed_spec.json: the same record with completed 0, as a failed vLLM run writes it
    raw = json.loads((FORMATS / "vllm" / "bench_serve_detailed_spec.json").read_text())
    path = tmp_path / "failed.json"
    path.write_text(json.dumps({**raw, "completed": 0}))
    row = ingest([path], manifest=load_manifest(None)).points.iloc[0]
    assert math.isnan(row["acceptance_length"]) and row["acceptance_source"] == "unknown"


def test_aiperf_csv_spec_decode_rows(tmp_path):
    # MADE from the real InferenceX AIPerf CSV (inferencex_conc4): rows added to its Metric,Value section under the
    # headers spec_decode_metrics.py gives these metrics (values made up, consistent)
    text = (FORMATS / "aiperf" / "inferencex_conc4" / "profile_export_aiperf.csv").read_text()
    assert "\nMetric,Value\n" in text
    extra = ("Token-Weighted Acceptance Length,2.64\nTotal Spec Decode Steps,1000\nTotal Draft Tokens,3000\n"
             "Total Accepted Draft Tokens,1640\n")
    made = tmp_path / "made_spec_csv" / "profile_export_aiperf.csv"
    made.parent.mkdir()
    made.write_text(text.replace("\nMetric,Value\n", "\nMetric,Value\n" + extra))
    row = ingest([made], manifest=load_manifest(None)).points.iloc[0]
    assert (row["acceptance_length"], row["acceptance_source"], row["draft_tokens"]) == (2.64, "measured", 3.0)
