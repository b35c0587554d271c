"""The index page: every report of a run with its title, model and hardware, first findings, parameters and status,
one line naming the inputs, and the earlier runs. Every data-derived string is escaped; the page forbids scripts."""

from __future__ import annotations

import html
from pathlib import Path

from analysis import config
from analysis.text import whole

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; base-uri 'none'; "
       "form-action 'none'")
HEAD = (f'<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">')

INDEX_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.45em .6em;text-align:left;
vertical-align:top;font-size:.92em}th{background:#f4f4f4}.ok{color:#1a7f37;font-weight:600}
.unchanged,.kept{color:#1a5f7a;font-weight:600}.failed{color:#c62828;font-weight:600}
code{font-size:.85em;background:#f6f6f6;padding:0 .2em;overflow-wrap:anywhere}.err{color:#c62828}.mh{color:#555}
"""

GLOSSARY = [
    ("tok/s/user", "one user's decode speed, 1000 / median time per output token (TPOT); where a published source "
                   "gives only means, 1000 / mean TPOT, and each reading names the statistic it used"),
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

e = html.escape


def first_sentences(text: str, limit: int = 700) -> str:
    """The index shows each report's first findings; the report itself has the rest."""
    if len(text) <= limit:
        return text
    cut = text.rfind(". ", 0, limit)
    if cut > 0:
        return text[: cut + 1]
    space = text.rfind(" ", 0, limit)  # never cut inside a word: "no perc…" reads as a typo
    return text[: space if space > limit // 2 else limit].rstrip(" ,;:(") + " …"


def shown_path(p) -> str:
    """A path as the reader knows it: relative to the project when inside it."""
    p = Path(str(p))
    try:
        return p.resolve().relative_to(Path(config.PROJ_ROOT).resolve()).as_posix()
    except (ValueError, OSError):
        return str(p)


def status_cell(rec: dict) -> str:
    status = str(rec.get("status", ""))
    if status == "unchanged":
        label = f"unchanged since {rec.get('made_on', '?')}"
    elif status == "kept":
        label = f"not rerun; from {rec.get('made_on', '?')}"
    elif status == "ok":
        label = "rendered"   # the notebook ran; not a verdict on the claim
    else:
        label = status
    cls = status if status in ("ok", "failed", "unchanged", "kept") else ""
    err = f'<br><small class="err">{e(str(rec["error"]))}</small>' if rec.get("error") else ""
    return f'<td class="{cls}">{e(label)}{err}</td>'


def index_page(manifest: dict, results: dict[str, dict], *, href, runs: list[tuple[str, str, str]] = (),
               up_href: str | None = None) -> str:
    """The index of one run. ``href(slug)`` gives each report's link (None: not linked); ``runs`` lists earlier
    runs as (date, link, summary); ``up_href`` links the page listing every run."""
    jobs = manifest.get("jobs", [])
    rows = []
    for rec in jobs:
        slug = rec.get("slug", "")
        res = results.get(slug) or {}
        target = href(slug)
        title = e(str(res.get("title") if isinstance(res.get("title"), str) and res.get("title")
                      else rec.get("title", slug)))
        link = f'<a href="{e(target)}">{title}</a>' if target else title
        mh = " · ".join(e(str(res[k])) for k in ("model", "hardware") if isinstance(res.get(k), str) and res[k])
        mh = f'<br><span class="mh">{mh}</span>' if mh else ""
        ok = rec.get("status") in ("ok", "unchanged", "kept")
        headline = e(first_sentences(str(res.get("headline", "")))) if ok and res.get("headline") else ""
        params = {k: v for k, v in (rec.get("parameters") or {}).items()
                  if not (isinstance(v, str) and k.endswith(("_path", "_dir", "_file")))}
        param_text = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "defaults"
        rows.append(
            f"<tr><td>{link}{mh}<br><small>{headline}</small></td>"
            f"<td><code>{e(str(rec.get('notebook', '')))}</code></td><td><code>{e(param_text)}</code></td>"
            + status_cell(rec) + f"<td>{whole(float(rec.get('seconds') or 0), grouped=False)} s</td></tr>")
    n_ok = sum(r.get("status") in ("ok", "unchanged", "kept") for r in jobs)
    n_same = sum(r.get("status") == "unchanged" for r in jobs)
    inputs = manifest.get("inputs") or {}
    inputs_line = "; ".join(f"<code>{e(shown_path(p))}</code> ({e(str(h)[:12])})" for p, h in sorted(inputs.items()))
    suite_title = str(manifest.get("suite_title") or "perfclaims reports")
    date = str(manifest.get("run_date", ""))
    earlier = "".join(f'<li><a href="{e(link)}">{e(d)}</a> {e(summary)}</li>' if link else f"<li>{e(d)} {e(summary)}</li>"
                      for d, link, summary in runs)
    up = f' · <a href="{e(up_href)}">all runs</a>' if up_href else ""
    return f"""<!DOCTYPE html><html lang="en"><head>{HEAD}<title>{e(suite_title)}: run {e(date)}</title>
<style>{INDEX_CSS}</style></head><body>
<h1>{e(suite_title)}</h1>
<p>Run {e(date)} from <code>{e(shown_path(manifest.get('suite', '')))}</code>: {n_ok} of {len(jobs)} reports ok
{f'({n_same} unchanged since an earlier run, not re-executed)' if n_same else ''}. perfclaims
{e(str(manifest.get('code_version', '')))}, commit <code>{e(str(manifest.get('commit', '')))}</code>{up}.
Each report separates single-user speed (tok/s/user) from server capacity (tok/s/GPU).</p>
<table><tr><th>report and its first findings</th><th>notebook</th><th>parameters</th><th>run</th><th>time</th></tr>
{''.join(rows)}
</table>
<p><b>Inputs</b> (content hash): {inputs_line or 'none recorded'}</p>
{f'<h2>Earlier runs</h2><ul>{earlier}</ul>' if earlier else ''}
<h2>Words the reports use</h2>
<dl>{''.join(f"<dt><b>{e(t)}</b></dt><dd>{e(d)}</dd>" for t, d in GLOSSARY)}</dl>
</body></html>"""


def run_summary(manifest: dict) -> str:
    jobs = manifest.get("jobs", [])
    n_ok = sum(r.get("status") in ("ok", "unchanged", "kept") for r in jobs)
    return f"{n_ok} of {len(jobs)} reports ok"
