"""30-precision-scope executed under papermill (ratios, step pairs and scope numbers recomputed here), and its page
module on small synthetic tables with known answers."""

from __future__ import annotations

import pytest

from analysis.pages import precision_scope
from analysis.schema import to_points


# --- the page module on synthetic tables with known answers ---------------------------------------------------
def _pair_rows(hardware: str, ratio: float, *, fp4_setup: dict | None = None, model: str = "m") -> list[dict]:
    """fp8 and fp4 sweeps of one configuration; fp4 has ``ratio`` × fp8's tok/s/GPU at every tok/s/user."""
    base = dict(model=model, hardware=hardware, framework="sglang", scope="node", isl=1024, osl=1024,
                spec_decode="none", disagg=False, tp=8, ep=1, dp=1, n_gpus=8, n_decode_gpus=8, tool_version="img:1",
                date="2026-01-01", format="inferencex-api")
    rows = []
    for precision, scale, setup in (("fp8", 1.0, {}), ("fp4", ratio, fp4_setup or {})):
        side = {**base, "precision": precision, **setup}
        for u, g in ((20.0, 2000.0), (50.0, 800.0), (120.0, 150.0)):
            rows.append({**side, "tok_s_per_user": u, "output_tok_s": g * scale * side["n_gpus"],
                         "concurrency": g * scale * side["n_gpus"] / u})
    return rows


def test_headline_is_the_clean_pair_ratio_and_a_confounded_pair_stays_out():
    rows = (_pair_rows("B200", 1.6, fp4_setup={"date": "2026-02-01", "tool_version": "img:2"})    # clean
            + _pair_rows("MI355X", 5.0, fp4_setup={"tp": 4, "n_gpus": 4, "n_decode_gpus": 4}))  # parallelism differs
    page = precision_scope.build(to_points(rows), model="m", targets=[50], source_format=None)
    results = page.results()
    assert list(results["clean_pairs"]) == ["B200 · sglang · node · none"]
    assert results["clean_pairs"]["B200 · sglang · node · none"]["ratio_median"] == pytest.approx(1.6)
    assert results["matched_pairs"]["MI355X · sglang · node · none"]["confounders"] == "tp, GPUs, decode GPUs"
    assert results["matched_pairs"]["MI355X · sglang · node · none"]["ratio_median"] == pytest.approx(5.0)
    headline = results["headline"]
    # the synthetic rows have InferenceX's default request count but no percentiles: the ratio is given, with why
    # it has no interval, and never called higher
    assert ("one clean pair only, B200 · sglang · node · none, one hardware and engine, so no general fp4 ÷ fp8 "
            "factor: on it fp4 delivers 1.60× the tok/s/GPU of fp8 at equal tok/s/user, not shown to be beyond noise "
            "(no interval: neither the fp4 nor the fp8 reading has one: their points give a mean or median but no "
            "percentiles to read a spread from), the median of 25 levels over") in headline
    assert "(single levels 1.60× to 1.60×, 25 without an interval)" in headline
    assert page.tables["clean"]["median 95% interval"].iloc[0] == "none (fp4, fp8: no spread)"
    assert "higher" not in headline
    assert headline.endswith("A clean pair holds everything equal but run date and container image, and its two "
                             "sides ran on one image or within 31 days of each other (each side may pool several runs). "
                             "A ratio's 95% interval is each side's within-run sampling (from its request count and "
                             "percentiles); the drift between runs of one configuration on different days is not in it.")
    assert "5.00" not in headline and "MI355X" not in headline
    assert "date 2026-02-01 vs 2026-01-01; image img:2 vs img:1" in page.tables["clean"]["what differs"].iloc[0]
    assert results["precision_summary"]["n_clean_beyond_bytes"] == 0  # 1.6 is below 8/4.5
    assert "No clean pair goes beyond its roofline bytes ratio." in results["headline_detail"]
    # the MI355X pair is in the confounded table with what differs
    matched = page.tables["matched"].set_index("pair (hardware · framework · scope · spec decoding)")
    assert matched.loc["MI355X · sglang · node · none", "confounders"] == "tp, GPUs, decode GPUs"


def test_without_a_clean_pair_the_headline_says_there_is_no_estimate():
    rows = _pair_rows("B200", 3.0, fp4_setup={"framework": "sglang", "ep": 8})  # EP width differs
    results = precision_scope.build(to_points(rows), model="m", targets=[50], source_format=None).results()
    assert results["clean_pairs"] == {}
    assert "there is no clean fp4/fp8 estimate" in results["headline"] and "3.00" not in results["headline"]
    assert results["matched_pairs"]["B200 · sglang · node · none"]["confounders"] == "ep"


def test_data_derived_words_are_escaped_on_the_page_and_plain_in_results():
    model = "m*<b>x</b>"
    rows = _pair_rows("B200", 2.0, fp4_setup={"date": "2026-02-01"}, model=model)
    page = precision_scope.build(to_points(rows), model=model, targets=[50], source_format=None)
    assert "<b>" not in page.md["headline"] and "m&#42;&#60;b&#62;x" in page.md["headline"]
    assert page.results()["headline"].startswith(model)
    assert page.results()["title"].endswith(f"{model} 1024/1024")


def test_many_clean_pairs_are_summarised_by_their_range():
    rows = []
    for hardware, ratio in (("B200", 1.2), ("B300", 1.4), ("MI355X", 1.6), ("H200 SXM", 1.8)):
        rows += _pair_rows(hardware, ratio, fp4_setup={"date": "2026-02-01"})
    results = precision_scope.build(to_points(rows), model="m", targets=[50], source_format=None).results()
    assert len(results["clean_pairs"]) == 4
    assert ("fp4 delivers 1.50× the tok/s/GPU of fp8 at equal tok/s/user (median of 4 clean pairs' medians, range "
            "1.20× to 1.80×; the median of medians has no interval of its own, each pair's is: B200 · sglang · node · "
            "none 1.20×, not shown to be beyond noise (no interval: neither the fp4 nor the fp8 reading has one: "
            "their points give a mean or median but no percentiles to read a spread from)") in results["headline"]


def test_a_pair_run_months_apart_on_two_images_is_confounded_in_time_not_clean():
    """fp8 on 2026-01-01 (img:1) against fp4 on 2026-06-01 (img:2): 151 days apart, beyond the 31-day window the
    claim cards use, so the pair leaves the headline and the page says why; on one image it would stay clean."""
    apart = {"date": "2026-06-01", "tool_version": "img:2"}
    results = precision_scope.build(to_points(_pair_rows("B200", 1.6, fp4_setup=apart)), model="m", targets=[50],
                                    source_format=None).results()
    assert results["clean_pairs"] == {}
    assert "there is no clean fp4/fp8 estimate" in results["headline"] and "1.60" not in results["headline"]
    assert results["precision_summary"]["n_apart_in_time"] == 1
    page = precision_scope.build(to_points(_pair_rows("B200", 1.6, fp4_setup=apart)), model="m", targets=[50],
                                 source_format=None)
    assert ("B200 · sglang · node · none (dates 151 days apart, 1.60×, not shown to be beyond noise (no interval: "
            "neither the fp4 nor the fp8 reading has one: their points give a mean or median but no percentiles to "
            "read a spread from) at equal tok/s/user) pools runs further apart than 31 days on more than one image, "
            "so it is confounded in time") in page.plain["matched"]
    same_image = precision_scope.build(to_points(_pair_rows("B200", 1.6, fp4_setup={"date": "2026-06-01"})),
                                       model="m", targets=[50], source_format=None).results()
    assert list(same_image["clean_pairs"]) == ["B200 · sglang · node · none"]
