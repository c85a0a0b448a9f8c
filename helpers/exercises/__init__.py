"""Exercises: the learner writes code, a check says "not yet", "correct" or gives a hint (issue 10).

Every exercise is a notebook cell tagged ``exercise`` followed by a cell calling :func:`check`.
A check never raises: on the untouched placeholder (``...``, ``None``, a function whose body is
``...``, a kernel whose body is only a ``// TODO`` comment) it says "not yet" and what to do; on a
right answer "correct" and why; on a typical wrong answer a specific hint. Solutions live in
``lessons/solutions/lessonNN.py`` (an instructor may delete the folder); :func:`solution` shows
one only when asked.

Hints are graded. A lesson module's check returns ``hint(question, step)``: ``question`` names what is
wrong and asks a question or names the concept to revisit, without the answer; ``step`` is a smaller step towards
it. :func:`check` counts the wrong tries at each exercise, per process (a kernel restart starts again at zero), and
grades a hint by the tries of the same mistake (the hint's kind, its step): the first such try shows the question,
the second and later ones the question and the step, and from the third on the message adds where the solution is
(:func:`solution`, on request); a new kind of mistake starts at the question. Every check that returns a hint counts
as a try,
re-running the check cell with the same wrong answer included: running the check again is how a learner asks for
the next step (and telling "the same answer" apart is unreliable, since re-running the exercise cell makes a new
function with the same code). "Not yet" does not count; "correct" sets the count back to zero.

pin-host-memory introduces :class:`Feedback`, :func:`check` and :func:`solution`. Each lesson's checks live in
``helpers/exercises/lessonNN.py`` (its ``CHECKS``); coalesce-and-align-accesses's kernel exercise builds on
:mod:`helpers.coalescing_exercise`.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

from .. import lessons as course_lessons, paths
from ..i18n import CHINESE, N_, _, language, sentences, solutions
from ..tables import Text

__all__ = ["Feedback", "check", "solution", "is_placeholder", "not_yet", "hint", "correct", "checks", "namespace",
           "live_module", "registered", "tries", "reset_tries", "SOLUTIONS", "SOLUTION_AFTER", "quoted",
           "capitalised"]

SOLUTIONS = paths.SOLUTIONS
Status = Literal["not yet", "correct", "hint"]
_LABEL = {"not yet": N_("Not yet"), "correct": N_("Correct"), "hint": N_("Hint")}   # shown in the chosen language


SOLUTION_AFTER = 3          # the wrong try from which a hint also says where the solution is


@dataclass(frozen=True)
class Feedback:
    """What a check found: ``status`` is "not yet", "correct" or "hint"; ``message`` says it (pin-host-memory).

    A hint from a lesson module also carries ``step``, the smaller step that :func:`check` adds from the second try
    of the same mistake on; ``tries`` is the number of wrong tries at this exercise so far, this one included (0 outside check)."""

    status: Status
    message: str
    exercise: str = ""
    step: str = field(default="", repr=False, compare=False)
    tries: int = 0

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def _label(self) -> str:
        label = _(_LABEL.get(self.status, self.status))
        return _("{label} (try {tries})").format(label=label, tries=self.tries) if (
            self.status == "hint" and self.tries > 1) else label

    def __str__(self) -> str:
        where = f" [{self.exercise}]" if self.exercise else ""
        return f"{self._label()}{where}: {capitalised(self.message)}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        # plain words, no emoji: a browser without an emoji font would show empty boxes
        return _("**{label}.** {message}").format(label=self._label(), message=capitalised(self.message))


_PLAIN_WORD = re.compile(r"(?:a|[a-z][a-z'’-]+)(?=[,.:;!?)]?(?:\s|$))")   # "a", "you", "registering,"; not "i"


def capitalised(message: str) -> str:
    """``message`` as it reads after its label ("**Hint.** You added…"): in English, a first word of plain lower-case
    letters gets a capital; an identifier (``device_address``, ``a.itemsize``, `` `code` ``) is left as written
    (pin-host-memory)."""
    if language() == CHINESE or not _PLAIN_WORD.match(message):
        return message
    return message[0].upper() + message[1:]


def not_yet(what: str) -> Feedback:
    """A "not yet" feedback: the placeholder is untouched (for the lesson modules)."""
    return Feedback("not yet", what)


def hint(question: str, step: str = "") -> Feedback:
    """A graded hint for a wrong answer (for the lesson modules): ``question`` says what is wrong and asks a question
    or names the concept to revisit, never the answer; ``step``, a smaller step, is shown from the second try
    of the same mistake; it also names the mistake's kind, so hints of one kind share their step."""
    return Feedback("hint", question, step=step)


def correct(why: str) -> Feedback:
    """A right answer, with one sentence on why (for the lesson modules)."""
    return Feedback("correct", why)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


_MARKS = re.compile(r"([\\`*_\[\]<>])")


def quoted(text: str | Exception, limit: int | None = 400) -> str:
    """An error's text as a hint quotes it: past ``limit`` characters cut at a word boundary and marked with an
    ellipsis, and Markdown's marks escaped so that ``__global__`` or ``ptr<T>`` show as written
    (coalesce-and-align-accesses and every kernel exercise). An error that glosses itself in the chosen language
    (the CPU backend's bounds error in Chinese) gets its gloss on a line of its own."""
    gloss = getattr(text, "gloss", lambda: "")()
    text = str(text)
    if limit is not None and len(text) > limit:
        cut = text[:limit]
        text = (cut[:cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:(") + "…"
    return _MARKS.sub(r"\\\1", text) + (f"\n\n{gloss}" if gloss else "")


def fenced(output: str) -> str:
    """A tool's output (a compiler's complaint) as a Markdown code block, on lines of its own and shown as written
    (coalesce-and-align-accesses)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", output)), default=0))
    return f"\n\n{fence}text\n{output.strip(chr(10))}\n{fence}\n\n"


def bounds_hint(error: str, gloss: str, past_end: str, question: str, step: str) -> Feedback:
    """The hint for an access out of bounds: what was overrun (``past_end``), the error's first line quoted, the
    CPU backend's gloss of it on a line of its own (Chinese; '' in English), then ``question`` (which starts with its
    joining mark, ". " or ": "), and the smaller ``step`` (every kernel exercise, coalesce-and-align-accesses)."""
    first = quoted(error.splitlines()[0].rstrip("."))   # in brackets, a sentence's own full stop goes
    if gloss:
        head = _("{past_end} ({error}){question}").format(past_end=past_end, error=first, question="")
        return hint(f"{head}\n\n{gloss}\n\n{question.lstrip('.。:： ')}".rstrip("\n"), step)
    return hint(_("{past_end} ({error}){question}").format(past_end=past_end, error=first, question=question), step)


def kernel_failure_hint(exc: Exception, kernel: str, past_end: str, question: str, step: str,
                        name_note: str = "") -> Feedback:
    """The hint for a learner's kernel that did not build or run (kernel exercises of
    write-your-first-zero-copy-kernel, keep-enough-bytes-in-flight and avoid-hazards-on-mapped-memory): an
    access out of bounds (``past_end`` names what was overrun; ``question`` follows the error's first line, ``step``
    is the smaller step), a kernel name not found (``name_note`` is added), or the error itself."""
    text = f"{type(exc).__name__}: {exc}"
    if "OutOfBounds" in type(exc).__name__ or "outside" in str(exc):
        return bounds_hint(text, getattr(exc, "gloss", lambda: "")(), past_end, question, step)
    if "No __global__ function named" in str(exc) or "named symbol not found" in str(exc):
        return hint(_("no kernel named {kernel}: the check looks the kernel up by its name.").format(kernel=kernel),
                    _("keep the first line as given, `extern \"C\" __global__ void {kernel}(...)`{note}.").format(
                        kernel=kernel, note=name_note))
    if len(text) > 900:   # keep the compiler's first lines and the backend's hint at the end
        text = f"{text[:520]} [...] {text[-360:]}"
    lead, _newline, output = text.partition("\n")   # the backend's lead-in, then the compiler's own lines
    return hint(_("the kernel did not build or run: {error}").format(error=quoted(lead, None))
                + (fenced(output) if output.strip() else ""),
                _("read the first error line: it names the line of your source and what the compiler expected there "
                  "(a missing `;` or brace, a name not declared, a type that does not match)."))


def is_placeholder(answer: Any) -> bool:
    """True for an untouched placeholder: ``...``, ``None``, or CUDA source whose kernel bodies are empty
    (pin-host-memory)."""
    if answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, str):
        code = _COMMENTS.sub("", answer)
        bodies = re.findall(r"__global__[^{]*\{(.*?)\}\s*$", code, re.S)
        return not code.strip() or (bool(bodies) and all(not b.strip() for b in bodies))
    return False


def live_module(source: str) -> Any:
    """A learner's CUDA source compiled with PyCUDA in the course's one context (live only; kernel exercises from
    write-your-first-zero-copy-kernel on). The context is made current first, so a check works even when no lesson
    cell has touched the GPU."""
    from .. import kernels

    return kernels.compile_source(source)  # as the course's own kernels: CCCL headers found, no extern "C" wrap


# --------------------------------------------------------------------------- registry
# Each lesson with exercises has a module ``helpers.exercises.lessonNN`` whose ``CHECKS`` maps an exercise's name to
# its check; it may define ``namespace()``, the names its exercise cells expect besides NumPy (tests use it).
LESSONS_WITH_EXERCISES = tuple(i for i in course_lessons.ids() if (paths.PACKAGE / "exercises" / f"lesson{i}.py").exists())


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


# --------------------------------------------------------------------------- graded hints
_TRIES: Counter[tuple[str, str]] = Counter()   # wrong tries so far, per exercise, in this process
_KINDS: Counter[tuple[str, str, str]] = Counter()   # the same, per exercise and kind of mistake (the hint's step)


def tries(lesson: str, name: str) -> int:
    """How many wrong tries :func:`check` has counted at one exercise in this process (see the module docstring)."""
    return _TRIES[(lesson, name)]


def reset_tries(lesson: str | None = None, name: str | None = None) -> None:
    """Forget the wrong tries of one exercise, or of every exercise when no name is given (tests, a new learner)."""
    if lesson is None or name is None:
        _TRIES.clear()
        _KINDS.clear()
    else:
        _TRIES.pop((lesson, name), None)
        for key in [key for key in _KINDS if key[:2] == (lesson, name)]:
            del _KINDS[key]


def ended(text: str) -> str:
    """``text`` as a sentence that ends (a full stop added where none is), so the next one does not run into it: an
    exception's message ("name 'x' is not defined") is no sentence (pin-host-memory)."""
    if text.endswith("```\n\n"):
        return text   # a code block (:func:`fenced`) ends as it is: no full stop after a compiler's output
    text = text.rstrip()
    core = text.rstrip(")]）】'\"*`")
    if not text or core.endswith((".", "?", "!", ":", "…", "。", "？", "！", "：")):
        return text   # "... bytes).)" already ends: no full stop after the bracket
    chinese = language() == CHINESE and (text[-1] in "）】" or re.match("[\u4e00-\u9fff]", core[-1:]))
    return text + ("。" if chinese else ".")


def graded_message(feedback: Feedback, count: int, lesson: str, name: str) -> str:
    """A hint's message at the ``count``-th wrong try: the question, then the smaller step, then where the solution
    is."""
    parts = [ended(feedback.message)]
    if count >= 2 and feedback.step:
        parts.append(_("Next step: {step}").format(step=ended(feedback.step)))
    if count >= SOLUTION_AFTER:
        parts.append(_('Still stuck? print(zc.exercises.solution("{lesson}", "{name}")) shows one solution.').format(
                         lesson=lesson, name=name))
    return sentences(*parts)


_CASE_VALUE = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def mistake_kind(feedback: Feedback) -> str:
    """The kind of mistake a hint names, which its grade counts: its step (else its question) with every number
    written as ``#``, so the same mistake failing on another case (another page count, entry or size) is the same
    kind (pin-host-memory)."""
    return _CASE_VALUE.sub("#", feedback.step or feedback.message)


def _graded(feedback: Feedback, lesson: str, name: str) -> Feedback:
    """Count the try and grade the hint by the tries of the same mistake (its step names the kind); a correct answer
    sets the counts back to zero."""
    key = (lesson, name)
    where = f"{lesson}/{name}"
    if feedback.status == "correct":
        reset_tries(lesson, name)
    if feedback.status != "hint":
        return Feedback(feedback.status, feedback.message, where)
    _TRIES[key] += 1
    kind = (lesson, name, mistake_kind(feedback))
    _KINDS[kind] += 1
    return replace(feedback, message=graded_message(feedback, _KINDS[kind], lesson, name), exercise=where,
                   tries=_TRIES[key])


_RAISED_STEP = N_("call your function by hand on one small case in a new cell and read the traceback's last lines: "
                "which line raised, and what did it get?")


_MODULES = frozenset({"numpy", "pycuda", "matplotlib"})   # the course's own, beside Python's standard library
_ALIASES = {"np": "import numpy as np", "plt": "import matplotlib.pyplot as plt"}


def unimported(exc: BaseException) -> str:
    """For a NameError of a module's name (``math``, ``np``), the sentence that says to import it first; else ""
    (pin-host-memory, and every exercise)."""
    name = getattr(exc, "name", None) if isinstance(exc, NameError) else None
    if not name:
        return ""
    statement = _ALIASES.get(name) or (f"import {name}" if name in _MODULES or name in sys.stdlib_module_names
                                       else "")
    return " " + _("`{name}` is a module's name: import it first, with `{statement}` at the top of your "
                   "cell.").format(name=name, statement=statement) if statement else ""


def check(lesson: str, name: str, answer: Any, **context: Any) -> Feedback:
    """Check ``answer`` to exercise ``name`` of lesson ``lesson``; never raises (pin-host-memory). A hint is graded by
    the wrong tries so far at this exercise (see the module docstring)."""
    checker = checks(lesson).get(name)
    if checker is None:
        known = ", ".join(f"{lsn}/{nm}" for lsn, nm in registered())
        return Feedback("hint", _("no exercise {lesson}/{name}; the exercises are {known}.").format(
                                    lesson=lesson, name=name, known=known), f"{lesson}/{name}")
    try:
        feedback = checker(answer, **context)
    except Exception as exc:  # noqa: BLE001 (the learner's code may raise anything)
        feedback = hint(ended(_("your code raised {name}: {exc}").format(name=type(exc).__name__,
                                                                            exc=exc).strip()[:800])
                        + unimported(exc), _(_RAISED_STEP))
    return _graded(feedback, lesson, name)


def compare(lesson: str, predicted: Any, *measured: Any, **context: Any) -> Text:
    """A lesson's prediction against the run, as Markdown: the one shape of every lesson's prediction cell,
    ``zc.exercises.compare("06", predicted_fraction_of_copy, memcpy, streams)``. Not graded; never raises; says "no
    prediction" on the untouched ``...``. The lesson module's ``compare_prediction`` does the comparing."""
    module = importlib.import_module(f"{__name__}.lesson{lesson}") if lesson in LESSONS_WITH_EXERCISES else None
    comparer = getattr(module, "compare_prediction", None)
    if comparer is None:
        return Text(_("Lesson {lesson} asks for no prediction.").format(lesson=lesson))
    try:
        said = comparer(predicted, *measured, **context)
    except Exception as exc:  # noqa: BLE001 (the learner's prediction may be anything)
        return Text(_("**Prediction:** could not compare ({name}: {exc}).").format(name=type(exc).__name__, exc=exc))
    text = said.message if isinstance(said, Feedback) else str(said)
    return Text(_("**Prediction.** {text}").format(text=capitalised(text)))


def solution(lesson: str, name: str) -> str:
    """The text of a solution from ``lessons/solutions/lessonNN.py``, or a plain note that it is absent
    (pin-host-memory)."""
    path = SOLUTIONS / f"lesson{lesson}.py"
    if not SOLUTIONS.is_dir():
        return (_("The solutions folder lessons/solutions/ is not here: your instructor removed it (for a graded "
                  "class, perhaps). Ask them, or keep working with the check's hints."))
    if not path.is_file():
        return _("There is no solution file for lesson {lesson} ({name} is not in lessons/solutions/).").format(
                   lesson=lesson, name=path.name)
    sections = solutions.sections(path.read_text(encoding="utf-8"))
    if name not in sections:
        return _("{name} has no solution named {name2!r}; it has {value}.").format(
                   name=path.name, name2=name, value=', '.join(sections) or _("none"))
    return solutions.translate(lesson, name, sections[name]) + "\n"   # Chinese comments when chosen
