"""One record per figure across the course (issue 31): a figure quoted in two lessons (one dependent zero-copy load,
the pinned copy's GB/s) must come from one record, or its sentence must say which record it came from.

In replay every experiment returns the reference record's result (``experiments.reference``), so two lessons
agree unless a sentence reads another record. Each lesson's findings and prediction cells are run here in replay,
after only the cells they need (as in tests/test_exercise_stubs.py), and two ways of reading another record are
watched: a result passed in that was not replayed from the reference record, and a record's experiments read
inside the call (``records.matching_records``, which ``records.reference_record`` also uses, hands out records
that note when their ``experiments`` are read). Either must be named in what the cell shows (``data/<file>`` or the
file's name); a range over several records may instead say it is one ("across the 15 committed H200 records").
Computed from whatever record is the reference, never from today's figures.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest

from helpers import lessons as course_lessons, mode, records
from helpers.experiments.result import Result
from tests import learner_names as ln
from tests.test_exercise_stubs import _cells_needed, free_names

ACROSS = re.compile(r"\b(across|over)\b[^.]{0,40}\b(records|runs)\b|\bcommitted (H200 )?records\b")
QUOTING = re.compile(r"\bfindings\.|exercises\.compare\(")
# xfail(strict) for lessons that fail today; fix them and remove the entry
KNOWN: dict[str, str] = {}


class Watched(dict):
    """A record that notes, in ``read``, its file's name when its ``experiments`` are read."""

    def __init__(self, record: dict[str, Any], path: Path, read: set[str]) -> None:
        super().__init__(record)
        self.path, self.read = path, read

    def __getitem__(self, key: str) -> Any:
        if key == "experiments":
            self.read.add(self.path.name)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key == "experiments":
            self.read.add(self.path.name)
        return super().get(key, default)


def quoting_cells(lesson: str) -> list[ln.Cell]:
    """The lesson's cells that show sentences computed from results: findings and prediction comparisons, or a name
    the lesson bound to a findings module."""
    aliases = {name for name, value in ln.defined_before(lesson, 10**6).items()
               if value is not None and not isinstance(value, (ast.Import, ast.ImportFrom))
               and "findings" in ast.unparse(value)}
    alias = re.compile(rf"\b({'|'.join(map(re.escape, aliases))})\." if aliases else r"(?!)")
    return [c for c in ln.notebook(lesson)[1] if c.tree is not None and (QUOTING.search(c.source) or
                                                                      alias.search(c.source))]


def shown(value: Any) -> str:
    """What a cell's value shows: its Markdown, HTML or text."""
    for method in ("_repr_markdown_", "_repr_html_"):
        if hasattr(value, method):
            text = getattr(value, method)()
            if text:
                return str(text)
    return str(value)


def _results(node: ast.AST, namespace: dict[str, Any]) -> list[Result]:
    """The results a cell passes to its calls by name (a list of them too)."""
    found = []
    for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
        value = namespace.get(name)
        values = value if isinstance(value, (list, tuple)) else [value]
        found += [v for v in values if isinstance(v, Result)]
    return found


@pytest.fixture(scope="module")
def reference_name() -> str:
    return records.reference_record()[1].name


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Replay mode, and the records read while it lasts (by file name)."""
    read: set[str] = set()
    original = records.matching_records

    def matching(*args: Any, **kwargs: Any) -> list[tuple[dict[str, Any], Path]]:
        return [(Watched(record, path, read), path) for record, path in original(*args, **kwargs)]

    monkeypatch.setattr(records, "matching_records", matching)
    monkeypatch.setenv("ZC_FORCE_REPLAY", "1")
    mode.detect(refresh=True)
    yield read
    monkeypatch.undo()
    plt.close("all")    # the cells run drew figures that no notebook shows here
    forget_cached_records()
    mode.detect(refresh=True)


def forget_cached_records() -> None:
    """Clear the helpers' caches of what they read from records (``spread``'s committed results, a fitted model),
    so that a cell's reads are seen whichever cell read them first."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("helpers."):
            continue
        for value in list(vars(module).values()):
            code = getattr(getattr(value, "__wrapped__", None), "__code__", None)
            if hasattr(value, "cache_clear") and code is not None and \
                    {"records", "matching_records", "reference_record", "reference"} & set(code.co_names):
                value.cache_clear()


def _run(cell: ln.Cell, namespace: dict[str, Any]) -> Any:
    """Run a cell in ``namespace``; the value of its last expression (None if it ends otherwise)."""
    body, last = cell.tree.body[:-1], cell.tree.body[-1] if cell.tree.body else None
    exec(compile(ast.Module(body, []), f"<cell {cell.id}>", "exec"), namespace)
    if isinstance(last, ast.Expr):
        return eval(compile(ast.Expression(last.value), f"<cell {cell.id}>", "eval"), namespace)
    if last is not None:
        exec(compile(ast.Module([last], []), f"<cell {cell.id}>", "exec"), namespace)
    return None


def unnamed_records(lesson: str, read: set[str], reference_name: str) -> list[str]:
    """Run the lesson's quoting cells in order, each after the cells it needs (each cell once, in one namespace,
    as the notebook would); for each, the records other than the reference whose figures it used without naming
    them in what it shows."""
    namespace: dict[str, Any] = {"display": lambda *args, **kwargs: None, "__name__": "__main__"}
    done: set[int] = set()
    found = []
    forget_cached_records()     # each lesson reads its records afresh (a cache keeps them for the lesson's later cells)
    for cell in quoting_cells(lesson):
        for needed in _cells_needed(lesson, cell.index, free_names(cell.tree) - ln.always_there()):
            if needed.index not in done:
                _run(needed, namespace)
                done.add(needed.index)
        read.clear()
        text = shown(_run(cell, namespace))
        done.add(cell.index)
        passed = {r.record_file for r in _results(cell.tree, namespace) if not r.live and r.record_file}
        others = (passed | read) - {reference_name}
        if len(read - {reference_name}) > 1 and ACROSS.search(text):
            others -= read         # a range across the committed records, said as one
        unnamed = sorted(name for name in others if name not in text)
        if unnamed:
            found.append(f"cell {cell.id} ({cell.source.splitlines()[-1][:80]}): {', '.join(unnamed)}; it shows "
                         f"{text[:600]!r}")
    return found


LESSONS = [lesson for lesson in course_lessons.ids() if quoting_cells(lesson)]


def _param(lesson: str) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=f"{KNOWN[lesson]}; change {ln.where(lesson)}")] \
        if lesson in KNOWN else []
    return pytest.param(lesson, marks=marks, id=lesson)


@pytest.mark.parametrize("lesson", [_param(lesson) for lesson in LESSONS])
def test_a_sentence_from_another_record_than_the_reference_names_it(lesson, watched, reference_name):
    unnamed = unnamed_records(lesson, watched, reference_name)
    assert not unnamed, (f"lesson {lesson} (change {ln.where(lesson)}): figures from records other than the reference, "
                         f"{reference_name}, not named where they are shown:\n" + "\n".join(unnamed))


def test_every_lesson_that_quotes_figures_is_read():
    assert {"00", "06", "07", "08", "10", "14"} <= set(LESSONS), LESSONS


def test_a_watched_record_notes_a_read_of_its_experiments(watched, reference_name):
    record, path = records.reference_record()
    assert path.name == reference_name and not watched
    record["experiments"]
    assert watched == {reference_name}


def test_a_result_passed_by_name_is_found_with_its_record():
    other = Result("latency", {}, [], False, {"gpu": "NVIDIA H200"}, "another-record.json")
    found = _results(ast.parse("found.spin_turns(spin, [latency, 3])"), {"latency": other, "spin": 1})
    assert [r.record_file for r in found] == ["another-record.json"]
