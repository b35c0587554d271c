"""The claim-card notebook as the suite renders it, and `perfclaims claim` writing the HTML card."""

from __future__ import annotations

from html import unescape

import pytest

pytestmark = pytest.mark.notebook


def test_claim_card_notebook_c00(suite_results):
    res = suite_results("50-claim-card-C00")
    assert res["claim"] == "C00" and res["kind"] == "per-user" and res["value"] == 1000
    assert res["model_table"] == "DeepSeek-V4-Flash"
    assert set(res["answers"]) == {"batch", "large_batch", "scope", "latency", "precision"}
    for answer in res["answers"].values():
        assert answer["status"] == "inferred from data" and answer["rows"]
    sol = {(r["precision"], r["gpus"], r["tokens_per_step"]): r for r in res["sol"]}
    assert {(p, g) for p, g, _ in sol} == {(p, g) for p in ("fp8", "fp4") for g in (1, 8, 72)}
    fp4_1, fp8_1 = sol[("fp4", 1, 1.0)], sol[("fp8", 1, 1.0)]
    # 13B read per step at 8 TB/s: FP4 (NVFP4, 0.5625 B/param) ~1,090, FP8 ~615 tok/s/user.
    assert fp4_1["sol_tok_s_per_user"] == pytest.approx(1092, rel=0.02)
    assert fp8_1["sol_tok_s_per_user"] == pytest.approx(615, rel=0.02)
    assert sol[("fp4", 72, 1.0)]["sol_tok_s_per_user"] > 50 * fp4_1["sol_tok_s_per_user"]
    assert fp8_1["fraction_of_sol"] > 1 and fp4_1["fraction_of_sol"] < 1
    assert res["verdict"].startswith("C00")
    # The SOL reading uses the achievable line: 1,000 is above the achievable 874 but below the datasheet 1,092.
    assert fp4_1["sol_tok_s_per_user_achievable"] == pytest.approx(874, rel=0.02)
    assert fp4_1["reading"].startswith("above the achievable line")
    assert res["headline"].startswith("C00: nearly 1,000 tok/s/user (single-user throughput) — a single-user")


def test_claim_card_notebook_c08_reads_the_frontier_at_125(suite_results):
    res = suite_results("50-claim-card-C08")
    checks = {r["part"]: r for r in res["checks"]}
    gb200 = checks["4,130 tok/s/GPU at 125 tok/s/user (GB200 NVL72)"]
    assert gb200["measured_all"] == pytest.approx(97.5, abs=0.1)
    assert gb200["measured_decode"] == pytest.approx(114.5, abs=0.1)
    assert checks["941 tok/s/GPU at 125 tok/s/user (B200 multi-node)"]["measured_all"] == pytest.approx(71.7, abs=0.1)
    assert "97.5 tok/s/GPU" in res["headline"] and "ISL 1,024 / OSL 1,024" in res["headline"]


def test_cli_claim_writes_html(tmp_path, capfd):
    from analysis.cli import main

    assert main(["claim", "C00", "--out", str(tmp_path)]) == 0
    raw = (tmp_path / "C00.html").read_text()
    html = unescape(raw)   # data-derived text is written as character references (text.esc)
    assert "Claim C00: nearly 1,000 tok/s/user (single-user throughput)" in html and "((" not in html
    assert "communication floor" in html
    assert "<title>Claim C00: DeepSeek V4.1 Flash on GB300 NVL72</title>" in html
    # The answer first: bottom line, then the five-row table, then the one figure, then the detail.
    body = html[html.index("Claim C00: nearly"):]          # the page itself, after the template's head
    order = [body.index(s) for s in ("Bottom line.", "Large batch / capacity", "data:image/png",
                                     "The five answers in full", "Each number of the claim")]
    assert order == sorted(order)
    assert "proxy (another model)" in html and "of the claim" not in html.split("Bottom line.")[1].split(".")[0]
    assert "claim_card_page(" not in raw  # code hidden
    assert "without encryption" not in capfd.readouterr().err
