"""Every evidence point on a claim card says how many requests stand behind it and how sure its speed is, and a
claimed number inside that interval is called within noise (shipped data)."""

import dataclasses

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from analysis import claims, data, uncertainty  # noqa: E402
from analysis.claims.card import card_from_evidence  # noqa: E402
from analysis.claims.registry import load_claim  # noqa: E402
from analysis.claims.relevance import relevant_points  # noqa: E402
from analysis.claims.selection import select_evidence  # noqa: E402


@pytest.fixture(scope="module")
def points():
    return data.load_points()


def test_card_evidence_carries_request_count_and_interval_of_the_points_table(points):
    card = claims.claim_card("C01", points)
    head = card.to_json()["comparisons"][0]
    e = head["evidence"][0]
    # the InferenceX single-node point at concurrency 1: 10 × concurrency requests, the harness' default
    assert e["concurrency"] == 1 and e["n_requests"] == 10 and e["n_requests_source"] == "tool-default"
    assert e["tok_s_per_user_lo"] <= e["tok_s_per_user"] <= e["tok_s_per_user_hi"]
    # the same interval analysis.uncertainty gives for that row of the points table
    row = points[(points["source_file"] == "data/raw/inferencex/benchmarks.json")
                 & (points["source_line"] == int(e["source"].split("#/")[1]) + 1)]
    iv = uncertainty.point_intervals(row)
    assert iv["user_lo"].iloc[0] == pytest.approx(e["tok_s_per_user_lo"])
    assert iv["user_hi"].iloc[0] == pytest.approx(e["tok_s_per_user_hi"])
    assert "10 requests (the tool's default: 10 × concurrency); 95% interval" in head["how"]


def test_a_point_without_spread_says_why_it_has_no_interval(points):
    how = [c["how"] for c in claims.claim_card("C00", points).to_json()["comparisons"]]
    # SGLang #33082 states 32 measured requests and a median only; InferenceX #3176 states neither
    assert any("32 requests; no interval (the source gives no spread)" in h for h in how)
    assert any("request count not stated; no interval (neither a request count nor a spread)" in h for h in how)
    # and each reading says whether the point's acceptance was measured or forced
    assert all("acceptance not recorded (measured or forced: unknown)" in h for h in how if "dspark" in h)


def test_a_claimed_number_inside_the_interval_is_within_noise(points):
    claim = load_claim("C01")
    first = claims.claim_card(claim, points).to_json()["comparisons"][0]
    lo, hi = first["evidence"][0]["tok_s_per_user_lo"], first["evidence"][0]["tok_s_per_user_hi"]
    assert first["claim_in_interval"] is False   # the shipped claim is far outside
    # the same claim stating the measured speed: inside the interval, worded as noise, not as a shortfall
    assert claim.parts[0]["kind"] == "per-user"   # the part the first comparison reads
    parts = [{**claim.parts[0], "value": (lo + hi) / 2}] + list(claim.parts[1:])
    inside = dataclasses.replace(claim, value=(lo + hi) / 2, parts=parts)
    card = card_from_evidence(select_evidence(inside, relevant_points(inside, points)))
    row = card.checks.iloc[0]
    assert row["claim_in_interval"] == True  # noqa: E712 (a numpy bool in the table)
    assert "within noise" in row["how"]


def test_r1_claims_reread_against_the_v4_tables_keep_their_own_model(points):
    # C22 and C23 are DeepSeek-R1 claims: the shipped DeepSeek-V4 tables (another architecture: CSA/HCA attention,
    # 284B total) are neither same-model nor proxy evidence for them, so the re-read leaves their evidence on R1
    assert (points["model"].str.startswith("DeepSeek-V4")).sum() > 50
    for cid in ("C22", "C23"):
        ev = claims.claim_card(cid, points).basis
        assert ev.pool_tier == "same-model"
        assert not any(str(m).startswith("DeepSeek-V4") for m in ev.pool_models)
        assert not ev.near["model"].astype(str).str.startswith("DeepSeek-V4").any()
