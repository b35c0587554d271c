"""perfclaims: tell single-user peaks from server-side capacity in LLM-serving benchmark results.

Raw logs go in through :mod:`analysis.ingest` (one points table, fixed units), the batch model lives in
:mod:`analysis.scaling`, Pareto frontiers and precision/scope effects in :mod:`analysis.frontier`, the
speed of light in :mod:`analysis.roofline`, claim cards in :mod:`analysis.claims`; :mod:`analysis.plots`
only draws and :mod:`analysis.report` runs the notebook suite.
"""

__version__ = "0.1.0"
