"""``perfclaims share``: the newest run as one self-contained HTML file that opens offline and can be emailed.

The index comes first; each report is a section of the same page (``#r-<slug>``) that the index links to, shown
alone when targeted. Figures are already embedded as data URLs; the notebook style sheet, identical across reports,
is included once; the Content-Security-Policy is kept, so the file runs no script and loads nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from analysis.report import index_page, runs
from analysis.report.anchors import heading_anchors
from analysis.report.results import write_atomic

_STYLE = re.compile(r"<style[^>]*>.*?</style>", re.S | re.I)
_MAIN = re.compile(r"<body[^>]*>(.*)</body>", re.S | re.I)
_SHARE_CSS = ("<style>.pc-report{display:none;border-top:3px solid #ddd;margin-top:2em}.pc-report:target{display:block}"
              "body:has(.pc-report:target) #index{display:none}#index{max-width:1100px;margin:2em auto;padding:0 1em}"
              "</style>")


def _scoped(css: str, scope: str) -> str:
    """Prefix every rule of the index style sheet with ``scope`` so it cannot restyle the reports."""
    rules = []
    for rule in css.split("}"):
        if "{" not in rule:
            continue
        selectors, body = rule.split("{", 1)
        sel = ",".join(scope if s.strip() == "body" else f"{scope} {s.strip()}" for s in selectors.split(","))
        rules.append(f"{sel}{{{body}}}")
    return "".join(rules)


def write_share(reports_dir: str | Path, out_file: str | Path | None = None) -> Path:
    """Write the newest run under ``reports_dir`` as one HTML file (default ``<run>/perfclaims-<date>.html``)."""
    dirs = runs.run_dirs(Path(reports_dir))
    if not dirs:
        raise FileNotFoundError(f"{reports_dir}: no report run found; run `perfclaims report` first")
    run_dir = dirs[-1]
    manifest = runs.read_manifest(run_dir)
    out_file = Path(out_file) if out_file else run_dir / f"perfclaims-{run_dir.name}.html"
    from analysis.report.runner import _results_of

    results = _results_of(run_dir, manifest)
    styles: list[str] = []
    sections: list[str] = []
    present = set()
    for rec in manifest.get("jobs", []):
        slug = rec.get("slug", "")
        page = run_dir / f"{slug}.html"
        if not page.is_file():
            continue
        present.add(slug)
        doc = page.read_text(encoding="utf-8")
        head, _, rest = doc.partition("</head>")
        for style in _STYLE.findall(head):
            if style not in styles:
                styles.append(style)
        body = _MAIN.search(rest)
        inner = (body.group(1) if body else rest).replace('href="index.html"', 'href="#index"')
        inner = heading_anchors(inner, prefix=slug)  # ids valid in a copied link, unique across the pages
        sections.append(f'<section class="pc-report" id="r-{index_page.e(slug)}">{inner}</section>')
    index_doc = index_page.index_page(manifest, results, href=lambda s: f"#r-{s}" if s in present else None)
    index_body = _MAIN.search(index_doc).group(1)
    title = f"{manifest.get('suite_title') or 'perfclaims reports'}: run {run_dir.name}"
    doc = (f'<!DOCTYPE html><html lang="en"><head>{index_page.HEAD}<title>{index_page.e(title)}</title>'
           + "".join(styles) + f"<style>{_scoped(index_page.INDEX_CSS, '#index')}</style>{_SHARE_CSS}</head>"
           '<body class="jp-Notebook" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light">'
           f'<section id="index">{index_body}</section>{"".join(sections)}</body></html>')
    out_file.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out_file, doc)
    return out_file
