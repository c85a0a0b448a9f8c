"""A learner's function that returns None (a `return` left out, a branch without one) is told so by every lesson's
function exercises, while the untouched stub, whose body is only a docstring, comments and ``...``, still says "not
yet" (issue 31; :mod:`helpers.exercises.returns`). Replay mode, the CPU backend."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from helpers import exercises
from helpers.exercises.returns import empty_body, returned_none
from tests import learner_names as ln

# None is a right answer here, or the function fills an array it was given: no "returned None" hint to give
NONE_IS_AN_ANSWER = {("11", "double_buffered_add"): "it fills c; what it returns is not judged",
                     ("05", "add_on_gpu"): "a function that launches nothing is 'not yet' before its result counts"}


def _function_exercises() -> list[tuple[str, str, ast.FunctionDef]]:
    found = []
    for lesson in exercises.LESSONS_WITH_EXERCISES:
        for ex in ln.exercises(lesson):
            defs = [node for node in ex.cell.tree.body if isinstance(node, ast.FunctionDef)]
            if defs and (lesson, ex.name) not in NONE_IS_AN_ANSWER:
                found.append((lesson, ex.name, defs[0]))
    return found


FUNCTIONS = _function_exercises()


def _compiled(node: ast.FunctionDef, body: list[ast.stmt]) -> Any:
    """The stub's function with ``body`` for its body (its signature and docstring kept)."""
    doc = [node.body[0]] if ast.get_docstring(node) else []
    tree = ast.Module([ast.FunctionDef(node.name, node.args, doc + body, [], None, type_params=[])], [])
    namespace: dict[str, Any] = {"np": __import__("numpy")}
    exec(compile(ast.fix_missing_locations(tree), "<learner>", "exec"), namespace)
    return namespace[node.name]


def test_every_function_exercise_is_found():
    assert len(FUNCTIONS) >= 20 and ("04", "same_address") in {(lesson, name) for lesson, name, _ in FUNCTIONS}


@pytest.mark.parametrize("lesson, name, node", FUNCTIONS, ids=[f"{lesson}-{name}" for lesson, name, _ in FUNCTIONS])
def test_a_function_that_returns_none_is_told_so_and_the_stub_is_not_yet(lesson, name, node, replay):
    exercises.reset_tries(lesson, name)
    stub = _compiled(node, ast.parse("...").body)
    assert empty_body(stub)
    assert exercises.check(lesson, name, stub).status == "not yet"
    no_return = _compiled(node, ast.parse("worked = 1   # and no return").body)
    said = exercises.check(lesson, name, no_return)
    exercises.reset_tries(lesson, name)
    assert said.status == "hint" and "returned None" in said.message, f"{lesson}/{name}: {said}"


def test_the_helper_tells_a_value_a_stub_and_a_missing_return_apart():
    def stub(x):
        """A docstring, a comment and ... only."""
        # about 3 lines
        ...

    def forgot(x):
        x + 1

    assert returned_none(forgot, 0) is None and returned_none(stub, None) is None
    said = returned_none(forgot, None, "x = 2")
    assert said is not None and said.status == "hint" and "forgot returned None for x = 2" in said.message
    assert "`else`" in said.step
