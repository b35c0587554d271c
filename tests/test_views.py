"""Views: a report's cache key hashes only the rows of the points table its page reads.

Each view must hold every row its page reads (the page gives the same numbers from the view as from the whole
table), and rows outside it must not matter (changing them leaves the numbers as they were); the runner then
re-executes, after a change to one model's points, only the reports whose views hold them.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import ROOT

from analysis import claims, config, data, report
from analysis.report import runs, views
from analysis.report.suite import read_suite
from analysis.report.views import ViewHasher


@pytest.fixture(scope="module")
def points() -> pd.DataFrame:
    return data.load_points(config.POINTS_FILE)


def _view(job, points):
    return views.rows_read(job.view, points, {**job.defaults, **job.parameters})


def _jobs():
    return {j.name: j for j in read_suite(config.SUITE_FILE).jobs}


def _plain(results) -> str:
    return json.dumps(results, sort_keys=True, default=str)


def _perturbed_outside(points: pd.DataFrame, view: pd.DataFrame) -> pd.DataFrame:
    """Every row outside ``view`` with its speeds doubled and its latencies halved: a page that read them would move."""
    out = points.copy()
    outside = ~out.index.isin(view.index)
    for col in ("tok_s_per_user", "tok_s_per_gpu", "output_tok_s", "total_tok_s"):
        out.loc[outside, col] = out.loc[outside, col] * 2.0
    for col in [c for c in out.columns if c.startswith(("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"))]:
        out.loc[outside, col] = out.loc[outside, col] / 2.0
    return out


def test_every_report_takes_its_rows_from_its_page(points):
    jobs = _jobs()
    assert {j.view for j in jobs.values()} == {"ingest", "batch_scaling", "frontier", "precision_scope", "history",
                                              "suite_history", "claim_card", "latency"}
    rows = {name: _view(job, points) for name, job in jobs.items()}
    selecting = {"20-frontier", "20-frontier-8k1k", "30-precision-scope", "40-history", "50-claim-card-C00"}
    for name in selecting:
        assert 0 < len(rows[name]) < len(points), name
    # the inventory and the batch model (all models by default) read every row; the suite history none
    assert len(rows["01-ingest"]) == len(rows["10-batch-scaling"]) == len(points)
    assert rows["41-suite-history"].empty
    # the frontier page's rows are its selection: one model, one length pair
    fr = rows["20-frontier-8k1k"]
    assert set(fr["model"]) == {"DeepSeek-R1-0528"} and set(zip(fr["isl"], fr["osl"])) == {(8192.0, 1024.0)}


PAGE_MODULES = sorted(p.stem for p in (ROOT / "analysis" / "pages").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("name", PAGE_MODULES)
def test_every_page_module_keeps_the_contract(name):
    """build(points, **params) and rows_read(points, **params) with the points table first, and a page object
    with results()."""
    import importlib
    import inspect

    module = importlib.import_module(f"analysis.pages.{name}")
    build = getattr(module, "build", None)
    assert callable(build), f"analysis/pages/{name}.py has no build(points, **params)"
    assert next(iter(inspect.signature(build).parameters)) == "points"
    rows = getattr(module, "rows_read", None) or views.PENDING_ROWS_READ.get(name)
    assert callable(rows) and next(iter(inspect.signature(rows).parameters)) == "points"
    built = inspect.signature(build).return_annotation
    page_class = getattr(module, built, None) if isinstance(built, str) else built
    assert page_class is not None and callable(getattr(page_class, "results", None)), name


def test_a_page_name_that_is_no_module_is_a_clear_error(tmp_path):
    suite = tmp_path / "suite.yml"
    suite.write_text(f"notebooks: {ROOT / 'notebooks'}\nreports:\n  - notebook: 20-frontier\n    page: frontiers\n")
    with pytest.raises(ValueError, match="page 'frontiers' is not a module of analysis/pages"):
        read_suite(suite)
    suite.write_text(f"notebooks: {ROOT / 'notebooks'}\nreports:\n  - notebook: 20-frontier\n    points: frontier\n")
    with pytest.raises(ValueError, match="'points' is gone"):
        read_suite(suite)


@pytest.mark.parametrize("name", ["20-frontier", "20-frontier-8k1k", "30-precision-scope", "40-history"])
def test_a_page_reads_nothing_outside_its_view(name, points, tmp_path):
    """Built through the page contract alone: the page module's build with the notebook's parameters it names."""
    import importlib
    import inspect

    job = _jobs()[name]
    p = {**job.defaults, **job.parameters}
    page = importlib.import_module(f"analysis.pages.{job.view}")
    named = inspect.signature(page.build).parameters

    def build(pts):
        return page.build(pts, **{k: v for k, v in p.items() if k in named and k != "points"}).results()

    view = _view(job, points)
    whole = _plain(build(points))
    if name.startswith("20-frontier"):  # the cheapest page: also from the view alone (everything it reads is there)
        assert _plain(build(view)) == whole
    assert _plain(build(_perturbed_outside(points, view))) == whole  # nothing outside the view matters


@pytest.mark.parametrize("claim_id", ["C00", "C14", "C18"])
def test_a_claim_card_reads_nothing_outside_its_view(claim_id, points):
    claim = claims.load_claim(claim_id)
    view = claims.relevant_points(claim, points)
    whole = _plain(claims.claim_card(claim, points).results())
    assert _plain(claims.claim_card(claim, _perturbed_outside(points, view)).results()) == whole
    # and the view is not everything: the card of a DeepSeek claim does not hold the Kimi or gpt-oss rows
    assert len(view) < len(points)


def test_view_digest_moves_only_with_the_rows_of_the_view(points, tmp_path):
    jobs = _jobs()
    frontier_job, kimi_card = jobs["20-frontier"], jobs["50-claim-card-C14"]
    path = tmp_path / "points.parquet"
    points.to_parquet(path)
    before = {j.name: ViewHasher().digest(path, j.view, {**j.defaults, **j.parameters})
              for j in (frontier_job, kimi_card)}
    changed = points.copy()
    kimi = changed["model"].astype(str).str.startswith("Kimi")
    assert kimi.any()
    changed.loc[kimi.idxmax(), "ttft_ms_p50"] = changed.loc[kimi.idxmax(), "ttft_ms_p50"] * 1.01
    changed.to_parquet(path)
    after = {j.name: ViewHasher().digest(path, j.view, {**j.defaults, **j.parameters})
             for j in (frontier_job, kimi_card)}
    assert after["20-frontier"] == before["20-frontier"]
    assert after["50-claim-card-C14"] != before["50-claim-card-C14"]


def test_a_changed_point_reruns_only_the_reports_whose_view_holds_it(points, tmp_path):
    """Two claim cards over a copy of the points table: a Kimi point changes → only the Kimi card re-executes;
    a DeepSeek-R1 point changes → only the DeepSeek card."""
    pts_file = tmp_path / "points.parquet"
    points.to_parquet(pts_file)
    suite = tmp_path / "suite.yml"
    suite.write_text(f"""title: two cards
notebooks: {ROOT / 'notebooks'}
parameters: {{points_path: {pts_file}}}
reports:
  - notebook: 50-claim-card
    title: "Claim card {{claim}}"
    foreach: claims
    executor: inprocess
    inputs: [{pts_file}, {ROOT / 'data' / 'specs'}, "{ROOT / 'data' / 'claims'}/{{claim}}.yaml"]
""")
    out = tmp_path / "reports"
    only = ["50-claim-card-C00", "50-claim-card-C14"]

    def statuses(date):
        assert report.run_suite(suite, out=out, only=only, date=date) == 0
        manifest = runs.read_manifest(out / date)
        return {j["slug"]: j["status"] for j in manifest["jobs"] if j["slug"] in only}

    assert statuses("2026-01-01") == {"50-claim-card-C00": "ok", "50-claim-card-C14": "ok"}
    assert statuses("2026-01-02") == {"50-claim-card-C00": "unchanged", "50-claim-card-C14": "unchanged"}
    changed = points.copy()
    kimi = changed.index[changed["model"].astype(str).str.startswith("Kimi")][0]
    changed.loc[kimi, "tok_s_per_user"] *= 1.01
    changed.to_parquet(pts_file)
    assert statuses("2026-01-03") == {"50-claim-card-C00": "unchanged", "50-claim-card-C14": "ok"}
    kimi_view = claims.relevant_points(claims.load_claim("C14"), changed).index
    deepseek = changed.index[(changed["model"] == "DeepSeek-R1-0528") & ~changed.index.isin(kimi_view)][0]
    changed.loc[deepseek, "tok_s_per_user"] *= 1.01
    changed.to_parquet(pts_file)
    assert statuses("2026-01-04") == {"50-claim-card-C00": "ok", "50-claim-card-C14": "unchanged"}


def test_claim_card_rows_come_from_its_own_rows_read_once_it_has_one(points, monkeypatch):
    """Until pages/claim_card.py offers rows_read the runner reads the claim's relevant points; then its own."""
    from analysis.pages import claim_card

    job = _jobs()["50-claim-card-C14"]
    params = {**job.defaults, **job.parameters}
    relevant = claims.relevant_points(claims.load_claim("C14"), points)
    if not hasattr(claim_card, "rows_read"):
        assert views.rows_read("claim_card", points, params).index.equals(relevant.index)
    monkeypatch.setattr(claim_card, "rows_read", lambda pts, *, claim=None: pts.head(3), raising=False)
    assert views.rows_read("claim_card", points, params).index.equals(points.head(3).index)
