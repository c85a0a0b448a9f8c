"""Lesson 00's exercise (issue 22): the L2 size in MiB, read from the attribute table. The solution passes, the
placeholder says not yet, and each typical unit slip gets a hint that names the unit, not the answer.

start-here has one exercise, not two (tests/test_exercises.py exempts it): it is the orientation lesson, with no
mechanism yet to derive; its exercise teaches reading the attribute table and the unit the course's buffers use.
"""

from __future__ import annotations

import pytest

from helpers import exercises

ATTRIBUTES = {"L2_CACHE_SIZE": 60 * 2**20}


def test_the_solution_is_correct_for_this_session_s_gpu():
    namespace = exercises.namespace("00")   # course.attributes: the session's (recorded in replay)
    exec(compile(exercises.solution("00", "my_l2_mib"), "<solution>", "exec"), namespace)
    feedback = exercises.check("00", "my_l2_mib", namespace["my_l2_mib"])
    size = namespace["course"].attributes["L2_CACHE_SIZE"]
    assert feedback.correct and f"{size:,} bytes" in feedback.message, feedback


def test_the_placeholder_is_not_yet():
    assert exercises.check("00", "my_l2_mib", ..., attributes=ATTRIBUTES).status == "not yet"


def test_another_gpu_s_l2_is_judged_by_its_own_attribute():
    assert exercises.check("00", "my_l2_mib", 40.0, attributes={"L2_CACHE_SIZE": 40 * 2**20}).correct
    assert not exercises.check("00", "my_l2_mib", 60.0, attributes={"L2_CACHE_SIZE": 40 * 2**20}).correct


@pytest.mark.parametrize("wrong, phrase", [
    (60 * 2**20, "in bytes"),
    (60 * 2**20 / 1e6, "powers of ten"),
    (60 * 2**10, "KiB"),
    (60 / 1024, "GiB"),
    (6, "not the L2 size"),
    ("sixty", "make it a number"),
])
def test_unit_slips_get_a_hint_without_the_answer(wrong, phrase):
    exercises.reset_tries("00", "my_l2_mib")
    feedback = exercises.check("00", "my_l2_mib", wrong, attributes=ATTRIBUTES)
    assert feedback.status == "hint" and phrase in feedback.message, feedback
    assert "60 MiB" not in feedback.message and "2**20" not in feedback.message
    exercises.reset_tries("00", "my_l2_mib")
