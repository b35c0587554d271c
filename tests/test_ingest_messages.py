"""What ingest says about files it cannot take at once: UTF-16/32 text, and content no reader recognises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.ingest import formats, ingest

ROOT = Path(__file__).parent.parent
SAMPLE = ROOT / "tests" / "data" / "formats" / "guidellm" / "v0.2_stripped" / "benchmarks_stripped.json"
NOTEBOOK = sorted((ROOT / "notebooks").glob("*.ipynb"))[0]


@pytest.mark.parametrize("encoding,bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                          ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-16-le", b"")])
def test_wide_text_is_read_as_the_same_report(tmp_path, encoding, bom):
    """A real report saved as UTF-16/32 (what `> file` writes in Windows PowerShell): the same point, and a note,
    not "binary file". Without a byte-order mark, ASCII text in UTF-16 is told by its NUL byte pattern."""
    wide = tmp_path / SAMPLE.name
    wide.write_bytes(bom + SAMPLE.read_text(encoding="utf-8").encode(encoding))
    plain, converted = ingest([SAMPLE]), ingest([wide])
    assert converted.quarantine.empty, converted.quarantine.to_dict("records")
    assert len(converted.points) == len(plain.points) == 1
    for column in ("output_tok_s", "ttft_ms_p50", "tpot_ms_p50", "concurrency"):
        assert converted.points.iloc[0][column] == plain.points.iloc[0][column]
    assert converted.points.iloc[0]["run_id"] == plain.points.iloc[0]["run_id"]  # named after the file, as before
    assert f"read as {encoding.upper()} text" in converted.files.iloc[0]["note"]


def test_real_binary_stays_binary(tmp_path):
    parquet = next((ROOT / "tests" / "data" / "malformed").glob("*.parquet"))
    reason = ingest([parquet]).quarantine.iloc[0]["reason"]
    assert reason.startswith("binary file")


def test_unknown_json_says_what_it_is_and_what_was_tried():
    notebook = json.loads(NOTEBOOK.read_text())
    reason = ingest([NOTEBOOK]).quarantine.iloc[0]["reason"]
    assert reason.startswith("unknown format: a JSON object with keys")
    assert all(key in reason for key in list(notebook)[:2])
    assert f"tried {len(formats())} readers" in reason
    for tool in ("guidellm", "vllm", "sglang", "trtllm-bench", "llama-bench", "mlperf-loadgen"):
        assert tool in reason
    assert "\n" not in reason  # one line


def test_nearest_readers_are_named_with_what_they_lack():
    reason = ingest([NOTEBOOK]).quarantine.iloc[0]["reason"]
    nearest = reason.split("nearest: ", 1)[1]
    assert "has metadata but lacks" in nearest  # the notebook's `metadata` key is all it shares with a report


def test_trimmed_vllm_summary_is_read_for_its_latencies(tmp_path):
    """A vLLM-fork summary trimmed to `model_id`, `max_concurrency` and the `*_ms` keys (no `completed`, no
    throughputs). No such file was found committed, so the shape is made here from a real result by dropping keys:
    what is left must be read as written."""
    raw = json.loads((ROOT / "tests" / "data" / "formats" / "vllm" / "fork_gptoss_conc4.json").read_text())
    trimmed = {k: v for k, v in raw.items() if k.endswith("_ms") or k in ("model_id", "max_concurrency")}
    path = tmp_path / "trimmed.json"
    path.write_text(json.dumps(trimmed))
    result = ingest([path])
    assert result.quarantine.empty and result.files.iloc[0]["format"] == "vllm-serve"
    p = result.points.iloc[0]
    assert p["concurrency"] == raw["max_concurrency"]
    assert p["ttft_ms_p50"] == pytest.approx(raw["median_ttft_ms"])
    assert p["tpot_ms_p50"] == pytest.approx(raw["median_tpot_ms"])
    assert p["e2e_ms_p99"] == pytest.approx(raw["p99_e2el_ms"])
    assert p["output_tok_s"] != p["output_tok_s"]  # not in the file: unknown, not zero
    assert "trimmed summary" in result.files.iloc[0]["note"]
