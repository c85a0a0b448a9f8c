"""Lesson 12's exercises: the typical wrong answers get their specific hints (issue 10).

The generic tests in test_exercises.py cover placeholder -> "not yet" and solution -> "correct".
"""

from __future__ import annotations

import math

from helpers import exercises, experiments
from helpers.exercises import lesson12
from typical_wrong import Typical, fixed


def _solution(name: str):
    namespace = exercises.namespace("12")
    exec(compile(exercises.solution("12", name), "<solution>", "exec"), namespace)
    return namespace[name]


def _model(copy, zero):
    return fixed(lambda k, n, link, device, zc: (copy(k, n, link, device, zc), zero(k, n, link, device, zc)))


RIGHT_COPY = lambda k, n, link, device, zc: 12 * n / (link * 1e9) + k * 12 * n / (device * 1e9)  # noqa: E731
RIGHT_ZERO = lambda k, n, link, device, zc: k * 12 * n / (zc * 1e9)  # noqa: E731


def test_model_seconds_against_the_recorded_rows():
    reuse = experiments.reuse()
    feedback = exercises.check("12", "model_seconds", _solution("model_seconds"), measured=reuse)
    assert feedback.correct and "of every measured row" in feedback.message


def _bound(link, device, zc):
    return (1 / link) / (1 / zc - 1 / device)


def test_break_even_k_first_hints_never_write_the_answer():
    answer = str(lesson12.break_even_k_rule(11.0, 90.0, 40.0))
    for typical in TYPICAL[("12", "break_even_k")]:
        exercises.reset_tries()
        feedback = exercises.check("12", "break_even_k", typical.wrong())
        assert answer not in feedback.message.split("you returned")[0], feedback


def test_break_even_k_placeholder_and_the_recorded_run():
    assert exercises.check("12", "break_even_k", ...).status == "not yet"
    assert exercises.check("12", "break_even_k", lambda link, device, zc: None).status == "not yet"
    reuse = experiments.reuse()
    feedback = exercises.check("12", "break_even_k", _solution("break_even_k"), measured=reuse)
    assert feedback.correct and f"from k = {lesson12.first_copy_win(reuse)}" in feedback.message


def test_compare_prediction():
    reuse = experiments.reuse()
    first = lesson12.first_copy_win(reuse)
    assert "No prediction" in lesson12.compare_prediction(..., reuse)
    assert "Right" in lesson12.compare_prediction(first, reuse)
    assert "sooner than you thought" in lesson12.compare_prediction(first + 3, reuse)
    assert "longer than you thought" in lesson12.compare_prediction(first - 1, reuse)
    assert "number" in lesson12.compare_prediction("soon", reuse)
    shown = exercises.compare("12", first, reuse)
    assert shown.startswith("**Prediction.**") and "Right" in shown


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("12", "model_seconds"): [
        Typical(fixed(lambda k, n, link, device, zc: (12 * n / (link * 1e9) + k * 12 * n / (device * 1e9),
                                                      12 * n / (zc * 1e9))),
                ("k * nbytes / (zc_GBps * 1e9)",), lambda: lesson12.MODEL_CASES),
        Typical(fixed(lambda k, n, link, device, zc: (12 * n / (link * 1e9) + k * 12 * n / (device * 1e9),
                                                      k * 20 * n / (zc * 1e9))),
                ("k * nbytes / (zc_GBps * 1e9)",), lambda: lesson12.MODEL_CASES),
        Typical(_model(RIGHT_COPY, lambda k, n, link, device, zc: 12 * n / (zc * 1e9)), phrase="does not grow with k"),
        Typical(_model(lambda k, n, link, device, zc: k * 12 * n / (link * 1e9) + k * 12 * n / (device * 1e9),
                       RIGHT_ZERO), phrase="you pay the link k times"),
        Typical(_model(lambda k, n, link, device, zc: 12 * n / (link * 1e9), RIGHT_ZERO),
                phrase="kernels on device memory"),
        Typical(_model(lambda k, n, link, device, zc: RIGHT_COPY(k, n, link, device, zc) / 4,
                       lambda k, n, link, device, zc: RIGHT_ZERO(k, n, link, device, zc) / 4), phrase="each 4 bytes"),
        Typical(_model(RIGHT_COPY, lambda k, n, link, device, zc: k * 8 * n / (zc * 1e9)),
                phrase="12 bytes per element, not 8"),
        Typical(fixed(lambda *args: (RIGHT_ZERO(*args), RIGHT_COPY(*args))), phrase="in that order"),
        Typical(fixed(lambda *args: RIGHT_COPY(*args)), phrase="pair of numbers")],
    ("12", "break_even_k"): [
        Typical(fixed(lambda link, device, zc: int(zc / link) + 1), ("(1 / zc_GBps - 1 / device_GBps)",),
                lambda: lesson12.BREAK_EVEN_CASES),
        Typical(fixed(lambda link, device, zc: int((1 / link) / (1 / zc - 1 / device))),
                ("int(crossing) + 1",), lambda: lesson12.BREAK_EVEN_CASES),
        Typical(fixed(lambda link, device, zc: _bound(link, device, zc)), phrase="whole number"),
        Typical(fixed(lambda link, device, zc: math.floor(_bound(link, device, zc))), phrase="rounding down or up"),
        Typical(fixed(lambda link, device, zc: math.floor(zc / link) + 1), phrase="kernels on device memory"),
        Typical(fixed(lambda link, device, zc: math.floor(link / zc) + 1), phrase="upside down"),
        Typical(fixed(lambda link, device, zc: 3), phrase="what happens to n")],
}
