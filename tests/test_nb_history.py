"""40-history: its page function on the shipped data and a suite-history store written here, its numbers checked
against the history module and the raw rows; and the notebook as the session's rendered suite ran it."""

from __future__ import annotations

import math

import pytest
from test_history import write_suite_history

from analysis import history

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def page(raw_points):
    """The 40-history page on the shipped points, built once for this module."""
    from analysis.pages import history as history_page

    return history_page.build(raw_points)


def test_history_page_headline_and_changes(raw_points, page):
    """What 40-history saves, from the page function it calls (the notebook itself runs in the rendered suite)."""
    from conftest import page_results

    results = page_results(page)

    assert results["title"].startswith("Results over time") and results["model"] == "DeepSeek-R1-0528"
    table = history.series(raw_points)
    noise = history.noise(raw_points)
    found = history.changes(raw_points, noise_by=noise, table=table)
    assert results["n_groups"] == table["group"].nunique() == 184
    assert results["n_improvements"] == int((found["kind"] == "improvement").sum()) > 0
    assert results["n_regressions"] == int((found["kind"] == "regression").sum()) > 0
    assert results["threshold"]["gpu"]["threshold_ratio"] == pytest.approx(noise["gpu"].threshold_ratio)
    assert results["threshold"]["gpu"]["basis"].startswith("repeats on one date")

    # the headline names the largest lasting improvement and regression with both dates and values
    imp = results["largest_lasting_improvements"][0]
    reg = results["largest_lasting_regressions"][0]
    assert imp["kind"] == "improvement" and imp["ratio"] > noise["gpu"].threshold_ratio
    assert reg["kind"] == "regression" and reg["ratio"] < 1 / noise["gpu"].threshold_ratio
    head = results["headline"]
    for change in (imp, reg):
        assert change["date_before"] in head and change["date_after"] in head
    assert "tok/s/GPU at concurrency 128: 132 on 2026-05-13 → 629 on 2026-05-17" in head  # B300 fp4 8k/1k
    assert "tok/s/GPU at 25 tok/s/user: 166 on 2025-12-15 → 88.2 on 2026-01-05" in head  # MI300X 1k/1k
    assert imp["held_on"] == "2026-05-20" and reg["held_on"] == "2026-01-23"
    assert "back to within noise on 2026-05-17" in head  # the one-date H200 drop is named as such



def test_suite_history_page_attributes_each_move(tmp_path):
    """41-suite-history's page over a store of four runs: one move from new inputs, one from new code."""
    from conftest import page_results

    from analysis.pages import suite_history

    write_suite_history(tmp_path / "reports" / "history")
    results = page_results(suite_history.build(reports_dir=tmp_path / "reports"))
    assert results["n_runs"] == 4 and results["causes"] == {"inputs": 1, "code": 1}
    assert "1 from new inputs" in results["text"] and "1 from new code" in results["text"]


def test_suite_history_page_without_earlier_runs(tmp_path):
    from analysis.pages import suite_history

    results = suite_history.build(reports_dir=tmp_path / "none").results()
    assert results["n_runs"] == 0 and results["text"].startswith("No earlier runs")




def test_the_same_date_repeats_set_the_threshold_the_headline_counts_against(page):
    """The shipped history has 7 repeats on one date; they differ by a median of about 12% in tok/s/GPU, well above
    the 4.5% threshold the neighbouring dates alone would set (which counted 421 rises and 175 falls). The repeats
    set the threshold, the headline says so, and the threshold section shows the repeats beside it."""
    import math

    rep = page.pairs.loc[page.pairs["same_day"], "log_gpu"].abs()
    assert len(rep) == 7 and rep.median() < page.noise["gpu"].threshold
    assert page.noise["gpu"].threshold == pytest.approx(3 * 1.4826 * rep.median())
    assert "3σ of the 7 same-date repeats, which spread more than neighbouring dates do" in page.headline()
    n_up = int((page.changes["kind"] == "improvement").sum())
    assert f"between neighbouring dates {n_up} values rose" in page.headline() and n_up < 100
    assert f"median {math.expm1(rep.median()):.1%}" in page.threshold_text()
    # every change the headline names carries the noise band it lies outside
    r = page.noise["gpu"].threshold_ratio
    assert f"outside the run-to-run band ÷{r:.2f}–×{r:.2f}" in page.headline()


def test_the_history_figure_tells_lengths_apart(page):
    """Configurations at 1k/1k, 1k/8k and 8k/1k share a panel: each line's marker is its lengths, with a legend."""
    import matplotlib.pyplot as plt

    from analysis.plots import history as history_plots

    model = "DeepSeek-R1-0528"
    data = page.figure_data(model)
    assert {"1k/1k", "1k/8k", "8k/1k"} <= set(data["lengths"])
    axes = history_plots.ends_over_time(data, page.figure_changes(model))
    legend = [t.get_text() for t in axes[0, 0].figure.legends[0].get_texts()]
    assert {"1k/1k tokens in/out", "1k/8k tokens in/out", "8k/1k tokens in/out"} <= set(legend)
    markers = {line.get_marker() for ax in axes.ravel() for line in ax.get_lines()}
    assert len(markers) >= 3  # one per lengths pair drawn
    plt.close("all")


def test_dated_models_without_a_history_are_named(page):
    """The DeepSeek V4 tables are dated (five dates) but measure each configuration once: the page names them
    as having no history yet instead of leaving them out silently."""
    assert "DeepSeek-V4.1-Flash" in page.without_history and "DeepSeek-R1-0528" not in page.without_history
    assert "no configuration measured on two dates, so no history yet: " in page.headline()


def test_every_change_carries_an_interval_from_its_two_dates_and_the_run_to_run_noise(raw_points, page):
    """Each listed change's 95% interval, recomputed from the two points' own tok/s/GPU intervals (summary
    percentiles, InferenceX's default request count) and the run-to-run σ; on the shipped data every change past
    the threshold also lies beyond its interval, and the headline's lasting improvement prints it."""
    from analysis import uncertainty

    found = page.changes
    assert len(found) == 37 and set(found["verdict"]) == {"higher", "lower"}
    assert ((found["verdict"] == "higher") == (found["ratio_lo"] > 1)).all()
    assert ((found["verdict"] == "lower") == (found["ratio_hi"] < 1)).all()
    z = 1.959964
    for _, c in found.iterrows():  # never narrower than the run-to-run noise alone
        sigma = page.noise["user" if c["metric"].startswith("tok/s/user") else "gpu"].sigma
        assert c["ratio_hi"] / c["ratio_lo"] >= math.exp(2 * z * sigma) * (1 - 1e-6)
    assert (found["interval_basis"] == "run-to-run only").sum() == 2  # multi-node: no request count
    imp = found[(found["metric"] == "tok/s/GPU at concurrency 128") & (found["date_after"] == "2026-05-17")
                & found["group"].str.contains("B300 · fp4 · sglang · node · TP4 EP4")].iloc[0]
    rows = history.with_point_intervals(history.dated_points(raw_points))
    ends = []
    for src in (imp["source_before"], imp["source_after"]):
        r = rows[rows["source"] == src].iloc[0]
        ends.append(uncertainty.Interval(r["tok_s_per_gpu"], r["gpu_lo"], r["gpu_hi"]))
    sampling = uncertainty.ratio_interval(ends[1], ends[0])
    se = math.log(sampling.hi / sampling.lo) / (2 * z)
    half = z * math.hypot(se, page.noise["gpu"].sigma)
    assert (imp["ratio_lo"], imp["ratio_hi"]) == pytest.approx((imp["ratio"] * math.exp(-half),
                                                                imp["ratio"] * math.exp(half)), rel=1e-6)
    assert (imp["ratio"], imp["ratio_lo"], imp["ratio_hi"]) == pytest.approx((4.758, 3.401, 6.657), abs=5e-4)
    assert ("(×4.76, 95% interval ×3.40–×6.66 from both dates' own intervals and the run-to-run noise, outside the "
            "run-to-run band ÷1.67–×1.67)") in page.headline()
