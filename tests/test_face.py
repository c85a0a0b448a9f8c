"""The face a learner meets in the lessons' code cells (issue 21): one start, results that show themselves, little
print, short lines and cells, and nothing built that is never shown.

Measured on the committed notebooks' sources, so it runs without executing them; ``python tests/test_face.py``
prints the figures.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from helpers import lessons

FIRST_CELL = ["%matplotlib inline", "import helpers as zc", "zc.start()"]
PRINT_SHARE = 0.08        # print lines / code lines, the whole course
LONGEST_LINE = 100        # characters, outside kernel sources
LONGEST_CELL = 15         # non-blank lines, outside kernel sources and exercise cells
DISTINCT_NAMES = 40       # names of the face a lesson uses (zc.X, zc.X.Y for the verbs' modules)
# Values a lesson builds that show only as a cell's last expression or through display(): a call to one of these that
# is neither is a table, text or result built and never shown.
SHOWN_ONLY_AS_VALUE = {"table", "Table", "compare", "check_figure", "expect", "bullets", "join", "describe",
                       "summary", "start", "session"}
CATALOGS = {"experiments", "plots", "findings", "kernels"}   # one name per experiment, figure, lesson, kernel file


def _notebooks() -> list[Path]:
    return lessons.notebooks()


def _code_cells(path: Path) -> list[nbformat.NotebookNode]:
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _is_kernel(cell: nbformat.NotebookNode) -> bool:
    return "__global__" in cell.source


def _is_exercise(cell: nbformat.NotebookNode) -> bool:
    return "exercise" in cell.metadata.get("tags", [])


def _lines(cell: nbformat.NotebookNode) -> list[str]:
    return [line for line in cell.source.splitlines() if line.strip()]


def _python(source: str) -> ast.Module | None:
    """The cell as Python, magics blanked; None for a cell magic's cell (``%%linux_only``...)."""
    if source.lstrip().startswith("%%"):
        source = source.split("\n", 1)[1] if "\n" in source else ""
    text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _called_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        func = node.func
        return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return ""


def _displayed_names(tree: ast.Module) -> set[str]:
    """Names shown by a cell: its last expression, or an argument of display()."""
    shown: set[str] = set()
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        shown |= {n.id for n in ast.walk(tree.body[-1].value) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called_name(node) == "display":
            shown |= {n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name)}
    return shown


def unshown(path: Path) -> list[str]:
    """What a notebook builds and never shows: a rich value computed as a statement that is not the cell's last
    expression, or assigned to a name that no cell shows (cell index and what)."""
    trees = [(i, _python(c.source)) for i, c in enumerate(_code_cells(path))]
    shown_anywhere: set[str] = set()
    for _, tree in trees:
        if tree is not None:
            shown_anywhere |= _displayed_names(tree)
    problems = []
    for i, tree in trees:
        if tree is None:
            continue
        for k, statement in enumerate(tree.body):
            last = k == len(tree.body) - 1
            if isinstance(statement, ast.Expr) and not last and _called_name(statement.value) in SHOWN_ONLY_AS_VALUE:
                problems.append(f"code cell {i}: {ast.unparse(statement)[:60]} is computed and dropped")
            if isinstance(statement, ast.Assign) and _called_name(statement.value) in {"table", "Table"}:
                names = {t.id for t in statement.targets if isinstance(t, ast.Name)}
                if not names & shown_anywhere:
                    problems.append(f"code cell {i}: the table {', '.join(names)} is built and never shown")
    return problems


def face_names(path: Path) -> set[str]:
    """The face's names a notebook uses: ``zc.X``, and ``zc.X.Y`` where X is a module of verbs, not a catalog."""
    names = set()
    for cell in _code_cells(path):
        for head, tail in re.findall(r"\bzc\.(\w+)(?:\.(\w+))?", cell.source):
            names.add(head if not tail or head in CATALOGS else f"{head}.{tail}")
    return names


def measure() -> dict[str, object]:
    code = prints = 0
    long_lines: list[str] = []
    long_cells: list[str] = []
    names: set[str] = set()
    for path in _notebooks():
        names |= face_names(path)
        for i, cell in enumerate(_code_cells(path)):
            lines = _lines(cell)
            code += len(lines)
            prints += sum(1 for line in lines if re.match(r"\s*print\(", line))
            if _is_kernel(cell):
                continue
            long_lines += [f"{path.stem[:2]} cell {i}: {len(line)} chars" for line in lines if len(line) > LONGEST_LINE]
            if len(lines) > LONGEST_CELL and not _is_exercise(cell):
                long_cells.append(f"{path.stem[:2]} cell {i}: {len(lines)} lines")
    return {"code_lines": code, "print_lines": prints, "print_share": prints / max(code, 1),
            "long_lines": long_lines, "long_cells": long_cells, "names": sorted(names)}


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.stem[:2])
def test_the_first_cell_starts_the_session_in_three_lines(path):
    first = _lines(_code_cells(path)[0])
    assert first == FIRST_CELL, f"{path.name}: the first code cell is {first}, not {FIRST_CELL}"


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.stem[:2])
def test_everything_built_is_shown(path):
    assert unshown(path) == []


def test_the_unshown_finder_finds_a_dropped_table(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("t = zc.table(['a'], [[1]])\nx = 1"),
                nbformat.v4.new_code_cell("zc.table(['a'], [[1]])\nx = 2"),
                nbformat.v4.new_code_cell("shown = zc.table(['a'], [[1]])"),
                nbformat.v4.new_code_cell("display(shown)\nzc.exercises.compare('06', ...)")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    problems = unshown(path)
    assert len(problems) == 2 and "the table t" in problems[0] and "cell 1" in problems[1]


def test_print_is_rare():
    found = measure()
    assert found["print_share"] <= PRINT_SHARE, (
        f"{found['print_lines']} of {found['code_lines']} lesson code lines print ({found['print_share']:.1%}); "
        "let a result show itself, or return Markdown from helpers.findings")


def test_no_long_line_outside_kernels():
    assert measure()["long_lines"] == []


def test_no_long_cell_outside_kernels_and_exercises():
    assert measure()["long_cells"] == []


def test_the_face_is_small():
    names = measure()["names"]
    assert len(names) <= DISTINCT_NAMES, f"{len(names)} names of the face used: {names}"


def test_lessons_import_only_the_face():
    for path in _notebooks():
        for i, cell in enumerate(_code_cells(path)):
            for line in cell.source.splitlines():
                if re.match(r"\s*(from helpers|import helpers\.)", line):
                    pytest.fail(f"{path.name} code cell {i}: {line.strip()!r}; use `zc.` (import helpers as zc)")


def test_the_learners_pages_name_the_face_not_the_package():
    """Issue 31: the README and the instructor guide call the CPU backend `zc.cpu`, as the lessons do."""
    root = Path(__file__).resolve().parent.parent
    for page in (root / "README.md", root / "lessons" / "instructor-guide.md"):
        assert "`helpers.cpu`" not in page.read_text(encoding="utf-8"), f"{page.name}: say `zc.cpu`"


MEASURED = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(?:GB/s|GiB/s|MB/s|ns|µs|us|ms)\b")
DERIVED = re.compile(r"[=×÷/]")


def typed_figures(path: Path) -> list[str]:
    """Figures with a unit of measurement (GB/s, ns, ms...) typed into a lesson's Markdown that are neither cited (a
    link in the same cell) nor derived on their line (=, ×, ÷ or /): a measured figure must come from a result."""
    found = []
    for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "markdown" or "](http" in cell.source:
            continue
        for line in cell.source.splitlines():
            found += [f"cell {i}: {m.group(0)!r} in {line.strip()[:80]!r}" for m in MEASURED.finditer(line)
                      if not DERIVED.search(re.sub(r"[GM]i?B/s", "", line))]
    return found


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.stem[:2])
def test_no_measured_figure_is_typed_into_the_text(path):
    assert typed_figures(path) == [], "quote a measured figure from a helpers.findings function, or cite its source"


def test_the_typed_figure_finder_finds_one(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("The zero-copy kernel read 50.9 GB/s on the H200."),
                nbformat.v4.new_markdown_cell("128 × 16 B / 1000 ns = 2 GB/s."),
                nbformat.v4.new_markdown_cell("About 63 GB/s ([PCI-SIG](https://pcisig.com))."),
                nbformat.v4.new_markdown_cell("A load took 1,093 ns.")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    assert [f.split(":")[0] for f in typed_figures(path)] == ["cell 0", "cell 3"]


if __name__ == "__main__":   # the figures: python tests/test_face.py
    found = measure()
    print(f"{found['print_lines']}/{found['code_lines']} print lines ({found['print_share']:.1%}), "
          f"{len(found['long_lines'])} long lines, {len(found['long_cells'])} long cells, "
          f"{len(found['names'])} names: {', '.join(found['names'])}")
