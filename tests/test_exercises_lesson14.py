"""Lesson 14's exercises give the specific hint for typical wrong answers, and its prediction comparison works
on the untouched placeholder (issue 10). Replay mode: the kernel runs on the CPU backend and its order is
checked in the source; the generic tests are in test_exercises.py."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises
from helpers.exercises import lesson14


@pytest.mark.parametrize("wrong, phrase", [
    (lambda row: sum(w < row["n"] for w in row["written_at_flag"]), "-1"),
    (lambda row: sum(w == row["n"] for w in row["written_at_flag"]), "COMPLETE"),
    (lambda row: sum(0 < w < row["n"] for w in row["written_at_flag"]), "off-by-one"),
    (lambda row: sum(0 <= w < row["n"] for w in row["written_at_flag"]) / row["trials"], "fraction"),
])
def test_incomplete_hints(wrong, phrase):
    feedback = exercises.check("14", "incomplete", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_incomplete_reports_the_recorded_counts():
    from helpers import experiments

    rows = experiments.handshake().rows
    solution = lambda row: sum(0 <= w < row["n"] for w in row["written_at_flag"])  # noqa: E731
    feedback = exercises.check("14", "incomplete", solution, rows=rows)
    assert feedback.correct and "publish_flag_first" in feedback.message, feedback


def _solution() -> str:
    namespace: dict = {}
    exec(exercises.solution("14", "publish"), namespace)
    return namespace["PUBLISH_SOURCE"]


LOOP = "        for (unsigned long long i = 0; i < n; ++i) {\n            payload[i] = value;\n        }\n"
FENCE = "        __threadfence_system();   // every payload write is seen, by the host too, before the flag\n"
FLAG = "        *flag = raise;            // volatile: a real store, now\n"


@pytest.mark.parametrize("edit, phrase", [
    ((FENCE, ""), "no fence"),
    ((LOOP + FENCE, FENCE + LOOP), "fence comes before the payload"),
    ((FENCE + FLAG, FLAG + FENCE), "fence comes after the flag"),
    ((LOOP + FENCE + FLAG, FLAG + LOOP + FENCE), "flag is written before the payload"),
    ((LOOP + FENCE + FLAG, "        for (unsigned long long i = 0; i < n; ++i) {\n            payload[i] = value;\n"
      + FENCE + FLAG + "        }\n"), "inside the loop"),
    (("volatile unsigned int *flag", "unsigned int *flag"), "not volatile"),
    (("__threadfence_system();", "__threadfence();"), "Is the host inside its scope"),
    (("i < n;", "i <= n;"), "last element of the payload"),
    (("payload[i] = value;", "payload[0] = value;"), "loop over all n"),
    (("*flag = raise;", "*flag = 1;"), "*flag = raise"),
    (("void publish(", "void publish_kernel("), "no kernel named publish"),
    (("*flag = raise;", "*flag = raise"), "did not build"),
])
def test_publish_hints(edit, phrase):
    text = _solution()
    assert edit[0] in text, edit[0]
    feedback = exercises.check("14", "publish", text.replace(*edit))
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_publish_accepts_other_spellings():
    text = _solution().replace("volatile unsigned int *flag", "unsigned int volatile * flag")
    text = text.replace("payload[i] = value;", "*(payload + i) = value;")
    assert exercises.check("14", "publish", text).correct


def test_compare_prediction():
    assert "No prediction" in lesson14.compare_prediction(..., 600.0)
    assert "600x" in lesson14.compare_prediction(..., 600.0)
    assert "within a factor of 2" in lesson14.compare_prediction(500, 600.0)
    assert "Far more than you guessed" in lesson14.compare_prediction(10, 600.0, 800.0, 900.0)
    assert "round trip" in lesson14.compare_prediction(10, 600.0, 800.0, 900.0)
    assert "Less than you guessed" in lesson14.compare_prediction(5000, 600.0)
