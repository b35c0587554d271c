"""The measured collectives table: every number transcribed from a stored source excerpt, and the lookup that
interpolates between measurements and says when it extrapolates or has none."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from analysis.perfmodel import collectives as c

SOURCES = Path(__file__).parent / "data" / "collectives"
FIXTURE = {
    "blog18_Optimizing_MoE_Communication": "trtllm_blog18.source.md", "DeepEP/blob": "deepep_legacy.source.md",
    "nccl/issues/1259": "nccl_1259.source.md", "nccl/issues/1940": "nccl_1940.source.md",
    "nccl/issues/1244": "nccl_1244.source.md", "tokenspeed/pull/860": "tokenspeed_860.source.md",
    "muiLLM/pull/6": "muillm_6.source.md",
}


def _fixture(url: str) -> str:
    name = next(f for key, f in FIXTURE.items() if key in url)
    return (SOURCES / name).read_text()


def _numbers(text: str) -> set[float]:
    return {float(x) for x in re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))}


def test_every_measured_number_appears_in_its_source_excerpt():
    t = c.table()
    measured = t[t["basis"] == "measured"]
    assert len(measured) >= 140 and set(measured["collective"]) == set(c.COLLECTIVES)
    for _, row in measured.iterrows():
        text = _fixture(row["source_url"])
        assert row["source_url"] in text, row["source_url"]
        found = _numbers(text)
        for col in ("latency_us", "bandwidth_gb_s", "group_size"):
            if row[col] == row[col]:
                assert float(row[col]) in found, (row["source_url"], col, row[col])


def test_trtllm_nvl72_batch1_rows_transcribed_exactly():
    t = c.table()
    trt = t[t["library"] == "TensorRT-LLM NVLinkOneSided"]
    assert len(trt) == 4 * 12 * 2
    one = trt[trt["tokens"] == 1].set_index(["group_size", "collective"])["latency_us"]
    assert one[(8, "ep-dispatch")] == 18.9 and one[(8, "ep-combine")] == 31.0
    assert one[(64, "ep-dispatch")] == 27.8 and one[(64, "ep-combine")] == 32.6


def test_assumption_rows_say_why_and_measured_rows_cite_a_source():
    t = c.table()
    assumed = t[t["basis"] == "assumption"]
    assert set(assumed["interconnect"]) == {"xgmi-node", "nvlink-node"}
    assert (assumed["source_url"].isna()).all() and (assumed["source_table"].str.len() > 40).all()
    assert (assumed["latency_us_low"] <= assumed["latency_us"]).all()
    assert (assumed["latency_us"] <= assumed["latency_us_high"]).all()
    assert t.loc[t["basis"] == "measured", "source_url"].str.startswith("https://github.com/").all()


def test_lookup_exact_measurement():
    r = c.latency("ep-dispatch", "nvl72-domain", group_size=8, message_bytes=7168 * 2)
    assert (r.latency_us, r.status) == (18.9, "measured") and r.sources[0].startswith("https://github.com/NVIDIA")


def test_lookup_interpolates_log_log_in_size_and_group():
    # Between batch 1 (14,336 B, 31.0 µs) and batch 2 (28,672 B, 31.1 µs) at EP 8: the geometric mean at 1.5x.
    r = c.latency("ep-combine", "nvl72-domain", group_size=8, message_bytes=7168 * 2 * math.sqrt(2))
    assert r.status == "interpolated" and r.latency_us == pytest.approx(math.sqrt(31.0 * 31.1))
    # Between EP 16 (18.8) and EP 32 (19.8) at batch 1: EP ≈ 22.6 is halfway in log.
    g = c.latency("ep-dispatch", "nvl72-domain", group_size=round(16 * math.sqrt(2)), message_bytes=14336)
    w = (math.log(round(16 * math.sqrt(2))) - math.log(16)) / math.log(2)
    assert g.status == "interpolated" and g.latency_us == pytest.approx(math.exp((1 - w) * math.log(18.8)
                                                                                  + w * math.log(19.8)))


def test_lookup_never_extrapolates_silently():
    r = c.latency("ep-combine", "nvl72-domain", group_size=72, message_bytes=14336)
    assert r.status == "extrapolated" and r.measured_groups == (8, 16, 32, 64)
    assert r.latency_us == 32.6 and r.low_us <= 32.6 <= r.high_us
    none = c.latency("ep-dispatch", "xgmi-node", group_size=8, message_bytes=14336)
    assert none.status == "assumption" and (none.low_us, none.latency_us, none.high_us) == (15, 25, 80)
    # the estimate says which part and group it was read from: 72 GPUs read at the nearest measured group (64), and a
    # GB300 tray's all-reduce at GB200's eight GPUs over two trays (no GB300 row exists)
    assert r.measured_on == (("GB200", 64),) and r.to_dict()["measured_on"] == [["GB200", 64]]
    tray = c.latency("all-reduce", "nvl72-domain", group_size=4, message_bytes=8192, hardware="GB300")
    assert tray.status == "extrapolated" and tray.measured_on == (("GB200", 8),) and tray.latency_us == 10.9


def test_lookup_with_no_row_at_all_gives_the_whole_measured_range(tmp_path):
    t = c.table()
    path = tmp_path / "c.csv"
    t[t["interconnect"] != "xgmi-node"].to_csv(path, index=False)
    r = c.latency("all-reduce", "xgmi-node", group_size=8, message_bytes=14336, path=path)
    every = t[(t["collective"] == "all-reduce") & (t["basis"] == "measured") & (t["interconnect"] != "xgmi-node")]
    assert r.status == "no measurement" and math.isnan(r.latency_us)
    assert (r.low_us, r.high_us) == (every["latency_us"].min(), every["latency_us"].max())


def test_bad_row_names_the_line(tmp_path):
    t = c.table()
    t.loc[3, "interconnect"] = "carrier-pigeon"
    path = tmp_path / "bad.csv"
    t.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"bad.csv: line 5: .*carrier-pigeon"):
        c.latency("all-reduce", "nvlink-node", group_size=8, message_bytes=8, path=path)


def test_interconnect_per_scope():
    assert c.interconnect_for("GB300 NVL72", 1) is None
    assert c.interconnect_for("GB300 NVL72", 4) == "nvl72-domain"
    assert c.interconnect_for("GB300 NVL72", 72) == "nvl72-domain"
    assert c.interconnect_for("B200", 8) == "nvlink-node" and c.interconnect_for("B200", 16) == "scale-out-rdma"
    assert c.interconnect_for("MI355X", 8) == "xgmi-node"
