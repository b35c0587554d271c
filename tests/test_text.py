"""analysis.text: the escape every data-derived string passes, and the number rules."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from analysis import text

PAYLOADS = ["<script>alert(1)</script>", '<img src=x onerror="alert(1)">', "<svg onload=alert(1)>",
            "[click](javascript:alert(1))", "$\\frac{a}{b}$", "**bold** _it_ `code` # head | pipe"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_esc_leaves_no_markup(payload):
    out = text.esc(payload)
    bare = re.sub(r"&#\d+;", "", out)  # what is left once the character references are taken out
    for ch in "<>[]()$*_`#|\"":
        assert ch not in bare
    assert "&#60;" in out or "&#91;" in out or "&#36;" in out or "&#42;" in out


def test_esc_replaces_lone_surrogates_and_control_characters():
    out = text.esc("DeepSeek\ud800R1\nline\x00two")
    out.encode("utf-8")  # would raise on a surrogate
    assert out == "DeepSeek\ufffdR1 line two"


def test_esc_keeps_ordinary_names_readable():
    assert text.esc("DeepSeek-R1 0528 fp8 8xB200") == "DeepSeek-R1 0528 fp8 8xB200"
    assert text.esc(None) == "–" and text.esc(float("nan")) == "–"


def test_number_rules():
    assert text.num(14351.2) == "14,351" and text.num(12.34) == "12.3" and text.num(0.0123) == "0.0123"
    assert text.num(float("nan")) == "–" and text.pct(0.371) == "37%" and text.pct(0.0039, 2) == "0.39%"
    assert text.header("tok_s_per_gpu_at_50") == "tok/s/GPU at 50"


def test_show_table_escapes_cells_and_headers(monkeypatch):
    from analysis import report

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj.data))
    report.show_table(pd.DataFrame({"<b>col</b>": ["<script>x()</script>"], "n": [1234.5]}))
    html = shown[0]
    assert "<script>x()" not in html and "<b>col" not in html
    assert "&#60;script&#62;" in html and "1,234" in html
