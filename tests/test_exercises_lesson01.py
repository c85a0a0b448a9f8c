"""Lesson 01's exercises (issue 10): each typical wrong answer gets its specific hint.

tests/test_exercises.py covers the placeholder ("not yet") and the solution ("correct") generically.
"""

from __future__ import annotations

import re
from math import ceil

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
    assert "No prediction" in exercises.compare("01", ..., 4)
    right = exercises.compare("01", 4, 4)
    assert right.startswith("**Prediction.**") and "4 of 4" in right and "as you predicted" in right
    wrong = exercises.compare("01", 0, 4)
    assert "you predicted 0" in wrong and "faults every page in" in wrong
    partly = exercises.compare("01", 4, 3)
    assert "you predicted 4" in partly and "left 1 of them without a frame" in partly
    assert "Could not read" in exercises.compare("01", "all", 4)


def test_the_same_mistake_failing_on_another_case_gets_the_smaller_step():
    """Issue 31: two tries with a page size of their own that fail on different cases (a 64 KiB page, then 16
    pages of 4 KiB) are one kind of mistake; the second gets the smaller step. The steps name no case's value, so
    grading does not depend on the case."""
    exercises.reset_tries()
    first = exercises.check("01", "pages_spanned", lambda a, n, p: (a + n - 1) // 4096 - a // 4096 + 1)
    second = exercises.check("01", "pages_spanned", lambda a, n, p: (a + n - 1) // 65536 - a // 65536 + 1)
    assert "page_size = 65536" in first.message and "page_size = 4096" in second.message, second
    assert "Next step:" not in first.message and "Next step:" in second.message, second
    exercises.reset_tries()
    by_two = exercises.check("01", "decode_entry", lambda e: (e >> 63, e >> 1))
    by_three = exercises.check("01", "decode_entry", lambda e: (e >> 63, e >> 3))
    assert "Next step:" not in by_two.message and "Next step:" in by_three.message, by_three


def test_one_short_and_one_over_are_told_apart():
    """Issue 31: the +1 left out (15 for 16 pages) and the byte at address + nbytes counted (17) got one hint,
    whose question pointed at a line that was already right; each side now gets its own."""
    short = lesson01.check_pages_spanned(lambda a, n, p: (a + n - 1) // p - a // p)
    over = lesson01.check_pages_spanned(lambda a, n, p: (a + n) // p - a // p + 1)
    assert "one short" in short.message and "one over" not in short.message, short
    assert "one over" in over.message and "one short" not in over.message, over
    assert short.step != over.step


def test_shifting_before_masking_gets_the_divide_hint_too():
    """Issue 31: `(entry >> 12) & mask` is the same mistake as `(entry & mask) >> 12`, and gets the same hint."""
    mask = (1 << 55) - 1
    before = lesson01.check_decode_entry(lambda e: (e >> 63, (e >> 12) & mask))
    after = lesson01.check_decode_entry(lambda e: (e >> 63, (e & mask) >> 12))
    assert "divided by 4096" in before.message and before.step == after.step, before


def test_a_typed_string_prediction_is_said_to_be_read_as_a_number():
    said = exercises.compare("01", "4", 4)
    assert "as you predicted" in said and "You typed the text '4', read as the number 4" in said, said
    assert "Could not read True" in exercises.compare("01", True, 4)


def test_a_return_left_out_is_named():
    """Issue 31: a body that computes the count without `return` was told it returns `...`."""
    def no_return(address, nbytes, page_size):
        (address + nbytes - 1) // page_size - address // page_size + 1

    said = exercises.check("01", "pages_spanned", no_return)
    assert said.status == "hint" and "returned None" in said.message and "`return`" in said.message, said


def test_a_two_item_list_is_a_pair_and_the_pfn_shows_in_hex():
    """Issue 31: `return [present, pfn]` is a pair; a return that is no pair shows its integers in hex."""
    assert exercises.check("01", "decode_entry", lambda e: [e >> 63 & 1, e & ((1 << 55) - 1)]).correct
    said = lesson01.check_decode_entry(lambda e: (e >> 63, e & 0xFFFF, 0))
    assert "you returned (1, 0x1234, 0)" in said.message, said.message


def test_a_prediction_out_of_range_is_said_to_be():
    for guess in (5, -1):
        said = exercises.compare("01", guess, 4)
        assert f"you predicted {guess}, out of range" in said and "0 to 4" in said, said


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
                phrase="one over"),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size + 3),
                ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size), phrase="rounds down"),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size + 1),
                phrase="ignores where the buffer starts"),
        Typical(fixed(lambda address, nbytes, page_size: -(-nbytes // page_size)), phrase="starts on a page boundary"),
        # issue 31: one short and one over got one hint; each side gets its own, and both slips at once a third
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes - 1) // page_size - address // page_size),
                ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES, phrase="one short"),
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes) // page_size - address // page_size),
                phrase="two off-by-one slips"),
        Typical(fixed(lambda address, nbytes, page_size: (address + nbytes - 1) // 65536 - address // 65536 + 1),
                phrase="pages of 65536 bytes"),
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
        # issue 31: every wrong present flag was told it read bit 62; each hint names the bit actually read
        Typical(fixed(lambda entry: (entry & 1, entry & ((1 << 55) - 1))), phrase="you read bit 0"),
        Typical(fixed(lambda entry: (entry >> 64, entry & ((1 << 55) - 1))), phrase="false for every entry"),
        Typical(fixed(lambda entry: (not (entry >> 63), entry & ((1 << 55) - 1))), phrase="opposite of bit 63"),
        Typical(fixed(lambda entry: (entry, entry & ((1 << 55) - 1))), phrase="whenever any bit"),
        # issue 31 (fourth walk): bin() drops leading zeros, so its first digit is the highest bit set, not bit 63
        Typical(fixed(lambda entry: (bin(entry)[2] == "1", entry & ((1 << 55) - 1))), phrase="drops leading zeros"),
        Typical(fixed(lambda entry: (entry >> 63, (entry & ((1 << 55) - 1)) >> 12)), phrase="divided by 4096"),
        # issue 31: shifting before masking got only the general hint
        Typical(fixed(lambda entry: (entry >> 63, (entry >> 12) & ((1 << 55) - 1))), phrase="divided by 4096"),
        Typical(fixed(lambda entry: (entry >> 63, entry & ((1 << 56) - 1))), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES], phrase="bits 0-55: the PFN ends at bit 54, 1 lower"),
        Typical(fixed(lambda entry: (entry >> 63, entry & (1 << 55))), phrase="single bit"),
        Typical(fixed(lambda entry: (entry & (1 << 63), entry & ((1 << 55) - 1))), phrase="True or False"),
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


def test_a_count_that_ignores_the_start_is_shown_a_case_where_the_start_matters():
    """Issue 31 (fourth walk): ``nbytes // page_size + 1`` was shown 65536 bytes from a page boundary, where only the
    unconditional + 1 is wrong; the hint shows a case whose start decides the count."""
    exercises.reset_tries("01", "pages_spanned")
    feedback = lesson01.check_pages_spanned(lambda address, nbytes, page_size: nbytes // page_size + 1)
    assert "ignores where the buffer starts" in feedback.message
    assert "0x7f0000000fff, nbytes = 2" in feedback.message, feedback.message


def test_the_top_digit_of_all_64_binary_digits_is_a_right_present_flag():
    """Issue 31 (fourth walk): reading bit 63 as the first of 64 binary digits is right, and accepted."""
    feedback = lesson01.check_decode_entry(lambda entry: (f"{entry:064b}"[0] == "1", entry & ((1 << 55) - 1)))
    assert feedback.correct, feedback.message


def test_a_module_used_without_import_gets_told_to_import_it():
    """Issue 31 (fourth walk): "name 'math' is not defined" said only what Python said; a module's name (any
    lesson's check) is told to import it first, any other name is not."""
    exercises.reset_tries("01", "pages_spanned")
    for name, statement in (("math", "import math"), ("np", "import numpy as np")):
        raised = exercises.check("01", "pages_spanned", lambda a, n, p, name=name: eval(name))
        assert f"`{statement}`" in raised.message, raised.message
    unknown = exercises.check("01", "pages_spanned", lambda a, n, p: eval("first_page"))
    assert "NameError" in unknown.message and "import" not in unknown.message


@pytest.mark.parametrize("lesson, guess", [("01", ...), ("01", "many"), ("03", ...)])
def test_the_prediction_after_its_label_starts_with_a_capital(lesson, guess):
    """Issue 31 (fourth walk): "**Prediction.** no prediction: ..." started lower case; every lesson's prediction
    reads as a sentence after its label, as hints do."""
    measured = (4,) if lesson == "01" else (None,)
    text = exercises.compare(lesson, guess, *measured)._repr_markdown_()
    after = text.split("**Prediction.** ", 1)[1]
    assert after[0].isupper(), text


def test_no_second_step_reads_the_solution_aloud():
    """Issue 31 (third walk): a second step is a smaller step, not the line read aloud: it names no key expression
    of the solution, and the one-short hint no longer strings three colons together."""
    for (lesson, name), typical in TYPICAL.items():
        for entry in typical:
            exercises.reset_tries(lesson, name)
            exercises.check(lesson, name, entry.wrong())
            step = exercises.check(lesson, name, entry.wrong()).message.split("Next step:")[1]
            exercises.reset_tries(lesson, name)
            expressions = [k for k in entry.keys if any(op in k for op in ("//", "<<", "-", "&"))]
            assert not [k for k in expressions if k.replace(" ", "") in step.replace(" ", "")], step
            for aloud in ("address + nbytes - 1", "address // page_size", "a shift one smaller", "55 ones"):
                assert aloud not in step, (aloud, step)
    short = lesson01.check_pages_spanned(lambda a, n, p: (a + n - 1) // p - a // p)
    assert short.message.split("Next step:")[0].count(":") <= 2, short.message


# --------------------------------------------------------------------------- every family of wrong answers
# Issue 31 (fifth walk): a hint named a 54-bit mask for every narrower one, and second steps asked the first hint's
# case again or answered its question. Each family of wrong answers, with the words its first hint must say (the
# slip actually made, with its numbers): its second try adds a step that is a different, smaller step, shows no
# case of the first hint again, and names none of the solution's expressions.
def _mask_of(width):
    return lambda entry: (entry >> 63, entry & ((1 << width) - 1))



SOLUTION_EXPRESSIONS = ("(address + nbytes - 1) // page_size", "address // page_size", "last - first + 1",
                        "(1 << 55) - 1", "0x7fffffffffffff", ">> 63", "return present, pfn", "55 ones",
                        "55 bits wide", "(present, pfn), present first")
SPAN_FAMILIES = [
    ("ceil of a float", lambda a, n, p: ceil(n / p), ("starts on a page boundary", "nbytes = 2",
                                                           "returned 1")),
    ("rounded up with //", lambda a, n, p: -(-n // p), ("starts on a page boundary",)),
    ("rounded down", lambda a, n, p: n // p, ("rounds down", "nbytes = 1", "returned 0")),
    ("size alone + 1", lambda a, n, p: n // p + 1, ("ignores where the buffer starts", "nbytes = 2")),
    ("one short", lambda a, n, p: (a + n - 1) // p - a // p, ("one short",)),
    ("one over", lambda a, n, p: (a + n) // p - a // p + 1, ("one over",)),
    ("two slips", lambda a, n, p: (a + n) // p - a // p, ("two off-by-one slips",)),
    ("4096 typed", lambda a, n, p: (a + n - 1) // 4096 - a // 4096 + 1, ("ignored page_size",)),
    ("shift by 12", lambda a, n, p: ((a + n - 1) >> 12) - (a >> 12) + 1, ("ignored page_size",)),
    ("64 KiB typed", lambda a, n, p: (a + n - 1) // 65536 - a // 65536 + 1, ("pages of 65536 bytes",)),
    ("true division", lambda a, n, p: (a + n - 1) / p - a / p + 1, ("float", "`//`")),
    ("a string", lambda a, n, p: str(spanned_right(a, n, p)), ("return an int",)),
]
ENTRY_FAMILIES = [
    *[(f"{w}-bit mask", _mask_of(w), (f"keeps bits 0-{w - 1}:", f"{55 - w} higher")) for w in range(2, 55)],
    *[(f"{w}-bit mask", _mask_of(w), (f"keeps bits 0-{w - 1}:", f"{w - 55} lower")) for w in range(56, 64)],
    ("1-bit mask", _mask_of(1), ("keeps bit 0:", "54 higher")),
    *[(f"bit {b} alone", lambda e, b=b: (e >> 63, e & (1 << b)), (f"single bit set, bit {b} ",))
      for b in (12, 54, 55, 56)],
    ("no mask", lambda e: (e >> 63, e), ("flag bits",)),
    ("shift after the mask", lambda e: (e >> 63, (e & ((1 << 55) - 1)) >> 12), ("divided by 4096",)),
    ("shift before the mask", lambda e: (e >> 63, (e >> 12) & ((1 << 55) - 1)), ("divided by 4096",)),
    ("the address", lambda e: (e >> 63, (e & ((1 << 55) - 1)) << 12), ("physical address",)),
    ("present read at bit 62", lambda e: (e >> 62 & 1, e & ((1 << 55) - 1)), ("bit 62",)),
    ("present read at bit 0", lambda e: (e & 1, e & ((1 << 55) - 1)), ("you read bit 0",)),
    ("bin() top digit", lambda e: (bin(e)[2] == "1", e & ((1 << 55) - 1)), ("drops leading zeros",)),
    ("shifted out", lambda e: (e >> 64, e & ((1 << 55) - 1)), ("false for every entry",)),
    ("inverted", lambda e: (e >> 63 == 0, e & ((1 << 55) - 1)), ("opposite of bit 63",)),
    ("bit 63 in place", lambda e: (e & (1 << 63), e & ((1 << 55) - 1)), ("bit 63 left in its place",)),
    ("swapped pair", lambda e: (e & ((1 << 55) - 1), e >> 63), ("frame number first",)),
    ("a list swapped", lambda e: [e & ((1 << 55) - 1), bool(e >> 63)], ("present bit second",)),
    ("hex text", lambda e: (e >> 63, hex(e & ((1 << 55) - 1))), ("not a string", "'0x1234'")),
    ("a float", lambda e: (e >> 63, float(e & ((1 << 55) - 1))), ("float",)),
    ("the flag alone", lambda e: e >> 63, ("return a pair", "you returned 1")),
    ("a triple", lambda e: (e >> 63, e & ((1 << 55) - 1), 0), ("return a pair",)),
    ("no return", lambda e: _no_return(e), ("returned None",)),
]


def _no_return(entry):
    (entry >> 63, entry & ((1 << 55) - 1))


def spanned_right(address, nbytes, page_size):
    return lesson01.spanned(address, nbytes, page_size)


def _sentences(text):
    return {s.strip() for s in text.replace("?", "?|").replace(". ", ".|").split("|") if len(s.strip()) > 12}


@pytest.mark.parametrize("name, wrong, says", [("pages_spanned", *f[1:]) for f in SPAN_FAMILIES]
                         + [("decode_entry", *f[1:]) for f in ENTRY_FAMILIES],
                         ids=[f[0] for f in SPAN_FAMILIES] + [f[0] for f in ENTRY_FAMILIES])
def test_every_family_gets_its_slip_named_then_a_smaller_different_step(name, wrong, says):
    exercises.reset_tries("01", name)
    first = exercises.check("01", name, wrong)
    second = exercises.check("01", name, wrong)
    exercises.reset_tries("01", name)
    assert first.status == "hint" and "Next step:" not in first.message, first.message
    for words in says:
        assert words in first.message, (words, first.message)
    step = second.message.split("Next step:")[1]
    assert not _sentences(step) & _sentences(first.message), (step, first.message)
    for expression in SOLUTION_EXPRESSIONS:
        assert expression.replace(" ", "") not in step.replace(" ", ""), (expression, step)
    for case in re.findall(r"0x[0-9a-f]{6,}", first.message):
        assert case not in step, (case, step)
    if "nbytes = 2" in first.message:
        assert "2 bytes" not in step and "last byte of a page" not in step, step


def test_a_shift_by_62_without_a_mask_is_named_as_bits_62_and_63():
    """Issue 31 (eighth walk): `entry >> 62` is true where bit 62 or 63 is set, not wherever any bit is: a probe entry
    with only low bits set tells the two apart, and each gets its own hint."""
    from helpers.exercises import lesson01

    pfn = lambda entry: entry & ((1 << 55) - 1)
    shifted = lesson01.check_decode_entry(lambda entry: (bool(entry >> 62), pfn(entry)))
    anything = lesson01.check_decode_entry(lambda entry: (bool(entry), pfn(entry)))
    assert shifted.status == anything.status == "hint"
    assert "bit 62 or bit 63" in shifted.message and "any bit" not in shifted.message
    assert "any bit of the entry" in anything.message
