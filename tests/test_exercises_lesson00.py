"""Lesson 00's exercises (issue 22): the L2 size in MiB, read from the attribute table, and the bytes a vector add
moves over the bus with explicit copies and with zero-copy. The solutions pass, the placeholders say not yet, and
each typical slip gets a hint that names what to revisit, not the answer.
"""

from __future__ import annotations

from helpers import exercises
from helpers.exercises import lesson00
from typical_wrong import Typical, fixed

ATTRIBUTES = {"L2_CACHE_SIZE": 60 * 2**20}


def test_the_solution_is_correct_for_this_session_s_gpu_and_others():
    namespace = exercises.namespace("00")   # course.attributes: the session's (recorded in replay)
    exec(compile(exercises.solution("00", "l2_mib"), "<solution>", "exec"), namespace)
    feedback = exercises.check("00", "l2_mib", namespace["l2_mib"])
    size = namespace["course"].attributes["L2_CACHE_SIZE"]
    assert feedback.correct and f"{size:,} bytes" in feedback.message, feedback
    assert namespace["l2_mib"](namespace["course"].attributes) == size / 2**20


def test_the_placeholder_is_not_yet():
    assert exercises.check("00", "l2_mib", lambda attributes: ..., attributes=ATTRIBUTES).status == "not yet"
    assert exercises.check("00", "l2_mib", ..., attributes=ATTRIBUTES).status == "not yet"


def test_a_number_typed_for_one_gpu_is_refused_though_it_is_right_there():
    """A check judges behaviour: the right figure typed in holds for this GPU only (issue 31)."""
    exercises.reset_tries("00", "l2_mib")
    typed = exercises.check("00", "l2_mib", lambda attributes: 60, attributes=ATTRIBUTES)
    assert typed.status == "hint" and "one GPU only" in typed.message, typed
    exercises.reset_tries("00", "l2_mib")
    value = exercises.check("00", "l2_mib", 60.0, attributes=ATTRIBUTES)
    assert value.status == "hint" and "not a function" in value.message, value
    exercises.reset_tries("00", "l2_mib")


def test_a_body_of_pass_is_told_it_returned_none():
    """Not "returns `...`": the learner replaced the placeholder with `pass` (issue 35's walk)."""
    def l2_mib(attributes):
        pass

    def bus_bytes(n, reads):
        pass

    for name, function, kw in (("l2_mib", l2_mib, {"attributes": ATTRIBUTES}), ("bus_bytes", bus_bytes, {})):
        feedback = exercises.check("00", name, function, **kw)
        assert feedback.status == "not yet" and "returned None" in feedback.message, feedback


def test_another_gpu_s_l2_is_judged_by_its_own_attribute():
    assert exercises.check("00", "l2_mib", lambda a: a["L2_CACHE_SIZE"] / 2**20,
                           attributes={"L2_CACHE_SIZE": 40 * 2**20}).correct


def test_no_l2_hint_says_the_answer_in_mib():
    for typical in TYPICAL[("00", "l2_mib")]:
        exercises.reset_tries("00", "l2_mib")
        feedback = exercises.check("00", "l2_mib", typical.wrong(), **typical.context)
        assert "60 MiB" not in feedback.message, feedback
    exercises.reset_tries("00", "l2_mib")


def _bus_bytes(copies, zero_copy):
    return fixed(lambda n, reads: (copies(n, reads), zero_copy(n, reads)))


def test_bus_bytes_placeholder_and_solution():
    assert exercises.check("00", "bus_bytes", lambda n, reads: ...).status == "not yet"
    namespace = exercises.namespace("00")
    exec(compile(exercises.solution("00", "bus_bytes"), "<solution>", "exec"), namespace)
    feedback = exercises.check("00", "bus_bytes", namespace["bus_bytes"])
    assert feedback.correct and "same bytes" in feedback.message, feedback


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

_GIVEN = {"attributes": ATTRIBUTES}   # a GPU with a 60 MiB L2, whatever this session's GPU
TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("00", "l2_mib"): [
        Typical(fixed(lambda attributes: float(attributes["L2_CACHE_SIZE"])), ("2**20",),
                lambda: [(a,) for a in lesson00.l2_cases()]),
        Typical(fixed(lambda attributes: attributes["L2_CACHE_SIZE"] / 1e6), ("2**20",),
                lambda: [(a,) for a in lesson00.l2_cases()]),
        Typical(fixed(lambda a: a["L2_CACHE_SIZE"]), ("2**20",), phrase="in bytes", context=_GIVEN),
        Typical(fixed(lambda a: a["L2_CACHE_SIZE"] / 1e6), ("2**20",), phrase="powers of ten", context=_GIVEN),
        Typical(fixed(lambda a: a["L2_CACHE_SIZE"] / 2**10), ("2**20",), phrase="KiB", context=_GIVEN),
        Typical(fixed(lambda a: a["L2_CACHE_SIZE"] / 2**30), ("2**20",), phrase="GiB", context=_GIVEN),
        Typical(fixed(lambda a: 6), ("2**20",), phrase="not the L2 size", context=_GIVEN),
        Typical(fixed(lambda a: "sixty"), ("2**20",), phrase="a string", context=_GIVEN),
        Typical(fixed(lambda a: str(a["L2_CACHE_SIZE"] / 2**20)), ("2**20",), phrase="a string", context=_GIVEN)],
    ("00", "bus_bytes"): [
        Typical(fixed(lambda n, reads: (12 * n, 12 * n)), ("reads * 2 * 4 * n",), lambda: lesson00.BUS_CASES,
                phrase="ignores reads"),
        Typical(fixed(lambda n, reads: (12 * n * reads, 8 * n * reads + 4 * n)), ("3 * 4 * n", "reads * 2 * 4 * n"),
                lambda: lesson00.BUS_CASES, phrase="grow with reads"),
        Typical(_bus_bytes(lambda n, r: 8 * n, lambda n, r: 8 * n * r + 4 * n), phrase="leaves one array out"),
        Typical(_bus_bytes(lambda n, r: 12 * n, lambda n, r: 12 * n * r), phrase="write each element of c"),
        Typical(_bus_bytes(lambda n, r: 3 * n, lambda n, r: 2 * n * r + n), phrase="elements, not bytes"),
        Typical(fixed(lambda n, reads: 12 * n), phrase="return a pair")],
}
