"""Lesson 01's exercises (issue 10): each typical wrong answer gets its specific hint.

tests/test_exercises.py covers the placeholder ("not yet") and the solution ("correct") generically.
"""

from __future__ import annotations

import pytest

from helpers import exercises
from helpers.memory import pages
from helpers.exercises import lesson01
from typical_wrong import Typical, fixed


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


def test_the_smaller_step_counts_one_page_in_the_singular():
    rounds_down = lesson01.check_pages_spanned(lambda address, nbytes, page_size: nbytes // page_size)
    assert "touches 1 page there" in rounds_down.step, rounds_down.step
    many = lesson01.check_pages_spanned(lambda address, nbytes, page_size: 1)
    assert "touches 16 pages there" in many.step, many.step


def test_an_off_by_one_is_named_even_where_rounding_down_gives_the_same_number():
    # (0x7F0000000000, 1, 4096): both rules give 0, and the learner's code does use the address
    missing_one = lesson01.check_pages_spanned(lambda a, n, p: (a + n) // p - a // p)
    assert "off-by-one" in missing_one.message and "rounds down" not in missing_one.message, missing_one


def test_the_catch_all_hint_shows_the_pfn_in_hex_as_the_entry():
    said = lesson01.check_decode_entry(lambda entry: (entry >> 63, entry >> 1))
    assert "you returned the PFN 0x400000000000091a." in said.message, said.message


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _off_by_one_pages(address: int, nbytes: int, page_size: int) -> int:
    return (address + nbytes) // page_size - address // page_size + 1


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("01", "pages_spanned"): [
        Typical(fixed(_off_by_one_pages), ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES,
                phrase="off-by-one"),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size + 3),
                ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size), phrase="rounds down"),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size + 1),
                phrase="ignores where the buffer starts"),
        Typical(fixed(lambda address, nbytes, page_size: -(-nbytes // page_size)), phrase="starts on a page boundary"),
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes - 1) // page_size - address // page_size),
                phrase="off-by-one"),
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes) // page_size - address // page_size),
                phrase="off-by-one"),
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes - 1) // 4096 - address // 4096 + 1),
                phrase="ignored page_size"),
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes - 1) / page_size - address / page_size + 1),
                phrase="`//`")],
    ("01", "decode_entry"): [
        Typical(fixed(lambda entry: (entry >> 63, entry & ((1 << 54) - 1))), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES], phrase="bits 0-53"),
        Typical(fixed(lambda entry: (entry >> 63, entry >> 1)), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES]),
        Typical(fixed(lambda entry: (bool(entry >> 62 & 1), entry & ((1 << 55) - 1))), phrase="bit 62"),
        Typical(fixed(lambda entry: (entry >> 63, entry)), phrase="flag bits"),
        Typical(fixed(lambda entry: (entry >> 63, (entry & ((1 << 55) - 1)) * 4096)), phrase="physical address"),
        Typical(fixed(lambda entry: (entry >> 63, float(entry & ((1 << 55) - 1)))), phrase="integer operators"),
        Typical(fixed(lambda entry: (entry >> 63, hex(entry & ((1 << 55) - 1)))), phrase="not a string"),
        Typical(fixed(lambda entry: entry >> 63), phrase="pair"),
        # issue 31: the pair the wrong way round was told its PFN, then to build the mask it had built
        Typical(fixed(lambda entry: (entry & ((1 << 55) - 1), entry >> 63)), ("present, pfn",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES], phrase="frame number first"),
        Typical(fixed(lambda entry: (entry & ((1 << 55) - 1), bool(entry >> 63 & 1))), phrase="present bit second")],
}
