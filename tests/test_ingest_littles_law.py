"""The Little's-law check behind ``inconsistent-throughput`` (``schema.littles_law_ratio``) rests on means.

A prefill/decode-disaggregated run has a skewed, often bimodal TTFT (requests that found a prefill slot at once and
requests that queued for one): its median says little about the time requests spend before decoding, while
Little's law holds for means. ``vllm/fork_gptoss_conc4.json`` is a real disaggregated run (InferenceX multi-node,
gpt-oss-120b on 8 prefill + 8 decode GPUs, concurrency 4; ``/work/shared/samples/PROVENANCE.md``) whose mean TTFT
is 2.7× its median.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.ingest import ingest
from analysis.schema import littles_law_ratio

ROOT = Path(__file__).parent
DISAGG = ROOT / "data" / "formats" / "vllm" / "fork_gptoss_conc4.json"
MEDIANS_ONLY = (ROOT.parent / "data" / "raw" / "inferencex-repo" / "experimental" / "token_position_decode_slo"
                / "glm-5" / "results" / "glm5_fp8_vllm_tp8_isl10240_osl128_conc16.json")


def test_disaggregated_run_is_checked_with_its_means():
    raw = json.loads(DISAGG.read_text())
    assert raw["mean_ttft_ms"] > 2.5 * raw["median_ttft_ms"]  # the skew the check must not rest on
    points = ingest([DISAGG]).points
    ratio = littles_law_ratio(points).iloc[0]
    decoding = raw["max_concurrency"] * (raw["mean_e2el_ms"] - raw["mean_ttft_ms"]) / raw["mean_e2el_ms"]
    implied = raw["output_throughput"] * raw["mean_tpot_ms"] / 1000.0
    assert ratio == pytest.approx(implied / decoding)
    assert ratio == pytest.approx(1.0, abs=1e-3)  # the means agree: concurrency 4 → 3.96 streams decoding
    medians = (raw["output_throughput"] * raw["median_tpot_ms"] / 1000.0) / (
        raw["max_concurrency"] * (raw["median_e2el_ms"] - raw["median_ttft_ms"]) / raw["median_e2el_ms"])
    assert abs(medians - 1.0) > 10 * abs(ratio - 1.0)  # what the medians would have said
    assert "inconsistent-throughput" not in points.iloc[0]["flags"]


def test_a_point_without_means_is_checked_with_its_medians():
    points = ingest([MEDIANS_ONLY]).points
    p = points.iloc[0]
    assert p["ttft_ms_mean"] != p["ttft_ms_mean"] and p["e2e_ms_p50"] > 0  # NaN mean, median present
    expected = (p["output_tok_s"] / p["tok_s_per_user"]) / (
        p["concurrency"] * (p["e2e_ms_p50"] - p["ttft_ms_p50"]) / p["e2e_ms_p50"])
    assert littles_law_ratio(points).iloc[0] == pytest.approx(expected)
