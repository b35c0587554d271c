"""InferenceX multi-turn agentic aggregates (``users`` instead of ``conc``), read against the raw JSON.

Real files from SemiAnalysisAI/InferenceX @7181314 (``tests/data/formats/PROVENANCE.md``): DeepSeek-R1 FP4 on 4× B200,
vLLM 0.19.1, 16 and 1 simulated users. Latencies in the file are seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.ingest import ingest

DATA = Path(__file__).parent / "data" / "formats" / "inferencex" / "multiturn_users"
FILES = sorted(DATA.glob("*.json"))


def test_both_samples_are_found():
    assert len(FILES) == 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:24])
def test_points_are_the_files_own_numbers(path):
    raw = json.loads(path.read_text())
    result = ingest([path])
    assert result.quarantine.empty
    assert result.files["format"].tolist() == ["inferencex-multiturn"]
    p = result.points.iloc[0]
    assert p["concurrency"] == raw["users"]
    assert p["output_tok_s"] == pytest.approx(raw["output_tput_tps"])
    assert p["total_tok_s"] == pytest.approx(raw["total_tput_tps"])
    assert p["ttft_ms_p50"] == pytest.approx(1000.0 * raw["median_ttft"])
    assert p["ttft_ms_p99"] == pytest.approx(1000.0 * raw["p99_ttft"])
    assert p["tpot_ms_p50"] == pytest.approx(1000.0 * raw["median_itl"])
    assert p["e2e_ms_p50"] == pytest.approx(1000.0 * raw["median_ttlt"])
    assert p["tok_s_per_user"] == pytest.approx(1.0 / raw["median_itl"])
    assert p["num_requests"] == raw["num_requests_successful"]
    assert p["n_gpus"] == raw["tp"] == 4
    assert p["tok_s_per_gpu"] == pytest.approx(raw["output_tput_per_gpu"])
    assert p["model"] == "DeepSeek-R1-0528" and p["hardware"] == "B200"
    assert "inconsistent-throughput" not in p["flags"]


def test_sixteen_users_is_concurrency_sixteen():
    p = ingest([f for f in FILES if "users16_" in f.name][0]).points.iloc[0]
    assert p["concurrency"] == 16 and p["scenario"] == "agentic-coding"
