"""Published result tables (data/raw/published/*.yaml): the format, exact transcription against the verbatim source
excerpts, quarantine of rows that contradict themselves, and detection that never confuses a table with a raw log."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml
from conftest import RAW, TEST_DATA

from analysis.ingest import detect, formats, ingest
from analysis.ingest.manifest import load_manifest
from analysis.ingest.published import CONDITION_COLUMNS

PUBLISHED = RAW / "published"
EXCERPTS = TEST_DATA / "published"
TABLES = sorted(PUBLISHED.glob("*.yaml"))
NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _numbers(text: str) -> set[float]:
    """Every number printed in a text, thousands separators removed (``6,547.13`` -> 6547.13; ``4×GB300`` -> 4)."""
    return {float(m.replace(",", "")) for m in NUMBER.findall(text)}


def _doc(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _points(path: Path):
    result = ingest([path])
    assert result.quarantine.empty, result.quarantine.to_dict("records")
    return result.points.sort_values("source_line").reset_index(drop=True), result


def test_every_shipped_table_is_read_as_a_published_table():
    assert len(TABLES) >= 7
    result = ingest([PUBLISHED])
    assert result.quarantine.empty, result.quarantine.to_dict("records")
    assert set(result.files["format"]) == {"published-table", "skipped"}  # skipped: the README
    points = result.points
    assert set(points["source_kind"]) == {"published-table"}
    assert set(points["format"]) == {"published-table"}
    assert points["source_url"].str.startswith("https://").all()
    assert points["source_url"].str.contains(r"\[table: .+; row: .+\]").all()
    rows = sum(len(_doc(p)["rows"]) for p in TABLES)
    assert len(points) == rows
    assert {"GB300 NVL72", "GB200 NVL72", "B300", "B200"} <= set(points["hardware"])
    assert {"DeepSeek-V4-Flash", "DeepSeek-V4-Flash-0731", "DeepSeek-V4.1-Flash", "DeepSeek-V4-Pro"} <= set(
        points["model"])


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_every_number_of_a_table_is_in_its_source_excerpt(path):
    doc = _doc(path)
    excerpt = Path(__file__).parents[1] / doc["source"]["excerpt"]
    text = excerpt.read_text()
    assert doc["source"]["url"].split("/blob/")[0] in text  # the excerpt names its source
    assert "Read: " in text
    printed = _numbers(text)
    numeric_conditions = {k for k in CONDITION_COLUMNS if k not in ("date", "model_revision", "framework_version")}
    checked = 0
    for row in doc["rows"]:
        merged = {**doc["conditions"], **row}
        for key, value in merged.items():
            if key in ("row", "date") or isinstance(value, bool):
                continue
            if key == "n_gpus" and "n_prefill_gpus" in merged:
                assert value == merged["n_prefill_gpus"] + merged["n_decode_gpus"]  # prefill + decode GPUs
                continue
            if key in doc["columns"] or (key in numeric_conditions and isinstance(value, (int, float))):
                x = float(str(value).replace(",", ""))
                assert x in printed, f"{path.name}: {key}={value!r} (row {row['row']!r}) is not in {excerpt.name}"
                checked += 1
    assert checked >= 3 * len(doc["rows"])


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_the_points_table_carries_each_row_at_its_statistic(path):
    doc = _doc(path)
    points, _ = _points(path)
    for i, row in enumerate(doc["rows"]):
        point = points.iloc[i]
        assert point["concurrency"] == row["concurrency"]
        for key, spec in doc["columns"].items():
            if key not in row:
                continue
            x = float(str(row[key]).replace(",", ""))
            if spec["measures"] in ("ttft", "tpot") and spec["statistic"] != "unstated":
                assert point[f"{spec['measures']}_ms_{spec['statistic']}"] == pytest.approx(x)
            if spec["measures"] == "tpot" and spec["statistic"] in ("p50", "mean"):
                assert point["tok_s_per_user"] == pytest.approx(1000.0 / x)
                assert point["tok_s_per_user_def"] == f"1000/tpot_ms_{spec['statistic']}"
            if spec["measures"] == "throughput" and spec["counts"] == "total":
                assert point["total_tok_s"] == pytest.approx(x * point["n_gpus"])
            if spec["measures"] == "throughput" and spec["counts"] == "output":
                assert point["tok_s_per_gpu"] == pytest.approx(x)
                assert point["output_tok_s"] == pytest.approx(x * point["n_gpus"])


def test_sglang_gb300_flash_0731_fastest_row():
    points, _ = _points(PUBLISHED / "sglang-pr33082-v4-flash-0731-gb300.yaml")
    first = points.iloc[0]
    assert first["tpot_ms_p50"] == 1.31 and first["ttft_ms_p50"] == 468.93
    assert first["tok_s_per_user"] == pytest.approx(1000 / 1.31)  # 763 tok/s/user
    assert first["tok_s_per_user_def"] == "1000/tpot_ms_p50"
    # "Total tok/s/GPU" is input + output: stored as total over the 4 GPUs, never as output
    assert first["total_tok_s"] == 930 * 4 and math.isnan(first["output_tok_s"]) and math.isnan(first["tok_s_per_gpu"])
    assert (first["n_gpus"], first["scope"], first["spec_method"], first["num_requests"]) == (4, "node", "dspark", 32)
    assert first["workload"] == "random-capped" and (first["isl"], first["osl"]) == (8192, 1024)
    assert first["model_revision"] == "9e165c30e2704aec5d9d593cce3eebd58bbef1cb"
    assert first["framework_version"].startswith("v0.5.16")
    assert first["source_url"] == ("https://github.com/sgl-project/sglang/pull/33082 [table: Results; row: Random, "
                                   "input cap 8192 / output cap 1024, concurrency 1]")


def test_inferencex_v41_flash_agentx_reads_mean_latency_and_both_throughputs():
    points, _ = _points(PUBLISHED / "inferencex-pr3176-v4.1-flash-gb300-vllm-agentx.yaml")
    assert list(points["concurrency"]) == [1, 2, 4, 8, 16, 32, 64, 128]
    first = points.iloc[0]
    assert first["tpot_ms_mean"] == 2.19 and math.isnan(first["tpot_ms_p50"])
    assert first["tok_s_per_user"] == pytest.approx(1000 / 2.19)
    assert first["tok_s_per_user_def"] == "1000/tpot_ms_mean"
    assert first["total_tok_s"] == pytest.approx(6547.13 * 4) and first["output_tok_s"] == pytest.approx(42.34 * 4)
    assert first["tok_s_per_gpu"] == 42.34 and first["gpu_denominator"] == "all"
    assert first["tool"] == "inferencex" and first["workload"] == "agentx" and first["date"] == "2026-09-15"
    assert (points["output_tok_s"] < points["total_tok_s"]).all()


def test_a_statistic_the_source_does_not_state_is_not_stored():
    points, result = _points(PUBLISHED / "inferencex-app-pr391-v4-pro-gb300-nvl72.yaml")
    assert points[["tpot_ms_p50", "tpot_ms_mean"]].isna().all().all()
    assert list(points["tok_s_per_user"]) == [73.43, 36.78, 25.91, 17.58, 14.74, 13.12]
    assert set(points["tok_s_per_user_def"]) == {"tool-per-user"}
    assert "not stored: tpot (TPOT (ms))" in result.files["note"].iloc[0]
    first = points.iloc[0]  # 4 prefill + 68 decode GPUs: the whole NVL72 rack
    assert (first["n_gpus"], first["n_prefill_gpus"], first["n_decode_gpus"], first["scope"]) == (72, 4, 68, "rack")
    assert first["total_tok_s"] == pytest.approx(138.8 * 72)


def test_cookbook_output_is_recovered_only_where_the_source_documents_its_formula():
    points, _ = _points(PUBLISHED / "sglang-cookbook-deepseek-v4-blackwell.yaml")
    fp4 = points[points["flags"].str.contains("output-from-total")]
    nvfp4 = points[points["model"].str.endswith("NVFP4")]
    assert len(fp4) == 36 and len(nvfp4) == 16 and set(fp4.index).isdisjoint(nvfp4.index)
    assert fp4["output_tok_s"].to_numpy() == pytest.approx((fp4["total_tok_s"] * 1024 / 9216).to_numpy())
    assert nvfp4["output_tok_s"].isna().all()
    assert points["flags"].str.contains("conditions-assumed").all()
    b300 = points[(points["hardware"] == "B300") & (points["model"] == "DeepSeek-V4-Flash")].iloc[0]
    assert (b300["tpot_ms_mean"], b300["n_gpus"], b300["spec_method"], b300["draft_tokens"]) == (2.85, 4, "mtp", 4)
    assert b300["tool"] == "sglang.bench_serving"


# --- quarantine -------------------------------------------------------------------------------------------------
HEADER = """published-table: 1
source:
  url: https://github.com/example/repo/pull/1
  title: a table
  author: someone
  date: 2026-01-01
  table: Results
conditions:
  model: DeepSeek-V4-Flash
  hardware: B200
  n_gpus: 8
  framework: sglang
  spec_method: none
  workload: random
columns:
  tpot_p50: {header: P50 TPOT, measures: tpot, statistic: p50, unit: ms}
  tpot_p99: {header: P99 TPOT, measures: tpot, statistic: p99, unit: ms}
  user: {header: tok/s/user, measures: tok_s_per_user, statistic: p50}
  output: {header: Output tok/s, measures: throughput, counts: output, per: system}
  total: {header: Total tok/s, measures: throughput, counts: total, per: system}
rows:
"""


def test_rows_that_contradict_themselves_are_quarantined_with_line_and_field(tmp_path):
    path = tmp_path / "table.yaml"
    path.write_text(HEADER + "\n".join([
        "  - {row: good, concurrency: 1, tpot_p50: 2.0, tpot_p99: 3.0, user: 500, output: 400, total: 4000}",
        "  - {row: output above total, concurrency: 2, tpot_p50: 2.0, output: 5000, total: 4000}",
        "  - {row: p50 above p99, concurrency: 4, tpot_p50: 9.0, tpot_p99: 3.0}",
        "  - {row: per-user contradicts TPOT, concurrency: 8, tpot_p50: 2.0, user: 900}",
        "  - {row: typo, concurrency: 16, tpot_p5O: 2.0}",
        "  - {row: negative, concurrency: 32, tpot_p50: -2.0}",
    ]) + "\n")
    result = ingest([path])
    assert list(result.points["concurrency"]) == [1]
    assert result.points["tok_s_per_user"].iloc[0] == 500  # the source's own figure, consistent with 1000/2.0
    q = result.quarantine.sort_values("line").reset_index(drop=True)
    assert q["source_file"].str.endswith("table.yaml").all()
    first_row = HEADER.count("\n") + 1  # the line of the first row
    assert list(q["line"]) == [first_row + 1, first_row + 2, first_row + 3, first_row + 4, first_row + 5]
    assert list(q["field"]) == ["output", "tpot_p99", "user", "tpot_p5O", "tpot_ms_p50"]
    assert "exceeds total" in q["reason"][0]
    assert "percentiles out of order" in q["reason"][1]
    assert "contradicts the row's own TPOT" in q["reason"][2]
    assert "neither a column" in q["reason"][3]
    assert ">= 0" in q["reason"][4]


def test_a_malformed_header_rejects_the_file_naming_line_and_field(tmp_path):
    bad_stat = tmp_path / "bad_stat.yaml"
    bad_stat.write_text(HEADER.replace("statistic: p99", "statistic: median-ish") + "  - {row: a, tpot_p50: 1}\n")
    no_url = tmp_path / "no_url.yaml"
    no_url.write_text(HEADER.replace("  url: https://github.com/example/repo/pull/1\n", "") + "  - {row: a}\n")
    bad_spec = tmp_path / "bad_spec.yaml"
    bad_spec.write_text(HEADER.replace("spec_method: none", "spec_method: warp-drive") + "  - {row: a}\n")
    result = ingest([tmp_path])
    assert result.points.empty
    q = result.quarantine.set_index(result.quarantine["source_file"].str.rsplit("/", n=1).str[-1])
    assert q.loc["bad_stat.yaml", "field"] == "columns.tpot_p99.statistic"
    assert q.loc["bad_stat.yaml", "line"] == HEADER.splitlines().index(
        "  tpot_p99: {header: P99 TPOT, measures: tpot, statistic: median-ish, unit: ms}".replace("median-ish", "p99")) + 1
    assert q.loc["no_url.yaml", "field"] == "source.url"
    assert q.loc["bad_spec.yaml", "field"] == "conditions.spec_method"
    assert q.loc["bad_spec.yaml", "line"] == HEADER.splitlines().index("  spec_method: none") + 1


def test_unsafe_yaml_and_alias_bombs_are_refused_and_the_other_tables_still_read(tmp_path):
    (tmp_path / "tag.yaml").write_text(HEADER + "  - {row: a, tpot_p50: !!python/object/apply:os.system [echo hi]}\n")
    bomb = "published-table: 1\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(6))
    (tmp_path / "bomb.yaml").write_text(bomb)
    (tmp_path / "good.yaml").write_text(HEADER + "  - {row: a, concurrency: 1, tpot_p50: 2.0}\n")
    result = ingest([tmp_path])
    assert list(result.points["tpot_ms_p50"]) == [2.0]
    reasons = result.quarantine.set_index(result.quarantine["source_file"].str.rsplit("/", n=1).str[-1])["reason"]
    assert set(reasons.index) == {"tag.yaml", "bomb.yaml"}
    assert "alias" in reasons["bomb.yaml"]


def test_a_total_per_gpu_without_its_gpu_count_is_refused_not_guessed(tmp_path):
    path = tmp_path / "decode.yaml"
    path.write_text(HEADER.replace(
        "  total: {header: Total tok/s, measures: throughput, counts: total, per: system}",
        "  total: {header: Total tok/s/GPU, measures: throughput, counts: total, per: gpu, denominator: decode}")
        + "  - {row: a, concurrency: 1, total: 100}\n  - {row: b, concurrency: 2, n_decode_gpus: 4, total: 100}\n")
    result = ingest([path])
    assert list(result.points["total_tok_s"]) == [400]
    assert result.points["output_tok_s"].isna().all()
    first_row = HEADER.count("\n") + 1
    assert result.quarantine["field"].tolist() == ["total"] and result.quarantine["line"].tolist() == [first_row]


# --- detection --------------------------------------------------------------------------------------------------
def test_a_published_table_is_claimed_by_no_other_reader():
    head = TABLES[0].read_bytes()
    others = [f for f in formats() if f.name != "published-table"]
    assert others and not any(f.detect(TABLES[0], head) for f in others)
    assert detect(TABLES[0], head).name == "published-table"


def test_raw_logs_and_other_yaml_are_not_published_tables(tmp_path):
    published = next(f for f in formats() if f.name == "published-table")
    logs = [p for p in (TEST_DATA / "formats").rglob("*") if p.is_file()]
    assert len(logs) > 10
    assert not any(published.detect(p, p.read_bytes()[:65536]) for p in logs)
    manifest = RAW / "manifest.yml"
    assert not published.detect(manifest, manifest.read_bytes())
    lookalike = tmp_path / "notes.yaml"  # the key, but not at the top level, or another version
    lookalike.write_text("notes:\n  published-table: 1\nother: {published-table: 2}\n")
    assert not published.detect(lookalike, lookalike.read_bytes())


def test_shipped_ingest_lists_the_published_tables():
    files = ingest([RAW]).files
    shown = files[files["source_file"].str.contains("published/")]
    assert len(shown) == len(TABLES) + 1  # the README is listed as documentation, not read
    read = shown[shown["format"] == "published-table"]
    assert len(read) == len(TABLES) and (read["status"] == "points").all()


def test_the_shipped_manifest_overrides_nothing_a_table_states():
    manifest = load_manifest(RAW / "manifest.yml")
    assert all(manifest.values_for(path) == {} for path in TABLES)
