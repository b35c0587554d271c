"""The H200 step-timing reader against the raw JSONL, read independently here."""

import json

import pytest
from conftest import RAW

from analysis.ingest import ingest
from analysis.ingest.h200_steps import calibrations

DECODE = RAW / "h200" / "decode_sweep_run1.jsonl"
MOE = RAW / "h200" / "moe_sweep_run1.jsonl"


def raw_records(path, kind):
    return [(i, json.loads(line)) for i, line in enumerate(path.read_text().splitlines(), 1)
            if line.strip() and json.loads(line).get("kind") == kind]


@pytest.fixture(scope="module")
def points():
    return ingest([RAW / "h200"]).points


def test_every_decode_record_is_a_point_with_tok_s_per_user_from_its_median(points):
    for path in (DECODE, MOE):
        records = raw_records(path, "decode")
        assert records
        mine = points[points["source_file"].str.endswith(path.name) & (points["phase"] == "decode")]
        assert len(mine) == len(records)
        by_line = mine.set_index("source_line")
        for line, rec in records:
            row = by_line.loc[line]
            assert row["tok_s_per_user"] == pytest.approx(1000.0 / rec["step_ms_median"], rel=1e-12)
            assert row["step_ms"] == rec["step_ms_median"]
            assert row["batch_size"] == rec["batch_size"]
            assert list(row["step_ms_samples"]) == rec["step_ms"]
            assert row["tok_s_per_user_def"] == "1000/step_ms"


def test_headline_llama_8b_values(points):
    sel = points[(points["model"] == "llama-3.1-8b") & (points["precision"] == "bf16")
                 & (points["framework"] == "pytorch-cudagraph") & (points["context_len"] == 1024)]
    b1 = sel[sel["batch_size"] == 1].iloc[0]
    b512 = sel[sel["batch_size"] == 512].iloc[0]
    assert b1["tok_s_per_user"] == pytest.approx(166.2, abs=0.1)
    assert b512["output_tok_s"] == pytest.approx(14350, rel=0.01)
    assert b512["tok_s_per_gpu"] == pytest.approx(b512["output_tok_s"])  # one GPU
    assert (sel["hardware"] == "H200 SXM").all() and (sel["scope"] == "single-gpu").all()


def test_prefill_records_are_prefill_points_without_per_user_speed(points):
    prefill = points[points["phase"] == "prefill"]
    assert len(prefill) == len(raw_records(DECODE, "prefill"))
    assert prefill["tok_s_per_user"].isna().all()
    assert (prefill["total_tok_s"] > 0).all()


def test_moe_geometry_comes_from_the_model_record(points):
    moe = points[points["model"] == "qwen3-30b-a3b"]
    assert (moe["moe_experts"] == 128).all() and (moe["moe_top_k"] == 8).all()
    assert moe.set_index("batch_size").loc[1, "experts_touched"] == 8


def test_calibrations_are_read_for_the_roofline():
    cal = {c["what"]: c for c in calibrations(DECODE)}
    assert cal["d2d_copy"]["tb_s"] == pytest.approx(4.259)
    assert cal["matmul_bf16"]["tflop_s"] == pytest.approx(694.9)


def test_a_bad_line_is_quarantined_and_the_rest_read(tmp_path):
    lines = DECODE.read_text().splitlines()
    lines.insert(6, '{"kind": "decode", "shape": "x", "precision": "bf16", "batch_size": 1, "step_ms": [1.0],'
                    ' "step_ms_median": -1, "t_wall_s": 1}')
    lines.insert(7, "{not json")
    bad = tmp_path / "sweep.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = ingest([tmp_path])
    assert len(result.points) == len(raw_records(DECODE, "decode")) + len(raw_records(DECODE, "prefill"))
    q = result.quarantine.sort_values("line")
    assert list(q["line"]) == [7, 8]
    assert q.iloc[0]["field"] == "step_ms_median" and "> 0" in q.iloc[0]["reason"]
    assert "invalid JSON" in q.iloc[1]["reason"]


def test_a_tp_shard_counts_the_whole_deployment_per_gpu(points):
    """One GPU's slice of a TP=8 step: the 8-GPU deployment emits batch tokens per step, so per GPU is /8."""
    shard = points[(points["model"] == "llama-3.1-70b-tp8-shard") & (points["phase"] == "decode")]
    assert len(shard) and (shard["n_gpus"] == 8).all() and (shard["tp"] == 8).all()
    assert (shard["scope"] == "node").all() and shard["flags"].str.contains("shard-measured").all()
    row = shard[(shard["batch_size"] == 512) & (shard["precision"] == "bf16")
                & (shard["framework"] == "pytorch-cudagraph")].iloc[0]
    assert row["tok_s_per_gpu"] == pytest.approx(512 * 1000 / row["step_ms"] / 8)


def test_fp8_records_are_flagged_as_unfused_quantisation(points):
    """The sweep's README: fp8 quantises activations by separate kernels (torch._scaled_mm with a dynamic per-tensor
    scale); the reader flags those records, and only those, so the model can charge the kernels they add."""
    dec = points[points["tool"] == "h200-steps"]
    unfused = dec["flags"].fillna("").str.split(";").map(lambda f: "quant-unfused" in f)
    assert unfused.any() and (unfused == (dec["precision"] == "fp8")).all()
    shard_fp8 = dec[(dec["model"] == "llama-3.1-70b-tp8-shard") & (dec["precision"] == "fp8")]
    assert (shard_fp8["flags"] == "shard-measured;random-weights;quant-unfused").all()
    # random weights (the README): every record says so, and the MoE shape's router spreads tokens uniformly, as its
    # measured experts touched show (52 of 128 in layer 0 at batch 8, E·(1 − (1 − k/E)^B) = 51.6)
    assert dec["flags"].str.split(";").map(lambda f: "random-weights" in f).all()
    moe = dec[(dec["model"] == "qwen3-30b-a3b") & (dec["batch_size"] == 8)].iloc[0]
    assert moe["experts_touched"] == 52 and 128 * (1 - (1 - 8 / 128) ** 8) == pytest.approx(51.6, abs=0.05)
