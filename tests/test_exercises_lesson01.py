"""Lesson 01's exercises (issue 10): each typical wrong answer gets its specific hint.

tests/test_exercises.py covers the placeholder ("not yet") and the solution ("correct") generically.
"""

from __future__ import annotations

import pytest

from helpers import exercises
from helpers.memory import pages
from helpers.exercises import lesson01
from typical_wrong import Typical, fixed


@pytest.mark.parametrize("wrong, phrase", [
    (lambda address, nbytes, page_size: nbytes // page_size, "rounds down"),
    (lambda address, nbytes, page_size: -(-nbytes // page_size), "starts on a page boundary"),
    (lambda address, nbytes, page_size: (address + nbytes) // page_size - address // page_size + 1, "off-by-one"),
    (lambda address, nbytes, page_size: (address + nbytes - 1) // page_size - address // page_size, "off-by-one"),
    (lambda address, nbytes, page_size: (address + nbytes - 1) // 4096 - address // 4096 + 1, "ignored page_size"),
    (lambda address, nbytes, page_size: (address + nbytes - 1) / page_size - address / page_size + 1, "`//`"),
])
def test_pages_spanned_hints(wrong, phrase):
    feedback = exercises.check("01", "pages_spanned", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


@pytest.mark.parametrize("wrong, phrase", [
    (lambda entry: (bool(entry >> 62 & 1), entry & ((1 << 55) - 1)), "bit 62"),
    (lambda entry: (entry >> 63, entry & ((1 << 54) - 1)), "bits 0-53"),
    (lambda entry: (entry >> 63, entry), "flag bits"),
    (lambda entry: (entry >> 63, (entry & ((1 << 55) - 1)) * 4096), "physical address"),
    (lambda entry: (entry >> 63, float(entry & ((1 << 55) - 1))), "integer operators"),
    (lambda entry: entry >> 63, "pair"),
])
def test_decode_entry_hints(wrong, phrase):
    feedback = exercises.check("01", "decode_entry", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_a_function_returning_the_placeholder_is_not_yet():
    assert exercises.check("01", "pages_spanned", lambda a, n, p: ...).status == "not yet"
    assert exercises.check("01", "decode_entry", lambda e: ...).status == "not yet"


@pytest.mark.skipif(not pages.proc_available(), reason="needs Linux /proc")
def test_the_checks_compare_with_this_process_page_table():
    right = exercises.check("01", "pages_spanned", lesson01.spanned)
    assert right.correct and "/proc/self/pagemap" in right.message, right
    decoded = exercises.check("01", "decode_entry", lesson01.decoded)
    assert decoded.correct and "own pagemap" in decoded.message, decoded


def test_the_mlock_prediction_says_no_prediction_then_compares():
    assert "no prediction" in exercises.compare("01", ..., 4)
    right = exercises.compare("01", 4, 4)
    assert right.startswith("**Prediction.**") and "4 of 4" in right and "as you predicted" in right
    wrong = exercises.compare("01", 0, 4)
    assert "you predicted 0" in wrong and "faults every page in" in wrong
    partly = exercises.compare("01", 4, 3)
    assert "you predicted 4" in partly and "left 1 of them without a frame" in partly
    assert "could not read" in exercises.compare("01", "all", 4)


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer, then a
# smaller step, then the way to the solution.


def _off_by_one_pages(address: int, nbytes: int, page_size: int) -> int:
    return (address + nbytes) // page_size - address // page_size + 1


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("01", "pages_spanned"): [
        Typical(fixed(_off_by_one_pages), ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size + 3),
                ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES)],
    ("01", "decode_entry"): [
        Typical(fixed(lambda entry: (entry >> 63, entry & ((1 << 54) - 1))), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES]),
        Typical(fixed(lambda entry: (entry >> 63, entry >> 1)), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES])],
}
