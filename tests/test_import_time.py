"""Start-up cost: the command line imports no heavy library before it knows the command, and jsonschema's IRI
grammar (1.1-1.6 s of every papermill import) is built only if an ``iri`` format check actually runs, with the
same answers as when it is built eagerly."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from conftest import ROOT

HEAVY = ["pandas", "numpy", "pyarrow", "matplotlib", "scipy", "papermill", "nbconvert", "nbformat", "jsonschema"]


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    return out.stdout.strip().splitlines()[-1]


def test_cli_parser_imports_no_heavy_library():
    code = ("import sys; from analysis import cli; cli.build_parser().format_help(); "
            f"import json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert json.loads(_python(code)) == []


@pytest.mark.skipif(importlib.util.find_spec("rfc3987_syntax") is None, reason="rfc3987-syntax not installed")
def test_iri_grammar_is_built_only_when_an_iri_check_runs():
    code = """
import json, sys
from analysis.lazy_imports import defer_iri_grammar
installed = defer_iri_grammar()
import papermill, nbconvert, jsonschema
files = [getattr(m, "__file__", None) for m in list(sys.modules.values())]  # as hypothesis scans for local code
built_on_import = "rfc3987_syntax.syntax_helpers" in sys.modules
checker = jsonschema.FormatChecker()
values = ["http://example.com/caf\\u00e9?q=1#top", "http://[not-closed", "relative/caf\\u00e9", "a b"]
answers = {f: [checker.conforms(v, f) for v in values] for f in ("iri", "iri-reference")}
import rfc3987_syntax
print(json.dumps({"installed": installed, "again": defer_iri_grammar(), "built_on_import": built_on_import,
                  "built_after_check": "rfc3987_syntax.syntax_helpers" in sys.modules, "answers": answers,
                  "terms": "iri" in rfc3987_syntax.RFC3987_SYNTAX_TERMS}))
"""
    got = json.loads(_python(code))
    assert got["installed"] is True and got["again"] is False
    assert got["built_on_import"] is False and got["built_after_check"] is True
    # RFC 3987: an absolute IRI with a non-ASCII path is an iri; an unclosed IP literal is neither; a relative
    # path is only an iri-reference; a space is never allowed
    assert got["answers"] == {"iri": [True, False, False, False], "iri-reference": [True, False, True, False]}
    assert got["terms"] is True  # any other name on the package is forwarded to the real module
