"""Keep third-party import-time work that perfclaims never uses off the start-up path.

``papermill`` and ``nbconvert`` import ``nbformat``, which imports ``jsonschema``. jsonschema (4.25+) imports
``rfc3987_syntax`` for its ``iri`` format checker whenever that package is installed (``jupyter-events`` installs
it through ``jsonschema[format-nongpl]``), and importing ``rfc3987_syntax`` builds a Lark Earley parser of the
RFC 3987 grammar: 1.1-1.6 s of every ``perfclaims claim`` and ``perfclaims report``, for a checker no notebook
schema uses. :func:`defer_iri_grammar` puts a stand-in for the package in ``sys.modules`` that loads the real one
the first time anything is looked up on it, so an ``iri`` check, if one ever runs, is exactly what it was. The
stand-in carries the package's own ``__file__``, ``__loader__`` and ``__path__``, so tools that only look at where
modules come from (hypothesis' pytest plugin reads ``__file__`` of every module in ``sys.modules``) do not build it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

IRI_PACKAGE = "rfc3987_syntax"
_IRI_MODULE = "rfc3987_syntax.syntax_helpers"  # the package's __init__ is `from .syntax_helpers import *`


def defer_iri_grammar() -> bool:
    """Install the lazy stand-in for ``rfc3987_syntax``; True if installed, False if already imported or absent."""
    if IRI_PACKAGE in sys.modules:
        return False
    spec = importlib.util.find_spec(IRI_PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        return False
    stand_in = types.ModuleType(IRI_PACKAGE, "lazy stand-in: the real module loads on first attribute lookup")
    stand_in.__path__ = list(spec.submodule_search_locations)  # submodules import from the real folder
    stand_in.__spec__ = spec
    stand_in.__file__, stand_in.__loader__ = spec.origin, spec.loader

    def is_valid_syntax(term: str, value: str) -> bool:
        return importlib.import_module(_IRI_MODULE).is_valid_syntax(term, value)

    def __getattr__(name: str):  # noqa: N807 (module-level attribute hook, PEP 562)
        return getattr(importlib.import_module(_IRI_MODULE), name)

    stand_in.is_valid_syntax = is_valid_syntax
    stand_in.__getattr__ = __getattr__
    sys.modules[IRI_PACKAGE] = stand_in
    return True
