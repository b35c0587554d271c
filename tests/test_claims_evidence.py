"""A claim card built from one hand-made evidence object (no points table): every answer and check reads it."""

import math

import pandas as pd
import pytest

from analysis import claims
from analysis.claims.checks import CHECKS, Difference
from analysis.claims.registry import ClaimPart
from analysis.claims.selection import ClaimEvidence
from analysis.schema import to_points


def _rows():
    base = {"source_file": "hand.csv", "tool": "hand", "format": "generic-csv", "model": "DeepSeek-V4.1-Flash",
            "hardware": "GB300 NVL72", "framework": "sglang", "spec_decode": "none",
            "isl": 8192, "osl": 1024, "disagg": False}
    rows = [
        # concurrency, tok/s/user, tok/s/GPU, precision, TTFT p50/p99 ms
        (1, 500.0, 120.0, "fp4", 400.0, 900.0),
        (16, 200.0, 700.0, "fp4", 600.0, 1500.0),
        (64, 60.0, 2500.0, "fp4", 2000.0, 9000.0),
        (1, 300.0, 70.0, "fp8", 450.0, 950.0),
    ]
    out = []
    for i, (c, user, gpu, prec, t50, t99) in enumerate(rows, start=1):
        out.append({**base, "source_line": i, "concurrency": c, "tok_s_per_user": user, "tok_s_per_gpu": gpu,
                    "precision": prec, "n_gpus": 72, "scope": "rack", "ttft_ms_p50": t50, "ttft_ms_p99": t99,
                    "tpot_ms_p50": 1000.0 / user, "tpot_ms_p99": 1200.0 / user, "output_tok_s": gpu * 4})
    pts = to_points(out)
    return pts.assign(model_match=2, hardware_match=2, match=8, tier="same-model",
                      row=[f"hand.csv:{i}" for i in range(1, len(pts) + 1)])


@pytest.fixture(scope="module")
def card():
    claim = claims.load_claim("C00")
    near = _rows()
    ev = ClaimEvidence(claim=claim, parts=tuple(claims.claim_parts(claim)), near=near,
                       pool=near.drop(columns=["model_match", "hardware_match", "match", "tier", "row"]),
                       pool_tier="same-model", pool_models=("DeepSeek-V4.1-Flash",), pool_size=len(near),
                       lengths=((8192.0, 1024.0),), lengths_note="lengths not stated", n_points=len(near))
    return claims.card_from_evidence(ev)


def test_each_answer_is_a_fact_from_the_hand_made_evidence(card):
    a = card.answers
    # batch: the point nearest 1,000 tok/s/user in log distance is the 500 tok/s/user one (concurrency 1)
    assert a["batch"].fact["rule"] == "nearest"
    assert a["batch"].fact["point"]["row"] == "hand.csv:1"
    assert a["batch"].fact["ratio"] == pytest.approx(2.0)
    assert a["batch"].rows == ["hand.csv:1"]
    # large batch: the highest tok/s/GPU at the speed point's precision and lengths (fp4): 2,500 at concurrency 64
    assert a["large_batch"].fact["rule"] == "capacity"
    assert a["large_batch"].fact["point"]["tok_s_per_gpu"] == pytest.approx(2500.0)
    assert a["large_batch"].fact["point"]["concurrency"] == 64
    # latency: the speed point's own TTFT
    assert a["latency"].fact["point"]["ttft_ms_p99"] == pytest.approx(900.0)
    # scope: not stated; the speed point ran on the 72 GPUs of the rack
    assert a["scope"].fact["rule"] == "inferred" and a["scope"].fact["point"]["n_gpus"] == 72
    # precision: one clean FP4/FP8 pair (all else equal): 500 / 300
    assert a["precision"].fact["pairs"]["n"] == 1
    assert a["precision"].fact["pairs"]["median"] == pytest.approx(500.0 / 300.0)
    # the words are written from those facts
    assert "2.0× that speed" in a["batch"].answer and "2,500 tok/s/GPU" in a["large_batch"].short


def test_the_check_reads_the_same_evidence(card):
    facts = card.check_facts
    top = facts.iloc[0]
    assert top["reading"]["rule"] == "fastest"
    assert top["reading"]["points"][0]["row"] == "hand.csv:1"
    assert top["measured_all"] == pytest.approx(500.0)
    assert top["match"] == "direct"
    assert "fastest measured point: 500.0 tok/s/user at concurrency 1" in card.checks.iloc[0]["how"]
    assert card.to_json()["answers"]["batch"]["fact"]["rule"] == "nearest"


def test_the_figure_colours_what_the_evidence_object_says(card):
    assert set(card.basis.drawn["row"]) == {"hand.csv:1", "hand.csv:2", "hand.csv:3", "hand.csv:4"}
    assert card.basis.context.empty and card.basis.tier == "same-model"


def test_a_part_carries_its_unit_and_compared_value_with_the_gpu_guard():
    assert ClaimPart(kind="per-system", value=7200.0, text="x", n_gpus=72).compared_value == pytest.approx(100.0)
    assert ClaimPart(kind="per-system", value=7200.0, text="x", n_gpus=72).unit == "tok/s/GPU"
    for n in (0, -8, math.nan):
        assert math.isnan(ClaimPart(kind="per-system", value=7200.0, text="x", n_gpus=n).compared_value)
    assert ClaimPart(kind="per-user", value=1000.0, text="x").compared_value == 1000.0


def test_the_check_table_is_keyed_by_kind_and_axis():
    assert ClaimPart(kind="ratio", value=3, text="x", axis="tok/s/GPU", baseline="hopper").axis_key == "tok/s/GPU"
    assert ClaimPart(kind="ratio", value=3, text="x", axis="cost per million tokens", baseline="H200").axis_key == \
        "cost"
    assert ClaimPart(kind="ratio", value=3, text="x", axis="tok/s/GPU").axis_key == "other"  # no baseline named
    assert ClaimPart(kind="per-user", value=3, text="x").axis_key is None
    assert {k for k in CHECKS} >= {("per-user", None), ("per-GPU", None), ("ratio", "cost"), ("ratio", "per-MW")}


def test_differences_are_facts_and_read_as_words():
    from analysis.claims.check_words import difference_text

    assert difference_text(Difference("hardware", "B200", "GB200")) == "hardware: B200 instead of GB200"
    assert difference_text(Difference("lengths", "ISL 1,024 / OSL 1,024", "8k/1k")) == \
        "lengths: ISL 1,024 / OSL 1,024 measured, 8k/1k claimed"


def test_an_empty_evidence_object_gives_a_card_that_says_so():
    claim = claims.load_claim("C00")
    card = claims.card_from_evidence(ClaimEvidence(claim=claim, parts=tuple(claims.claim_parts(claim)),
                                                   near=pd.DataFrame()))
    assert card.answers["batch"].fact["rule"] == "no-evidence"
    assert card.checked_on == "no points"
    assert card.evidence_tier == "none"
