"""A hostile data folder rendered by the whole suite and by `perfclaims claim`: payloads in file and folder names,
model, hardware and framework names, values and claim fields reach every page as text, never as live markup."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from analysis import cli, config, report
from analysis.ingest import ingest, write_outputs

pytestmark = pytest.mark.notebook

TEST_DATA = Path(__file__).resolve().parent / "data"
PAYLOADS = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "<svg onload=alert(3)>",
            "[x](javascript:alert(4))", "$\\frac{a}{b}$ **bold** <b>"]
LIVE = re.compile(r"<script(?![^>]*type=\"application/json\")|<[a-z]+[^>]*\son[a-z]+\s*=|href=\"javascript:|"
                  r"<iframe|<svg[^>]*onload|<img[^>]+onerror", re.I)


def _hostile_raw(root: Path) -> Path:
    raw = root / "raw"
    # the shipped data without its two largest folders (the dated history and the trimmed sweep files): every report
    # still has real rows to show beside the payloads, in a third of the time
    shutil.copytree(config.RAW_DATA_DIR, raw, ignore=shutil.ignore_patterns("inferencex-history", "inferencex-repo"))
    folder = raw / "<svg onload=alert(5)>"
    folder.mkdir()
    run = json.loads((TEST_DATA / "formats" / "vllm" / "fork_gptoss_conc4.json").read_text())
    run["model_id"] = "<img src=y onerror=alert(7)>"  # no '/': the reader keeps what follows the last one
    (folder / "<img src=x onerror=alert(6)>.json").write_text(json.dumps(run))
    # A serving sweep of three concurrencies with payloads in its model, hardware and framework names.
    rows = ["model,hardware,n_gpus,precision,framework,concurrency,isl,osl,tpot_ms_p50,ttft_ms_p50,output_tok_s"]
    for conc, tpot in ((1, 10.0), (8, 12.0), (64, 25.0)):
        rows.append(f'"{PAYLOADS[1]}","{PAYLOADS[2]}",8,fp8,"{PAYLOADS[3]}",{conc},1024,1024,{tpot},200,'
                    f"{conc * 1000 / tpot:.1f}")
    (folder / "sweep.csv").write_text("\n".join(rows) + "\n")
    return raw


def _live_markup(html: str) -> list[str]:
    body = re.sub(r'src="data:image/[^"]+"', "", html)   # embedded figures
    return LIVE.findall(body)


def test_the_whole_suite_and_a_claim_card_render_hostile_input_inert(tmp_path):
    raw = _hostile_raw(tmp_path)
    processed = tmp_path / "processed"
    result = ingest([raw], progress=False)
    write_outputs(result, processed)
    models = result.points["model"]
    assert (models == PAYLOADS[1]).sum() == 3 and (models == "<img src=y onerror=alert(7)>").sum() == 1
    suite = tmp_path / "suite.yml"
    suite.write_text(
        f"title: 'hostile {PAYLOADS[0]}'\nnotebooks: {config.NOTEBOOKS_DIR}\n"
        f"parameters: {{points_path: {processed / 'points.parquet'}, processed_dir: {processed}}}\n"
        f"inputs: [{processed}]\nreports:\n"
        "  - notebook: 01-ingest\n  - notebook: 10-batch-scaling\n"
        "  - notebook: 20-frontier\n    parameters: {isl: 1024, osl: 1024}\n"
        "  - notebook: 30-precision-scope\n  - notebook: 40-history\n"
        "  - notebook: 41-suite-history\n    parameters: {reports_dir: '{out}'}\n    inputs: ['{out}/history']\n"
        f"  - notebook: 60-latency\n    parameters: {{requests_path: {processed / 'requests.parquet'}}}\n")
    out = tmp_path / "reports"
    # in process: the same notebook cells and page template as under papermill, without five kernel starts
    assert report.run_suite(suite, out=out, date="2026-01-01", executor="inprocess") == 0
    claim = tmp_path / "hostile.yaml"
    claim.write_text(json.dumps({
        "id": "H1", "value": 1000, "value_text": f"nearly 1,000 tok/s/user {PAYLOADS[0]}", "unit": "tok/s/user",
        "kind": "per-user", "model": PAYLOADS[1], "hardware": PAYLOADS[2], "precision": "fp4",
        "source": "javascript:alert(9)", "what_is_unstated": PAYLOADS[4]}))
    assert cli.main(["claim", str(claim), "--points", str(processed / "points.parquet"), "--out", str(out)]) == 0
    pages = sorted(out.rglob("*.html"))
    assert len(pages) >= 8
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert 'http-equiv="Content-Security-Policy"' in text, page.name
        assert not _live_markup(text), (page.name, _live_markup(text)[:3])
    ingest_page = (out / "2026-01-01" / "01-ingest.html").read_text(encoding="utf-8")
    card = (out / "H1.html").read_text(encoding="utf-8")
    # the payloads are there, as text a reader can see (escaped in the HTML, whole once unescaped)
    for page, payload in ((ingest_page, "<svg onload=alert(5)>"), (ingest_page, PAYLOADS[2]),
                          (card, PAYLOADS[1]), (card, PAYLOADS[0])):
        assert payload not in page and payload in html.unescape(re.sub(r"<[^>]+>", "", page)), payload
