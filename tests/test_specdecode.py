"""τ per point, acceptance per group, the step rate a claim needs and the without-spec-decoding estimate.

Rows come from ingesting real files (the upstream vLLM console log, the InferenceX API snapshot, a real recipe named
by a tmp manifest), except the ``stated``/``golden`` rows, which are points-table rows written here (MADE) with the
values a publication or a golden file gives.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import specdecode, specdecode_words
from analysis.ingest import ingest
from analysis.specdecode import (
    ASSUMED_TAU,
    Tau,
    acceptance_summary,
    assumed_tau,
    step_rate_needed,
    tau_for,
    tau_table,
    without_spec_estimate,
)
from analysis.specdecode_words import tau_words

ROOT = Path(__file__).resolve().parents[1]
CONSOLE = ROOT / "data/raw/inferencex-samples/local-results/mtp-fixed-ar-minimax-lcb-v8-20260529-092323/" \
                 "vllm_bench_serve_conc32.log"
API = ROOT / "data/raw/inferencex/benchmarks.json"


@pytest.fixture(scope="module")
def measured() -> pd.Series:
    return ingest([CONSOLE]).points.iloc[0]


@pytest.fixture(scope="module")
def api_points() -> pd.DataFrame:
    return ingest([API]).points


@pytest.fixture(scope="module")
def forced(tmp_path_factory) -> pd.Series:
    """The real console log read through a tmp manifest naming a real SGLang recipe (a mechanism pairing)."""
    folder = tmp_path_factory.mktemp("forced")
    shutil.copy(CONSOLE, folder / "run.log")
    shutil.copy(ROOT / "tests/data/launch/sglang_agg-gb300-tp4-mtp-kvoffload.yaml", folder / "recipe.yaml")
    (folder / "manifest.yml").write_text('files:\n  - glob: "run.log"\n    launch_settings: recipe.yaml\n')
    return ingest([folder / "run.log"]).points.iloc[0]


def test_measured_point_uses_its_own_acceptance(measured):
    tau = tau_for(measured)
    assert tau == Tau(2.33, 4.0, "measured", "eagle3", 3.0, point_source="measured")
    assert tau.speculative


def test_forced_point_uses_the_forced_value(forced):
    tau = tau_for(forced)
    assert (tau.tokens_per_step, tau.verify_tokens, tau.source, tau.spec_method) == (2.49, 4.0, "forced", "mtp")


def test_points_without_speculative_decoding_commit_one_token(api_points):
    none = api_points[api_points["spec_method"] == "none"].iloc[0]
    assert tau_for(none) == Tau(1.0, 1.0, "none", "none", 0.0)
    assert not tau_for(none).speculative


def test_mtp_point_without_acceptance_falls_back_to_the_assumed_default(api_points):
    mtp = api_points[api_points["spec_method"] == "mtp"].iloc[0]
    assert mtp["model"] == "DeepSeek-R1-0528"  # no golden curve for R1
    # an InferenceX MI355X SGLang FP4 run of 2026-05-20: its launch script drafts 3 (data/specs/mtp-recipes.csv,
    # dsr1_fp4_mi355x_mtp.sh --speculative-num-steps 3), so 4 verified, read rather than assumed; τ stays assumed
    assert (mtp["hardware"], mtp["framework"], mtp["precision"]) == ("MI355X", "sglang", "fp4")
    tau = tau_for(mtp)
    assert (tau.tokens_per_step, tau.source, tau.verify_tokens, tau.verify_assumed, tau.drafts_from_recipe) == \
        (ASSUMED_TAU, "assumed", 4.0, False, True)
    assert tau_words(tau) == ("τ = 2.5 tokens per step (mtp, 3 drafted as its launch recipe set, 4 verified), assumed "
                              "(no acceptance known: 2.5 tokens per step at 3 drafted, at another count the same "
                              "acceptance per draft)")
    # the same row from another source's format has no launch recipe to read: the drafted count is assumed too
    other = tau_for({**mtp.to_dict(), "format": "genai-perf"})
    assert (other.tokens_per_step, other.verify_tokens, other.verify_assumed, other.drafts_from_recipe) == \
        (ASSUMED_TAU, 4.0, True, False)


def test_mtp_runs_of_one_drafted_token_verify_two_and_assume_a_tau_they_can_reach(api_points):
    """ATOM's MTP runs of InferenceX draft one token (ATOM's default --num-speculative-tokens 1 where the script
    names no count, mtp-recipes.csv): a step verifies 2 tokens, so τ cannot be the 2.5 assumed at 3 drafts; at one
    draft it is the first draft's acceptance, 1 + 0.875 (the step-time model's rule, step.tau_at_drafts)."""
    atom = api_points[(api_points["spec_method"] == "mtp") & (api_points["framework"] == "atom")
                      & (api_points["precision"] == "fp4")]
    assert len(atom) == 7  # 2026-05-20 and 2026-02-25
    for _, row in atom.iterrows():
        tau = tau_for(row)
        assert (tau.draft_tokens, tau.verify_tokens, tau.source, tau.drafts_from_recipe) == (1.0, 2.0, "assumed", True)
        assert tau.tokens_per_step == pytest.approx(1.875) and tau.tokens_per_step <= tau.verify_tokens
    assert assumed_tau(3) == ASSUMED_TAU and assumed_tau(float("nan")) == ASSUMED_TAU
    assert assumed_tau(1) == pytest.approx(1.875) and 1.875 < assumed_tau(2) < ASSUMED_TAU < assumed_tau(4) < 5


def test_golden_curve_when_model_method_and_draft_are_known():
    row = {"model": "DeepSeek-V4-Pro", "spec_method": "mtp", "draft_tokens": 3.0}  # MADE row
    tau = tau_for(row)
    assert (tau.tokens_per_step, tau.verify_tokens, tau.source) == (2.49, 4.0, "golden")
    assert tau.reference == "dsv4_mtp.yaml (thinking_on)"
    # without the draft length there is no one golden value: assumed
    assert tau_for({"model": "DeepSeek-V4-Pro", "spec_method": "mtp"}).source == "assumed"


def test_stated_acceptance_wins_over_the_golden_curve():
    # MADE row: a publication states 2.82 for an MTP-3 DeepSeek-V4-Pro run
    tau = tau_for({"model": "DeepSeek-V4-Pro", "spec_method": "mtp", "draft_tokens": 3.0,
                   "acceptance_length": 2.82, "acceptance_source": "stated"})
    assert (tau.tokens_per_step, tau.source) == (2.82, "stated")


def test_forced_without_a_value_keeps_saying_forced():
    # MADE row: what an InferenceX SYNTHETIC_ACCEPTANCE=true entry without a length gives (tests/test_launch_settings)
    tau = tau_for({"model": "DeepSeek-V4-Pro", "spec_method": "mtp", "draft_tokens": 2.0,
                   "acceptance_source": "forced"})
    assert (tau.tokens_per_step, tau.source, tau.point_source) == (2.27, "golden", "forced")
    assert specdecode_words.tau_words(tau).endswith("forced at launch to a value its record does not hold")


def test_a_point_not_known_to_run_speculative_decoding():
    tau = tau_for({"spec_method": "unknown", "spec_decode": "unknown"})
    assert (tau.tokens_per_step, tau.source, tau.speculative) == (1.0, "unknown", False)
    # the old one-word column still counts when spec_method is missing (old tables)
    assert tau_for({"spec_decode": "mtp"}).source == "assumed"


def test_tau_table_on_a_real_points_table(api_points, measured):
    points = pd.concat([api_points, measured.to_frame().T], ignore_index=True)
    table = tau_table(points)
    assert table.index.equals(points.index)
    assert set(table["tau_source"]) == {"none", "assumed", "measured"}
    assert (table.loc[points["spec_method"] == "none", "tau"] == 1.0).all()
    assert table["tau"].iloc[-1] == pytest.approx(2.33)


def test_acceptance_summary_says_when_forced_and_measured_mix(api_points, measured, forced):
    points = pd.concat([api_points, measured.to_frame().T, forced.to_frame().T], ignore_index=True)
    summary = acceptance_summary(points, by=["model"]).set_index("model")
    minimax = summary.loc["MiniMax-M2.5"]
    assert (minimax["points"], minimax["spec_points"], minimax["measured"], minimax["forced"]) == (2, 2, 1, 1)
    assert minimax["mixed_forced_measured"] and minimax["acceptance_sources"] == "forced;measured"
    assert minimax["spec_methods"] == "eagle3;mtp"
    r1 = summary.loc["DeepSeek-R1-0528"]
    assert r1["spec_methods"] == "mtp;none" and r1["acceptance_sources"] == "unknown"
    assert r1["spec_points"] == (api_points["spec_method"] == "mtp").sum() and not r1["mixed_forced_measured"]
    whole = acceptance_summary(points)
    assert len(whole) == 1 and whole["points"].iloc[0] == len(points)
    assert "mixes forced acceptance (1 points" in specdecode_words.mixed_note(minimax.to_dict())
    assert specdecode_words.mixed_note(r1.to_dict()) == ""


def test_step_rate_needed_is_the_speed_over_tau():
    tau = tau_for({"model": "DeepSeek-V4-Pro", "spec_method": "mtp", "draft_tokens": 3.0})
    assert step_rate_needed(1000.0, tau) == pytest.approx(1000.0 / 2.49)
    assert step_rate_needed(1000.0, 2.5) == 400.0
    with pytest.raises(ValueError):
        step_rate_needed(1000.0, 0.8)


def test_without_spec_estimate_carries_its_formula(measured):
    tau = tau_for(measured)
    speed = measured["tok_s_per_user"]
    est = without_spec_estimate(speed, tau, verify_cost=1.25)
    assert est.kind == "estimate" and est.tau_source == "measured"
    assert est.expression == specdecode.WITHOUT_SPEC_EXPRESSION
    assert est.inputs == {"s_spec": speed, "tau": 2.33, "c": 1.25}
    # the formula as data reproduces the value
    s_spec, tau_v, c = (est.inputs[k] for k in ("s_spec", "tau", "c"))
    assert est.value == pytest.approx(s_spec * c / tau_v)
    assert est.as_dict()["value"] == est.value
    with pytest.raises(ValueError):
        without_spec_estimate(speed, tau, verify_cost=0.9)


def test_words_escape_and_say_estimate(measured):
    tau = tau_for(measured)
    text = specdecode_words.tau_words(tau)
    assert text.startswith("τ = 2.33 tokens per step (eagle3, 3 drafted, 4 verified), measured")
    hostile = Tau(2.0, 3.0, "golden", "mtp", 2.0, reference="<script>x</script>")
    assert "<script>" not in specdecode_words.tau_words(hostile)
    words = specdecode_words.estimate_words(without_spec_estimate(100.0, tau, 1.2))
    assert "an estimate, not a measurement" in words and "s&#95;plain = s&#95;spec &#42; c / tau" in words
    assert specdecode_words.step_rate_words(1000, tau, step_rate_needed(1000, tau)).startswith(
        "1,000 tok/s/user at τ = 2.33 needs 429 verify steps")
