"""Lesson 13's exercises give the specific hint for typical wrong answers, and its prediction comparison works
on the untouched placeholder (issue 10). Replay mode; the generic tests are in test_exercises.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import exercises
from helpers.exercises import lesson13


@pytest.mark.parametrize("wrong, phrase", [
    (lambda r, t, share=0.1: r * (1 - share) / (share * t), "whole number"),
    (lambda r, t, share=0.1: math.ceil(r / (share * t)), "TOTAL time"),
    (lambda r, t, share=0.1: math.floor(r * (1 - share) / (share * t)), "round up"),
    (lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t)) + 5, "the fewest"),
])
def test_reads_needed_hints(wrong, phrase):
    feedback = exercises.check("13", "reads_needed", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_reads_needed_reports_the_measured_answer():
    solution = lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t))  # noqa: E731
    feedback = exercises.check("13", "reads_needed", solution, seconds_per_gib=0.25, read_seconds=0.02)
    assert feedback.correct and "113 reads" in feedback.message, feedback


@pytest.mark.parametrize("wrong, phrase", [
    (lambda a, page_size=4096: a.ctypes.data % page_size == 0 and a.nbytes % page_size == 0, "unbroken"),
    (lambda a, page_size=4096: bool(a.flags.c_contiguous and a.nbytes % page_size == 0), "ctypes.data"),
    (lambda a, page_size=4096: bool(a.flags.c_contiguous and a.ctypes.data % page_size == 0), "ends inside a page"),
    (lambda a, page_size=4096: bool(a.flags.c_contiguous and a.ctypes.data % 4096 == 0 and a.nbytes % 4096 == 0),
     "page_size argument"),
    (lambda a, page_size=4096: bool(a.flags.c_contiguous and a.ctypes.data % page_size == 0
                                    and a.size % page_size == 0), "array.nbytes"),
])
def test_can_register_hints(wrong, phrase):
    feedback = exercises.check("13", "can_register", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_can_register_rule_matches_registered_array():
    from helpers import errors
    from helpers.memory import gpu
    from helpers.memory.pages import page_aligned_empty

    base = page_aligned_empty(4096)
    for array in (base, base[1:1025], base[::2], base[:1000], base[1024:2048]):
        try:
            gpu._check_registrable(array)
            accepted = True
        except errors.RegistrationError:
            accepted = False
        assert accepted == lesson13.can_register_rule(array)


def test_compare_prediction():
    assert "No prediction" in lesson13.compare_prediction(..., 0.95)
    assert "1.05x" in lesson13.compare_prediction(..., 0.95)
    assert "did not show" in lesson13.compare_prediction(10, 0.95)
    assert "within 50%" in lesson13.compare_prediction(1.0, 0.95)
    assert "slower than you expected" in lesson13.compare_prediction(2, 0.05)
    assert "No prediction" in lesson13.compare_prediction("fast", 0.5)
