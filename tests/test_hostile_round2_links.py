"""Links: an address followed by ")" links to the address alone (the shipped claims C04 and C23), and headings with
">", "×" or "%" get permalinks that are plain ASCII slugs, unique in the page and matched by their own links."""

from __future__ import annotations

import re

from analysis.claims import load_claim
from analysis.report.anchors import heading_anchors, slug
from analysis.text import links


def _hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', html)


def test_shipped_sources_link_to_the_addresses_alone():
    for cid in ("C04", "C23"):
        source = load_claim(cid).source
        hrefs = _hrefs(links(source))
        assert hrefs and all(h.startswith("https://") for h in hrefs)
        assert not any(h.endswith((")", "&#41", "&#41;", ".", ";")) for h in hrefs), hrefs
        assert all(h in source for h in hrefs)


def _heading(text_html: str, old_id: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    html = markdown2html_mistune(f"## {text_html}")
    assert f'id="{old_id}"' in html  # what nbconvert writes: percent-encoded, broken once copied
    return html


def test_headings_with_specials_get_ascii_slug_ids():
    html = (_heading("C04 &#62;8&#215; faster, 95% of peak", "C04-%3E8%C3%97-faster,-95%25-of-peak")
            + _heading("TPOT &#62; 20 ms", "TPOT-%3E-20-ms") + _heading("TPOT &#62; 20 ms", "TPOT-%3E-20-ms")
            + '<p><a href="#TPOT-%3E-20-ms">see</a></p>')
    out = heading_anchors(html)
    ids = re.findall(r'<h2 id="([^"]*)"', out)
    assert ids == ["C04-gt-8x-faster-95-pct-of-peak", "TPOT-gt-20-ms", "TPOT-gt-20-ms-2"]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)
    own = re.findall(r'<h2 id="([^"]*)".*?<a class="anchor-link" href="#([^"]*)"', out, re.S)
    assert all(a == b for a, b in own)
    assert '<a href="#TPOT-gt-20-ms">see</a>' in out


def test_share_prefix_keeps_pages_apart():
    assert slug("95%25") == "95-pct" and slug("") == "section"
    out = heading_anchors('<h1 id="Claim-C04">x<a class="anchor-link" href="#Claim-C04">¶</a></h1>', prefix="C04")
    assert 'id="C04-Claim-C04"' in out and 'href="#C04-Claim-C04"' in out
