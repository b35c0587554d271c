"""Claim registry and claim cards: parsing claims, the kind of number, the five answers, SOL per precision and
scope, nearest evidence, and a card for every claim in the registry (computed without papermill)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from analysis import claims, config

TEST_DATA = Path(__file__).parent / "data" / "claims"


@pytest.fixture(scope="module")
def points():
    from analysis.ingest import ingest

    return ingest([config.RAW_DATA_DIR], progress=False).points


@pytest.mark.parametrize("text,value,qualifier", [
    ("nearly 1,000", 1000.0, "nearly"),
    (">250 (253) tok/s/user; >30,000 tok/s max throughput", 253.0, ""),
    ("22.3k output / 52.3k input", 22300.0, ""),
    ("DeepSeek-R1 ~420k tok/s on 72x GB300", 420000.0, "~"),
    ("Llama 2 70B server 100,282 tok/s", 100282.0, ""),
    ("up to 1.4x higher throughput", 1.4, "up to"),
])
def test_parse_value(text, value, qualifier):
    assert claims.parse_value(text) == (value, qualifier)


def test_csv_rows_parse_into_claims():
    rows = {c.id: c for c in claims.read_claims_csv(TEST_DATA / "claims.csv")}
    c00 = rows["C00"]
    assert c00.value == 1000 and c00.value_qualifier == "nearly" and c00.kind == "per-user"
    assert c00.model_table == "DeepSeek-V4-Flash" and c00.hardware_table == "GB300 NVL72"
    for name in ("n_gpus", "precision", "batch", "spec_decode", "isl_osl"):
        assert getattr(c00, name) == claims.NOT_STATED
    assert rows["C08"].kind == "per-GPU"          # "tok/s/GPU at given tok/s/user"
    assert rows["C01"].n_gpus == 8 and rows["C01"].precision == "fp4"


def test_registry_has_every_csv_claim_and_c00():
    ids = claims.claim_ids()
    csv_ids = [c.id for c in claims.read_claims_csv(TEST_DATA / "claims.csv")]
    assert ids == sorted(csv_ids) and "C00" in ids
    for c in claims.registry():
        assert c.kind in claims.KINDS and not math.isnan(c.value)


def test_yaml_errors_name_the_file_and_field(tmp_path):
    bad = tmp_path / "X1.yaml"
    bad.write_text("id: X1\nvalue: 5\nunit: tok/s/user\nkind: speedy\nmodel: m\nhardware: h\n")
    with pytest.raises(ValueError, match=r"X1.yaml: field 'kind'"):
        claims.load_claim(bad)
    with pytest.raises(KeyError, match="unknown claim 'C99'"):
        claims.load_claim("C99")


def test_c00_card(points):
    card = claims.claim_card(TEST_DATA / "C00.yaml", points)
    r = card.restated.set_index("axis")
    assert r.loc["tok/s/user", "value"] == 1000
    assert math.isnan(r.loc["tok/s/GPU", "value"]) and "not stated" in r.loc["tok/s/GPU", "how"]
    assert set(card.answers) == {"batch", "large_batch", "scope", "latency", "precision"}
    assert {a.status for a in card.answers.values()} <= {claims.STATED, claims.INFERRED, claims.NOT_STATED}
    # Nothing is stated in C00, so every answer comes from the points table and names its rows.
    for a in card.answers.values():
        assert a.status == claims.INFERRED and a.rows
        assert all(":" in row for row in a.rows)
    # SOL: DeepSeek-V4-Flash on GB300 at FP8 and FP4 for 1, 8 and 72 GPUs, τ = 1 and the assumed 2.5.
    sol = card.sol
    assert set(sol["precision"]) == {"fp8", "fp4"} and set(sol["gpus"]) == {1, 8, 72}
    assert set(sol["tokens_per_step"]) == {1.0, claims.ASSUMED_TAU}
    one = sol[(sol["tokens_per_step"] == 1.0) & (sol["gpus"] == 1)].set_index("precision")
    # Hand check: 13.0B params read (6.5B always-read + 6 experts x 43 layers x 25.17M), 8 TB/s.
    weights_b = 13.0  # the model table's active count, excluding the input embedding
    assert one.loc["fp4", "sol_tok_s_per_user"] == pytest.approx(8e12 / (weights_b * 1e9 * 0.5625), rel=0.02)
    assert one.loc["fp8", "sol_tok_s_per_user"] == pytest.approx(8e12 / (weights_b * 1e9 * 1.0), rel=0.02)
    assert one.loc["fp8", "fraction_of_sol"] > 1 > one.loc["fp4", "fraction_of_sol"]
    assert any("FP8" in s and "above the bound" in s for s in card.sol_statements)
    # Nearest evidence: DeepSeek-R1 on GB300 NVL72 from the InferenceX snapshot; the claim is beyond all of it.
    top = card.evidence_summary.iloc[0]
    assert top["hardware"] == "GB300 NVL72" and top["model"].startswith("DeepSeek-R1")
    assert card.evidence["tok_s_per_user"].max() < 1000
    assert "V4-Flash" in card.model_note and "V4.1" in card.model_note
    assert "C00" in card.verdict and "1 GPU at FP4" in card.verdict


def test_per_gpu_claim_is_restated_per_system_and_keeps_its_per_user_partner(points):
    card = claims.claim_card("C04", points)
    r = card.restated.set_index("axis")
    assert r.loc["tok/s per system", "value"] == pytest.approx(7583 * 56)
    card = claims.claim_card("C08", points)
    assert card.restated.set_index("axis").loc["tok/s/user", "value"] == 125
    assert card.sol["fraction_of_sol"].notna().all()


def test_c02_uses_the_stated_recipe_and_reproduces_worked_example_a(points):
    card = claims.claim_card("C02", points)
    node = card.sol[(card.sol["gpus"] == 8) & (card.sol["tokens_per_step"] == 1.0)].iloc[0]
    assert node["sol_tok_s_per_user"] == pytest.approx(1670, rel=0.02)
    assert node["fraction_of_sol"] == pytest.approx(368 / 1670, rel=0.02)


def test_claim_without_model_config_says_so(points):
    card = claims.claim_card("C03", points)
    assert card.sol.empty and "not in data/specs/models.csv" in card.sol_info["reason"]
    assert "no roofline" in card.model_note.lower()


def test_every_registry_claim_gets_a_card(points):
    for cid in claims.claim_ids():
        card = claims.claim_card(cid, points)
        res = card.results()
        assert res["claim"] == cid and len(res["answers"]) == 5
        assert res["verdict"].startswith(cid)
        if card.claim.model_table and not card.sol.empty:
            assert (card.sol["sol_tok_s_per_user"] > 0).all()


def test_claim_from_csv_file(points, tmp_path):
    card = claims.claim_card(f"{TEST_DATA / 'claims.csv'}#C05", points)
    assert card.claim.id == "C05" and card.claim.kind == "per-GPU"


def test_cli_claim_user_errors(capsys, tmp_path):
    assert claims.cli_claim("C99", out=tmp_path) == 2
    assert "unknown claim 'C99'" in capsys.readouterr().err
    assert claims.cli_claim(str(tmp_path / "missing.yaml"), out=tmp_path) == 2


def test_figure_draws_the_claim(points):
    import matplotlib

    matplotlib.use("Agg")
    from analysis.plots.claims import claim_on_frontier

    card = claims.claim_card("C00", points)
    ax = claim_on_frontier(card)
    assert ax.get_xscale() == "log" and "tok/s per user" in ax.get_xlabel() and "per GPU" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("claim C00") for label in labels)
    assert "2.6×" in ax.get_title()
