"""The shipped suite rendered once per test session, as `make report` renders it, and read two ways: the numbers each
notebook saved (checked against independent recomputations), and every page opened in a real browser at 1,400 px
(a real title, a link back to the index, no table wider than the window, no console error, and nothing fetched
but the page itself (``file:``) and inline ``data:`` URIs). Everything that reads the rendered suite lives in this
module, so `make test`'s workers (``--dist loadfile``) render it once.

Playwright drives Debian's chromium (``apt-get install chromium``; ``.ci/run`` installs it). Playwright's own
browser download is never used. Where no chromium exists the tests are skipped with a message. The suite is
rendered once per test session with the suite runner (conftest's ``rendered_suite``, shared with the notebook tests),
and each page is opened once, in one tab; the checks read what was seen.
"""

from __future__ import annotations

import html
import math
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from test_compare import side_front
from test_frontier import log_interp
from test_nb_frontier import TARGETS, _check, _check_efficiency, expected_efficiency, expected_groups

from analysis import config, report

pytestmark = pytest.mark.notebook

WIDTH = 1400
HEIGHT = 900
CHROMIUM = os.environ.get("PERFCLAIMS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
NO_BROWSER = ("no chromium to drive: install Debian's chromium (`apt-get install -y chromium`, as .ci/run does) "
              "or set PERFCLAIMS_CHROMIUM to a chromium binary")

def _jobs() -> list[report.Job]:
    try:
        return report.load_suite(config.SUITE_FILE)
    except Exception:  # a broken suite file is reported by test_report/test_suite_notebooks
        return []


JOBS = _jobs()
SLUGS = [job.slug or job.notebook for job in JOBS]


@dataclass
class Seen:
    """What one page showed the browser."""

    title: str = ""
    links: list = field(default_factory=list)
    tables: list = field(default_factory=list)        # (index, left, right, width) in CSS px
    client_width: int = 0
    console_errors: list = field(default_factory=list)
    requests: list = field(default_factory=list)      # every URL the page asked for


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(NO_BROWSER)
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install "
                                                                 "-e '.[test]')")
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        except Exception as err:  # a chromium that cannot start is the same as none
            pytest.skip(f"{NO_BROWSER} ({CHROMIUM} did not start: {str(err).splitlines()[0]})")
        yield b
        b.close()


_SEEN: dict[str, Seen] = {}


@pytest.fixture(scope="session")
def tab(browser):
    """One browser tab at 1,400 px for every page: what each page logs and requests goes to ``tab.seen``."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.seen = Seen()
    page.on("console", lambda msg: page.seen.console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda err: page.seen.console_errors.append(str(err)))

    def route(r):
        page.seen.requests.append(r.request.url)
        # nothing leaves the machine: a remote load is recorded and refused
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    yield page
    context.close()


def _open(tab, path: Path) -> Seen:
    seen = tab.seen = Seen()
    tab.goto(path.resolve().as_uri(), wait_until="load")
    tab.wait_for_timeout(50)  # late console messages (fonts, scripts) arrive after load
    seen.title = tab.title()
    seen.links = tab.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
    seen.client_width = tab.evaluate("document.documentElement.clientWidth")
    seen.tables = tab.eval_on_selector_all(
        "table", "els => els.map((t, i) => { const r = t.getBoundingClientRect();"
                 " return [i, r.left, r.right, r.width]; })")
    tab.goto("about:blank")  # nothing of this page reaches the next one's record
    tab.seen = Seen()
    return seen


@pytest.fixture
def seen(request, tab, rendered_suite) -> Seen:
    slug = request.param
    if slug not in _SEEN:
        path = rendered_suite / f"{slug}.html"
        if not path.exists():
            pytest.fail(f"{slug}.html was not rendered (the suite run failed for it; see the index)")
        _SEEN[slug] = _open(tab, path)
    return _SEEN[slug]


def _params():
    return [pytest.param(slug, id=slug) for slug in SLUGS]


@pytest.mark.parametrize("seen", _params(), indirect=True)
def test_page_has_a_real_title(seen):
    assert seen.title.strip() and seen.title.strip() != "Notebook", f"title is {seen.title!r}"


@pytest.mark.parametrize("seen", _params(), indirect=True)
def test_page_links_back_to_the_index(seen):
    assert any(link.split("#")[0].endswith("/index.html") for link in seen.links), seen.links[:10]


@pytest.mark.parametrize("seen", _params(), indirect=True)
def test_no_table_is_wider_than_the_window(seen):
    wide = [(i, round(w), round(right)) for i, left, right, w in seen.tables
            if w > seen.client_width + 0.5 or right > seen.client_width + 0.5]
    assert not wide, (f"{len(wide)} of {len(seen.tables)} tables overflow a {seen.client_width} px window "
                      f"(table index, width, right edge): {wide}")


@pytest.mark.parametrize("seen", _params(), indirect=True)
def test_page_logs_no_console_error(seen):
    assert not seen.console_errors, seen.console_errors[:5]


@pytest.mark.parametrize("seen", _params(), indirect=True)
def test_page_fetches_nothing_but_itself_and_inline_data(seen):
    remote = [u for u in seen.requests if not u.startswith(("file:", "data:"))]
    assert not remote, remote[:10]


def test_every_report_of_the_run_rendered_ok(rendered_suite):
    # A failed report still gets a page (its error shows there), so the widths and titles above would pass on it.
    from analysis.report import runs

    manifest = runs.read_manifest(rendered_suite)
    failed = {r.get("slug"): r.get("error") for r in manifest.get("jobs", []) if r.get("status") == "failed"}
    assert manifest.get("jobs") and not failed, failed


def test_the_suite_has_pages_to_open():
    assert "30-precision-scope" in SLUGS and len(SLUGS) >= 5


# --- the numbers each notebook saved, as the suite ran it (the notebooks' own parameters, data/processed) ----

def test_frontier_notebook_tables_capacity_at_50_100_200_and_fastest_points(suite_results, raw_points):
    results = suite_results("20-frontier")  # as the suite runs it: its own parameters, data/processed
    expected = expected_groups(raw_points, isl=1024, osl=1024, denominator="all")
    assert len(expected) == 22
    reached = _check(results, expected)
    assert reached == 42  # groups × targets that the measured frontiers reach (20 + 18 + 4)
    assert results["denominator"] == "all" and results["targets"] == TARGETS
    assert "all GPUs (prefill + decode)" in results["headline"]
    # the headline's example: B200 fp4 node at 50 tok/s/user, between concurrency 128 and 64 points
    assert results["capacity"]["B200 · fp4 · node"]["50"] == pytest.approx(
        expected["B200 · fp4 · node"]["capacity"]["50"])
    # B300 fp4 node starts at 52.6 tok/s/user: blank at 50 in the numbers, a lower bound in the prose
    assert results["capacity"]["B300 · fp4 · node"]["50"] is None
    assert results["capacity_reading"]["B300 · fp4 · node"]["50"] == "lower bound"
    assert "B300 · fp4 · node ≥ 787" in results["prose"]
    assert results["n_gpus_range"]["GB300 NVL72 · fp4 · rack"] == [12, 48]
    # the page says what it is about
    assert results["model"] == "DeepSeek-R1-0528" and results["title"].startswith("DeepSeek-R1-0528 frontiers, 1,024")
    assert results["hardware"] == ["B200", "B300", "GB200 NVL72", "GB300 NVL72", "H100 SXM", "H200 SXM", "MI300X",
                                   "MI325X", "MI355X"]
    # shares are fractions in the numbers and percentages with a sign in the text: 0.39%, not 0.393
    grp = raw_points[(raw_points["format"] == "inferencex-api") & (raw_points["hardware"] == "B200")
                     & (raw_points["precision"] == "fp4") & (raw_points["scope"] == "multi-node")
                     & (raw_points["isl"] == 1024) & (raw_points["osl"] == 1024)]
    share = results["fastest_share_of_capacity"]["B200 · fp4 · multi-node"]
    assert share == pytest.approx(expected["B200 · fp4 · multi-node"]["fastest_point"]["tok_s_per_gpu"]
                                  / (grp["output_tok_s"] / grp["n_gpus"]).max(), rel=1e-9)
    assert 0.0038 < share < 0.0040
    assert "keeps 0.39% of that group's best tok/s/GPU" in results["headline"]

    # cost and energy at 50 and 100 tok/s/user, recomputed from the prices and the raw power
    usd, joules = expected_efficiency(raw_points, isl=1024, osl=1024, denominator="all")
    # 12 priced groups × 2 levels, less 3 above their measured range, and MI355X fp4/fp8 node at 100 tok/s/user
    assert _check_efficiency(results, usd, joules) == 21 + 2
    assert sorted(joules) == ["MI355X · fp4 · node", "MI355X · fp8 · node"]
    assert results["no_price"] == ["B300", "MI300X", "MI325X", "MI355X"]
    assert results["prices_used"]["B200"]["usd_per_gpu_hour"] == 1.95
    assert results["prices_used"]["B200"]["source"].startswith("https://inferencex.semianalysis.com/")
    assert results["n_points_with_power"] == 7 and results["power_scope"] == "GPU power only"
    # MI355X fp4 node: its points with power start at 88.8 tok/s/user, so at 50 only a ceiling: 3.64 J
    assert results["j_per_output_token_reading"]["MI355X · fp4 · node"]["50"] == "lower bound"
    assert results["tok_s_per_mw_floor"]["MI355X · fp4 · node"]["50"] == pytest.approx(1e6 / 3.638711, rel=1e-5)
    cheapest = min((v["50"], k) for k, v in usd.items() if not math.isnan(v["50"]))
    assert cheapest[1] == "GB300 NVL72 · fp4 · rack"
    # the cheapest reading is rough (a 4.7x gap): the headline leads with the one close points support, then it
    assert "Cost: lowest at 50 tok/s/user, read between close frontier points, is $0.22" in results["headline"]
    assert f"a rough reading between points 4.7× apart gives ${cheapest[0]:.2f} per million output tokens (GB300 " \
           "NVL72 · fp4 · rack, read between points with speculative decoding mtp and none (acceptance not stated); " \
               "$2.65/GPU-hour" \
           in results["headline"]
    assert "no cost figure, for B300, MI300X, MI325X, MI355X" in results["headline"]
    assert "Energy (GPU power only): measured on 7 of 169 points, all on MI355X" in results["headline"]


def test_precision_scope_notebook_numbers(suite_results, raw_points):
    results = suite_results("30-precision-scope")  # as the suite runs it: its own parameters, data/processed
    snap = raw_points[(raw_points["format"] == "inferencex-api") & (raw_points["model"] == "DeepSeek-R1-0528")
                      & (raw_points["isl"] == 1024) & (raw_points["osl"] == 1024)]

    # every strictly matched fp4/fp8 pair, with its ratios and confounders
    assert results["n_matched_pairs"] == len(results["matched_pairs"]) == 21
    assert results["n_matched_with_overlap"] == 17
    pair = results["matched_pairs"]["B200 · trt · node · none"]
    key = dict(hardware="B200", framework="trt", scope="node", spec_decode="none")
    ua, ga = side_front(snap, "fp4", **key)
    ub, gb = side_front(snap, "fp8", **key)
    lo, hi = max(min(ua), min(ub)), min(max(ua), max(ub))
    assert pair["ratio_fastest_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
    assert pair["ratio_capacity_end"] == pytest.approx(log_interp(ua, ga, lo) / log_interp(ub, gb, lo))
    grid = np.geomspace(lo, hi, 25)
    grid[0], grid[-1] = lo, hi
    ratios = [log_interp(ua, ga, t) / log_interp(ub, gb, t) for t in grid]
    assert pair["ratio_median"] == pytest.approx(np.median(ratios))
    assert pair["confounders"] == "date, image"
    for label, p in results["matched_pairs"].items():
        assert p["confounders"], label

    # hardware × scope envelopes: GB200 NVL72 rack fp4 against fp8
    env = results["precision_envelope"]["GB200 NVL72 · rack"]
    ua, ga = side_front(snap, "fp4", hardware="GB200 NVL72", scope="rack")
    ub, gb = side_front(snap, "fp8", hardware="GB200 NVL72", scope="rack")
    hi = min(max(ua), max(ub))
    assert env["ratio_fastest_end"] == pytest.approx(log_interp(ua, ga, hi) / log_interp(ub, gb, hi))
    medians = [v["ratio_median"] for v in results["precision_envelope"].values() if v["ratio_median"] is not None]
    assert f"between {min(medians):.2f}× and {max(medians):.2f}×" in results["envelope_text"]
    # the envelopes' full range (values below 1 included) is labelled confounded and stays out of the headline
    lows = [v["ratio_min"] for v in results["precision_envelope"].values() if v["ratio_min"] is not None]
    highs = [v["ratio_max"] for v in results["precision_envelope"].values() if v["ratio_max"] is not None]
    assert min(lows) < 1
    assert f"runs from {min(lows):.2f}× to {max(highs):.2f}×" in results["envelope_text"]
    assert results["envelope_text"].startswith("Confounded, not an effect of precision")
    assert f"{max(highs):.2f}" not in results["headline"] and f"{min(lows):.2f}" not in results["headline"]
    # the headline is the clean pairs: equal in everything but date and image, those within 31 days or one image;
    # B200 trt pools runs 198 days apart on several images, so it is confounded in time and says so
    clean = [p["ratio_median"] for p in results["matched_pairs"].values()
             if p["ratio_median"] is not None and set(p["confounders"].split(", ")) <= {"date", "image", "none"}]
    assert len(clean) == 2 and list(results["clean_pairs"]) == ["MI355X · sglang · node · mtp"]
    mi = results["clean_pairs"]["MI355X · sglang · node · mtp"]
    assert mi["ratio_median_verdict"] == "higher" and mi["ratio_median_lo"] > 1
    assert (f"one clean pair only, MI355X · sglang · node · mtp, one hardware and engine, so no general fp4 ÷ fp8 "
            f"factor: on it fp4 delivers {mi['ratio_median']:.2f}× the tok/s/GPU of fp8 at equal tok/s/user (95% "
            f"interval {mi['ratio_median_lo']:.2f}×–{mi['ratio_median_hi']:.2f}×), the median of 25 levels over"
            in results["headline"])
    assert f"{results['matched_pairs']['B200 · trt · node · none']['ratio_median']:.2f}×" not in results["headline"]
    assert "speculative decoding, disaggregation" in results["headline_detail"]
    # a clean ratio above the roofline's bytes ratio is pointed out: MI355X sglang reaches 2.08×, above 8/4.25
    # and above the 2× FP4/FP8 tensor-core rate of an MI355X
    assert mi["bytes_ratio"] == pytest.approx(8 / 4.25) and mi["beyond_bytes"] and mi["beyond_roofline"]
    assert mi["math_ratio"] == pytest.approx(2.0)
    assert (f"MI355X · sglang · node · mtp reaches {mi['ratio_max']:.2f}×, above its roofline bytes ratio of 1.88×"
            in results["headline_detail"])
    # above the bytes ratio is not read as beyond precision: at equal tok/s/user a faster step fits more sequences
    assert "at equal tok/s/user it is no ceiling" in results["headline_detail"]
    assert "neither fewer bytes nor faster math explains it" not in results["headline_detail"]
    assert results["title"] == "FP4 vs FP8 and node vs rack: DeepSeek-R1-0528 1024/1024"
    assert results["model"] == "DeepSeek-R1-0528"
    # 200 tok/s/user has bars for only a few groups: no panel for it
    assert results["bar_targets"] == [50, 100] and results["scope_bar_targets"] == [50, 100]

    # H200: bf16 against fp8 at equal batch and context, fp8 slower everywhere
    steps = raw_points[(raw_points["format"] == "h200-steps-jsonl") & (raw_points["phase"] == "decode")]
    keys = ["model", "framework", "batch_size", "context_len"]
    fp8 = steps[steps["precision"] == "fp8"].set_index(keys)["step_ms"]
    bf16 = steps[steps["precision"] == "bf16"].set_index(keys)["step_ms"]
    ratio = (bf16 / fp8).dropna()
    eight = ratio.xs(("llama-3.1-8b", "pytorch-cudagraph", 1024.0), level=["model", "framework", "context_len"])
    h200 = results["h200_fp8_over_bf16"]["llama-3.1-8b · pytorch-cudagraph · 1024"]
    assert h200["ratio_median"] == pytest.approx(eight.median())
    assert h200["ratio_max"] == pytest.approx(eight.max()) and h200["ratio_max"] < 1
    assert h200["n_batches"] == len(eight) == 10
    assert all(v["ratio_max"] < 1 for v in results["h200_fp8_over_bf16"].values())
    assert results["h200_n_batches"] == len(ratio) == 34 and results["h200_n_fp8_slower"] == int((ratio < 1).sum())
    assert results["h200_title"].endswith("fp8 slower at all 34 matched batches")
    assert "clean precision pair" not in results["h200_title"]

    # scope: what one B200 node keeps of the GB200 NVL72 rack at 50 tok/s/user, fp8
    row = next(r for r in results["scope"] if r["gpu_family"] == "B200" and r["precision"] == "fp8"
               and r["hardware"] == "GB200 NVL72" and r["scope"] == "rack" and r["target_tok_s_per_user"] == 50)
    ur, gr = side_front(snap, "fp8", hardware="GB200 NVL72", scope="rack")
    un, gn = side_front(snap, "fp8", hardware="B200", scope="node")
    assert row["reference_over_scope"] == pytest.approx(log_interp(un, gn, 50) / log_interp(ur, gr, 50))
    assert row["status"] == "measured"
    # the rack's points record no request count: no interval, so neither side is called better per GPU
    assert (f"node ÷ rack = {row['reference_over_scope']:.2f}× (no interval: the rack "
            "reading has none: its points record no request count)") in results["scope_prose"]
    # ... with its confounders, and out of the headline: no scope reading in the snapshot is clean
    assert row["confounders"] == "framework, disaggregation, EP width, spec decoding" and not row["clean"]
    assert not any(r["clean"] for r in results["scope"])
    assert "Scope has no headline number" in results["scope_headline"]
    assert "÷ rack =" not in results["headline"] + results["scope_headline"]
    not_measured = [r for r in results["scope"] if r["status"] != "measured"]
    assert not_measured and all(r["reference_over_scope"] is None for r in not_measured)
    assert results["single_gpu_measured"] is False
    assert results["denominator"] == "all"


def test_claim_card_notebook_c00(suite_results):
    res = suite_results("50-claim-card-C00")
    assert res["claim"] == "C00" and res["kind"] == "per-user" and res["value"] == 1000
    assert res["model_table"] == "DeepSeek-V4-Flash"
    assert set(res["answers"]) == {"batch", "large_batch", "scope", "latency", "precision", "spec_decode"}
    for key, answer in res["answers"].items():   # precision: no FP4/FP8 pair of this model, the roofline is context
        assert (answer["status"] == "not stated") if key == "precision" else \
            (answer["status"] == "inferred from data" and answer["rows"]), key
    sol = {(r["precision"], r["gpus"], r["tokens_per_step"]): r for r in res["sol"]}
    assert {(p, g) for p, g, _ in sol} == {(p, g) for p in ("fp8", "fp4") for g in (1, 4, 8, 72)}
    fp4_1, fp8_1 = sol[("fp4", 1, 1.0)], sol[("fp8", 1, 1.0)]
    # At 8 TB/s: FP4 as V4-Flash ships it (FP4 experts, FP8 attention, BF16 router and head; data/specs/recipes.csv)
    # reads 10.26 GB a step, ~779 tok/s/user; FP8 on every weight 13B bytes, ~615 tok/s/user.
    assert fp4_1["sol_tok_s_per_user"] == pytest.approx(779, rel=0.02)
    assert fp8_1["sol_tok_s_per_user"] == pytest.approx(615, rel=0.02)
    assert sol[("fp4", 72, 1.0)]["sol_tok_s_per_user"] > 50 * fp4_1["sol_tok_s_per_user"]
    assert fp8_1["fraction_of_sol"] > 1 and fp4_1["fraction_of_sol"] > 1  # one GPU reaches 1,000 at neither
    assert res["verdict"].startswith("C00")
    # The SOL reading uses the achievable line (0.8 of the datasheet's): one GPU is short of both at τ 1.
    assert fp4_1["sol_tok_s_per_user_achievable"] == pytest.approx(0.8 * 779, rel=0.02)
    assert fp4_1["reading"].startswith("impossible (1.3× the bandwidth bound")
    assert res["headline"].startswith("[same-model evidence; not reproduced] C00: nearly 1,000 tok/s/user "
                                      "(single-user throughput) — a single-user")


def test_claim_card_notebook_c08_reads_the_frontier_at_125(suite_results):
    res = suite_results("50-claim-card-C08")
    checks = {r["part"]: r for r in res["checks"]}
    gb200 = checks["4,130 tok/s/GPU at 125 tok/s/user (GB200 NVL72)"]
    assert gb200["measured_all"] == pytest.approx(97.5, abs=0.1)
    assert gb200["measured_decode"] == pytest.approx(114.5, abs=0.1)
    assert checks["941 tok/s/GPU at 125 tok/s/user (B200 multi-node)"]["measured_all"] == pytest.approx(71.7, abs=0.1)
    assert "97.5 tok/s/GPU" in res["headline"] and "ISL 1,024 / OSL 1,024" in res["headline"]


def test_history_report_of_a_first_run_reads_the_numbers_that_run_recorded(suite_results, rendered_suite):
    """In a first run the history report runs after the others have recorded their numbers: one run on record,
    with every other report's numbers and none of its own."""
    from analysis.report.history import load_suite_history

    results = suite_results("41-suite-history")
    assert results["n_runs"] == 1 and results["moves"] == [] and results["n_numbers"] > 1000
    store = load_suite_history(rendered_suite.parent)
    assert store["run_id"].nunique() == 1 and "41-suite-history" not in set(store["report"])
    assert "40-history" in set(store["report"])  # the InferenceX history is an ordinary report now
    assert {"20-frontier", "50-claim-card-C00"} <= set(store["report"])


def test_history_notebook_as_the_suite_ran_it(suite_results, raw_points):
    from analysis import history

    results = suite_results("40-history")
    assert results["n_groups"] == history.series(raw_points)["group"].nunique() == 184
    assert "tok/s/GPU at concurrency 128: 132 on 2026-05-13 → 629 on 2026-05-17" in results["headline"]
    assert "suite" not in results  # this project's own numbers are 41-suite-history's


def test_latency_notebook_as_the_suite_ran_it(suite_results, raw_points):
    """60-latency over data/processed: the three shipped runs with requests, goodput at the suite's SLO as the
    domain computes it, and every other point counted as summary-only."""
    from analysis import data, goodput
    from analysis.pages import latency as latency_page

    res = suite_results("60-latency")
    assert res["runs_with_requests"] == 3 and res["requests"] == 445
    assert res["summary_only_points"] == len(raw_points) - 3
    assert res["slo"] == goodput.parse_slo(latency_page.DEFAULT_SLO).text()
    table = goodput.goodput(raw_points, data.load_requests(), latency_page.DEFAULT_SLO)
    by_run = table[table["basis"] == "requests"]
    assert sorted(v["met"] for v in res["runs"].values()) == sorted(by_run["met"].astype(int)) == [37, 93, 150]


def test_deepseek_v4_frontier_report_keeps_agentx_and_random_8k1k_apart(suite_results):
    """The suite's V4 family report (published tables): the AgentX frontier and the random 8K/1K ones are separate
    groups, every reading cites a published table, and the fastest point is V4.1 Flash's concurrency-1 AgentX row."""
    results = suite_results("20-frontier-deepseek-v4")
    groups = results["groups"]
    assert "DeepSeek-V4.1-Flash · GB300 NVL72 · fp4 · node · agentx" in groups
    assert "DeepSeek-V4-Flash · GB300 NVL72 · fp4 · node · random-capped · 8k/1k" in groups
    assert {k for v in results["capacity_source_kind"].values() for k in v.values() if k} == {"published-table"}
    fastest = results["fastest_point"]["DeepSeek-V4.1-Flash · GB300 NVL72 · fp4 · node · agentx"]
    assert fastest["tok_s_per_user"] == pytest.approx(1000 / 2.19) and fastest["concurrency"] == 1
    assert "Capacity (agentx):" in results["headline"] and "Capacity (random-capped · 8k/1k):" in results["headline"]


def test_batch_scaling_page_shows_the_model_validation_and_the_roofline_check(suite_results, rendered_suite):
    """10-batch-scaling as the suite runs it (every shipped point): the performance model's leave-one-group-out
    validation in a section of its own, and the roofline form's held-out check beside the linear one, each with the
    numbers the page saved, in the page a reader opens."""
    res = suite_results("10-batch-scaling")
    v = res["model_validation"]
    assert v["n_groups"] == 39 and sum(f["groups"] for f in v["by_family"]) == v["n_groups"]
    assert sum(f["points"] for f in v["by_family"]) == 185
    # median 9.2% / 9.3%, p90 26.7% / 28.3%: every target met by the point estimates
    assert v["targets_met"] == {"median_error_tok_s_per_user": True, "median_error_tok_s_per_gpu": True,
                                "p90_error_tok_s_per_user": True, "p90_error_tok_s_per_gpu": True}
    assert [w["group"].split(" | ")[:2] for w in v["worst_groups"]][:2] == [["DeepSeek-V4.1-Flash", "GB300 NVL72"],
                                                                            ["DeepSeek-R1-0528", "H100 SXM"]]
    assert "is an AgentX run" in v["notes"]  # shown because that group is among the worst
    assert res["roofline_dense_h200_n"] == 6 and res["roofline_dense_h200_max_abs_rel_error_4x_8x"] <= 0.10

    page = (rendered_suite / "10-batch-scaling.html").read_text(encoding="utf-8")
    assert re.search(r"<h2[^>]*>The performance model on configurations left out of its calibration", page)
    body = re.sub(r'src="data:image/[^"]+"', "", page)
    start = body.index("The performance model on configurations left out of its calibration")
    section = body[start:body.index("Every fit, every")]
    assert page.count("data:image/png") >= 1 and "<img" in section  # the predicted-against-measured figure
    seen = html.unescape(re.sub(r"<[^>]+>", "", section))
    assert v["text"] in " ".join(seen.split())  # the summary as computed, escaped on its way in, whole once read
    for w in v["worst_groups"]:
        assert w["group"] in seen
    extrapolation = html.unescape(re.sub(r"<[^>]+>", "", body[body.index("Extrapolation: fitted"):
                                                              body.index("Per-sequence floors")]))
    assert res["roofline_text"] in " ".join(extrapolation.split())
    # the bold headline does not read as the check of every configuration: the MoE serving sweep's miss is in it
    assert ("errors -9.7% to -0.6%; of the 2 other configurations with a batch there, 1 within 10%, the worst a "
            "serving sweep of an MoE at -57.6%.") in res["roofline_text"]
    assert "The first table is the linear form" in extrapolation and "The second table is the roofline form" in \
        extrapolation
