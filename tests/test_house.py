"""The helpers package is folded by job into layers: no circle of imports, and no layer imports a higher one.

The import graph is read from the source (module-level and function-level imports alike, relative ones
resolved), so an import that runs only inside a function still counts: it is a dependency all the same.
A new module must be given a layer here before it can pass.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import helpers

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "helpers"

# Lowest first. A module may import its own layer and those listed before it, never one after.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("helpers.errors", "helpers.paths", "helpers.lessons", "helpers.mode", "helpers.records",
              "helpers.tables", "helpers.i18n")),
    ("sharing", ("helpers.sharing",)),
    ("memory", ("helpers.memory",)),
    ("kernels", ("helpers.kernels",)),
    ("cpu", ("helpers.cpu",)),
    ("platform", ("helpers.platform",)),
    ("experiments", ("helpers.experiments",)),
    ("analysis", ("helpers.analysis",)),
    ("exercises", ("helpers.exercises",)),
    ("findings", ("helpers.findings",)),
    ("display", ("helpers.display",)),
    ("tools", ("helpers.tools",)),
    ("face", ("helpers", "helpers.course", "helpers.__main__")),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _known(name: str) -> str:
    """``name`` or the nearest enclosing module that exists (``helpers.memory.gpu.context`` -> ``helpers.memory.gpu``)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(name: str) -> set[str]:
    """The helpers modules ``name`` imports, anywhere in its source."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {_known(a.name) for a in node.names if a.name.split(".")[0] == "helpers"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "helpers":
                continue
            for alias in node.names:
                found.add(_known(f"{base}.{alias.name}") if f"{base}.{alias.name}" in MODULES else _known(base))
    return found - {name}


GRAPH = {name: imports_of(name) for name in MODULES}


def layer_of(name: str) -> int:
    """The index in LAYERS of the longest prefix that holds ``name``."""
    best, index = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best and (
                    prefix != "helpers" or name == "helpers"):
                best, index = len(prefix), i
    if index is None:
        raise KeyError(name)
    return index


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_imports():
    # gpu makes the context and then joins the queue, inside context(): a function-level import.
    assert "helpers.sharing.gpu_queue" in GRAPH["helpers.memory.gpu"]
    assert "helpers.memory.gpu" in GRAPH["helpers.platform.provenance"]


def test_no_circle_of_imports():
    found = cycles(GRAPH)
    assert not found, f"circles of imports (break each by moving what both need a layer down): {found}"


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_module_has_a_layer():
    missing = []
    for name in MODULES:
        try:
            layer_of(name)
        except KeyError:
            missing.append(name)
    assert not missing, f"give these modules a layer in tests/test_house.py's LAYERS: {missing}"


def test_no_layer_imports_a_higher_one():
    upward = [f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
              for name, targets in GRAPH.items() for target in sorted(targets) if layer_of(target) > layer_of(name)]
    assert not upward, "lower layers never import higher ones:\n" + "\n".join(upward)


def test_the_top_level_holds_only_the_core_and_the_face():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    allowed = {n.split(".")[1] for _, names in (LAYERS[0], LAYERS[-1]) for n in names if n.count(".") == 1}
    assert set(top) <= allowed | {"__init__"}, f"fold these into the subpackage of their job: {set(top) - allowed}"


def test_the_face_gives_the_modules_lessons_name():
    for name, target in helpers.FACE.items():
        assert getattr(helpers, name) is importlib.import_module(target), name
    with pytest.raises(AttributeError):
        helpers.not_a_module  # noqa: B018


def test_every_name_a_lesson_imports_from_helpers_exists():
    import nbformat

    wanted: dict[str, set[str]] = {}
    for path in sorted((ROOT / "lessons").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for line in cell.source.splitlines():
                match = re.match(r"from (helpers[\w.]*) import (.+)", line.strip())
                if match:
                    for item in match.group(2).split("#")[0].strip("() ").split(","):
                        wanted.setdefault(match.group(1), set()).add(item.split(" as ")[0].strip())
    missing = []
    for module, names in wanted.items():
        imported = importlib.import_module(module)
        missing += [f"{module}.{n}" for n in sorted(names) if not hasattr(imported, n)
                    and f"{module}.{n}" not in MODULES]
    assert not missing, f"lessons import names helpers does not have: {missing}"
