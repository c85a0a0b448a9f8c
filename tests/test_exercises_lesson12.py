"""Lesson 12's exercises: the typical wrong answers get their specific hints (issue 10).

The generic tests in test_exercises.py cover placeholder -> "not yet" and solution -> "correct".
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises, experiments
from helpers.exercises import lesson12


def _solution(name: str):
    namespace = exercises.namespace("12")
    exec(compile(exercises.solution("12", name), "<solution>", "exec"), namespace)
    return namespace[name]


def _model(copy, zero):
    return lambda k, n, link, device, zc: (copy(k, n, link, device, zc), zero(k, n, link, device, zc))


RIGHT_COPY = lambda k, n, link, device, zc: 12 * n / (link * 1e9) + k * 12 * n / (device * 1e9)  # noqa: E731
RIGHT_ZERO = lambda k, n, link, device, zc: k * 12 * n / (zc * 1e9)  # noqa: E731


@pytest.mark.parametrize("wrong, phrase", [
    (_model(RIGHT_COPY, lambda k, n, link, device, zc: 12 * n / (zc * 1e9)), "does not grow with k"),
    (_model(lambda k, n, link, device, zc: k * 12 * n / (link * 1e9) + k * 12 * n / (device * 1e9), RIGHT_ZERO),
     "you pay the link k times"),
    (_model(lambda k, n, link, device, zc: 12 * n / (link * 1e9), RIGHT_ZERO), "kernels on device memory"),
    (_model(lambda k, n, link, device, zc: RIGHT_COPY(k, n, link, device, zc) / 4,
            lambda k, n, link, device, zc: RIGHT_ZERO(k, n, link, device, zc) / 4), "each 4 bytes"),
    (_model(RIGHT_COPY, lambda k, n, link, device, zc: k * 8 * n / (zc * 1e9)), "12 bytes per element, not 8"),
    (lambda *args: (RIGHT_ZERO(*args), RIGHT_COPY(*args)), "in that order"),
    (lambda *args: RIGHT_COPY(*args), "pair of numbers"),
])
def test_model_seconds_hints(wrong, phrase):
    feedback = exercises.check("12", "model_seconds", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def _fit_rates(reuse):
    ks = sorted({int(k) for k in reuse.column("uses")})
    med = lambda method, k: float(np.median(reuse.one(method=method, uses=k)["seconds"]))  # noqa: E731
    copy_per_use, copy_fixed = np.polyfit(ks, [med("copy", k) for k in ks], 1)
    zc_per_use, _ = np.polyfit(ks, [med("zero_copy", k) for k in ks], 1)
    nbytes = 12 * reuse.params["n"]
    return nbytes / copy_fixed / 1e9, nbytes / copy_per_use / 1e9, nbytes / zc_per_use / 1e9


def test_model_seconds_against_the_recorded_rows():
    reuse = experiments.reuse()
    feedback = exercises.check("12", "model_seconds", _solution("model_seconds"), measured=reuse,
                               rates=_fit_rates(reuse))
    assert feedback.correct and "of every measured row" in feedback.message and "(measured: k =" in feedback.message


@pytest.mark.parametrize("wrong, phrase", [
    (lambda budget, sets: budget // (12 * sets), "whole number of 256-thread blocks"),
    (lambda budget, sets: max(256, budget // 12 // 256 * 256), "two buffer sets"),
    (lambda budget, sets: max(256, budget // (3 * sets) // 256 * 256), "bytes as elements"),
    (lambda budget, sets: max(256, budget // (8 * sets) // 256 * 256), "does c need its device buffer"),
    (lambda budget, sets: float(max(256, budget // (12 * sets) // 256 * 256)), "a float"),
    (lambda budget, sets: budget // (12 * sets) // 256 * 256, "smallest chunk"),
])
def test_chunk_elements_hints(wrong, phrase):
    feedback = exercises.check("12", "chunk_elements", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_chunk_elements_matches_the_recorded_rows():
    ooc = experiments.out_of_core()
    feedback = exercises.check("12", "chunk_elements", _solution("chunk_elements"), measured=ooc)
    assert feedback.correct and "all 4 chunked rows" in feedback.message
    assert all(lesson12.chunk_elements_rule(r["budget_bytes"], 2 if r["method"] == "chunked_overlap" else 1)
               == r["chunk_elements"] for r in ooc.rows if r["method"] != "zero_copy")


def test_compare_prediction():
    assert "No prediction" in lesson12.compare_prediction(..., 2, 1.38)
    assert "Right" in lesson12.compare_prediction(2, 2, 1.38)
    assert "sooner than you thought" in lesson12.compare_prediction(5, 2, 1.38)
    assert "longer than you thought" in lesson12.compare_prediction(1, 2, 1.38)
    assert "number" in lesson12.compare_prediction("soon", 2, 1.38)
    assert "no measured k" in lesson12.compare_prediction(3, None, 9.0)
