"""notebooks/10-batch-scaling.ipynb executed under papermill on the shipped H200 sweep; its numbers read back."""

from __future__ import annotations

import pytest
from conftest import RAW, run_notebook

from analysis.ingest import ingest, write_outputs


@pytest.fixture(scope="module")
def h200_points_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("h200_points")
    paths = write_outputs(ingest([RAW / "h200"], RAW / "manifest.yml", progress=False), out)
    return paths["points"]


@pytest.fixture(scope="module")
def h200_results(h200_points_file, tmp_path_factory):
    """The report on the H200 sweep alone (a small fixture: nine groups), executed once for this module."""
    return run_notebook("10-batch-scaling", tmp_path_factory.mktemp("nb"), points_path=str(h200_points_file),
                        step_logs_path=str(RAW / "h200"), n_boot=40)


def test_notebook_reports_peak_capacity_and_b_half(h200_results):
    res = h200_results
    head = res["headline_numbers"]
    assert head["peak_tok_s_per_user"] == pytest.approx(166.2, abs=0.1)
    assert head["peak_tok_s_per_user_model"] == pytest.approx(166.2, rel=0.10)
    assert head["largest_batch"] == 512
    assert head["largest_batch_tok_s"] == pytest.approx(14_350, rel=0.005)
    assert head["b_half_lo"] <= head["b_half"] <= head["b_half_hi"]
    assert 50 < head["b_half"] < 300
    assert "166.2 tok/s/user at batch 1" in res["headline"]
    # The headline fit is degenerate (t1 at its physical floor): the headline paragraph says so.
    assert res["headline_at_bound"] == "t1_ms at its physical floor 0.0216 ms"
    assert "Degenerate fit: t1 at its physical floor 0.0216 ms" in res["headline"]
    # ... and, t1 being able only to be larger in truth, gives B½ and the asymptote as upper bounds, no interval
    assert "reached by batch B½ ≤ 108: both are upper bounds" in res["headline"]
    assert "at most 17,029 tok/s" in res["headline"] and "95% interval 101" not in res["headline"]
    assert "batch 512, the largest measured batch" in res["headline"]
    assert res["fitted_forms"]["qwen3-30b-a3b | H200 SXM | bf16 | pytorch-cudagraph | single-gpu | 1 GPU | TP1"] == \
        "moe (128 experts, top-8)"
    assert set(res["fitted_forms"].values()) == {"dense", "moe (128 experts, top-8)"}  # the llamas are dense in models.csv
    assert res["shard_note"].startswith("llama-3.1-70b-tp8-shard (8 GPUs)")
    shard = next(r for r in res["summary"] if r["group"].startswith("llama-3.1-70b-tp8-shard | H200 SXM | bf16 | "
                                                                      "pytorch-cudagraph"))
    assert shard["largest_batch_tok_s_per_gpu"] == pytest.approx(shard["largest_batch_tok_s"] / 8)  # the TP8 deployment's GPUs
    assert all(r["b_half_hi"] is None or r["b_half_hi"] != r["b_half_hi"] or r["b_half_hi"] < 100 * 512
               for r in res["summary"])
    worst = res["worst_residual"]
    # Eager 70B fp8: t1 at 0, the line misses batch 128 by half; the residual figure draws and names it.
    assert worst["group"].startswith("llama-3.1-70b-tp8-shard | H200 SXM | fp8 | pytorch-eager")
    assert (worst["batch"], worst["rel_error"]) == (128, pytest.approx(0.516, abs=0.01))
    assert res["n_fitted"] == 9
    launch = {(r["model"], r["precision"]): r for r in res["launch_overhead"]}
    assert launch[("llama-3.1-8b", "bf16")]["eager_over_cudagraph"] == pytest.approx(20.7789 / 6.01605, rel=1e-4)
    assert res["extrapolation_max_abs_rel_error"] > 0.10  # fp8 at batch 512 is missed: the report must show it
    # Measured single-user speed against the speed of light: weights once + KV, at measured and datasheet bandwidth.
    assert res["speed_of_light_available"] is True
    sol = next(r for r in res["speed_of_light"] if r["model"] == "llama-3.1-8b" and r["precision"] == "bf16"
               and r["framework"] == "pytorch-cudagraph" and r["context_len"] == 1024)
    assert sol["bytes_per_step_gb"] == pytest.approx(15.1, abs=0.1)
    assert sol["sol_tok_s_per_user_measured"] == pytest.approx(281, rel=0.01)
    assert sol["sol_tok_s_per_user_datasheet"] == pytest.approx(317, rel=0.01)
    assert sol["fraction_of_sol_measured"] == pytest.approx(166.22 / sol["sol_tok_s_per_user_measured"], rel=1e-3)


def test_notebook_reports_the_moe_small_batch_check(h200_results):
    """In the report: the MoE fit on batches <= 16 predicts 32..256 within 10% with the physical t1 floor."""
    res = h200_results
    check = res["moe_small_batch_check"]
    assert sorted(check, key=float) == ["32", "64", "128", "256"]
    assert res["moe_small_batch_max_abs_rel_error"] < 0.10
    assert check["256"] == pytest.approx(-0.073, abs=0.01)
    assert res["moe_small_batch_check_unbounded"]["256"] == pytest.approx(-0.258, abs=0.01)
    # The larger-of-the-two floor (KV and matmul overlapping, which a decode step cannot do) would miss 256 by 12%.
    assert res["moe_small_batch_check_overlap"]["256"] == pytest.approx(-0.123, abs=0.01)
    assert res["moe_small_batch_t1_floor_ms"] == pytest.approx(0.0324, abs=1e-4)
    floors = {r["group"].split(" | ")[0] + " " + r["group"].split(" | ")[3]: r for r in res["floors"]}
    assert floors["qwen3-30b-a3b pytorch-cudagraph"]["floor_ms_per_seq_at_ref"] < \
        floors["qwen3-30b-a3b pytorch-cudagraph"]["marginal_ms_per_seq_top"]


def _dense_h200(res):
    """The roofline check's rows with a batch 4×–8× beyond the fitted ones that are dense H200 step sweeps."""
    return {(r["group"].split(" | ")[0], r["group"].split(" | ")[2], r["context"]): r
            for r in res["roofline_extrapolation"]
            if r["step"] and not r["moe"] and r["batch_in_range"] is not None and "H200" in r["group"]}


def test_notebook_shows_the_roofline_check_beside_the_linear_one(h200_results):
    """Fitted on B ≤ 24, the roofline form predicts the six dense H200 sweeps within 10% at 4× to 8× beyond (batch
    128); the page shows it beside the linear form, with the shares each fit used and where each came from."""
    res = h200_results
    assert res["roofline_fit_max_batch"] == 24 and res["roofline_beyond"] == [4, 8]
    rows = _dense_h200(res)
    assert len(rows) == res["roofline_dense_h200_n"] == 6
    assert {r["batch_in_range"] for r in rows.values()} == {128}
    errors = {k: r["rel_error_in_range"] for k, r in rows.items()}
    assert errors == pytest.approx({("llama-3.1-8b", "bf16", 1024): -0.097, ("llama-3.1-8b", "bf16", 4096): -0.036,
                                    ("llama-3.1-8b", "fp8", 1024): -0.047, ("llama-3.1-8b", "fp8", 4096): -0.007,
                                    ("llama-3.1-70b-tp8-shard", "bf16", 1024): -0.066,
                                    ("llama-3.1-70b-tp8-shard", "fp8", 1024): -0.042}, abs=0.005)
    assert max(abs(e) for e in errors.values()) == res["roofline_dense_h200_max_abs_rel_error_4x_8x"] <= 0.10
    # The linear form fitted on the same batches misses every one of the same points by more.
    assert all(abs(r["linear_rel_error_in_range"]) > 0.15 for r in rows.values())
    # Each share with its source: weights at the measured copy bandwidth, compute at the model's measured prefill,
    # the KV read measured from two contexts where the sweep has two, else at the weights' share.
    assert all(r["bw_share_source"].startswith("measured copy 4.26 of 4.8 TB/s") for r in rows.values())
    assert all(r["flop_share_source"].startswith("measured prefill of this model") for r in rows.values())
    assert rows[("llama-3.1-8b", "bf16", 1024)]["kv_bw_share_source"].startswith("measured: extra KV read")
    assert rows[("llama-3.1-70b-tp8-shard", "fp8", 1024)]["kv_bw_share_source"].startswith("the weights' share")
    assert res["roofline_text"].startswith(
        "All 6 dense H200 step sweeps (4 configurations, each context a sweep) are within 10% at 4×–8× the largest "
        "batch fitted (24): batch 128, errors -9.7% to -0.6%; of the 1 other configuration with a batch there, 1 "
        "within 10%, the worst a step sweep of an MoE at -0.9%. The worst is -9.7% at batch 128: llama-3.1-8b | H200 "
        "SXM | bf16 | pytorch-cudagraph | single-gpu | 1 GPU | TP1 at context 1,024.")
    # the other held-out batches are shown for information: 256 and 512 within 5%
    assert rows[("llama-3.1-8b", "bf16", 1024)]["other_batches"] == "32: -7.4, 64: -8.7, 256: +0.5, 512: +4.5"
    assert res["roofline_worst_4x_8x"]["group"] == rows[("llama-3.1-8b", "bf16", 1024)]["group"]


def test_notebook_shows_the_model_validation_on_the_sweeps_it_reads(h200_results):
    """Over the H200 sweep alone the validation leaves out its nine step-timing groups; none is beyond 35%, so the
    three worst are named with their errors and what the page knows about them: two eager sweeps, and the Qwen3 MoE,
    the only MoE of its cell."""
    v = h200_results["model_validation"]
    assert v["n_groups"] == 9 and v["by_family"][0]["family"] == "H200" and v["by_family"][0]["groups"] == 9
    assert v["targets_met"]["median_error_tok_s_per_user"] is (v["median_error_tok_s_per_user"] <= 0.10)
    worst = v["worst_groups"]
    assert [w["group"].split(" | ")[:4] for w in worst] == [
        ["llama-3.1-8b", "H200 SXM", "fp8", "pytorch-eager"], ["qwen3-30b-a3b", "H200 SXM", "bf16", "pytorch-cudagraph"],
        ["llama-3.1-70b-tp8-shard", "H200 SXM", "bf16", "pytorch-eager"]]
    assert all(w["error_tok_s_per_user"] < 0.35 for w in worst)
    assert v["text"].startswith("Left out one at a time, 9 configuration groups (every group with at least 3 "
                                "concurrencies) are predicted with a median error of "
                                f"{100 * v['median_error_tok_s_per_user']:.1f}% in tok/s/user")
    assert "Group #2 is the only MoE model in its cell (H200 · pytorch-cudagraph): the cell's parameters come from " \
        "4 dense groups" in v["notes"]
    assert "counts an MoE layer's fixed cost as 2 dense layers', inferred from the H200 sweep's batch-1 steps, this " \
        "group's among them" in v["notes"]
    assert "AgentX" not in v["notes"]  # no AgentX group in these points: nothing said about one


def test_validation_notes_say_an_eager_group_is_host_bound(h200_results, h200_points_file):
    """An eager sweep among the worst gets its note: launched from Python, its batch-1 step against the CUDA-graph
    step of the same model and precision (the page's launch table), and what its cell holds besides it."""
    import pandas as pd

    from analysis.pages import batch_scaling as bs

    sec = bs.model_validation_section(pd.read_parquet(h200_points_file))
    groups = sec["groups"]
    eager = groups[groups["group"].str.contains("llama-3.1-70b-tp8-shard | H200 SXM | bf16 | pytorch-eager",
                                                regex=False)].assign(**{"#": 1})
    launch = pd.DataFrame(h200_results["launch_overhead"])
    notes = bs.validation_notes(groups, eager, sec["points"], launch, markdown=False)
    eager_note = next(n for n in notes if "eager step sweep" in n)
    assert eager_note.startswith("Group #1 is an eager step sweep (every kernel launched from Python): at batch 1 its "
                                 "steps take 4.1× the CUDA-graph step")
    assert "it is predicted from the other 3 (2 of them FP8" in eager_note
