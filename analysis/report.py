"""Run the notebook suite under papermill and publish HTML reports with an index.

The suite is listed in ``notebooks/suite.yml``. Each entry runs once per parameter set; the executed notebook
is converted to HTML with the code hidden; ``index.html`` links every report with its title, parameters,
inputs and status. A notebook that fails is marked failed in the index and the others are still written.

Notebooks hand numbers back through :func:`save_results` (a JSON file named by the ``results_path``
parameter), which the index and the tests read.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import html
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analysis import config, text


def _jsonable(value: Any):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "to_dict"):
        return _jsonable(value.to_dict())
    if isinstance(value, Path):
        return str(value)
    return value


def save_results(results: dict, path: str | Path | None) -> None:
    """Write the numbers a notebook computed to ``path`` (JSON); nothing when ``path`` is None."""
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_jsonable(results), indent=2, sort_keys=True))


def load_results(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


# --- the suite -------------------------------------------------------------------------------------

TEMPLATE_DIR = Path(__file__).parent / "templates"


@dataclass
class Job:
    """One notebook run: which notebook, its parameters, and where its outputs go."""

    notebook: str
    title: str
    parameters: dict = field(default_factory=dict)
    slug: str = ""
    status: str = "pending"
    error: str = ""
    seconds: float = 0.0
    results: dict = field(default_factory=dict)

    @property
    def html_name(self) -> str:
        return f"{self.slug or self.notebook}.html"


def load_suite(path: Path) -> list[Job]:
    """Jobs from the suite file; an entry with ``foreach: claims`` expands to one job per registry claim."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: suite file not found")
    doc = yaml.safe_load(path.read_text()) or {}
    jobs: list[Job] = []
    for i, entry in enumerate(doc.get("reports") or []):
        if not isinstance(entry, dict) or "notebook" not in entry:
            raise ValueError(f"{path}: reports[{i}] needs a 'notebook'")
        params = dict(entry.get("parameters") or {})
        title = entry.get("title", entry["notebook"])
        if entry.get("foreach") == "claims":
            for claim_id in _claim_ids():
                jobs.append(Job(entry["notebook"], title.format(claim=claim_id), {**params, "claim": claim_id},
                                slug=f"{entry['notebook']}-{claim_id}"))
        else:
            jobs.append(Job(entry["notebook"], title, params, slug=entry.get("slug", entry["notebook"])))
    return jobs


def _claim_ids() -> list[str]:
    try:
        from analysis import claims
    except ImportError:
        return []
    return list(claims.claim_ids())


def to_html(notebook_path: Path, html_path: Path) -> None:
    """Self-contained HTML with the code hidden and nothing loaded from the network at view time."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook_path), as_version=4)
    exporter = HTMLExporter(
        template_name="perfclaims",
        extra_template_basedirs=[str(TEMPLATE_DIR)],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
    )
    body, _ = exporter.from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")


def run_job(job: Job, run_dir: Path) -> Job:
    """Execute one notebook under papermill and convert it; failures are recorded, never raised."""
    import papermill as pm

    src = config.NOTEBOOKS_DIR / f"{job.notebook}.ipynb"
    executed = run_dir / f"{job.slug or job.notebook}.ipynb"
    results_path = run_dir / f"{job.slug or job.notebook}.results.json"
    start = time.monotonic()
    try:
        if not src.exists():
            raise FileNotFoundError(f"notebook {src.name} not found in {config.NOTEBOOKS_DIR}")
        with quiet_kernel_stderr():
            pm.execute_notebook(
                str(src), str(executed), parameters={**job.parameters, "results_path": str(results_path)},
                kernel_name="python3", cwd=str(config.NOTEBOOKS_DIR), progress_bar=False,
            )
        job.status = "ok"
    except Exception as err:  # any failure marks this report failed; the suite goes on
        job.status = "failed"
        job.error = _short_error(err)
    job.seconds = time.monotonic() - start
    if executed.exists():
        try:
            to_html(executed, run_dir / job.html_name)
        except Exception as err:
            job.status = "failed"
            job.error = job.error or f"HTML conversion failed: {_short_error(err)}"
    if results_path.exists():
        job.results = load_results(results_path)
    return job


_KERNEL_NOISE = ("Kernel is running over TCP without encryption",)


@contextlib.contextmanager
def quiet_kernel_stderr():
    """Drop the kernel's transport warning from stderr (it inherits our fd 2); keep everything else."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            for line in tmp.read().decode(errors="replace").splitlines():
                if line.strip() and not any(noise in line for noise in _KERNEL_NOISE):
                    print(line, file=sys.stderr)


def _short_error(err: Exception) -> str:
    name = getattr(err, "ename", type(err).__name__)
    value = getattr(err, "evalue", str(err))
    return f"{name}: {value}".strip()[:500]


def run_suite(suite_file: Path = config.SUITE_FILE, *, out: Path = config.REPORTS_DIR,
              only: list[str] | None = None, date: str | None = None) -> int:
    """Run every job of the suite into ``out/<date>/`` and write ``out/index.html``; 1 if any report failed."""
    jobs = load_suite(suite_file)
    if only:
        jobs = [j for j in jobs if j.notebook in only or j.slug in only]
        if not jobs:
            raise ValueError(f"--only {','.join(only)} matches no notebook in {suite_file}")
    date = date or _dt.date.today().isoformat()
    out = Path(out)
    run_dir = out / date
    run_dir.mkdir(parents=True, exist_ok=True)
    for i, job in enumerate(jobs, 1):
        print(f"[{i}/{len(jobs)}] {job.slug or job.notebook} ...", end=" ", flush=True, file=sys.stderr)
        run_job(job, run_dir)
        print(f"{job.status} ({job.seconds:.0f} s){'  ' + job.error if job.error else ''}", file=sys.stderr)
    write_index(jobs, out / "index.html", run_dir=run_dir, suite_file=suite_file)
    failed = [j for j in jobs if j.status != "ok"]
    print(f"{len(jobs) - len(failed)} of {len(jobs)} reports written; index: {out / 'index.html'}", file=sys.stderr)
    return 1 if failed else 0


_INDEX_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.45em .6em;text-align:left;
vertical-align:top;font-size:.92em}th{background:#f4f4f4}.ok{color:#1a7f37;font-weight:600}
.failed{color:#c62828;font-weight:600}code{font-size:.85em;background:#f6f6f6;padding:0 .2em}.err{color:#c62828}
"""


GLOSSARY = [
    ("tok/s/user", "one user's decode speed, 1000 / median time per output token (TPOT)"),
    ("tok/s/GPU", "system output tokens per second divided by GPUs; every table and figure states whether by all "
                  "GPUs of the deployment or by decode GPUs only"),
    ("TTFT / TPOT", "time to first token / time per output token after the first"),
    ("single-user peak", "tok/s/user at batch or concurrency 1"),
    ("capacity", "throughput at the largest batch measured (or the fitted asymptote, where said)"),
    ("B½", "the batch at which per-user speed has halved and throughput reached half its asymptote"),
    ("frontier", "measured points that no other point of the same group beats on both tok/s/user and tok/s/GPU"),
    ("scope", "single-gpu, node (up to 8 GPUs on one NVLink island), rack (inside one larger NVLink domain, "
              "e.g. NVL72), multi-node (across the scale-out network)"),
    ("speed of light", "the physical bound on a decode step: bytes read over HBM bandwidth, FLOPs over peak"),
]


def _first_sentences(text: str, limit: int = 300) -> str:
    """The index shows each report's first findings; the report itself has the rest."""
    if len(text) <= limit:
        return text
    cut = text.rfind(". ", 0, limit)
    return text[: cut + 1] if cut > 0 else text[:limit].rstrip() + "…"


def write_index(jobs: list[Job], index_path: Path, *, run_dir: Path, suite_file: Path) -> None:
    """One page linking every report with its title, parameters, inputs and status."""
    rel = run_dir.relative_to(index_path.parent).as_posix()
    rows = []
    for job in jobs:
        params = {k: v for k, v in job.parameters.items()}
        inputs = [str(v) for k, v in params.items() if k.endswith(("_path", "_dir", "_file")) and v]
        inputs = inputs or [str(config.POINTS_FILE.relative_to(config.PROJ_ROOT))]
        link = (f'<a href="{rel}/{html.escape(job.html_name)}">{html.escape(job.title)}</a>'
                if (run_dir / job.html_name).exists() else html.escape(job.title))
        param_text = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "defaults"
        headline = html.escape(_first_sentences(str(job.results.get("headline", "")))) if job.results else ""
        rows.append(
            f"<tr><td>{link}<br><small>{headline}</small></td><td><code>{html.escape(job.notebook)}</code></td>"
            f"<td><code>{html.escape(param_text)}</code></td><td>{html.escape(', '.join(inputs))}</td>"
            f'<td class="{job.status}">{job.status}'
            + (f'<br><small class="err">{html.escape(job.error)}</small>' if job.error else "")
            + f"</td><td>{job.seconds:.0f} s</td></tr>"
        )
    n_ok = sum(j.status == "ok" for j in jobs)
    page = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>perfclaims reports</title>
<style>{_INDEX_CSS}</style></head><body>
<h1>perfclaims reports</h1>
<p>Run {html.escape(run_dir.name)} from <code>{html.escape(Path(suite_file).name)}</code>: {n_ok} of {len(jobs)}
reports ok. Each report separates single-user speed (tok/s/user) from server capacity (tok/s/GPU).</p>
<table><tr><th>report</th><th>notebook</th><th>parameters</th><th>inputs</th><th>status</th><th>time</th></tr>
{''.join(rows)}
</table>
<h2>Words the reports use</h2>
<dl>{''.join(f"<dt><b>{html.escape(t)}</b></dt><dd>{html.escape(d)}</dd>" for t, d in GLOSSARY)}</dl>
</body></html>"""
    index_path.write_text(page, encoding="utf-8")


_TABLE_CSS = ("<style>.pc-table td{white-space:nowrap;font-variant-numeric:tabular-nums}"
              ".pc-table th{white-space:normal;max-width:11em;vertical-align:bottom}</style>")

# Kept for callers of the old names; the rules live in analysis.text.
_readable = text.num
pretty_header = text.header


def show_table(frame, *, max_rows: int = 200):
    """Display a table in a report: no row index, readable numbers and headers, text cells on one line."""
    from IPython.display import HTML, display

    shown = frame.head(max_rows)
    shown = shown.rename(columns={c: text.header(c) for c in shown.columns})
    numeric = shown.select_dtypes("number").columns
    text_cols = [c for c in shown.columns if c not in numeric]
    # Long prose cells (reasons, notes, confounders) wrap instead of pushing the table off the page.
    long_text = [c for c in text_cols if shown[c].astype(str).str.len().max() > 60] if len(shown) else []
    # Every cell and header is escaped: table values come from logs, file names, manifests and claims.
    styler = (shown.style.hide(axis="index").format({c: text.num for c in numeric}, na_rep="–")
              .format(text.esc, subset=text_cols, na_rep="–")
              .format_index(text.esc, axis=1)
              .set_properties(subset=text_cols, **{"text-align": "left"})
              .set_properties(subset=long_text, **{"white-space": "normal", "min-width": "18em"})
              .set_table_attributes('class="pc-table"'))
    display(HTML(_TABLE_CSS + styler.to_html()))
    if len(frame) > max_rows:
        display(HTML(f"<p><em>{len(frame) - max_rows} more rows not shown.</em></p>"))
