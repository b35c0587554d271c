"""llama.cpp ``llama-bench -o json`` / ``-o jsonl`` reader against the raw output read independently here.

The samples are the real run shown in llama.cpp's own ``tools/llama-bench/README.md`` (build 5163, Qwen2.5-7B
Q4_K_M on an RTX 4080): its ``-o json`` and ``-o jsonl`` blocks, copied verbatim (``tests/data/formats/PROVENANCE.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.ingest import ingest

DATA = Path(__file__).parent / "data" / "formats" / "llama_bench"
JSON = DATA / "readme_b5163_rtx4080.json"
JSONL = DATA / "readme_b5163_rtx4080.jsonl"


def _raw(path: Path) -> list[dict]:
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("path,fmt", [(JSON, "llama-bench-json"), (JSONL, "llama-bench-jsonl")])
def test_tg_is_a_batch_one_decode_point_and_pp_a_prefill_point(path, fmt):
    tests = _raw(path)
    result = ingest([path])
    assert result.quarantine.empty and result.files["format"].tolist() == [fmt]
    points = result.points
    assert len(points) == len(tests) == 2
    pp = next(t for t in tests if t["n_gen"] == 0)
    tg = next(t for t in tests if t["n_prompt"] == 0)
    decode = points[points["phase"] == "decode"].iloc[0]
    prefill = points[points["phase"] == "prefill"].iloc[0]
    # tg: one stream's generation rate is both its per-user speed and its output rate at batch 1
    assert decode["concurrency"] == decode["batch_size"] == 1
    assert decode["tok_s_per_user"] == pytest.approx(tg["avg_ts"])
    assert decode["output_tok_s"] == pytest.approx(tg["avg_ts"])
    assert decode["step_ms"] == pytest.approx(1000.0 / tg["avg_ts"])
    assert decode["osl"] == tg["n_gen"] == 128
    # pp: prompt tokens per second, and the time of one whole prompt
    assert prefill["total_tok_s"] == pytest.approx(pp["avg_ts"])
    assert prefill["step_ms"] == pytest.approx(pp["avg_ns"] / 1e6)
    assert prefill["isl"] == pp["n_prompt"] == 512
    assert prefill["tok_s_per_user"] != prefill["tok_s_per_user"]  # NaN: prefill has no per-user speed
    assert set(points["hardware"]) == {"GeForce RTX 4080"}
    assert set(points["model"]) == {"Qwen2.5-7B-Instruct-Q4_K_M"}
    assert set(points["framework"]) == {"llama.cpp"}
    assert decode["num_requests"] == len(tg["samples_ts"]) == 5  # repetitions
