"""inference-perf lifecycle reader against the project's own committed demo reports, read independently with json.

``kubecon_na_2025_vllm/`` is kubernetes-sigs/inference-perf ``demos/kubecon-na-2025/vllm/results`` @7ff81506: seven
rate stages (1 to 183 QPS) against vLLM, their pooled summary and two server-side Prometheus summaries. Provenance:
``tests/data/formats/PROVENANCE.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.ingest import detect, ingest
from analysis.ingest.base import HEAD_BYTES

DATA = Path(__file__).parent / "data" / "formats" / "inference_perf" / "kubecon_na_2025_vllm"
STAGES = sorted(DATA.glob("stage_*_lifecycle_metrics.json"), key=lambda p: int(p.name.split("_")[1]))


@pytest.fixture(scope="module")
def folder():
    return ingest([DATA])


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


def _point(result, path: Path):
    rows = result.points[result.points["source_file"].str.endswith(path.name)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_every_stage_is_a_point_and_nothing_is_quarantined(folder):
    assert len(STAGES) == 7
    assert folder.quarantine.empty, folder.quarantine.to_dict("records")
    assert len(folder.points) == 7
    assert set(folder.points["tool"]) == {"inference-perf"}
    assert set(folder.points["format"]) == {"inference-perf-lifecycle"}


@pytest.mark.parametrize("path", STAGES, ids=lambda p: p.name)
def test_stage_points_are_the_files_own_numbers(folder, path):
    raw = _raw(path)
    ok, lat, tput = raw["successes"], raw["successes"]["latency"], raw["successes"]["throughput"]
    p = _point(folder, path)
    assert p["request_rate"] == raw["load_summary"]["requested_rate"]
    assert p["output_tok_s"] == pytest.approx(tput["output_tokens_per_sec"])
    assert p["total_tok_s"] == pytest.approx(tput["total_tokens_per_sec"])
    assert p["request_s"] == pytest.approx(tput["requests_per_sec"])
    assert p["num_requests"] == ok["count"] and p["failed_requests"] == raw["failures"]["count"] == 0
    for col, name in (("ttft", "time_to_first_token"), ("tpot", "time_per_output_token"),
                      ("e2e", "request_latency"), ("itl", "inter_token_latency")):
        assert p[f"{col}_ms_mean"] == pytest.approx(1000 * lat[name]["mean"])
        assert p[f"{col}_ms_p50"] == pytest.approx(1000 * lat[name]["median"])
        assert p[f"{col}_ms_p99"] == pytest.approx(1000 * lat[name]["p99"])
    assert p["ttft_ms_p90"] == pytest.approx(1000 * lat["time_to_first_token"]["p90"])
    assert p["tok_s_per_user"] == pytest.approx(1 / lat["time_per_output_token"]["median"])
    assert p["isl"] == pytest.approx(ok["prompt_len"]["mean"]) and p["osl"] == pytest.approx(ok["output_len"]["mean"])
    # a rate stage: concurrency is the measured mean in flight (Little's law), flagged as such
    assert p["concurrency"] == pytest.approx(tput["requests_per_sec"] * lat["request_latency"]["mean"])
    assert "concurrency-achieved" in p["flags"].split(";")
    assert "inconsistent-throughput" not in p["flags"]


def test_first_and_saturated_stage_values(folder):
    first, last = _point(folder, STAGES[0]), _point(folder, STAGES[-1])
    assert first["request_rate"] == 1.0 and first["num_requests"] == 60
    assert first["output_tok_s"] == pytest.approx(64.23350089997027)
    assert first["ttft_ms_p50"] == pytest.approx(31.026913959067315)
    assert first["tpot_ms_p50"] == pytest.approx(3.468046240533825)
    # 183 QPS asked, about 106 achieved: the server saturated and TTFT went to seconds
    assert last["request_rate"] == pytest.approx(183.38) and last["num_requests"] == 11002
    assert _raw(STAGES[-1])["load_summary"]["achieved_rate"] == pytest.approx(106.548, abs=1e-3)
    assert last["ttft_ms_p50"] > 2800


def test_pooled_summary_is_noted_not_a_second_point(folder):
    row = folder.files[folder.files["source_file"].str.endswith("summary_lifecycle_metrics.json")].iloc[0]
    assert row["format"] == "inference-perf-lifecycle" and row["points"] == 0 and row["quarantined"] == 0
    assert "stage files" in row["note"]


def test_summary_alone_is_read_as_one_point(tmp_path):
    alone = tmp_path / "run"
    alone.mkdir()
    (alone / "summary_lifecycle_metrics.json").write_bytes((DATA / "summary_lifecycle_metrics.json").read_bytes())
    raw = _raw(DATA / "summary_lifecycle_metrics.json")
    result = ingest([alone])
    assert result.quarantine.empty and len(result.points) == 1
    p = result.points.iloc[0]
    assert p["num_requests"] == raw["successes"]["count"] == 38717
    assert p["output_tok_s"] == pytest.approx(raw["successes"]["throughput"]["output_tokens_per_sec"])
    assert p["request_rate"] != p["request_rate"]  # NaN: the summary has no single rate


def test_prometheus_summaries_are_recognised_and_noted(folder):
    rows = folder.files[folder.files["source_file"].str.contains("prometheus")]
    assert len(rows) == 2
    assert set(rows["format"]) == {"inference-perf-prometheus"}
    assert (rows["points"] == 0).all() and (rows["quarantined"] == 0).all()


def test_concurrent_stage_reads_concurrency_not_requested_rate(tmp_path):
    """A concurrent stage (load type since #263) writes ``load_summary.concurrency``; its ``requested_rate`` is the
    request count the load generator filled in. Built from a real stage file with that one key added."""
    raw = _raw(STAGES[1])
    raw["load_summary"]["concurrency"] = 32
    path = tmp_path / "stage_0_lifecycle_metrics.json"
    path.write_text(json.dumps(raw))
    p = ingest([path]).points.iloc[0]
    assert p["concurrency"] == 32
    assert p["request_rate"] != p["request_rate"]
    assert "concurrency-achieved" not in p["flags"]


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_detection_names_the_reader(path):
    fmt = detect(path, path.read_bytes()[:HEAD_BYTES])
    expected = "inference-perf-prometheus" if "prometheus" in path.name else "inference-perf-lifecycle"
    assert fmt is not None and fmt.name == expected
