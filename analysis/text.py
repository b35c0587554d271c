"""Words and numbers for readers: one set of formatting rules, and the one escape every data-derived string passes.

Anything that comes from a log, a file name, a manifest or a claim is untrusted text. Before it reaches a Markdown
cell or an HTML table it goes through :func:`esc`, which makes it inert: HTML and Markdown specials become numeric
character references (so ``<script>``, ``[x](javascript:...)``, ``*bold*`` and ``$math$`` render as the characters
they are), control characters and newlines become spaces, and invalid Unicode (lone surrogates) becomes U+FFFD.
The result is meant for running text and table cells, not for code spans (inside backticks references show as typed).
"""

from __future__ import annotations

import functools
import math
import numbers
import re

# Characters that start markup in HTML, CommonMark/GFM or the notebook's math renderer.
_SPECIAL = frozenset('<>&"\'`*_[]()#|\\$~{}!')
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(value) -> str:
    """``value`` as valid text: lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    s = value if isinstance(value, str) else str(value)
    return _SURROGATE.sub("\ufffd", s)


# Bidirectional controls reorder what a reader sees (U+202E turns "gpj.exe" into "exe.jpg"): shown as their names.
_BIDI = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
# Where a Markdown renderer would make a bare address a live link: "://" and "www." are written as references.
_AUTOLINK = re.compile(r"(?<=[A-Za-z0-9])(:)(?=//)|(?<![\w.])(www)(\.)", re.I)


def _inert(s: str) -> str:
    s = _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", _CONTROL.sub(" ", clean(s)))
    s = "".join(f"&#{ord(ch)};" if ch in _SPECIAL else ch for ch in s)
    return _AUTOLINK.sub(lambda m: "&#58;" if m.group(1) else m.group(2) + "&#46;", s)


def esc(value) -> str:
    """Untrusted ``value`` made inert for Markdown and HTML (see the module note); bidirectional controls are shown
    as ``<U+202E>``, and a bare address stays text (a link only where :func:`links` writes one). ``None`` and NaN
    give :data:`MISSING`."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return _inert(value if isinstance(value, str) else str(value))


_URL = re.compile(r"https?://[^\s<>\"'`]+", re.I)
_URL_TAIL = ".,;:!?*_~'\""


def _url_end(url: str) -> str:
    """``url`` without the punctuation that ends the sentence around it: a trailing ``)`` only when unbalanced."""
    while url:
        if url[-1] in _URL_TAIL:
            url = url[:-1]
        elif url[-1] == ")" and url.count(")") > url.count("("):
            url = url[:-1]
        else:
            break
    return url


def links(value) -> str:
    """Untrusted ``value`` of a field meant to hold addresses (a claim's source) as :func:`esc` gives it, with each
    http(s) address an explicit link (``<a href>`` with the address escaped, so ``)`` or ``&`` after it never
    become part of it); any other scheme stays text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    s = clean(value if isinstance(value, str) else str(value))
    out, at = [], 0
    for m in _URL.finditer(s):
        url = _url_end(m.group())
        if _BIDI.search(url) or _CONTROL.search(url) or len(url) <= len("https://"):
            continue
        out.append(_inert(s[at:m.start()]))
        href = "".join(ch if ch.isalnum() or ch in "/:.-_~?=%+,;!$*@" else f"&#{ord(ch)};" for ch in url)
        out.append(f'<a href="{href}" rel="noopener noreferrer">{_inert(url)}</a>')
        at = m.start() + len(url)
    out.append(_inert(s[at:]))
    return "".join(out)


# Spreadsheets run a cell that starts with one of these as a formula (=HYPERLINK(...), +cmd|...). A text cell that
# starts so is written with a leading apostrophe (and one that starts with an apostrophe before such a sign gets
# another, so reading back strips exactly one); numbers, and text that is a plain number ("-3.5"), are left as is.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d[\d,]*\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value):
    """One cell for a CSV file a spreadsheet may open (see the note above)."""
    if not isinstance(value, str) or not value:
        return value
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(value):
        return "'" + value
    if value.startswith("'") and value[1:2] and value[1:].startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_safe(frame):
    """``frame`` with every text cell passed through :func:`csv_cell` (numeric columns untouched), for ``to_csv``."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or str(out[col].dtype) in ("string", "str"):
            out[col] = out[col].map(csv_cell)
    return out


def csv_unescape(frame):
    """A CSV written through :func:`csv_safe`, read back: the one apostrophe :func:`csv_cell` added is removed."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or str(out[col].dtype) in ("string", "str"):
            out[col] = out[col].map(lambda v: v[1:] if isinstance(v, str) and v.startswith("'") and
                                    v[1:].startswith((*_FORMULA_START, "'")) else v)
    return out


# --- numbers for readers ------------------------------------------------------------------------------------
# Every number a page, a figure or a sentence shows is written here; no other module (but the ``words`` modules,
# ``pages`` and ``cli``) writes a format spec (``tests/test_formats_in_place.py``). A missing value (None, NaN,
# ±inf) is written :data:`MISSING` everywhere.

MISSING = "–"
"""The one mark for a value that is not there (None, NaN, infinite): an en dash, in tables, sentences and labels."""


def missing(x) -> bool:
    """True for None, NaN, pandas' NA and ±inf; False for any other value (text included)."""
    if x is None or type(x).__name__ == "NAType":
        return True
    try:
        return not math.isfinite(x)
    except TypeError:
        return False


def _writes_missing(write):
    """``write`` with :data:`MISSING` for a missing first argument (the one rule every writer here keeps)."""
    @functools.wraps(write)
    def writer(x, *args, **kwargs):
        return MISSING if missing(x) else write(x, *args, **kwargs)
    return writer


@_writes_missing
def num(x) -> str:
    """A number as a reader wants it: thousands separators, whole above 100, three significant digits below (no
    spurious decimals), :data:`MISSING` for missing: ``1234.5`` -> ``1,234``, ``12.34`` -> ``12.3``, ``20.03`` ->
    ``20``, ``0.0421`` -> ``0.0421``."""
    try:
        ax = abs(x)
    except TypeError:
        return esc(x)
    return f"{x:,.0f}" if ax >= 100 else f"{x:,.3g}"


@_writes_missing
def plain(x) -> str:
    """The shortest exact form, for levels, settings and keys: ``1024.0`` -> ``1024``, ``0.5`` -> ``0.5``; text,
    booleans and other values as ``str`` gives them; :data:`MISSING` for missing."""
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return f"{x:g}"
    return str(x)


@_writes_missing
def whole(x, *, grouped: bool = True) -> str:
    """Rounded to a whole number with thousands separators (``grouped``): ``8192`` -> ``8,192`` (``8192``)."""
    return f"{x:,.0f}" if grouped else f"{x:.0f}"


@_writes_missing
def fixed(x, digits: int = 1) -> str:
    """``digits`` decimals with thousands separators: ``fixed(1234.56, 1)`` -> ``1,234.6``."""
    return f"{x:,.{digits}f}"


@_writes_missing
def sig(x, digits: int = 3) -> str:
    """``digits`` significant digits with thousands separators: ``sig(0.01234)`` -> ``0.0123``."""
    return f"{x:,.{digits}g}"


@_writes_missing
def signed(x, digits: int = 1) -> str:
    """With its sign always shown: ``signed(2.5)`` -> ``+2.5``."""
    return f"{x:+.{digits}f}"


def count(n: int, noun: str) -> str:
    """``count(1, "record")`` -> ``1 record``, ``count(1200, "record")`` -> ``1,200 records``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def leading_digit(x) -> int:
    """The first digit of ``x`` rounded to one significant digit: ``0.24`` -> 2, ``96`` -> 1 (it rounds to 100)."""
    return int(f"{abs(x):.0e}"[0])


@_writes_missing
def times(x, digits: int = 2) -> str:
    """A ratio as a multiple: ``times(1.734)`` -> ``1.73×``, ``times(4.66, 1)`` -> ``4.7×``."""
    return f"{x:.{digits}f}×"


# --- shares -----------------------------------------------------------------------------------------------
@_writes_missing
def pct(fraction, digits: int = 0) -> str:
    """A share given as a fraction, written as a percentage with its sign: ``0.371`` -> ``37%``."""
    return f"{100 * float(fraction):,.{digits}f}%"


@_writes_missing
def share(fraction) -> str:
    """A share with the digits its size needs: ``0.00393`` -> ``0.39%``, ``0.0512`` -> ``5.1%``, ``0.22`` ->
    ``22%``."""
    p = 100.0 * float(fraction)
    return f"{p:.2f}%" if p < 1 else f"{p:.1f}%" if p < 10 else f"{p:.0f}%"


# --- times and money --------------------------------------------------------------------------------------
@_writes_missing
def seconds(s) -> str:
    """A time in seconds, without its unit: two significant digits below 10 s (``0.84``), whole above (``37``)."""
    return f"{s:.2g}" if s < 10 else f"{s:,.0f}"


@_writes_missing
def ms(v) -> str:
    """A latency given in ms, with its unit: ``845.2`` -> ``845.2 ms``, ``12345`` -> ``12.3 s``."""
    return f"{v / 1000:,.1f} s" if v >= 1000 else f"{v:,.1f} ms"


@_writes_missing
def usd(x) -> str:
    """Dollars with the cents their size needs: ``$1,234``, ``$1.95``, ``$0.042``."""
    return f"${x:,.0f}" if x >= 100 else f"${x:,.2f}" if x >= 0.1 else f"${x:.2g}"


@_writes_missing
def usd_cents(x) -> str:
    """Dollars to the cent (a price): ``$1.95``."""
    return f"${x:,.2f}"


# --- ranges, lengths, labels ------------------------------------------------------------------------------
def span(lo, hi, write=None) -> str:
    """``lo–hi``, or one value when they are equal; each end written by ``write`` (default: whole numbers without
    separators, as GPU counts and speeds are ranged: ``12–72``)."""
    write = write or (lambda x: whole(x, grouped=False))
    if missing(lo) or missing(hi):
        return MISSING
    return write(lo) if lo == hi else f"{write(lo)}–{write(hi)}"


@_writes_missing
def tokens(n) -> str:
    """A token count as lengths are named: ``1024`` -> ``1k``, ``8192`` -> ``8k``, ``1000`` -> ``1000``."""
    return f"{n / 1024:g}k" if n >= 1024 and n % 1024 == 0 else f"{n:g}"


def lengths(isl, osl) -> str:
    """Input/output lengths: ``1k/8k`` (:func:`tokens` each); :data:`MISSING` when either is missing."""
    if missing(isl) or missing(osl):
        return MISSING
    return f"{tokens(isl)}/{tokens(osl)}"


_UNSTATED = ("unknown", "nan", "", "not stated")
_PARALLEL = {"tp": "TP", "ep": "EP", "dp": "DP"}


def _truthy(v) -> bool:
    return not missing(v) and not isinstance(v, str) and bool(v)


def _label_part(col: str, value, values: dict) -> str:
    """One column's words in a group label ("" to leave it out); see :func:`group_label`."""
    if missing(value) or (isinstance(value, str) and value in _UNSTATED):
        return ""
    split = _truthy(values.get("disagg")) and not (missing(values.get("n_prefill_gpus"))
                                                   or missing(values.get("n_decode_gpus")))
    if col in _PARALLEL:
        return "" if col == "dp" and value == 1 else f"{_PARALLEL[col]}{plain(float(value))}"
    if col == "spec_decode":
        return "" if str(value) == "none" else str(value)
    if col == "disagg":
        if split:
            return f"{plain(float(values['n_prefill_gpus']))}P+{plain(float(values['n_decode_gpus']))}D GPUs"
        return "disagg" if _truthy(value) else ""
    if col in ("n_prefill_gpus", "n_decode_gpus") or (col == "n_gpus" and split):
        return ""
    if col == "n_gpus":
        return f"{plain(float(value))} GPU" + ("" if float(value) == 1 else "s")
    if col in ("isl", "osl") and {"isl", "osl"} <= values.keys():
        return lengths(values["isl"], values["osl"]) if col == "isl" else ""
    if col in ("isl", "osl"):
        return f"{col.upper()} {tokens(value)}"
    return plain(value) if isinstance(value, float) else str(value)


def group_label(values, *, sep: str = " · ", empty: str = "") -> str:
    """One group (a configuration, a series) in words, its parts in the order of ``values`` (a mapping of column
    to value), e.g. ``DeepSeek-R1-0528 · B200 · fp4 · sglang · mtp · node · TP8 EP1 · 8 GPUs · 1k/1k``.

    Each column is written one way wherever a label is made: missing and unstated values are left out;
    ``tp``/``ep``/``dp`` as ``TP8`` (adjacent ones in one part; ``dp`` 1 left out); ``spec_decode`` only when some
    (not ``none``); ``disagg`` True as ``disagg``, or, when ``n_prefill_gpus`` and ``n_decode_gpus`` are given, as
    ``4P+8D GPUs`` in place of ``n_gpus``; ``n_gpus`` as ``8 GPUs``; ``isl`` with ``osl`` as :func:`lengths`;
    other numbers by :func:`plain`. ``empty`` when nothing is left."""
    values = dict(values)
    parts: list[str] = []
    last = ""  # the column of the last part written
    for col, value in values.items():
        part = _label_part(col, value, values)
        if not part:
            continue
        if col in _PARALLEL and last in _PARALLEL:
            parts[-1] += " " + part
        else:
            parts.append(part)
        last = col
    return sep.join(parts) or empty


_HEADER_WORDS = [("tok_s_per_user", "tok/s/user"), ("tok_s_per_gpu", "tok/s/GPU"), ("tok_s", "tok/s"),
                 ("sol_", "SOL "), ("_gb", " GB"), ("_ms_", " ms "), ("_pct", " %")]


def header(name) -> str:
    """Column names for readers: ``tok_s_per_gpu_at_50`` -> ``tok/s/GPU at 50`` (units kept, underscores gone)."""
    text = str(name)
    for raw, nice in _HEADER_WORDS:
        text = text.replace(raw, nice)
    return text.replace("_", " ").strip()


WIDE_TABLE_COLUMNS = 10  # from this many columns a table's text wraps sooner, so that it stays within 1,400 px


def table_html(frame, *, wrap_over: int | None = None, min_width: str | None = None,
               attributes: str = 'class="pc-table"') -> str:
    """``frame`` as an HTML table for a reader: no row index, every text cell and header escaped (:func:`esc`),
    numbers by :func:`num`, headers by :func:`header`, text columns with cells over ``wrap_over`` characters
    wrapping (at least ``min_width`` wide) so a table stays within the page: 40 and 14em by default, 24 and 9em for
    a table of :data:`WIDE_TABLE_COLUMNS` columns or more."""
    wide = len(frame.columns) >= WIDE_TABLE_COLUMNS
    wrap_over = wrap_over if wrap_over is not None else 24 if wide else 40
    min_width = min_width or ("9em" if wide else "14em")
    shown = frame.rename(columns={c: header(c) for c in frame.columns})
    numeric = shown.select_dtypes("number").columns
    text_cols = [c for c in shown.columns if c not in numeric]
    long_text = [c for c in text_cols if shown[c].astype(str).str.len().max() > wrap_over] if len(shown) else []
    return (shown.style.hide(axis="index").format({c: num for c in numeric}, na_rep=MISSING)
            .format(esc, subset=text_cols, na_rep=MISSING).format_index(esc, axis=1)
            .set_properties(subset=text_cols, **{"text-align": "left"})
            .set_properties(subset=long_text, **{"white-space": "normal", "min-width": min_width})
            .set_table_attributes(attributes).to_html())
