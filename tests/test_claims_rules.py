"""Evidence rules a performance engineer would reject if they were missing, each shown on the shipped data."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from analysis import claims, config, data  # noqa: E402
from analysis.pages.claim_card import ClaimCardPage  # noqa: E402


@pytest.fixture(scope="module")
def points():
    return data.load_points()


@pytest.fixture(scope="module")
def cards(points):
    return {cid: claims.claim_card(cid, points) for cid in ("C02", "C07", "C08", "C23", "C00")}


def test_lengths_far_from_the_claim_give_no_number_in_the_bottom_line(cards):
    # C23 is a 128K/8K claim; the nearest evidence is 1K-input: 10,379 against 226 was a crossed-lengths comparison
    c23 = cards["C23"]
    assert c23.checks.iloc[0]["lengths_far"]
    assert "10,379" not in c23.bottom_line and "more than 4× from the claim's 128K / 8K" in c23.bottom_line


def test_what_differs_names_scope_gpu_count_and_disaggregation(cards):
    # C02: an 8-GPU B200 node claim; a 44-GPU multi-node disaggregated point differed in more than lengths
    c = cards["C02"].checks
    multi = c[c["group"] == "B200 · FP4 · multi-node (44 GPUs)"].iloc[0]
    assert {"GPU count: 44 measured, 8 claimed", "scope: multi-node measured, node claimed"} <= set(multi["differs"])
    assert any(d.startswith("disaggregation") for d in multi["differs"])
    # the headline reading is the one with the fewest differing conditions: the 8-GPU node
    assert c.iloc[0]["group"] == "B200 · FP4 · node (8 GPUs)"
    # the claim's MTP is read from its text although its acceptance is "not stated"
    assert "speculative decoding: none measured, mtp claimed" in c.iloc[0]["differs"]


def test_a_per_node_denominator_is_not_a_deployment_size(cards):
    # C07 counts per 8-GPU node of an 18-node decode unit: no "GPU count" or "one 8-GPU deployment" difference
    differs = [d for ds in cards["C07"].checks["differs"] for d in ds]
    assert not any(d.startswith(("GPU count", "disaggregation")) for d in differs)


def test_a_claim_far_outside_its_evidence_is_questioned(cards):
    c08 = cards["C08"]
    assert c08.checks.iloc[0]["gap"] == pytest.approx(4130 / 97.51, rel=1e-3)
    assert ("42× above this evidence (this evidence differs in speculative decoding, a value interpolated between two "
            "measured points): a different axis, denominator or data?") in c08.bottom_line


def test_rough_readings_keep_their_label_where_they_are_reused(cards):
    c = cards["C23"].checks
    ratios = c[c["kind"] == "ratio"].dropna(subset=["measured_all"])
    rough = ratios[ratios["rough"]]
    assert len(rough) and all(h.count("~") >= 2 and "wide frontier gap" in h for h in rough["how"])
    # close readings headline before rough ones
    assert not ratios.iloc[0]["rough"]
    statement = [s for s in cards["C23"].results()["check_statements"] if s.startswith("“1.53×")][0]
    assert "~" not in statement.split("[")[0]


def test_the_claim_figure_draws_every_scope_without_hiding_a_bound(cards):
    import matplotlib.pyplot as plt

    from analysis.plots.claims import claim_on_frontier

    ax = claim_on_frontier(cards["C00"])
    labels = [t for t in ax.get_legend_handles_labels()[1] if t.startswith("batch-1 bound of DeepSeek-V4-Flash, ")]
    xs = {line.get_label(): line.get_xdata()[0] for line in ax.get_lines() if line.get_label() in labels}
    xlabel = ax.get_xlabel()
    plt.close(ax.figure)
    # the lines are at τ = 1; evidence run with speculative decoding passes them without passing its bound: the
    # caption gives the same bounds at the SOL table's largest τ (4.07, the golden curve's), read as the lines are
    # drawn (collectives paid after each layer's read), and says the table's overlapped column is higher
    top = cards["C00"].sol[(cards["C00"].sol["tokens_per_step"] == 4.07) & cards["C00"].sol["fits"]]
    lo, hi = top["sol_tok_s_per_user_paid"].min(), top["sol_tok_s_per_user_paid"].max()
    assert (f"at τ = 4.07 the same bounds read {lo:,.0f}–{hi:,.0f} tok/s/user (collectives paid after each layer's "
            "read, as drawn here; the SOL table's overlapped column is higher)" in " ".join(xlabel.split())
            and round(lo) == 753 and round(hi) == 2981)
    assert top["sol_tok_s_per_user_comm"].max() > hi  # the overlapped bound the table shows
    assert any("72 GPUs, one instance" in t for t in labels)         # the claim's own NVLink domain, one instance
    sol = cards["C00"].sol
    base = sol[(sol["tokens_per_step"] == 1.0) & sol["fits"]]
    # every bound drawn is in one label (bounds within 3% share a label, whatever their scope), so none hides
    # under another: the tray's and the node's overlapped bounds had been two lines on one x
    prefix = "batch-1 bound of DeepSeek-V4-Flash, "
    drawn = sum(part.count(" and ") + 1 for t in labels for part in t[len(prefix):t.rfind(": ")].split("; "))
    assert drawn == len(base)
    # the lines are the step-time model's bound: collectives paid after the weight reads (4-GPU FP4 794, 8-GPU 910),
    # so at τ 1 none sits right of the claim's 1,000, as the verdict says
    fp4 = base[base["precision"] == "fp4"].set_index("gpus")["sol_tok_s_per_user_paid"]
    assert round(fp4[4]) == 794 and round(fp4[8]) == 910 and max(xs.values()) < 1000


def test_c02_uses_the_acceptance_its_primary_source_states(points):
    from pathlib import Path

    card = claims.claim_card("C02", points)
    js = card.to_json()
    spec = js["answers"]["spec_decode"]
    assert spec["status"] == "stated" and spec["fact"]["tau"] == pytest.approx(3.10)
    assert spec["fact"]["steps_per_s"] == pytest.approx(368 / 3.10)
    # the speed of light is set up at that acceptance (3 drafted + 1 verified), not at the assumed 2.5
    assert set(card.sol["tokens_per_step"]) == {1.0, 3.1}
    assert "acceptance length stated by the source" in card.sol_info["tau_text"]
    # the transcription matches the source text it was read from
    source = (Path(__file__).parent / "data" / "claims" / "C02_trtllm_blog1.source.md").read_text()
    assert "| MTP3_top10, d0.6   |      3.10      |" in source and "|       2.82      |   253    |" in source
    assert "| Relax Acceptance | **368** |" in source


def test_c00_has_a_sixth_answer_on_speculative_decoding(points):
    js = claims.claim_card("C00", points).to_json()
    spec = js["answers"]["spec_decode"]
    assert spec["status"] in ("inferred", "not stated") and spec["fact"]["rule"] == "not-stated"
    low, high = spec["fact"]["steps_per_s_range"]
    taus = spec["fact"]["tau_range"]
    assert low == pytest.approx(1000 / taus["high"]) and high == pytest.approx(1000 / taus["low"])
    assert taus["basis"] == "golden" and taus["curves"]          # the range comes from the shipped golden curves
    assert spec["evidence"] or spec["status"] == "not stated"
    # the speed point records no acceptance: the card says what its bounds charge, not a τ the run is known to have had
    assert spec["fact"]["evidence"]["tau"]["source"] == "assumed"
    assert "records no acceptance; the bounds charge it τ = 2.5 tokens per step" in spec["text"]
    assert "ran at τ = 2.5" not in spec["text"]


def test_c00_scope_answer_cites_measured_collectives_with_an_interval_per_scope(points):
    js = claims.claim_card("C00", points).to_json()
    scope = js["answers"]["scope"]
    scopes = {s["gpus"]: s for s in scope["fact"]["model_scopes"]}
    assert set(scopes) == {1, 4, 8, 72}
    for g in (4, 8, 72):
        lo, hi = scopes[g]["needs_us_per_collective"]
        assert lo < hi and scopes[g]["collectives_per_step"] == 86       # 43 MoE layers x (dispatch + combine)
        assert any("TensorRT-LLM" in src for src in scopes[g]["sources"])
        assert scopes[g]["measured_us_per_collective"] > 0
    # at one token per step the budget per collective is a few µs (1 ms / 86, less HBM time); measured is ~25 µs
    assert scopes[72]["needs_us_per_collective"][0] < 10 < scopes[72]["measured_us_per_collective"]
    assert "the acceptance length decides it" in scope["text"]
    assert scopes[8]["layout"] == "TP all-reduce" and scopes[72]["layout"] == "EP dispatch + combine"
    assert "its 86 collectives per step (TP all-reduce) may take ≤ 9.7 µs to 42.4 µs each, measured 10.9 µs" \
        in scope["text"] and "sharded by EP dispatch + combine instead: ≤ 3.6 µs to 36.2 µs each" in scope["text"]
    # the τ range is the claim's own model's golden curve (V4.1-Flash DSpark, InferenceX #2964): 4.07 at 5 drafted
    # with thinking off, whose verify step reads 6 tokens' experts (the V4-Pro curves' 3.77 at 6 drafted was used
    # before the V4.1-Flash curve shipped): one GB300 reads 3.41 ms of HBM then, within the 4.07 ms budget
    taus = js["answers"]["spec_decode"]["fact"]["tau_range"]
    assert taus["curves"] == ["dsv41flash_dspark.yaml"] and taus["high"] == 4.07 and taus["high_verify"] == 6.0
    assert scopes[1]["verify_tokens"] == [1.0, 6.0] and "τ from 1.00 to 4.07, 6 tokens verified per step" in scope["text"]
    assert scopes[1]["hbm_ms"][1] == pytest.approx(3.41, abs=0.01) and scopes[1]["reaches"] == [False, True]
    assert [scopes[g]["reaches"] for g in (4, 8, 72)] == [[False, True]] * 3
    assert scope["fact"]["verdict"] is not None and "extrapolated" in scopes[8]["status"]
    assert "TP cannot split its 64 attention heads 72 ways" in scope["text"]
    # no R1 and no roofline number in the answer; the roofline stays in the labelled context
    assert "DeepSeek-R1" not in scope["text"] and "Batch-1 bounds" not in scope["text"]
    assert scope["context"].startswith("Roofline (batch-1 bounds, not measurements)")
    for key in ("batch", "large_batch", "scope", "latency"):
        ev = js["answers"][key]["evidence"]
        assert ev and all(e["model"].startswith("DeepSeek-V4") and e["source_url"].startswith("https://github.com/")
                          for e in ev), key


def test_index_line_gives_no_number_where_the_bottom_line_compares_none(points):
    # C22 and C23: lengths more than 4× from the claim's; the index line said "measured 3.0×" / "10,379 tok/s/GPU"
    for cid in ("C22", "C23"):
        card = claims.claim_card(cid, points)
        assert "no number is compared" in card.bottom_line
        assert "no number compared" in card.headline and "measured" not in card.headline
        # and the verdict compares no part at those lengths either (C22's cost ratio gave "the data give 11.3×")
        assert "the data give" not in card.verdict and "10,379" not in card.verdict


def test_a_gap_made_by_the_default_latency_limit_is_compared_unconstrained_too(points):
    # C06: 91 tok/s/GPU under perfclaims' own TTFT p50 ≤ 2 s against 688 unconstrained; the gap sentence said
    # "31× above this evidence: a different axis, denominator or data?" without naming the tool's own limit
    card = claims.claim_card("C06", points)
    assert "read under perfclaims' default TTFT p50 ≤ 2 s, which the claim does not set" in card.bottom_line
    assert "unconstrained: 688 tok/s/GPU over all GPUs" in card.bottom_line
    assert "from the unconstrained figure" in card.headline


def test_a_p99_limit_read_on_p50_is_said_where_the_number_is(points):
    # C13: MLPerf Server's TTFT p99 ≤ 2 s, met by a sweep point only on its p50 (its p99 is 254.7 s)
    card = claims.claim_card("C13", points)
    assert "its own TTFT p99 is 254.7 s, above the limit: the limit was read on its TTFT p50" in card.bottom_line
    assert "TTFT p99 254.7 s; the p99 limit read on TTFT p50" in card.headline


def test_a_per_decode_node_claim_is_read_per_decode_gpu(points):
    # C07 counts output tok/s per decode node: the like-for-like figure is per decode GPU (274.5), not all (92.5)
    card = claims.claim_card("C07", points)
    assert "274.5 tok/s/GPU (decode GPUs only)" in card.bottom_line
    assert "the claim is 7× above" in card.bottom_line and "20×" not in card.bottom_line
    assert "tok/s per decode GPU, the claim's denominator" in card.headline


def test_what_differs_names_the_serving_engine_and_the_headline_the_spec_decoding(points):
    # C00 names SGLang; its best same-model point ran vLLM with DSpark: the index line said neither
    card = claims.claim_card("C00", points)
    top = card.checks.iloc[0]
    assert "framework: vllm measured, SGLang claimed" in top["differs"]
    assert top["measured_over_claimed"] == pytest.approx(456.621 / 1000, rel=1e-3)  # informs, still a percentage
    assert "spec decode dspark (acceptance not recorded)" in card.headline
    # an engine named by several words, and none
    from analysis.claims.checks import engine_of

    assert engine_of("Dynamo + TensorRT-LLM") == "trt" and engine_of("dynamo-sglang") == "sglang"
    assert engine_of("per InferenceX config") is None and engine_of("SGLang vs vLLM") is None


def test_no_gpu_roofline_for_sram_machines_and_no_hardware_claimed_for_unnamed_points(points):
    # C18 (Cerebras CS-3): HBM bytes, NVLink collectives and GPU counts said "does not fit in HBM" of an SRAM wafer
    card = claims.claim_card("C18", points)
    assert card.sol.empty
    assert "No roofline: Cerebras WSE-3 / CS-3 keeps weights in on-chip SRAM (no HBM)" in card.verdict
    assert "No plausible precision and scope reaches it" not in card.verdict
    # its nearest gpt-oss-120b points name no hardware: not "points of this model on this hardware"
    scope = card.answers["scope"].answer
    assert "on this hardware" not in scope and "on hardware the points do not name" in scope


def test_a_large_gap_names_what_the_evidence_itself_brings_to_it(points):
    # C08: 42× between a no-MTP interpolated reading and an MTP claim; the gap question doubted only the claim
    head = claims.claim_card("C08", points).headline
    assert ("the claim is 42× above this evidence (this evidence differs in speculative decoding, a value "
            "interpolated between two measured points)") in head


def test_the_speed_of_light_tau_follows_what_each_claim_states(cards, points, tmp_path):
    """One τ per card, from what the claim says: no speculation ('none (not allowed then)') gives τ 1 only; a model
    with its own golden curve reads it (C09, DeepSeek-V4-Pro: dsv4_mtp.yaml's 3.16 at 6 drafted, thinking off; the
    card's model text 'DeepSeek-V4-Pro 1.6T' is matched by its spec-table name); a stated draft length reads that
    row only (C22, 'MTP=3': V4-Pro's 2.97 at 3 drafted); a claim stating no speculation gets no deciding τ."""
    from analysis.claims import load_claim

    assert set(claims.claim_card("C11", points).sol["tokens_per_step"]) == {1.0}
    c09 = claims.claim_card("C09", points)
    assert set(c09.sol["tokens_per_step"]) == {1.0, 3.16} and "for this model (dsv4_mtp.yaml" in \
        c09.sol_info["tau_text"]
    c22 = claims.claim_card("C22", points)
    assert set(c22.sol["tokens_per_step"]) == {1.0, 2.97} and "3 drafted + 1 verified" in c22.sol_info["tau_text"]
    src = (config.CLAIMS_DIR / "C00.yaml").read_text(encoding="utf-8")
    none = tmp_path / "C98.yaml"
    none.write_text(src.replace("id: C00", "id: C98").replace("spec_decode: not stated", "spec_decode: none"),
                    encoding="utf-8")
    card = claims.claim_card(load_claim(none), points)
    assert set(card.sol["tokens_per_step"]) == {1.0}
    scopes = card.answers["scope"].fact["model_scopes"]
    assert scopes and not any("reaches_from" in sc for sc in scopes) and "golden curve" not in card.verdict


def test_a_points_share_of_its_own_bound_names_the_tau_it_is_read_at(cards):
    """C00's nearest evidence ran DSpark with no recorded acceptance: its own bound is read at the documented assumed
    τ 2.5, and the card says so beside the share instead of calling it a batch-1 bound at one token per step."""
    from analysis.pages.claim_card import ClaimCardPage

    card = cards["C00"]
    top = card.checks[card.checks["kind"] == "per-user"].iloc[0]
    assert (top["own_sol_tau"], top["own_sol_tau_source"]) == (2.5, "assumed")
    assert top["own_sol_comm_tok_s_per_user"] == pytest.approx(2667, abs=1)
    assert "(2,667 tok/s/user with the communication floor, at τ 2.50: assumed" in card.verdict
    shown = ClaimCardPage(card).comparisons_table()["share of own SOL (at its τ)"]
    assert shown.iloc[0] == f"{round(100 * top['share_of_own_sol_comm'])}% (τ 2.50 assumed)"
    assert ClaimCardPage(card).evidence_table()["share of own SOL (at its τ)"].str.contains("τ 2.50 assumed").any()


# --- the status line above the bottom line ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def status_cards(points, cards):
    more = {cid: claims.claim_card(cid, points) for cid in ("C01", "C03", "C06", "C09")}
    return {**cards, **more}


def test_c00s_status_says_no_measurement_reaches_it_and_what_the_model_says_decides_it(status_cards):
    """C00's status: the fastest same-architecture point (V4-Flash-0731, median TPOT) and the closest-matched one
    (the claim's own V4.1-Flash, mean TPOT) are both below 1,000 tok/s/user; the calibrated step-time model's
    no-speculation speed on the nearest evidence's 4 GPUs sets the acceptance length the claim needs, above the
    highest the card's bounds read."""
    card = status_cards["C00"]
    s = card.status
    assert s["status"] == "not-reached" and s["claimed"] == 1000.0
    assert s["fastest"] == pytest.approx(763.36, abs=0.01) and s["fastest_model"] == "DeepSeek-V4-Flash-0731"
    assert s["fastest_statistic"] == "1000 / median TPOT" and "model revision" in s["fastest_differs"]
    assert s["closest"] == pytest.approx(1000 / 2.19) and s["closest_model"] == "DeepSeek-V4.1-Flash"
    assert s["closest_statistic"] == "1000 / mean TPOT"
    model = card.answers["precision"].fact["model"]
    assert s["model_gpus"] == model["n_gpus"] == 4 and s["model_framework"] == "sglang"
    assert s["needs_tau"] == pytest.approx(1000 / model["tok_s_per_user"]["native"])
    assert s["top_tau"] == pytest.approx(float(card.sol["tokens_per_step"].max())) == pytest.approx(4.07)
    assert s["needs_tau"] > s["top_tau"]
    assert s["at_claim_conditions"] is False  # every compared point is same-model evidence, none direct
    assert s["text"].startswith("Status: not reproduced, no measurement reaches it. No measurement ran at the claim's "
                                "conditions. The closest-matched point (DeepSeek-V4.1-Flash) measures 456.6 tok/s/user "
                                "(1000 / mean TPOT), 46% of the claim (differs: NVLink domain, framework, software "
                                "date); the fastest of this model or its architecture 763.4 tok/s/user (1000 / median "
                                "TPOT), 76% of the claim")
    # the model's τ is an estimate resting on the calibrated engines' fixed cost per step, and says so
    assert (f"An estimate, not a measurement: at the fixed cost per step the step-time model calibrates on sglang's "
            f"runs (202 tok/s/user on 4 GPUs without speculative decoding) the claim would need τ ≥ "
            f"{s['needs_tau']:.2f}, beyond the 4.07 the card's bounds read; an engine that cuts that fixed cost needs "
            "less.") in s["text"]
    # on the page, above the bottom line, and in the JSON contract
    page = ClaimCardPage(card=card)
    assert page.bottom_line_md.startswith("**Status: not reproduced, no measurement reaches it.** No measurement ran")
    assert "\n\n**Bottom line.** " in page.bottom_line_md
    assert card.to_json()["status"]["status"] == "not-reached" and card.results()["status"]["text"] == s["text"]


def test_status_of_each_kind_of_evidence(status_cards):
    """Direct evidence at the claim's conditions gives a percentage (C09, 95%); same-model evidence under other
    lengths gives none and names them (C01); lengths more than 4× away (C23) and no evidence (C03) check nothing."""
    c09 = status_cards["C09"].status
    assert c09["status"] == "measured" and c09["match"] == "direct" and c09["share"] == pytest.approx(0.949, abs=0.001)
    assert c09["text"].startswith("Status: measured against matching evidence. 95% of the claim: 5,869 total tok/s/GPU")
    c01 = status_cards["C01"].status
    assert c01["status"] == "other-conditions" and c01["differs"] == ["lengths"]  # the framework informs, withholds nothing
    assert "This model was measured only under other conditions (lengths): 170 tok/s/user there" in c01["text"]
    assert status_cards["C23"].status["status"] == "far"
    # a claim counted per decode node reads the decode-GPU figure, as its bottom line does (121.4, not 91.1 over all)
    c06 = status_cards["C06"]
    assert c06.status["unit"].endswith("(decode GPUs only)") and c06.status["measured"] == pytest.approx(121.4, abs=0.1)
    assert "121.4 tok/s/GPU (decode GPUs only) there" in c06.bottom_line
    assert status_cards["C03"].status == {"status": "unchecked",
                                          "text": "Status: unchecked. No measured point can check it."}


def test_status_text_is_escaped_on_the_page(status_cards):
    """A group or model name from a log reaches the status line, which the page escapes like the bottom line."""
    from types import SimpleNamespace

    forged = {**status_cards["C09"].status, "group": "<script>x</script>"}
    page = ClaimCardPage(card=SimpleNamespace(status=forged, bottom_line="b"))
    assert "<script>" not in page.bottom_line_md and "&#60;script&#62;x" in page.bottom_line_md


def test_a_capacity_the_claim_does_not_state_reads_as_the_evidences(status_cards):
    """C00 states no capacity: the answers table's short form says so before the evidence's number, as the other
    answers do ('not stated; ...'), so 905 tok/s/GPU does not read as a property of the claim."""
    short = status_cards["C00"].answers["large_batch"].short
    assert short.startswith("not stated; evidence: 905 tok/s/GPU at 39 tok/s/user")
