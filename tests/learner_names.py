"""What a learner has at hand in a lesson (issue 31), for the tests of hints and exercise stubs: the names the
notebook's code cells define before a given cell, the objects the face's names stand for, and where each exercise's
cell and check sit. Static (ast over the cells), so it costs no notebook run.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
import typing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
CHECK_CALL = re.compile(r'exercises\.check\("(\d\d)",\s*"(\w+)"')
# what a notebook cell has besides builtins: IPython's own names
IPYTHON = {"display", "get_ipython", "In", "Out", "exit", "quit"}
def calls_in_functions(tree: ast.AST) -> list[tuple[ast.Call, tuple[str, ...]]]:
    """Every call in ``tree``, with the names of the functions it sits in, outermost first (the walk the hint tests
    make over a lesson's check module)."""
    found: list[tuple[ast.Call, tuple[str, ...]]] = []
    stack: list[str] = []

    class Visitor(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            stack.append(node.name)
            self.generic_visit(node)
            stack.pop()

        def visit_Call(self, node: ast.Call) -> None:
            found.append((node, tuple(stack)))
            self.generic_visit(node)

    Visitor().visit(tree)
    return found


def where(lesson: str) -> str:
    """The files to change for a lesson's exercises and text: its exercise module and its notebook."""
    from helpers.lessons import lesson as find

    return f"helpers/exercises/lesson{lesson}.py, {find(lesson).notebook().relative_to(find(lesson).notebook().parents[1])}"


def python_source(source: str) -> str:
    """A code cell's source as Python: IPython's magics and shell lines (``%``, ``!``) become ``pass``."""
    return "\n".join(f"{line[:len(line) - len(line.lstrip())]}pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def parse_cell(source: str) -> ast.Module | None:
    """The cell's AST, or None for a cell that is not Python as written."""
    try:
        return ast.parse(python_source(source))
    except SyntaxError:
        return None


def bound_names(tree: ast.AST, *, inside: bool = False) -> dict[str, ast.AST | None]:
    """Names a cell binds at its top level (assignments, defs, imports, loop and ``with`` targets), each with the
    value it was assigned when that is a plain ``name = value``; with ``inside``, also the parameters and locals of
    the functions it defines (the vocabulary of an exercise's own code)."""
    found: dict[str, ast.AST | None] = {}

    def targets(node: ast.AST, value: ast.AST | None) -> None:
        if isinstance(node, ast.Name):
            found[node.id] = value
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                targets(element, None)
        elif isinstance(node, ast.Starred):
            targets(node.value, None)

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if top or inside:                  # inside: a function nested in one is its local
                    found[child.name] = child
                if inside and not isinstance(child, ast.ClassDef):
                    args = child.args
                    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                        if arg is not None:
                            found[arg.arg] = None
                if inside:
                    visit(child, False)
                continue
            if isinstance(child, ast.Lambda):
                if inside:
                    for arg in child.args.args:
                        found[arg.arg] = None
                continue
            if top or inside:
                if isinstance(child, ast.Assign):
                    for target in child.targets:
                        targets(target, child.value if len(child.targets) == 1 else None)
                elif isinstance(child, (ast.AnnAssign, ast.AugAssign)):
                    targets(child.target, getattr(child, "value", None))
                elif isinstance(child, ast.NamedExpr):
                    targets(child.target, child.value)
                elif isinstance(child, (ast.For, ast.AsyncFor, ast.comprehension)):
                    targets(child.target, None)
                elif isinstance(child, ast.withitem) and child.optional_vars is not None:
                    targets(child.optional_vars, None)
                elif isinstance(child, ast.ExceptHandler) and child.name:
                    found[child.name] = None
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    for alias in child.names:
                        found[(alias.asname or alias.name).split(".")[0]] = child
            visit(child, top and isinstance(child, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.withitem,
                                                    ast.ExceptHandler)) or False)

    visit(tree, True)
    return found


@dataclass(frozen=True)
class Cell:
    """One code cell of a lesson: its index, id, source, tags and AST (None when not Python)."""

    index: int
    id: str
    source: str
    tags: tuple[str, ...]
    tree: ast.Module | None


@lru_cache(maxsize=None)
def notebook(lesson: str) -> tuple[Path, tuple[Cell, ...]]:
    """The lesson's notebook (as in the working copy) and its code cells."""
    path = next(LESSONS.glob(f"{lesson}-*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    return path, tuple(Cell(i, c.get("id", ""), c.source, tuple(c.metadata.get("tags", [])), parse_cell(c.source))
                       for i, c in enumerate(cells) if c.cell_type == "code")


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson: its name, its cell (tagged ``exercise``) and the cell of its check."""

    lesson: str
    name: str
    cell: Cell
    check: Cell


@lru_cache(maxsize=None)
def exercises(lesson: str) -> tuple[Exercise, ...]:
    """The lesson's exercises in notebook order: each cell tagged ``exercise`` with the check cell after it."""
    _, cells = notebook(lesson)
    found = []
    for cell, after in zip(cells, cells[1:]):
        match = CHECK_CALL.search(after.source)
        if "exercise" in cell.tags and match and match.group(1) == lesson:
            found.append(Exercise(lesson, match.group(2), cell, after))
    return tuple(found)


def defined_before(lesson: str, index: int) -> dict[str, ast.AST | None]:
    """Names the lesson's code cells bind in the cells before the cell at ``index`` (later bindings win)."""
    names: dict[str, ast.AST | None] = {}
    for cell in notebook(lesson)[1]:
        if cell.index < index and cell.tree is not None:
            names.update(bound_names(cell.tree))
    return names


def always_there() -> set[str]:
    """Names every cell has: Python's builtins and IPython's."""
    return set(dir(builtins)) | IPYTHON


# --------------------------------------------------------------------------- what a name stands for
MISSING = object()


def import_target(node: ast.AST, name: str) -> Any:
    """The module or object an import statement binds to ``name``, or MISSING."""
    try:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return importlib.import_module(alias.name if alias.asname else alias.name.split(".")[0])
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = importlib.import_module(node.module)
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return getattr(module, alias.name, MISSING)
    except ImportError:
        return MISSING
    return MISSING


def resolve(node: ast.AST, names: dict[str, ast.AST | None]) -> Any:
    """The object an expression such as ``zc.experiments.stride`` stands for, where it is known without running the
    notebook: an import's module, its attributes, and the class a face function's return annotation names (for a
    name assigned from a call). MISSING when unknown or absent."""
    if isinstance(node, ast.Name):
        bound = names.get(node.id)
        if isinstance(bound, (ast.Import, ast.ImportFrom)):
            return import_target(bound, node.id)
        if isinstance(bound, ast.Call):
            return returned_class(resolve(bound.func, names))
        return MISSING
    if isinstance(node, ast.Attribute):
        owner = resolve(node.value, names)
        return MISSING if owner is MISSING else attribute_of(owner, node.attr)
    return MISSING


class Instance:
    """Stands for an instance of ``cls``: what a face function returns, by its annotation."""

    def __init__(self, cls: type) -> None:
        self.cls = cls


def returned_class(function: Any) -> Any:
    """An :class:`Instance` of the class ``function``'s return annotation names, or MISSING."""
    if not callable(function) or isinstance(function, Instance):
        return MISSING
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 (annotations that do not evaluate: unknown)
        return MISSING
    returned = hints.get("return")
    return Instance(returned) if isinstance(returned, type) and returned.__module__.startswith("helpers") else MISSING


def has_attribute(owner: Any, attr: str) -> bool:
    """Whether ``owner`` (an object, or an :class:`Instance` of a class) has ``attr``."""
    if not isinstance(owner, Instance):
        return hasattr(owner, attr)
    cls = owner.cls
    if hasattr(cls, attr):
        return True
    for klass in cls.__mro__:
        if attr in getattr(klass, "__annotations__", {}) or attr in getattr(klass, "__slots__", ()):
            return True
        init = klass.__dict__.get("__init__")
        if init is not None:
            try:
                if re.search(rf"self\.{attr}\b\s*(:[^=]*)?=", inspect.getsource(init)):
                    return True
            except (OSError, TypeError):
                pass
    return False


def attribute_of(owner: Any, attr: str) -> Any:
    """``owner.attr`` where it can be known, else MISSING (an instance's data attribute is not known)."""
    if isinstance(owner, Instance):
        found = getattr(owner.cls, attr, MISSING)
        return found if callable(found) and not isinstance(found, type) else MISSING
    return getattr(owner, attr, MISSING)
