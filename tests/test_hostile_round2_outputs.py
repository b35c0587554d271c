"""Outputs people open elsewhere: CSV cells that a spreadsheet would run as formulas are escaped (numbers stay
numbers, and the package reads its own files back unchanged); bidirectional controls are shown, not obeyed; bare
addresses are text except in fields meant to hold them, and there a ")" after an address is not part of its link."""

from __future__ import annotations

import csv
import io

import pandas as pd

from analysis import data
from analysis.text import csv_safe, esc, links


def test_formula_cells_are_escaped_and_numbers_kept(tmp_path):
    fits = pd.DataFrame({"model": ["=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "Llama",
                                   "-3.5"],
                         "hardware": ["H100"] * 6, "slope": [-1.25, 2.0, -0.5, 1.0, 3.0, -7.0]})
    path, _ = data.write_fits(fits, None, tmp_path / "fits.csv")
    cells = list(csv.reader(io.StringIO(path.read_text())))
    assert [row[0] for row in cells[1:]] == ["'=HYPERLINK(\"http://x\")", "'+cmd|' /C calc'!A0", "'-2+3", "'@SUM(A1)",
                                             "Llama", "-3.5"]
    assert [row[2] for row in cells[1:]] == ["-1.25", "2.0", "-0.5", "1.0", "3.0", "-7.0"]  # numbers stay numbers
    back, _ = data.load_fits(path)
    pd.testing.assert_frame_equal(back, fits)


def test_an_apostrophe_before_a_sign_round_trips(tmp_path):
    fits = pd.DataFrame({"model": ["'=x", "'plain"], "slope": [1.0, 2.0]})
    path, _ = data.write_fits(fits, None, tmp_path / "fits.csv")
    assert path.read_text().splitlines()[1:] == ["''=x,1.0", "'plain,2.0"]
    pd.testing.assert_frame_equal(data.load_fits(path)[0], fits)


def test_csv_safe_leaves_numeric_columns_numeric():
    frame = pd.DataFrame({"x": [-1.0, 2.0], "name": ["-a", "b"]})
    out = csv_safe(frame)
    assert out["x"].tolist() == [-1.0, 2.0] and out["name"].tolist() == ["'-a", "b"]


def test_bidi_controls_are_shown_by_name():
    for ch in ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
               "\u200f", "\u061c"]:
        out = esc(f"source{ch}gpj.exe")
        assert ch not in out and out == f"source&#60;U+{ord(ch):04X}&#62;gpj.exe"
    assert "\u202e" not in links("https://a.example/x \u202eevil")


def test_bare_addresses_are_text_outside_link_fields():
    out = esc("see https://evil.example/x and www.evil.example")
    assert "https://" not in out and "www." not in out
    assert out == "see https&#58;//evil.example/x and www&#46;evil.example"


def test_a_url_followed_by_a_bracket_links_to_the_url_alone():
    source = ("https://lmsys.org/blog/2025-06-16-gb200-part-1 (primary; read via the mirror "
              "https://vuink.com/post/yzflf-d-dbet/blog/2025-06-16-gb200-part-1)")
    out = links(source)
    assert out.count("<a href=") == 2
    assert '<a href="https://vuink.com/post/yzflf-d-dbet/blog/2025-06-16-gb200-part-1" ' in out
    assert "&#41" not in out.split("</a>")[1].split(">", 1)[0]  # no ")" inside the second href
    assert out.endswith("</a>&#41;")


def test_only_http_addresses_become_links():
    out = links('javascript:alert(1) data:text/html,x ftp://x.example/a https://ok.example/"onmouseover=')
    assert out.count("<a href=") == 1 and '<a href="https://ok.example/"' in out
    assert "javascript:alert&#40;1&#41;" in out
