"""Numbers are written in one place: no module outside ``analysis.text``, the ``words`` modules, ``analysis/pages``
and the command line (``cli``, ``commands``) writes a number format of its own.

A number format is an f-string format spec that formats a number (``f"{x:,.0f}"``, ``f"{t:g}"``, ``f"{f:.1%}"``),
``%``-formatting of a number (``"%.2f" % x``), ``str.format`` with such a spec, or ``format(x, spec)``. Alignment
alone (``{name:>10}``) and date formats (``{day:%Y-%m-%d}``) are not number formats. A module that needs a number in
words calls :mod:`analysis.text` (``num``, ``plain``, ``pct``, ``share``, ``ms``, ``usd``, ``span``, ``lengths``,
``group_label``, ...); a sentence lives in a ``words`` module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "analysis"

# Where number formats belong (paths relative to analysis/).
ALLOWED = ("text.py", "cli.py", "commands.py", "pages/")


def _allowed(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith(ALLOWED) or name == "words.py" or name.endswith("_words.py")


# Modules that still write their own formats while they are being rewritten. Each entry is a debt with an owner:
# the list only shrinks (a test below fails when a listed file no longer needs its entry).
# analysis/claims/ is being rewritten (evidence object, facts apart from words); its sentences move to
# claims/words.py and its numbers to analysis.text. The integrator empties this list.
CLAIMS_TO_MOVE: set = set()  # emptied: the claim modules write numbers through analysis.text and the words modules
# Modules other engineers are rewriting in this round (readers, schema, hardware tables, the roofline, the batch
# model): their error messages and column keys are to call analysis.text (``plain`` for an exact value, ``num`` for a
# reader's number) when their owners next touch them.
OWNED_ELSEWHERE = {
    "ingest/aiperf.py", "ingest/h200_steps.py", "ingest/jsonl_stream.py", "ingest/llmperf.py",
    "ingest/mlperf.py", "ingest/requests_table.py", "ingest/serving_console.py", "ingest/sglang.py",
    "ingest/vllm.py", "ingest/launch.py", "ingest/published.py",
    "ingest/guidellm.py", "ingest/llama_bench.py",
    "roofline.py", "schema.py", "specs.py",
    "scaling/configuration.py", "scaling/derived.py", "scaling/estimator.py", "scaling/extrapolation.py",
    "scaling/fitting.py", "scaling/floors.py",
}

_NUMBER_SPEC = re.compile(r"[,_]|\.\d|[eEfFgGdn%xXbo]$")
_DATE_SPEC = re.compile(r"%[A-Za-z]")
_PERCENT = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgG]")
_BRACE = re.compile(r"\{[^{}]*:([^{}]*)\}")


def _is_number_spec(spec: str) -> bool:
    return bool(_NUMBER_SPEC.search(spec)) and not _DATE_SPEC.search(spec)


def number_formats(source: str) -> list[tuple[int, str]]:
    """(line, what) of every number format written in ``source`` (see the module note)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            parts = node.format_spec.values
            spec = "".join(str(v.value) for v in parts if isinstance(v, ast.Constant))
            if _is_number_spec(spec) or any(isinstance(v, ast.FormattedValue) for v in parts):
                found.append((node.lineno, f"f-string spec :{spec}"))
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
              and isinstance(node.left.value, str) and _PERCENT.search(node.left.value)):
            found.append((node.lineno, f"%-format {node.left.value!r}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
                and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
            found += [(node.lineno, f".format {m.group(0)}") for m in _BRACE.finditer(node.func.value.value)
                      if _is_number_spec(m.group(1))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "format" \
                and len(node.args) == 2:
            found.append((node.lineno, "format(value, spec)"))
    return found


def _modules() -> dict[str, str]:
    return {p.relative_to(PKG).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PKG.rglob("*.py"))}


def test_no_number_format_outside_text_words_pages_and_cli():
    stray = [f"analysis/{rel}:{line}: {what}" for rel, src in _modules().items()
             if not _allowed(rel) and rel not in CLAIMS_TO_MOVE | OWNED_ELSEWHERE
             for line, what in number_formats(src)]
    assert not stray, "number formats belong in analysis.text (or a words module):\n" + "\n".join(stray)


def test_every_listed_module_still_needs_its_entry():
    sources = _modules()
    for rel in sorted(CLAIMS_TO_MOVE | OWNED_ELSEWHERE):
        assert rel in sources, f"{rel} is listed but does not exist: drop it from the list"
        assert number_formats(sources[rel]), f"{rel} writes no number format any more: drop it from the list"


@pytest.mark.parametrize("source, n", [
    ('f"{x:,.0f}"', 1), ('f"{t:g}"', 1), ('f"{f:.1%}"', 1), ('f"{x:.{d}f}"', 1), ('"%.2f" % x', 1),
    ('"{:,.1f} s".format(x)', 1), ('format(x, ".3g")', 1),
    ('f"{name:>10}"', 0), ('f"{day:%Y-%m-%d}"', 0), ('"%s: %r" % (a, b)', 0), ('f"{x}"', 0), ('"{}".format(x)', 0),
])
def test_the_detector_finds_number_formats_and_only_them(source, n):
    assert len(number_formats(source)) == n
