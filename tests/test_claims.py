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
def points(raw_points):
    """The shipped data/raw ingested (the session's table: read once per worker)."""
    return raw_points


_CARDS: dict = {}


def card_of(cid: str, points) -> claims.ClaimCard:
    """The shipped claim's card on the shipped points, computed once for this module (cards are read, not changed)."""
    key = (cid, id(points))
    if key not in _CARDS:
        _CARDS[key] = claims.claim_card(cid, points)
    return _CARDS[key]


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
    assert set(card.answers) == {"batch", "large_batch", "scope", "latency", "precision", "spec_decode"}
    assert {a.status for a in card.answers.values()} <= {claims.STATED, claims.INFERRED, claims.NOT_STATED}
    # Nothing is stated in C00, so every answer comes from the points table and names its rows, except precision:
    # no FP4/FP8 pair of the claim's model exists (the roofline's ratio is context, never the answer).
    for key, a in card.answers.items():
        if key == "precision":
            assert a.status == claims.NOT_STATED and not a.rows and "Roofline" in a.context
            continue
        assert a.status == claims.INFERRED and a.rows, key
        assert all(":" in row or "#/" in row for row in a.rows)   # a line, or a JSON pointer into an array
    # SOL: DeepSeek-V4-Flash on GB300 at FP8 and FP4 for 1, 4, 8 and 72 GPUs, τ = 1 and the top of the range the
    # speculative-decoding answer and the step-time model read: 4.07, V4.1-Flash's DSpark golden curve at 5 drafted
    # (thinking off), verifying 6 tokens a step; it had been the project-wide 2.5 assumption, a third τ on one card
    sol = card.sol
    assert set(sol["precision"]) == {"fp8", "fp4"} and set(sol["gpus"]) == {1, 4, 8, 72}
    assert set(sol["tokens_per_step"]) == {1.0, 4.07}
    assert card.sol_info["tau_text"].startswith("τ = 4.07 assumed: the highest acceptance length of the shipped "
                                                "golden curves for this model (dsv41flash_dspark.yaml")
    assert "5 drafted + 1 verified per step" in card.sol_info["tau_text"]
    assert card.answers["spec_decode"].short.endswith("at τ 1.00–4.07")
    one = sol[(sol["tokens_per_step"] == 1.0) & (sol["gpus"] == 1)].set_index("precision")
    # Hand check at FP8: 13.0B params read (6.5B always-read + 6 experts x 43 layers x 25.17M), 8 TB/s.
    weights_b = 13.0  # the model table's active count, excluding the input embedding
    assert one.loc["fp8", "sol_tok_s_per_user"] == pytest.approx(8e12 / (weights_b * 1e9 * 1.0), rel=0.02)
    # FP4 is the checkpoint as shipped (data/specs/recipes.csv), not FP4 on every weight: 4.85B attention at FP8,
    # 1.08B shared + 6 x 43 x 25.17M routed expert params at FP4 (0.5625 bytes with scales), 0.045B router and the
    # 0.53B head at BF16: 10.26 GB a step, 779 tok/s/user (all-FP4 gave 1,094: above the claim, an artifact)
    fp4_gb = 4.85 * 1.0 + (1.08 + 6 * 43 * 0.02517) * 0.5625 + (0.045 + 0.53) * 2.0
    assert one.loc["fp4", "sol_tok_s_per_user"] == pytest.approx(8e3 / fp4_gb, rel=0.01)
    assert card.sol_info["recipes"]["fp4"].startswith("fp8,routed_experts=fp4")
    assert one.loc["fp8", "fraction_of_sol"] > 1 and one.loc["fp4", "fraction_of_sol"] > 1  # one GPU: neither
    assert any("FP8" in s and "above the bandwidth bound" in s for s in card.sol_statements)
    # Nearest evidence: the claim's own model family on GB300 (published V4.1-Flash and V4-Flash tables); the claim
    # is beyond all of it.
    top = card.evidence_summary.iloc[0]
    assert top["hardware"] == "GB300 NVL72" and top["model"].startswith("DeepSeek-V4")
    assert set(card.evidence["tier"]) == {"same-model"}
    assert card.evidence["tok_s_per_user"].max() < 1000
    assert "V4-Flash" in card.model_note and "V4.1" in card.model_note
    # The bound hides every collective under a weight read; on the 4-GPU tray at tau 1 the interconnect table's
    # range (fused MNNVL all-reduce 10.9 us, measured on GB200 at 8 GPUs, to an unfused NCCL one at 260 us) spans
    # the claim, so the reading is undecided and names the latency that decides: 1 ms a step over its 86
    # collectives, 11.6 us each. The step-time model's, beside it, pays them after the weight reads and names its
    # own (the 8-GPU node's all-reduces need <= 9.7 us each; 10.9 us measured)
    tray = card.sol[(card.sol["gpus"] == 4) & (card.sol["tokens_per_step"] == 1.0) & (card.sol["precision"] == "fp8")]
    tray = tray.iloc[0]
    assert round(tray["comm_floor_ms"] * 1000 / tray["collective_latency_us"]) == 86
    assert tray["sol_tok_s_per_user_comm_low"] < 1000 <= tray["sol_tok_s_per_user_comm_high"]
    assert tray["reading"].startswith("undecided: the collective latency decides; with every collective hidden under "
                                      "a weight read the claim needs ≤ 11.6 µs per collective, the table gives 10.9 µs "
                                      "(extrapolated: not measured at this scope, within 2× of the need)")
    # a need far from the table's latency is not undecided: at tau 4.07 the tray needs <= 47.3 us against 10.9 us
    tray4 = card.sol[(card.sol["gpus"] == 4) & (card.sol["tokens_per_step"] == 4.07) & (card.sol["precision"] == "fp8")]
    assert tray4.iloc[0]["reading"].startswith("possible (33% of SOL")
    assert "C00" in card.verdict and "4-GPU tray at FP8 is undecided" in card.verdict
    assert "With every collective hidden under a weight read" not in card.verdict  # no scope is 'possible' at tau 1
    assert "at τ 1.00 no scope reaches it" in card.verdict and "≤ 9.7 µs each, against 10.9 µs measured" in card.verdict
    # the bounds leave out the fixed cost per step; the calibrated model keeps it: its 4-GPU prediction without
    # speculation, and the tau the claim would need at that step time (1,000 / it), beyond the golden curves' 4.07
    model = card.answers["precision"].fact["model"]
    need = 1000 / model["tok_s_per_user"]["native"]
    assert need > card.sol["tokens_per_step"].max() == 4.07
    assert (f"4 GPUs at the shipped recipe predict {model['tok_s_per_user']['native']:,.0f} tok/s/user without "
            f"speculative decoding (dominant term: overhead); at that step time the claim needs τ ≥ {need:.2f}, above "
            "the highest acceptance length the bounds read (4.07)") in card.verdict
    # each scope's deciding τ, read at the acceptance lengths V4.1-Flash's DSpark curve measured: the 72-GPU domain
    # first reaches the claim at 3.26 (4 drafted, thinking on) and not at the next lower row, 2.90 (3 drafted)
    assert ("it reaches the claim on 1 GPU, 4-GPU tray and 8 GPUs (2 trays) from τ 1.81 (1 drafted, thinking on), and on "
            "72-GPU domain from τ 3.26 (4 drafted, thinking on)") in card.verdict
    from analysis.perfmodel import scope as model_scope

    def rack_reaches(tau, drafted):
        f = model_scope.scope_facts("DeepSeek-V4-Flash", "GB300 NVL72", claim_tok_s_per_user=1000, tau=tau,
                                    verify=drafted + 1.0, scopes=(72,))[0]
        return f["reaches"] and f["fits"]
    assert rack_reaches(3.26, 4) and not rack_reaches(2.90, 3)
    # the precision answer's model names its layout: TP4 on the tray, since the nearest evidence states none
    model_prec = card.answers["precision"].fact["model"]
    assert model_prec["layout"] == {"tp": 4, "ep": 1, "dp": 1} and "4 GPUs as TP4 (the nearest evidence states no " \
        "layout" in card.answers["precision"].context
    from analysis.claims import answers as claim_answers

    assert claim_answers._evidence_layout(pd.Series({"tp": 8.0, "ep": 8.0, "dp": float("nan")}), 8) == \
        {"tp": 8, "ep": 8, "dp": 1}  # a point that states its layout lends it
    assert claim_answers._evidence_layout(pd.Series({"tp": 16.0}), 8) is None  # a wider worker than its GPUs: not
    assert claim_answers._evidence_layout(pd.Series({"tp": float("nan")}), 8) is None
    # ... and says where that latency was measured: GB200, eight GPUs over two trays, read for a GB300 node
    assert "measured on GB200 at 8 GPUs, read for this scope)" in card.verdict
    # the capacity sentence says what its two numbers count: output over all 4 GPUs, per user from the mean TPOT
    assert ("gives 905 output tok/s/GPU (÷ all 4 GPUs) with 39 tok/s per user (1000 / mean TPOT)." in card.verdict)


def test_per_gpu_claim_is_restated_per_system_and_keeps_its_per_user_partner(points):
    card = card_of("C04", points)
    r = card.restated.set_index("axis")
    assert r.loc["tok/s per system", "value"] == pytest.approx(7583 * 56)
    card = card_of("C08", points)
    assert card.restated.set_index("axis").loc["tok/s/user", "value"] == 125
    assert card.sol["fraction_of_sol"].notna().all()


def test_c02_uses_the_stated_recipe_and_reproduces_worked_example_a(points):
    card = card_of("C02", points)
    node = card.sol[(card.sol["gpus"] == 8) & (card.sol["tokens_per_step"] == 1.0)].iloc[0]
    assert node["sol_tok_s_per_user"] == pytest.approx(1670, rel=0.02)
    assert node["fraction_of_sol"] == pytest.approx(368 / 1670, rel=0.02)


def test_claim_without_model_config_says_so(points):
    card = card_of("C03", points)
    assert card.sol.empty and "not in data/specs/models.csv" in card.sol_info["reason"]
    assert "no roofline" in card.model_note.lower()


def test_every_registry_claim_gets_a_card(points):
    for cid in claims.claim_ids():
        card = card_of(cid, points)
        res = card.results()
        assert res["claim"] == cid and len(res["answers"]) == 6
        assert res["verdict"].startswith(cid)
        if card.claim.model_table and not card.sol.empty:
            assert (card.sol["sol_tok_s_per_user"] > 0).all()


def test_claim_from_csv_file(points, tmp_path):
    card = claims.claim_card(f"{TEST_DATA / 'claims.csv'}#C05", points)
    assert card.claim.id == "C05" and card.claim.kind == "per-GPU"


def test_cli_claim_user_errors(capsys, tmp_path):
    from analysis.cli import main

    assert main(["claim", "C99", "--out", str(tmp_path)]) == 2
    assert "unknown claim 'C99'" in capsys.readouterr().err
    assert main(["claim", str(tmp_path / "missing.yaml"), "--out", str(tmp_path)]) == 2


def test_figure_draws_the_claim(points):
    import matplotlib

    matplotlib.use("Agg")
    from analysis.plots.claims import claim_on_frontier

    card = card_of("C00", points)
    ax = claim_on_frontier(card)
    assert ax.get_xscale() == "log" and "tok/s per user" in ax.get_xlabel() and "per GPU" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("claim C00") for label in labels)
    # The title names the evidence tier; another checkpoint of the claim's architecture is labelled as such.
    assert "evidence: same-model" in ax.get_title() and "×" not in ax.get_title()
    assert any(label.startswith("same-model (DeepSeek-V4-Flash, another checkpoint)") for label in labels)
    assert any("ISL/OSL ≤ 8k/≤ 1k (random)" in label for label in labels)  # lengths (here caps) in every entry
    assert any("agentx workload" in label for label in labels)    # or the workload where there are none
    assert any("per-user speed only" in label for label in labels)  # the 763 tok/s/user point has no tok/s/GPU
    assert "fastest: 763" in [t.get_text() for t in ax.texts]  # named on the axes, among the bound lines
    # the shipped mixed recipe is starred on the bound lines and spelt out once
    assert "FP4*: FP4 experts (attention FP8), as its checkpoint is served" in labels
    assert any(label.endswith("4-GPU tray FP4*: 779–794") for label in labels)
    card = card_of("C13", points)
    labels = [t.get_text() for t in claim_on_frontier(card).get_legend().get_texts()]
    # Short legend entries (under the axes), each naming its tier and, here, that its lengths are not the claim's.
    # (each also names the speculative decoding its points ran, since a point that drafted can pass a tau-1 bound)
    assert max(len(label) for label in labels) < 95 and "claim C13: 8,064 tok/s/GPU" in labels
    # a frontier over runs with and without drafting says it is an envelope, not one setting's curve
    assert any(label.endswith("· envelope over mtp and none runs") for label in labels)
    assert any(label.startswith("same-model, other lengths: GB300 NVL72") for label in labels)


# --- review fixes: lengths, compound claims, capacity at a stated interactivity, SOL with communication ---------

def test_stated_lengths_and_nearest_measured_pair(points):
    assert claims.stated_lengths(claims.load_claim("C08")) == (1024, 1024)
    assert claims.stated_lengths(claims.load_claim("C22")) == (32768, 8192)
    assert claims.stated_lengths(claims.load_claim("C13")) is None      # "MLPerf datasets"
    pairs, note = claims.matched_lengths(claims.load_claim("C01"), points)
    assert pairs == [(1024.0, 1024.0)] and "no evidence at the stated ISL 1,024 / OSL 2,048" in note


def test_untrusted_points_are_not_evidence(points):
    from analysis.schema import trusted

    ev = claims.evidence_for(claims.load_claim("C00"), points)
    bad = set(claims.row_id(r) for r in points[~trusted(points)].to_dict("records"))
    assert bad and not bad & set(ev["row"])


def test_a_pair_whose_sides_drafted_different_tokens_per_step_is_confounded(points):
    """InferenceX's B200 TensorRT-LLM MTP runs at ISL 8,192 / OSL 1,024: the FP4 side (4 GPUs, attention
    data-parallel) drafts 1 token per step, the FP8 side (8 GPUs, no attention DP) 3 (data/specs/mtp-recipes.csv:
    MTP=1 when DP_ATTENTION is true). Same method, framework, lengths and concurrency, but not one speculative
    decoding: the 1.41x is listed apart with the drafts named, and the clean pairs keep equal drafts."""
    from analysis.specdecode import tau_for

    card = card_of("C01", points)
    clean, confounded = card.pairs
    (pair,) = [p for p in confounded if p["confounders"] == ["drafted tokens per step (1 against 3)"]]
    assert (pair["a"]["hardware"], pair["a"]["framework"], pair["a"]["spec_decode"]) == ("B200", "trt", "mtp")
    assert (pair["a"]["isl"], pair["a"]["osl"], pair["a"]["concurrency"]) == (8192, 1024, pair["b"]["concurrency"])
    assert pair["ratio"] == pytest.approx(19.9746 / 14.1634, rel=1e-4)
    assert "1.41× at ISL 8,192 / OSL 1,024 differing in drafted tokens per step (1 against 3)" in \
        card.answers["precision"].answer
    assert not [p for p in clean if (p["a"]["framework"], p["a"]["spec_decode"], p["a"]["osl"]) == ("trt", "mtp", 1024)
                and p["a"]["isl"] == 8192]
    # the rule reads the points' drafts, not their labels: the same two rows with one draft count are clean
    from analysis.claims.pairs import _drafts_differ

    rows = points[points["source_file"].eq("data/raw/inferencex/benchmarks.json")].to_dict("records")
    a = next(r for r in rows if claims.row_id(r) == pair["a"]["source"])
    b = next(r for r in rows if claims.row_id(r) == pair["b"]["source"])
    assert (tau_for(a).draft_tokens, tau_for(b).draft_tokens) == (1.0, 3.0)
    assert _drafts_differ(a, b) == ["drafted tokens per step (1 against 3)"]
    assert _drafts_differ(a, {**b, "draft_tokens": 1.0}) == []


def test_r1_precision_answer_uses_only_pairs_equal_in_spec_decoding(points):
    # C22 (DeepSeek-R1 on GB300 NVL72) reads the InferenceX R1 pairs as same-model evidence (C00 read them as proxy
    # before its own model's published tables shipped)
    card = card_of("C22", points)
    text = card.answers["precision"].answer
    clean, confounded = card.pairs
    # Clean pairs hold lengths, speculative decoding, framework, disaggregation and concurrency equal (dates within
    # the window): 1k/1k without MTP, both sides at concurrency 4.
    plain_1k1k = [p for p in clean if p["a"]["isl"] == 1024 and p["a"]["osl"] == 1024 and p["a"]["spec_decode"] == "none"]
    assert len(plain_1k1k) == 1 and plain_1k1k[0]["a"]["concurrency"] == plain_1k1k[0]["b"]["concurrency"] == 4
    for p in clean:
        assert p["confounders"] == [] and p["a"]["spec_decode"] == p["b"]["spec_decode"]
        for key in ("isl", "osl", "framework", "disagg", "concurrency"):
            assert p["a"][key] == p["b"][key]
    # The old headline 2.86x (1k/8k: FP4 with MTP against FP8 without) is listed apart with its confounder.
    (bad,) = [p for p in confounded if p["a"]["osl"] == 8192 and p["confounders"] == ["speculative decoding"]]
    assert bad["ratio"] == pytest.approx(380.2889 / 132.7587, rel=1e-4)
    # Pairs whose fastest points ran at other concurrencies are confounded, never clean: 7 against 544 (3.35x) and
    # 1,024 against 4 (0.51x) fed the old 1.38x median.
    unmatched = {round(p["ratio"], 2): p["confounders"] for p in confounded if p["confounders"][0].startswith("conc")}
    assert unmatched[3.35] == ["concurrency (7 against 544)"] and unmatched[0.51] == ["concurrency (1,024 against 4)"]
    ratios = sorted(p["ratio"] for p in clean)
    median = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
    assert len(clean) == 3 and f"median {median:.2f}×" in text and "proxy" not in text
    assert "2.86× at ISL 1,024 / OSL 8,192 differing in speculative decoding" in text
    # The roofline's ratio is the same two configurations on one GPU (bytes per weight only), never the decode GPUs
    # of a disaggregated pair: 1.76-1.78x, which none of the three measured ratios (1.24-1.53x) reaches.
    assert all(1.7 < p["roofline_ratio"] < 1.8 and p["ratio"] < p["roofline_ratio"] for p in clean)
    assert not any(p["above_roofline"] for p in clean) and "no ceiling" not in text
    top = card.evidence_summary.iloc[0]
    assert top["lengths"] == "ISL 1,024 / OSL 8,192" and top["max_tok_s_per_gpu"] == pytest.approx(10379, abs=1)
    # Capacity is read under a named latency (perfclaims' default, the claim sets none); the p99 of a
    # fixed-concurrency sweep is named as its start-up burst.
    large = card.answers["large_batch"]
    assert "10,379 tok/s/GPU" in large.answer and "under TTFT p50 ≤ 2 s" in large.answer
    assert "p99 254.7 s (the start-up burst of a fixed-concurrency sweep)" in large.answer
    assert large.fact["limits"]["default"] is True and "TTFT p50 ≤ 2 s" in large.short


def test_c08_is_checked_at_its_stated_interactivity(points):
    card = card_of("C08", points)
    c = card.checks
    gb200 = c[c["part"].str.startswith("4,130")].iloc[0]
    b200 = c[c["part"].str.startswith("941")].iloc[0]
    ratio = c[c["kind"] == "ratio"].iloc[0]
    assert gb200["group"] == "GB200 NVL72 · FP4 · rack (12–36 GPUs)" and gb200["lengths"] == "ISL 1,024 / OSL 1,024"
    assert gb200["tok_s_per_user"] == 125
    assert gb200["measured_all"] == pytest.approx(97.5, abs=0.1)
    assert gb200["measured_decode"] == pytest.approx(114.5, abs=0.1)   # decode GPUs only
    assert b200["group"] == "B200 · FP4 · multi-node (44–52 GPUs)" and b200["measured_all"] == pytest.approx(71.7, abs=0.1)
    assert ratio["measured_all"] == pytest.approx(97.51 / 71.73, rel=1e-3)
    # Provenance is a JSON pointer into the snapshot's array (record 152 is index 151), not a line number.
    assert "interpolated between" in gb200["how"] and "benchmarks.json#/151" in gb200["how"]
    # The verdict is about the frontier at 125 tok/s/user, not the fastest point or batch-1 SOL.
    assert "at 125 tok/s/user gives 97.5 tok/s/GPU" in card.verdict and "down-sampled" in card.verdict
    assert "batch-1" not in card.verdict and "fastest similar" not in card.verdict


def test_c01_checks_both_numbers(points):
    card = card_of("C01", points)
    parts = claims.claim_parts(card.claim)
    assert [(p.kind, p.value) for p in parts] == [("per-user", 253), ("per-system", 30000)]
    cap = card.checks[card.checks["kind"] == "per-system"].iloc[0]
    assert cap["claimed"] == 3750 and cap["group"] == "B200 · FP4 · node (4 GPUs)"
    assert cap["measured_all"] == pytest.approx(2643, abs=1) and cap["tok_s_per_user"] == pytest.approx(44.5, abs=0.1)
    user = card.checks[card.checks["kind"] == "per-user"].iloc[0]
    assert user["measured_all"] == pytest.approx(170.3, abs=0.1)
    assert "max throughput tok/s/user" not in card.headline
    assert card.headline.startswith("[same-model evidence; other conditions only] C01: >250 (253) tok/s/user; "
                                    ">30,000 tok/s max throughput — a single-user")


def test_c22_ratios_come_from_the_data_at_equal_lengths(points):
    card = card_of("C22", points)
    c = card.checks
    user = c[c["part"].str.startswith("10×")].set_index("lengths")
    # Fastest GB300 FP4 vs fastest Hopper at the same lengths: 1k/1k 308 / 117 = 2.63x (H200), 1k/8k 380 / 128.
    assert user.loc["ISL 1,024 / OSL 1,024", "measured_all"] == pytest.approx(308.17 / 117.28, rel=1e-3)
    assert user["measured_all"].max() < 3.1
    # The per-MW and per-$ parts: see test_c22_efficiency_parts_cost_from_prices_and_per_mw_not_substituted (a
    # tok/s/GPU ratio is no longer shown in place of a per-MW one).


def test_titles_have_no_doubled_parentheses():
    assert claims.claim_title(claims.load_claim("C00")) == "nearly 1,000 tok/s/user (single-user throughput)"
    assert claims.claim_title(claims.load_claim("C13")) == "DeepSeek-R1 server 8,064 tok/s/GPU (MLPerf v6.0 Server)"
    for c in claims.registry():
        assert "((" not in claims.claim_title(c) and "))" not in claims.claim_title(c)


def test_c00_sol_uses_the_achievable_line_and_a_communication_floor(points):
    card = card_of("C00", points)
    sol = card.sol[card.sol["tokens_per_step"] == 1.0].set_index(["precision", "gpus"])
    one = sol.loc[("fp4", 1)]
    # one GB300 at the shipped FP4 recipe: 779 tok/s/user datasheet, the achievable line 0.8 of it; all-FP4 weights
    # had made it "possible only at near-peak bandwidth" (1,094)
    assert one["sol_tok_s_per_user_achievable"] == pytest.approx(0.8 * one["sol_tok_s_per_user"])
    assert one["sol_tok_s_per_user"] < 1000 and one["reading"] == "impossible (1.3× the bandwidth bound)"
    # 72 GPUs at τ 4.07: 1,567 = 4.07 x the 385 the collectives allow at τ 1; a near miss is said as one (1.04×,
    # not "1.0×"), and a bound set by the collectives says so
    from analysis.claims import sol as sol_mod

    spec72 = card.sol[(card.sol["tokens_per_step"] == 4.07) & (card.sol["gpus"] == 72)].set_index("precision")
    assert spec72.loc["fp4", "sol_tok_s_per_user_comm"] == pytest.approx(4.07 * 1000 / spec72.loc["fp4",
                                                                                                   "comm_floor_ms"])
    assert sol_mod._over(1000 / 963) == "1.04×" and sol_mod._over(1.3) == "1.3×"
    # 8 GPUs at τ 1: the overlapped bound at the table's latency (1,067) allows it, not with the collectives paid
    # after the reads (910), and the table's range of latencies (45-1,067) spans it: undecided, naming the latency
    node = sol.loc[("fp4", 8)]
    assert node["reading"] == ("undecided: the collective latency decides; with every collective hidden under a weight "
                               "read the claim needs ≤ 11.6 µs per collective, the table gives 10.9 µs (extrapolated: "
                               "not measured at this scope, within 2× of the need), and its range of latencies bounds "
                               "the speed anywhere from 45 tok/s/user (260.3 µs each, its slowest library) to 1,067 "
                               "(10.9 µs each, its fastest); only if every collective hides under a weight "
                               "read: paid after them, the bound is 910")
    assert 1000 / (1000 / node["sol_tok_s_per_user"] + node["comm_floor_ms"]) == pytest.approx(910, abs=0.5)
    rack_line = next(x for x in card.sol_statements if x.startswith("On 72 GPUs, one instance at FP4"))
    assert "the bound is 1,567 (enough)" in rack_line
    # a speculative bound still short because of the collectives says so (the rack's row at a τ of 2.5 instead)
    from analysis.claims import words as claim_words

    at_2_5 = card.sol.copy()
    rack_spec = (at_2_5["tokens_per_step"] > 1) & (at_2_5["gpus"] == 72)
    at_2_5.loc[rack_spec, "tokens_per_step"] = 2.5
    at_2_5.loc[rack_spec, "sol_tok_s_per_user_comm"] = 2.5 * 1000 / at_2_5.loc[rack_spec, "comm_floor_ms"]
    short = next(x for x in claim_words.sol_statements(card.claim, at_2_5) if x.startswith("On 72 GPUs, one instance "
                                                                                             "at FP4"))
    assert "at τ = 2.5 the bound is 963 (still short; the collectives bound it, at τ times their floor)" in short
    # bandwidth alone divides every byte over the rack, which no layout does (TP cannot split 64 heads 72 ways)
    assert "would allow 51,898 (every byte split evenly over the 72 GPUs, none replicated)" in rack_line
    rack = sol.loc[("fp4", 72)]
    # 43 layers x 2 collectives x the measured NVL72 EP latency (mean of dispatch and combine for one 4,096-wide BF16
    # token over 72 GPUs: TensorRT-LLM's NVLinkOneSided rows, extrapolated to batch 1), not the bandwidth-only 70,664.
    from analysis.perfmodel import collectives as mc

    d, c = (mc.latency(k, "nvl72-domain", group_size=72, message_bytes=4096 * 2.0, hardware="GB300")
            for k in ("ep-dispatch", "ep-combine"))
    per = (d.latency_us + c.latency_us) / 2
    assert 20 < per < 40 and rack["comm_basis"] == d.status == "extrapolated"
    assert rack["comm_floor_ms"] == pytest.approx(43 * 2 * per / 1000)
    assert "TensorRT-LLM" in rack["comm_sources"]
    assert rack["sol_tok_s_per_user"] == pytest.approx(51898, rel=0.01)  # the shipped recipe's bytes over 72 GPUs
    assert rack["sol_tok_s_per_user_comm"] == pytest.approx(1000 / (43 * 2 * per / 1000), rel=1e-6)
    from analysis.pages.claim_card import ClaimCardPage

    page = ClaimCardPage(card)
    shown = page.sol_table().set_index(["precision", "scope", "τ"])
    assert list(shown.columns[:4]) == ["bandwidth only", "comm floor µs", "with comm (overlapped)", "range"]
    # The range comes from the measured latency's low and high ends (the extrapolation carries every measured reading).
    low = 1000 / (43 * 2 * (d.high_us + c.high_us) / 2e3)
    high = 1000 / (43 * 2 * (d.low_us + c.low_us) / 2e3)
    fp4_rack = ("FP4 experts (attention FP8)", "72 GPUs, one instance", 1.0)  # the shipped recipe, named as one
    assert shown.loc[fp4_rack, "range"] == f"{low:,.0f}–{min(high, rack['sol_tok_s_per_user']):,.0f}"
    import html

    md = html.unescape(page.sol_md)
    # 8 GPUs shard V4-Flash by TP (the fused all-reduce, 10.9 µs, beats dispatch + combine); 72 cannot split its 64
    # heads, so EP
    # each latency says where it was measured: none of them on GB300, the rack's at GB200's largest group (64)
    assert ("Measured per-collective latencies used: 4 GPUs 10.9 µs (extrapolated, TP all-reduce, measured on GB200 "
            "at 8 GPUs), 8 GPUs 10.9 µs") in md
    assert f"72 GPUs {per:.1f} µs (extrapolated, EP dispatch + combine, measured on GB200 at 64 GPUs)" in md
    assert "is an assumption, not a measurement" not in md  # every scope of C00 has a measured latency


def test_evidence_efficiency_against_its_own_speed_of_light(points):
    from analysis.claims.evidence import own_sol
    from analysis.specdecode import ASSUMED_TAU

    card = card_of("C00", points)
    top = card.checks[card.checks["kind"] == "per-user"].iloc[0]
    # DeepSeek-V4.1-Flash FP4 on its 4 GB300 GPUs with DSpark: the bound as the point ran, at the point's own tau
    # (no acceptance recorded: the documented 2.5 assumption), never against a one-token-per-step bound.
    src = card.basis.near.set_index("row").loc[top["rows"][0]].to_dict()
    with_spec, plain = own_sol(src)[1], own_sol({**src, "spec_decode": "none", "spec_method": "none"})[1]
    assert top["own_sol_comm_tok_s_per_user"] == pytest.approx(with_spec) and with_spec > plain
    assert ASSUMED_TAU == 2.5 and src["spec_method"] == "dspark" and pd.isna(src["acceptance_length"])
    assert top["share_of_own_sol_comm"] == pytest.approx(456.621 / with_spec, rel=1e-4)
    assert "of its own model's batch-1 bound" in card.verdict


def test_part_errors_name_the_field(tmp_path):
    bad = tmp_path / "X2.yaml"
    bad.write_text("id: X2\nvalue: 5\nunit: tok/s/user\nkind: per-user\nmodel: m\nhardware: h\n"
                   "parts:\n- kind: per-user\n  value: 5\n  speed: 3\n")
    with pytest.raises(ValueError, match=r"parts\[0\]: unknown field\(s\) speed"):
        claims.claim_parts(claims.load_claim(bad))


def test_hostile_claim_ids_are_refused(tmp_path, capsys):
    from analysis.cli import main

    for bad in ("../x", "a/b", "..", "x y"):
        with pytest.raises(ValueError, match="claim id"):
            claims.load_claim(bad)
    assert main(["claim", "../x", "--out", str(tmp_path)]) == 2
    assert "claim id '../x'" in capsys.readouterr().err
    evil = tmp_path / "evil.yaml"
    evil.write_text("id: ../../etc/x\nvalue: 5\nunit: tok/s/user\nkind: per-user\nmodel: m\nhardware: h\n")
    assert main(["claim", str(evil), "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    row = {"id": "C/1", "value": "5", "unit": "tok/s/user", "model": "m", "hardware": "h"}
    with pytest.raises(ValueError, match="claim id 'C/1'"):
        claims.claim_from_row(row, where="x.csv:2")
    assert claims.load_claim("C00").id == "C00"   # ordinary ids still load


def test_registry_provenance_is_a_real_line_and_latency_is_read():
    import csv

    lines = TEST_DATA.joinpath("claims.csv").read_text(encoding="utf-8")
    rows = {}
    with open(TEST_DATA / "claims.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        for row in reader:
            rows[reader.line_num] = row["id"]
    assert lines
    for c in claims.registry():
        path, line = c.provenance.rsplit(":", 1)
        assert path == "shared/specs/claims.csv" and rows[int(line)] == c.id      # the line holds that claim's row
    c23 = claims.load_claim("C23")
    assert "TTFT 8.6 s" in c23.latency
    from analysis.claims.conditions import latency_limits

    assert latency_limits(c23)[0] == []                        # a reported TTFT, not a limit
    limits, where = latency_limits(claims.load_claim("C13"))   # the server number: MLPerf Server limits
    assert [(x.column, x.max_ms) for x in limits] == [("ttft_ms_p99", 2000.0), ("tpot_ms_p99", 80.0)]


def test_bottom_lines_name_the_limits_and_the_speculative_decoding_they_were_read_under(points):
    # C13's capacity is read only from points within the MLPerf Server limits, and its bottom line says so.
    c13 = card_of("C13", points)
    assert "only points within TTFT p99 ≤ 2 s; TPOT p99 ≤ 80 ms" in c13.bottom_line
    # C08 claims MTP; the GB200 evidence ran without it: no percentage of the claim, and the reason named.
    c08 = card_of("C08", points)
    assert "speculative decoding: none measured, MTP claimed" in c08.bottom_line
    assert "of the claim" not in c08.bottom_line.replace("not a percentage of the claim", "")


def test_shipped_cards_give_no_cross_length_or_cross_model_percentage(points):
    for cid in ("C03", "C12", "C13", "C23"):
        card = card_of(cid, points)
        c = card.checks
        assert c["measured_over_claimed"].isna().all(), cid      # proxy, other lengths, or no evidence
        assert "of the claim" not in card.headline.replace("no percentage of the claim", ""), cid
        assert card.answers["latency"].status != claims.NOT_STATED or cid == "C03"
        assert "× that speed" not in card.answers["batch"].answer, cid       # no speed ratio across models
    c23 = card_of("C23", points)
    assert c23.answers["latency"].status == claims.STATED and "8.6 s" in c23.answers["latency"].answer
    c13 = card_of("C13", points)
    # Capacity under the MLPerf Server limits, TTFT read at p50 for fixed-concurrency sweeps (their p99 is the
    # start-up burst, not Poisson queueing): before, 8 of 10 points dropped and capacity read 50 tok/s/GPU.
    large = c13.answers["large_batch"].answer
    assert "3 of 5 points meet" in large
    assert "TTFT read at p50 for the fixed-concurrency sweep points" in c13.checks["limits"].iloc[0]
    for ev in c13.checks["evidence"]:
        for e in ev:
            assert e["ttft_ms_p50"] <= 2000 and e["tpot_ms_p99"] <= 80
    assert c13.checks["measured_all"].max() > 1000


def test_interconnect_table_feeds_the_scope_answer(points):

    from analysis import roofline

    table = pd.read_csv(config.SPECS_DIR / "interconnect.csv")
    assert set(table["where"]) == {"node", "rack", "scale-out"}
    assert set(table["basis"]) <= {"measured", "assumption"} and table["source"].str.len().min() > 20
    assert {"all-reduce", "EP dispatch + combine"} <= set(table["collective"])
    assert roofline.COLLECTIVE_LATENCY_US == {"node": 5.0, "rack": 8.0, "scale-out": 20.0}
    # the interconnect table's assumptions answer only where the collectives table measured nothing: a part whose
    # interconnect it does not measure (Gaudi 3), not a B200 node (NCCL's all-reduce, the faster of TP and EP) nor
    # the NVL72 domain (TensorRT-LLM NVLinkOneSided rows)
    lo = roofline.communication_floor("DeepSeek-R1", "Gaudi 3", gpus=8, latency_us="low")
    hi = roofline.communication_floor("DeepSeek-R1", "Gaudi 3", gpus=8, latency_us="high")
    assert (lo.latency_us, hi.latency_us) == (3.0, 8.0) and hi.floor_ms == pytest.approx(61 * 2 * 8e-3)
    assert lo.basis == "assumption"
    assert roofline.communication_floor("DeepSeek-R1", "B200", gpus=8).basis == "extrapolated"
    assert roofline.communication_floor("DeepSeek-R1", "GB300 NVL72", gpus=72).basis == "extrapolated"
    scope = card_of("C00", points).answers["scope"]
    # C00: the roofline's batch-1 bounds (one GB300 at FP4 1,092 tok/s/user datasheet, 874 achievable; the 8- and
    # 72-GPU bounds with their ranges and basis) are context, labelled, never the answer: the answer is what the
    # claim's own model was measured on (4 GPUs).
    assert scope.short == "not stated; measured on 4 GPUs"
    assert "Roofline (batch-1 bounds, not measurements)" in scope.context
    # the 4-GPU bound reaches the claim only at the fused kernel's 10.9 us, not over the table's range: undecided
    assert ("4 GPUs would allow 1,000 tok/s/user at batch 1 only if each collective takes ≤ 11.6 µs; the table gives "
            "10.9 µs (extrapolated, not measured at this scope), too close to decide") in scope.context
    assert "that latency decides whether 4 GPUs reach the claim" in scope.context and "would not be needed" not in \
        scope.context
    assert scope.context.index("If every collective hid under a weight read (these bounds)") < \
        scope.context.index("that latency decides whether 4 GPUs reach the claim")
    sol = card_of("C00", points).sol.set_index(["precision", "gpus", "tokens_per_step"])
    rack = sol.loc[("fp4", 72, 1.0)]
    # the shipped FP4 recipe is named as one (FP4 experts, FP8 attention), never "FP4" throughout
    assert (f"72 GPUs, one instance at FP4 experts (attention FP8): {rack['sol_tok_s_per_user_comm']:,.0f} tok/s/user, "
            f"{rack['sol_tok_s_per_user_comm_low']:,.0f}–{rack['sol_tok_s_per_user_comm_high']:,.0f}") in scope.context
    assert "(extrapolated latency, data/specs/collectives.csv)" in scope.context and "assumed" not in scope.context
    assert "NVL72 not needed" not in scope.answer and "none spans a whole rack-scale NVLink domain" in scope.answer


def test_c22_efficiency_parts_cost_from_prices_and_per_mw_not_substituted(points):
    from analysis import cost, frontier

    checks = card_of("C22", points).checks
    per_mw = checks[checks["part"].str.contains("per MW")]
    # No measured power for GB300 or Hopper, and 'AI-factory' MW counts facility power: said, and no per-GPU proxy.
    assert len(per_mw) == 1 and per_mw["measured_all"].isna().all()
    assert "no benchmark log measures" in per_mw.iloc[0]["how"] and "not substituted" in per_mw.iloc[0]["how"]
    usd = checks[checks["part"].str.contains("cost per million")]
    row = usd[usd["lengths"] == "ISL 1,024 / OSL 1,024"].iloc[0]
    # Recomputed independently: each side's $/M output tokens at 50 tok/s/user from its own frontier and price.
    api = points[points["format"] == "inferencex-api"]
    prices = cost.load_prices()
    gb300 = frontier.efficiency_at(api, hardware="GB300 NVL72", precision="fp4", isl=1024, osl=1024, level=50,
                                   metric="usd_per_mtok", prices=prices, scope="rack")
    h200 = frontier.efficiency_at(api, hardware="H200 SXM", precision="fp8", isl=1024, osl=1024, level=50,
                                  metric="usd_per_mtok", prices=prices, scope="multi-node")
    assert row["group"] == "GB300 NVL72 · FP4 · rack vs H200 SXM · FP8 · multi-node"
    assert row["measured_all"] == pytest.approx(h200.value / gb300.value, rel=1e-6)
    assert math.isnan(row["measured_over_claimed"]) and row["match"] == "same-model"   # 32K/8K claimed
    assert "$1.41/GPU-hour" in row["how"] and "$2.65/GPU-hour" in row["how"]


# --- which other model may stand in for the claim's ---------------------------------------------------------------
def test_model_sizes_come_from_the_table_else_from_the_name():
    from analysis.claims.evidence import model_size

    assert model_size("Llama 4 Maverick (400B total, 17B active)") == (400.0, 17.0)  # not in the model table
    assert model_size("llama-3.1-70b-tp8-shard") == (70.55, 70.55)  # the table's Llama 3.1 70B
    assert model_size("DeepSeek V4.1 Flash") == (284.0, 13.0)
    assert model_size("Some Model 70B") == (70.0, None)  # one size: the total, active unknown
    assert model_size("Some Model") == (None, None)


@pytest.mark.parametrize("claim_model, point_model, stands_in", [
    ("Llama 4 Maverick (400B total, 17B active)", "llama-3.1-8b", False),  # dense against mixture of experts
    ("Llama 4 Maverick (400B total, 17B active)", "llama-3.1-70b-tp8-shard", False),
    ("Llama 2 70B", "llama-3.1-8b", False),  # 8.6x fewer active parameters
    ("Llama 2 70B", "llama-3.1-70b-tp8-shard", True),
    ("DeepSeek-V4-Flash", "DeepSeek-R1-0528", True),  # both MoE, 13B against 37B active
    ("Some Model", "Other Model 7B", True),  # nothing known about the claim's model: the family decides
])
def test_a_proxy_is_of_comparable_size_and_build(claim_model, point_model, stands_in):
    from analysis.claims.evidence import comparable_size

    assert comparable_size(claim_model, point_model) is stands_in


def test_no_answer_rests_on_another_family_or_size(points):
    """C03 (Llama 4 Maverick on DGX B200): the shipped data has Llama 3.1 8B/70B (dense, another size) on H200 and
    DeepSeek-R1 on B200. Neither may answer for Maverick: the R1 points are context only, every answer says so."""
    card = card_of("C03", points)
    assert set(card.evidence["tier"]) == {"other model"}
    assert all(m.startswith("DeepSeek-") for m in card.evidence["model"])
    assert card.evidence_tier == "none"
    batch, large = card.answers["batch"], card.answers["large_batch"]
    assert batch.status == claims.NOT_STATED and not batch.evidence and "DeepSeek-R1-0528" in batch.answer
    assert "DeepSeek-R1-0528" not in card.answers["scope"].answer
    assert large.short == "not stated" and not large.evidence
    assert not any(a.evidence for a in card.answers.values())
    assert card.pairs == ([], [])
    # Llama 2 70B claims read the shipped Llama 2 70B run (LLMPerf leaderboard) as their own model, never the 8B
    assert set(card_of("C14", points).evidence["model"]) == {"llama2-70b-4096"}
    # DeepSeek-V4.1-Flash (C00) is answered from its own family's published tables; DeepSeek-R1 on its hardware is
    # context only, and no answer field names an R1 number
    c00 = card_of("C00", points)
    assert set(c00.evidence["tier"]) == {"same-model"}
    for a in c00.answers.values():
        assert "DeepSeek-R1" not in a.answer and all("R1" not in e["model"] for e in a.evidence)


def test_other_models_are_drawn_grey_and_never_as_a_frontier(points):
    from analysis.plots.claims import claim_on_frontier

    ax = claim_on_frontier(card_of("C03", points))
    labels = [line.get_label() for line in ax.get_lines()]
    assert not any("DeepSeek" in label for label in labels), labels  # no frontier of another model
    assert "other measured points (context)" in [c.get_label() for c in ax.collections]


def test_every_number_of_a_compound_claim_is_a_part_of_its_card(points):
    """C23 publishes a per-GPU peak, a ratio to GB200 and an MTP speed-up in one sentence: each is a part, checked
    on its own or said to be uncheckable, never folded into one comparison under the whole sentence."""
    card = card_of("C23", points)
    assert [p.text for p in claims.claim_parts(card.claim)] == [
        "226.2 tok/s/GPU peak (GB300 NVL72, 128K / 8K)", "1.53× GB200 NVL72 (tok/s/GPU peak)",
        "MTP raises per-user speed 1.87× (at nearly the same tok/s/GPU)"]
    assert set(card.checks["part"]) == {p.text for p in claims.claim_parts(card.claim)}
    ratio = card.checks[card.checks["part"] == "1.53× GB200 NVL72 (tok/s/GPU peak)"]
    assert ratio["measured_over_claimed"].isna().all()  # other lengths: no percentage of the claim
    mtp = "“MTP raises per-user speed 1.87× (at nearly the same tok/s/GPU)”"
    assert f"{mtp}: not checkable from the points table" in card.verdict


def test_a_claim_checked_against_its_primary_source_says_what_differs(points):
    """C12 was recorded from a summary; the MLPerf v5.1 tables show its ~420k is an Offline result: the card shows
    the check under the source, applies no latency limit (Offline has none) and saves the check with its numbers."""
    from analysis.claims.conditions import latency_limits
    from analysis.pages.claim_card import ClaimCardPage

    c12 = claims.load_claim("C12")
    assert latency_limits(c12) == ([], "MLPerf Offline sets no latency limit")
    page = ClaimCardPage(card_of("C12", points))
    assert "**Checked against the primary source:**" in page.header_md and "420,659" in page.header_md
    assert "101,527" in page.results()["source_check"]
    assert all(claims.load_claim(cid).source_check for cid in ("C07", "C11", "C12", "C13", "C14", "C18", "C22"))


def test_the_answers_read_the_claims_own_lengths_and_precision_and_name_what_differs(points):
    """C08 is read at 1k/1k in its comparison; its latency and capacity answers now rest on the same lengths (they
    read a 1k/8k point before, with a 53 s TTFT p99). C09 claims FP4 at 8k/1k. C23's 128K/8K is not measured: the
    capacity answer says which lengths it used instead."""
    c08 = card_of("C08", points)
    assert "ISL 1,024 / OSL 1,024" in c08.answers["latency"].answer
    assert "ISL 1,024 / OSL 1,024" in c08.answers["large_batch"].answer
    c09 = card_of("C09", points)
    # the cookbook's V4-Pro runs draw random lengths up to 8,192 / 1,024: caps, said as caps
    assert "FP4, ISL ≤ 8,192 / OSL ≤ 1,024 (random-capped)" in c09.answers["large_batch"].answer
    c23 = card_of("C23", points)
    assert "lengths ISL 1,024 / OSL 8,192, not the claim's 128K / 8K" in c23.answers["large_batch"].answer


def test_a_throughput_claims_scope_is_not_answered_with_single_user_bounds(points):
    """C08 (tok/s/GPU at 125 tok/s/user, NVL72 against B200 multi-node) is about capacity: batch-1 bounds say
    nothing about whether it needs the NVL72 domain, so neither its scope answer nor its bottom line uses them."""
    c08 = card_of("C08", points)
    assert "Batch-1 bounds" not in c08.answers["scope"].answer and "NVL72 not needed" not in c08.bottom_line
    assert "that latency decides" in card_of("C00", points).answers["scope"].context  # context


def test_speed_of_light_lines_name_the_model_they_bound(points):
    """C00's bounds are DeepSeek-V4-Flash's (13B active); its evidence is DeepSeek-R1 (37B active): each line says
    whose bound it is, so it is not read as R1's."""
    from analysis.plots.claims import claim_on_frontier

    ax = claim_on_frontier(card_of("C00", points))
    sol_lines = [line.get_label() for line in ax.get_lines() if "bound of" in line.get_label()]
    assert sol_lines and all(label.startswith("batch-1 bound of DeepSeek-V4-Flash,") for label in sol_lines)


def test_the_index_line_measures_with_the_claims_denominator_and_names_speed_and_wait(points):
    """C04 counts decode GPUs only ("7,583 output tok/s per GPU (decode)"): its index line leads with the measured
    point per decode GPU, gives the all-GPU figure beside it, and says at what tok/s/user and TTFT p99 it was read."""
    c04 = card_of("C04", points)
    r = c04.checks[c04.checks["measured_all"].notna()].iloc[0]
    assert (f"measured {r['measured_decode']:,.0f} tok/s per decode GPU, the claim's denominator "
            f"({r['measured_all']:,.0f} over all GPUs) at {r['tok_s_per_user']:,.1f} tok/s/user, "
            f"TTFT p99 {r['ttft_ms_p99'] / 1000:,.1f} s") in c04.headline
    c09 = card_of("C09", points)  # its claim names no denominator: all GPUs first, decode GPUs beside
    assert "tok/s/GPU over all GPUs (" in c09.headline and "per decode GPU)" in c09.headline


def test_a_reading_without_a_percentage_says_which_condition_differs(points):
    """C08 is read at its stated 1k/1k lengths; it gets no percentage because its evidence ran without MTP. The
    verdict said 'not at the claim's stated lengths' beside '[at the stated ISL 1,024 / OSL 1,024]'."""
    verdict = card_of("C08", points).verdict
    assert "not at the claim's stated lengths" not in verdict
    assert "(not at the claim's speculative decoding: no percentage of the claim)" in verdict


def test_a_points_own_bound_is_set_up_as_the_point_ran():
    """An MTP point is held against the bound at tau = 2.5 tokens per step, not one; a disaggregated point against
    its decode GPUs (they set its per-user speed), not its whole deployment."""
    from analysis.claims.evidence import own_sol

    base = {"model": "DeepSeek-R1-0528", "hardware": "GB300 NVL72", "precision": "fp4", "isl": 1024, "osl": 1024,
            "n_gpus": 8, "spec_decode": "none"}
    plain, mtp = own_sol(base)[1], own_sol({**base, "spec_decode": "mtp"})[1]
    # 8 GPUs at batch 1: one token per step waits on the collectives' floor (61 layers x 2 x the measured NVLink-domain
    # EP latency, ~25 µs: ~330 tok/s/user); with MTP each step emits 2.5: more per user, at most 2.5x
    from analysis import roofline

    floor = roofline.communication_floor("DeepSeek-R1-0528", "GB300 NVL72", gpus=8)
    assert floor.basis != "assumption" and floor.collectives_per_step == 122
    assert plain == pytest.approx(1000 / floor.floor_ms, rel=1e-6) and plain < mtp <= 2.5 * plain
    whole = own_sol({**base, "n_gpus": 72})[1]
    assert own_sol({**base, "n_gpus": 72, "disagg": True, "n_decode_gpus": 8})[1] == pytest.approx(plain)
    assert whole < plain  # 72 GPUs pay the rack's collective latency
    # five TP8 decode workers on 40 decode GPUs: each worker's collectives span its 8 GPUs, not 40
    workers = {**base, "n_gpus": 48, "disagg": True, "n_decode_gpus": 40, "n_workers": 5}
    assert own_sol(workers)[1] == pytest.approx(plain)
    assert own_sol({**workers, "n_workers": float("nan")})[1] < plain


def test_c00_precision_context_carries_the_calibrated_models_fp4_over_fp8_at_the_shipped_recipe(points):
    """The roofline's 1.78× (all-FP4 against all-FP8 bytes) is not the model's answer: DeepSeek-V4.1-Flash ships
    FP4 experts with FP8 attention, and at concurrency 1 its step is dominated by a fixed per-layer cost."""
    from analysis.perfmodel import scope

    ans = card_of("C00", points).answers["precision"]
    m = ans.fact["model"]
    direct = scope.fp4_vs_fp8("DeepSeek-V4.1-Flash", "GB300 NVL72", n_gpus=m["n_gpus"], framework=m["framework"])
    assert m["fp4_over_fp8"] == pytest.approx(direct["fp4_over_fp8"])
    assert m["native_recipe"].startswith("fp8 (shared_experts fp4, routed_experts fp4")
    assert 1.0 < m["fp4_over_fp8"] < ans.fact["roofline"]["ratio"]  # far below the bytes ratio
    assert f"FP4 ÷ FP8 {m['fp4_over_fp8']:.2f}×" in ans.context and "not a measurement" in ans.context
    assert m["n_gpus"] == 4  # the nearest evidence point's GPU count (a 4-GPU tray)


def test_a_card_whose_evidence_gives_no_tok_s_per_gpu_still_draws(points):
    """C11 (MLPerf Llama 2 70B latency limits): no shipped point of it gives a positive tok/s/GPU, so nothing sets the
    log y axis; drawn whole (as a separate kernel saving the figure does), it must not fail."""
    import io

    from analysis.plots.claims import claim_on_frontier

    card = card_of("C11", points)
    ev = card.evidence
    assert not (len(ev) and (ev["tok_s_per_gpu"] > 0).any())
    ax = claim_on_frontier(card)
    ax.figure.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # raised "cannot be log-scaled" before
    assert ax.get_ylim() == (1.0, 1e5)


def test_a_point_run_weeks_from_the_claim_is_said_to_run_other_software(points):
    """C00 (2026-10-30) is read on InferenceX #3176's baseline of 2026-09-15: 45 days apart, where re-runs of one
    configuration move a median 7.9% and more; the date is said, like the engine, and withholds no percentage."""
    from analysis.claims import checks as ck

    c = card_of("C00", points)
    top = c.checks.iloc[0]
    assert "software date: run 45 days before the claim's 2026-10-30" in top["differs"]
    assert top["match"] == "same-model" and top["measured_over_claimed"] == pytest.approx(456.621 / 1000, rel=1e-4)
    assert "software date" in ck.INFORMATIVE and ck.SOFTWARE_DAYS == 7
    assert "(differs: NVLink domain, framework, software date)" in c.bottom_line
    # the SOL weighs the 4-GPU tray every V4.1-Flash point ran on, and says the rack as one instance lowers the bound
    assert "Without speculative decoding, 4-GPU tray at FP8 is undecided: the collective latency decides" in c.verdict
    assert c.answers["scope"].context.endswith("every layer waits for its collectives, and 72 GPUs, one instance "
                                               "lower it to 385.")
    # the capacity read on a mean-only source names the statistic in its fact too, and the point is the sweep's end
    cap = c.answers["large_batch"].fact
    assert cap["limits"]["limits"] == "TTFT mean ≤ 2 s" and cap["limits"]["read_on"] == "mean" and cap["sweep_end"]
    # the deciding latency says it was measured on another part and extrapolated
    assert "against 10.9 µs measured (extrapolated: MNNVL fused all-reduce + RMSNorm" in c.verdict
    # the fastest same-architecture point names its statistic (a median) as the speed point does (a mean)
    assert "the fastest is 763.4 tok/s/user (1000 / median TPOT;" in c.bottom_line
    assert "456.6 tok/s/user (1000 / mean TPOT;" in c.bottom_line
    # ... and says the two are not the same statistic, so their shares of the claim (46%, 76%) are not on one scale
    assert "read as median TPOT, where the point above is mean TPOT: the two speeds are not on one statistic" in \
        c.bottom_line
    # ... and that the faster point ran the claim's framework (SGLang) where the headline's point ran vLLM
    assert c.bottom_line.endswith("; it ran the claim's framework, the point above another).")


def test_claim_json_carries_the_speed_of_light_table_and_the_verdict(points):
    """`perfclaims claim --json` gives what the page shows: the SOL rows with their readings and assumptions (the
    shipped recipe per precision label) and the verdict paragraph."""
    c = card_of("C00", points)
    js = c.to_json()
    sol = js["speed_of_light"]
    assert len(sol["rows"]) == len(c.sol) == 16 and js["verdict"] == c.verdict
    row = next(r for r in sol["rows"] if r["precision"] == "fp4" and r["gpus"] == 4 and r["tokens_per_step"] == 1.0)
    assert row["sol_tok_s_per_user_comm"] == pytest.approx(c.sol.set_index(["precision", "gpus", "tokens_per_step"])
                                                           .loc[("fp4", 4, 1.0), "sol_tok_s_per_user_comm"])
    assert "paid after them, the bound is 794" in row["reading"]
    assert sol["assumptions"]["recipes"]["fp4"].startswith("fp8,routed_experts=fp4")
    assert sol["statements"] == list(c.sol_statements)


def test_capacity_sweep_end_is_judged_within_its_configuration_and_source(points):
    """"The highest concurrency its source measured" is said of a capacity point only when no point of the same
    configuration in the same source file ran higher (a JSON-pointer row id names its file before the '#')."""
    from analysis.claims import answers as an

    for cid in ("C00", "C07"):
        card = card_of(cid, points)
        f = card.answers["large_batch"].fact
        p = f["point"]
        ev = card.basis.stand_ins
        same = ev[(ev["row"].map(an._source_of) == an._source_of(p["row"])) & (ev["model"] == p["model"])
                  & (ev["hardware"] == p["hardware"]) & (ev["precision"] == p["precision"])
                  & (ev["n_gpus"] == p["n_gpus"])]
        same = same[(same["isl"] == p["isl"]) if p["isl"] is not None else same["isl"].isna()]
        assert f["sweep_end"] == bool(p["concurrency"] >= same["concurrency"].max()), cid
    assert card_of("C00", points).answers["large_batch"].fact["sweep_end"]
    assert an._source_of("data/raw/x.json#/benchmarks/3") == an._source_of("data/raw/x.json:7") == "data/raw/x.json"


def test_a_claim_dated_to_the_year_or_month_gets_no_day_count(points):
    """C02 is dated "2025", C01 "2025-03 (GTC 2025)": no day to count software days from, so no 'software date'."""
    for cid in ("C01", "C02"):
        assert not any("software date" in d for d in card_of(cid, points).checks.iloc[0]["differs"]), cid


def test_stated_speculative_decoding_bounds_the_tau_range():
    """A claim that states no speculative decoding runs at τ 1; one that names MTP reads MTP curves only, not the
    model's DSpark curve."""
    from dataclasses import replace

    from analysis.claims.answers import plausible_taus

    c00 = claims.load_claim("C00")
    none = plausible_taus(replace(c00, spec_decode="none"))
    assert (none["low"], none["high"], none["high_verify"]) == (1.0, 1.0, 1.0)
    mtp = plausible_taus(replace(c00, spec_decode="MTP"))
    assert mtp["curves"] == ["dsv4_mtp.yaml"] and mtp["high"] < 4.07
    assert plausible_taus(c00)["curves"] == ["dsv41flash_dspark.yaml"]


def test_a_tau_range_read_off_another_models_curves_says_whose(points):
    """No golden curve is shipped for DeepSeek-R1: C01's τ range comes from DeepSeek-V4's curves, and says so, where
    C00's comes from its own model's."""
    c01 = card_of("C01", points).answers["spec_decode"]
    taus = c01.fact["tau_range"]
    assert taus["own_model"] is False and "deepseek-v4.1-flash" in taus["models"]
    assert "golden curves for other models of its family (deepseek-v4-pro" in c01.answer
    assert "none is shipped for DeepSeek-R1" in c01.answer
    c00 = card_of("C00", points).answers["spec_decode"]
    assert c00.fact["tau_range"]["own_model"] is True and "golden curves for this model (dsv41flash" in c00.answer
