"""The report layer: the suite runner, HTML export, the index, the suite's history, and tables shown in notebooks.

* :mod:`.suite` reads ``notebooks/suite.yml`` into jobs; :mod:`.fingerprint` hashes what each job depends on;
* :mod:`.execute` runs one notebook (papermill kernel, or in process) and exports it with the offline template;
* :mod:`.runner` runs the suite (lock, cache, parallel workers, atomic files, dated runs, ``latest/``);
* :mod:`.index_page` writes the index; :mod:`.history` the append-only store of every run's key numbers;
  :mod:`.share` one self-contained file of the newest run;
* :mod:`.tables` and :mod:`.results` are what notebooks call (``show_table``, ``save_results``).

Heavy modules (papermill, nbconvert, IPython's shell) are imported only where used, so notebooks importing
``save_results`` and ``show_table`` from here pay nothing for the runner.
"""

from __future__ import annotations

from analysis.report.results import _jsonable, load_results, save_results  # noqa: F401 (_jsonable: older callers)
from analysis.report.tables import _readable, pretty_header, show_table  # noqa: F401 (_readable: older callers)

__all__ = ["save_results", "load_results", "show_table", "pretty_header", "run_suite", "load_suite", "Job",
           "render_notebook", "to_html", "quiet_kernel_stderr", "load_suite_history", "write_share"]

_LAZY = {
    "run_suite": "runner", "RunLocked": "runner", "OutputError": "runner",
    "load_suite": "suite", "read_suite": "suite", "Job": "suite",
    "render_notebook": "execute", "to_html": "execute", "quiet_kernel_stderr": "execute", "NotebookError": "execute",
    "TEMPLATE_DIR": "execute",
    "load_suite_history": "history", "write_share": "share", "write_index": "index_page", "GLOSSARY": "index_page",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"analysis.report.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'analysis.report' has no attribute {name!r}")
