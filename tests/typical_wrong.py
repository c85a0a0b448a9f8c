"""Typical wrong answers, the shape each lesson's tests/test_exercises_lessonNN.py gives them in (its ``TYPICAL``),
and :func:`collect`, which gathers every lesson's list for tests/test_hints.py.

A typical wrong answer is built from the solution by one edit (:func:`edited`) or given as it is (:func:`fixed`); its
key expressions are fragments of the solution's own text, and the key value is what the solution returns on the
check's first case the wrong answer gets wrong, computed from lessons/solutions/, never typed by hand. Its ``phrase``
is the words its own first hint must contain: each wrong answer a lesson's hints are written for is one entry of its
``TYPICAL``, the one list tests/test_hints.py checks.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from helpers import exercises, lessons

TESTS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Typical:
    """One exercise's typical wrong answer: ``wrong`` builds it; ``keys`` are fragments of the solution's text the
    first hint must not contain; ``cases`` gives the check's own cases as argument tuples (None for a kernel or a
    procedure), from which the key value comes; ``variable`` names what the solution defines; ``phrase`` is the words
    the first hint must contain (the mistake it names); ``context`` the check's keyword arguments (``attributes=``)."""

    wrong: Callable[[], Any]
    keys: tuple[str, ...] = ()
    cases: Callable[[], Sequence[tuple]] | None = None
    variable: str | None = None
    phrase: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)


def solution_text(lesson: str, name: str) -> str:
    """The solution's source, from lessons/solutions/."""
    text = exercises.solution(lesson, name)
    assert "not here" not in text and "no solution" not in text, text
    return text


def solution_value(lesson: str, variable: str, name: str | None = None) -> Any:
    """What a solution defines under ``variable`` (its function, or its CUDA source)."""
    namespace = exercises.namespace(lesson)
    exec(compile(solution_text(lesson, name or variable), "<solution>", "exec"), namespace)
    return namespace[variable]


def edited(lesson: str, name: str, variable: str, old: str, new: str, count: int = -1) -> Callable[[], Any]:
    """A wrong answer made from the solution by one edit of ``old`` (which it must contain; its first ``count``
    occurrences, every one by default)."""
    def build() -> Any:
        text = solution_text(lesson, name)
        assert old in text, f"{old!r} is not in the solution of {lesson}/{name}"
        namespace = exercises.namespace(lesson)
        exec(compile(text.replace(old, new, count), "<wrong answer>", "exec"), namespace)
        return namespace[variable]
    return build


def fixed(answer: Any) -> Callable[[], Any]:
    """A wrong answer given as it is (a lambda)."""
    return lambda: answer


def typical_file(lesson: str) -> Path:
    """The lesson's exercise tests, which hold its ``TYPICAL``."""
    return TESTS / f"test_exercises_lesson{lesson}.py"


def collect() -> dict[tuple[str, str], list[Typical]]:
    """Every lesson's ``TYPICAL``, from its tests/test_exercises_lessonNN.py (a lesson without exercises has none)."""
    found: dict[tuple[str, str], list[Typical]] = {}
    for lesson in lessons.ids():
        if typical_file(lesson).exists():
            found.update(getattr(importlib.import_module(typical_file(lesson).stem), "TYPICAL", {}))
    return found
