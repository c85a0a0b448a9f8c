"""Lesson 07's exercises: typical wrong answers get their specific hints; the prediction text (issue 10)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises
from helpers.exercises import lesson07


def _stuck_at_start(table, start, steps):
    j = start
    for _ in range(steps):
        j = table[start]
    return j


def _one_short(table, start, steps):
    j = start
    for _ in range(steps - 1):
        j = table[j]
    return j


def _lines(table, start, steps):
    j, seen = start, []
    for _ in range(steps):
        j = table[j]
        seen.append(j)
    return seen


@pytest.mark.parametrize("wrong, phrase", [
    (_stuck_at_start, "j = table[j]"),
    (_one_short, "off by one"),
    (_lines, "not the list"),
    (lambda table, start, steps: start, "returned its start"),
])
def test_chase_hints(wrong, phrase):
    feedback = exercises.check("07", "chase", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


@pytest.mark.parametrize("wrong, phrase", [
    (lambda slow, fast: slow / fast, "how many factors of 10"),
    (lambda slow, fast: np.log(slow / fast), "natural logarithm"),
    (lambda slow, fast: np.log10(fast / slow), "sign is reversed"),
])
def test_orders_of_magnitude_hints(wrong, phrase):
    feedback = exercises.check("07", "orders_of_magnitude", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_prediction_text_without_and_with_a_guess():
    assert "No prediction made" in lesson07.compare_latency_prediction(..., 1200.0, 700.0)
    assert "1.7x" in lesson07.compare_latency_prediction(..., 1200.0, 700.0)
    text = lesson07.compare_latency_prediction(100, 1200.0, 700.0)
    assert "You predicted 100.0x" in text and "less than your guess" in text
    assert "Within 25%" in lesson07.compare_latency_prediction(1.7, 1200.0, 700.0)
    assert "not a number" in lesson07.compare_latency_prediction("fast", 1200.0, 700.0)
