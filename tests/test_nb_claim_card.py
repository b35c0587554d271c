"""The claim-card notebook as the suite renders it, and `perfclaims claim` writing the HTML card."""

from __future__ import annotations

from html import unescape

import pytest

pytestmark = pytest.mark.notebook


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
                                     "The six answers in full", "Each number of the claim")]
    assert order == sorted(order)
    assert "same-model" in html and "DeepSeek-V4.1-Flash" in html \
        and "of the claim" not in html.split("Bottom line.")[1].split(".")[0]
    assert "claim_card_page(" not in raw  # code hidden
    assert "without encryption" not in capfd.readouterr().err
