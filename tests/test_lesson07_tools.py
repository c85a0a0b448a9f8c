"""Lesson 09's sector explorer (helpers.analysis.sector_explorer) and exercise (helpers.exercises.coalescing)."""

from __future__ import annotations

import pytest

from helpers.exercises import coalescing as exercise
from helpers import exercises
from helpers.analysis import pcie_model
from helpers.analysis.sector_explorer import draw_warp, predict_pattern, sector_explorer, warp_pattern


@pytest.fixture(scope="module")
def model(reference) -> pcie_model.Model:
    return pcie_model.calibrate(reference[0])


def test_explorer_pattern_equals_the_traced_kernel() -> None:
    for stride, offset in [(1, 0), (3, 1), (17, 5), (64, 32)]:
        real = pcie_model.strided_trace(stride, offset, warps=1)
        pattern = warp_pattern(stride, offset, 1)
        assert (pattern.useful_bytes, pattern.sectors, pattern.lines, pattern.span_sectors) == \
            (real.useful_bytes, real.sectors, real.lines, real.span_sectors)
    assert (warp_pattern(1, 0, 4).sectors, warp_pattern(1, 0, 4).lines) == (16, 4)


def test_explorer_prediction_is_the_models_for_the_same_pattern(model) -> None:
    float4 = predict_pattern(1, 0, 4, model)
    scalar = predict_pattern(1, 0, 1, model)
    assert float4.useful_GBps == pytest.approx(scalar.useful_GBps, rel=0.02)  # the same bytes and lines
    assert predict_pattern(32, 0, 1, model).useful_GBps < scalar.useful_GBps / 8
    misaligned = predict_pattern(1, 1, 1, model)  # a misaligned warp asks for two lines
    assert misaligned.useful_GBps < scalar.useful_GBps and misaligned.bound in ("link", "requests", "half_lines")


def test_draw_warp_returns_a_figure_without_a_display(model) -> None:
    import matplotlib
    matplotlib.use("Agg")
    fig = draw_warp(8, 0, 1, model)
    title = fig.axes[0].get_title()
    assert "32 sectors" in title and "8 lines" in title and "GB/s" in title
    assert len(fig.axes[0].get_yticklabels()) == 8
    assert "1 line\n" in draw_warp(1, 0, 1, model).axes[0].get_title()  # one line, not "1 lines"


def test_sector_explorer_builds_a_widget(model) -> None:
    pytest.importorskip("ipywidgets")
    import matplotlib
    matplotlib.use("Agg")
    widget = sector_explorer(model)
    image = widget.children[2]
    first = image.value
    widget.children[0].children[0].value = 32  # the stride slider redraws
    assert first[:4] == b"\x89PNG" and image.value != first


def _solution_source() -> str:
    """The fixed kernel, from lessons/solutions/lesson09.py (the one place a solution lives)."""
    namespace: dict = {}
    exec(exercises.solution("09", "coalesce"), namespace)
    return namespace["COPY_SOURCE"]


def test_exercise_solution_passes_and_broken_kernel_fails() -> None:
    solution = _solution_source()
    good = exercise.check_fix(solution)
    assert good.passed and good.fixed_sectors == good.ideal_sectors < good.broken_sectors
    broken = exercise.check_fix(exercise.BROKEN_SOURCE)
    assert not broken.passed and broken.correct and "no fewer" in broken.message
    wrong = exercise.check_fix(solution.replace("r * cols + c] = src", "r * cols + c] = 0.0f * src"))
    assert not wrong.passed and not wrong.correct and "differs" in wrong.message
    rejected = exercise.check_fix(solution.replace("int t =", "__syncthreads(); int t ="))
    assert not rejected.passed and "__syncthreads" in rejected.message
