"""Tables shown in a report: escaped cell by cell and header by header, numbers written for readers."""

from __future__ import annotations

from analysis import text

_TABLE_CSS = ("<style>.pc-table td{white-space:nowrap;font-variant-numeric:tabular-nums}"
              ".pc-table th{white-space:normal;max-width:11em;vertical-align:bottom}"
              ".pc-wide{overflow-x:auto;max-width:100%}</style>")

# Kept for callers of the old names; the rules live in analysis.text.
_readable = text.num
pretty_header = text.header


def show_table(frame, *, max_rows: int = 200):
    """Display a table in a report: no row index, readable numbers and headers, text cells on one line."""
    from IPython.display import HTML, display

    if frame is None or frame.empty:  # headers with no rows tell a reader nothing and can be wide
        display(HTML("<p><em>No rows.</em></p>"))
        return
    # Every cell and header is escaped: table values come from logs, file names, manifests and claims.
    # a table wider than the page scrolls sideways inside its own box instead of being cut off at the page edge
    display(HTML(_TABLE_CSS + '<div class="pc-wide">' + text.table_html(frame.head(max_rows)) + "</div>"))
    if len(frame) > max_rows:
        display(HTML(f"<p><em>{len(frame) - max_rows} more rows not shown.</em></p>"))
