"""A hint sends the learner back, never ahead (issue 31): a hint's "section N" names a section the learner has read
by the time they try the exercise, that is, the exercise's own section or an earlier one.

The hints are read from each lesson's exercise module (every ``hint(...)`` call in a function its check reaches,
helpers included); the exercise's section is the last "## N." heading above its cell in the notebook.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from helpers import exercises
from tests import learner_names as ln

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted((ROOT / "helpers" / "exercises").glob("lesson[0-9][0-9].py"))
SECTION = re.compile(r"\bsection (\d+)", re.I)
ELSEWHERE = re.compile(r"lesson \d+(?:'s)? section \d+", re.I)   # another lesson's section: not this one's
HEADING = re.compile(r"^## (\d+)\.", re.M)


def _texts(node: ast.AST) -> str:
    """The literal text of a call's arguments (f-strings' literal parts included)."""
    return " ".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _reached(tree: ast.Module, start: str) -> set[str]:
    """The module's functions ``start`` calls, directly or through others, itself included."""
    calls = {f.name: {getattr(c.func, "id", None) for c in ast.walk(f) if isinstance(c, ast.Call)}
             for f in tree.body if isinstance(f, ast.FunctionDef)}
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in calls and name not in seen:
            seen.add(name)
            todo.extend(n for n in calls[name] if n)
    return seen


def _section_of(lesson: str, cell_index: int) -> int:
    """The number of the last "## N." section heading above a cell (0 before the first)."""
    path, _ = ln.notebook(lesson)
    cells = nbformat.read(path, as_version=4).cells[:cell_index]
    found = [int(m) for c in cells if c.cell_type == "markdown" for m in HEADING.findall(c.source)]
    return found[-1] if found else 0


def _sections(text: str) -> list[int]:
    """The sections of this lesson a text names."""
    return [int(n) for n in SECTION.findall(ELSEWHERE.sub("", text))]


def _references(path: Path) -> list[tuple[str, int, int]]:
    """(exercise, the section a hint of its check names, the line) for every hint in a lesson's exercise module."""
    lesson = path.stem.removeprefix("lesson")
    tree = ast.parse(path.read_text())
    hints: dict[str, list[tuple[int, int]]] = {}
    for node, stack in ln.calls_in_functions(tree):
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name in ("_hint", "hint") and stack:
            hints.setdefault(stack[0], []).extend((n, node.lineno) for n in _sections(_texts(node)))
    found = []
    for exercise, check in exercises.checks(lesson).items():
        for function in _reached(tree, getattr(check, "__name__", "")):
            found += [(exercise, section, line) for section, line in hints.get(function, [])]
    return found


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_a_hint_names_only_sections_the_learner_has_read(path):
    lesson = path.stem.removeprefix("lesson")
    where = {e.name: _section_of(lesson, e.cell.index) for e in ln.exercises(lesson)}
    ahead = [f"line {line}: {exercise}'s hint names section {section}, the exercise sits in section "
             f"{where[exercise]}" for exercise, section, line in _references(path)
             if exercise in where and section > where[exercise]]
    assert not ahead, f"{path.name}: " + "; ".join(ahead)


def test_the_reference_finder_sees_a_hint_ahead_of_its_exercise():
    tree = ast.parse('def check_x(f):\n    return _helper(f)\n\n'
                     'def _helper(f):\n    return _hint("see section 5", "step")\n')
    assert _reached(tree, "check_x") == {"check_x", "_helper"}
    calls = [(node, stack) for node, stack in ln.calls_in_functions(tree) if getattr(node.func, "id", "") == "_hint"]
    assert [_sections(_texts(node)) for node, _ in calls] == [[5]]
    assert _sections("lesson 01's section 2, then section 3") == [3]
