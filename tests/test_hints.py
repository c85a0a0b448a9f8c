"""Graded hints: every exercise check, given a typical wrong answer, first asks a question or names the
concept to revisit, without the solution's key expression or its value; the second try adds a smaller step; the
answer comes only from ``exercises.solution(...)``, which the third try points to. The untouched placeholder still
says "not yet" and counts as no try.

The typical wrong answers live with each lesson's exercise tests, in its tests/test_exercises_lessonNN.py's
``TYPICAL`` (one list per exercise, the only list of wrong answers a lesson has: each entry's ``phrase`` is the words
its own first hint must contain; tests/typical_wrong.py gives their shape and gathers them). A new exercise without
one fails :func:`test_every_exercise_has_a_typical_wrong_answer`, which names the file to add it to. The key
expressions are fragments of the solution's own text (the test checks they are there); the key value is what the
solution returns on the check's first case that the wrong answer gets wrong, computed from lessons/solutions/, never
typed by hand.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from helpers import exercises
from helpers.exercises import lesson01
from tests import learner_names as ln
from tests.test_exercises import CELLS, IDS
from test_exercises_lesson01 import _off_by_one_pages
from typical_wrong import Typical, collect, solution_text, solution_value, typical_file

# The hints are judged against the recorded figures, on any machine: live, a wrong answer measured beside other work
# can land on the other side of a threshold (the lessons run every check live under nbval).
pytestmark = pytest.mark.usefixtures("replay")

ROOT = Path(__file__).resolve().parent.parent
EXERCISE_MODULES = sorted((ROOT / "helpers" / "exercises").glob("lesson[0-9][0-9].py"))
TYPICAL = collect()


WRONG = [(lesson, name, i) for (lesson, name), typical in TYPICAL.items() for i in range(len(typical))]
WRONG_IDS = [f"{lesson}-{name}-{i}" for lesson, name, i in WRONG]


# --------------------------------------------------------------------------- the key value
def _flat(value: Any) -> list[Any]:
    """Numbers, bools and strings in a (nested) value; arrays, dicts and objects are skipped."""
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, (bool, np.bool_, str)):
        return [value]
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    if isinstance(value, (float, np.floating)):
        return [float(value)]
    return []


def _same(a: Any, b: Any) -> bool:
    fa, fb = _flat(a), _flat(b)
    if len(fa) != len(fb) or (not fa and a is not b):
        return False
    return all(_close(x, y) for x, y in zip(fa, fb))


def _numeric(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _close(x: Any, y: Any, rel_tol: float = 1e-6) -> bool:
    """Equal: exactly for two whole numbers (addresses are too large for a relative tolerance), else within
    ``rel_tol``."""
    if not (_numeric(x) and _numeric(y)):
        return x == y
    if float(x).is_integer() and float(y).is_integer():
        return int(x) == int(y)
    return math.isclose(x, y, rel_tol=rel_tol)


def key_values(lesson: str, name: str, typical: Typical) -> tuple[list[Any], list[Any]]:
    """(what the solution returns on the first case the wrong answer gets wrong, the numbers a hint may echo there:
    the case's inputs and the wrong answer's output)."""
    solution = solution_value(lesson, typical.variable or name, name)
    wrong = typical.wrong()
    for args in typical.cases():
        want = solution(*args)
        try:
            got = wrong(*args)
        except Exception:  # noqa: BLE001 (a wrong answer may raise; the check reports it)
            got = None
        if not _same(want, got):
            return _flat(want), _flat(args) + _flat(got)
    raise AssertionError(f"{lesson}/{name}: the wrong answer agrees with the solution on every case")


_NUMBER = re.compile(r"0x[0-9a-fA-F]+|(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers(text: str) -> list[float]:
    """Every number written in ``text`` (decimal with its sign, scientific or hexadecimal; thousands separators
    removed)."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    return [int(m, 16) if m.startswith("0x") else float(m) for m in _NUMBER.findall(text)]


def gives_away(message: str, values: list[Any], echoed: list[Any]) -> list[str]:
    """The key values ``message`` states (a number it writes, or a verdict such as "expected True"), leaving out
    those that equal the case's own inputs or the wrong answer (a hint may echo what it was given)."""
    found = []
    written = numbers(message)
    for value in values:
        if any(_numeric(value) and _numeric(e) and _close(abs(value), abs(e), 5e-3) or value == e for e in echoed):
            continue
        if _numeric(value):
            if value != 0 and any(_close(n, value, 5e-3) for n in written):
                found.append(f"{value:g}")
        else:
            phrases = [f"{verb} {shown}" for verb in ("expected", "predict", "return", "should be", "answer is")
                       for shown in {str(value), repr(value)}]
            found += [p for p in phrases if p.lower() in message.lower()]
    return found


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --------------------------------------------------------------------------- the tests
def test_every_exercise_has_a_typical_wrong_answer():
    uncovered = sorted(set(exercises.registered()) - set(TYPICAL))
    assert not uncovered, "exercises without a typical wrong answer: " + "; ".join(
        f"add (\"{lesson}\", \"{name}\"): [Typical(...)] to TYPICAL in tests/{typical_file(lesson).name}"
        for lesson, name in uncovered)
    unknown = sorted(set(TYPICAL) - set(exercises.registered()))
    assert not unknown, "TYPICAL names exercises no lesson registers (its CHECKS): " + "; ".join(
        f"{lesson}/{name} in tests/{typical_file(lesson).name}" for lesson, name in unknown)


@pytest.mark.parametrize("lesson, name, i", WRONG, ids=WRONG_IDS)
def test_the_first_hint_asks_and_the_second_takes_a_smaller_step(lesson, name, i):
    typical = TYPICAL[(lesson, name)][i]
    text = _normal(solution_text(lesson, name))
    for key in typical.keys:
        assert _normal(key) in text, f"{key!r} is not in the solution of {lesson}/{name}: not its key expression"
    answer = typical.wrong()
    first = exercises.check(lesson, name, answer, **typical.context)
    assert first.status == "hint" and first.tries == 1, first
    assert typical.phrase is None or typical.phrase in first.message, \
        f"the first hint does not name the mistake ({typical.phrase!r}): {first}"
    leaked = [key for key in typical.keys if _normal(key) in _normal(first.message)]
    assert not leaked, f"the first hint gives the key expression {leaked}: {first}"
    if typical.cases is not None:
        values, echoed = key_values(lesson, name, typical)
        assert not gives_away(first.message, values, echoed), f"the first hint gives the answer's value: {first}"
    second = exercises.check(lesson, name, answer, **typical.context)
    assert second.status == "hint" and second.tries == 2, second
    assert second.message != first.message and "Next step:" in second.message, second
    assert "solution(" not in first.message and "solution(" not in second.message
    third = exercises.check(lesson, name, answer, **typical.context)
    assert f'exercises.solution("{lesson}", "{name}")' in third.message, third


@pytest.mark.parametrize("notebook, lesson, name, variable, placeholder", CELLS, ids=IDS)
def test_the_untouched_placeholder_still_says_not_yet_and_is_no_try(notebook, lesson, name, variable, placeholder):
    namespace = exercises.namespace(lesson)
    exec(compile(placeholder, "<exercise>", "exec"), namespace)
    untouched = namespace[variable]
    assert exercises.check(lesson, name, untouched).status == "not yet"
    assert exercises.tries(lesson, name) == 0
    assert (lesson, name) in TYPICAL, (f"{notebook}: add a typical wrong answer for {lesson}/{name} to TYPICAL in "
                                       f"tests/{typical_file(lesson).name}")
    exercises.check(lesson, name, TYPICAL[(lesson, name)][0].wrong())
    again = exercises.check(lesson, name, untouched)
    assert again.status == "not yet" and exercises.tries(lesson, name) == 1, again


def test_tries_count_per_exercise_and_a_right_answer_starts_again():
    wrong = _off_by_one_pages
    assert exercises.tries("01", "pages_spanned") == 0
    assert exercises.check("01", "pages_spanned", wrong).tries == 1
    assert exercises.check("01", "pages_spanned", wrong).tries == 2      # the same answer again is another try
    assert exercises.check("01", "decode_entry", lambda e: (e >> 63, e)).tries == 1   # each exercise its own count
    assert exercises.check("01", "pages_spanned", lesson01.spanned).correct
    assert exercises.tries("01", "pages_spanned") == 0 and exercises.tries("01", "decode_entry") == 1
    assert exercises.check("01", "pages_spanned", wrong).tries == 1
    exercises.reset_tries("01", "decode_entry")
    assert exercises.tries("01", "decode_entry") == 0 and exercises.tries("01", "pages_spanned") == 1
    exercises.reset_tries()
    assert exercises.tries("01", "pages_spanned") == 0


def test_a_new_kind_of_mistake_starts_at_the_question():
    """Issue 31: the hint's level counts tries of the same mistake (its kind), not every try at the exercise."""
    by_index = lambda a, i, d_a: d_a + i   # noqa: E731
    at_start = lambda a, i, d_a: d_a       # noqa: E731
    exercises.check("04", "device_address", by_index)
    assert "Next step:" in exercises.check("04", "device_address", by_index).message
    third = exercises.check("04", "device_address", at_start)
    assert third.tries == 3 and "every element got the address" in third.message, third
    assert "Next step:" not in third.message and "solution(" not in third.message, third
    assert 'solution("04"' in exercises.check("04", "device_address", by_index).message
    exercises.reset_tries("04", "device_address")
    assert "Next step:" not in exercises.check("04", "device_address", by_index).message


def test_a_raising_answer_is_a_graded_try_too():
    def raises(*args):
        raise ZeroDivisionError("boom")

    first = exercises.check("04", "device_address", raises)
    second = exercises.check("04", "device_address", raises)
    assert first.status == second.status == "hint" and "ZeroDivisionError" in first.message
    assert "Next step:" not in first.message and "Next step:" in second.message
    assert "try 2" in str(second) and "try 2" in second._repr_markdown_()


def _threads_variants() -> list[Callable[[float, float, int], Any]]:
    return [
        lambda link, lat, per: math.ceil(link * lat / per),
        lambda link, lat, per: -(-link * lat // per),
        lambda link, lat, per: (int(link * lat) + per - 1) // per,
        lambda link, lat, per: np.ceil(np.float64(link) * lat / per),
        lambda link, lat, per: np.float32(link) * np.float32(lat) / np.float32(per),
        lambda link, lat, per: np.divide(np.multiply(link, lat), per),
    ]


@pytest.mark.parametrize("variant", range(6), ids=["math.ceil", "-(-a // b)", "int ceil division", "np.ceil",
                                                    "float32", "np.divide"])
def test_threads_for_link_judges_behaviour_not_form(variant):
    feedback = exercises.check("08", "threads_for_link", _threads_variants()[variant])
    assert feedback.correct, feedback


@pytest.mark.parametrize("variant", [
    lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t)),
    lambda r, t, share=0.1: -(-r * (1 - share) // (share * t)),
    lambda r, t, share=0.1: np.ceil(r * (1 - share) / (share * t)),
    lambda r, t, share=0.1: next(k for k in range(10**6) if r / (r + k * t) <= share),
], ids=["math.ceil", "-(-a // b)", "np.ceil", "search"])
def test_reads_needed_judges_behaviour_not_form(variant):
    assert exercises.check("13", "reads_needed", variant).correct


def _hint_calls(path: Path) -> list[tuple[int, str, int]]:
    """(line, enclosing function, arguments) of every hint(...) call in a lesson's exercise module, outside the
    prediction comparisons (which are not graded)."""
    calls = []
    for node, stack in ln.calls_in_functions(ast.parse(path.read_text())):
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name in ("_hint", "hint") and not any(f.startswith("compare") for f in stack):
            starred = any(isinstance(a, ast.Starred) for a in node.args)   # hint(*pair): graded
            given = 2 if starred else len(node.args) + len(node.keywords)
            calls.append((node.lineno, stack[-1] if stack else "", given))
    return calls


@pytest.mark.parametrize("path", EXERCISE_MODULES, ids=[p.stem for p in EXERCISE_MODULES])
def test_every_hint_in_a_check_is_graded(path):
    ungraded = [f"line {line} ({function})" for line, function, args in _hint_calls(path) if args < 2]
    assert not ungraded, f"{path.name}: hints without a smaller step: {', '.join(ungraded)}"


@pytest.mark.parametrize("lesson, name, i", [w for w in WRONG if TYPICAL[w[0], w[1]][w[2]].cases is not None],
                         ids=[i for w, i in zip(WRONG, WRONG_IDS) if TYPICAL[w[0], w[1]][w[2]].cases is not None])
def test_a_hint_is_graded_by_words_that_hold_on_every_case(lesson, name, i):
    """Issue 31: the kind a hint's grade counts holds no value of the case it failed on (a page count, an entry, a
    model's figure), so the same mistake failing on another case still gets the smaller step."""
    typical = TYPICAL[(lesson, name)][i]
    values, echoed = key_values(lesson, name, typical)
    kind = exercises.mistake_kind(exercises.check(lesson, name, typical.wrong(), **typical.context))
    case = [v for v in values + echoed if _numeric(v) and abs(v) > 1]
    stated = [n for n in numbers(kind) if any(_close(n, v) for v in case)]
    assert not stated, f"{lesson}/{name}: the hint's kind holds the case's values {stated}: {kind!r}"
