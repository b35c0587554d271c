"""01-ingest executed under papermill on a small input; numbers read back and checked."""

import shutil

from analysis.ingest import ingest, write_outputs

from conftest import RAW, TEST_DATA


def test_ingest_notebook_reports_counts_and_quarantine(notebook_runner, tmp_path):
    src = tmp_path / "raw"
    (src / "vllm").mkdir(parents=True)
    (src / "sweep.jsonl").write_text((RAW / "h200" / "moe_sweep_run1.jsonl").read_text())
    (src / "empty.json").write_text("")
    (src / ".hidden.json").write_text("{}")
    shutil.copy(TEST_DATA / "formats" / "vllm" / "fork_gptoss_conc4.json", src / "vllm" / "run.json")
    (src / "manifest.yml").write_text("files:\n  - glob: '*.jsonl'\n    hardware: H200 SXM\n")
    result = ingest([src])
    write_outputs(result, tmp_path / "processed")
    results = notebook_runner("01-ingest", processed_dir=str(tmp_path / "processed"))
    assert results["points"] == len(result.points) == 10
    assert results["quarantined"] == 1
    assert results["quarantine_reasons"] == {"empty file": 1}
    assert results["points_by_tool"] == {"h200-steps": 9, "vllm": 1}
    assert results["skipped"] == 2  # the hidden file and the manifest, each listed with its reason
    assert results["unknown_hardware"] == 1  # the vLLM run: the manifest names only the step log's GPU
    assert results["notes"] == {"request-rate-inf": 1}  # a tool's setting, not a warning
    assert results["warnings"] == {}
    assert results["untrusted"] == 0
