"""The batch-scaling page object: what the report shows, computed and tested without a kernel."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest
from conftest import RAW

from analysis import scaling, text
from analysis.pages import batch_scaling


@pytest.fixture(scope="module")
def page(tmp_path_factory, raw_points):
    path = tmp_path_factory.mktemp("page") / "points.parquet"
    raw_points.to_parquet(path)
    return batch_scaling.build(points_path=path, step_logs_path=RAW / "h200", n_boot=30)


def test_headline_leads_with_measured_numbers_only(page):
    first = page.headline().split("\n\n")[0]
    # a timed decode step, said as such: not a served workload (no prefill, no scheduler, one context length)
    assert "one decode step at batch 1 gives 166.2 tok/s/user (measured)" in first
    assert "at batch 512, the largest batch timed, one decode step at context 1,024 produces 14,351 tok/s" in first
    assert "not a served workload" in first and "serves" not in first
    assert "model" not in first and "B½" not in first and "Degenerate" not in first  # no footnote needed
    assert "Degenerate fit" in page.headline()  # the model's reading follows, with its caveat


def test_two_sections_each_titled_for_what_it_holds(page):
    assert page.step_title() == ("## Measured decode steps (H200 SXM): single-user speed and throughput against "
                                 "batch")
    n_serving = len(page.serving_fits)
    # 63 from raw logs, 1 from a published table: a published table's recipes (low-latency, balanced,
    # high-throughput) are separate configurations, each of one or two concurrencies, so none is fitted alone
    assert n_serving == 64 and len(page.step_fits) == 9
    assert page.serving_title().startswith(f"## Serving sweeps: {n_serving} configurations on ")
    assert (page.step_fits["step_source"] == "step_ms").all() and (page.serving_fits["step_source"] == "tpot").all()


def test_poor_fits_are_listed_apart_with_why(page):
    limit = batch_scaling.POOR_FIT_CV_ERROR
    shown = page.serving_table()
    assert (shown["cv error %"] <= 100 * limit).all()
    assert list(shown["cv error %"]) == sorted(shown["cv error %"])  # best first
    poor = page.serving_poor_table()
    assert len(shown) + len(page.serving_untestable_table()) + len(poor) == len(page.serving_fits)
    assert (poor["cv error %"] > 100 * limit).all()
    assert poor["why listed apart"].str.startswith("refit without one batch, the model misses it by").all()
    assert "B½ (95% interval)" not in poor.columns  # no derived numbers for fits that miss held-out batches
    assert html.unescape(page.serving_poor_html()).startswith("<details><summary>38 serving fits listed apart")
    step_poor = page.step_poor_table()
    assert len(step_poor) == 4 and step_poor["configuration"].str.contains("pytorch-eager").all()


def test_no_b_half_below_one_is_printed(page):
    fits = scaling.fitted(page.fits)
    assert (fits["b_half"] < 1).any()  # the model has some: they must not reach the page
    for table in (page.step_table(), page.serving_table()):
        for cell in table["B½ (95% interval)"]:
            words = cell.replace("(", " ").replace(")", " ").replace("–", " ").replace(",", "").split()
            numbers = [float(x) for x in words if x.replace(".", "").isdigit()]
            assert all(n >= 1 for n in numbers), cell
    shown = batch_scaling.display_table(scaling.summary(page.fits))
    assert not (shown[["B½", "B½ lo", "B½ hi"]] < 1).any().any()


def test_one_batch_1_speed_per_configuration(page):
    step = page.step_table()
    assert [c for c in step.columns if "B=1" in c] == ["B=1 tok/s/user (measured)"]
    # Labels drop what the section's rows share (H200 SXM; CUDA graphs: the eager fits are listed apart).
    head = step[step["configuration"] == "llama-3.1-8b | bf16 | single-gpu | 1 GPU | TP1"].iloc[0]
    assert head["B=1 tok/s/user (measured)"] == pytest.approx(166.2, abs=0.05)
    serving = pd.concat([page.serving_table(), page.serving_untestable_table()], ignore_index=True)
    assert [c for c in serving.columns if "B=1" in c] == ["B=1 tok/s/user (model, not measured)"]
    far = serving["smallest B"] > batch_scaling.PEAK_MODEL_MAX_BATCH_MIN
    assert far.any() and serving.loc[far, "B=1 tok/s/user (model, not measured)"].isna().all()
    titles = [f.title for f in page.figures_for(step=True)]
    # the headline fit's t1 sits on its floor: its title, as its table cell, gives B½ as an upper bound
    assert titles[0].endswith("166 tok/s/user at batch 1 (measured), 14,351 tok/s at batch 512 (largest measured), "
                              "B½ ≤ 108 (upper bound)")
    assert batch_scaling._b_half_title({"b_half": 644.0, "largest_batch": 512.0, "at_bound": ""}) == \
        "≈ 644 (model, beyond the largest batch measured)"
    assert batch_scaling._b_half_title({"b_half": 64.0, "largest_batch": 512.0, "at_bound": None}) == "≈ 64 (model)"


def test_not_fitted_is_summarised_by_reason(page):
    table = page.not_fitted_table()
    n = int((page.fits["status"] != "fitted").sum())
    assert n > 200 and len(table) == 2 and table["groups"].sum() == n
    assert list(table["reason"]) == ["1 batch size(s), need 3", "2 batch size(s), need 3"]
    assert table["models"].iloc[0].startswith("DeepSeek-R1-0528 (")


def test_figures_and_tables_are_bounded(page):
    assert len(page.figures_for(step=False)) <= page.params["max_serving_figures"]
    assert all(f.row["cv_error"] <= batch_scaling.POOR_FIT_CV_ERROR for f in page.figures)
    # Section tables keep to ten columns or fewer; the full table is in a collapsible block.
    assert len(page.step_table().columns) <= 10 and len(page.serving_table().columns) <= 10
    assert html.unescape(page.all_fits_html()).startswith("<details><summary>Every fitted configuration "
                                                          "(73 rows)")


def test_results_are_plain_text_with_the_same_numbers(page):
    res = page.results()
    assert "&#" not in res["headline"] and "**" not in res["headline"]
    assert res["headline_numbers"]["largest_batch_tok_s"] == pytest.approx(14_351, rel=1e-3)
    assert res["n_step_sweeps"] == 9 and res["n_serving_sweeps"] == 64 and len(res["poor_fits"]) == 42


def test_data_derived_names_are_escaped():
    fits = pd.DataFrame([{"group": "<script>x</script> | *bold*", "hardware": "<b>", "status": "fitted"}])
    block = batch_scaling.details_html("summary <i>", fits)
    assert "<script>" not in block and "<b>" not in block
    assert "&#60;script&#62;" in block and "&#60;b&#62;" in block and "summary &#60;i&#62;" in block
    row = pd.Series({"group": "<img src=x>", "peak_tok_s_per_user": np.nan, "largest_batch": 8.0,
                     "largest_batch_tok_s": 100.0, "largest_batch_tok_s_per_user": 12.5,
                     "largest_batch_tok_s_per_gpu": 100.0, "n_gpus_denominator": 1.0})
    assert scaling.short_headline(row).startswith(text.esc("<img src=x>"))
    assert scaling.short_headline(row, markdown=False).startswith("<img src=x>")


def test_b_half_on_its_floor_is_an_upper_bound_without_an_interval_and_extrapolation_is_named(page):
    """The prose says B½ ≤ 108 is an upper bound (its per-sequence cost sits on the physical floor); the table said
    '108 (101–114)', an interval reaching above the bound. A B½ past the largest batch measured says so."""
    table = page.step_table()
    cells = list(table["B½ (95% interval)"])
    assert "≤ 108 (upper bound)" in cells and not any(c.startswith("108 (") for c in cells)
    import re

    flagged = 0
    for cell, largest in zip(cells, table["largest B"]):  # each row against its own largest measured batch
        m = re.search(r"[\d,.]+", cell)
        if m and float(m.group(0).replace(",", "")) > float(largest):
            assert cell.endswith("(beyond the largest batch measured)"), cell
            assert "–" not in cell, cell  # never an interval on an extrapolated B½
            flagged += 1
        else:
            assert "beyond" not in cell, cell
    assert flagged >= 1


def test_ranked_serving_table_holds_only_testable_fits(page):
    ranked = page.serving_ranked_fits(True)
    apart = page.serving_ranked_fits(False)
    assert (ranked["n_batches"] >= batch_scaling.TESTABLE_BATCHES).all()
    assert len(apart) and (apart["n_batches"] < batch_scaling.TESTABLE_BATCHES).all()  # 3-batch fits exist
    assert len(ranked) + len(apart) == len(page._section(False, good=True))
    assert len(page.serving_table()) == len(ranked) and len(page.serving_untestable_table()) == len(apart)
    assert page.serving_untestable_caption().startswith(f"**Not ranked: {len(apart)} fit")


def test_validation_and_roofline_sentences_escape_group_names():
    """Group names and share sources come from logs: every sentence and the worst-groups table escape them."""
    bad = "<img src=x> | *x* | fp8 | pytorch-eager"
    groups = pd.DataFrame([{"group": bad, "family": "<b>", "hardware": "<b>", "framework": "pytorch-eager",
                            "workload": "vllm-bench", "n_gpus": 4, "points": 1, "concurrency_min": 1.0,
                            "concurrency_max": 1.0, "error_tok_s_per_user": 0.5, "error_tok_s_per_gpu": 2.0,
                            "worst_error": 2.0, "dominant": "overhead at every point", "date": "2026-01-02",
                            "software_drift": 1.2, "not_stated": ["tp", "ep", "dp", "isl", "osl"],
                            "calibrates": False}])
    worst = batch_scaling.validation_worst(groups)
    points = pd.DataFrame([{"group": bad, "concurrency": 1.0, "measured_tok_s_per_user": 100.0,
                            "predicted_tok_s_per_user": 95.0, "measured_tok_s_per_gpu": 10.0,
                            "predicted_tok_s_per_gpu": 25.0, "error_tok_s_per_user": -0.05}])
    notes = " ".join(batch_scaling.validation_notes(groups, worst, points, pd.DataFrame()))
    assert "<img" not in notes and "<b>" not in notes and "*x*" not in notes
    assert "&#60;img src=x&#62; &#124; &#42;x&#42;" in notes
    assert "Group #1's source states no TP, EP, DP, ISL and OSL" in notes and "calibrate nothing" in notes
    plain = " ".join(batch_scaling.validation_notes(groups, worst, points, pd.DataFrame(), markdown=False))
    assert bad in plain  # the results file keeps the name as it is
    table = text.table_html(batch_scaling.validation_worst_table(worst))
    assert "<img" not in table and "&#60;img src=x&#62;" in table
    # the roofline check's sentence names its worst sweep escaped, its sources reach the table as data
    check = pd.DataFrame([{"group": bad, "hardware": "H200 SXM", "step_source": "step_ms", "moe": False,
                           "n_fit_batches": 5, "batch": b, "context": 1024.0, "rel_error": e, "bw_share": 0.9,
                           "bw_share_source": "<i>copy</i>", "kv_bw_share": 0.7, "kv_bw_share_source": "kv",
                           "flop_share": 0.5, "flop_share_source": "prefill", "overhead_ms_per_layer": 0.1}
                          for b, e in ((128.0, -0.05), (256.0, 0.02))])
    page = batch_scaling.BatchScalingPage(
        params={"roofline_fit_max_batch": 24, "roofline_tolerance": 0.10}, points=pd.DataFrame(),
        fits=pd.DataFrame(), draws=pd.DataFrame(), floors=None, head=None, residuals=pd.DataFrame(),
        roofline_check=check)
    sentence = page.roofline_text()
    assert sentence.startswith("**The 1 dense H200 step sweep (1 configuration, each context a sweep) is within 10%")
    assert "<img" not in sentence
    assert "&#60;img src=x&#62; &#124; &#42;x&#42;" in sentence
    assert page.roofline_text(markdown=False).count(bad) == 1
    shares = text.table_html(page.roofline_shares_table())
    assert "<i>copy" not in shares and "&#60;i&#62;copy" in shares
