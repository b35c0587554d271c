"""Words and numbers for readers: one set of formatting rules, and the one escape every data-derived string passes.

Anything that comes from a log, a file name, a manifest or a claim is untrusted text. Before it reaches a Markdown
cell or an HTML table it goes through :func:`esc`, which makes it inert: HTML and Markdown specials become numeric
character references (so ``<script>``, ``[x](javascript:...)``, ``*bold*`` and ``$math$`` render as the characters
they are), control characters and newlines become spaces, and invalid Unicode (lone surrogates) becomes U+FFFD.
The result is meant for running text and table cells, not for code spans (inside backticks references show as typed).
"""

from __future__ import annotations

import math
import re

# Characters that start markup in HTML, CommonMark/GFM or the notebook's math renderer.
_SPECIAL = frozenset('<>&"\'`*_[]()#|\\$~{}!')
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(value) -> str:
    """``value`` as valid text: lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    s = value if isinstance(value, str) else str(value)
    return _SURROGATE.sub("\ufffd", s)


def esc(value) -> str:
    """Untrusted ``value`` made inert for Markdown and HTML (see the module note). ``None`` and NaN give ``–``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    s = _CONTROL.sub(" ", clean(value))
    return "".join(f"&#{ord(ch)};" if ch in _SPECIAL else ch for ch in s)


def num(x) -> str:
    """A number as a reader wants it: thousands separators, no spurious decimals, ``–`` for missing."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    try:
        ax = abs(x)
    except TypeError:
        return esc(x)
    if ax >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:,.1f}"
    return f"{x:.3g}"


def pct(fraction, digits: int = 0) -> str:
    """A share given as a fraction, written as a percentage with its sign: ``0.371`` -> ``37%``."""
    if fraction is None or not math.isfinite(float(fraction)):
        return "–"
    return f"{100 * float(fraction):,.{digits}f}%"


_HEADER_WORDS = [("tok_s_per_user", "tok/s/user"), ("tok_s_per_gpu", "tok/s/GPU"), ("tok_s", "tok/s"),
                 ("sol_", "SOL "), ("_gb", " GB"), ("_ms_", " ms "), ("_pct", " %")]


def header(name) -> str:
    """Column names for readers: ``tok_s_per_gpu_at_50`` -> ``tok/s/GPU at 50`` (units kept, underscores gone)."""
    text = str(name)
    for raw, nice in _HEADER_WORDS:
        text = text.replace(raw, nice)
    return text.replace("_", " ").strip()


def table_html(frame, *, wrap_over: int = 40, min_width: str = "14em", attributes: str = 'class="pc-table"') -> str:
    """``frame`` as an HTML table for a reader: no row index, every text cell and header escaped (:func:`esc`),
    numbers by :func:`num`, headers by :func:`header`, text columns with cells over ``wrap_over`` characters
    wrapping (at least ``min_width`` wide) so a table stays within the page."""
    shown = frame.rename(columns={c: header(c) for c in frame.columns})
    numeric = shown.select_dtypes("number").columns
    text_cols = [c for c in shown.columns if c not in numeric]
    long_text = [c for c in text_cols if shown[c].astype(str).str.len().max() > wrap_over] if len(shown) else []
    return (shown.style.hide(axis="index").format({c: num for c in numeric}, na_rep="–")
            .format(esc, subset=text_cols, na_rep="–").format_index(esc, axis=1)
            .set_properties(subset=text_cols, **{"text-align": "left"})
            .set_properties(subset=long_text, **{"white-space": "normal", "min-width": min_width})
            .set_table_attributes(attributes).to_html())
