"""The performance model on the shipped data: the one step-time equation, recipes, the physical terms, the
calibration within physical bounds, leave-one-group-out validation, the scope facts and `perfclaims model`."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import config, roofline, specs
from analysis.perfmodel import beside as bs
from analysis.perfmodel import calibrate as cb
from analysis.perfmodel import configfile, recipes, scope
from analysis.perfmodel import predict as pr
from analysis.perfmodel import step as st
from analysis.perfmodel import validate as va


@pytest.fixture(scope="module")
def points():
    return pd.read_parquet(config.POINTS_FILE)


@pytest.fixture(scope="module")
def train(points):
    return cb.training_table(points)


@pytest.fixture(scope="module")
def cal(train):
    return cb.calibrate(train)


@pytest.fixture(scope="module")
def report(points):
    return va.validate(points)


# --- the equation -------------------------------------------------------------------------------------

def test_step_time_is_overhead_plus_overlapped_roofline_plus_collectives():
    eff = st.Efficiency(bw_share=0.5, flop_share=0.25, overhead_ms_per_layer=0.1, overlap=0.5, comm_scale=2.0)
    out = st.step_time(4.0, 1.0, 0.3, eff, 10)
    # memory 4/0.5 = 8, compute 1/0.25 = 4: max 8 + (1 − 0.5)·4 = 10; overhead 10 × 0.1 = 1; collectives 0.6.
    assert float(out["step_ms"]) == pytest.approx(1.0 + 10.0 + 0.6)
    assert float(out["memory_ms"] + out["compute_ms"]) == pytest.approx(10.0)
    assert st.dominant(out) == "memory"
    full = st.step_time(4.0, 1.0, 0.0, st.Efficiency(bw_share=1.0, flop_share=1.0, overlap=1.0), 10)
    assert float(full["step_ms"]) == 4.0  # perfect overlap at the datasheet: the roofline max


def test_weight_gemms_and_attention_each_take_their_own_roofline():
    """A decode step runs the weight GEMMs and attention one after the other: each is bounded by its own bytes or its
    own FLOPs, so a memory-bound attention does not hide under compute-bound GEMMs."""
    eff = st.Efficiency(bw_share=1.0, flop_share=1.0, overlap=1.0)
    # GEMMs: 2 ms of weight bytes, 6 ms of FLOPs -> 6; attention: 5 ms of KV, 1 ms of FLOPs -> 5
    out = st.step_time(7.0, 7.0, 0.0, eff, 10, kv_ms=5.0, attention_ms=1.0)
    assert float(out["step_ms"]) == pytest.approx(11.0)  # one max over the totals would say 7
    assert (float(out["memory_ms"]), float(out["compute_ms"])) == pytest.approx((5.0, 6.0))
    # the routed experts' bytes at expert_bw of the achieved bandwidth
    slow = st.Efficiency(bw_share=0.5, flop_share=1.0, overlap=1.0, expert_bw=0.5)
    assert float(st.hbm_ms(4.0, 1.0, slow)) == pytest.approx((3.0 + 1.0 / 0.5) / 0.5)


def test_a_host_bound_step_is_the_longer_of_host_and_gpu_time():
    """Eager PyTorch launches every kernel from the host while the GPU runs the last ones: the step is the longer
    of the two (the H200 sweep: the eager 8B BF16 step is 20.8 ms at batch 1 and 14.3 ms at batch 128, where the
    CUDA-graph step, all GPU time, is 12.9 ms)."""
    eff = st.Efficiency(bw_share=1.0, flop_share=1.0, overhead_ms_per_layer=0.5, overlap=1.0)
    graph = st.step_time(12.0, 1.0, 0.0, eff, 32)
    host = st.step_time(12.0, 1.0, 0.0, eff, 32, host_bound=1.0)
    assert float(graph["step_ms"]) == pytest.approx(16.0 + 12.0)
    assert float(host["step_ms"]) == pytest.approx(16.0) and float(host["overhead_ms"]) == pytest.approx(4.0)
    assert float(st.step_time(20.0, 1.0, 0.0, eff, 32, host_bound=1.0)["step_ms"]) == pytest.approx(20.0)
    assert st.host_bound(st.Deployment("llama-3.1-8b", "H200 SXM", framework="pytorch-eager"))
    assert not st.host_bound(st.Deployment("llama-3.1-8b", "H200 SXM", framework="pytorch-cudagraph"))


def test_tensor_parallel_mla_holds_its_down_projections_whole():
    """SGLang's DeepSeek attention (python/sglang/srt/models/deepseek_v2.py) builds ``fused_qkv_a_proj_with_mqa`` as
    a ReplicatedLinear from the hidden state to q_lora_rank + kv_lora_rank + qk_rope_head_dim: every TP rank reads
    it whole. From the shipped DeepSeek-R1 config: 61 × 7168 × (1536 + 512 + 64) = 0.9235 B parameters."""
    from analysis import specs

    m = specs.model("DeepSeek-R1")
    assert m.attention_replicated_params_b == pytest.approx(61 * 7168 * 2112 / 1e9)
    assert specs.model("llama-3.1-8b").attention_replicated_params_b == 0.0  # GQA splits by heads
    tp8 = st.geometry(st.Deployment("DeepSeek-R1", "H200 SXM", n_gpus=8, tp=8, precision="fp8"), verify=1.0)
    dp8 = st.geometry(st.Deployment("DeepSeek-R1", "H200 SXM", n_gpus=8, tp=8, ep=8, dp=8, precision="fp8"),
                      verify=1.0)
    one = st.geometry(st.Deployment("DeepSeek-R1", "H200 SXM", n_gpus=1, tp=1, precision="fp8"), verify=1.0)
    # fp8 attention: one byte per weight; a rank holds 7/8 of the replicated part more than an even split gives
    assert tp8.fixed_bytes - one.fixed_bytes / 8 == pytest.approx(m.attention_replicated_params_b * 1e9 * 7 / 8,
                                                                 rel=1e-9)
    assert dp8.fixed_bytes > tp8.fixed_bytes  # attention DP holds all of attention on every rank


def test_unfused_fp8_matmuls_are_priced_at_the_bf16_rate(points):
    """The H200 sweep's FP8 (activations quantised by separate kernels) is no faster than its BF16 even at batch 512,
    where the GEMMs bound the step: the model prices those matmuls at the BF16 rate, their bytes at FP8's."""
    sweep = points[points["source_file"].astype(str).str.contains("h200/decode_sweep") & (points["batch_size"] == 512)
                   & (points["framework"] == "pytorch-cudagraph") & (points["model"] == "llama-3.1-8b")]
    step = sweep.set_index("precision")["step_ms"]
    assert step["fp8"] > step["bf16"]  # 37.4 against 35.7 ms
    base = dict(model="llama-3.1-8b", hardware="H200 SXM", precision="fp8")
    fused = st.geometry(st.Deployment(**base), verify=1.0)
    unfused = st.geometry(st.Deployment(**base, quant_unfused=True), verify=1.0)
    bf16 = st.geometry(st.Deployment(model="llama-3.1-8b", hardware="H200 SXM", precision="bf16"), verify=1.0)
    assert unfused.fixed_bytes == fused.fixed_bytes < bf16.fixed_bytes
    assert unfused.compute_ms_per_token == pytest.approx(bf16.compute_ms_per_token)
    assert fused.compute_ms_per_token < bf16.compute_ms_per_token


def test_mtp_drafts_run_their_layer_and_the_head_once_per_draft_token():
    """With drafts from the model's own MTP layer (SGLang's EAGLE worker on DeepSeek's NextN layer), a step runs
    ``verify − 1`` draft passes of that layer and the output head: their bytes and their layers' fixed cost."""
    base = dict(model="DeepSeek-R1", hardware="H200 SXM", n_gpus=8, tp=8, precision="fp8")
    none = st.geometry(st.Deployment(**base), verify=4.0)
    mtp = st.geometry(st.Deployment(**base, spec_method="mtp"), verify=4.0)
    other = st.geometry(st.Deployment(**base, spec_method="dspark"), verify=4.0)
    assert (none.draft_layers, mtp.draft_layers, other.draft_layers) == (0.0, 6.0, 0.0)  # 3 passes × (1 layer + head)
    from analysis import specs

    m = specs.model("DeepSeek-R1")
    head = m.params_b["lm_head"] * 2 * 1e9 / 8  # bf16 head, split 8 ways
    assert mtp.fixed_bytes - none.fixed_bytes > 3 * head  # three heads and three MTP layers' always-read weights
    assert mtp.expert_bytes == pytest.approx(none.expert_bytes * (1 + 3 / m.n_moe_layers))


def test_group_id_is_stable_and_nan_blind():
    a = st.group_id({"model": "m", "tp": 8.0, "isl": float("nan")})
    assert a == st.group_id({"isl": None, "tp": 8.0, "model": "m"}) and len(a) == 12
    assert a != st.group_id({"model": "m", "tp": 4.0, "isl": None})


# --- recipes and terms -----------------------------------------------------------------------------------

def test_deepseek_v4_flash_native_recipe_from_its_config():
    r = recipes.recipe("DeepSeek-V4-Flash", "native")
    assert r.basis == "table"
    assert r.sources["routed_experts"][:2] == ("fp4", "published")
    assert r.sources["attention"][:2] == ("fp8", "published") and r.sources["lm_head"][0] == "bf16"
    cfg = json.loads((config.SPECS_DIR / "configs" / "deepseek-ai--DeepSeek-V4-Flash_config.json").read_text())
    assert cfg["expert_dtype"] == "fp4" and cfg["quantization_config"]["quant_method"] == "fp8"
    # V4.1 Flash is computed as V4 Flash (models.csv alias); DeepSeek-R1 at fp8 is its shipped checkpoint.
    assert recipes.recipe("DeepSeek-V4.1-Flash", "native").text == r.text
    assert "lm_head=bf16" in recipes.recipe("DeepSeek-R1-0528", "fp8").text
    assert recipes.recipe("llama-3.1-8b", "bf16").basis == "uniform"
    # A serving label names the experts' precision: V4 Flash at "fp4" is its checkpoint, at "fp8" an all-FP8 variant.
    assert recipes.recipe("DeepSeek-V4-Flash", "fp4").text == r.text
    assert (recipes.recipe("DeepSeek-V4-Flash", "fp8").basis, recipes.recipe("DeepSeek-V4-Flash", "fp8").text) == \
        ("uniform", "fp8")
    assert recipes.recipe("gpt-oss-120b", "fp4").text == recipes.recipe("gpt-oss-120b", "native").text


def test_fp4_against_fp8_at_the_shipped_recipe(cal):
    rows = {r["precision"]: r for r in scope.precision_facts("DeepSeek-V4.1-Flash", "GB300 NVL72", n_gpus=1,
                                                             concurrency=1, cal=cal, framework="sglang")}
    assert rows["native"]["recipe"] == rows["fp4"]["recipe"] != rows["fp8"]["recipe"] == "fp8"
    # At batch 1 on one GPU the shipped FP4-expert recipe reads fewer bytes than all-FP8, but the per-layer overhead
    # is the same: faster by less than the byte ratio.
    assert 1.0 < rows["native"]["vs_fp8"] < 1.8 and rows["fp8"]["vs_fp8"] == 1.0


def test_terms_of_llama_8b_on_one_h200():
    dep = st.Deployment(model="llama-3.1-8b", hardware="H200", precision="bf16", context_len=1024)
    geo = st.geometry(dep, verify=1.0)
    m = specs.model("llama-3.1-8b")
    weights = sum(v for c, v in m.params_b.items()) * 2e9  # every component at bf16, read once
    assert geo.fixed_bytes == pytest.approx(weights)
    t = st.terms(geo, [1, 64])
    kv = 1024 * 32 * 2 * 8 * 128 * 2  # context × layers × K,V × kv heads × head dim × bf16
    assert t["memory_ms"][0] == pytest.approx((weights + kv + m.hidden * 2) / 4.8e12 * 1e3)
    assert t["compute_ms"][1] == pytest.approx(64 * t["compute_ms"][0])
    assert geo.comm == () and t["collectives_ms"].tolist() == [0.0, 0.0]


def test_collectives_per_step_follow_the_parallelism():
    tp8 = st.geometry(st.Deployment(model="DeepSeek-R1", hardware="B200", n_gpus=8, tp=8, precision="fp8"), verify=1)
    # TP8 attention: one all-reduce per layer (61), one per dense FFN layer (3), one per TP MoE layer (58).
    assert [(c[0], c[1], c[3]) for c in tp8.comm] == [("all-reduce", "nvlink-node", 61), ("all-reduce", "nvlink-node", 3),
                                                      ("all-reduce", "nvlink-node", 58)]
    ep = st.geometry(st.Deployment(model="DeepSeek-R1", hardware="GB200 NVL72", n_gpus=32, tp=1, ep=32, dp=32,
                                   precision="fp4"), verify=1)
    assert [(c[0], c[1], c[2], c[3]) for c in ep.comm] == [("ep-dispatch", "nvl72-domain", 32, 58),
                                                          ("ep-combine", "nvl72-domain", 32, 58)]
    # EP under tensor-parallel attention: every rank holds every token, and the engines sum the experts' outputs
    # with one all-reduce per MoE layer (step.attention_data_parallel): B300 SGLang FP4 TP4 EP4 runs no dispatch or combine
    tp_ep = st.geometry(st.Deployment(model="DeepSeek-R1", hardware="B300", n_gpus=4, tp=4, ep=4, precision="fp4"),
                        verify=1)
    assert [(c[0], c[2], c[3]) for c in tp_ep.comm] == [("all-reduce", 4, 61), ("all-reduce", 4, 3),
                                                        ("all-reduce", 4, 58)]
    # EP with no TP (InferenceX's MoRI rows recorded TP1 EP8): each rank attends to its own tokens, so all-to-all of
    # its own eighth of the batch, and every rank holds the whole attention, as under attention DP
    ep_only = st.geometry(st.Deployment(model="DeepSeek-R1", hardware="MI355X", n_gpus=8, tp=1, ep=8, precision="fp4"),
                          verify=1)
    assert [(c[0], c[4]) for c in ep_only.comm] == [("ep-dispatch", 8), ("ep-combine", 8)]
    dp8 = st.geometry(st.Deployment(model="DeepSeek-R1", hardware="MI355X", n_gpus=8, tp=1, ep=8, dp=8,
                                    precision="fp4"), verify=1)
    assert ep_only.fixed_bytes == dp8.fixed_bytes and ep_only.kv_bytes_per_seq == dp8.kv_bytes_per_seq
    assert st.attention_data_parallel(1, 8, 1) and not st.attention_data_parallel(4, 4, 1)


def test_ep_under_tp_attention_moves_four_validated_groups_to_all_reduces(report):
    """The validated groups with EP over tensor-parallel attention (DP 1) are the ones the all-to-all rule changed:
    B300 SGLang FP4 TP4 EP4 (two lengths), H200 Dynamo-TensorRT-LLM TP8 EP8, MI355X MoRI-SGLang TP8 EP8; each now
    pays an all-reduce per MoE layer over its TP group and no dispatch or combine."""
    moved = [g for g in report["groups"]
             if (g["config"]["ep"] or 1) > 1 and (g["config"]["dp"] or 1) <= 1 and (g["config"]["tp"] or 1) > 1]
    assert sorted(g["group"].split(" | ")[1] + " " + g["framework"] for g in moved) == \
        ["B300 sglang", "B300 sglang", "H200 SXM dynamo-trt", "MI355X mori-sglang"]
    for g in moved:
        dep = cb.deployment({**g["config"], "flags": ""})
        geo = st.geometry(dep, verify=1.0)
        names = [c[0] for c in geo.comm]
        assert "ep-dispatch" not in names and names.count("all-reduce") == 3, g["group"]


def test_worker_too_small_for_the_weights_is_widened_and_said():
    dep = st.Deployment(model="DeepSeek-R1-0528", hardware="GB200 NVL72", n_gpus=8, tp=1, precision="fp8",
                        disagg=True, n_prefill_gpus=4, n_decode_gpus=4)
    par = st.parallelism(dep)
    assert (par.worker_gpus, par.tp, par.workers) == (4, 4, 1.0) and "cannot hold the weights" in par.note


# --- calibration ------------------------------------------------------------------------------------------

def test_training_rows_carry_group_ids_and_known_models_only(train, points):
    assert len(train) > 400 and train["group_id"].str.fullmatch(r"[0-9a-f]{12}").all()
    assert set(train["model"]) <= {m for m in points["model"].unique() if specs.match_model_name(m)}
    assert "GLM-5-FP8" not in set(train["model"])  # no models.csv row: never calibrated on, never guessed


def test_calibration_is_bounded_by_physics(cal):
    levels = [cal.global_, *cal.families.values(), *cal.cells.values()]
    for eff in levels:
        for name, (lo, hi) in st.BOUNDS.items():
            assert lo <= getattr(eff, name) <= hi, (name, eff)
    assert cb.TAU_BOUNDS[0] <= cal.tau_spec <= cb.TAU_BOUNDS[1]
    assert all(cb.TAU_BOUNDS[0] <= t <= cb.TAU_BOUNDS[1] for t in cal.taus.values())
    assert cb.ROUTING_BOUNDS[0] <= cal.routing <= cb.ROUTING_BOUNDS[1]
    assert {"H200", "B200", "B300", "MI355X"} <= set(cal.families)
    assert 0.5 < cal.duty["all"] <= 1.0


def test_calibration_fits_the_shipped_points(train, cal):
    arrays = cb._Arrays.of(cb._with_prefill_share(train, cal.prefill))
    r = cb._residuals(list(cal.global_.to_dict().values()) + [cal.tau_spec, cal.routing], arrays,
                      np.ones(len(train)))
    assert float(np.median(np.abs(np.expm1(r)))) < 0.25  # one parameter set for all hardware: within 25% median


def test_bootstrap_resamples_groups(train, cal):
    draws = cb.bootstrap(train, cal, n_boot=3, seed=1, only=("H200", "sglang"))
    assert len(draws) == 3 and all("H200 · sglang" in d.cells for d in draws)
    assert len({round(d.cells["H200 · sglang"].bw_share, 6) for d in draws}) > 1


# --- validation ---------------------------------------------------------------------------------------------

def test_validation_report_shape_and_summary(report):
    assert {"groups", "median_error_tok_s_per_gpu", "median_error_tok_s_per_user", "p90_error_tok_s_per_gpu",
            "p90_error_tok_s_per_user"} <= set(report)
    groups = report["groups"]
    assert report["n_groups"] == len(groups) >= 30
    eu = [g["error_tok_s_per_user"] for g in groups]
    assert report["median_error_tok_s_per_user"] == pytest.approx(float(np.median(eu)))
    assert report["p90_error_tok_s_per_user"] == pytest.approx(float(np.percentile(eu, 90)))
    for g in groups:
        assert {"group", "config", "points", "error_tok_s_per_gpu", "error_tok_s_per_user"} <= set(g)
        assert len({p["concurrency"] for p in g["points"]}) >= va.MIN_CONCURRENCIES
        errs = [abs(p["predicted_tok_s_per_user"] / p["measured_tok_s_per_user"] - 1) for p in g["points"]]
        assert g["error_tok_s_per_user"] == pytest.approx(float(np.mean(errs)))


def test_a_cells_fit_counts_a_group_past_the_scale_by_its_error_not_its_square():
    """The soft-L1 loss per group (calibrate._group_loss): the weighted squares of a group's rows sum to
    2c²(√(1 + s/c²) − 1) of the group's mean squared log error s; a group well within c counts as in least squares,
    one far beyond it by about 2c(√s − c) (linear in its error) instead of s."""
    lr = np.array([0.01, -0.02, 0.015, 0.5, 0.7, 0.6])
    groups = np.array([0, 0, 0, 1, 1, 1])
    w = np.full(6, 1 / np.sqrt(3))
    out = cb._group_loss(lr, w, groups, 0.1)
    for g in (0, 1):
        m = groups == g
        s = float(np.mean(lr[m] ** 2))
        assert float(np.sum((w[m] * out[m]) ** 2)) == pytest.approx(2 * 0.01 * (np.sqrt(1 + s / 0.01) - 1))
    small, large = float(np.mean(lr[:3] ** 2)), float(np.mean(lr[3:] ** 2))
    assert float(np.sum((w[:3] * out[:3]) ** 2)) == pytest.approx(small, rel=0.01)  # least squares within c
    # far beyond c: 2c(√s − c), linear in the group's root-mean-square error
    assert float(np.sum((w[3:] * out[3:]) ** 2)) == pytest.approx(2 * 0.1 * (np.sqrt(large) - 0.1), rel=0.02)
    assert float(np.sum((w[3:] * out[3:]) ** 2)) < large / 2
    # signs are kept, and a row of a group fitted exactly is left at 0
    assert np.all(np.sign(out) == np.sign(lr))
    assert cb._group_loss(np.zeros(3), np.ones(3), np.zeros(3, dtype=int), 0.1).tolist() == [0.0, 0.0, 0.0]


def test_the_cell_fit_gives_up_the_group_it_cannot_fit(report):
    """What the group loss trades in the H200 · SGLang cell (README step 12): the 1K/1K MTP group, whose acceptance no
    source states, is no longer followed (beyond 35% per user, 35.1% under least squares), and the cell's 1K/8K group
    it had pulled comes within 10% (12.9% under least squares)."""
    err = {g["group"]: g["error_tok_s_per_user"] for g in report["groups"]}
    cell = "DeepSeek-R1-0528 | H200 SXM | fp8 | sglang | 8 GPU | TP8 EP1 DP1 | "
    assert err[cell + "mtp | ISL 1024 OSL 1024"] > 0.35
    assert err[cell + "none | ISL 1024 OSL 8192"] < 0.10
    assert err[cell + "mtp | ISL 8192 OSL 1024"] < 0.10


def test_validation_numbers_as_measured(report):
    # The honest numbers of this model on the shipped points (README "perfclaims model"); the issue's targets
    # (median ≤ 15% tok/s/GPU, ≤ 10% tok/s/user, p90 ≤ 35%) are met by the point estimates, the tok/s/user median
    # by 0.8 points and not by its bootstrap interval: see the README.
    assert report["median_error_tok_s_per_user"] == pytest.approx(0.0920, abs=0.003)
    assert report["median_error_tok_s_per_user"] <= 0.10
    assert report["median_error_tok_s_per_gpu"] == pytest.approx(0.0931, abs=0.003)
    # the tok/s/GPU target, met by the point estimate and by the median's bootstrap interval over the groups
    lo, hi = report["median_interval_tok_s_per_gpu"]
    assert lo < report["median_error_tok_s_per_gpu"] < hi < 0.15
    # the per-user target is met by the median, and inside its interval: these groups cannot tell
    assert report["median_interval_tok_s_per_user"][0] < report["median_error_tok_s_per_user"] < 0.10 < \
        report["median_interval_tok_s_per_user"][1]
    eg = np.array([g["error_tok_s_per_gpu"] for g in report["groups"] if g["error_tok_s_per_gpu"] is not None])
    assert va._median_interval(eg) == [lo, hi]  # seeded: the same every run
    assert report["p90_error_tok_s_per_gpu"] == pytest.approx(0.2833, abs=0.01)
    assert report["p90_error_tok_s_per_user"] == pytest.approx(0.2675, abs=0.01)
    # the p90 by nearest rank, and the groups beyond 35%: the target holds without interpolating between groups
    eu = sorted(g["error_tok_s_per_user"] for g in report["groups"])
    assert report["p90_rank_error_tok_s_per_user"] == eu[int(np.ceil(0.9 * len(eu))) - 1] < 0.35
    assert report["p90_rank_error_tok_s_per_gpu"] < 0.35
    assert (report["beyond_35_tok_s_per_user"], report["beyond_35_tok_s_per_gpu"]) == (2, 3)
    # the same groups predicted by the calibration on every group, their own included: the model's form leaves a
    # per-user median of 8.7% with nothing held out; leaving each group out adds 0.5 points per user and 1.0 per GPU
    ins = report["in_sample"]
    assert ins["median_error_tok_s_per_user"] == pytest.approx(0.0873, abs=0.003)
    assert ins["median_error_tok_s_per_gpu"] == pytest.approx(0.0832, abs=0.003)
    assert ins["median_error_tok_s_per_user"] < report["median_error_tok_s_per_user"]
    assert ins["median_error_tok_s_per_gpu"] < report["median_error_tok_s_per_gpu"]
    assert ins["p90_error_tok_s_per_user"] < report["p90_error_tok_s_per_user"]
    for g in report["groups"]:  # every group has both, computed from its own points
        assert 0 <= g["error_tok_s_per_user_in_sample"] < 1.0
    # what a left-out group still shares with the calibration: its model (29 of 39 groups are DeepSeek-R1-0528)
    assert report["models"]["DeepSeek-R1-0528"] == 29 and sum(report["models"].values()) == 39
    kinds = report["by_kind"]
    assert (kinds["serving"]["n_groups"], kinds["step_sweeps"]["n_groups"]) == (30, 9)
    assert kinds["step_sweeps"]["median_error_tok_s_per_user"] == kinds["step_sweeps"]["median_error_tok_s_per_gpu"]
    # 5 groups (15 newest points) state no ISL, OSL or TP: predicted and scored, not calibrated on
    assert (report["unstated_groups"], report["unstated_rows"]) == (5, 15)
    # 6 groups (7 newest points) record a layout that cannot hold their decode GPUs (calibrate.layout_consistent)
    assert (report["layout_groups"], report["layout_rows"]) == (6, 7)
    assert report["training_rows"] == 503 and report["rerun_rows"] == 1232
    # the floor software sets: the same configuration re-run within a week moves 0.4%, months apart 8-12%
    spread = {(b["days_from"], b["days_to"]): b for b in report["rerun_spread"]}
    assert [b["configuration_dates"] for b in spread.values()] == [60, 33, 103, 137]
    assert spread[(0, 7)]["median_step_time_change"] < 0.01
    assert 0.07 < spread[(8, 30)]["median_step_time_change"] < spread[(31, 90)]["median_step_time_change"] < \
        spread[(91, 100_000)]["median_step_time_change"] == pytest.approx(0.120, abs=0.001)


# --- software drift, measured by re-runs ------------------------------------------------------------------

def _tpot(points, hardware, isl, osl, date, conc, history):
    p = points[(points["hardware"] == hardware) & (points["framework"] == "sglang") & (points["isl"] == isl)
               & (points["osl"] == osl) & (points["spec_method"] == "none") & (points["concurrency"] == conc)
               & (points["date"].astype(str) == date) & points["model"].str.startswith("DeepSeek-R1")]
    p = p[p["flags"].astype(str).str.contains("dated-history") == history]
    assert len(p) == 1
    return float(p["tpot_ms_p50"].iloc[0])


def test_drift_is_the_same_configuration_measured_on_two_dates(points, train):
    """MI325X SGLang DeepSeek-R1 1K/1K: its newest run (2026-05-18) and its InferenceX re-run of 2026-02-27 share
    concurrency 4 only (the newest run has 4 and 8); the drift is their ratio, read from the points table, no model."""
    drift = cb.drift_table(train)["MI325X · sglang"]
    gid = train[(train["hardware"] == "MI325X") & (train["isl"] == 1024) & (train["osl"] == 1024)
                & (train["spec_method"] == "none") & ~train["history"].astype(bool)]["group_id"].unique()
    assert len(gid) == 1
    newest = _tpot(points, "MI325X", 1024, 1024, "2026-05-18", 4, history=False)
    then = _tpot(points, "MI325X", 1024, 1024, "2026-02-27", 4, history=True)
    assert (newest, then) == pytest.approx((14.199453, 23.901585), rel=1e-6)
    assert drift[gid[0]]["2026-02-27"] == pytest.approx(np.log(then / newest))
    assert drift[gid[0]]["2026-05-18"] == 0.0


def test_a_run_on_an_older_date_is_predicted_with_its_cells_drift(train, report):
    """The MI325X 1K/8K run is from 2026-02-27, when the cell's other configurations ran 1.5–1.7× slower than on
    their newest date (2026-05-18): without the drift the model predicted it 1.8× too fast at concurrency 4 (error
    39.7%); with it, the left-out group's error falls below 25%."""
    left_out = (train["hardware"] == "MI325X") & (train["isl"] == 1024) & (train["osl"] == 8192)
    cal = cb.calibrate(train[~left_out])
    factor, n, on = cal.date_factor("MI325X", "sglang", "2026-02-27")
    assert n == 2 and on == "2026-02-27" and 1.5 < factor < 1.75  # 1K/1K and 8K/1K, each re-run on that date
    assert cal.date_factor("MI325X", "sglang", "") == (1.0, 0, "")
    assert cal.date_factor("MI325X", "sglang", "1999-01-01") == (1.0, 0, "")  # before any re-run
    # software changes with an image: a date without a re-run takes the last re-run date before it
    assert cal.date_factor("MI325X", "sglang", "2026-03-01") == (factor, n, "2026-02-27")
    # a framework the drift table does not know reads the family's cells
    assert cal.date_factor("MI325X", "unknown", "2026-02-27")[1:] == (2, "2026-02-27")
    g = _group(report, "MI325X | fp8 | sglang", "| none | ISL 1024 OSL 8192")
    assert g["error_tok_s_per_user"] < 0.25
    assert g["points"][0]["concurrency"] == 4


def test_reruns_enter_the_calibration_as_drift_only(train):
    # the parameters rest on the newest runs only; the re-runs enter as the drift that puts each newest point on its
    # cell's newest software: the newest points, moved there by hand, give the same parameters with no re-run at all
    hist = train["history"].astype(bool)
    assert hist.sum() > 1000
    a = cb.calibrate(train)
    moved = cb.at_newest_software(train[~hist], cb.drift_table(train), cb.drift_curves(train))
    b = cb.calibrate(moved)
    assert a.global_ == b.global_ and a.cells == b.cells and a.duty == b.duty
    assert a.drift and not b.drift
    assert cb.calibrate(train[~hist]).cells != a.cells  # without the drift the older newest points move the fit


def test_calibrating_points_are_put_on_their_cells_newest_software(train):
    """A configuration last run on older software calibrates at the time the cell's newest software would take:
    MI300X SGLang's 1K/8K, last run 2026-02-27, when the 1K/1K and 8K/1K configurations (newest 2026-05-18) ran
    their steps e^0.375 and e^0.271 times slower than on their newest date; with the 1K/8K's own 0 the median is
    0.271, so its times are divided by 1.31 on average over the concurrencies. Each is divided by the drift at its
    own concurrency (the configurations' re-runs at that concurrency, their median): the older software was 1.48×
    slower at 4 users and 1.12× at 64. Points run on the newest software are left as measured."""
    drift, curves = cb.drift_table(train), cb.drift_curves(train)
    factor, n, on = cb.software_factor(drift, "MI300X", "sglang", "2026-02-27")
    assert (n, on) == (3, "2026-02-27") and factor == pytest.approx(math.exp(0.271), abs=0.005)
    at = {c: cb.software_factor(drift, "MI300X", "sglang", "2026-02-27", c, curves)[0] for c in (1, 4, 8, 16, 64, 256)}
    assert (at[4], at[16], at[64]) == pytest.approx((1.481, 1.364, 1.117), abs=0.001)
    assert at[1] == at[4] and at[256] == at[64]  # held at the measured ends, never extrapolated
    assert at[16] < at[8] < at[4]  # linear in log concurrency between them
    rows = train[cb.calibrating(train) & (train["hardware"] == "MI300X")]
    moved = cb.at_newest_software(rows, drift, curves)
    ratio = rows["measured_ms_per_token"] / moved["measured_ms_per_token"]
    old = rows["date"].astype(str) == "2026-02-27"
    own = [cb.software_factor(drift, "MI300X", "sglang", "2026-02-27", c, curves)[0]
           for c in rows.loc[old, "concurrency_nominal"]]
    assert old.sum() == 5 and np.allclose(ratio[old], own) and np.allclose(ratio[~old], 1.0)
    # without the curves, the mean over concurrencies (the drift table's)
    assert np.allclose((rows["measured_ms_per_token"] / cb.at_newest_software(rows, drift)["measured_ms_per_token"])[old],
                       factor)


def test_software_drift_is_larger_at_few_users(train):
    """Why the drift is read at a point's concurrency: of the 55 configuration-dates re-run at three or more
    concurrencies at least 8× apart, the log step-time ratio against the newest run falls with concurrency in 51; of
    the 40 whose older software was slower on average, 37 were slower by less at many users than at few, by a median
    0.083 in log step time per doubling where they were slower by 0.1 or more."""
    slopes, means = [], []
    for cell in cb.drift_curves(train).values():
        for dates in cell.values():
            for curve in dates.values():
                c, v = np.log2([p[0] for p in curve]), np.array([p[1] for p in curve])
                if len(c) >= 3 and c.max() - c.min() >= 3:
                    slopes.append(np.polyfit(c, v, 1)[0])
                    means.append(v.mean())
    slopes, means = np.array(slopes), np.array(means)
    assert len(slopes) == 55 and int((slopes < 0).sum()) == 51
    slower = means > 0
    assert int(slower.sum()) == 40 and int((slopes[slower] < 0).sum()) == 37
    assert np.median(slopes[means > 0.1]) == pytest.approx(-0.083, abs=0.001)


def test_points_whose_layout_cannot_hold_their_gpus_never_calibrate(train):
    """InferenceX records six GB200 Dynamo-SGLang points (five configurations) of 2025-12 as TP1/EP1/DP1 with one
    decode worker on 32 or 48 decode GPUs (and one MI355X MoRI-SGLang point as one TP8 worker on 16): no layout the
    model can price, as recorded. They are predicted as recorded and calibrate nothing; the consistent ones of the same
    runs (4-GPU workers on 4, 8 or 16 decode GPUs, widened to hold the weights) still calibrate."""
    fitted = cb.newest(train) & cb.conditions_stated(train)
    bad = fitted & ~cb.layout_consistent(train)
    assert bad.sum() == 7 and not cb.calibrating(train)[bad].any()
    assert sorted(train.loc[bad, "cell"].value_counts().items()) == [("B200 · dynamo-sglang", 6),
                                                                      ("MI355X · mori-sglang", 1)]
    assert train.loc[bad, "group_id"].nunique() == 6
    assert (train.loc[bad, "workers"] * train.loc[bad, "worker_gpus"] < train.loc[bad, "decode_gpus"]).all()
    ok = fitted & (train["cell"] == "B200 · dynamo-sglang") & (train["tp"] == 1)
    assert (ok & cb.calibrating(train)).sum() == 6  # the same runs' consistent points still calibrate
    # whole workers only: 12 decode GPUs of TP8 workers are 1.5 workers, no layout
    odd = train[ok & cb.calibrating(train)].head(1).assign(workers=1.5, worker_gpus=8, decode_gpus=12)
    assert not cb.layout_consistent(odd).any()


def test_the_pooled_bandwidth_share_is_the_measured_streaming_share(cal):
    """The pooled level holds bw_share at the median of the measured achievable bandwidths (H200's copy 4.259 of 4.8
    TB/s, GB200's 7.35 of 8.0): on MoE rows the fit cannot tell it from the routed experts' own share."""
    share, on = cb.streaming_share()
    assert share == pytest.approx((4.259 / 4.8 + 7.35 / 8.0) / 2, abs=1e-3) and len(on) == 2
    assert cal.global_.bw_share == pytest.approx(share)
    assert cal.global_.expert_bw < 0.6  # the experts, not all bytes, stream slower


def _group(report, *parts):
    found = [g for g in report["groups"] if all(p in g["group"] for p in parts)]
    assert len(found) == 1, [g["group"] for g in found]
    return found[0]


def test_prefill_gpus_cap_a_disaggregated_runs_output(report):
    """GB300 FP4 8K/1K with 24 prefill GPUs of 72: the measured tok/s/GPU stops rising past 2,048 users (559 → 510)
    while tok/s/user stays near 75; the prefill cap (24 GPUs at PREFILL_MFU, output = prefill tok/s × OSL/ISL) says
    the same. Without the cap the model predicted 2.2× to 4.4× the measured tok/s/GPU there."""
    g = _group(report, "GB300 NVL72 | fp4 | dynamo-sglang", "ISL 8192 OSL 1024")
    assert g["error_tok_s_per_gpu"] < 0.35 and g["error_tok_s_per_user"] < 0.15
    big = [p for p in g["points"] if p["concurrency"] >= 2048]
    assert len(big) == 2
    # capped: the two loads predict the same tok/s/GPU, as measured (within 10%)
    assert big[0]["predicted_tok_s_per_gpu"] == pytest.approx(big[1]["predicted_tok_s_per_gpu"], rel=1e-6)
    assert big[0]["measured_tok_s_per_gpu"] == pytest.approx(big[1]["measured_tok_s_per_gpu"], rel=0.1)


def test_aggregated_prefill_is_charged_per_decode_step():
    # 8K in, 1K out: each decode step of an aggregated worker also prefills 8 input tokens per sequence (τ 1), 16 at
    # τ 2; a disaggregated decode worker and a step-timing sweep prefill nothing; unknown lengths charge nothing
    assert st.prefill_tokens_per_seq(8192, 1024, 1.0, serving=True, disagg=False) == 8.0
    assert st.prefill_tokens_per_seq(8192, 1024, 2.0, serving=True, disagg=False) == 16.0
    assert st.prefill_tokens_per_seq(8192, 1024, 1.0, serving=True, disagg=True) == 0.0
    assert st.prefill_tokens_per_seq(8192, 1024, 1.0, serving=False, disagg=False) == 0.0
    assert st.prefill_tokens_per_seq(float("nan"), 1024, 1.0, serving=True, disagg=False) == 0.0
    dep = st.Deployment(model="DeepSeek-R1-0528", hardware="H200 SXM", n_gpus=8, tp=8, precision="fp8",
                        isl=8192, osl=1024)
    geo = st.geometry(dep, verify=1.0)
    t = st.terms(geo, 64.0, prefill_per_seq=8.0)
    assert float(t["prefill_compute_ms"][0]) == pytest.approx(64 * 8 * geo.prefill_ms_per_token)
    eff = st.Efficiency(bw_share=0.6, flop_share=0.5, overhead_ms_per_layer=0.1, overlap=1.0, comm_scale=1.0)
    without = st.step_time(t["memory_ms"], t["compute_ms"], t["collectives_ms"], eff, geo.layers)
    for share in (st.PREFILL_MFU, 0.25):  # the fallback, and a measured share as a calibration passes it
        with_p = st.step_time(t["memory_ms"], t["compute_ms"], t["collectives_ms"], eff, geo.layers,
                              t["prefill_compute_ms"], prefill_share=share)
        assert float(with_p["step_ms"][0] - without["step_ms"][0]) == pytest.approx(
            float(t["prefill_compute_ms"][0]) / share)


def test_prefill_attention_runs_mla_expanded_over_half_the_prompt():
    """A prompt token of DeepSeek-R1 attends to ISL/2 earlier tokens on average, in MLA's expanded form: 128 heads ×
    (192-wide keys + 128-wide values) multiply-adds per entry in each of 61 layers, at the BF16 rate; a decode step
    runs the absorbed form (2·512 + 64 per head) over its whole context. The matmuls are the decode token's."""
    dep = st.Deployment(model="DeepSeek-R1-0528", hardware="H200 SXM", n_gpus=8, tp=8, precision="fp8",
                        isl=8192, osl=1024)
    geo = st.geometry(dep, verify=1.0)
    m, hw = specs.model("DeepSeek-R1-0528"), specs.hardware("H200 SXM")
    assert (m.n_heads, m.head_dim, m.qk_rope_head_dim, m.n_layers) == (128, 192, 64, 61)
    assert st.prefill_attention_width(m) == 192 + 128
    bf16 = roofline.dense_rate(hw.dense_tflops, "bf16")
    attention = 2 * 128 * 320 * (61 * 4096) / (8 * bf16 * 1e12) * 1e3
    matmuls = geo.compute_ms_per_token - geo.attention_ms_per_token
    assert geo.prefill_ms_per_token == pytest.approx(matmuls + attention)
    assert st.prefill_ms_per_token(geo, 1024) == pytest.approx(matmuls + attention / 8)
    # the decode form over the 8,704-token context charged 3.2× as much per prompt token
    assert geo.compute_ms_per_token / geo.prefill_ms_per_token == pytest.approx(3.19, abs=0.01)


def test_inferencex_lengths_are_priced_at_their_random_range(points):
    """InferenceX's client draws each prompt and output length uniformly on [0.8·L, L] (RANDOM_RANGE_RATIO 0.8 in its
    workflow template): the shipped runs' own output tokens per request, (E2E − TTFT) / TPOT + 1, come to 0.9 of the
    OSL, and their input per output token to ISL/OSL (both drawn alike). Such a row is priced at the mean context of
    those lengths, a row of another tool at its fixed lengths."""
    ix = points[(points["tool"] == "inferencex") & points["isl"].notna() & points["osl"].notna()
                & points["e2e_ms_mean"].notna() & (points["tpot_ms_mean"] > 0)]
    outputs = (ix["e2e_ms_mean"] - ix["ttft_ms_mean"]) / ix["tpot_ms_mean"] + 1
    ratio = outputs / ix["osl"]
    assert len(ix) == 438 and float(ratio.median()) == pytest.approx(0.900, abs=0.001)
    assert 0.87 < ratio.min() and ratio.max() < 0.92
    inputs = (ix["total_tok_s"] - ix["output_tok_s"]) / ix["output_tok_s"] / (ix["isl"] / ix["osl"])
    assert float(inputs.median()) == pytest.approx(1.0, abs=0.002)
    # the source lines (verbatim excerpt of InferenceX's workflow template and client) give the ratio the model uses
    source = (Path(__file__).parent / "data" / "published" / "inferencex-range-ratio.source.md").read_text()
    assert "RANDOM_RANGE_RATIO: 0.8" in source and "lower = int(seq_len * range_ratio)" in source
    assert "input_lens = sample_uniform(input_len)" in source and "output_lens = sample_uniform(output_len)" in source
    assert set(cb.LENGTH_RANGE_RATIO.values()) == {cb.INFERENCEX_RANGE_RATIO} and cb.INFERENCEX_RANGE_RATIO == 0.8
    assert set(ix["format"]) <= set(cb.LENGTH_RANGE_RATIO)

    row = ix[(ix["isl"] == 8192) & (ix["osl"] == 1024)].iloc[0].to_dict()
    dep = cb.deployment(row)
    assert dep.range_ratio == 0.8 and dep.mean_isl == pytest.approx(0.9 * 8192)
    # a decode step's mean context: E[ISL] + E[OSL²] / (2 E[OSL]) = 0.9·8,192 + (0.488/0.6)/1.8·1,024
    assert dep.context == pytest.approx(0.9 * 8192 + 0.488 / 0.6 / 1.8 * 1024)
    assert dep.prefill_isl == pytest.approx(0.488 / 0.6 / 0.9 * 8192)  # a prompt token's prompt, token-weighted
    other = cb.deployment({**row, "tool": "sglang.bench_serving", "format": "published-table"})
    assert other.range_ratio == 1.0 and other.context == 8192 + 512 and other.prefill_isl == 8192
    # InferenceX's token-position tables record fixed lengths (their measured mean): read by another reader, priced
    # as given
    trimmed = points[points["format"] == "inferencex-trimmed"]
    assert len(trimmed) == 169 and {cb.range_ratio(r) for r in trimmed.to_dict(orient="records")} == {1.0}
    assert cb.deployment({**row, "isl": None}).range_ratio == 1.0  # no nominal length to draw around
    assert "range_ratio" not in st.CONFIG_KEYS  # a config's lengths are its own, fixed
    assert st.uniform_lengths(100.0, 0.0) == pytest.approx((50.0, 10_000.0 / 3))


def test_inferencex_kv_cache_is_priced_at_the_dtype_its_recipe_set(points):
    """InferenceX's DeepSeek-R1 recipes set an FP8 KV cache on every engine and hardware except SGLang on H200 and
    H100 (no flag: SGLang keeps BF16), and AMD's FP8 SGLang scripts switched on given dates (MI300X and MI325X
    2026-01-22, MI355X 2026-03-05). data/specs/kv-cache-recipes.csv holds them, each with the file and commit read;
    every InferenceX DeepSeek-R1 row finds its dtype there, and a row of another source keeps its recipe's."""
    table = recipes.table(recipes.KV_RECIPES_FILE)
    assert set(table["basis"]) <= {"read", "inferred"} and table["source"].str.len().min() > 40
    assert set(table["kv_dtype"]) == {"fp8", "bf16"}
    served = lambda *a: recipes.served_kv_dtype("DeepSeek-R1-0528", *a)[0]  # noqa: E731
    assert served("H200 SXM", "sglang", "fp8", "2026-05-20") == "bf16"
    assert served("H200 SXM", "trt", "fp8", "2026-05-18") == "fp8"
    assert served("H100 SXM", "dynamo-sglang", "fp8", "2026-02-13") == "bf16"
    assert served("GB200 NVL72", "dynamo-sglang", "fp4", "2026-02-07") == "fp8"
    assert (served("MI355X", "sglang", "fp8", "2026-03-04"), served("MI355X", "sglang", "fp8", "2026-03-05")) == \
        ("bf16", "fp8")
    assert (served("MI300X", "sglang", "fp8", "2026-01-21"), served("MI300X", "sglang", "fp8", "2026-02-27")) == \
        ("bf16", "fp8")
    assert (served("MI300X", "sglang", "fp8", "2026-01-22"), served("MI300X", "sglang", "fp8", "2026-01-23")) == \
        ("bf16", "fp8")  # commit 32772c579 landed on 2026-01-23 UTC
    assert (served("MI355X", "sglang", "fp4", "2025-12-16"), served("MI355X", "sglang", "fp4", "2025-12-17")) == \
        ("bf16", "fp8")  # commit 332fec529, 2025-12-17 00:01 UTC
    assert recipes.served_kv_dtype("DeepSeek-R1-0528", "GB200 NVL72", "dynamo-sglang", "fp8", "2026-02-01")[:2] == \
        ("fp8", "inferred")  # pinned to commits not stored: said so
    for no_day in ("", "unknown", "nan", "2026"):  # a dated row needs a date
        assert recipes.served_kv_dtype("DeepSeek-R1-0528", "MI300X", "sglang", "fp8", no_day) is None
    # no two rows of one model, hardware, engine and precision overlap in date (the lookup would pick the first)
    for _, same in table.groupby(["model", "hardware", "framework", "precision"]):
        spans = sorted((r["date_from"] or "0000", r["date_to"] or "9999") for r in same.to_dict(orient="records"))
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    assert recipes.served_kv_dtype("DeepSeek-V4-Flash", "B200", "trt", "fp4", "2026-05-01") is None
    ix = points[points["format"].isin(list(cb.LENGTH_RANGE_RATIO)) & points["model"].str.startswith("DeepSeek-R1")]
    kinds = {cb.kv_dtype(r) for r in ix.to_dict(orient="records")}
    assert len(ix) == 1897 and kinds == {"fp8", "bf16"}
    h200 = ix[(ix["hardware"] == "H200 SXM") & (ix["framework"] == "sglang")].iloc[0].to_dict()
    assert cb.deployment(h200).kv_dtype == "bf16" and cb.deployment({**h200, "framework": "trt"}).kv_dtype == "fp8"
    assert cb.kv_dtype({**h200, "format": "published-table"}) == ""  # not InferenceX's recipe: the precision recipe's
    assert cb.kv_dtype({**h200, "kv_dtype": "fp8"}) == "fp8"  # a dtype the source states wins


def test_prefill_share_is_measured_from_ttft_of_two_prompt_lengths(points, train, cal):
    """H200 SGLang FP8: the same configuration at the same concurrency with 1K and 8K prompts (OSL 1K) took the
    TTFT the points table holds; the extra prompt tokens at the datasheet rate over the extra TTFT is the share.
    InferenceX draws prompts uniformly on [0.8·ISL, ISL] (calibrate.LENGTH_RANGE_RATIO): 0.9 × 7,168 extra tokens on
    average, each prompt token's attention at its token-weighted prompt length. Three such pairs (no speculation at
    4 and 8 users, MTP at 16); the cell's share is their median."""
    def ttft(isl, conc, spec):
        p = points[(points["hardware"] == "H200 SXM") & (points["framework"] == "sglang") & (points["isl"] == isl)
                   & (points["osl"] == 1024) & (points["concurrency"] == conc) & (points["spec_method"] == spec)
                   & points["model"].str.startswith("DeepSeek-R1") & ~points["flags"].astype(str).str.contains(
                       "dated-history")]
        assert len(p) == 1
        return float(p["ttft_ms_p50"].iloc[0])

    def prompt_ms(isl):
        dep = st.Deployment(model="DeepSeek-R1-0528", hardware="H200 SXM", n_gpus=8, tp=8, precision="fp8",
                            isl=isl, osl=1024, range_ratio=0.8)
        assert dep.mean_isl == pytest.approx(0.9 * isl)
        return dep.mean_isl * st.geometry(dep, verify=1.0).prefill_ms_per_token

    assert (ttft(1024, 4, "none"), ttft(8192, 4, "none")) == pytest.approx((84.73, 311.53), abs=0.01)
    pairs = [(prompt_ms(8192) - prompt_ms(1024)) / (ttft(8192, c, s) - ttft(1024, c, s))
             for c, s in ((4, "none"), (8, "none"), (16, "mtp"))]
    share, pairs_n = cal.prefill["H200 · sglang"]
    assert pairs_n == 3 and share == pytest.approx(float(np.median(pairs)), rel=1e-9)
    assert share == pytest.approx(0.210, abs=0.001)  # 0.242 at the nominal lengths
    assert cal.prefill_share("H200", "sglang") == (share, "H200 · sglang")
    # a cell no aggregated pair measured takes its family's, then all hardware's; none at all: the assumption
    assert cal.prefill_share("H100", "dynamo-sglang") == (pytest.approx(cal.prefill["all"][0]), "all")
    assert cb.Calibration(global_=cal.global_, tau_spec=1.0).prefill_share("H200", "sglang") == (st.PREFILL_MFU, "")


def test_mtp_draft_counts_are_read_from_the_recipes_the_runs_ran():
    """data/specs/mtp-recipes.csv: each row's count against the verbatim lines of the script or recipe it names
    (tests/data/published/inferencex-mtp-drafts.source.md, read from the repositories at the commits named)."""
    source = (Path(__file__).parent / "data" / "published" / "inferencex-mtp-drafts.source.md").read_text()
    blocks = dict(re.findall(r"### ([^\n]+)\n```\n(.*?)```", source, flags=re.S))

    def block(label):
        found = [body for head, body in blocks.items() if head.startswith(label)]
        assert found, label
        return "\n".join(found)

    for hw in ("B200 SGLang FP8", "B200 SGLang FP4", "B300 SGLang FP8", "H200 SGLang FP8"):
        assert "SPECULATIVE_NUM_STEPS=2" in block(hw) and "SPECULATIVE_EAGLE_TOPK=1" in block(hw)
    for hw in ("MI325X SGLang FP8", "MI355X SGLang FP8", "MI355X SGLang FP4"):
        assert "--speculative-num-steps 3" in block(hw) and "--speculative-eagle-topk 1" in block(hw)
    assert "--num-speculative-tokens" not in block("MI355X ATOM FP8 until") + block("MI355X ATOM FP4")
    assert "--num-speculative-tokens 3" in block("MI355X ATOM FP8 from 2026-04-01")
    assert "default=1," in block("ATOM's default")
    for hw in ("H200 TensorRT-LLM FP8", "B200 TensorRT-LLM FP8", "B200 TensorRT-LLM FP4"):
        assert "MTP=3" in block(hw) and "MTP=1" in block(hw) and "num_nextn_predict_layers: ${MTP}" in block(hw)
    srt = [body for head, body in blocks.items() if "Dynamo-SGLang" in head]
    assert len(srt) == 14 and all("speculative-num-steps: 2" in b and "speculative-num-steps: 1" not in b for b in srt)

    table = recipes.table(recipes.MTP_RECIPES_FILE)
    expect = {("B200", "sglang", "fp8"): "2", ("B300", "sglang", "fp8"): "2", ("H200 SXM", "sglang", "fp8"): "2",
              ("B200", "sglang", "fp4"): "2", ("MI325X", "sglang", "fp8"): "3", ("MI355X", "sglang", "fp8"): "3",
              ("MI355X", "sglang", "fp4"): "3", ("MI355X", "atom", "fp4"): "1", ("H100 SXM", "dynamo-sglang", "fp8"): "2",
              ("H200 SXM", "dynamo-sglang", "fp8"): "2"}
    for (hw, fw, prec), n in expect.items():
        rows = table[(table["hardware"] == hw) & (table["framework"] == fw) & (table["precision"] == prec)]
        assert list(rows["draft_tokens"]) == [n], (hw, fw, prec)
    atom = table[(table["framework"] == "atom") & (table["precision"] == "fp8")].set_index("draft_tokens")
    assert atom.loc["1", "date_to"] == "2026-03-31" and atom.loc["3", "date_from"] == "2026-04-02"
    trt = table[table["framework"] == "trt"]
    assert set(zip(trt["dp_attention"], trt["draft_tokens"])) == {("false", "3"), ("true", "1")}
    assert set(table["basis"]) == {"read", "inferred"} and (table["source"].str.len() > 40).all()
    # ATOM's count and the Dynamo-SGLang recipes' are inferred (a default read from source, a revision not recorded)
    assert set(table.loc[table["basis"] == "inferred", "framework"]) == {"atom", "dynamo-sglang"}


def test_assumed_tau_at_other_draft_counts_keeps_the_first_drafts_measured_acceptance():
    """τ is fitted at 3 drafts; another count keeps the first draft's acceptance (DeepSeek-V3's report: 85-90% for
    its MTP module, the midpoint) and the later drafts' rate that τ implies; never above the tokens a step verifies,
    continuous in τ, and τ itself at 3 drafts."""
    assert st.FIRST_DRAFT_ACCEPTANCE == 0.875
    at = lambda tau, k: float(st.tau_at_drafts(tau, k))  # noqa: E731
    assert [round(at(2.11, k), 3) for k in (0, 1, 2, 3, 4)] == [1.0, 1.875, 2.068, 2.11, 2.119]
    for tau in (1.0, 1.3, 1.875, 1.9, 2.5, 3.625, 3.7, 4.0):
        assert at(tau, 3) == pytest.approx(tau, abs=1e-9)
        assert all(at(tau, k) <= k + 1 + 1e-12 for k in range(6))
        assert at(tau, 1) <= at(tau, 2) <= at(tau, 3) <= at(tau, 4)
    # continuous where the rule changes (τ at 1 + a1 and 1 + 3·a1)
    for edge in (1.875, 3.625):
        assert at(edge - 1e-6, 1) == pytest.approx(at(edge + 1e-6, 1), abs=1e-4)
    # the training rows read the same τ (calibrate._tau): a 1-draft row verifies 2 tokens and gets 1.875 at τ 2.11
    rows = {"spec": np.array([True, True, False]), "tau_measured": np.array([np.nan, np.nan, np.nan]),
            "verify": np.array([2.0, 4.0, 1.0])}
    assert cb._tau(rows, 2.11) == pytest.approx([1.875, 2.11, 1.0])


def test_inferencex_mtp_rows_are_priced_at_their_recipes_drafts():
    base = {"model": "DeepSeek-R1-0528", "hardware": "H200 SXM", "framework": "sglang", "precision": "fp8",
            "spec_method": "mtp", "format": "inferencex-api", "date": "2026-05-20", "tp": 8, "dp": 1, "n_gpus": 8}
    dep = cb.deployment(base)
    assert dep.draft_tokens == 2.0 and st.speculation(dep, assumed_tau=2.1)[1] == 3.0
    # the assumed τ is fitted at 3 drafts; at 2 it keeps the first draft's acceptance and loses the third's share
    assert st.speculation(dep, assumed_tau=2.1)[0] == pytest.approx(float(st.tau_at_drafts(2.1, 2)))
    # ATOM FP8 ran ATOM's default of one draft until 2026-04-01 and three after; that day itself is left unsaid
    atom = {**base, "hardware": "MI355X", "framework": "atom"}
    assert cb.draft_tokens({**atom, "date": "2026-02-11"}) == 1.0
    assert cb.draft_tokens({**atom, "date": "2026-06-02"}) == 3.0
    assert math.isnan(cb.draft_tokens({**atom, "date": "2026-04-01"}))
    # one draft verifies two tokens: the first draft's measured acceptance, 1 + 0.875
    one = cb.deployment({**atom, "date": "2026-02-11"})
    assert st.speculation(one, assumed_tau=2.1) == (pytest.approx(1.875), 2.0, "assumed τ = 1.88 (mtp, no acceptance "
                                                     "length; 1 drafted, from the calibration's 2.10 at 3)")
    assert st.speculation(cb.deployment({**atom, "date": "2026-06-02"}), assumed_tau=2.1)[2] == \
        "assumed τ = 2.10 (mtp, no acceptance length)"  # at the count it is fitted at, no more said
    # TensorRT-LLM drafts one token with attention data parallelism (DP > 1), three without
    trt = {**base, "hardware": "B200", "framework": "trt", "date": "2026-03-01"}
    assert (cb.draft_tokens(trt), cb.draft_tokens({**trt, "dp": 8})) == (3.0, 1.0)
    # a source's own count wins; another tool's rows and a row without speculation keep the assumption
    assert cb.draft_tokens({**base, "draft_tokens": 4}) == 4.0
    assert math.isnan(cb.draft_tokens({**base, "format": "published-table"}))
    assert math.isnan(cb.draft_tokens({**base, "spec_method": "none"}))
    assert math.isnan(cb.draft_tokens({**base, "hardware": "GB200 NVL72", "framework": "dynamo-trt"}))


def test_prefill_share_is_measured_per_precision_within_a_cell(cal):
    """SGLang's DeepSeek-R1 prefill on Blackwell went through at about three times the share of the datasheet
    rate at FP4 as at FP8 (each at its own precision's rate): a configuration takes its own precision's pairs at its
    cell before the cell's pairs of every precision; elsewhere the levels are the cell's, the family's, all."""
    share = lambda key: cal.prefill[key][0]  # noqa: E731
    assert share("B300 · sglang · fp4") == pytest.approx(0.267, abs=0.001)
    assert share("B300 · sglang · fp8") == pytest.approx(0.097, abs=0.001)
    assert share("B200 · sglang · fp4") == pytest.approx(0.321, abs=0.001)
    assert share("B200 · sglang · fp8") == pytest.approx(0.090, abs=0.001)
    assert cal.prefill["B300 · sglang"] == [pytest.approx(np.median([share("B300 · sglang · fp4"),
                                                                     share("B300 · sglang · fp8")])), 2]
    assert cal.prefill_share("B300", "sglang", "FP8") == (share("B300 · sglang · fp8"), "B300 · sglang · fp8")
    assert cal.prefill_share("B300", "sglang", "int4") == (share("B300 · sglang"), "B300 · sglang")
    assert cal.prefill_share("B300", "sglang") == (share("B300 · sglang"), "B300 · sglang")  # no precision given
    # no pair at the cell: the family's, then all hardware's, whatever their precision
    assert cal.prefill_share("GB300", "dynamo-sglang", "fp4") == (share("all"), "all")


def test_left_out_group_never_enters_its_calibration(points, train, monkeypatch):
    seen = []
    real = cb.calibrate

    def spy(rows, **kw):
        seen.append(set(rows["group_id"]))
        return real(rows, **kw)

    monkeypatch.setattr(va.cb, "calibrate", spy)
    rep = va.validate(points)
    left_out = [g["group_id"] for g in rep["groups"]]
    assert len(seen) == len(left_out) + 1  # the all-data start point, then one calibration per left-out group
    for ids, gid in zip(seen[1:], sorted(left_out)):
        assert gid not in ids


# --- scope facts ------------------------------------------------------------------------------------------

def test_scope_facts_for_c00(cal):
    facts = {f["gpus"]: f for f in scope.scope_facts("DeepSeek-V4.1-Flash", "GB300 NVL72", claim_tok_s_per_user=1000,
                                                    tau=1.0)}
    assert list(facts) == [1, 4, 8, 72]
    # One GPU has no collectives, but at τ = 1 its weight read alone (1.28 ms at 8 TB/s) exceeds the 1 ms step.
    assert facts[1]["collectives_per_step"] == 0 and facts[1]["hbm_ms"] == pytest.approx(1.284, abs=0.01)
    # a bound with no fixed overhead says HBM alone, never "HBM and overhead"
    assert facts[1]["verdict"] == "no collectives; HBM alone exceeds the budget"
    rack = facts[72]
    assert rack["collectives_per_step"] == 43 * 2 and rack["step_budget_ms"] == 1.0
    # The bound reading (datasheet bandwidth, no overhead): 1 ms minus the HBM time over 86 collectives.
    assert rack["needs_us_per_collective"] == pytest.approx((1.0 - rack["hbm_ms"]) * 1000 / 86)
    # Measured: NVLinkOneSided EP 64 at batch 1 (27.8 + 32.6 µs), read at EP 72 as an extrapolation.
    assert rack["measured_dispatch_plus_combine_us"] == pytest.approx(27.8 + 32.6)
    assert {m["status"] for m in rack["measured"]} == {"extrapolated"}
    assert any("TensorRT-LLM" in u for m in rack["measured"] for u in m["sources"])
    assert rack["verdict"] == "measured latency exceeds budget"
    assert rack["layout"] == "EP dispatch + combine" and rack["other"] == []  # TP cannot split 64 heads 72 ways
    # An 8-GPU node can shard the experts by TP too: two all-reduces per layer, measured 10.9 µs (fused all-reduce +
    # RMSNorm over two GB200 trays), against EP's 24.9 µs per collective; the faster is the scope's answer. Its
    # budget at τ = 1 is the 9.7 µs per collective the issue computed (1 ms less the HBM read, over 86).
    node = facts[8]
    assert node["layout"] == "TP all-reduce" and node["measured_us_per_collective"] == pytest.approx(10.9)
    assert node["needs_us_per_collective"] == pytest.approx((1.0 - node["hbm_ms"]) * 1000 / 86)
    assert 9.6 < node["needs_us_per_collective"] < 9.9 and node["verdict"] == "measured latency exceeds budget"
    (ep,) = node["other"]
    assert ep["layout"] == "EP dispatch + combine" and ep["measured_dispatch_plus_combine_us"] == pytest.approx(18.9 + 31)
    assert ep["hbm_ms"] > node["hbm_ms"]  # attention data-parallel: one GPU reads all of it for the one sequence
    calibrated = scope.scope_facts("DeepSeek-V4.1-Flash", "GB300 NVL72", claim_tok_s_per_user=1000, tau=1.0, cal=cal)
    assert calibrated[-1]["overhead_ms"] > 0


# --- config file and command line -------------------------------------------------------------------------

def test_config_defaults_and_errors(tmp_path):
    dep = configfile.parse({"model": "DeepSeek-V4.1-Flash", "hardware": "GB300 NVL72", "recipe": "native"})
    assert (dep.n_gpus, dep.precision, dep.spec_method, dep.isl, dep.osl) == (1, "native", "none", 1024.0, 1024.0)
    with pytest.raises(ValueError, match="unknown key 'batch'"):
        configfile.parse({"model": "DeepSeek-R1", "hardware": "B200", "batch": 4})
    with pytest.raises(ValueError, match="unknown model 'Nope-1B'"):
        configfile.parse({"model": "Nope-1B", "hardware": "B200"})
    with pytest.raises(ValueError, match="'tp' has value 'eight'"):
        configfile.parse({"model": "DeepSeek-R1", "hardware": "B200", "tp": "eight"})
    with pytest.raises(ValueError, match="'date' has value 'yesterday', expected a calendar date YYYY-MM-DD"):
        configfile.parse({"model": "DeepSeek-R1", "hardware": "B200", "date": "yesterday"})
    dated = tmp_path / "d.yaml"
    dated.write_text("model: DeepSeek-R1\nhardware: MI325X\nframework: sglang\ndate: 2026-02-27\n")
    assert configfile.load(dated).date == "2026-02-27"  # YAML's date read back as the points table's ISO text
    assert dep.date == ""
    bad = tmp_path / "c.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(ValueError, match=r"c.yaml: line \d+: not valid YAML"):
        configfile.load(bad)
    with pytest.raises(ValueError, match="not a file"):  # a directory named by mistake: one line, not a traceback
        configfile.load(tmp_path)
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"model: \xff\xfe\n")
    with pytest.raises(ValueError, match="b.yaml: byte 7: not UTF-8 text"):
        configfile.load(binary)


@pytest.mark.parametrize("extra, message", [
    ({"n_gpus": 0}, "'n_gpus' has value 0, expected a whole number from 1 to 100,000"),
    ({"n_gpus": True}, "'n_gpus' has value True"),  # a boolean is not a GPU count
    ({"n_gpus": 4, "tp": 64}, "a worker of 64 GPUs (the largest of 'tp', 'ep', 'dp') does not fit on 4 decode GPUs"),
    ({"n_gpus": 4, "tp": 3}, "4 decode GPUs are not a whole number of 3-GPU workers"),
    ({"tp": 0}, "'tp' has value 0"),
    ({"isl": 0}, "'isl' has value 0, expected a number from 1 to 10,000,000"),
    ({"osl": float("inf")}, "'osl' has value inf"),
    ({"n_gpus": 8, "disagg": True, "n_prefill_gpus": 8}, "'n_prefill_gpus' 8 leaves no decode GPU of 'n_gpus' 8"),
    ({"n_gpus": 8, "n_prefill_gpus": 2}, "'n_prefill_gpus' is 2 but 'disagg' is not true: an aggregated deployment "
                                         "prefills and decodes on all 8 GPUs"),
    ({"disagg": True, "n_prefill_gpus": 4}, "'n_prefill_gpus' 4 leaves no decode GPU of 'n_gpus' 1 (its default"),
    ({"n_gpus": 8, "n_decode_gpus": 100}, "'n_decode_gpus' is 100 but 'disagg' is not true"),
    ({"n_gpus": 8, "disagg": True, "n_prefill_gpus": 2, "n_decode_gpus": 100},
     "'n_decode_gpus' 100 + 'n_prefill_gpus' 2 exceed 'n_gpus' 8"),
    ({"spec_method": "mtp", "acceptance_length": 1e6}, "'acceptance_length' has value 1000000.0"),
    ({"spec_method": "mtp", "acceptance_length": 0.5}, "expected a number from 1 to 65"),
    ({"acceptance_length": 2}, "'acceptance_length' 2 needs a 'spec_method'"),
    ({"spec_method": "dspark", "acceptance_length": 4.07}, "exceeds the 3 drafted + 1 tokens a step verifies "
                                                          "('draft_tokens' defaults to 3)"),
    ({"precision": "fp3"}, "'precision' has value 'fp3': unknown precision"),
    ({"precision": ["fp8"]}, "'precision' has value ['fp8'], expected text"),
    ({"date": "2026-13-45"}, "'date' has value '2026-13-45', expected a calendar date"),
    ({"n_gpus": 8, "n_workers": 0}, "'n_workers' has value 0"),
])
def test_config_values_out_of_range_are_one_line_errors(extra, message):
    """A value no deployment has is refused before anything is predicted (n_gpus 0 had printed tok/s/GPU for zero
    GPUs, ISL 0 a division by zero, an acceptance of 1e6 a τ of a million labelled measured)."""
    doc = {"model": "DeepSeek-V4.1-Flash", "hardware": "GB300 NVL72", **extra}
    with pytest.raises(ValueError) as err:
        configfile.parse(doc, where="c.yaml")
    assert str(err.value).startswith("c.yaml: ") and message in str(err.value)


def test_config_within_range_is_accepted_and_a_given_acceptance_is_labelled_given(points):
    from analysis.perfmodel import run
    from analysis.perfmodel import words as pw

    dep = configfile.parse({"model": "DeepSeek-V4.1-Flash", "hardware": "GB300 NVL72", "n_gpus": 8, "tp": 4,
                            "spec_method": "dspark", "acceptance_length": 4.07, "draft_tokens": 5})
    assert (dep.n_gpus, dep.tp, dep.acceptance_length, dep.draft_tokens) == (8, 4, 4.07, 5.0)
    assert configfile.parse({"model": "DeepSeek-R1", "hardware": "B200", "n_gpus": 3, "tp": 2,
                             "n_workers": 1}).n_workers == 1  # an odd layout the config says outright
    # a row of the points table as a config: aggregated rows carry n_prefill_gpus = n_decode_gpus = n_gpus
    agg = configfile.parse({"model": "DeepSeek-R1", "hardware": "B200", "n_gpus": 8, "tp": 8, "disagg": False,
                            "n_prefill_gpus": 8, "n_decode_gpus": 8})
    assert agg.decode_gpus == 8 and st.parallelism(agg).workers == 1
    # a disaggregated split that names its two sides needs no n_gpus
    split = configfile.parse({"model": "DeepSeek-R1", "hardware": "B200", "disagg": True, "n_prefill_gpus": 8,
                              "n_decode_gpus": 16, "tp": 8})
    assert split.n_gpus == 24 and split.decode_gpus == 16
    rep = run.model_report(dep, points, concurrency=[1], n_boot=0, band={})
    assert rep["config"]["tau"] == 4.07 and rep["config"]["tau_source"] == pw.TAU_GIVEN


def test_a_points_table_from_outside_ingest_quarantines_rows_that_cannot_be_numbers(points, tmp_path, capsys):
    """--points naming a CSV: a word where a number goes, a TP of zero or a negative GPU count is quarantined with
    its file, row and field on stderr (it had raised a TypeError deep in the fit, or moved the calibration)."""
    from analysis import cli, data

    table = points.head(40).copy()
    table["isl"] = table["isl"].astype(object)
    table.loc[3, "isl"] = "<img src=x onerror=alert(1)>"
    table.loc[5, "tp"] = 0
    table.loc[7, "n_gpus"] = -8
    path = tmp_path / "p.csv"
    table.to_csv(path, index=False)
    kept = data.load_points(path)
    err = capsys.readouterr().err
    assert f"{path}: row 5: isl: expected a number, got '<img src=x onerror=alert(1)>' (row quarantined)" in err
    assert f"{path}: row 7: tp: 0.0 is out of range (>0) (row quarantined)" in err
    assert f"{path}: row 9: n_gpus: -8.0 is out of range (>0) (row quarantined)" in err
    assert f"{path}: 3 of 40 rows quarantined, 37 kept" in err
    assert len(kept) == 37 and kept["isl"].dtype.kind == "f"
    # ingest's reading of numbers holds here too: "1,024" is 1,024 and "none" is missing, not a word to quarantine
    (tmp_path / "thousands.csv").write_text('model,hardware,n_gpus,tp,isl,osl,tok_s_per_user\n'
                                            'DeepSeek-R1,B200,8,8,"1,024","8,192",100\nDeepSeek-R1,B200,8,8,1024,8192,none\n')
    read = data.load_points(tmp_path / "thousands.csv")
    assert list(read["isl"]) == [1024.0, 1024.0] and read["tok_s_per_user"].isna().tolist() == [False, True]
    assert "quarantined" not in capsys.readouterr().err
    # a table without a model column, a file that is no parquet, a folder of no raw logs: one line each, exit 2
    (tmp_path / "nomodel.csv").write_text("hardware,isl\nB200,1024\n")
    (tmp_path / "fake.parquet").write_text("not parquet")
    (tmp_path / "empty").mkdir()
    for name, says in (("nomodel.csv", "not a points table: no 'model' column"),
                       ("fake.parquet", "not a readable parquet points table"),
                       ("empty", "no points (a folder is read as raw logs")):
        assert cli.main(["model", "--validate", "--points", str(tmp_path / name)]) == 2
        assert says in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "0", "2.5", "1,,2", "1e9", "nan", "", "abc"])
def test_concurrency_option_takes_whole_numbers_of_users(value, capsys):
    from analysis import cli

    with pytest.raises(SystemExit) as err:
        cli.main(["model", "--config", "x.yaml", f"--concurrency={value}"])
    assert err.value.code == 2 and "argument --concurrency" in capsys.readouterr().err


def test_n_boot_option_is_bounded(capsys):
    from analysis import cli

    with pytest.raises(SystemExit):
        cli.main(["model", "--config", "x.yaml", "--n-boot", "1000000"])
    assert "from 0 to 1000 bootstrap calibrations" in capsys.readouterr().err


def test_cli_model_config_json(tmp_path, capsys):
    from analysis import cli

    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"model": "DeepSeek-V4.1-Flash", "hardware": "GB300 NVL72", "n_gpus": 4, "tp": 4,
                               "recipe": "native", "isl": 8192, "osl": 1024, "framework": "sglang"}))
    assert cli.main(["model", "--config", str(cfg), "--concurrency", "1,16", "--n-boot", "2", "--json"]) == 0
    text = capsys.readouterr().out

    def strict(token):
        raise ValueError(f"not strict JSON: {token}")

    out = json.loads(text, parse_constant=strict)  # a value that does not exist is null, never NaN
    assert set(out) == {"rows", "config", "calibration", "measured"} and [r["concurrency"] for r in out["rows"]] == [1, 16]
    row = out["rows"][0]
    assert {"concurrency", "tok_s_per_user", "tok_s_per_user_lo", "tok_s_per_user_hi", "tok_s_per_gpu",
            "tok_s_per_gpu_lo", "tok_s_per_gpu_hi", "step_ms", "terms", "dominant"} <= set(row)
    assert row["tok_s_per_user_lo"] <= row["tok_s_per_user"] <= row["tok_s_per_user_hi"]
    assert sum(row["terms"].values()) == pytest.approx(row["step_ms"])
    assert out["config"]["recipe"].startswith("fp8 (shared_experts fp4, routed_experts fp4")
    assert out["calibration"]["level"] == "B300 · sglang"


def test_config_intervals_carry_the_models_own_held_out_error(points, report, capsys):
    """A configuration nobody measured is predicted with the error the model makes on held-out groups: the interval
    is the widest of the calibration's bootstrap and measured ÷ predicted's 5th-95th percentile over the points of
    the validation, each group weighing the same (the bootstrap alone held 52% of the held-out measurements a
    reviewer rebuilt)."""
    from analysis import cli
    from analysis.perfmodel import run, validate

    band = report["held_out_ratio"]
    per_group = [[pt["measured_tok_s_per_user"] / pt["predicted_tok_s_per_user"] for pt in g["points"]]
                 for g in report["groups"]]
    ratios = [r for rs in per_group for r in rs]
    weights = [1.0 / len(rs) for rs in per_group for _ in rs]
    assert band["points_tok_s_per_user"] == len(ratios) == sum(len(g["points"]) for g in report["groups"])
    assert band["groups_tok_s_per_user"] == len(report["groups"]) == 39 and band["weighting"] == "group"
    # rebuilt by hand: sort, each ratio at the middle of its cumulative weight, 5% and 95% read off linearly
    order = np.argsort(ratios)
    r, w = np.asarray(ratios)[order], np.asarray(weights)[order]
    at = (np.cumsum(w) - w / 2) / w.sum()
    assert band["tok_s_per_user"] == pytest.approx([np.interp(0.05, at, r), np.interp(0.95, at, r)])
    # each group weighs the same: the well-predicted 18-point sweeps no longer narrow it (pooled points: 0.79-1.35)
    pooled = np.percentile(ratios, [5, 95])
    assert band["tok_s_per_user"][1] > pooled[1] and band["tok_s_per_user"][0] < pooled[0]
    assert band["tok_s_per_user"][0] < 0.76 and band["tok_s_per_user"][1] > 1.36  # -26% / +40% on the shipped points
    # equal weights reduce to the Hazen percentile
    assert validate.weighted_percentile([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 1], 50) == pytest.approx(2.5)
    assert validate.weighted_percentile([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 1], 12.5) == pytest.approx(1.0)
    assert validate.weighted_percentile([1.0, 2.0, 3.0, 4.0], [3, 1, 1, 1], 25) == pytest.approx(1.0)
    assert run.held_out_band(points) == band  # what --config computes for itself: the same validation's band
    path = "data/specs/model-configs/deepseek-v4.1-flash-gb300-4gpu.yaml"
    rep = run.model_report(configfile.load(Path(path)), points, concurrency=[1, 16], n_boot=2, band=band)
    for row in rep["rows"]:
        v, (lo, hi) = row["tok_s_per_user"], band["tok_s_per_user"]
        boot = row["interval_parts"]["tok_s_per_user"]["calibration"]
        assert row["tok_s_per_user_lo"] == pytest.approx(min(boot[0], v * lo))
        assert row["tok_s_per_user_hi"] == pytest.approx(max(boot[1], v * hi))
        assert row["tok_s_per_user_hi"] - row["tok_s_per_user_lo"] > boot[1] - boot[0]
    assert rep["calibration"]["held_out_ratio"] == band
    run._BANDS[int(pd.util.hash_pandas_object(points.astype(str), index=False).sum())] = band  # the CLI's lookup
    assert cli.main(["model", "--config", path, "--concurrency", "1", "--n-boot", "2"]) == 0
    out = capsys.readouterr().out
    assert (f"measured ÷ predicted {band['tok_s_per_user'][0]:.2f}–{band['tok_s_per_user'][1]:.2f} per user "
            f"({len(ratios)} points of 39 groups)") in out
    assert "5th–95th percentile, each group weighing the same)" in out
    assert "a deployment unlike those groups (attention data-parallel, a model no group calibrates) can miss by " \
        "more" in out
    # V4.1-Flash's only group states no ISL/OSL or TP and calibrates nothing: the CLI says the band is not its own
    assert rep["calibration"]["model_calibrating_groups"] == 0
    assert "no group that calibrates the parameters runs DeepSeek-V4.1-Flash: the band above is the error on " \
        "configurations of models the calibration has seen" in out
    # a band with no per-GPU side (no validated group has a tok/s/GPU) prints its per-user side only, no traceback
    from analysis import commands

    monkey = {**band, "tok_s_per_gpu": None, "points_tok_s_per_gpu": 0}
    rep = run.model_report(configfile.load(Path(path)), points, concurrency=[1], n_boot=0, band=monkey)
    assert rep["calibration"]["held_out_ratio"]["tok_s_per_gpu"] is None
    run._BANDS[int(pd.util.hash_pandas_object(points.astype(str), index=False).sum())] = monkey
    try:
        assert commands.cli_model(config_path=Path(path), validate=False, points_path=None, concurrency=[1],
                                  n_boot=0) == 0
    finally:
        run._BANDS.clear()
    assert "per user (185 points of 39 groups), 5th–95th" in capsys.readouterr().out


def test_cli_model_errors_are_one_line(tmp_path, capsys):
    from analysis import cli

    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: DeepSeek-R1\nhardware: Abacus 9000\n")
    assert cli.main(["model", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("perfclaims model: ") and "unknown hardware 'Abacus 9000'" in err and "\n" not in err
    assert cli.main(["model"]) == 2
    assert "exactly one of --config CONFIG or --validate" in capsys.readouterr().err


def test_cli_validate_prints_what_the_json_holds(report, capsys, monkeypatch):
    from analysis import cli
    from analysis.perfmodel import run

    monkeypatch.setattr(run, "validation_report", lambda points, **kw: report)  # the same validation, computed once
    assert cli.main(["model", "--validate"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("the same configuration re-run, median step-time change by days from its newest run: 0–7 days "
                       "0.4% (60); 8–30 days 7.9% (33); 31–90 days 9.5% (103); over 90 days 12.0% (137)")
    out = out[:-1]
    iu, ig = report["median_interval_tok_s_per_user"], report["median_interval_tok_s_per_gpu"]
    assert out[-6] == (f"median over the groups resampled (90% bootstrap interval): {100 * ig[0]:.1f}%–"
                       f"{100 * ig[1]:.1f}% tok/s/GPU, {100 * iu[0]:.1f}%–{100 * iu[1]:.1f}% tok/s/user")
    ins = report["in_sample"]
    assert out[-3] == (f"in-sample (every group in the calibration, its own included): median "
                       f"{100 * ins['median_error_tok_s_per_gpu']:.2f}% tok/s/GPU, "
                       f"{100 * ins['median_error_tok_s_per_user']:.2f}% tok/s/user; p90 "
                       f"{100 * ins['p90_error_tok_s_per_gpu']:.1f}%, {100 * ins['p90_error_tok_s_per_user']:.1f}%")
    out = out[:-6] + out[-5:-3] + out[-2:]
    assert out[-5] == (f"median: {100 * report['median_error_tok_s_per_gpu']:.2f}% tok/s/GPU, "
                       f"{100 * report['median_error_tok_s_per_user']:.2f}% tok/s/user; p90: "
                       f"{100 * report['p90_error_tok_s_per_gpu']:.1f}% tok/s/GPU, "
                       f"{100 * report['p90_error_tok_s_per_user']:.1f}% tok/s/user over 39 groups with at least 3 "
                       "concurrencies")
    assert out[-4].startswith("p90 by nearest rank: 30.8% tok/s/GPU, 29.8% tok/s/user (3 and 2 groups beyond 35%)")
    assert out[-3].startswith("without the measured software drift (8 groups")
    assert out[-2].endswith("DeepSeek-R1-0528 29, llama-3.1-70b-tp8-shard 4, llama-3.1-8b 4, DeepSeek-V4.1-Flash 1, "
                            "qwen3-30b-a3b 1")
    assert out[-1] == ("calibrated on 503 newest points of 286 groups; 15 points of 5 groups state no ISL, OSL or TP "
                       "and 7 points of 6 groups record a layout that cannot hold their decode GPUs: they calibrate "
                       "nothing; 1232 dated re-runs enter as drift only")


@pytest.fixture(scope="module")
def section(points, report):
    from analysis.pages import batch_scaling as bs

    return bs.model_validation_section(points, report=report)


def test_batch_scaling_validation_section(points, report, section):
    """The batch-scaling page's section on the validation: per family, the worst groups named, the summary with the
    targets, and the facts behind the worst groups, all read off the same leave-one-group-out report."""
    from analysis.pages import batch_scaling as bs

    sec = section
    rep, groups, fam, worst = sec["report"], sec["groups"], sec["by_family"], sec["worst"]
    assert rep["n_groups"] == report["n_groups"] == len(groups) == 39
    assert fam["groups"].sum() == rep["n_groups"] and fam["points"].sum() == len(sec["points"]) == 185
    assert list(fam["family"]) == ["B200", "B300", "H100", "H200", "H200", "MI300X", "MI325X", "MI355X"]
    assert fam.set_index("family").loc["B300", "hardware"] == "B300, GB300 NVL72"  # GB300 counts as a B300
    # H200's serving runs and its step sweeps are two rows: the sweeps, predicted best, would set the family's median
    rows = fam[fam["family"] == "H200"].set_index("runs")
    assert list(rows.index) == ["serving", "step sweeps"] and list(rows["groups"]) == [4, 9]
    for runs, serving in (("serving", True), ("step sweeps", False)):
        h200 = groups[(groups["family"] == "H200") & (groups["serving"] == serving)]
        assert rows.loc[runs, "median error tok/s/user %"] == pytest.approx(100 * h200["error_tok_s_per_user"].median())
    # 12.0% against 5.7%: pooled, the family's 13 groups read 8.9%
    assert rows.loc["serving", "median error tok/s/user %"] > 1.8 * rows.loc["step sweeps", "median error tok/s/user %"]
    assert 100 * groups.loc[groups["family"] == "H200", "error_tok_s_per_user"].median() < \
        rows.loc["serving", "median error tok/s/user %"]
    assert rows["p90 error tok/s/GPU %"].isna().all()  # 4 and 9 groups: too few for a p90 (FAMILY_P90_MIN_GROUPS)

    # The worst: every group beyond the p90 target in either metric, worst first by the larger of its two errors
    # (the H100 32-GPU group by its tok/s/GPU, 82.6%, while its tok/s/user is 28.2%).
    beyond = groups[np.fmax(groups["error_tok_s_per_user"], groups["error_tok_s_per_gpu"]) > 0.35]
    assert len(worst) == len(beyond) == 3 and list(worst["#"]) == list(range(1, 4))
    assert worst["worst_error"].is_monotonic_decreasing
    assert [g.split(" | ")[0] for g in worst["group"]] == ["DeepSeek-V4.1-Flash", "DeepSeek-R1-0528",
                                                           "DeepSeek-R1-0528"]
    assert "H200 SXM | fp8 | sglang | 8 GPU | TP8 EP1 DP1 | mtp | ISL 1024 OSL 1024" in worst["group"].iloc[2]
    # the next ones, beyond 30%: MI355X MoRI-SGLang and the H100 48-GPU 1K/8K group (the latter's note below)
    worst30 = bs.validation_worst(groups, threshold=0.30)
    assert len(worst30) == 5 and "mori-sglang" in worst30["group"].iloc[3] and "48 GPU" in worst30["group"].iloc[4]
    assert worst30["group"].iloc[2].startswith("DeepSeek-R1-0528 | H200 SXM | fp8 | sglang | 8 GPU")
    first = worst.iloc[0]
    assert first["error_tok_s_per_gpu"] == pytest.approx(rep["groups"][0]["error_tok_s_per_gpu"])
    assert first["dominant"] == "overhead at 1–8, memory at 16–128"  # the validation's points carry it
    shown = bs.validation_worst_table(worst)
    assert shown["points (concurrency)"].iloc[0] == "8 (1–128)"
    assert shown["error tok/s/user %"].iloc[-1] == pytest.approx(43.7)  # one decimal
    # signed: the 32-GPU H100 group is predicted too fast at every point, the 48-GPU one too slow
    assert list(shown["predicted ÷ measured, per user; per GPU"]) == ["0.83–2.7×; 2.4–5.2×", "1.1–1.5×; 1.1–2.8×",
                                                                       "1.4–1.5×; 1.4–1.5×"]
    assert bs.validation_worst_table(worst30)["predicted ÷ measured, per user; per GPU"].iloc[4] == \
        "0.61–0.8×; 0.61–0.78×"

    # The summary: the validation's numbers, each target and its verdict, computed.
    facts = sec["facts"]
    assert facts["targets_met"] == {"median_error_tok_s_per_user": True, "median_error_tok_s_per_gpu": True,
                                    "p90_error_tok_s_per_user": True, "p90_error_tok_s_per_gpu": True}
    summary = bs.validation_summary_text(rep, groups)
    assert "median error of 9.2% in tok/s/user and 9.3% in tok/s/GPU" in summary
    # the medians' bootstrap intervals sit beside them in the bold headline, the per-user one holding the target
    iu0, ig0 = rep["median_interval_tok_s_per_user"], rep["median_interval_tok_s_per_gpu"]
    assert (f"in tok/s/GPU (each group's error its mean |predicted ÷ measured − 1|; the groups resampled, 90% "
            f"bootstrap interval {100 * iu0[0]:.1f}%–{100 * iu0[1]:.1f}% and {100 * ig0[0]:.1f}%–{100 * ig0[1]:.1f}%)"
            ) in summary.split(".** ")[0] and iu0[0] < 0.10 < iu0[1]
    # met by the median, not by its interval, and the verdict says so
    assert (f"median tok/s/user ≤ 10%: met by the median, not by its interval (up to "
            f"{100 * rep['median_interval_tok_s_per_user'][1]:.1f}%, below)") in summary
    # the headline itself says what is left out and how the one unseen model of the claim card fares
    v41 = next(g for g in rep["groups"] if g["config"]["model"] == "DeepSeek-V4.1-Flash")
    assert (f"; in 37 of them other groups measure the same model, and the 2 groups of a model no other group "
            f"measured miss by {100 * v41['error_tok_s_per_user']:.1f}% per user and "
            f"{100 * v41['error_tok_s_per_gpu']:.1f}% per GPU (DeepSeek-V4.1-Flash) and ") in summary.split(".** ")[0]
    iv, iu = rep["median_interval_tok_s_per_gpu"], rep["median_interval_tok_s_per_user"]
    # the per-GPU median's interval lies below its target (8.3-14.4%), the per-user one holds its target
    assert iv[1] < 0.15 and "median tok/s/GPU ≤ 15%: met;" in summary
    assert (f"median at {100 * iu[0]:.1f}%–{100 * iu[1]:.1f}% in tok/s/user and {100 * iv[0]:.1f}%–{100 * iv[1]:.1f}% "
            "in tok/s/GPU, the 10% tok/s/user target inside it;") in summary
    # an interval whose end lies just past the target (15.02% at an earlier step) is printed to two decimals where one
    # would round it onto the target, and the verdict says the interval does not meet it
    near = bs.validation_summary_text({**rep, "median_interval_tok_s_per_gpu": [iv[0], 0.1502]}, groups)
    assert "median tok/s/GPU ≤ 15%: met by the median, not by its interval (up to 15.02%, below)" in near
    assert (f"{100 * iv[0]:.1f}%–15.02% in tok/s/GPU, the 10% tok/s/user target and the 15% tok/s/GPU target inside "
            "them") in near
    assert "DeepSeek-V4.1-Flash's source does not state all of ISL, OSL and TP" in summary
    assert ("qwen3-30b-a3b's batch-1 step is one of the three the MoE layer's fixed cost (twice a dense layer's) is "
            "inferred from: its error is not a held-out one.") in summary
    # the p90 verdict says which groups it covers, and the page gives the held-out band predictions carry
    assert ("p90 ≤ 35% in both metrics: met with the drift; not without it (over these groups; the groups measured "
            "at fewer concurrencies") in summary
    # the headline says what its p90 is without the measured drift: 31.6% and 38.1%, the per-GPU one past 35%
    nd = rep["without_drift"]
    assert (f"p90 26.7% and 28.3% (with the software drift its cell's re-runs measured applied to the 8 groups run "
            f"on older software; without it, p90 {100 * nd['p90_error_tok_s_per_user']:.1f}% and "
            f"{100 * nd['p90_error_tok_s_per_gpu']:.1f}%)") in summary
    assert nd["p90_error_tok_s_per_user"] < 0.35 < nd["p90_error_tok_s_per_gpu"]
    # a p90 that holds only with the drift says so (37.9% per GPU without it at an earlier step)
    past = bs.validation_summary_text({**rep, "without_drift": {**nd, "p90_error_tok_s_per_gpu": 0.379}}, groups)
    assert "in both metrics: met with the drift; not without it (over these groups;" in past
    assert "each group's mean" not in summary and "not over points" in bs.BatchScalingPage.validation_family_caption(
        type("P", (), {"validation": sec})())
    u, g = rep["held_out_ratio"]["tok_s_per_user"], rep["held_out_ratio"]["tok_s_per_gpu"]
    assert (f"Measured ÷ predicted over the 185 held-out points of 39 groups, each group weighing the same, runs "
            f"from {u[0]:.2f} to {u[1]:.2f} per user and "
            f"{g[0]:.2f} to {g[1]:.2f} per GPU (5th–95th percentile)") in summary
    assert bs._percent_against(0.1502, 0.15) == "15.02%" and bs._percent_against(0.1524, 0.15) == "15.2%"
    assert "The p90 interpolates between groups; by nearest rank it is 29.8% and 30.8% (2 and 3 of the 39 groups " \
        "are beyond 35%)." in summary
    assert "Only DeepSeek-V4.1-Flash and qwen3-30b-a3b are models the calibration sees in no other group" in summary
    assert "Serving runs alone (30 groups): median 9.4% / 9.5%" in summary
    # what the drift does: the older runs at the newest software instead
    nd = rep["without_drift"]
    assert nd["groups_with_drift"] == 8 and nd["p90_error_tok_s_per_gpu"] > rep["p90_error_tok_s_per_gpu"]
    assert (f"Without the measured software drift (8 groups from older dates predicted at the newest runs' software "
            f"instead): median {100 * nd['median_error_tok_s_per_user']:.1f}%") in summary
    # and what the same groups give with nothing held out (the model's form, not the leaving out)
    ins = rep["in_sample"]
    assert (f"With every group in the calibration, its own included, the same groups are predicted with a median of "
            f"{100 * ins['median_error_tok_s_per_user']:.2f}% / {100 * ins['median_error_tok_s_per_gpu']:.2f}% and a "
            f"p90 of {100 * ins['p90_error_tok_s_per_user']:.1f}% / {100 * ins['p90_error_tok_s_per_gpu']:.1f}%: what "
            "the model's form leaves with nothing held out.") in summary
    assert "p90 ≤ 35% in both metrics: met" in summary and "median tok/s/user ≤ 10%: met by the median" in summary
    n_user = int((groups["error_tok_s_per_user"] <= 0.10).sum())
    assert f"{n_user} of the 39 groups are within 10% per user" in summary and n_user == 22

    # The facts behind them: the drift the older runs carry, the AgentX output rate, the disaggregated prefill, and
    # for a group no mechanism explains, what its cell's other groups ran at a concurrency they share.
    notes = bs.validation_notes(groups, worst30, sec["points"], pd.DataFrame(), markdown=False)
    assert bs.validation_notes(groups, worst, sec["points"], pd.DataFrame(), markdown=False) == notes[:4]
    drifted = groups[(groups["software_drift"] - 1).abs() >= 5e-4]
    assert len(drifted) == 8 and drifted["software_drift"].max() == pytest.approx(1.61, abs=0.01)
    assert notes[0].startswith("Predictions of runs from older dates carry the software drift their cell measured: "
                               "8 of the 39 groups")
    assert "DeepSeek-R1-0528 | MI325X | fp8 | sglang | 8 GPU | TP8 EP1 DP1 | none | ISL 1024 OSL 8192, 2026-02-27, " \
           "×1.61" in notes[0]
    # after the drift, one note per group, in the table's order
    assert [n.split(" ")[1] for n in notes[1:]] == ["#1", "#2", "#3", "#5"]  # no cell sibling to name for #4
    assert notes[1].startswith("Group #1 is an AgentX run, and its source states no ISL or OSL, so it is predicted at "
                               "1,024 / 1,024 tokens and calibrates nothing. Its tok/s/user is off by -17% to +169%")
    assert "its tok/s/GPU is 2.4× to 5.2× too high: the published tok/s/GPU is 0.16 to 0.72" in notes[1]
    assert ("Group #2 is disaggregated (16 of its 32 GPUs prefill): from concurrency 32 to 128 its measured tok/s/GPU "
            "rises 1.2×, the prediction 2.3×. At 128 each prefill GPU took about 496 input tokens per second (31.0 "
            "tok/s/GPU × 32 GPUs × ISL/OSL 8 ÷ 16); at the datasheet's FLOP rate that is 2.8% of one GPU's peak, well "
            "under the model's prefill cap of 13% (measured from the TTFT of the shipped aggregated runs, all hardware "
            "together: none of this family): the cap does not bind, so what flattened this run's output is not a rate "
            "the model prices.") in notes[2]
    # the 48-GPU H100 group (beyond 30%): the cell's other groups at concurrency 8 (from the validation's own points)
    pts = sec["points"].set_index(["group", "concurrency"])
    sib = "DeepSeek-R1-0528 | H100 SXM | fp8 | dynamo-sglang | 32 GPU | TP16 EP1 DP1 | mtp | ISL 8192 OSL 1024"
    assert 1000 / pts.loc[(sib, 8.0), "measured_tok_s_per_user"] == pytest.approx(16.9, abs=0.05)
    assert notes[4].startswith("Group #5 is predicted from the other 2 validated groups of its cell (H100 · "
                               "dynamo-sglang) and those below three concurrencies. At concurrency 8, the one it "
                               f"shares with them, they took 16.9 ms ({sib}) and 11.5 ms")
    assert notes[4].endswith("per output token, this group 10.9 ms, its prediction 13.6 ms.")
    # H200 SGLang 1K/1K MTP: its cell's other groups at 16 users took 15.9 and 18.7 ms, it 16.4 ms, predicted 12.2 ms
    assert notes[3].startswith("Group #3 is predicted from the other 2 validated groups of its cell (H200 · sglang)")
    assert notes[3].endswith("this group 16.4 ms, its prediction 11.6 ms.")
    agentx = next(n for n in notes if "AgentX" in n)
    assert "(0.37 at concurrency 1: 42.3 against 456.6 × 1 ÷ 4)" in agentx


def test_predicted_against_measured_figure_draws_every_point_and_names_the_worst(section):
    from analysis.plots import scaling as plots

    sec = section
    pts, worst = sec["points"], sec["worst"]
    left, right = plots.predicted_vs_measured(pts, worst)
    families = set(pts["family"])

    def drawn(ax, sweeps=None):
        labels = families if sweeps is None else {f"{f} step sweeps (hollow: one GPU's timed step, no scheduler)"
                                                  for f in families} if sweeps else families
        return sum(len(c.get_offsets()) for c in ax.collections if c.get_label() in labels)

    # every point of every left-out group, coloured by family; a step sweep's hollow, a serving run's filled
    assert drawn(left, False) + drawn(left, True) == len(pts) == 185
    assert drawn(left, True) == int((~pts["serving"].astype(bool)).sum()) == 77
    hollow = [c for c in left.collections if "step sweeps" in str(c.get_label())]
    assert len(hollow) == 1 and hollow[0].get_facecolors().size == 0  # H200's, hollow
    assert drawn(right, False) + drawn(right, True) == int((pts["measured_tok_s_per_gpu"] > 0).sum()) == 185
    assert left.get_xscale() == left.get_yscale() == "log" and left.get_xlim() == left.get_ylim()
    assert sorted(t.get_text() for t in left.texts) == [f"#{n}" for n in range(1, 4)]
    assert sorted(t.get_text() for t in right.texts) == [f"#{n}" for n in range(1, 4)]
    labels = [t.get_text() for t in left.figure.legends[0].get_texts()]
    assert labels[:3] == ["±35% (p90 target)", "±10% per user, ±15% per GPU (the median targets, which apply to "
                          "group means, not points)", "predicted = measured"]
    assert set(labels) >= families | {"H200 step sweeps (hollow: one GPU's timed step, no scheduler)"}
    # The legend sits below both panels, off the data.
    legend = left.figure.legends[0].get_window_extent()
    assert legend.y1 <= min(left.get_window_extent().y0, right.get_window_extent().y0) + 1


def test_shipped_example_configs_predict_deepseek_v4_flash_on_gb300(cal):
    from analysis.perfmodel import predict as pr

    folder = Path(__file__).resolve().parents[1] / "data" / "specs" / "model-configs"
    users = {}
    for g, name in ((1, "1gpu"), (4, "4gpu"), (72, "72gpu"), (72, "72gpu-ep72")):
        dep = configfile.load(folder / f"deepseek-v4.1-flash-gb300-{name}.yaml")
        assert (dep.model, dep.hardware, dep.n_gpus, dep.precision) == ("DeepSeek-V4.1-Flash", "GB300 NVL72", g,
                                                                       "native")
        rows = pr.predict(dep, [1, 16], cal).rows
        assert rows[0]["tok_s_per_user"] >= rows[1]["tok_s_per_user"] > 0
        users[name] = rows[0]["tok_s_per_user"]
    # one GPU reads every weight alone: slower per user at batch 1 than the 4-GPU tray
    assert users["1gpu"] < users["4gpu"]
    # the rack as nine TP8 workers serves a user at one 8-GPU worker's speed; as one EP72 instance it pays the
    # NVLink domain's dispatch and combine on every MoE layer: slower per user than the TP8 worker
    assert st.parallelism(configfile.load(folder / "deepseek-v4.1-flash-gb300-72gpu.yaml")).workers == 9
    assert users["72gpu-ep72"] < users["72gpu"]


def test_fp4_vs_fp8_facts_are_fast_once_calibrated():
    import time

    scope.shipped_calibration()
    t = time.perf_counter()
    f = scope.fp4_vs_fp8("DeepSeek-V4.1-Flash", "GB300 NVL72", n_gpus=4, concurrency=1)
    assert time.perf_counter() - t < 0.2
    assert set(f["rows"]) == {"native", "fp8", "fp4"} and f["native_recipe"].startswith("fp8 (shared_experts fp4")
    # FP4 reads fewer weight bytes than FP8: faster per user, but less than 2x (fixed costs and the KV read stay)
    assert 1.0 < f["fp4_over_fp8"] < 2.0
    # on four GPUs the layout is TP4, as the V4.1-Flash evidence ran (64 heads split four ways); it had been EP4 with
    # attention data-parallel, unstated, the validation's worst class of groups
    assert f["layout"] == {"tp": 4, "ep": 1, "dp": 1}
    ep = scope.fp4_vs_fp8("DeepSeek-V4.1-Flash", "GB300 NVL72", n_gpus=4, concurrency=1,
                          layout={"tp": 1, "ep": 4, "dp": 4})
    assert ep["layout"] == {"tp": 1, "ep": 4, "dp": 4} and ep["rows"]["native"]["tok_s_per_user"] != \
        f["rows"]["native"]["tok_s_per_user"]
    assert f["rows"]["fp8"]["vs_fp8"] == pytest.approx(1.0)


def test_config_prediction_prints_the_same_models_measured_points_beside_it(points):
    """The 4-GPU V4.1-Flash config against InferenceX #3176's published 4 × GB300 points: each point predicted at
    its own conditions (DSpark, its group left out), and the config's own prediction beside the matching ones."""
    from analysis.perfmodel import run

    dep = configfile.load(Path("data/specs/model-configs/deepseek-v4.1-flash-gb300-4gpu.yaml"))
    rep = run.model_report(dep, points, concurrency=[1, 16], n_boot=0)
    m = rep["measured"]
    assert m["gpu_counts_measured"] == [4] and m["nearest_gpu_count"] == 4
    by_c = {p["concurrency"]: p for p in m["points"]}
    c1 = by_c[1.0]
    # the published row: 1000 / mean TPOT 2.19 ms at concurrency 1, 42.34 tok/s/GPU (InferenceX #3176)
    assert c1["tok_s_per_user"] == pytest.approx(1000 / 2.19) and c1["tok_s_per_gpu"] == pytest.approx(42.34)
    assert "InferenceX/pull/3176" in c1["source"] and c1["left_out_group"]
    own = c1["predicted_at_own_conditions"]
    assert own["error_tok_s_per_user"] == pytest.approx(own["tok_s_per_user"] / c1["tok_s_per_user"] - 1)
    assert own["tau"] > 1  # DSpark without a recorded acceptance: the calibrated τ, not 1
    cp = c1["config_prediction"]
    assert cp["tok_s_per_user"] == rep["rows"][0]["tok_s_per_user"]
    assert cp["ratio_tok_s_per_user"] == pytest.approx(rep["rows"][0]["tok_s_per_user"] / c1["tok_s_per_user"])
    assert "spec_method" in c1["differs_from_config"] and "precision" not in c1["differs_from_config"]
    assert by_c[2.0]["config_prediction"] is None  # concurrency 2 was not asked for
    # AgentX states no ISL/OSL; its table's total and output tok/s/GPU give the input per output token it served:
    # (6,547.13 - 42.34) / 42.34 at concurrency 1 and (104,429.47 - 904.78) / 904.78 at 128 (InferenceX #3176)
    assert c1["input_tokens_per_output_token"] == pytest.approx((6547.13 - 42.34) / 42.34, rel=1e-4)
    assert by_c[128.0]["input_tokens_per_output_token"] == pytest.approx((104429.47 - 904.78) / 904.78, rel=1e-4)
    assert bs.input_per_output({"total_tok_s": 10.0, "output_tok_s": 0.0}) is None
    assert bs.input_per_output({"total_tok_s": 5.0, "output_tok_s": 10.0}) is None  # a total below the output
    one = run.model_report(configfile.load(Path("data/specs/model-configs/deepseek-v4.1-flash-gb300-1gpu.yaml")),
                           points, concurrency=[1], n_boot=0)["measured"]
    assert 1 not in one["gpu_counts_measured"] and all(p["config_prediction"] is None for p in one["points"])


def test_config_says_how_much_of_the_step_is_the_calibrated_fixed_cost(points, cal, capsys):
    """C00 credits a megakernel-style engine, which removes per-layer launches: at one user on 4 GB300 the model's
    step is mostly the fixed cost calibrated on other engines' runs, and the command says what is left without it."""
    from analysis import cli
    from analysis.perfmodel import run

    shipped = cal  # the shipped points' calibration (the name is reused below for the report's)

    path = "data/specs/model-configs/deepseek-v4.1-flash-gb300-4gpu.yaml"
    row = run.model_report(configfile.load(Path(path)), points, concurrency=[1], n_boot=0)["rows"][0]
    t = row["terms"]
    assert t["overhead_ms"] > 0.7 * row["step_ms"] and row["dominant"] == "overhead"
    assert row["tok_s_per_user_without_overhead"] == pytest.approx(1000 / (row["step_ms"] - t["overhead_ms"]))
    # τ = 1: the fixed cost is most of the step; without it the step gives about 4× the speed, still short of 1,000
    assert 1000 > row["tok_s_per_user_without_overhead"] > 3.5 * row["tok_s_per_user"]
    # at the collectives' measured latency (the calibration scales them by comm_scale, 0.72 here) it is less again:
    # at one GPU count a per-layer fixed cost and per-layer collectives cannot be told apart
    cal = run.model_report(configfile.load(Path(path)), points, concurrency=[1], n_boot=0)["calibration"]
    scale = cal["efficiency"]["comm_scale"]
    assert row["tok_s_per_user_without_overhead_measured_collectives"] == pytest.approx(
        1000 / (row["step_ms"] - t["overhead_ms"] - t["collectives_ms"] + t["collectives_ms"] / scale))
    assert row["tok_s_per_user_without_overhead_measured_collectives"] < 1000
    assert cli.main(["model", "--config", path, "--concurrency", "1"]) == 0
    out = capsys.readouterr().out
    assert (f"fixed cost: {t['overhead_ms']:.3f} of the {row['step_ms']:.3f} ms step at concurrency 1, calibrated on "
            f"B300 (any framework) runs; an engine that removed it entirely would run "
            f"{row['tok_s_per_user_without_overhead']:,.1f} tok/s/user there with the collectives as calibrated") in out
    assert f"{row['tok_s_per_user_without_overhead_measured_collectives']:,.1f} at their measured latency" in out
    # the AgentX points beside it state no ISL/OSL: the line says what input per output token they served
    assert ("input per output token: the 8 agentx point(s) state no ISL/OSL; their own total and output throughput "
            "give 114–171 input tokens") in out and "against 1 at the ISL 1,024 / OSL 1,024" in out
    # their own predictions ran at the calibration's DSpark τ (no acceptance recorded): each row and a line say so,
    # with the range V4.1-Flash's golden curve gives
    tau = run.model_report(configfile.load(Path(path)), points, concurrency=[1], n_boot=0, band={})[
        "measured"]["points"][0]["predicted_at_own_conditions"]["tau"]
    assert f"dspark (unknown; τ {tau:.2f})" in out
    assert (f"τ predicted at: {tau:.2f}, the calibration's τ for dspark whose acceptance the source does not record "
            "(fitted on other runs: an assumption, not this run's acceptance); DeepSeek-V4.1-Flash's golden curve for "
            "it reads 1.81–4.07 (dsv41flash_dspark.yaml)") in out
    # no vLLM run calibrates the B300 family: that fixed cost is other engines' pooled fit, and the answer gives the
    # range the calibrated engines span, on B300 and everywhere (host-bound launches left out), at each end
    spread = cal["fixed_cost_spread"]
    b300 = [v.overhead_ms_per_layer for k, v in shipped.cells.items() if k.startswith("B300 · ")]
    assert spread["cells_family"] == len(b300) == 3
    assert spread["overhead_ms_per_layer_family"] == pytest.approx([min(b300), max(b300)])
    assert spread["overhead_ms_per_layer_all"][0] <= min(b300) and spread["overhead_ms_per_layer_all"][1] < 0.5
    slow, fast = row["tok_s_per_user_fixed_cost_spread"]["all"]
    assert slow < row["tok_s_per_user"] <= fast * 1.0001 and slow < 0.5 * fast
    assert "assumed fixed cost: no calibrating run of vllm on this hardware family" in out
    assert f"{slow:,.1f}–{fast:,.1f} tok/s/user at concurrency 1" in out


def test_a_config_whose_drafter_is_not_priced_says_so(tmp_path, capsys):
    from analysis import cli

    path = tmp_path / "dspark.yaml"
    path.write_text("model: DeepSeek-V4.1-Flash\nhardware: GB300 NVL72\nn_gpus: 4\ntp: 4\nspec_method: dspark\n")
    assert cli.main(["model", "--config", str(path), "--concurrency", "1", "--n-boot", "0"]) == 0
    assert "drafting: not priced for dspark" in capsys.readouterr().out
    path.write_text("model: DeepSeek-V4.1-Flash\nhardware: GB300 NVL72\nn_gpus: 4\ntp: 4\nspec_method: mtp\n")
    assert cli.main(["model", "--config", str(path), "--concurrency", "1", "--n-boot", "0"]) == 0
    assert "drafting:" not in capsys.readouterr().out


def test_a_config_named_as_the_spec_tables_name_the_model_finds_its_points_and_its_date(points, tmp_path, capsys):
    """``model: DeepSeek-R1`` names no point (the points say DeepSeek-R1-0528): the measured block shows the points
    the spec tables read as the same model and says so (it used to fail with a bare KeyError), the dated re-runs stay
    out of it, and a config that names its software date prints the drift it applies and compares the date."""
    from analysis import cli
    from analysis.perfmodel import beside, run

    path = tmp_path / "mi325.yaml"
    path.write_text("model: DeepSeek-R1\nhardware: MI325X\nn_gpus: 8\ntp: 8\nprecision: fp8\nframework: sglang\n"
                    "isl: 1024\nosl: 8192\ndate: 2026-02-27\n")
    dep = configfile.load(path)
    rows = beside.same_model_rows(dep, points)
    assert set(rows["model"]) == {"DeepSeek-R1-0528"} and len(rows) == 15  # 1K/1K, 1K/8K, 8K/1K, with and without MTP
    assert not rows["flags"].astype(str).str.contains("dated-history").any()
    rep = run.model_report(dep, points, concurrency=[4], n_boot=0)
    assert rep["measured"]["matched_by"] == "DeepSeek-R1-0528"
    assert rep["calibration"]["model_calibrating_groups"] > 200  # DeepSeek-R1-0528's groups, by the spec tables' name
    drift = rep["calibration"]["software_drift"]
    assert drift["date"] == drift["measured_on"] == "2026-02-27" and drift["configurations"] == 3
    assert drift["step_time_factor"] == pytest.approx(float(np.exp(np.median(  # itself (its newest run, 0) and two
        [0.0] + [d["2026-02-27"] for g, d in cb.drift_table(cb.training_table(points))["MI325X · sglang"].items()
                 if d.get("2026-02-27", 0) != 0]))))
    same_day = [p for p in rep["measured"]["points"] if p["osl"] == 8192 and p["concurrency"] == 4]
    # the same conditions, but that run's recipe set an FP8 KV cache (the config prices the recipe's BF16) and
    # InferenceX drew the lengths on [0.8·L, L] where the config runs them as given
    assert len(same_day) == 1 and same_day[0]["differs_from_config"] == ["kv_dtype", "length_spread"]
    assert beside.differences(replace(dep, range_ratio=0.8, kv_dtype="fp8"), rows[
        (rows["osl"] == 8192) & (rows["concurrency"] == 4)].iloc[0].to_dict()) == []
    assert "date" in [p for p in rep["measured"]["points"] if p["osl"] == 1024][0]["differs_from_config"]
    assert cli.main(["model", "--config", str(path), "--concurrency", "4", "--n-boot", "0"]) == 0
    out = capsys.readouterr().out
    assert "software date 2026-02-27: step time × " in out and "re-run on 2026-02-27" in out
    assert "no point is named DeepSeek-R1" in out and "sources: data/raw/inferencex/benchmarks.json" in out
    assert "length_spread: those runs drew each request's ISL and OSL uniformly between 0.8× and 1× of the nominal" in out
    assert "kv_dtype: those runs' recipes set another KV-cache dtype than this config prices" in out
    assert "no group that calibrates the parameters runs" not in out


def test_a_measured_point_beside_a_config_is_predicted_as_the_validation_predicts_it(points, report, tmp_path):
    """The measured block leaves each point's own group out, as the validation does: both give the same prediction.
    (A re-run's file line once shared a newest point's run id and line, so the MI300X 1K/8K point at concurrency 64
    was predicted with another group left out and its own kept in: +22.5% where the validation says −13%.)"""
    from analysis.perfmodel import run

    path = tmp_path / "mi300.yaml"
    path.write_text("model: DeepSeek-R1-0528\nhardware: MI300X\nn_gpus: 8\ntp: 8\nprecision: fp8\n"
                    "framework: sglang\nisl: 1024\nosl: 8192\n")
    measured = run.model_report(configfile.load(path), points, concurrency=[64], n_boot=0)["measured"]["points"]
    own = [p for p in measured if p["osl"] == 8192 and p["isl"] == 1024 and p["concurrency"] == 64]
    assert len(own) == 1 and own[0]["left_out_group"]
    g = _group(report, "MI300X | fp8 | sglang", "| none | ISL 1024 OSL 8192")
    v = [p for p in g["points"] if p["concurrency"] == 64][0]
    assert own[0]["predicted_at_own_conditions"]["tok_s_per_user"] == pytest.approx(v["predicted_tok_s_per_user"])


def test_shipped_calibration_is_kept_beside_the_points_and_refitted_when_they_change(tmp_path, monkeypatch):
    import shutil

    pts = tmp_path / "points.parquet"
    shutil.copy(config.POINTS_FILE, pts)
    monkeypatch.setattr(config, "POINTS_FILE", pts)
    scope.shipped_calibration.cache_clear()
    try:
        first = scope.shipped_calibration()
        cached = json.loads((tmp_path / scope.CACHE_NAME).read_text())
        assert cached["key"] == scope._cache_key(pts)
        scope.shipped_calibration.cache_clear()
        again = scope.shipped_calibration()  # read back, not refitted: the same numbers
        assert again.to_dict() == first.to_dict()
        (tmp_path / scope.CACHE_NAME).write_text("{not json")  # a corrupt cache is refitted and rewritten
        scope.shipped_calibration.cache_clear()
        assert scope.shipped_calibration().to_dict()["global"] == pytest.approx(first.to_dict()["global"])
        assert json.loads((tmp_path / scope.CACHE_NAME).read_text())["key"] == cached["key"]
        df = pd.read_parquet(pts)
        df.iloc[:-1].to_parquet(pts)  # the points changed: the key changes
        assert scope._cache_key(pts) != cached["key"]
    finally:
        scope.shipped_calibration.cache_clear()


# --- unfused activation quantisation ----------------------------------------------------------------------

def test_unfused_quantisation_is_charged_to_the_layers_fixed_cost():
    eff = st.Efficiency(bw_share=1.0, flop_share=1.0, overhead_ms_per_layer=0.1, unfused_quant=0.8)
    fused = float(st.step_time(2.0, 0.0, 0.0, eff, 10)["step_ms"])
    unfused = float(st.step_time(2.0, 0.0, 0.0, eff, 10, unfused=1.0)["step_ms"])
    assert (fused, unfused) == pytest.approx((2.0 + 1.0, 2.0 + 1.0 * 1.8))


def test_unfused_cost_fitted_against_the_sweeps_own_difference(points, cal):
    """On the H200 CUDA-graph sweeps the FP8 step at batch 1 is slower than BF16 although it reads half the bytes:
    measured, step − weight bytes ÷ the run's copy bandwidth (4.26 TB/s) is 59 µs per layer more for FP8 (70B
    shard: 10.14 → 12.87 ms over 80 layers). The cell's fitted extra cost per layer (overhead × unfused_quant) is
    the same order, under the level prior that also sets its overhead."""
    d = points[(points["model"] == "llama-3.1-70b-tp8-shard") & (points["framework"] == "pytorch-cudagraph")
               & (points["batch_size"] == 1)].set_index("precision")
    fixed = {p: d.loc[p, "step_ms"] - d.loc[p, "weight_bytes"] / 4.259e12 * 1e3 for p in ("bf16", "fp8")}
    measured_us = (fixed["fp8"] - fixed["bf16"]) / 80 * 1e3
    assert measured_us == pytest.approx(59.2, abs=0.5)
    eff = cal.cells["H200 · pytorch-cudagraph"]
    fitted_us = eff.overhead_ms_per_layer * eff.unfused_quant * 1e3
    assert 0.5 * measured_us < fitted_us < 1.5 * measured_us


def test_eager_fp8_sweeps_predicted_with_their_unfused_kernels(report):
    """Left out, the eager FP8 groups were predicted 3.3× and 2.5× too fast when the model had no term for the
    kernels FP8 adds (their BF16 twins run fewer); with it, within 35%."""
    for model in ("llama-3.1-70b-tp8-shard", "llama-3.1-8b"):
        g = _group(report, f"{model} | H200 SXM | fp8 | pytorch-eager", "")
        assert g["error_tok_s_per_user"] < 0.35


def test_decode_duty_comes_from_fixed_length_runs_only(points, train, cal):
    """GB300 · vLLM holds one serving group, InferenceX #3176's AgentX table, which states no ISL/OSL: its turns spend
    most of their time in prefill (at concurrency 1, 42.3 tok/s/GPU is 0.37 of 456.6 tok/s/user ÷ 4 GPUs). That duty
    is not a fixed-length run's, so the cell takes its family's median, and a 1K/1K config on 4 GB300 is priced with
    it."""
    agentx = train[(train["cell"] == "B300 · vllm") & train["serving"].astype(bool)]
    assert len(agentx) == 8 and agentx["isl"].isna().all()
    assert agentx["duty"].iloc[0] == pytest.approx(42.34 * 4 / 456.621, rel=1e-4)
    assert "B300 · vllm" not in cal.duty and cal.decode_duty("B300", "vllm") == cal.duty["B300"]
    fixed = train[(train["family"] == "B300") & train["serving"].astype(bool) & train["isl"].notna()]
    assert cal.duty["B300"] == pytest.approx(float(fixed[cb.newest(fixed)]["duty"].median()))
    dep = configfile.load(config.SPECS_DIR / "model-configs" / "deepseek-v4.1-flash-gb300-4gpu.yaml")
    row = pr.predict(dep, [1], cal).rows[0]
    assert row["tok_s_per_gpu"] == pytest.approx(row["tok_s_per_user"] * cal.duty["B300"] / 4)


def test_global_routing_and_assumed_tau_as_the_readme_says(cal):
    assert (round(cal.routing, 2), round(cal.tau_spec, 2)) == (0.42, 2.20)


def test_points_without_stated_conditions_are_scored_but_never_calibrate(points, train, cal, report):
    """A serving point whose source states no ISL, OSL or TP is predicted at the defaults; fitting the efficiency
    parameters to it would fit them to the defaults. Three published tables state none of them in full (InferenceX
    #3176's AgentX, SGLang #33082 and #33109's V4-Flash-0731): their points leave the calibration unchanged, and the
    validation still predicts and scores the AgentX group."""
    unstated = train[cb.newest(train) & ~cb.conditions_stated(train)]
    assert sorted(unstated["source_file"].map(lambda f: Path(f).name).unique()) == [
        "inferencex-pr3176-v4.1-flash-gb300-vllm-agentx.yaml", "sglang-pr33082-v4-flash-0731-gb300.yaml",
        "sglang-pr33109-v4-flash-0731-h200.yaml"]
    assert len(unstated) == 15 and not train.loc[~train["serving"].astype(bool)].index.isin(unstated.index).any()
    without = cb.calibrate(train.drop(index=unstated.index))
    assert without.global_ == cal.global_ and without.cells == cal.cells and without.families == cal.families
    assert _group(report, "DeepSeek-V4.1-Flash | GB300 NVL72", "dspark")["error_tok_s_per_user"] > 0


def test_validate_scores_every_group_on_request(capsys, monkeypatch):
    """--min-concurrencies 1 scores the groups the target set leaves out; below 1 is a one-line error."""
    from analysis import cli
    from analysis.perfmodel import run

    seen = {}

    def fake(points, *, min_concurrencies):
        seen["n"] = min_concurrencies
        raise ValueError("stop here")  # the command's wiring is what is tested; the validation is tested above

    monkeypatch.setattr(run, "validation_report", fake)
    assert cli.main(["model", "--validate", "--min-concurrencies", "1"]) == 2 and seen["n"] == 1
    assert cli.main(["model", "--validate", "--min-concurrencies", "0"]) == 2
    assert "--min-concurrencies must be >= 1, got 0" in capsys.readouterr().err


def test_an_moe_layers_fixed_cost_is_twice_a_dense_layers_on_the_h200_sweep(train):
    """step.MOE_LAYER_FIXED, recomputed from the shipped sweep: at batch 1 (BF16, CUDA graphs, context 1,024) the step
    less its weight and KV bytes at the measured copy bandwidth, per layer, is about 77 µs for both dense models and
    151 µs for Qwen3-30B-A3B's MoE layers."""
    from analysis import specs

    hw = specs.hardware("H200 SXM")
    rows = train[(train["framework"] == "pytorch-cudagraph") & (train["precision"] == "bf16") & (train["batch"] == 1)
                 & (train["context"] == 1024)]
    per_layer = {r["model"]: (r["step_ms"] - r["memory_ms"] * hw.hbm_bandwidth_tb_s / hw.achievable_bandwidth_tb_s)
                 / specs.model(r["model"]).n_layers * 1000 for _, r in rows.iterrows()}
    assert per_layer["llama-3.1-8b"] == pytest.approx(76.9, abs=0.05)
    assert per_layer["llama-3.1-70b-tp8-shard"] == pytest.approx(75.7, abs=0.05)
    assert per_layer["qwen3-30b-a3b"] == pytest.approx(150.9, abs=0.05)
    dense = (per_layer["llama-3.1-8b"] + per_layer["llama-3.1-70b-tp8-shard"]) / 2
    assert per_layer["qwen3-30b-a3b"] / dense - 1 == pytest.approx(st.MOE_LAYER_FIXED, abs=0.05)
    # the fixed cost counts it: Qwen3's 48 MoE layers are 96 layers' worth, Llama's 32 are 32, DeepSeek-R1's 61
    # (58 MoE) 119, and an MTP draft pass adds its MoE layer twice and the output head once
    geo = lambda model, **kw: st.geometry(st.Deployment(model=model, hardware="H200 SXM", n_gpus=8, **kw),  # noqa
                                          verify=kw.get("draft_tokens", 0) + 1)
    assert geo("qwen3-30b-a3b").fixed_layers == 96 and geo("llama-3.1-8b").fixed_layers == 32
    assert geo("DeepSeek-R1-0528").fixed_layers == 119
    assert geo("DeepSeek-R1-0528", spec_method="mtp", draft_tokens=3).fixed_layers == 119 + 3 * (2 + 1)


def test_a_layout_group_says_it_calibrates_nothing_and_why(points):
    """Scored at one concurrency, a group whose recorded layout cannot hold its GPUs says so in the validation's JSON
    (calibrates False, its conditions stated) and on the page (its own note, not the unstated-conditions one)."""
    from analysis.pages import batch_scaling as bs

    train = cb.training_table(points)
    cell = train[cb.newest(train) & (train["cell"] == "B200 · dynamo-sglang")]  # one cell: a quick validation
    gid = cell.loc[cb.conditions_stated(cell) & ~cb.layout_consistent(cell) & (cell["n_decode_gpus"] == 48),
                   "group_id"].iloc[0]
    rep = va.validate(points, train=cell, min_concurrencies=1)
    g = next(x for x in rep["groups"] if x["group_id"] == gid)
    assert (g["calibrates"], g["conditions_stated"], g["layout_consistent"]) == (False, True, False)
    assert all(x["calibrates"] == (x["conditions_stated"] and x["layout_consistent"]) for x in rep["groups"])
    groups = bs.validation_groups(rep)
    row = groups[groups["group"] == g["group"]].assign(**{"#": 1})
    notes = bs.validation_notes(groups, row, pd.DataFrame(columns=["group", "concurrency"]), pd.DataFrame(),
                                markdown=False)
    assert any(n.startswith("Group #1's recorded layout (TP1 EP1 DP1, its workers as recorded) cannot hold its 48 "
                            "decode GPUs") for n in notes)
    assert not any("source states no" in n for n in notes)


def test_drift_is_read_per_day(train):
    """A date with a time of day reads its day's drift (the drift table is keyed by day)."""
    drift = cb.drift_table(train)
    assert all(len(d) == 10 for cell in drift.values() for g in cell.values() for d in g)
    assert cb.software_factor(drift, "MI300X", "sglang", "2026-02-27T08:00:00+00:00") == \
        cb.software_factor(drift, "MI300X", "sglang", "2026-02-27")
