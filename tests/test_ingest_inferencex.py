"""InferenceX readers against the raw files, read independently here."""

import json

import pytest
from conftest import RAW

from analysis.ingest import ingest
from analysis.ingest.inferencex import decode_result_filename

API = RAW / "inferencex" / "benchmarks.json"
SAMPLES = RAW / "inferencex-samples"


@pytest.fixture(scope="module")
def api_points():
    return ingest([API]).points


def test_every_api_row_is_a_point(api_points):
    rows = json.loads(API.read_text())
    assert len(api_points) == len(rows) == 435


def test_api_units_and_gpu_accounting(api_points):
    rows = json.loads(API.read_text())
    for i in (0, 100, 250, 400):
        rec, row = rows[i], api_points.set_index("source_line").loc[i + 1]
        m = rec["metrics"]
        assert row["tpot_ms_p50"] == pytest.approx(m["median_tpot"] * 1000)
        assert row["ttft_ms_p99"] == pytest.approx(m["p99_ttft"] * 1000)
        assert row["tok_s_per_user"] == pytest.approx(1000 / (m["median_tpot"] * 1000))
        assert row["concurrency"] == rec["conc"]
        if rec["disagg"]:
            n = rec["num_prefill_gpu"] + rec["num_decode_gpu"]
            assert row["n_gpus"] == n
            assert row["output_tok_s"] == pytest.approx(m["output_tput_per_gpu"] * rec["num_decode_gpu"])
        else:
            assert row["n_gpus"] == rec["decode_tp"]
            assert row["tok_s_per_gpu"] == pytest.approx(m["output_tput_per_gpu"])


def test_scope_classes(api_points):
    gb = api_points[api_points["hardware"].str.startswith("GB")]
    assert set(gb["scope"]) <= {"rack", "multi-node"}
    assert (gb.loc[gb["n_gpus"] <= 72, "scope"] == "rack").all()
    single = api_points[~api_points["disagg"].astype(bool)]
    assert (single["scope"] == "node").all() and (single["n_gpus"] <= 8).all()
    assert (api_points.loc[api_points["hardware"] == "B200", "scale_up_domain"] == 8).all()


def test_p99_interactivity_is_flagged_as_the_slow_tail(api_points):
    assert api_points["flags"].str.contains("percentile-inverted").sum() >= 400


def test_agg_file_and_name_fields():
    path = next(SAMPLES.glob("agg_kimik2.5_1k1k_*conc4_*.json"))
    rec = json.loads(path.read_text())
    row = ingest([path]).points.iloc[0]
    assert row["hardware"] == "MI355X" and row["precision"] == "int4" and row["spec_decode"] == "mtp"
    assert row["tpot_ms_p50"] == pytest.approx(rec["median_tpot"] * 1000)
    assert row["tok_s_per_gpu"] == pytest.approx(rec["output_tput_per_gpu"])
    fields = decode_result_filename(path.name)
    assert fields["tp"] == "8" and fields["conc"] == "4" and fields["spec"] == "mtp" and fields["disagg"] == "false"


def test_agentx_and_runner_records():
    agentx = next((SAMPLES / "agentx_aggregate").glob("*.json"))
    rec = json.loads(agentx.read_text())
    row = ingest([agentx]).points.iloc[0]
    assert row["scenario"] == "agentic-coding"
    assert row["ttft_ms_p50"] == pytest.approx(rec["request_metrics"]["latency"]["ttft"]["p50"] * 1000)
    assert row["output_tok_s"] == pytest.approx(rec["request_metrics"]["throughput"]["output"]["tokens_per_second"])
    runner = next(SAMPLES.rglob("conc16.json"))
    rec = json.loads(runner.read_text())
    row = ingest([runner]).points.iloc[0]
    assert row["hardware"] == "B200" and row["n_gpus"] == 8
    assert row["tok_s_per_user"] == pytest.approx(1000 / rec["metrics"]["median_tpot_ms"])


def test_trimmed_summaries_use_the_manifest_for_hardware():
    result = ingest([RAW])
    trimmed = result.points[result.points["format"] == "inferencex-trimmed"]
    assert len(trimmed) == 169
    assert (trimmed["hardware"] == "H200 SXM").all() and (trimmed["n_gpus"] == 8).all()
    glm = trimmed[trimmed["run_id"] == "glm5_fp8_vllm_tp8_isl1024_osl128_conc16"].iloc[0]
    raw = json.loads(next(RAW.rglob("glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json")).read_text())
    assert glm["tpot_ms_p50"] == pytest.approx(raw["median_tpot"] * 1000)
    assert glm["isl"] == pytest.approx(raw["total_input_tokens"] / raw["completed"])
    assert glm["precision"] == "fp8" and glm["tp"] == 8


def test_points_that_break_littles_law_are_flagged_and_left_out(api_points):
    """Streams decoding at once (output tok/s ÷ tok/s/user) must match concurrency × decode share of latency."""
    from analysis.schema import trusted

    p = api_points
    decoding = p["concurrency"] * (p["e2e_ms_p50"] - p["ttft_ms_p50"]) / p["e2e_ms_p50"]
    ratio = (p["output_tok_s"] / p["tok_s_per_user"]) / decoding
    flagged = p["flags"].str.contains("inconsistent-throughput")
    assert flagged.sum() == ((ratio < 0.25) | (ratio > 2.0)).sum() == 3
    assert ratio[~flagged].dropna().between(0.25, 2.0).all()
    # the MI355X atom row at concurrency 512 reports ~40x too little output for its latencies
    mi = p[flagged & (p["hardware"] == "MI355X")].iloc[0]
    assert mi["concurrency"] == 512 and ratio[mi.name] < 0.05
    assert not trusted(p)[flagged].any()


def test_decode_workers_are_read_from_the_api_rows(api_points):
    """``decode_num_workers``: separate decode workers, each its own collective group (the speed-of-light bound of
    a point charges one worker's GPUs); aggregated rows (0 workers in the file) have none."""
    rows = json.loads((RAW / "inferencex" / "benchmarks.json").read_text())
    p = api_points.reset_index(drop=True)
    for rec, (_, pt) in zip(rows, p.iterrows()):
        n = rec.get("decode_num_workers") or 0
        if rec.get("disagg") and n >= 1:
            assert pt["n_workers"] == n and pt["n_decode_gpus"] == rec["num_decode_gpu"]
        else:
            assert pt["n_workers"] != pt["n_workers"]  # NaN
    five = p[(p["n_workers"] == 5) & (p["hardware"] == "GB200 NVL72")].iloc[0]
    assert five["n_decode_gpus"] / five["n_workers"] == 4  # five TP4 workers on 20 decode GPUs
