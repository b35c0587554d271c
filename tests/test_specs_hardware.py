"""Hardware facts as data: family, generation, FP4 format and the measured achievable line come from
data/specs/hardware.csv columns (with their sources), not from code."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis import config, roofline, specs


def test_family_and_generation_are_columns_of_the_table():
    table = pd.read_csv(config.SPECS_DIR / "hardware.csv", dtype=str, keep_default_na=False)
    assert {"family", "generation", "fp4_format", "achievable_bandwidth_tb_s", "achievable_basis",
            "achievable_source"} <= set(table.columns)
    assert (table["achievable_source"].str.len() > 20).all()
    # GB200 and GB300 are B200- and B300-family parts; H800 resolves to the H100.
    assert [specs.hardware(n).family for n in ("GB200 NVL72", "GB300", "B300", "H800", "MI355X")] == \
        ["B200", "B300", "B300", "H100", "MI355X"]
    assert [specs.generation(n) for n in ("H200", "GB300 NVL72", "MI300X", "MI355X")] == \
        ["hopper", "blackwell", "cdna3", "cdna4"]
    assert specs.generation("TPU v5e") is None and specs.hardware_family("no such part") is None
    assert specs.hardware("MI355X").fp4_format == "mxfp4" and specs.hardware("B200").fp4_format == "nvfp4"
    assert specs.hardware("H200").fp4_format == ""


def test_achievable_line_measured_where_the_table_says_so():
    gb200 = specs.hardware("GB200")
    assert gb200.achievable_basis == "measured" and gb200.achievable_bandwidth_share == pytest.approx(7.35 / 8.0)
    c = roofline.ceilings(gb200, "achievable")
    assert c.bandwidth_tb_s == 7.35 and c.tflops["fp8"] == 2744 and c.tflops["fp4"] == pytest.approx(2744 * 2)
    b200 = specs.hardware("B200")
    assert b200.achievable_basis == "assumption" and math.isnan(b200.achievable_bandwidth_share)
    assert roofline.ceilings(b200, "achievable").bandwidth_tb_s == pytest.approx(0.8 * b200.hbm_bandwidth_tb_s)
    # H200: its calibration records (4.259 TB/s median) win over the table's rounded 4.26.
    assert specs.hardware("H200").achievable_bandwidth_tb_s == 4.26
    assert roofline.ceilings(specs.hardware("H200"), "achievable").bandwidth_tb_s == pytest.approx(4.259)
