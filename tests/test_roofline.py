"""Speed of light: the worked examples of docs/ROOFLINE.md section 4 (A, C, E) through `perfclaims sol` and the
library, the H200 batch-1 numbers, MoE coverage, speculative decoding and the spec-table conventions."""

from __future__ import annotations

import re

import pytest

from analysis import roofline, specs
from analysis.cli import main as cli_main
from analysis.commands import cli_sol
from analysis.roofline import speed_of_light

TEST_DATA = __import__("pathlib").Path(__file__).parent / "data" / "claims"


def _sol_output(capsys, **kw) -> dict:
    args = dict(gpus=1, batch=1, context=1024, tokens_per_step=1.0, list_names=False)
    args.update(kw)
    assert cli_sol(**args) == 0
    out = capsys.readouterr().out
    values = {}
    for line in out.splitlines():
        m = re.match(r"^(\w+)\s+([\d,.]+)(?:\s+([\d,.]+))?\s*$", line)
        if m:
            values[m.group(1)] = float(m.group(2).replace(",", ""))
            if m.group(3):
                values[m.group(1) + "_achievable"] = float(m.group(3).replace(",", ""))
    values["_text"] = out
    return values


# --- worked example A: C01/C02 DeepSeek-R1 on 8x B200, batch 1 --------------------------------------
def test_example_a_deepseek_r1_on_8_b200_cli(capsys):
    # "bf16 attention + NVFP4 MoE" (C02's recipe: router bf16 too); ISL 1024 / OSL 2048 -> mean context 2048.
    v = _sol_output(capsys, model="DeepSeek-R1", hardware="DGX B200", precision="fp4,attention=bf16,router=bf16",
                    gpus=8, context=2048)
    assert v["bytes_per_step_gb"] == pytest.approx(38, rel=0.02)          # "~38 GB read per step"
    assert v["tok_s_per_user"] == pytest.approx(1670, rel=0.02)           # "SOL ~1,670 tok/s/user"
    assert v["bandwidth_tb_s"] == pytest.approx(64)                       # 8 x 8.0 TB/s (upper end of 7.7-8.0)
    assert v["experts_per_layer"] == pytest.approx(8.0)


def test_example_a_library_parts():
    s = speed_of_light("deepseek r1", "B200", "fp4,attention=bf16,router=bf16", gpus=8, context=2048)
    # Attention 11.41B params read in bf16 (ROOFLINE 2: "22.8 GB"), 8 of 256 experts in 58 layers at 4.5 bits.
    m = specs.model("DeepSeek-R1")
    assert m.params_b["attention"] * 2 == pytest.approx(22.8, abs=0.1)
    routed = 58 * 8 * 44.04e6 * 4.5 / 8
    assert routed / 1e9 == pytest.approx(11.49, abs=0.02)
    # The MLA latent is replicated on all 8 attention-TP ranks: 8 x 2048 x 70,272 B.
    assert s.kv_bytes == pytest.approx(8 * 2048 * 70272)
    assert s.bound == "memory"
    assert s.fits


# --- worked example C: C17 Llama-3.1-405B on one GB200 NVL72 ----------------------------------------
@pytest.mark.parametrize("precision,expected", [("bf16", 713), ("fp8", 1427), ("fp4-noscale", 2853)])
def test_example_c_llama_405b_on_nvl72_cli(capsys, precision, expected):
    # ROOFLINE 4 counts weights only (batch 1, communication and KV ignored): context 0.
    v = _sol_output(capsys, model="Llama 3.1 405B", hardware="GB200 NVL72", precision=precision, gpus=72, context=0)
    assert v["bandwidth_tb_s"] == pytest.approx(576)
    assert v["tok_s_per_user"] == pytest.approx(expected, rel=0.02)


def test_example_c_holds_with_kv_and_nvfp4_scales_cost_a_ninth():
    bf16 = speed_of_light("Llama 3.1 405B", "GB200 NVL72", "bf16", gpus=72, context=1024)
    assert bf16.tok_s_per_user == pytest.approx(713, rel=0.02)  # the KV of one 1k sequence changes little
    # 2,853 assumes bare 4-bit weights; NVFP4 stores one FP8 scale per 16 values (4.5 bits) -> 4/4.5 of it.
    bare = speed_of_light("Llama 3.1 405B", "GB200 NVL72", "fp4-noscale", gpus=72, context=0)
    nvfp4 = speed_of_light("Llama 3.1 405B", "GB200 NVL72", "fp4", gpus=72, context=0)
    assert nvfp4.weight_bytes / bare.weight_bytes == pytest.approx(4.5 / 4, rel=1e-3)


# --- worked example E: Llama-3.1-70B FP8 on one H200 ------------------------------------------------
def test_example_e_llama_70b_fp8_on_h200_cli(capsys):
    one = _sol_output(capsys, model="llama-3.1-70b", hardware="H200", precision="fp8", batch=1, context=8192)
    assert one["tok_s_per_user"] == pytest.approx(66.5, rel=0.02)
    b16 = _sol_output(capsys, model="Llama 3.1 70B", hardware="h200 sxm", precision="FP8", batch=16, context=8192)
    assert b16["tok_s_per_user"] == pytest.approx(42.7, rel=0.02)
    assert b16["tok_s_total"] == pytest.approx(683, rel=0.02)
    assert "fits" in b16["_text"] and "DOES NOT FIT" not in b16["_text"]
    b64 = _sol_output(capsys, model="Llama 3.1 70B", hardware="H200 SXM", precision="fp8", batch=64, context=8192)
    assert "DOES NOT FIT" in b64["_text"]


def test_example_e_library_capacity():
    s = speed_of_light("Llama 3.1 70B", "H200 SXM", "fp8", batch=64, context=8192)
    assert not s.fits
    assert s.hbm_needed_gb > 141
    # KV alone for 64 x 8192 tokens at 327,680 B/token is 172 GB.
    assert s.kv_bytes / 1e9 == pytest.approx(64 * 8192 * 327680 / 1e9)


# --- the H200 sweep at batch 1 ----------------------------------------------------------------------
def test_h200_llama_8b_bf16_batch1(raw_points):
    table = roofline.batch1_speed_of_light_for_points(raw_points)
    row = table[(table["model"] == "llama-3.1-8b") & (table["precision"] == "bf16")
                & (table["context_len"] == 1024) & (table["framework"] == "pytorch-cudagraph")].iloc[0]
    assert row["model_table"] == "Llama 3.1 8B"
    assert row["tok_s_per_user"] == pytest.approx(166, rel=0.01)                 # measured
    assert row["bytes_per_step_gb"] == pytest.approx(15.1, abs=0.05)              # weights once + KV
    assert row["bandwidth_tb_s_measured"] == pytest.approx(4.26, abs=0.01)
    assert row["sol_tok_s_per_user_measured"] == pytest.approx(281, rel=0.01)
    assert row["sol_tok_s_per_user_datasheet"] == pytest.approx(317, rel=0.01)
    assert row["fraction_of_sol_measured"] == pytest.approx(166.2 / 281.2, rel=0.01)
    # Every batch-1 H200 point is there, and none beats the datasheet bound.
    n_b1 = int(((raw_points["hardware"] == "H200 SXM") & (raw_points["batch_size"] == 1)
                & (raw_points["phase"] == "decode")).sum())
    assert len(table) == n_b1
    known = table.dropna(subset=["fraction_of_sol_datasheet"])
    assert (known["fraction_of_sol_datasheet"] < 1).all()


def test_h200_shapes_map_to_the_model_table(raw_points):
    table = roofline.batch1_speed_of_light_for_points(raw_points)
    shard = table[table["model"] == "llama-3.1-70b-tp8-shard"]
    assert set(shard["model_table"]) == {"Llama 3.1 70B"} and set(shard["gpus"]) == {8}
    moe = table[table["model"] == "qwen3-30b-a3b"].iloc[0]
    assert moe["model_table"] == "Qwen3-30B-A3B"
    # 8 of 128 experts in 48 layers plus 1.23B always-read params, bf16: about 6.1 GB.
    assert moe["weight_bytes_gb"] == pytest.approx((1.23 + 48 * 8 * 4.72e-3) * 2, rel=0.01)


def test_h200_calibration_is_read_from_the_records():
    cal = roofline.h200_calibration(str(TEST_DATA / "h200_calibration.jsonl"))
    assert cal["bandwidth_tb_s"] == pytest.approx(4.259)
    assert cal["bf16"] == pytest.approx(694.9) and cal["fp8"] == pytest.approx(1293.9)


# --- building blocks --------------------------------------------------------------------------------
def test_moe_coverage_matches_roofline_section_3_2():
    touched = [roofline.experts_touched(t, n_experts=256, top_k=8) for t in (1, 8, 32, 64, 128)]
    assert [round(x) for x in touched] == [8, 57, 163, 222, 252]
    assert roofline.experts_touched(16, n_experts=8, top_k=2) == pytest.approx(7.9, abs=0.05)


def test_tau_formula():
    assert roofline.tokens_per_step([0.85]) == pytest.approx(1.85)
    assert roofline.tokens_per_step(0.8, draft_tokens=3) == pytest.approx((1 - 0.8 ** 4) / (1 - 0.8))
    dense = speed_of_light("Llama 3.1 8B", "H200", "bf16", tokens_per_step=2.5)
    assert dense.tok_s_per_user == pytest.approx(2.5 * speed_of_light("Llama 3.1 8B", "H200", "bf16").tok_s_per_user,
                                                 rel=1e-3)  # dense weights are read once whatever is verified


def test_bytes_per_weight():
    assert roofline.bytes_per_weight("bf16") == 2
    assert roofline.bytes_per_weight("fp8") == 1
    assert roofline.bytes_per_weight("fp4") == pytest.approx(4.5 / 8)     # NVFP4 with its scales
    assert roofline.bytes_per_weight("mxfp4") == pytest.approx(4.25 / 8)
    assert roofline.bytes_per_weight("int4") == pytest.approx(4.5 / 8)
    with pytest.raises(ValueError, match="unknown precision"):
        roofline.bytes_per_weight("fp3")


def test_ranges_use_the_upper_end_as_datasheet_peak():
    assert specs.parse_range("7.7-8.0") == (7.7, 8.0)
    assert specs.parse_range("~2500") == (2500, 2500)
    assert specs.parse_range("13125-14000") == (13125, 14000)
    b200 = specs.hardware("B200")
    assert b200.hbm_bandwidth_tb_s == 8.0 and b200.hbm_bandwidth_tb_s_low == 7.7
    assert specs.hardware("b300").dense_tflops["fp4"] == 14000


def test_names_match_case_and_punctuation_insensitively():
    assert specs.match_model_name("LLAMA_3.1_8b") == "Llama 3.1 8B"
    assert specs.match_model_name("DeepSeek-R1-0528") == "DeepSeek-R1"
    assert specs.match_model_name("DeepSeek V4.1 Flash") == "DeepSeek-V4-Flash"
    assert specs.match_model_name("Kimi-K2.5") is None
    assert specs.hardware("gb300-nvl72").rack_gpus == 72
    assert specs.hardware("H200").name == "H200 SXM"
    with pytest.raises(KeyError, match="unknown hardware"):
        specs.hardware("A100")


def test_sliding_window_and_v4_kv():
    m = specs.model("gpt-oss-120b")
    kv = roofline.kv_bytes_per_sequence(m, 4096)
    assert kv["read"] == pytest.approx(2048 * (18 * 4096 + 18 * 128))     # ROOFLINE 2 / models.csv formula
    v4 = specs.model("DeepSeek-V4-Flash")
    stored = roofline.kv_bytes_per_sequence(v4, 2 ** 20)["stored"]
    assert stored / 2 ** 30 == pytest.approx(5.75, abs=0.02)             # "5.75 GiB per 1M-token sequence"


def test_cli_list_and_errors(capsys):
    assert cli_sol(model=None, hardware=None, precision=None, list_names=True) == 0
    out = capsys.readouterr().out
    assert "DeepSeek-V4-Flash" in out and "GB300 NVL72" in out
    assert cli_sol(model="Nope 1B", hardware="H200", precision="bf16") == 2
    assert "unknown model 'Nope 1B'" in capsys.readouterr().err
    assert cli_main(["sol", "--model", "Llama 3.1 8B", "--hardware", "H200", "--precision", "bf16"]) == 0
    assert "tok_s_per_user" in capsys.readouterr().out
    assert cli_main(["sol", "--model", "Llama 3.1 8B", "--hardware", "H200", "--precision", "fp5"]) == 2


def test_communication_floor_per_layer_collectives():
    from analysis import roofline

    assert roofline.communication_floor("DeepSeek-V4-Flash", "GB300 NVL72", gpus=1).floor_ms == 0
    node = roofline.communication_floor("DeepSeek-R1", "B200", gpus=8)
    assert (node.n_layers, node.collectives_per_step, node.where) == (61, 122, "node")
    # no measured EP row on B200, but the NCCL all-reduce of an 8-GPU node is measured (8-byte messages, read at one
    # hidden vector as an extrapolation): a mixture of experts may shard by TP, so the floor uses it
    assert node.layout == roofline.TP_ALL_REDUCE and node.basis == "extrapolated" and node.latency_us < 5.0
    assert node.floor_ms == pytest.approx(122 * node.latency_us / 1000) and "nccl" in " ".join(node.sources).lower()
    rack = roofline.communication_floor("DeepSeek-V4-Flash", "GB300 NVL72", gpus=72)
    assert rack.where == "rack" and rack.basis == "extrapolated" and rack.floor_ms == pytest.approx(
        43 * 2 * rack.latency_us / 1000)
    assert rack.layout == roofline.EP_DISPATCH_COMBINE  # TP stops at the model's 64 attention heads
    # 8 GPUs of GB300: the fused all-reduce (10.9 µs) beats EP dispatch + combine (24.9 µs on average)
    tray = roofline.communication_floor("DeepSeek-V4-Flash", "GB300 NVL72", gpus=8)
    assert tray.layout == roofline.TP_ALL_REDUCE and tray.latency_us == pytest.approx(10.9)
    assert rack.latency_us == pytest.approx(roofline.measured_collective_us("DeepSeek-V4-Flash", "GB300 NVL72", 72)[0])
    dense = roofline.communication_floor("Llama 3.1 70B", "H200 SXM", gpus=8)  # NCCL all-reduce rows
    assert dense.basis != "assumption" and dense.latency_us < 5.0 and "nccl" in " ".join(dense.sources).lower()
    assert roofline.communication_floor("DeepSeek-R1", "B200", gpus=16).where == "scale-out"
