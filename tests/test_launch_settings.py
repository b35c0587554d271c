"""Forced acceptance from a run's recorded launch settings, and the manifest's speculative-decoding fields.

Real files (``tests/data/launch/``, see its README): three InferenceX srt-slurm recipes (SGLang, TensorRT-LLM, vLLM)
and three files of one InferenceX fixed-AR workflow run (the vLLM server log's first 30 lines, the synthetic
acceptance rates it derived, the step output). Files made in a test say so and name the real format they follow.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.ingest.launch import LaunchError, read_launch_settings
from analysis.ingest.manifest import load_manifest

LAUNCH = Path(__file__).parent / "data" / "launch"
ROOT = Path(__file__).resolve().parents[1]
CONSOLE = ROOT / "data/raw/inferencex-samples/local-results/mtp-fixed-ar-minimax-lcb-v8-20260529-092323/" \
                 "vllm_bench_serve_conc32.log"


def _text(name: str) -> str:
    return (LAUNCH / name).read_text()


def test_sglang_recipe_simulated_acceptance_is_forced_at_its_value():
    name = "sglang_agg-gb300-tp4-mtp-kvoffload.yaml"
    assert "SGLANG_SIMULATE_ACC_LEN: '2.49'" in _text(name)
    assert "speculative-num-steps: 3" in _text(name) and "speculative-num-draft-tokens: 4" in _text(name)
    spec = read_launch_settings(LAUNCH / name)
    assert spec.columns() == {"spec_method": "mtp", "draft_tokens": 3.0, "acceptance_length": 2.49,
                              "acceptance_source": "forced"}
    assert "SGLANG_SIMULATE_ACC_LEN" in spec.forced_by


def test_trtllm_recipe_force_counts_draft_tokens_only():
    name = "trtllm_dynamo-disagg-gb300-1p1d-tep8-c20-b5-mtp5.yaml"
    value = float(re.search(r'TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: "([0-9.]+)"', _text(name)).group(1))
    assert value == 2.61
    spec = read_launch_settings(LAUNCH / name)
    assert spec.acceptance_length == pytest.approx(value + 1)  # the bonus token is not in the variable
    assert (spec.spec_method, spec.draft_tokens) == ("mtp", 5.0)
    assert spec.columns()["acceptance_source"] == "forced"


def test_vllm_recipe_synthetic_acceptance_length():
    spec = read_launch_settings(LAUNCH / "vllm_1p1d-tep4-tp4-c1-agentic.yaml")
    assert '"synthetic_acceptance_length":2.78' in _text("vllm_1p1d-tep4-tp4-c1-agentic.yaml")
    assert (spec.spec_method, spec.draft_tokens, spec.acceptance_length) == ("eagle3", 3.0, 2.78)


def test_synthetic_acceptance_rates_give_one_plus_their_sum():
    rates = [0.664606, 0.419918, 0.259226]
    record = json.loads(_text("synthetic_acceptance_rates.json"))
    # the rates are each position's accepted count over all drafts (unconditional shares), so they add up
    assert [round(record["accepted_per_position"][str(i)] / record["num_drafts"], 6) for i in range(3)] == rates
    for name in ("synthetic_acceptance_rates.json", "github_output.txt"):
        assert all(str(r) in _text(name) for r in rates)
        spec = read_launch_settings(LAUNCH / name)
        assert spec.acceptance_length == pytest.approx(1 + sum(rates))
        assert spec.forced_by is not None and spec.draft_tokens == 3.0


def test_a_server_log_with_standard_rejection_sampling_is_not_forced():
    assert "'rejection_sample_method': 'standard'" in _text("vllm_server_head30.log")
    spec = read_launch_settings(LAUNCH / "vllm_server_head30.log")
    assert spec.forced_by is None
    assert spec.columns() == {"spec_method": "eagle3", "draft_tokens": 3.0}


def test_launch_command_lines(tmp_path):
    # MADE: command lines in the spelling of the real InferenceX launch scripts (benchmarks/single_node/agentic/
    # minimaxm3_fp4_b200_trt_mtp.sh exports TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78; qwen3.5_fp4_b200_sglang_
    # mtp.sh exports SGLANG_SIMULATE_ACC_LEN=3.39 and launches sglang with --speculative-* flags)
    trt = tmp_path / "made_trt_launch.sh"
    trt.write_text("export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78\n")
    assert read_launch_settings(trt).acceptance_length == pytest.approx(2.78)
    sgl = tmp_path / "made_sglang_launch.sh"
    sgl.write_text("export SGLANG_SIMULATE_ACC_LEN=3.39\npython3 -m sglang.launch_server --speculative-algorithm "
                   "EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n")
    assert read_launch_settings(sgl).columns() == {"spec_method": "mtp", "draft_tokens": 3.0,
                                                   "acceptance_length": 3.39, "acceptance_source": "forced"}
    commented = tmp_path / "made_commented.sh"
    commented.write_text("# export SGLANG_SIMULATE_ACC_LEN=3.39\n")
    assert read_launch_settings(commented).forced_by is None


def test_inferencex_master_config_switch_and_length():
    forced = read_launch_settings(LAUNCH / "inferencex-master_dsv4-fp4-gb200-dynamo-vllm-mtp2.yaml")
    text = _text("inferencex-master_dsv4-fp4-gb200-dynamo-vllm-mtp2.yaml")
    assert text.count('"SYNTHETIC_ACCEPTANCE=true"') == 4 and text.count('"SYNTHETIC_ACCEPTANCE_LENGTH=2.27"') == 4
    assert forced.columns() == {"spec_method": "mtp", "acceptance_length": 2.27, "acceptance_source": "forced"}
    baseline = read_launch_settings(LAUNCH / "inferencex-master_dsv4-fp4-gb200-dynamo-vllm-mtp2-nosynthetic.yaml")
    assert "SYNTHETIC" not in _text("inferencex-master_dsv4-fp4-gb200-dynamo-vllm-mtp2-nosynthetic.yaml")
    assert baseline.columns() == {"spec_method": "mtp"}  # the same entry without the switch: real acceptance


def test_forced_to_a_value_the_file_does_not_hold(tmp_path):
    # MADE in the real spellings: the InferenceX switch without a length (the runner injects the golden value), a
    # length without the switch (the injector does nothing), and an environment variable set from a shell variable
    switch = tmp_path / "made_switch.yaml"
    switch.write_text('additional-settings:\n- "SYNTHETIC_ACCEPTANCE=true"\n')
    spec = read_launch_settings(switch)
    assert spec.columns() == {"acceptance_source": "forced"} and "golden" in spec.forced_by
    length_only = tmp_path / "made_length_only.yaml"
    length_only.write_text('additional-settings:\n- "SYNTHETIC_ACCEPTANCE_LENGTH=2.27"\n')
    assert read_launch_settings(length_only).forced_by is None
    variable = tmp_path / "made_variable.sh"
    variable.write_text("export SGLANG_SIMULATE_ACC_LEN=${GOLDEN_AL}\n")
    assert read_launch_settings(variable).columns() == {"acceptance_source": "forced"}


def test_contradicting_launch_settings_are_an_error_naming_both(tmp_path):
    # MADE from the real SGLang recipe: the decode workers given a second, different simulated acceptance
    text = _text("sglang_agg-gb300-tp4-mtp-kvoffload.yaml").replace(
        "  sglang_config:", "  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: '3.0'\n\n  sglang_config:", 1)
    bad = tmp_path / "made_two_values.yaml"
    bad.write_text(text)
    with pytest.raises(LaunchError, match="aggregated_environment.*decode_environment|decode_environment.*aggregated"):
        read_launch_settings(bad)
    over = tmp_path / "made_over.yaml"  # more accepted than verified: 5.0 with 3 drafted
    over.write_text(_text("sglang_agg-gb300-tp4-mtp-kvoffload.yaml").replace("'2.49'", "'5.0'"))
    with pytest.raises(LaunchError, match="exceeds 3 drafted"):
        read_launch_settings(over)


# --- the manifest ---------------------------------------------------------------------------------
def _manifest(tmp_path: Path, body: str):
    path = tmp_path / "manifest.yml"
    path.write_text(body)
    return load_manifest(path)


def test_manifest_spec_fields_apply(tmp_path):
    m = _manifest(tmp_path, 'files:\n  - glob: "*.log"\n    spec_method: EAGLE3\n    draft_tokens: 3\n'
                            '    acceptance_length: 2.4\n    acceptance_source: stated\n')
    assert not m.problems
    shutil.copy(CONSOLE, tmp_path / "run.log")
    row = ingest([tmp_path / "run.log"], manifest=m).points.iloc[0]
    assert (row["spec_method"], row["acceptance_length"], row["acceptance_source"]) == ("eagle3", 2.4, "stated")


@pytest.mark.parametrize("entry, field, words", [
    ("acceptance_length: 0.5\n    acceptance_source: stated", "acceptance_length", "must be >= 1"),
    ("acceptance_length: 2.4", "acceptance_source", "needs its acceptance_source"),
    ("acceptance_length: 4.5\n    draft_tokens: 3\n    acceptance_source: forced", "acceptance_length",
     "exceeds the 3 drafted"),
    ("draft_tokens: 2.5", "draft_tokens", "whole number"),
    ("spec_method: medusa-tree", "spec_method", "unknown speculative-decoding method"),
    ("acceptance_source: guessed", "acceptance_source", "must be one of"),
    ("launch_settings: nowhere.yaml", "launch_settings", "no such file"),
])
def test_manifest_spec_values_out_of_range_are_named(tmp_path, entry, field, words):
    m = _manifest(tmp_path, f'files:\n  - glob: "run.log"\n    {entry}\n')
    assert len(m.problems) == 1, m.problems
    problem = m.problems[0]
    assert problem["field"] == f"files[0] (run.log).{field}"
    assert words in problem["reason"]
    # the quarantine names the manifest file and the field, and the log is still read
    shutil.copy(CONSOLE, tmp_path / "run.log")
    result = ingest([tmp_path / "run.log"])
    assert len(result.points) == 1
    q = result.quarantine.iloc[0]
    assert q["source_file"].endswith("manifest.yml") and q["field"] == problem["field"]


def test_manifest_launch_settings_relative_to_the_manifest(tmp_path):
    (tmp_path / "recipes").mkdir()
    shutil.copy(LAUNCH / "trtllm_dynamo-disagg-gb300-1p1d-tep8-c20-b5-mtp5.yaml", tmp_path / "recipes" / "r.yaml")
    m = _manifest(tmp_path, 'files:\n  - glob: "*.json"\n    launch_settings: recipes/r.yaml\n'
                            '    spec_method: mtp\n')
    assert not m.problems
    values = m.values_for(tmp_path / "x.json")
    assert values == {"spec_method": "mtp", "draft_tokens": 5.0, "acceptance_length": pytest.approx(3.61),
                      "acceptance_source": "forced"}


def test_an_unreadable_launch_file_is_a_problem_not_a_crash(tmp_path):
    (tmp_path / "bad.yaml").write_text("backend: [unclosed\n")  # MADE: broken YAML
    m = _manifest(tmp_path, 'defaults:\n  launch_settings: bad.yaml\n')
    assert m.problems and m.problems[0]["field"] == "defaults.launch_settings"
    assert "bad.yaml" in m.problems[0]["reason"] and "not valid YAML" in m.problems[0]["reason"]
    assert m.defaults == {}
