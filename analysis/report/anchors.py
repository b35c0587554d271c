"""Heading permalinks that survive being copied: nbconvert makes a heading's id from its text, percent-encoded
(``95%`` becomes ``95%25``, ``×`` becomes ``%C3%97``), so a link copied from the address bar (where browsers show
the decoded text) no longer finds its heading. :func:`heading_anchors` rewrites every heading id and the links to
it as a plain ASCII slug (letters, digits, ``-``): ``>`` reads ``gt``, ``×`` ``x``, ``%`` ``pct``, each id unique
in the page."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

_HEADING = re.compile(r'(<h([1-6])\b[^>]*?\bid=")([^"]*)("(?:.*?)</h\2>)', re.S)
_WORDS = {">": " gt ", "<": " lt ", "≥": " ge ", "≤": " le ", "×": "x", "%": " pct ", "&": " and ", "+": " plus ",
          "≈": " approx ", "→": " to ", "/": " per ", "·": " "}


def slug(text: str) -> str:
    """``text`` (an id as nbconvert writes it, percent-encoded or not) as an ASCII slug; ``section`` if empty."""
    s = unquote(text.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&"))
    s = "".join(_WORDS.get(ch, ch) for ch in s)
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^A-Za-z0-9_]+", "-", s).strip("-")
    return s or "section"


def heading_anchors(html: str, *, prefix: str = "") -> str:
    """``html`` with every heading id (and each ``href="#id"`` to it) a unique slug, ``prefix-`` before each."""
    renamed: dict[str, str] = {}
    taken: set[str] = set()

    def new_id(m: re.Match) -> str:
        old = m.group(3)
        base = (slug(prefix) + "-" if prefix else "") + slug(old)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        renamed.setdefault(old, name)
        rest = m.group(4).replace(f'href="#{old}"', f'href="#{name}"')  # the heading's own permalink
        return m.group(1) + name + rest

    out = _HEADING.sub(new_id, html)
    if not renamed:
        return out
    # links elsewhere in the page to a renamed heading (the headings' own links already point at their new ids)
    return re.sub(r'href="#([^"]*)"', lambda m: f'href="#{renamed.get(m.group(1), m.group(1))}"', out)
