"""The ingest report's page object: the headline counts, warnings apart from notes, skipped paths, and a manifest
entry (glob relative to the manifest's folder) for every folder whose points have no hardware."""

from __future__ import annotations

import shutil

from conftest import TEST_DATA

from analysis.ingest import ingest, write_outputs
from analysis.pages.ingest import IngestPage

VLLM = TEST_DATA / "formats" / "vllm"


def _page(tmp_path, src) -> IngestPage:
    write_outputs(ingest([src]), tmp_path / "processed")
    return IngestPage.load(tmp_path / "processed")


def test_unknown_hardware_gets_the_manifest_entry_to_add(tmp_path):
    src = tmp_path / "raw"
    for folder in ("runs/a", "runs/b", "named"):
        (src / folder).mkdir(parents=True)
    shutil.copy(VLLM / "fork_gptoss_conc4.json", src / "runs" / "a" / "one.json")
    shutil.copy(VLLM / "fork_kimi_mtp_conc32.json", src / "runs" / "a" / "two.json")
    shutil.copy(VLLM / "fork_minimax_1k1k_conc64.json", src / "runs" / "b" / "three.json")
    shutil.copy(VLLM / "bench_serve_append.json", src / "named" / "four.json")
    (src / "manifest.yml").write_text("files:\n  - glob: 'named/*'\n    hardware: B200\n")
    page = _page(tmp_path, src)
    hints = page.hints
    assert list(hints["glob"]) == ["runs/a/*.json", "runs/b/*.json"]
    assert list(hints["points"]) == [2, 1]
    assert set(hints["manifest"]) == {"raw/manifest.yml"}
    assert hints["models"].iloc[0] == "Kimi-K2.5, gpt-oss-120b"
    assert "Add one entry per row below" in page.hint_text() and "hardware: <GPU name" in page.hint_text()
    # the hinted entry, added to the manifest, names the hardware
    (src / "manifest.yml").write_text("files:\n  - glob: 'named/*'\n    hardware: B200\n"
                                      "  - glob: 'runs/a/*.json'\n    hardware: H200 SXM\n"
                                      "  - glob: 'runs/b/*.json'\n    hardware: MI355X\n")
    page = _page(tmp_path / "again", src)
    assert page.hints.empty and page.hint_text() == "Every point names its hardware."


def test_without_a_manifest_the_glob_is_relative_to_the_ingested_folder(tmp_path):
    src = tmp_path / "raw"
    (src / "x").mkdir(parents=True)
    shutil.copy(VLLM / "fork_gptoss_conc4.json", src / "x" / "one.json")
    hints = _page(tmp_path, src).hints
    assert list(hints["glob"]) == ["x/*.json"]
    assert hints["manifest"].iloc[0].startswith("manifest.yml (new, in the folder you ingested)")


def test_headline_and_flag_tables(tmp_path):
    src = tmp_path / "raw"
    src.mkdir()
    shutil.copy(VLLM / "fork_gptoss_conc4.json", src / "ok.json")
    shutil.copy(VLLM / "fork_minimax_8k1k_conc64_failed.json", src / "failed.json")
    (src / ".cache").mkdir()
    page = _page(tmp_path, src)
    assert page.headline() == ("2 points read from 2 files by 1 tool; 0 records quarantined; "
                               "1 point kept but left out of fits; 1 path skipped.")
    assert list(page.warnings["flag"]) == ["failed-run"] and list(page.warnings["left_out_of_fits"]) == ["yes"]
    assert list(page.notes["flag"]) == ["request-rate-inf"] and list(page.notes["points"]) == [2]
    assert list(page.skipped["reason"]) == ["hidden folder (name starts with '.'), not read"]


def test_models_table_shows_the_published_v4_family_apart_from_raw_logs(raw_points):
    """The shipped published tables: V4.1 Flash's AgentX rows (InferenceX PR #3176) are their own line, labelled
    published-table, next to the raw-log R1 points; each line counts its distinct source URLs or files."""
    from analysis.pages import ingest

    table = ingest.models_table(raw_points).set_index(["model", "source_kind", "workload"])
    agentx = table.loc[("DeepSeek-V4.1-Flash", "published-table", "agentx")]
    assert agentx["points"] == 8 and agentx["hardware"] == "GB300 NVL72" and agentx["sources"] == 1
    pro = table.loc[("DeepSeek-V4-Pro", "published-table", "lengths-only")]
    assert pro["points"] == 14 and pro["hardware"] == "GB200 NVL72, GB300 NVL72"
    assert set(table.xs("DeepSeek-R1-0528", level="model").index.get_level_values("source_kind")) == {"raw-log"}
    assert table["points"].sum() == len(raw_points)
