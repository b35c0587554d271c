"""The suite runner: safe pages, an index that merges, atomic and locked runs, a content-hash cache, parallel
workers, in-process execution, dated runs with history, and one shareable file. Tiny notebooks written here keep it
fast; one test runs the real 01-ingest notebook on real logs."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
from conftest import RAW, ROOT
from nbformat.v4 import new_code_cell, new_notebook

from analysis import cli, config, report
from analysis.ingest import ingest, write_outputs
from analysis.report import runs

# Anything a browser would fetch on opening a page (links a reader may click are not loads).
NETWORK_LOAD = r"""\bsrc\s*=\s*["']?(https?:)?//|<link\b|url\(\s*["']?(https?:)?//|@import|<iframe|<object|<embed"""
HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'


def write_notebook(folder: Path, name: str, params: str, *cells: str) -> None:
    nb = new_notebook(cells=[new_code_cell(params + "\nresults_path = None", metadata={"tags": ["parameters"]}),
                             *[new_code_cell(c) for c in cells]])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(folder / f"{name}.ipynb"))


# A report that logs each execution (to count them), draws a figure, reads its input file and saves numbers.
COUNTING = [
    "import matplotlib.pyplot as plt\nfrom pathlib import Path\nfrom analysis.report import save_results\n"
    "Path(log).open('a').write(name + '\\n')",
    "value = float(Path(data).read_text()) if data else 1.0\nplt.plot([1, 2], [value, 2 * value]);",
    "if fail:\n    raise RuntimeError('no points for this group')",
    "save_results({'headline': f'{name} headline {value:g}', 'model': model, 'hardware': 'H200',\n"
    "              'value': value, 'nested': {'draws': [value, 2 * value]}, 'label': 'text is left out'}, results_path)",
]
PARAMS = "name = 'x'\nlog = ''\ndata = ''\nfail = False\nmodel = 'Llama'"


@pytest.fixture
def tiny(tmp_path):
    """A suite of two tiny reports (in-process unless asked for a kernel), each reading its own input file."""
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    write_notebook(nb_dir, "count", PARAMS, *COUNTING)
    (tmp_path / "a.txt").write_text("3")
    (tmp_path / "b.txt").write_text("5")
    log = tmp_path / "executions.log"

    def make_suite(*, fail_b=False, title_a="Report A", model_b="Qwen", executor_a="inprocess") -> Path:
        suite = nb_dir / "suite.yml"
        suite.write_text(f"""title: Tiny suite
notebooks: .
reports:
  - notebook: count
    slug: a
    title: {json.dumps(title_a)}
    executor: {executor_a}
    inputs: [../a.txt]
    parameters: {{name: a, log: "{log}", data: "{tmp_path / 'a.txt'}"}}
  - notebook: count
    slug: b
    title: Report B
    executor: inprocess
    inputs: [../b.txt]
    parameters: {{name: b, log: "{log}", data: "{tmp_path / 'b.txt'}", fail: {str(fail_b).lower()}, model: {json.dumps(model_b)}}}
""")
        return suite

    def executions() -> list[str]:
        return log.read_text().split() if log.exists() else []

    return make_suite, executions, tmp_path / "reports"


def csp_of(doc: str) -> str | None:
    """The Content-Security-Policy of a page's <head> (attribute order and quoting as any serialiser writes them)."""
    from html.parser import HTMLParser

    found = []

    class Meta(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
                found.append(a.get("content"))

    Meta().feed(doc.split("</head>")[0])
    return found[0] if found else None


def pages_of(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.html") if not p.is_symlink() and "latest" not in p.parts)


# --- 1. HTML safety, titles, links, footers ---------------------------------------------------------

@pytest.fixture
def ingest_suite(tmp_path, monkeypatch):
    processed = tmp_path / "processed"
    write_outputs(ingest([RAW / "h200"]), processed)
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    (nb_dir / "01-ingest.ipynb").write_text((config.NOTEBOOKS_DIR / "01-ingest.ipynb").read_text())
    write_notebook(nb_dir, "99-broken", "", "raise RuntimeError('no points for this group')")
    suite_file = nb_dir / "suite.yml"
    suite_file.write_text(f"""reports:
  - notebook: 01-ingest
    title: What was read
    parameters: {{processed_dir: "{processed}"}}
  - notebook: 99-broken
    title: A report that fails
""")
    monkeypatch.setattr(config, "NOTEBOOKS_DIR", nb_dir)
    return suite_file, processed


@pytest.mark.notebook
def test_suite_writes_reports_and_index_and_fails_loudly(ingest_suite, tmp_path):
    suite, processed = ingest_suite
    out = tmp_path / "reports"
    code = report.run_suite(suite, out=out, date="2026-01-01")
    assert code == 1  # one notebook failed
    index = (out / "index.html").read_text()
    assert 'href="2026-01-01/01-ingest.html"' in index
    assert "What was read" in index
    assert index.count(str(processed)) == 1  # one inputs line, not a column
    assert re.search(r'class="ok">rendered', index) and re.search(r'class="failed">failed', index)
    assert "RuntimeError: no points for this group" in index
    page = (out / "2026-01-01" / "01-ingest.html").read_text()
    assert "data:image/png;base64," in page  # embedded figure
    assert "Traceback" not in page
    assert "inventory.load_processed" not in page  # code hidden
    assert "cdnjs" not in page and "require.min.js" not in page and "<script" not in page  # opens offline
    assert "89 points read from 2 files" in page
    assert "<title>What was read</title>" in page
    assert '<a href="index.html">' in page and "Run 2026-01-01" in page
    assert "perfclaims report --config" in page and "--only 01-ingest --date 2026-01-01" in page


def _safe_page(doc: str, where) -> None:
    assert csp_of(doc).startswith("default-src 'none'; img-src data:; style-src 'unsafe-inline'"), where
    assert "<script" not in doc.lower(), where
    assert not re.search(NETWORK_LOAD, doc), where


def test_every_page_has_a_csp_and_no_script(tiny):
    """(A page rendered under papermill is checked the same way in the parallel-run test, which runs one.)"""
    make_suite, _, out = tiny
    report.run_suite(make_suite(), out=out, date="2026-03-01")
    found = pages_of(out)
    assert {p.name for p in found} == {"index.html", "a.html", "b.html"}
    for page in found:
        _safe_page(page.read_text(), page)
    a = (out / "2026-03-01" / "a.html").read_text()
    assert "<title>Report A: Llama on H200</title>" in a  # suite title, model and hardware from results()
    b = (out / "2026-03-01" / "b.html").read_text()
    assert "<title>Report B: Qwen on H200</title>" in b and '<a href="index.html">' in b


def test_hostile_title_params_and_results_are_escaped_in_the_index(tiny):
    make_suite, _, out = tiny
    report.run_suite(make_suite(title_a=HOSTILE, model_b=HOSTILE), out=out, date="2026-03-01")
    for index in (out / "index.html", out / "2026-03-01" / "index.html"):
        doc = index.read_text()
        assert "<script" not in doc and "<img" not in doc, index
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc  # shown as text, twice: title and model
        assert doc.count("&lt;img src=x onerror=alert(2)&gt;") >= 2
    page = (out / "2026-03-01" / "a.html").read_text()
    assert "<script" not in page and "<title>&lt;script&gt;" in page


def test_a_notebook_can_title_its_own_index_entry(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    write_notebook(nb_dir, "t", "", "from analysis.report import save_results\n"
                   "save_results({'title': 'Llama-3 on B200 <b>', 'model': 'Llama-3', 'hardware': 'B200'}, results_path)")
    (nb_dir / "suite.yml").write_text("notebooks: .\nreports:\n  - notebook: t\n    title: Suite title\n"
                                      "    executor: inprocess\n")
    report.run_suite(nb_dir / "suite.yml", out=tmp_path / "r", date="2026-03-01")
    index = (tmp_path / "r" / "index.html").read_text()
    assert ">Llama-3 on B200 &lt;b&gt;</a>" in index and "Suite title" not in index
    assert '<span class="mh">Llama-3 · B200</span>' in index
    page = (tmp_path / "r" / "2026-03-01" / "t.html").read_text()
    assert "<title>Llama-3 on B200 &lt;b&gt;</title>" in page


# --- 2. atomic, locked, mergeable runs ---------------------------------------------------------------

def test_only_merges_into_the_existing_index(tiny):
    make_suite, executions, out = tiny
    suite = make_suite()
    report.run_suite(suite, out=out, date="2026-03-01")
    (Path(out).parent / "b.txt").write_text("6")
    report.run_suite(suite, out=out, date="2026-03-01", only=["b"])
    index = (out / "index.html").read_text()
    assert 'href="2026-03-01/a.html"' in index and 'href="2026-03-01/b.html"' in index
    assert "a headline 3" in index and "b headline 6" in index
    assert sorted(executions()) == ["a", "b", "b"]
    # a new date with --only: the other report keeps its row, marked as not rerun
    report.run_suite(suite, out=out, date="2026-03-02", only=["b"], force=True)
    index = (out / "index.html").read_text()
    assert 'href="2026-03-02/a.html"' in index and "not rerun; from 2026-03-01" in index
    assert (out / "2026-03-02" / "a.html").is_file()


def test_failed_rerun_clears_the_stale_results(tiny):
    make_suite, _, out = tiny
    assert report.run_suite(make_suite(), out=out, date="2026-03-01") == 0
    assert "b headline 5" in (out / "index.html").read_text()
    assert report.run_suite(make_suite(fail_b=True), out=out, date="2026-03-01") == 1
    index = (out / "index.html").read_text()
    assert "b headline" not in index and "RuntimeError: no points for this group" in index
    assert not (out / "2026-03-01" / "b.results.json").exists()
    page = (out / "2026-03-01" / "b.html").read_text()  # the page shows the failure, not the old run
    assert "no points for this group" in page and "b headline" not in page
    assert "a headline 3" in index  # the other report is untouched
    assert not list(out.rglob(".*.tmp-*")) and not (out / "2026-03-01" / ".work").exists()


def test_a_second_run_on_the_same_folder_is_refused(tiny, capsys):
    make_suite, executions, out = tiny
    suite = make_suite()
    out.mkdir()
    with runs.run_lock(out):
        with pytest.raises(runs.RunLocked, match="another run .* is writing to"):
            report.run_suite(suite, out=out, date="2026-03-01")
        assert cli.main(["report", "--config", str(suite), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "another run" in err
    assert executions() == []
    assert report.run_suite(suite, out=out, date="2026-03-01") == 0  # released with the holder


def test_unusable_out_is_one_line_and_exit_2(tiny, tmp_path, capsys):
    make_suite, _, _ = tiny
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for bad in (a_file, a_file / "reports"):
        assert cli.main(["report", "--config", str(make_suite()), "--out", str(bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--out" in err and "Traceback" not in err
    assert cli.main(["report", "--config", str(make_suite()), "--out", str(tmp_path / "r"), "--date", "2026-13-01"]) == 2
    assert "YYYY-MM-DD" in capsys.readouterr().err


# --- 3. cache, parallel, in-process ------------------------------------------------------------------

def test_cache_skips_unchanged_reports_and_reruns_only_the_dependent_one(tiny):
    make_suite, executions, out = tiny
    suite = make_suite()
    assert report.run_suite(suite, out=out, date="2026-03-01") == 0
    assert sorted(executions()) == ["a", "b"]
    lines: list[str] = []
    assert report.run_suite(suite, out=out, date="2026-03-02", progress=lines.append) == 0
    assert sorted(executions()) == ["a", "b"]  # nothing executed
    index = (out / "index.html").read_text()
    assert index.count("unchanged since 2026-03-01") == 2
    assert (out / "2026-03-02" / "a.html").is_file() and "a headline 3" in index
    assert any("[a] unchanged since 2026-03-01" in line for line in lines)
    (out.parent / "a.txt").write_text("4")  # one input changes: only its report reruns
    assert report.run_suite(suite, out=out, date="2026-03-03") == 0
    assert sorted(executions()) == ["a", "a", "b"]
    index = (out / "index.html").read_text()
    assert "a headline 4" in index and "unchanged since 2026-03-01" in index
    assert report.run_suite(suite, out=out, date="2026-03-03", force=True) == 0
    assert sorted(executions()) == ["a", "a", "a", "b", "b"]


def test_a_changed_notebook_or_parameter_reruns(tiny):
    make_suite, executions, out = tiny
    report.run_suite(make_suite(), out=out, date="2026-03-01")
    report.run_suite(make_suite(model_b="Mixtral"), out=out, date="2026-03-02")
    assert sorted(executions()) == ["a", "b", "b"]


def test_reports_run_in_parallel_with_one_progress_line_each(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    write_notebook(nb_dir, "sleep", "name = 'x'", "import time\nstart = time.time()\ntime.sleep(2)",
                   "from analysis.report import save_results\n"
                   "save_results({'start': start, 'end': time.time()}, results_path)")
    entries = "".join(f"  - notebook: sleep\n    slug: s{i}\n    executor: {ex}\n    parameters: {{name: s{i}}}\n"
                      for i, ex in enumerate(["inprocess", "inprocess", "papermill"]))
    (nb_dir / "suite.yml").write_text(f"notebooks: .\nreports:\n{entries}")
    lines: list[str] = []
    assert report.run_suite(nb_dir / "suite.yml", out=tmp_path / "r", date="2026-03-01", jobs=3,
                            progress=lines.append) == 0
    spans = [report.load_results(tmp_path / "r" / "2026-03-01" / f"s{i}.results.json") for i in range(3)]
    assert max(s["start"] for s in spans) < min(s["end"] for s in spans)  # all three were running at once
    assert sorted(re.findall(r"^\[\d/3\] (s\d) ok", "\n".join(lines), re.M)) == ["s0", "s1", "s2"]
    for i in range(3):  # s2 ran in its own kernel under papermill: its page is as safe as the in-process ones
        _safe_page((tmp_path / "r" / "2026-03-01" / f"s{i}.html").read_text(), f"s{i}")


def test_inprocess_runs_do_not_leak_matplotlib_state_or_names(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    write_notebook(nb_dir, "dirty", "", "import matplotlib as mpl, matplotlib.pyplot as plt\nleaked = 1\n"
                   "mpl.rcParams['lines.linewidth'] = 9\nplt.figure()\n"
                   "import pandas as pd\npd.set_option('display.max_rows', 3)")
    write_notebook(nb_dir, "check", "", "import matplotlib as mpl, matplotlib.pyplot as plt\n"
                   "assert mpl.rcParams['lines.linewidth'] != 9\nassert not plt.get_fignums()\n"
                   "assert 'leaked' not in dir()\nimport pandas as pd\nassert pd.get_option('display.max_rows') == 60\n"
                   "from analysis.report import save_results\nsave_results({'clean': True}, results_path)")
    (nb_dir / "suite.yml").write_text("notebooks: .\nreports:\n" + "".join(
        f"  - notebook: {n}\n    executor: inprocess\n" for n in ("dirty", "check")))
    assert report.run_suite(nb_dir / "suite.yml", out=tmp_path / "r", date="2026-03-01", jobs=1) == 0
    assert json.loads((tmp_path / "r" / "2026-03-01" / "check.results.json").read_text()) == {"clean": True}


def test_a_figure_that_fails_to_draw_fails_its_report_in_process_as_in_a_kernel(tmp_path):
    """The inline backend draws a cell's figures after the cell ran: a figure that cannot be drawn (a log axis with
    nothing positive on it) leaves the cell a success and its traceback in the page. The report fails, as papermill's
    kernel run fails it, instead of publishing the traceback as a finished page."""
    from analysis.report.execute import run_inprocess

    src = tmp_path / "n.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
        "ax.scatter([100], [0.03], transform=ax.get_xaxis_transform())\n"
        "ax.set_xscale('log')\nax.set_yscale('log')\nax.set_xlim(10, 1000)\nax.set_title('t')"),
        new_code_cell("after = 1")]), str(src))
    nb, error = run_inprocess(src, {}, tmp_path)
    assert error == "ValueError: Data cannot be log-scaled because all values are <= 0."
    assert not nb.cells[1].get("outputs") and nb.cells[1].get("execution_count") is None  # it stopped there


def test_a_report_that_kills_its_worker_fails_alone(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    write_notebook(nb_dir, "crash", "", "import os\nos._exit(3)")
    write_notebook(nb_dir, "fine", "name = ''", "import time\ntime.sleep(0.5)\n"
                   "from analysis.report import save_results\nsave_results({'headline': name}, results_path)")
    (nb_dir / "suite.yml").write_text("notebooks: .\nreports:\n  - notebook: crash\n    executor: inprocess\n" + "".join(
        f"  - notebook: fine\n    slug: fine{i}\n    executor: inprocess\n    parameters: {{name: f{i}}}\n"
        for i in range(3)))
    assert report.run_suite(nb_dir / "suite.yml", out=tmp_path / "r", date="2026-03-01", jobs=2) == 1
    jobs = {j["slug"]: j for j in json.loads((tmp_path / "r" / "2026-03-01" / "run.json").read_text())["jobs"]}
    assert jobs["crash"]["status"] == "failed" and "stopped" in jobs["crash"]["error"]
    assert [jobs[f"fine{i}"]["status"] for i in range(3)] == ["ok", "ok", "ok"]


def test_render_notebook_renders_one_page_in_process(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    write_notebook(nb_dir, "count", PARAMS, *COUNTING)
    (tmp_path / "in.txt").write_text("7")
    html_path = tmp_path / "out" / "card.html"
    results = report.render_notebook(nb_dir / "count.ipynb", {"name": "c", "data": str(tmp_path / "in.txt"),
                                                             "log": str(tmp_path / "log")}, html_path, title="Card")
    assert results["value"] == 7.0 and results["nested"] == {"draws": [7.0, 14.0]}
    page = html_path.read_text()
    assert "<title>Card: Llama on H200</title>" in page and "data:image/png;base64," in page
    assert "<script" not in page and csp_of(page).startswith("default-src 'none'")
    start = time.monotonic()  # warm: no kernel, no imports left to pay
    report.render_notebook(nb_dir / "count.ipynb", {"name": "d", "log": str(tmp_path / "log")}, html_path)
    assert time.monotonic() - start < 2.0
    with pytest.raises(report.NotebookError, match="no points for this group"):
        report.render_notebook(nb_dir / "count.ipynb", {"fail": True, "log": str(tmp_path / "log")}, html_path)
    assert "no points for this group" in html_path.read_text()


@pytest.mark.notebook
def test_render_notebook_renders_a_real_claim_card(tmp_path):
    results = report.render_notebook("50-claim-card", {"claim": "C00"}, tmp_path / "C00.html", title="Claim card C00")
    assert results["claim"] == "C00" and results["headline"].startswith("[same-model evidence; not reproduced] C00")
    page = (tmp_path / "C00.html").read_text()
    # The card's own title names model and hardware (DeepSeek V4.1 Flash on GB300 NVL72); it wins over the suite's.
    assert f"<title>{results['title']}</title>" in page and results["model"] in results["title"]
    assert "<script" not in page


# --- 4. dated runs, latest, history, share -----------------------------------------------------------

def test_dated_runs_latest_and_earlier_runs(tiny):
    make_suite, _, out = tiny
    suite = make_suite()
    report.run_suite(suite, out=out, date="2026-03-05")
    report.run_suite(suite, out=out, date="2026-03-01")  # a backfill: older than the newest
    assert (out / "latest").resolve() == (out / "2026-03-05").resolve()
    assert (out / "latest" / "a.html").is_file()
    index = (out / "index.html").read_text()
    assert "Run 2026-03-05" in index and 'href="2026-03-01/index.html"' in index
    old = (out / "2026-03-01" / "index.html").read_text()
    assert 'href="a.html"' in old and 'href="../2026-03-05/index.html"' in old
    footer = (out / "2026-03-05" / "b.html").read_text().split('<footer class="pc-footer">')[1]
    for part in ("Run 2026-03-05", "inputs hash", "perfclaims 0.1.0+src.", "commit", "--only b --date 2026-03-05"):
        assert part in footer


def test_history_appends_one_part_file_per_run(tiny):
    make_suite, _, out = tiny
    suite = make_suite()
    report.run_suite(suite, out=out, date="2026-03-01")
    (out.parent / "a.txt").write_text("4")
    report.run_suite(suite, out=out, date="2026-03-02")
    parts = sorted((out / "history").glob("*.parquet"))
    assert len(parts) == 2
    history = report.load_suite_history(out)
    assert list(history.columns)[:8] == ["run_id", "run_date", "report", "key", "value", "inputs_hash",
                                         "code_version", "commit"]
    assert history["run_id"].nunique() == 2
    a = history[(history.report == "a") & (history.key == "value")]
    assert list(a["run_date"]) == ["2026-03-01", "2026-03-02"] and list(a["value"]) == [3.0, 4.0]
    assert a["inputs_hash"].nunique() == 2  # the change came from the inputs ...
    assert a["code_version"].nunique() == 1  # ... not from the code
    b = history[(history.report == "b")]
    assert set(b["key"]) == {"value", "nested.draws[0]", "nested.draws[1]"}  # text left out
    # b did not change in the second run: its numbers are on record from the first, not recorded twice
    assert list(b[b.key == "nested.draws[1]"]["value"]) == [10.0] and set(b["run_date"]) == {"2026-03-01"}
    report.run_suite(suite, out=out, date="2026-03-03")  # nothing changed: nothing executed, nothing recorded
    assert len(sorted((out / "history").glob("*.parquet"))) == 2
    assert report.load_suite_history(out.parent / "nothing").empty


def test_share_writes_one_offline_file_with_every_report(tiny, tmp_path, capsys):
    make_suite, _, out = tiny
    report.run_suite(make_suite(), out=out, date="2026-03-01")
    target = tmp_path / "share.html"
    assert cli.main(["share", "--reports", str(out), "--out", str(target)]) == 0
    assert str(target) in capsys.readouterr().out
    doc = target.read_text()
    assert 'id="r-a"' in doc and 'id="r-b"' in doc and 'href="#r-a"' in doc and 'href="#r-b"' in doc
    assert "a headline 3" in doc and "b headline 5" in doc
    assert doc.count("data:image/png;base64,") >= 2
    assert csp_of(doc).startswith("default-src 'none'") and "<script" not in doc.lower()
    assert not re.search(NETWORK_LOAD, doc)
    assert len(doc) < 2 * (out / "2026-03-01" / "a.html").stat().st_size


def test_cli_version_and_share_without_runs(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0 and re.match(r"perfclaims \d+\.\d+", capsys.readouterr().out)
    assert cli.main(["share", "--reports", str(tmp_path)]) == 2
    assert "no report run found" in capsys.readouterr().err


def test_missing_suite_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="suite file not found"):
        report.run_suite(tmp_path / "nope.yml", out=tmp_path)


def test_a_second_suite_names_its_own_data_folder(tmp_path):
    """`--config` with suite-level parameters: given only to notebooks that take them, paths relative to the file."""
    nb_dir = tmp_path / "suite2"
    nb_dir.mkdir()
    write_notebook(nb_dir, "reads", "points_path = None",
                   "from analysis.report import save_results\nfrom pathlib import Path\n"
                   "save_results({'n': len(Path(points_path).read_text().split())}, results_path)")
    write_notebook(nb_dir, "other", "", "from analysis.report import save_results\nsave_results({}, results_path)")
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "points.txt").write_text("1 2 3")
    (nb_dir / "suite.yml").write_text("title: Fleet B\nnotebooks: .\nparameters: {points_path: ../fleet/points.txt}\n"
                                      "reports:\n  - notebook: reads\n  - notebook: other\n    executor: inprocess\n")
    assert report.run_suite(nb_dir / "suite.yml", out=tmp_path / "r", date="2026-03-01") == 0
    assert json.loads((tmp_path / "r" / "2026-03-01" / "reads.results.json").read_text()) == {"n": 3}
    manifest = json.loads((tmp_path / "r" / "2026-03-01" / "run.json").read_text())
    assert str(tmp_path / "fleet" / "points.txt") in manifest["inputs"]
    assert [j["parameters"] for j in manifest["jobs"]] == [{"points_path": str(tmp_path / "fleet" / "points.txt")}, {}]


def test_the_shipped_suite_lists_existing_notebooks_and_inputs():
    suite = report.read_suite(config.SUITE_FILE)
    assert len({j.name for j in suite.jobs}) == len(suite.jobs)
    for job in suite.jobs:
        assert job.notebook_path.is_file(), job.notebook
        for path in job.inputs:  # project data, or (the history report) the suite-history store
            assert path.is_relative_to(ROOT / "data") or path == ROOT / "reports" / "history", path
    cards = [j for j in suite.jobs if j.notebook == "50-claim-card"]
    assert cards and all(j.executor == "inprocess" for j in cards)
    for card in cards:  # editing one claim reruns only its card
        claim_files = [p for p in card.inputs if p.parent == ROOT / "data" / "claims"]
        assert claim_files == [ROOT / "data" / "claims" / f"{card.parameters['claim']}.yaml"]
        assert claim_files[0].is_file()


# --- Makefile ------------------------------------------------------------------------------------

def test_make_clean_removes_only_what_the_project_generated(tmp_path):
    proj = tmp_path / "proj"
    (proj / "data" / "processed").mkdir(parents=True)
    (proj / "reports" / "2026-03-01").mkdir(parents=True)
    (proj / "reports" / "history").mkdir()
    (proj / "Makefile").write_text((ROOT / "Makefile").read_text())
    generated = ["data/processed/points.parquet", "data/processed/requests.parquet", "data/processed/files.csv",
                 "data/processed/quarantine.csv", "reports/index.html", "reports/2026-03-01/a.html",
                 "reports/history/x.parquet"]
    mine = ["data/processed/my notes.txt", "reports/my: summary.html", "reports/README.md"]
    for rel in generated + mine:
        (proj / rel).write_text("x")
    (proj / "reports" / "latest").symlink_to("2026-03-01")
    subprocess.run(["make", "-s", "clean"], cwd=proj, check=True, capture_output=True)
    assert [rel for rel in generated if (proj / rel).exists()] == []
    assert not (proj / "reports" / "latest").is_symlink()
    assert all((proj / rel).exists() for rel in mine)


def test_the_scheduled_workflow_runs_make_report_and_keeps_the_reports():
    import yaml

    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "report.yml").read_text())
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["schedule"][0]["cron"].count(" ") == 4
    steps = flow["jobs"]["report"]["steps"]
    assert any(s.get("run") == "make report" for s in steps)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["with"]["path"].splitlines()[0] == "reports/" and upload.get("if") == "always()"


def test_the_page_export_adds_alt_text_and_focus_as_nbconvert_does_without_reparsing_the_page(tmp_path):
    """nbconvert's HTML exporter ends by parsing the page with BeautifulSoup to give each image without alt text a
    placeholder and each output area a tabindex; the export does the same two edits on the template's markup. A
    notebook with a figure, an image that has its own alt text, and an output that prints an image tag as text."""
    from analysis.report import execute

    nb = new_notebook(cells=[new_code_cell(
        "import matplotlib.pyplot as plt\nfrom IPython.display import HTML, display\n"
        "plt.plot([1, 2]); plt.show()\n"
        "display(HTML('<img alt=\"own words\" src=\"data:image/png;base64,iVBORw0KGgo=\">'))\n"
        "print('<img src=x>')")])
    src = tmp_path / "figure.ipynb"
    nbformat.write(nb, str(src))
    execute.render_notebook(src, None, tmp_path / "figure.html")
    page = (tmp_path / "figure.html").read_text(encoding="utf-8")
    assert page.count("<img") == 2
    assert page.count(f'alt="{execute._NO_ALT}"') == 1 and 'alt="own words"' in page
    assert "&lt;img src=x&gt;" in page  # printed text stays text
    outputs = re.findall(r'<div class="[^"]*\bjp-OutputArea-output\b[^"]*"[^>]*>', page)
    assert len(outputs) == 3 and all('tabindex="0"' in d for d in outputs)
    assert execute._accessible('<img alt="a" src="b">') == '<img alt="a" src="b">'  # idempotent on a tagged image
