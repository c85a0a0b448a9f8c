"""Every exercise runs as given (issue 31): the untouched exercise cell and its check, run after what precedes them
in replay mode, raise nothing and say "not yet"; every name they use is defined before them; the code the
exercise's instructions show (its stub's comments, the Markdown just above it) names what exists there; and the
solution ``zc.exercises.solution`` prints, pasted into the exercise cell, uses only names the notebook defined
before it and passes its check (a lesson module's ``namespace()`` supplies nothing here).

Cheap by design: the names are checked with ast over the cells, and the run executes only the cells before the
exercise that bind what the exercise and its check use (and, in turn, what those cells use), not the whole lesson.
A lesson known to fail may be marked xfail(strict) in KNOWN, with the files to change.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import nbformat
import pytest

from helpers import exercises as course_exercises
from tests import learner_names as ln
from tests.test_hint_code import scope, span_problems, spans

EXERCISES = [(lesson, e.name) for lesson in course_exercises.LESSONS_WITH_EXERCISES for e in ln.exercises(lesson)]
IDS = [f"{lesson}-{name}" for lesson, name in EXERCISES]
MODULE_ROOTS = ("zc", "np", "math")
COMMENT = re.compile(r"#\s?(.*)$", re.M)
# xfail(strict) for exercises that fail today; fix them and remove the entry
KNOWN: dict[tuple[str, str], str] = {}


def _param(lesson: str, name: str) -> Any:
    if (lesson, name) in KNOWN:
        reason = f"{KNOWN[(lesson, name)]}; change {ln.where(lesson)}"
        return pytest.param(lesson, name, marks=pytest.mark.xfail(strict=True, reason=reason), id=f"{lesson}-{name}")
    return pytest.param(lesson, name, id=f"{lesson}-{name}")


def exercise(lesson: str, name: str) -> ln.Exercise:
    return next(e for e in ln.exercises(lesson) if e.name == name)


def free_names(tree: ast.AST) -> set[str]:
    """Names a cell reads that it does not bind itself (at its top level or, for a function's body, inside it)."""
    bound = set(ln.bound_names(tree, inside=True))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _cells_needed(lesson: str, before: int, wanted: set[str]) -> list[ln.Cell]:
    """The cells before index ``before`` that bind ``wanted`` (the last binding of each), with the cells those need
    in turn, in notebook order."""
    cells = [c for c in ln.notebook(lesson)[1] if c.index < before and c.tree is not None]
    needed: dict[int, ln.Cell] = {}
    todo = set(wanted)
    while todo:
        name = todo.pop()
        binder = next((c for c in reversed(cells) if name in ln.bound_names(c.tree)), None)
        if binder is None or binder.index in needed:
            continue
        needed[binder.index] = binder
        todo |= free_names(binder.tree) - ln.always_there()
    return [needed[i] for i in sorted(needed)]


def instructions(lesson: str, name: str) -> str:
    """The exercise's instructions as written: the Markdown cells right above its cell, and its stub's comments."""
    path, _ = ln.notebook(lesson)
    cells = nbformat.read(path, as_version=4).cells
    index = exercise(lesson, name).cell.index
    above = []
    for cell in reversed(cells[:index]):
        if cell.cell_type != "markdown":
            break
        above.append(cell.source)
    return "\n".join(reversed(above)) + "\n" + "\n".join(COMMENT.findall(cells[index].source))


@pytest.mark.parametrize("lesson, name", [_param(*e) for e in EXERCISES])
def test_every_name_the_exercise_and_its_check_use_is_defined_before(lesson, name):
    ex = exercise(lesson, name)
    defined = set(ln.defined_before(lesson, ex.cell.index)) | ln.always_there()
    assert ex.cell.tree is not None and ex.check.tree is not None, f"{lesson}/{name}: a cell is not Python"
    missing = free_names(ex.cell.tree) - defined
    missing |= free_names(ex.check.tree) - defined - set(ln.bound_names(ex.cell.tree))
    assert not missing, f"lesson {lesson} (change {ln.where(lesson)}), exercise {name}: not defined before it: {missing}"


def module_problems(span: str, where: Any) -> list[str]:
    """What fails in ``span`` about the modules a learner's code calls (``zc``, ``np``, ``math``): instructions write
    other names as a signature or a formula (``memcpy_htod_async(dst, src, s)``, ``copy(k) < zero_copy(k)``)."""
    return [p for p in span_problems(span, where) if re.match(rf"`({'|'.join(MODULE_ROOTS)})\b", p)]


@pytest.mark.parametrize("lesson, name", [_param(*e) for e in EXERCISES])
def test_the_code_an_exercise_shows_names_what_exists(lesson, name):
    where = scope(lesson, frozenset({name}))
    found = [f"{problem} (in {span!r})" for span in spans(instructions(lesson, name))
             for problem in module_problems(span, where)]
    assert not found, f"lesson {lesson} (change {ln.where(lesson)}), exercise {name}'s instructions: " + "; ".join(found)


@pytest.mark.parametrize("lesson, name", [_param(*e) for e in EXERCISES])
def test_the_untouched_exercise_runs_after_what_precedes_it_and_says_not_yet(lesson, name, replay):
    ex = exercise(lesson, name)
    wanted = (free_names(ex.cell.tree) | free_names(ex.check.tree)) - ln.always_there()
    namespace: dict[str, Any] = {"display": lambda *args, **kwargs: None, "__name__": "__main__"}
    for cell in [*_cells_needed(lesson, ex.cell.index, wanted), ex.cell]:
        exec(compile(ln.python_source(cell.source), f"<lesson {lesson} cell {cell.id}>", "exec"), namespace)
    check = ex.check.tree.body[-1]
    assert isinstance(check, ast.Expr), f"{lesson}/{name}: the check cell should end with the check"
    exec(compile(ast.Module(ex.check.tree.body[:-1], []), "<check cell>", "exec"), namespace)
    feedback = eval(compile(ast.Expression(check.value), "<check>", "eval"), namespace)
    assert isinstance(feedback, course_exercises.Feedback) and feedback.status == "not yet", feedback


def solution_tree(lesson: str, name: str) -> ast.Module:
    """The exercise's printed solution (``zc.exercises.solution``), parsed: what a learner pastes into its cell."""
    return ast.parse(course_exercises.solution(lesson, name))


@pytest.mark.parametrize("lesson, name", [_param(*e) for e in EXERCISES])
def test_every_name_the_printed_solution_uses_is_defined_before_its_exercise(lesson, name):
    # the names a lesson module's namespace() supplies to other tests do not count: the notebook must define them
    ex = exercise(lesson, name)
    defined = set(ln.defined_before(lesson, ex.cell.index)) | ln.always_there()
    missing = free_names(solution_tree(lesson, name)) - defined
    assert not missing, (f"lesson {lesson}, exercise {name}: its solution (lessons/solutions/lesson{lesson}.py) uses "
                         f"names no cell before the exercise defines: {sorted(missing)}")


@pytest.mark.parametrize("lesson, name", [_param(*e) for e in EXERCISES])
def test_the_printed_solution_pasted_into_its_cell_passes_its_check(lesson, name, replay):
    ex = exercise(lesson, name)
    tree = solution_tree(lesson, name)
    wanted = (free_names(tree) | free_names(ex.check.tree)) - ln.always_there()
    namespace: dict[str, Any] = {"display": lambda *args, **kwargs: None, "__name__": "__main__"}
    for cell in _cells_needed(lesson, ex.cell.index, wanted):
        exec(compile(ln.python_source(cell.source), f"<lesson {lesson} cell {cell.id}>", "exec"), namespace)
    exec(compile(tree, f"<solution {lesson}/{name}>", "exec"), namespace)
    check = ex.check.tree.body[-1]
    exec(compile(ast.Module(ex.check.tree.body[:-1], []), "<check cell>", "exec"), namespace)
    course_exercises.reset_tries(lesson, name)
    feedback = eval(compile(ast.Expression(check.value), "<check>", "eval"), namespace)
    assert isinstance(feedback, course_exercises.Feedback) and feedback.status == "correct", feedback


def test_the_readers_find_free_names_earlier_names_and_the_instructions():
    assert free_names(ast.parse("def f(n):\n    k = n + 1\n    return np.arange(k) + m\n")) == {"np", "m"}
    first = exercise("09", "sectors_per_warp").cell.index
    assert {"zc", "np", "read_strided"} <= set(ln.defined_before("09", first))
    assert "sectors_per_warp" not in ln.defined_before("09", first)
    assert "np.random.default_rng(seed).permutation(n)" in spans(instructions("07", "line_cycle"))
