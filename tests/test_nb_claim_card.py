"""The claim-card notebook under papermill, and `perfclaims claim` writing the HTML card."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.notebook


def test_claim_card_notebook_c00(notebook_runner):
    res = notebook_runner("50-claim-card", claim="C00")
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


def test_cli_claim_writes_html(tmp_path):
    from analysis.claims import cli_claim

    assert cli_claim("C00", out=tmp_path) == 0
    html = (tmp_path / "C00.html").read_text()
    assert "data:image/png" in html and "The five questions" in html
    assert "claims.claim_card(" not in html  # code hidden
