"""The layer order of docs/ARCHITECTURE.md, enforced: no module imports a layer it may not, and no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "analysis"

# Which layers each layer may import (docs/ARCHITECTURE.md). Domain code never reaches back into raw logs (ingest):
# what it reads, it reads through the data layer; only the report layer and the CLI sit on top.
FOUNDATIONS = {"config", "schema", "specs", "text", "lazy_imports", "safe_yaml", "procs"}
LAYER_OF_TOP = {
    **{m: "foundations" for m in FOUNDATIONS},
    "ingest": "ingest", "data": "data", "pages": "pages", "plots": "plots",
    "report": "report", "show": "report", "cli": "cli", "commands": "cli", "__init__": "foundations", "__main__": "cli",
}
ALLOWED = {
    "foundations": {"foundations"},
    "ingest": {"foundations", "ingest"},
    "data": {"foundations", "ingest", "data"},
    "domain": {"foundations", "data", "domain"},
    "pages": {"foundations", "data", "domain", "pages"},
    "plots": {"foundations", "domain", "plots"},
    "report": {"foundations", "ingest", "data", "domain", "pages", "plots", "report"},
    "cli": {"foundations", "ingest", "data", "domain", "pages", "plots", "report", "cli"},
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer(module: str) -> str:
    """``analysis.scaling.estimator`` -> ``domain``: the layer of the first name under ``analysis``."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return LAYER_OF_TOP.get(top, "domain")


def _imports(nodes, path: Path, module: str) -> set[str]:
    """Modules of ``analysis`` imported by the AST ``nodes`` of ``path`` (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "analysis"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name == "analysis":  # from analysis import frontier, text
                found |= {f"analysis.{a.name}" for a in node.names}
            elif name.split(".")[0] == "analysis":
                found.add(name)
    return found


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(ast.walk(_tree(p)), p, _module_name(p)) for p in sorted(PKG.rglob("*.py"))}


def test_every_import_respects_the_layer_order():
    wrong = []
    for module, imported in _graph().items():
        for target in sorted(imported):
            if layer(target) not in ALLOWED[layer(module)]:
                wrong.append(f"{module} ({layer(module)}) imports {target} ({layer(target)})")
    assert not wrong, "layer order broken:\n" + "\n".join(wrong)


def test_no_import_cycle_at_load_time():
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    # Imports executed when a module loads (module level, not inside functions).
    graph = {m: {t for t in _imports(_tree(p).body, p, m) if t in modules and t != m} for m, p in modules.items()}
    # A package importing its own submodules (re-exports) is not a cycle of meaning; drop parent -> child edges.
    graph = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in graph.get(m, ()):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if not state.get(t):
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if not state.get(m):
            visit(m)


@pytest.mark.parametrize("module, expected", [("analysis.scaling.estimator", "domain"), ("analysis.text", "foundations"),
                                              ("analysis.ingest.vllm", "ingest"), ("analysis.plots.frontier", "plots")])
def test_layer_names(module, expected):
    assert layer(module) == expected
