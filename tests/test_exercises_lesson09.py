"""Lesson 09's exercises give the specific hint for each typical wrong answer (issue 10); the generic tests in
test_exercises.py cover placeholder -> "not yet" and solution -> "correct". Also the prediction's comparison."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.exercises import coalescing as ex
from helpers import exercises, experiments
from helpers.exercises import lesson09
from typical_wrong import Typical, edited, fixed, solution_value


def _solution(name: str, variable: str):
    namespace = exercises.namespace("09")
    exec(compile(exercises.solution("09", name), "<solution>", "exec"), namespace)
    return namespace[variable]


def _right(stride, offset, width=1):
    return _solution("sectors_per_warp", "sectors_per_warp")(stride, offset, width)


def _span(stride, offset, width=1):
    size = 4 * width
    return ((offset + 31 * stride) * size + size - 1) // 32 - offset * size // 32 + 1


def test_sectors_per_warp_agrees_with_the_lessons_trace_table():
    # section 3's table: stride 1 -> 4 sectors, stride 8 and 32 -> 32, offset 1 -> 5
    for stride, offset, sectors in ((1, 0, 4), (8, 0, 32), (32, 0, 32), (1, 1, 5), (1, 8, 4)):
        assert lesson09.traced_sectors(stride, offset) == sectors == _right(stride, offset)


def test_coalesce_untouched_kernel_is_not_yet_with_or_without_comments():
    assert exercises.check("09", "coalesce", ex.BROKEN_SOURCE).status == "not yet"
    assert exercises.check("09", "coalesce", ex.BROKEN_SOURCE.replace("// consecutive", "// TODO consecutive")).status == "not yet"
    feedback = exercises.check("09", "coalesce", _solution("coalesce", "COPY_SOURCE"))
    assert feedback.correct and "768 sectors instead of 6144" in feedback.message


# --------------------------------------------------------------------------- the prediction
@pytest.fixture(scope="module")
def stride():
    return experiments.stride()


def test_no_prediction_says_so_and_shows_the_run(stride):
    text = lesson09.compare_prediction(..., stride)
    measured = stride.one(memory="zero_copy", stride=32)["useful_GBps"] / stride.one(memory="zero_copy", stride=1)["useful_GBps"]
    assert "No prediction made" in text and f"{measured:.1%}" in text


@pytest.mark.parametrize("guess, phrase", [
    (0.5, "more than"), (1e-4, "below the measured"), (12.5, "12.5 %"), ("half", "not a number"), (-2, "not a positive"),
])
def test_a_prediction_is_compared_with_the_run(stride, guess, phrase):
    text = lesson09.compare_prediction(guess, stride)
    assert phrase in text and "This run" in text, text


def test_a_close_prediction_is_called_close(stride):
    measured = stride.one(memory="zero_copy", stride=32)["useful_GBps"] / stride.one(memory="zero_copy", stride=1)["useful_GBps"]
    assert "close" in lesson09.compare_prediction(measured * 1.1, stride)


def test_a_prediction_typed_as_text_is_said_to_be_read_as_a_number(stride):
    text = lesson09.compare_prediction("0.05", stride)
    assert "You typed the text '0.05', read as the number 0.05" in text and "You predicted 5.0%" in text
    assert "You typed" not in lesson09.compare_prediction(0.05, stride)


# --------------------------------------------------------------------------- errors as the hints show them
def _bounds_hint(language: str) -> str:
    from helpers import i18n

    broken = edited("09", "coalesce", "COPY_SOURCE", "if (t < rows * cols) {", "{")()
    i18n.use_language(language)
    try:
        return lesson09.check_coalesce(broken).message
    finally:
        i18n.use_language("en")


def test_a_bounds_hint_quotes_the_error_and_glosses_it_in_chinese_only():
    english, chinese = _bounds_hint("en"), _bounds_hint("zh")
    assert "is outside parameter" in english and "That is:" not in english and "即：" not in english
    assert "Invalid \\_\\_global\\_\\_ read of size 4 bytes" in chinese          # the English head, quoted
    assert "中的线程 (" in chinese and "参数 src" in chinese and "越界" in chinese        # which thread, which array


def test_a_compiler_error_shows_as_a_code_block_with_no_full_stop_added():
    source = edited("09", "coalesce", "COPY_SOURCE", "dst[r * cols + c] = src[r * cols + c];",
                    "dst[r * cols + c] = src[r * cols + c]")()
    exercises.reset_tries("09", "coalesce")
    message = exercises.check("09", "coalesce", source).message
    exercises.reset_tries("09", "coalesce")
    lead, block = message.split("\n\n```text\n")
    assert lead.startswith("The kernel failed") and "error:" in block
    assert block.rstrip().endswith("```") and not block.rstrip().endswith("```.")
    assert "\\_" not in block   # shown as written, not escaped for Markdown


def test_every_exercise_of_lesson_09_is_in_the_notebook():
    from tests.test_exercises import CELLS

    assert {name for _, lesson, name, _, _ in CELLS if lesson == "09"} == set(lesson09.CHECKS)
    assert sum(lesson == "09" for _, lesson, _, _, _ in CELLS) >= 2


# --------------------------------------------------------------------------- typical wrong answers
def _threads(s, o, w, size, last, unit=32):
    first = (o + np.arange(32) * s) * size
    return len(set(first // unit) | set((first + last) // unit))


def _lines(s, o, w=1):           # 128-byte lines instead of 32-byte sectors
    first = (o + np.arange(32) * s) * 4 * w
    return len(set(first // 128) | set((first + 4 * w - 1) // 128))


def _last_past(s, o, w=1):       # the last byte 4 * width on, one too far
    return _threads(s, o, w, 4 * w, 4 * w)


def _element_numbers(s, o, w=1):  # element number times width, the float's bytes missing
    return _threads(s, o, w, w, 4 * w - 1)


def _floats_as_bytes(s, o, w=1):  # element numbers as bytes, width and floats both missing
    return _threads(s, o, w, w, w - 1)


# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("09", "sectors_per_warp"): [
        Typical(lambda: (lambda s, o, w=1: solution_value("09", "sectors_per_warp")(s, o, w) + 1), ("len(set(",),
                lambda: lesson09.SECTOR_CASES),
        Typical(fixed(lambda s, o, w=1: 2 * s + o), ("len(set(", "offset + np.arange(32) * stride"),
                lambda: lesson09.SECTOR_CASES),
        Typical(fixed(lambda s, o, w=1: 32 * _right(s, o, w)), phrase="you returned bytes"),
        Typical(fixed(lambda s, o, w=1: _right(s, 0, w)), phrase="add the offset"),
        Typical(fixed(lambda s, o, w=1: _span(s, o, w)), phrase="from the warp's first byte to its last"),
        Typical(fixed(lambda s, o, w=1: _right(s, o, 1)), phrase="4 * width bytes"),
        Typical(fixed(lambda s, o, w=1: 4 * w), phrase="what the threads asked for"),
        Typical(fixed(lambda s, o, w=1: _right(s, o, w) / 3), phrase="not a whole number"),
        Typical(fixed(lambda s, o, w=1: _right(s, o, w) + 1), phrase="off by one"),
        # issue 31 (a Chinese reader's walk): the four slips of the stub's three lines, each its own hint
        Typical(fixed(_lines), ("// 32",), lambda: lesson09.SECTOR_CASES, phrase="you counted 128-byte lines"),
        Typical(fixed(_last_past), ("size - 1",), lambda: lesson09.SECTOR_CASES, phrase="last byte is one too far"),
        Typical(fixed(_element_numbers), ("* size",), lambda: lesson09.SECTOR_CASES,
                phrase="count elements (or floats), not bytes"),
        Typical(fixed(_floats_as_bytes), ("* size",), lambda: lesson09.SECTOR_CASES,
                phrase="count elements (or floats), not bytes"),
        # issue 35 (a Chinese reader's fifth walk): the element number alone, (offset + t * stride) // 32
        Typical(fixed(lambda s, o, w=1: len(set((o + np.arange(32) * s) // 32))), ("* size",),
                lambda: lesson09.SECTOR_CASES, phrase="count elements (or floats), not bytes"),
        Typical(fixed(lambda s, o, w=1: len(o + np.arange(32) * s)), ("len(set(",), lambda: lesson09.SECTOR_CASES,
                phrase="one sector per thread")],
    ("09", "coalesce"): [
        Typical(edited("09", "coalesce", "COPY_SOURCE", "int r = t / cols;", "int r = t / rows;"),
                ("t / cols", "t % cols"), variable="COPY_SOURCE", phrase="how many whole rows come before it"),
        Typical(edited("09", "coalesce", "COPY_SOURCE", "int c = t % cols;", "int c = t % rows;"),
                ("t / cols", "t % cols"), variable="COPY_SOURCE", phrase="copy is wrong"),
        Typical(edited("09", "coalesce", "COPY_SOURCE", "if (t < rows * cols) {", "{"), variable="COPY_SOURCE",
                phrase="keep `if (t < rows * cols)`"),
        Typical(edited("09", "coalesce", "COPY_SOURCE", "dst[r * cols + c] = src[r * cols + c];",
                       "dst[r * cols + c] = src[r * cols + c]"), variable="COPY_SOURCE", phrase="kernel failed")],
}


SOLUTION_ALOUD = ("// 32", "//32", "size - 1", "len(set(", "* 4 * width")
SLIPS_09 = list(range(9, len(TYPICAL[("09", "sectors_per_warp")])))


@pytest.mark.parametrize("i", SLIPS_09, ids=[TYPICAL[("09", "sectors_per_warp")][i].phrase for i in SLIPS_09])
def test_every_slip_of_sectors_per_warp_gets_its_own_hint_and_a_smaller_step(i):
    """Issue 31 (a Chinese reader's walk): lines for sectors, the last byte one too far, element numbers for bytes,
    one sector per thread: each is refused, its first hint names its slip (not the fallback's "Draw that warp"), and
    its second step differs from every other slip's and reads no part of the solution aloud."""
    typical = TYPICAL[("09", "sectors_per_warp")]
    exercises.reset_tries()
    first = exercises.check("09", "sectors_per_warp", typical[i].wrong())
    second = exercises.check("09", "sectors_per_warp", typical[i].wrong())
    exercises.reset_tries()
    assert first.status == "hint" and typical[i].phrase in first.message, first
    assert "Draw that warp" not in first.message, first
    step = second.message.split("Next step:")[1]
    assert not any(words in step for words in SOLUTION_ALOUD), step
    others = set()
    for j in SLIPS_09:
        if typical[j].phrase != typical[i].phrase:
            exercises.check("09", "sectors_per_warp", typical[j].wrong())
            others.add(exercises.check("09", "sectors_per_warp", typical[j].wrong()).message.split("Next step:")[1])
            exercises.reset_tries()
    assert step not in others, step


def test_lines_and_element_numbers_are_told_apart_by_the_code_and_named_together_without_it():
    """Issue 31: counting 128-byte lines and taking element numbers (width included) for bytes give the same counts
    on every input; the check reads the learner's code for a 128, and names both when the code cannot be read."""
    exercises.reset_tries()
    assert "128-byte lines, not" in lesson09.check_sectors_per_warp(_lines).message
    assert "count elements" in lesson09.check_sectors_per_warp(_floats_as_bytes).message
    anonymous = eval(compile("lambda s, o, w=1: len(set((o + np.arange(32) * s) * w // 32) | "
                             "set(((o + np.arange(32) * s) * w + w - 1) // 32))", "<no file>", "eval"), {"np": np})
    message = lesson09.check_sectors_per_warp(anonymous).message
    assert "128-byte lines the warp touches, or" in message and "not bytes" in message, message
