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
    # no spurious decimals: 20.03 was written "20.0" where the frontier page's own copy wrote "20"
    assert text.num(20.03) == "20" and text.num(8.0) == "8" and text.num(99.4) == "99.4"
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
    # a table wider than the page scrolls in its own box (the precision page's envelope table had been cut off)
    assert '<div class="pc-wide">' in html and ".pc-wide{overflow-x:auto" in html


# --- the one set of number words ----------------------------------------------------------------------------
@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), -float("inf"), pd.NA])
def test_every_writer_marks_a_missing_value_the_same_way(value):
    writers = [text.num, text.plain, text.whole, text.fixed, text.sig, text.signed, text.times, text.share,
               text.seconds, text.ms, text.usd, text.usd_cents, text.tokens, text.pct, lambda v: text.span(v, 8),
               lambda v: text.lengths(1024, v)]
    assert {w(value) for w in writers} == {text.MISSING} == {"–"}
    assert text.esc(None) == text.MISSING


def test_numbers_shares_times_and_money():
    assert [text.plain(v) for v in (1024.0, 0.5, 8, True, "fp4")] == ["1024", "0.5", "8", "True", "fp4"]
    assert [text.whole(8192), text.whole(8192, grouped=False), text.fixed(1234.56, 1), text.sig(0.012345)] == \
        ["8,192", "8192", "1,234.6", "0.0123"]
    assert [text.signed(2.5), text.signed(-0.04), text.times(1.734), text.times(4.66, 1)] == \
        ["+2.5", "-0.0", "1.73×", "4.7×"]
    assert [text.share(f) for f in (0.00393, 0.0512, 0.22, 1.0)] == ["0.39%", "5.1%", "22%", "100%"]
    assert text.pct(0.371) == "37%" and text.pct(0.371, 1) == "37.1%"
    assert [text.seconds(s) for s in (0.8412, 9.4, 37.2, 1234.0)] == ["0.84", "9.4", "37", "1,234"]
    assert [text.ms(v) for v in (845.23, 12345.0)] == ["845.2 ms", "12.3 s"]
    assert [text.usd(x) for x in (1234.5, 1.954, 0.0421)] == ["$1,234", "$1.95", "$0.042"]
    assert text.usd_cents(2.1) == "$2.10" and text.count(1, "file") == "1 file" and text.count(1200, "row") == "1,200 rows"
    assert [text.leading_digit(v) for v in (0.24, 5.0, 96.0, 2000.0)] == [2, 5, 1, 2]


def test_ranges_and_lengths():
    assert [text.span(12, 72), text.span(8.0, 8.0), text.span(1.5, 2.5, text.fixed)] == ["12–72", "8", "1.5–2.5"]
    assert [text.tokens(n) for n in (1024, 8192, 1536, 1000, 512)] == ["1k", "8k", "1536", "1000", "512"]
    assert text.lengths(1024.0, 8192.0) == "1k/8k" and text.lengths(8192, 1024) == "8k/1k"


def test_group_labels_write_each_column_one_way():
    nan = float("nan")
    history_row = dict(model="DeepSeek-R1-0528", hardware="B200", precision="fp4", framework="sglang",
                       spec_decode="mtp", scope="node", tp=8.0, ep=1.0, dp=1.0, disagg=False, n_prefill_gpus=nan,
                       n_decode_gpus=nan, n_gpus=8.0, isl=1024.0, osl=1024.0)
    assert text.group_label(history_row) == "DeepSeek-R1-0528 · B200 · fp4 · sglang · mtp · node · TP8 EP1 · 8 GPUs · 1k/1k"
    split = {**history_row, "spec_decode": "none", "disagg": True, "n_prefill_gpus": 8.0, "n_decode_gpus": 64.0,
             "n_gpus": 72.0, "dp": 8.0, "isl": 8192.0}
    assert text.group_label(split) == "DeepSeek-R1-0528 · B200 · fp4 · sglang · node · TP8 EP1 DP8 · 8P+64D GPUs · 8k/1k"
    scaling_keys = {"model": "llama-3.1-8b", "hardware": "H200 SXM", "precision": "bf16", "scope": "single-gpu",
                    "n_gpus": 1, "tp": 1.0, "ep": nan, "disagg": False, "spec_decode": "unknown", "isl": nan}
    assert text.group_label(scaling_keys, sep=" | ") == "llama-3.1-8b | H200 SXM | bf16 | single-gpu | 1 GPU | TP1"
    assert text.group_label({"hardware": "GB200 NVL72", "precision": "fp8", "scope": "unknown"}) == "GB200 NVL72 · fp8"
    assert text.group_label({"isl": 8192.0}) == "ISL 8k" and text.group_label({}, empty="all points") == "all points"


def test_a_wide_table_wraps_its_text_sooner_so_it_stays_within_the_page():
    """From text.WIDE_TABLE_COLUMNS columns a text column whose cells pass 24 characters wraps (min 9em); a narrower
    table wraps only past 40 (min 14em): the precision-scope and history tables of 12 columns had scrolled past the
    page at 1,400 px."""
    import pandas as pd

    from analysis import text

    cell = "tp, ep, dp, GPUs, date, image"  # 29 characters
    narrow = text.table_html(pd.DataFrame({"a": [cell], "b": [1.0]}))
    assert "white-space: normal" not in narrow
    wide = text.table_html(pd.DataFrame({f"c{i}": [cell if i == 0 else 1.0] for i in range(text.WIDE_TABLE_COLUMNS)}))
    assert "white-space: normal" in wide and "min-width: 9em" in wide
