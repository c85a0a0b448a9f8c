"""Lesson 04's exercises (map-pages-on-the-gpu) give the specific hint for typical wrong answers, judge the device
address by what a kernel writes through it, and its prediction says "no prediction" on the untouched placeholder.
Replay mode (the CPU backend); the generic tests are in test_exercises.py and test_hints.py."""

from __future__ import annotations

import dataclasses

import pytest

from helpers import exercises, experiments
from helpers.exercises import lesson04
from typical_wrong import Typical, fixed


@pytest.fixture(autouse=True)
def _fresh_tries():
    exercises.reset_tries()
    yield
    exercises.reset_tries()


def _solution(name: str):
    namespace = exercises.namespace("04")
    exec(compile(exercises.solution("04", name), "<solution>", "exec"), namespace)
    return namespace[name]


def test_the_solution_passes_and_says_why_uva_makes_the_addresses_equal():
    feedback = exercises.check("04", "device_address", _solution("device_address"))
    assert feedback.correct, feedback
    assert "a kernel wrote through your address" in feedback.message
    assert "same virtual page numbers" in feedback.message and "offset" in feedback.message


def test_strides_are_accepted_too():
    feedback = exercises.check("04", "device_address", lambda a, i, d_a: d_a + i * a.strides[0])
    assert feedback.correct, feedback


def test_the_untouched_placeholder_is_not_yet():
    assert exercises.check("04", "device_address", ...).status == "not yet"
    assert exercises.check("04", "device_address", lambda a, i, d_a: ...).status == "not yet"


def test_a_wrong_address_on_mapped_memory_never_reaches_the_kernel():
    calls = []

    def only_wrong_on_mapped_memory(a, i, d_a):
        calls.append(d_a)
        right = d_a + i * a.itemsize
        return right if len(calls) <= len(lesson04.address_cases()) else d_a + 10 * a.nbytes

    feedback = exercises.check("04", "device_address", only_wrong_on_mapped_memory)
    assert feedback.status == "hint" and "outside the array" in feedback.message, feedback


def test_same_address_takes_the_result_itself():
    identity = experiments.address_identity()
    feedback = exercises.check("04", "same_address", _solution("same_address"), measured=identity)
    n = len(identity.rows)
    assert feedback.correct and f"{n} of {n} kinds" in feedback.message, feedback


def test_the_prediction_says_no_prediction_on_the_placeholder_and_compares_a_number():
    identity = experiments.address_identity()
    equal = sum(row["equal"] for row in identity.rows)
    untouched = exercises.compare("04", ..., identity)
    assert "no prediction" in untouched and f"{equal} of {len(identity.rows)}" in untouched
    assert "Right" in exercises.compare("04", equal, identity)
    assert "More than you expected" in exercises.compare("04", equal - 1, identity)
    assert "whole number" in exercises.compare("04", "five", identity)
    assert isinstance(lesson04.compare_prediction(..., identity), str)


def test_the_prediction_follows_a_run_with_fewer_equal_kinds():
    identity = experiments.address_identity()
    rows = [dict(row, equal=row["allocation"] != "registered (cuMemHostRegister)") for row in identity.rows]
    live = dataclasses.replace(identity, rows=rows, live=True, provenance={"gpu": "Some GPU"})
    said = exercises.compare("04", len(rows), live)
    assert f"{len(rows) - 1} of {len(rows)}" in said and "live on Some GPU" in said and "Fewer" in said


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _same_address_cases() -> list[tuple]:
    return [(kind, {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can})
            for uva in (0, 1) for can in (1, 0) for kind in lesson04.KINDS]


def _misspelled_registered(allocation, attributes):
    if not attributes["UNIFIED_ADDRESSING"]:
        return False
    if allocation == "registered":
        return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
    return True


def test_the_misspelled_name_hint_quotes_the_name_passed_and_says_it_never_matched():
    feedback = exercises.check("04", "same_address", _misspelled_registered)
    assert feedback.status == "hint", feedback
    assert "'registered (cuMemHostRegister)'" in feedback.message and "never matched" in feedback.message


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("04", "device_address"): [
        Typical(fixed(lambda a, i, d_a: d_a + i), ("i * a.itemsize",), lambda: lesson04.address_cases(),
                phrase="Addresses count bytes"),
        Typical(fixed(lambda a, i, d_a: a.ctypes.data + i * a.itemsize), ("d_a + i * a.itemsize", "i * a.itemsize"),
                lambda: lesson04.address_cases(), phrase="host address"),
        Typical(fixed(lambda a, i, d_a: d_a + 4 * i), ("i * a.itemsize",), phrase="assume float32"),
        Typical(fixed(lambda a, i, d_a: d_a), ("i * a.itemsize",), phrase="every element got the address of a[0]"),
        Typical(fixed(lambda a, i, d_a: d_a + i * a.itemsize / 1), ("i * a.itemsize",),
                phrase="not a whole number"),
        Typical(fixed(lambda a, i, d_a: d_a + 2 * i * a.itemsize), ("i * a.itemsize",),
                phrase="does the mapping change that distance")],
    ("04", "same_address"): [
        Typical(fixed(lambda allocation, attributes: True), ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',),
                _same_address_cases, phrase="without UNIFIED_ADDRESSING"),
        Typical(fixed(lambda allocation, attributes: bool(attributes["UNIFIED_ADDRESSING"])),
                ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',), _same_address_cases,
                phrase="CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"),
        Typical(fixed(lambda allocation, attributes: lesson04.same_address_rule(allocation, attributes)
                      and not allocation.startswith("pinned, no DEVICEMAP")),
                phrase="Section 2's table"),
        # reads the attribute, but under a name the check never passes: the hint quotes both names
        Typical(fixed(_misspelled_registered), ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',),
                _same_address_cases, phrase="'registered' as registered memory")],
}
