"""Every rendered report opened in a real browser at 1,400 px: a real title, a link back to the index, no table wider
than the window, no console error, and nothing fetched but the page itself (``file:``) and inline ``data:`` URIs.

Playwright drives Debian's chromium (``apt-get install chromium``; ``.ci/run`` installs it). Playwright's own
browser download is never used. Where no chromium exists the tests are skipped with a message. The suite is
rendered once per test session with the suite runner (conftest's ``rendered_suite``, shared with the notebook tests),
and each page is opened once, in one tab; the checks read what was seen.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from analysis import config, report

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
    tab.wait_for_timeout(100)  # late console messages (fonts, scripts) arrive after load
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
