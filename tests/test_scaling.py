"""The batch model on real sweeps: the measured H200 runs, Splitwise and LLM-Inference-Bench slices, InferenceX."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from conftest import RAW, TEST_DATA

from analysis import data, scaling, sweeps
from analysis.ingest import ingest
from analysis.pages import batch_scaling as page

DATA = TEST_DATA / "scaling"
CUDAGRAPH = "pytorch-cudagraph"


@pytest.fixture(scope="module")
def h200():
    return ingest([RAW / "h200"], RAW / "manifest.yml", progress=False).points


@pytest.fixture(scope="module")
def floors(h200):
    return scaling.floor_inputs(data.load_calibration(RAW / "h200"), points=h200)


@pytest.fixture(scope="module")
def h200_fits(h200, floors):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)
        return scaling.fit(h200, n_boot=60, floors=floors)


@pytest.fixture(scope="module")
def moe(h200):
    return h200[h200["model"] == "qwen3-30b-a3b"]


@pytest.fixture(scope="module")
def llama8b(h200):
    return h200[(h200["model"] == "llama-3.1-8b") & (h200["precision"] == "bf16") & (h200["framework"] == CUDAGRAPH)]


# --- MoE sweep --------------------------------------------------------------------------------------
def test_moe_sweep_needs_the_expert_coverage_term(h200_fits):
    row = scaling.select(h200_fits, model="qwen3-30b-a3b")
    assert row["variant"] == "moe"
    assert row["cv_error_moe"] < row["cv_error_dense"] / 5
    assert 0.35 < row["max_abs_rel_error_dense"] < 0.45  # the dense model misses by up to ~40%
    assert row["max_abs_rel_error"] < 0.05  # the MoE-aware fit is within 5% at every batch
    assert row["moe_coverage"].startswith("uniform")
    assert (row["moe_experts"], row["moe_top_k"]) == (128, 8)


def test_moe_every_batch_within_five_percent(h200, h200_fits):
    res = scaling.residuals(h200, h200_fits)
    moe = res[res["group"].str.startswith("qwen3-30b-a3b")]
    assert sorted(moe["batch"]) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert moe["rel_error"].abs().max() < 0.05


def _moe_floor_ms() -> float:
    """KV read of one sequence at L=1024 plus its token's matmul FLOPs, from the log's model record and ceilings."""
    kv_bytes = 1024 * 48 * 2 * 4 * 128 * 2  # L x layers x (K, V) x kv_heads x head_dim x bf16
    matmul_flops = 2 * (1_229_717_504 + 48 * 8 * 4_718_592)  # always-read + top-8 experts in 48 layers
    return kv_bytes / 4.259e12 * 1e3 + matmul_flops / 694.9e12 * 1e3


def test_floor_inputs_read_the_model_record_and_calibration(floors):
    assert floors["ceilings"]["H200 SXM"]["copy_tb_s"] == 4.259
    assert floors["ceilings"]["H200 SXM"]["matmul_tflop_s"] == {"bf16": 694.9, "fp8": 1293.9}
    geo = floors["models"]["qwen3-30b-a3b"]
    assert (geo["layers"], geo["kv_heads"], geo["head_dim"], geo["experts"], geo["top_k"]) == (48, 4, 128, 128, 8)
    assert _moe_floor_ms() == pytest.approx(0.02364 + 0.00875, abs=2e-5)


def test_moe_extrapolation_from_small_batches(moe, floors):
    """Fitted on B <= 16 only, the MoE-aware model predicts every batch 32..256 within 10%.

    Below B = 16 the experts touched grow almost linearly with B, so the batches cannot tell t1 from tm; without a
    physical bound t1 sits at 0 and B = 128, 256 are under-predicted by 12% and 26%. With t1 bounded by one
    sequence's KV read plus its matmul FLOPs at the measured H200 ceilings, t1 sits at that floor (reported as
    degenerate: not identified above it) and the large batches follow."""
    small = scaling.extrapolation_check(moe, fit_max_batch=16, floors=floors)
    assert (small["variant"] == "moe").all() and (small["n_fit_batches"] == 5).all()
    err = small.set_index("batch")["rel_error"]
    assert sorted(err.index) == [32, 64, 128, 256]
    assert err.abs().max() < 0.10
    assert err[256] == pytest.approx(-0.073, abs=0.01) and err[128] == pytest.approx(-0.025, abs=0.01)
    assert small["t1_floor_ms"].iloc[0] == pytest.approx(_moe_floor_ms(), rel=1e-9)
    assert small["t1_ms"].iloc[0] == pytest.approx(small["t1_floor_ms"].iloc[0], rel=1e-6)
    assert small["floor_source"].iloc[0].startswith("KV 100.7 MB/seq at L=1024")
    assert small["degenerate"].str.contains("t1_ms at its physical floor").all()

    # Were the KV read and the matmuls overlapped (the larger of the two, 0.0236 ms), B = 256 would miss by 12%.
    overlap = scaling.extrapolation_check(moe, fit_max_batch=16, floors={**floors, "combine": "max"})
    assert overlap.set_index("batch")["rel_error"][256] == pytest.approx(-0.123, abs=0.01)
    assert overlap["t1_floor_ms"].iloc[0] == pytest.approx(1024 * 48 * 2 * 4 * 128 * 2 / 4.259e12 * 1e3, rel=1e-9)

    # Without the bound (no geometry known) the same fit pins t1 at 0 and misses the large batches.
    unbounded = scaling.extrapolation_check(moe, fit_max_batch=16).set_index("batch")
    assert unbounded["rel_error"][128] == pytest.approx(-0.123, abs=0.01)
    assert unbounded["rel_error"][256] == pytest.approx(-0.258, abs=0.01)
    assert unbounded["degenerate"].str.contains("t1_ms at bound 0").all()
    assert (unbounded["t1_floor_ms"] == 0).all() and (unbounded["floor_source"] == "").all()


def test_the_floor_is_a_lower_bound_of_the_measured_cost(h200_fits):
    """Every CUDA-graph sweep adds more per sequence between its two largest batches than the floor; eager launches
    hide GPU work in host gaps (most add less than the floor at the top), so they get no floor."""
    fitted = h200_fits[h200_fits["status"] == "fitted"]
    graphs = fitted[fitted["framework"] == CUDAGRAPH]
    assert len(graphs) == 5 and (graphs["floor_ms_per_seq_at_ref"] > 0).all()
    assert (graphs["floor_ms_per_seq_at_ref"] < graphs["marginal_ms_per_seq_top"]).all()
    assert (graphs["t1_ms"] >= graphs["t1_floor_ms"] * (1 - 1e-9)).all()
    assert (graphs["t2_ms"] >= graphs["t2_floor_ms"] * (1 - 1e-9)).all()
    eager = fitted[fitted["framework"] == "pytorch-eager"]
    assert (eager["t1_floor_ms"] == 0).all() and eager["floor_source"].str.contains("host-bound").all()
    twin = graphs.set_index(["model", "precision"])["floor_ms_per_seq_at_ref"]
    below = eager["marginal_ms_per_seq_top"].to_numpy() < twin.loc[list(zip(eager["model"], eager["precision"]))].to_numpy()
    assert below.sum() == 3  # 3 of 4 eager sweeps add less per sequence at the top than the CUDA-graph floor
    # The full MoE sweep identifies t1 above its floor: the bound is not what fits it.
    moe_row = scaling.select(h200_fits, model="qwen3-30b-a3b")
    assert moe_row["t1_ms"] > 1.3 * moe_row["t1_floor_ms"]
    table = scaling.floors_table(h200_fits)
    assert len(table) == 9 and "floor_source" in table.columns


def test_degenerate_fit_warns(moe):
    with pytest.warns(scaling.ScalingWarning, match="t1_ms at bound 0"):
        scaling.fit(moe[moe["batch_size"] <= 16], n_boot=0)


def test_measured_coverage_is_an_option_and_named(moe):
    fits = scaling.fit(moe, n_boot=0, coverage_source="measured")
    row = fits.iloc[0]
    assert row["moe_coverage"] == "measured experts_touched"
    assert row["max_abs_rel_error"] < 0.06


# --- Llama 3.1 8B bf16 with CUDA graphs ---------------------------------------------------------
def test_single_user_peak_is_the_measured_batch_1(h200_fits):
    row = scaling.select(h200_fits, model="llama-3.1-8b", precision="bf16", framework=CUDAGRAPH)
    assert row["peak_tok_s_per_user"] == pytest.approx(1000 / 6.01605, rel=1e-6)  # 166.2
    assert row["peak_tok_s_per_user_lo"] <= row["peak_tok_s_per_user"] <= row["peak_tok_s_per_user_hi"]
    assert row["peak_model_error"] == pytest.approx(row["peak_tok_s_per_user_model"] / row["peak_tok_s_per_user"] - 1)
    assert abs(row["peak_model_error"]) < 0.10
    assert row["peak_tok_s_per_user_model_lo"] <= row["peak_tok_s_per_user_model"] <= row["peak_tok_s_per_user_model_hi"]


def test_throughput_at_the_largest_batch_512(h200_fits):
    row = scaling.select(h200_fits, model="llama-3.1-8b", precision="bf16", framework=CUDAGRAPH)
    assert (row["largest_batch"], row["largest_batch_context"]) == (512, 1024)
    assert row["largest_batch_tok_s"] == pytest.approx(512 * 1000 / 35.67585, rel=1e-6)  # 14,351
    assert row["largest_batch_tok_s"] == pytest.approx(14_350, rel=0.001)
    assert row["largest_batch_tok_s_per_gpu"] == row["largest_batch_tok_s"]  # one GPU
    assert row["largest_batch_tpot_ms"] == pytest.approx(35.67585)
    assert row["largest_batch_tok_s_lo"] <= row["largest_batch_tok_s"] <= row["largest_batch_tok_s_hi"]
    # The largest measured batch is not the asymptote: the sweep stopped short of saturation.
    assert row["asymptote_tok_s"] > row["largest_batch_tok_s"]
    assert row["b_half"] == pytest.approx(row["t0_ms"] / (row["t1_ms"] + row["t2_ms"] * 1024), rel=1e-9)
    assert row["b_half_lo"] < row["b_half"] < row["b_half_hi"]


@pytest.mark.parametrize("with_floors", [False, True])
def test_one_model_for_two_contexts(llama8b, floors, with_floors):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", scaling.ScalingWarning)
        fits = scaling.fit(llama8b, n_boot=0, floors=floors if with_floors else None)
    # The matmul floor binds t1 here (0.0145 ms unbounded, 0.0216 bounded); the joint fit stays within 10%.
    assert len(caught) == int(with_floors)
    assert len(fits) == 1 and bool(fits.iloc[0]["t2_identified"])
    assert (fits.iloc[0]["context_min"], fits.iloc[0]["context_max"]) == (1024, 4096)
    res = scaling.residuals(llama8b, fits)
    assert len(res) == 18 and set(res["context"]) == {1024, 4096}
    assert res["rel_error"].abs().max() < 0.10


def test_predict_flags_extrapolation(h200_fits):
    row = h200_fits[(h200_fits["model"] == "llama-3.1-8b") & (h200_fits["precision"] == "bf16")
                    & (h200_fits["framework"] == CUDAGRAPH)]
    pred = scaling.predict(row, batch=[1, 512, 1024], context=1024).set_index("batch")
    assert pred.loc[512, "tok_s"] == pytest.approx(row["largest_batch_tok_s_model"].iloc[0], rel=1e-9)
    assert pred.loc[512, "tok_s"] == pytest.approx(14_350, rel=0.05)
    assert list(pred["extrapolated"]) == [False, False, True]
    assert bool(scaling.predict(row, batch=64, context=8192)["extrapolated"].iloc[0])
    assert pred.loc[1, "tok_s_per_user"] == pytest.approx(row["peak_tok_s_per_user_model"].iloc[0])


# --- the extrapolation table on the H200 sweep -------------------------------------------------
def test_h200_extrapolation_table(h200, floors):
    check = scaling.extrapolation_check(h200, fit_max_batch=32, floors=floors)
    table = check[check["context"] == 1024].pivot_table(index="group", columns="batch", values="rel_error")
    bf16 = table.loc[table.index.str.startswith("llama-3.1-8b | H200 SXM | bf16 | pytorch-cudagraph")].iloc[0]
    # A line through batches 1..32 over-predicts the large-batch step: small-batch GEMMs cost more per row.
    assert list(bf16.index) == [64, 128, 256, 512]
    assert bf16[64] == pytest.approx(0.09, abs=0.02)
    assert bf16[[128, 256, 512]].between(0.15, 0.25).all()
    moe = table.loc[table.index.str.startswith("qwen3-30b-a3b")].iloc[0]
    assert moe[64] == pytest.approx(0.001, abs=0.01) and moe[256] == pytest.approx(-0.071, abs=0.01)
    shard = table.loc[table.index.str.startswith("llama-3.1-70b-tp8-shard | H200 SXM | bf16 | pytorch-cudagraph")].iloc[0]
    assert shard[512] == pytest.approx(-0.150, abs=0.01)  # -32% without the floor
    fp8 = table.loc[table.index.str.startswith("llama-3.1-8b | H200 SXM | fp8 | pytorch-cudagraph")].iloc[0]
    assert fp8[512] > 0.4


# --- public sweeps ----------------------------------------------------------------------------------
def test_splitwise_token_time_is_a_decode_step():
    pts = sweeps.load_splitwise(DATA / "splitwise_perf_model_batch_sweep.csv")
    assert len(pts) == 56 and (pts["phase"] == "decode").all()
    fits = scaling.fit(pts, n_boot=0)
    assert (fits["status"] == "fitted").all() and len(fits) == 8
    h100_tp8 = scaling.select(fits, model="llama2-70b", hardware="h100-80gb", tp=8.0)
    assert h100_tp8["max_abs_rel_error"] < 0.03
    assert h100_tp8["peak_tok_s_per_user"] == pytest.approx(1000 / 29.761911, rel=1e-3)
    check = scaling.extrapolation_check(pts, fit_max_batch=32).set_index("group")
    assert (check["batch"] == 64).all() and len(check) == 8
    err = check["rel_error"]
    # TP2 rows are faster at batch 64 than at 32 (an artefact of the profile): the check shows it as a big miss.
    assert err[err.index.str.contains("TP2")].min() > 0.3
    assert err[err.index.str.contains("TP8")].abs().max() < 0.15


def test_llm_inference_bench_pooled_lengths():
    pts = sweeps.load_llm_inference_bench(DATA / "llm_inference_bench_llama3_8b_1gpu.csv")
    assert len(pts) == 110 and pts["flags"].str.contains("derived-from-e2e").all()
    by = ["model", "hardware", "framework", "n_gpus"]
    check = scaling.extrapolation_check(pts, fit_max_batch=32, by=by)
    h100 = check[check["group"].str.contains("H100")]
    assert set(h100["batch"]) == {64} and len(h100) == 10
    assert h100["rel_error"].abs().max() < 0.05
    mi300x = check[check["group"].str.contains("MI300X")]
    # MI300X slows super-linearly beyond batch 64; a fit on batches 1-32 under-predicts 128 and 256 badly.
    assert (mi300x["rel_error"] < -0.1).all()


# --- serving logs ------------------------------------------------------------------------------------
def test_serving_batch_is_achieved_concurrency(raw_points):
    serving = raw_points[raw_points["phase"] == "serving"]
    prepared = scaling.prepare(serving)
    derived = prepared[prepared["batch_source"] == "concurrency*(e2e-ttft)/e2e"]
    assert len(derived) > 100
    r = derived.iloc[0]
    e2e = r["e2e_ms_mean"] if pd.notna(r["e2e_ms_mean"]) else r["e2e_ms_p50"]
    ttft = r["ttft_ms_mean"] if pd.notna(r["ttft_ms_mean"]) else r["ttft_ms_p50"]
    assert r["batch"] == pytest.approx(r["concurrency"] * (e2e - ttft) / e2e)
    tpot = r["tpot_ms_p50"] if pd.notna(r["tpot_ms_p50"]) else r["tpot_ms_mean"]
    assert r["step_ms"] == pytest.approx(tpot)


@pytest.fixture(scope="module")
def serving_fits(raw_points):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)
        return scaling.fit(raw_points[raw_points["phase"] == "serving"], n_boot=0)


def test_inferencex_groups_with_three_concurrencies_are_fitted(raw_points, floors, serving_fits):
    serving = raw_points[raw_points["phase"] == "serving"]
    fits = serving_fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scaling.ScalingWarning)
        with_floors = scaling.fit(serving, n_boot=0, floors=floors)
    # No geometry for the serving models: every bound stays 0 and the fits are the same.
    done = with_floors[with_floors["status"] == "fitted"]
    assert (done["t1_floor_ms"] == 0).all() and (done["t2_floor_ms"] == 0).all() and (done["floor_source"] == "").all()
    pd.testing.assert_series_equal(done["t1_ms"], fits.loc[done.index, "t1_ms"])
    ok = fits[fits["status"] == "fitted"]
    assert (fits.loc[fits["status"] != "fitted", "n_batches"] < 3).all()
    assert (ok["n_batches"] >= 3).all()
    h200_glm = ok[ok["group"].str.startswith("GLM-5-FP8 | H200 SXM")]
    assert len(h200_glm) >= 5  # one per ISL of the 8xH200 sweep
    assert fits["status"].str.startswith("not fitted: ").sum() > 0


# --- command line -------------------------------------------------------------------------------------
def test_cli_fit_and_predict(tmp_path, h200):
    points_file = tmp_path / "points.parquet"
    h200.to_parquet(points_file)
    fits_file = tmp_path / "fits.csv"
    from analysis.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["fit", str(points_file), "--out", str(fits_file), "--n-boot", "50"]) == 0
    assert "9 of 9 groups fitted" in out.getvalue()
    draws = pd.read_parquet(tmp_path / "fits.draws.parquet")  # the bootstrap draws persist beside the fits
    assert len(draws) == 9 * 50 and set(draws["group"]) == set(pd.read_csv(fits_file)["group"])
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["predict", str(fits_file), "--batch", "96", "--context", "2048"]) == 0
    pred = pd.read_csv(io.StringIO(out.getvalue()))
    assert len(pred) == 9 and set(pred["batch"]) == {96}
    # The group's key columns come first, then the label; bands come from the draws file.
    assert list(pred.columns[:4]) == ["model", "hardware", "precision", "framework"]
    assert (pred["step_ms_lo"] <= pred["step_ms"]).all() and (pred["step_ms"] <= pred["step_ms_hi"]).all()
    row = pred[pred["group"].str.startswith("llama-3.1-8b | H200 SXM | bf16 | pytorch-cudagraph")].iloc[0]
    assert not row["extrapolated"]  # inside batches 1..512 and contexts 1024..4096
    assert row["tok_s"] == pytest.approx(96 * row["tok_s_per_user"])
    assert pred.loc[pred["group"].str.startswith("qwen3"), "extrapolated"].all()  # one context measured


def test_cli_predict_names_a_missing_file(tmp_path, capsys):
    from analysis.cli import main

    assert main(["predict", str(tmp_path / "nope.csv"), "--batch", "8"]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_too_few_batches_listed_not_fitted(h200):
    few = h200[(h200["model"] == "llama-3.1-8b") & (h200["batch_size"] <= 2) & (h200["phase"] == "decode")]
    fits = scaling.fit(few, n_boot=0)
    cudagraph = fits[fits["framework"] == CUDAGRAPH]
    assert len(cudagraph) == 2 and (cudagraph["status"] == "not fitted: 2 batch size(s), need 3").all()
    assert (fits.loc[fits["framework"] == "pytorch-eager", "status"] == "not fitted: 1 batch size(s), need 3").all()


# --- MoE geometry for serving sweeps, from the model table ------------------------------------------
def test_spec_geometry_from_the_model_table():
    assert scaling.spec_geometry("DeepSeek-R1-0528")[:2] == (256, 8)
    assert scaling.spec_geometry("gpt-oss-120b")[:2] == (128, 4)
    assert scaling.spec_geometry("llama-3.1-8b")[:2] == (0, 0)  # dense: in the table, no experts
    experts, top_k, source = scaling.spec_geometry("GLM-5-FP8")
    assert np.isnan(experts) and np.isnan(top_k) and source == ""


def test_serving_moe_models_try_the_moe_form(serving_fits):
    ok = serving_fits[serving_fits["status"] == "fitted"]
    ds = scaling.select(ok, model="DeepSeek-R1-0528", hardware="B300", precision="fp8", n_gpus=8, isl=1024, osl=1024,
                        spec_decode="none")
    # 256 experts, top-8 from models.csv: the expert term predicts held-out concurrencies 15x better than dense.
    assert ds["variant"] == "moe" and ds["fitted_form"] == "moe (256 experts, top-8)"
    assert ds["moe_geometry_source"] == "models.csv (DeepSeek-R1)"
    assert ds["cv_error_moe"] == pytest.approx(0.0119, abs=0.001)
    assert ds["cv_error_dense"] == pytest.approx(0.176, abs=0.005)
    deepseek = ok[ok["model"].str.startswith("DeepSeek-R1")]
    assert deepseek["fitted_form"].str.startswith("moe").sum() == 5
    dense = deepseek[deepseek["variant"] == "dense"]
    # Three concurrencies cannot test a three-term form on one left out: dense is kept and the form says why.
    three = dense["n_batches"] == 3
    assert dense.loc[three, "fitted_form"].str.startswith("dense (MoE form, 256 experts top-8, not testable: 3 "
                                                          "batches").all()
    assert dense.loc[~three, "fitted_form"].str.startswith("dense (MoE form, 256 experts top-8, tried").all()
    assert three.sum() > 0 and (~three).sum() > 0
    glm = ok[ok["model"] == "GLM-5-FP8"]["fitted_form"]
    assert len(glm) == 9 and (glm == "dense (MoE form not tried: no expert geometry for GLM-5-FP8)").all()
    assert scaling.select(ok, model="gpt-oss-120b")["fitted_form"] == "moe (128 experts, top-4)"
    assert not ok["fitted_form"].eq("dense").any() or set(ok.loc[ok["fitted_form"] == "dense", "model"]) <= {
        "llama-3.1-8b", "llama-3.1-70b-tp8-shard"}


# --- numbers a reader can take at face value --------------------------------------------------------
def test_coefficients_on_a_bound_are_the_bound(h200_fits):
    eager = scaling.select(h200_fits, model="llama-3.1-8b", precision="bf16", framework="pytorch-eager")
    assert eager["t1_ms"] == 0.0 and eager["at_bound"] == "t1_ms at bound 0 ms"  # was 1.84e-19
    head = scaling.select(h200_fits, model="llama-3.1-8b", precision="bf16", framework=CUDAGRAPH)
    assert head["t1_ms"] == head["t1_floor_ms"] == pytest.approx(0.0216, abs=1e-4)
    assert head["at_bound"] == "t1_ms at its physical floor 0.0216 ms"


def test_headline_says_its_fit_is_degenerate(h200_fits):
    head = scaling.headline(h200_fits, model="llama-3.1-8b", precision="bf16", framework=CUDAGRAPH, context=1024)
    assert head["at_bound"] == "t1_ms at its physical floor 0.0216 ms"
    assert "**Degenerate fit:** t1 at its physical floor 0.0216 ms" in head["text"]
    assert "at batch 512, the largest measured batch" in head["text"]
    qwen = scaling.headline(h200_fits, model="qwen3-30b-a3b")
    assert qwen["at_bound"] == "" and "Degenerate" not in qwen["text"]


def test_runaway_batch_intervals_are_blank(h200_fits):
    assert scaling.identified(0.7, 1.2e9, 1.0, 128.0)[1] != scaling.identified(0.7, 1.2e9, 1.0, 128.0)[1]  # NaN
    assert scaling.identified(4.5e-10, 22.5, 4.0, 60.0)[0] != scaling.identified(4.5e-10, 22.5, 4.0, 60.0)[0]
    assert scaling.identified(3.0, 900.0, 1.0, 128.0) == (3.0, 900.0)
    row = scaling.select(h200_fits, model="llama-3.1-70b-tp8-shard", precision="fp8", framework="pytorch-eager")
    assert np.isinf(row["b_half"]) and np.isnan(row["b_half_hi"])  # was 983,928,767
    ok = scaling.fitted(h200_fits)
    hi = ok["b_half_hi"].dropna()
    assert (hi <= 100 * ok.loc[hi.index, "batch_max"]).all()


def test_batch_lists_are_rounded():
    assert scaling.batch_list([56.7461, 32.13, 37.9581]) == "32, 38, 57"
    assert scaling.batch_list([64, 128, 64, 2.5, 1.0]) == "1, 2.5, 64, 128"


def test_display_table_uses_percent_and_names_the_largest_batch(h200_fits):
    shown = page.display_table(scaling.summary(h200_fits))
    head = scaling.summary(h200_fits).pipe(lambda t: t[t["group"].str.startswith("llama-3.1-8b | H200 SXM | bf16 | "
                                                                                  "pytorch-cudagraph")]).index[0]
    assert shown.loc[head, "cv error %"] == pytest.approx(100 * h200_fits.loc[head, "cv_error"])
    assert shown.loc[head, "largest measured batch"] == 512
    assert shown.loc[head, "tok_s at largest measured batch"] == pytest.approx(14_351, rel=1e-3)
    assert not any(c.startswith("capacity") for c in shown.columns)
    floors = page.display_table(scaling.floors_table(h200_fits)).set_index("group")
    eager = floors.loc[floors.index.str.contains("pytorch-eager")]
    assert len(eager) == 4 and eager["measured ms per added seq (top two batches)"].isna().all()
    raw = scaling.floors_table(h200_fits).set_index("group")
    assert raw.loc[eager.index, "marginal_ms_per_seq_top"].min() == pytest.approx(-0.372, abs=0.01)  # kept in the API
    assert floors.loc[floors.index.str.contains(CUDAGRAPH), "measured ms per added seq (top two batches)"].notna().all()


def test_display_table_blanks_a_batch_1_speed_read_off_large_batches(serving_fits):
    shown = page.display_table(scaling.summary(serving_fits)).set_index("group")
    gb300 = "DeepSeek-R1-0528 | GB300 NVL72 | fp4 | dynamo-sglang | rack | 72 GPUs | TP48 EP48 | disagg | 8k/1k"
    # Smallest measured batch 307: the model's batch-1 speed (80 tok/s/user) is read 300x below it, not shown.
    assert shown.loc[gb300, "smallest measured batch"] == pytest.approx(306.7, abs=0.1)
    assert np.isnan(shown.loc[gb300, "batch-1 tok_s_per_user (model)"])
    assert scaling.select(serving_fits, group=gb300)["peak_tok_s_per_user_model"] == pytest.approx(80.4, rel=0.01)
    assert shown["batch-1 tok_s_per_user (model)"].isna().sum() == (shown["smallest measured batch"] > 16).sum() == 4
    sol = pd.DataFrame({"fraction_of_sol_measured": [0.591]})
    assert page.display_table(sol)["% of SOL (measured bandwidth)"].iloc[0] == pytest.approx(59.1)


def test_shard_note_names_the_deployment(h200):
    note = scaling.shard_note(h200)
    assert note.startswith("llama-3.1-70b-tp8-shard (8 GPUs): one GPU's slice")
    assert scaling.shard_note(h200[h200["model"] == "llama-3.1-8b"]) == ""


def test_cli_predict_warns_how_far_it_extrapolates(tmp_path, h200_fits, capsys):
    from analysis.cli import main

    fits_file = tmp_path / "fits.csv"
    h200_fits.to_csv(fits_file, index=False)  # no draws sidecar: predictions without bands, said on stderr
    assert main(["predict", str(fits_file), "--batch", "512"]) == 0
    captured = capsys.readouterr()
    pred = pd.read_csv(io.StringIO(captured.out))
    eager8b = pred[pred["group"].str.startswith("llama-3.1-8b | H200 SXM | bf16 | pytorch-eager")].iloc[0]
    assert eager8b["tok_s"] == pytest.approx(31_900, rel=0.01)  # above the CUDA-graph fit: t1 at 0, no saturation
    assert eager8b["extrapolation_factor"] == pytest.approx(4.0)
    # Eager sweeps stop at 128; qwen3 at 256; the other five measured 512.
    assert "warning: 5 of 9 predicted groups are extrapolated (0 more than 4x" in captured.err
    assert ("llama-3.1-8b | H200 SXM | bf16 | pytorch-eager | single-gpu | 1 GPU | TP1: batch 512 vs measured 1-128 "
            "(4.0x); t1_ms at bound 0 ms: throughput keeps rising with batch") in captured.err
    assert "fits.draws.parquet beside" in captured.err
    # Beyond 4x the command refuses by default, in one line, and prints nothing on stdout.
    assert main(["predict", str(fits_file), "--batch", "1024"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith("perfclaims predict: refusing: 4 of 9 group(s) would be predicted more than 4x "
                                   "beyond their measured batches (worst 8.0x: ")
    assert main(["predict", str(fits_file), "--batch", "1024", "--allow-extrapolation"]) == 0
    assert len(pd.read_csv(io.StringIO(capsys.readouterr().out))) == 9
    assert main(["predict", str(fits_file), "--batch", "1024", "--max-extrapolation", "8"]) == 0
    capsys.readouterr()
    assert main(["predict", str(fits_file), "--batch", "64"]) == 0
    assert "extrapolated" not in capsys.readouterr().err


def test_residual_plot_shows_the_worst_point_and_tells_groups_apart(h200, h200_fits):
    import matplotlib

    matplotlib.use("Agg")
    from analysis.plots import scaling as plots

    res = scaling.residuals(h200, h200_fits)
    ax = plots.residuals(res)
    lo, hi = ax.get_ylim()
    assert lo <= 100 * res["rel_error"].min() and hi >= 100 * res["rel_error"].max()
    legend = ax.get_legend()
    styles = {t.get_text(): (h.get_color(), h.get_marker()) for t, h in zip(legend.get_texts(), legend.legend_handles)
              if t.get_text() in set(res["group"])}
    assert len(styles) == res["group"].nunique() == 9 and len(set(styles.values())) == 9
    # every drawn line carries its group's style: one curve per group and context, never two groups joined
    drawn = {(line.get_color(), line.get_marker()) for line in ax.get_lines() if line.get_marker() not in ("None", "")}
    assert drawn == set(styles.values())
    worst = res.loc[res["rel_error"].abs().idxmax()]
    assert any(t.get_text().startswith(f"worst {100 * worst['rel_error']:+.1f}%") for t in ax.texts)
    # the sweep's eager fits miss by more than 40%: the axis turns symmetric-log past ±20%, so they do not flatten
    # the other residuals into the band, and it still holds the worst and says so; within ±40% it stays linear
    assert abs(100 * worst["rel_error"]) > 2 * plots.RESIDUAL_LINEAR_PCT and ax.get_yscale() == "symlog"
    calm = res.assign(rel_error=res["rel_error"].clip(-0.3, 0.3))
    assert plots.residuals(calm).get_yscale() == "linear"
    off = calm.copy()
    off.loc[off.index[0], "rel_error"] = -0.973  # one fit off by 97%, as a serving fit on the batch-scaling page is
    ax = plots.residuals(off)
    lo, hi = ax.get_ylim()
    assert ax.get_yscale() == "symlog" and lo <= -97.3 and hi >= 100 * off["rel_error"].max()
    assert "linear within ±20%, log beyond" in ax.get_ylabel()
    assert any(t.get_text().startswith("worst -97.3%") for t in ax.texts)


def test_every_fit_and_predict_option_says_what_it_does_and_its_default():
    import argparse

    from analysis.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("fit", "predict"):
        for action in sub.choices[name]._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"{name} {action.dest}: no help"
            assert "default" in action.help or action.required, f"{name} {action.dest}: no default stated"
