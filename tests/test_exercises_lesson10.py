"""Lesson 10's exercises give the specific hint for each typical wrong answer (issue 10); the generic tests in
test_exercises.py cover placeholder -> "not yet" and solution -> "correct". Also the prediction's comparison."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises, experiments, records
from helpers.analysis import pcie_model
from helpers.exercises import lesson10
from typical_wrong import Typical, fixed


def _solution(name: str):
    namespace = exercises.namespace("10")
    exec(compile(exercises.solution("10", name), "<solution>", "exec"), namespace)
    return namespace[name]


def _touched(addresses, size, h):
    a = np.asarray(addresses, dtype=np.int64)
    sectors = np.unique(np.concatenate([a // 32, (a + size - 1) // 32]))
    return 32 * len(sectors) + h * len(np.unique(sectors // 4))


def _per_load(addresses, size, h):
    right = _solution("link_bytes")
    return right(addresses, size, 0) + h * len(addresses)


def test_link_bytes_that_ignores_repeats_gets_the_distinct_hint():
    def no_unique(addresses, size, h):
        a = np.asarray(addresses, dtype=np.int64)
        if len(np.unique(a)) == len(a):
            return _solution("link_bytes")(a, size, h)
        return 2 * _solution("link_bytes")(np.unique(a), size, h)  # counts every warp's reads again

    feedback = exercises.check("10", "link_bytes", no_unique)
    assert feedback.status == "hint" and "distinct" in feedback.message, feedback


def _on_link(c, m):
    return (32 * c.request_sectors + m.overhead_bytes * c.requests) / (m.link_GBps * 1e9)


@pytest.fixture(scope="module")
def fitted():
    matching = records.matching_records()
    return pcie_model.calibrate(matching[0][0]), pcie_model.check(matching[0][0], matching[-1][0],
                                                                   allow_same=len(matching) == 1)


def test_predicted_seconds_reports_the_fitted_model(fitted):
    model, _ = fitted
    feedback = exercises.check("10", "predicted_seconds", _solution("predicted_seconds"), model=model)
    assert feedback.correct and "link-bound" in feedback.message and "request-bound" in feedback.message, feedback


def test_no_prediction_says_so_and_shows_the_error(fitted):
    _, check = fitted
    text = lesson10.compare_prediction(..., check)
    own = check.get("check_record_only", check)  # the held-out record's own points: its row in the lesson's table
    assert "no prediction" in text and f"{own['median_abs_error']:.1%}" in text and f"{own['points']} points" in text


# 3 times the error, not 10: a guess above 1 would be read as a percentage (a 10 % error guessed as 1.0 %)
@pytest.mark.parametrize("factor, phrase", [(3, "smaller than you guessed"), (0.1, "closer fit"), (1.1, "Close")])
def test_a_prediction_is_compared_with_the_error(fitted, factor, phrase):
    _, check = fitted
    own = check.get("check_record_only", check)
    assert phrase in lesson10.compare_prediction(own["median_abs_error"] * factor, check)


def test_a_prediction_that_is_not_a_number_is_explained(fitted):
    _, check = fitted
    assert "not a number" in lesson10.compare_prediction("small", check)
    assert "%" in lesson10.compare_prediction(20, check)


def test_every_exercise_of_lesson_10_is_in_the_notebook():
    from tests.test_exercises import CELLS

    assert {name for _, lesson, name, _, _ in CELLS if lesson == "10"} == set(lesson10.CHECKS)


# --------------------------------------------------------------------------- predict_stride
def test_predict_stride_solution_reports_the_model_and_the_held_out_point():
    feedback = exercises.check("10", "predict_stride", _solution_named("predict_stride", "predict_useful_GBps"))
    assert feedback.correct and "pcie_model" in feedback.message and "Held out" in feedback.message, feedback


def _solution_named(name: str, variable: str):
    namespace = exercises.namespace("10")
    exec(compile(exercises.solution("10", name), "<solution>", "exec"), namespace)
    return namespace[variable]


def _plateau_rate(sweep):
    rows = [r for r in sweep.select(memory="zero_copy") if r["stride"] >= 32]
    return 4 * np.median([r["count"] / np.median(r["seconds"]) for r in rows]) / 1e9


def test_predict_stride_first_hints_never_write_the_recorded_plateau():
    plateau = f"{_plateau_rate(experiments.reference('stride')):.2f}"
    for typical in TYPICAL[("10", "predict_stride")]:
        if typical.phrase == "bytes per second or GB/s":   # that hint echoes the learner's own 2.39e+09
            continue
        exercises.reset_tries()
        feedback = exercises.check("10", "predict_stride", typical.wrong())
        assert plateau not in feedback.message, feedback


def test_predict_stride_placeholder_is_not_yet():
    assert exercises.check("10", "predict_stride", lambda sweep, s: None).status == "not yet"


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _predicted_cases() -> list[tuple]:
    return [(c, m) for m in lesson10._models() for _, c in lesson10._count_cases()]



def _stride_cases() -> list[tuple]:
    sweep = experiments.reference("stride")
    return [(sweep, s) for s in lesson10.NEW_STRIDES]


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("10", "link_bytes"): [
        Typical(fixed(lambda addresses, size, h: 32 * len(np.unique(np.asarray(addresses) // 32)) + 2 * h),
                ("(addresses + size - 1) // 32", "mine.max() - mine.min() + 1"),
                lambda: [(a, size, h) for _, a, size, h in lesson10._link_cases()]),
        Typical(fixed(_touched), phrase="not the span"),
        Typical(fixed(lambda a, size, h: _solution("link_bytes")(a, size, 0) / 32
                      + (_solution("link_bytes")(a, size, h) - _solution("link_bytes")(a, size, 0))),
                phrase="multiply it by 32"),   # span sectors + h * lines
        Typical(fixed(lambda a, size, h: _solution("link_bytes")(a, size, 0)), phrase="add h * lines"),
        Typical(fixed(_per_load), phrase="once per read request"),
        Typical(fixed(lambda a, size, h: size * len(a)), phrase="bytes the threads asked for")],
    ("10", "predicted_seconds"): [
        Typical(fixed(lambda c, m: c.requests / m.request_rate), ("max(on_link, on_requests, on_halves)",), _predicted_cases),
        Typical(fixed(lambda c, m: 2 * c.requests / m.request_rate + m.launch_seconds),
                ("max(on_link, on_requests, on_halves)", "model.overhead_bytes * counts.requests"), _predicted_cases),
        Typical(fixed(lambda c, m: _on_link(c, m) + c.requests / m.request_rate + m.launch_seconds),
                phrase="the largest of them"),
        Typical(fixed(lambda c, m: max(_on_link(c, m) * 1e9, c.requests / m.request_rate) + m.launch_seconds),
                phrase="multiply it by 1e9"),
        Typical(fixed(lambda c, m: max(_on_link(c, m), c.requests / m.request_rate)),
                phrase="add model.launch_seconds"),
        Typical(fixed(lambda c, m: max((c.request_sectors + m.overhead_bytes * c.requests) / (m.link_GBps * 1e9),
                                       c.requests / m.request_rate) + m.launch_seconds),
                phrase="32 * request_sectors"),
        Typical(fixed(lambda c, m: max((32 * c.span_sectors + m.overhead_bytes * c.lines) / (m.link_GBps * 1e9),
                                       c.line_requests / m.request_rate) + m.launch_seconds),
                phrase="before the L2 merges"),
        Typical(fixed(lambda c, m: _on_link(c, m) + m.launch_seconds), phrase="only the link time")],
    ("10", "predict_stride"): [
        Typical(fixed(lambda sweep, s: sweep.one(memory="zero_copy", stride=1)["useful_GBps"] / s),
                ("row[\"stride\"] >= 32", "4 * requests_per_s / 1e9"), _stride_cases, "predict_useful_GBps",
                phrase="falls as 1/stride"),
        Typical(fixed(lambda sweep, s: sweep.one(memory="zero_copy", stride=1)["useful_GBps"]),
                ("row[\"stride\"] >= 32",), _stride_cases, "predict_useful_GBps", phrase="stride 1"),
        Typical(fixed(lambda sweep, s: _plateau_rate(sweep) * 1e9), phrase="bytes per second or GB/s"),
        Typical(fixed(lambda sweep, s: _plateau_rate(sweep) / 4), phrase="read requests per second"),
        Typical(fixed(lambda sweep, s: _plateau_rate(sweep) * 32), phrase="Useful bytes"),
        # a fixed number near the recorded answer (whatever record is the reference): right once, not on a scaled sweep
        Typical(fixed(lambda sweep, s: 1.04 * _plateau_rate(experiments.reference("stride"))), phrase="or a number")],
}
