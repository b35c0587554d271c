"""01-ingest on small inputs: its page function's numbers, and the notebook under papermill with hostile names."""

import shutil

from conftest import RAW, TEST_DATA

from analysis.ingest import ingest, write_outputs


def test_ingest_page_reports_counts_and_quarantine(tmp_path):
    """What 01-ingest saves, from its page function (the notebook runs below and in the rendered suite)."""
    from conftest import page_results

    from analysis.pages.ingest import IngestPage

    src = tmp_path / "raw"
    (src / "vllm").mkdir(parents=True)
    (src / "sweep.jsonl").write_text((RAW / "h200" / "moe_sweep_run1.jsonl").read_text())
    (src / "empty.json").write_text("")
    (src / ".hidden.json").write_text("{}")
    shutil.copy(TEST_DATA / "formats" / "vllm" / "fork_gptoss_conc4.json", src / "vllm" / "run.json")
    (src / "manifest.yml").write_text("files:\n  - glob: '*.jsonl'\n    hardware: H200 SXM\n")
    result = ingest([src])
    write_outputs(result, tmp_path / "processed")
    results = page_results(IngestPage.load(tmp_path / "processed"))
    assert results["points"] == len(result.points) == 10
    assert results["quarantined"] == 1
    assert results["quarantine_reasons"] == {"empty file": 1}
    assert results["points_by_tool"] == {"h200-steps": 9, "vllm": 1}
    assert results["skipped"] == 2  # the hidden file and the manifest, each listed with its reason
    assert results["unknown_hardware"] == 1  # the vLLM run: the manifest names only the step log's GPU
    assert results["notes"] == {"random-weights": 9, "request-rate-inf": 1}  # settings and conditions, not warnings
    assert results["warnings"] == {}
    assert results["untrusted"] == 0


def test_ingest_notebook_keeps_hostile_names_and_reasons_inert(notebook_runner, tmp_path):
    import json
    import re

    src = tmp_path / "raw"
    (src / "<svg onload=alert(2)>").mkdir(parents=True)
    run = json.loads((TEST_DATA / "formats" / "vllm" / "fork_gptoss_conc4.json").read_text())
    run["model_id"] = "<script>alert(1)</script>"
    (src / "<img src=x onerror=alert(3)>.json").write_text(json.dumps(run))
    bad = dict(run, output_throughput="<script>alert(4)</script>", model_id="[x](javascript:alert(5))")
    (src / "<svg onload=alert(2)>" / "bad.json").write_text(json.dumps(bad))
    (src / ".<iframe src=javascript:alert(6)>").write_text("{}")
    result = ingest([src])
    write_outputs(result, tmp_path / "processed")
    results = notebook_runner("01-ingest", processed_dir=str(tmp_path / "processed"))
    assert results["points"] == 1 and results["quarantined"] == 1 and results["skipped"] == 1
    executed = json.loads((tmp_path / "01-ingest.ipynb").read_text())
    shown = []
    for cell in executed["cells"]:
        for output in cell.get("outputs", []):
            for kind in ("text/html", "text/markdown"):
                if kind in output.get("data", {}):
                    shown.append("".join(output["data"][kind]))
    page = "\n".join(shown)
    # the payloads are on the page, as text
    assert "&#60;script&#62;alert&#40;4&#41;&#60;/script&#62;" in page  # a quarantine reason quoting the log
    assert "raw/&#60;svg onload=alert&#40;2&#41;&#62;/bad.json" in page  # a folder name
    assert "&#60;iframe src=javascript:alert&#40;6&#41;&#62;" in page  # a skipped hidden name
    for live in ("<script", "<img", "<svg", "<iframe", "](javascript:", "onload=alert(2)>"):
        assert live not in page, live
    assert not re.search(r"<[a-z]+[^>]*\son\w+=", page)
