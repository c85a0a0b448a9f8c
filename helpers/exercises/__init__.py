"""Exercises: the learner writes code, a check says "not yet", "correct" or gives a hint (issue 10).

Every exercise is a notebook cell tagged ``exercise`` followed by a cell calling :func:`check`.
A check never raises: on the untouched placeholder (``...``, ``None``, a function whose body is
``...``, a kernel whose body is only a ``// TODO`` comment) it says "not yet" and what to do; on a
right answer "correct" and why; on a typical wrong answer a specific hint. Solutions live in
``lessons/solutions/lessonNN.py`` (an instructor may delete the folder); :func:`solution` shows
one only when asked.

Lesson 01 introduces :class:`Feedback`, :func:`check` and :func:`solution`. Each lesson's checks live in
``helpers/exercises/lessonNN.py`` (its ``CHECKS``); lesson 09's kernel exercise builds on
:mod:`helpers.coalescing_exercise`.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

__all__ = ["Feedback", "check", "solution", "is_placeholder", "not_yet", "hint", "correct", "checks", "namespace",
           "live_module", "registered", "SOLUTIONS"]

SOLUTIONS = Path(__file__).resolve().parent.parent.parent / "lessons" / "solutions"
Status = Literal["not yet", "correct", "hint"]
_LABEL = {"not yet": "Not yet", "correct": "Correct", "hint": "Hint"}


@dataclass(frozen=True)
class Feedback:
    """What a check found: ``status`` is "not yet", "correct" or "hint"; ``message`` says it (lesson 01)."""

    status: Status
    message: str
    exercise: str = ""

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def __str__(self) -> str:
        where = f" [{self.exercise}]" if self.exercise else ""
        return f"{_LABEL.get(self.status, self.status)}{where}: {self.message}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        # plain words, no emoji: a browser without an emoji font would show empty boxes
        return f"**{_LABEL.get(self.status, self.status)}.** {self.message}"


def not_yet(what: str) -> Feedback:
    """A "not yet" feedback: the placeholder is untouched (for the lesson modules)."""
    return Feedback("not yet", what)


def hint(what: str) -> Feedback:
    """A specific hint for a wrong answer (for the lesson modules)."""
    return Feedback("hint", what)


def correct(why: str) -> Feedback:
    """A right answer, with one sentence on why (for the lesson modules)."""
    return Feedback("correct", why)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def kernel_failure_hint(exc: Exception, kernel: str, past_end: str, fix: str, name_note: str = "") -> Feedback:
    """The hint for a learner's kernel that did not build or run (kernel exercises of lessons 05, 08 and 14): an
    access out of bounds (``past_end`` names what was overrun, ``fix`` follows the error's first line), a kernel name
    not found (``name_note`` is added), or the error itself."""
    text = f"{type(exc).__name__}: {exc}"
    if "OutOfBounds" in type(exc).__name__ or "outside" in str(exc):
        return hint(f"{past_end} ({text.splitlines()[0][:300]}){fix}")
    if "No __global__ function named" in str(exc) or "named symbol not found" in str(exc):
        return hint(f"no kernel named {kernel}: keep `extern \"C\" __global__ void {kernel}(...)`{name_note}.")
    return hint(f"the kernel did not build or run: {text[:600]}")


def is_placeholder(answer: Any) -> bool:
    """True for an untouched placeholder: ``...``, ``None``, or CUDA source whose kernel bodies are empty (lesson 01)."""
    if answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, str):
        code = _COMMENTS.sub("", answer)
        bodies = re.findall(r"__global__[^{]*\{(.*?)\}\s*$", code, re.S)
        return not code.strip() or (bool(bodies) and all(not b.strip() for b in bodies))
    return False


def live_module(source: str) -> Any:
    """A learner's CUDA source compiled with PyCUDA in the course's one context (live only; kernel exercises from
    lesson 05 on). The context is made current first, so a check works even when no lesson cell has touched the GPU."""
    from pycuda.compiler import SourceModule

    from .. import gpu

    gpu.context()
    return SourceModule(source, no_extern_c=True)


# --------------------------------------------------------------------------- registry
# Each lesson with exercises has a module ``helpers.exercises.lessonNN`` whose ``CHECKS`` maps an exercise's name to
# its check; it may define ``namespace()``, the names its exercise cells expect besides NumPy (tests use it).
LESSONS_WITH_EXERCISES = tuple(sorted(p.stem[6:] for p in Path(__file__).parent.glob("lesson[0-9][0-9].py")))


def checks(lesson: str) -> dict[str, Callable[..., Feedback]]:
    """The checks of one lesson's exercises, by name (empty for a lesson without exercises)."""
    if lesson not in LESSONS_WITH_EXERCISES:
        return {}
    return dict(importlib.import_module(f"{__name__}.lesson{lesson}").CHECKS)


def namespace(lesson: str) -> dict[str, Any]:
    """What an exercise cell of ``lesson`` may use besides what it imports itself (tests run cells in it)."""
    names: dict[str, Any] = {"np": np}
    if lesson in LESSONS_WITH_EXERCISES:
        module = importlib.import_module(f"{__name__}.lesson{lesson}")
        names.update(getattr(module, "namespace", dict)())
    return names


def registered() -> dict[tuple[str, str], Callable[..., Feedback]]:
    """Every check of every lesson, keyed by (lesson, name)."""
    return {(lesson, name): fn for lesson in LESSONS_WITH_EXERCISES for name, fn in checks(lesson).items()}


def check(lesson: str, name: str, answer: Any, **context: Any) -> Feedback:
    """Check ``answer`` to exercise ``name`` of lesson ``lesson``; never raises (lesson 01)."""
    checker = checks(lesson).get(name)
    if checker is None:
        known = ", ".join(f"{lsn}/{nm}" for lsn, nm in registered())
        return Feedback("hint", f"no exercise {lesson}/{name}; the exercises are {known}.", f"{lesson}/{name}")
    try:
        feedback = checker(answer, **context)
    except Exception as exc:  # noqa: BLE001 (the learner's code may raise anything)
        feedback = hint(f"your code raised {type(exc).__name__}: {exc}".strip()[:800])
    return Feedback(feedback.status, feedback.message, f"{lesson}/{name}")


_SECTION = re.compile(r"^# exercise: (\w+)\s*$", re.M)


def solution(lesson: str, name: str) -> str:
    """The text of a solution from ``lessons/solutions/lessonNN.py``, or a plain note that it is absent (lesson 01)."""
    path = SOLUTIONS / f"lesson{lesson}.py"
    if not SOLUTIONS.is_dir():
        return ("The solutions folder lessons/solutions/ is not here: your instructor removed it (for a graded "
                "class, perhaps). Ask them, or keep working with the check's hints.")
    if not path.is_file():
        return f"There is no solution file for lesson {lesson} ({path.name} is not in lessons/solutions/)."
    text = path.read_text()
    parts = _SECTION.split(text)
    sections = dict(zip(parts[1::2], parts[2::2]))
    if name not in sections:
        return f"{path.name} has no solution named {name!r}; it has {', '.join(sections) or 'none'}."
    return sections[name].strip() + "\n"
