"""The package's layers, checked from its own imports: every module sits in one layer, imports
run down the layers (never up, never sideways into another layer of the same rank), there
are no import circles, and no module grows past what one reads in a sitting.

Every ``import`` counts, lazy ones inside functions and TYPE_CHECKING ones too: a lazy
import is still a dependency. docs/architecture.md describes the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "council_db"
MAX_LINES = 400

# Lower rank = lower layer. A module may import its own layer and layers of lower rank.
# Layers of equal rank are independent of each other: stats/ is pure (numpy arrays in),
# the simulator stands alone, and neither may lean on the data contract.
RANKS = {
    "floor": 0,  # errors, resources (package data), text_values, private_files, *_text
    "contract": 1,
    "simulate": 1,
    "stats": 1,
    "store": 2,
    "ingest": 3,
    "analysis": 4,
    "report": 5,
    "outlets": 6,
    "gate": 6,  # council-db check's rules on the report; independent of the outlets
    "api": 7,
    "cli": 8,
    "entry": 9,  # python -m council_db
}
FLOOR = {"council_db.errors", "council_db.resources", "council_db.text_values", "council_db.private_files",
         "council_db.markdown_text", "council_db.terminal_text", "council_db.spreadsheet_text",
         "council_db.counted_text", "council_db.integer_keys", "council_db.__version__"}
SUBPACKAGES = ("contract", "simulate", "store", "ingest", "report", "outlets", "gate", "cli")

# Inside analysis/, one sub-package per question, ranked the same way: the window's arrays at
# the bottom, the joint model on them, the questions that read its effects or residuals
# beside each other (independent), and on top single sessions (an audit reads length and
# position figures) and the calibrated view (its ppi method reads the reference raters).
# docs/architecture.md lists what each holds.
ANALYSIS_RANKS = {
    "loading": 0,
    "joint": 1,
    "position": 2,
    "effects": 2,
    "drift": 2,
    "reference": 2,
    "pairwise": 2,
    "aggregation": 3,
    "sessions": 3,
    "self_preference": 3,
    "versions": 2,
    "hierarchical": 2,
}


def layer_of(module: str) -> str:
    if module in FLOOR:
        return "floor"
    if module == "council_db.api":
        return "api"
    if module == "council_db.__main__":
        return "entry"
    parts = module.split(".")
    if parts[1:3] == ["analysis", "stats"]:
        return "stats"
    if len(parts) > 1 and parts[1] in (*SUBPACKAGES, "analysis"):
        return parts[1]
    raise AssertionError(f"{module} belongs to no layer: put it in a layer's folder (docs/architecture.md)")


def analysis_part_of(module: str) -> str:
    """The analysis sub-package a module of the analysis layer sits in."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[2] in ANALYSIS_RANKS:
        return parts[2]
    if module == "council_db.analysis":
        return "package"
    raise AssertionError(f"{module} sits in no analysis sub-package: put it in one (docs/architecture.md)")


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


MODULES = module_names()


def imported_modules(module: str, path: Path) -> set[str]:
    """The council_db modules (or packages) this module imports, anywhere in its text."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("council_db"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith("council_db"):
                continue
            for alias in node.names:
                name = f"{base}.{alias.name}"
                if name in MODULES or name == "council_db.__version__":
                    found.add(name)
                else:
                    found.add(base)
    found.discard(module)
    return found


# The root package gathers the public API: its lazy re-exports may point anywhere.
GRAPH = {module: imported_modules(module, path) for module, path in MODULES.items() if module != "council_db"}


def test_every_module_belongs_to_a_layer():
    for module in GRAPH:
        assert layer_of(module) in RANKS


def test_imports_run_down_the_layers():
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        here = layer_of(module)
        for target in sorted(targets):
            assert target != "council_db", f"{module} imports the root package: import the module itself"
            there = layer_of(target)
            if there != here and RANKS[there] >= RANKS[here]:
                wrong.append(f"{module} ({here}) imports {target} ({there})")
    assert not wrong, "imports that run up or across the layers:\n" + "\n".join(wrong)


def test_every_analysis_module_sits_in_a_sub_package():
    for module in GRAPH:
        if layer_of(module) == "analysis" and module != "council_db.analysis":
            assert analysis_part_of(module) in ANALYSIS_RANKS


def test_analysis_imports_run_down_its_sub_packages():
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        if layer_of(module) != "analysis" or module == "council_db.analysis":
            continue
        here = analysis_part_of(module)
        for target in sorted(targets):
            if layer_of(target) != "analysis":
                continue
            there = analysis_part_of(target)
            assert there != "package", f"{module} imports the analysis package itself: import the module"
            if there != here and ANALYSIS_RANKS[there] >= ANALYSIS_RANKS[here]:
                wrong.append(f"{module} ({here}) imports {target} ({there})")
    assert not wrong, "imports that run up or across analysis/'s sub-packages:\n" + "\n".join(wrong)


def test_the_package_has_no_import_circles():
    circles = [component for component in strongly_connected(GRAPH) if len(component) > 1]
    assert not circles, f"import circles: {circles}"


def test_no_module_is_longer_than_one_reads_in_a_sitting():
    long = {module: n for module, path in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"


@pytest.mark.parametrize("graph, circles", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [{"a", "b", "c"}]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_circle_finder_finds_circles_and_only_circles(graph, circles):
    found = [c for c in strongly_connected(graph) if len(c) > 1]
    assert found == circles


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative: the strongly connected components of the import graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components
