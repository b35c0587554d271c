"""Drawing only: every function takes computed tables (from scaling, frontier, roofline, claims) and returns Axes.

One module per report kind; nothing here fits, filters or derives numbers.
"""
