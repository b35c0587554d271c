"""Tables shown in a report: escaped cell by cell and header by header, numbers written for readers."""

from __future__ import annotations

from analysis import text

_TABLE_CSS = ("<style>.pc-table td{white-space:nowrap;font-variant-numeric:tabular-nums}"
              ".pc-table th{white-space:normal;max-width:11em;vertical-align:bottom}</style>")

# Kept for callers of the old names; the rules live in analysis.text.
_readable = text.num
pretty_header = text.header


def show_table(frame, *, max_rows: int = 200):
    """Display a table in a report: no row index, readable numbers and headers, text cells on one line."""
    from IPython.display import HTML, display

    if frame is None or frame.empty:  # headers with no rows tell a reader nothing and can be wide
        display(HTML("<p><em>No rows.</em></p>"))
        return
    shown = frame.head(max_rows)
    shown = shown.rename(columns={c: text.header(c) for c in shown.columns})
    numeric = shown.select_dtypes("number").columns
    text_cols = [c for c in shown.columns if c not in numeric]
    # Long prose cells (reasons, notes, confounders) wrap instead of pushing the table off the page.
    long_text = [c for c in text_cols if shown[c].astype(str).str.len().max() > 40] if len(shown) else []
    # Every cell and header is escaped: table values come from logs, file names, manifests and claims.
    styler = (shown.style.hide(axis="index").format({c: text.num for c in numeric}, na_rep="–")
              .format(text.esc, subset=text_cols, na_rep="–")
              .format_index(text.esc, axis=1)
              .set_properties(subset=text_cols, **{"text-align": "left"})
              .set_properties(subset=long_text, **{"white-space": "normal", "min-width": "14em"})
              .set_table_attributes('class="pc-table"'))
    display(HTML(_TABLE_CSS + styler.to_html()))
    if len(frame) > max_rows:
        display(HTML(f"<p><em>{len(frame) - max_rows} more rows not shown.</em></p>"))
