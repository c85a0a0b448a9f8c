"""Lesson 03's exercises give the specific hint for typical wrong answers, and its prediction text works untouched
(issue 10). The generic tests (placeholder -> "not yet", solution -> "correct") are in tests/test_exercises.py."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from helpers import exercises
from helpers.memory import pages
from helpers.exercises import lesson03
from typical_wrong import Typical, fixed

PAGE = lesson03.PAGE


def _solution(name: str):
    namespace = exercises.namespace("03")
    exec(compile(exercises.solution("03", name), "<solution>", "exec"), namespace)
    return namespace[name]


def _with_none(fn):
    """Make a wrong answer handle a page with no frame the right way, to reach the hint it is written for."""
    def wrapped(address, start, pfns):
        return None if pfns[(address - start) // PAGE] is None else fn(address, start, pfns)
    return wrapped


def _consecutive_either_way(address, pfns):
    return len(pages.frame_runs(pfns)) == 1


def _offset_then_either_way(address, pfns):
    """The right offset test, then frames one apart in either direction (issue 31: was called correct)."""
    if (address // PAGE) % 512 != pfns[0] % 512:
        return False
    return all(abs(pfns[i] - pfns[i - 1]) == 1 for i in range(1, len(pfns)))


def _offsets_only(address, pfns):
    """Each frame at its page's offset in some 2 MiB block, never that the frames are consecutive (issue 31)."""
    return all(p % 512 == (address // PAGE + i) % 512 for i, p in enumerate(pfns))


def _first_frame_only(address, pfns):
    """The first frame's offset alone (issue 31: was told the frames must ascend)."""
    return pfns[0] % 512 == (address // PAGE) % 512


def _bytes_for_pages(address, pfns):
    """The address's bytes modulo 512 compared with a frame's place in pages (issue 31)."""
    return pfns[0] % 512 == address % 512 and all(p == pfns[0] + i for i, p in enumerate(pfns))


def _bytes_in_the_range(address, pfns):
    """The address's byte offset in its 2 MiB range compared with a frame's place in pages (issue 31: was told
    not to require alignment, which it did not)."""
    return pfns[0] % 512 == address % (2 << 20) and all(p == pfns[0] + i for i, p in enumerate(pfns))


def _ignores_the_address(address, pfns):
    """The first frame at the start of its block, wherever the buffer starts (issue 31: was asked in which unit it
    counts the address, which it never used)."""
    return pfns[0] % 512 == 0 and all(p == pfns[0] + i for i, p in enumerate(pfns))


def _strictly_ascending(address, pfns):
    """The right offset, then frames that ascend but may skip (issue 31: was asked to check every page)."""
    if pfns[0] % 512 != (address // PAGE) % 512:
        return False
    return all(b > a for a, b in zip(pfns, pfns[1:]))


def _sorted_first(address, pfns):
    """Sorts the frames, then the lowest one's offset and consecutive (issue 31, fifth walk: was called correct)."""
    s = sorted(pfns)
    return s[0] % 512 == (address // PAGE) % 512 and all(p == s[0] + i for i, p in enumerate(s))


def _min_and_max(address, pfns):
    """The lowest frame's offset, and max - min == len - 1 (issue 31, fifth walk: was called correct)."""
    return min(pfns) % 512 == (address // PAGE) % 512 and max(pfns) - min(pfns) == len(pfns) - 1


def _frame_in_bytes(address, pfns):
    """A frame number's place in its 2 MiB block taken in bytes (issue 31, fifth walk: got the generic hint)."""
    return (pfns[0] % (2 * 1024 * 1024) == (address // PAGE) % 512
            and all(p == pfns[0] + i for i, p in enumerate(pfns)))


def _both_in_bytes(address, pfns):
    """The frame number and the address both taken modulo 2 MiB, as bytes."""
    return pfns[0] % (2 << 20) == address % (2 << 20) and all(p == pfns[0] + i for i, p in enumerate(pfns))


def _float_index(address, start, pfns):
    """The page's index with `/` (issue 31, fifth walk: got only the TypeError)."""
    pfn = pfns[(address - start) / PAGE]
    return None if pfn is None else pfn * PAGE + address % PAGE


def _ascending_only(address, pfns):
    return all(p == pfns[0] + i for i, p in enumerate(pfns))


def _aligned_only(address, pfns):
    return address % lesson03.HUGE_PAGE_SIZE == 0 and pfns[0] % 512 == 0


def _requires_alignment(address, pfns):
    return address % lesson03.HUGE_PAGE_SIZE == 0 and pages.huge_page_possible(address, pfns)


def test_the_solutions_agree_with_the_helpers_on_the_recorded_walks():
    physical, huge = _solution("physical_address"), _solution("could_be_huge")
    for row in lesson03._recorded_rows():
        start, pfns = int(row["address"], 16), row["pfns"]
        if all(p is not None for p in pfns):
            assert huge(start, pfns) == pages.huge_page_possible(start, pfns)
            assert physical(start + PAGE + 7, start, pfns) == pfns[1] * PAGE + 7


def _walk(present: int, total: int = 8):
    return [SimpleNamespace(present=i < present) for i in range(total)]


def test_compare_prediction_untouched_and_answered():
    assert "no prediction" in lesson03.compare_prediction(..., _walk(8)) and "8 of 8" in lesson03.compare_prediction(..., _walk(8))
    assert "no /proc" in lesson03.compare_prediction(..., None)
    assert "matched" in lesson03.compare_prediction(8, _walk(8))
    assert "zero page" in lesson03.compare_prediction(0, _walk(8))
    assert "fewer pages" in lesson03.compare_prediction(8, _walk(0))
    assert "from 0 to 8" in lesson03.compare_prediction("eight", _walk(8))
    typed = lesson03.compare_prediction("8", _walk(8))   # issue 31 (sixth walk): read as a number, as in lesson 01
    assert "matched" in typed and "You typed the text '8', read as the number 8" in typed, typed


def test_the_catch_all_hint_shows_the_returned_address_in_hex_as_the_addresses():
    """Issue 31: "for address 0x7f06c95bc123 in a buffer at 0x7f06c95bb000 you returned 7673044992"."""
    said = lesson03.check_physical_address(_with_none(lambda address, start, pfns: (pfns[0] + address % PAGE) * PAGE))
    returned = said.message.split("you returned ")[1].split(".")[0]
    assert returned.startswith("0x") and int(returned, 16) > 0, said.message
    no_frame = lesson03.check_physical_address(lambda address, start, pfns: (pfns[(address - start) // PAGE] or 1)
                                               * PAGE + address % PAGE)
    assert "and you returned 0x" in no_frame.message, no_frame.message


def test_a_raised_error_is_a_sentence_that_ends_before_the_next_step():
    """Issue 31: "name 'HUGE_PAGE_SIZE' is not defined Next step: ..." ran the error into the step."""
    def raises(address, pfns):
        return HUGE_PAGE_SIZE // PAGE   # noqa: F821 (the learner's NameError)

    exercises.reset_tries("03", "could_be_huge")
    exercises.check("03", "could_be_huge", raises)
    second = exercises.check("03", "could_be_huge", raises)
    exercises.reset_tries("03", "could_be_huge")
    assert "is not defined. Next step: " in second.message, second.message
    assert exercises.ended("a question?") == "a question?" and exercises.ended("no stop") == "no stop."


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _physical_cases() -> list[tuple]:
    cases = []
    for row in lesson03._recorded_rows():
        if all(p is not None for p in row["pfns"]):
            start, pfns = int(row["address"], 16), list(row["pfns"])
            cases += [(start + page * lesson03.PAGE + offset, start, pfns)
                      for page, offset in ((0, 0), (1, 0x123), (2, 4095), (len(pfns) - 1, 8))]
    return cases


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("03", "physical_address"): [
        Typical(fixed(lambda address, start, pfns: None if pfns[(address - start) // 4096] is None
                      else pfns[(address - start) // 4096] * 4096),
                ("address % PAGE", "(address - start) // PAGE"), _physical_cases),
        Typical(fixed(lambda address, start, pfns: None if pfns[0] is None else pfns[0] * 4096 + address % 4096),
                ("address % PAGE", "(address - start) // PAGE"), _physical_cases),
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[(address - start) // PAGE])),
                phrase="frame number"),
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[(address - start) // PAGE] * PAGE)),
                phrase="offset inside the page"),
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[0] * PAGE + (address - start))),
                phrase="consecutive"),
        Typical(fixed(lambda address, start, pfns: pfns[address // PAGE] * PAGE + address % PAGE),
                phrase="IndexError"),
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[(address - start) // PAGE] * PAGE + address)),
                phrase="more than the offset"),
        Typical(fixed(_with_none(lambda address, start, pfns:
                                 pfns[(address - start) // PAGE] * PAGE + address % PAGE + 0.0)),
                phrase="integer arithmetic"),
        Typical(fixed(lambda address, start, pfns: pfns[(address - start) // PAGE] * PAGE + address % PAGE),
                phrase="no frame"),
        # issue 31 (third walk): the page index one too high or too low got the general hint, then the answer
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[(address - start) // PAGE + 1] * PAGE
                                 + address % PAGE)),
                ("(address - start) // PAGE",), _physical_cases, phrase="the next page's frame"),
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[(address - start) // PAGE - 1] * PAGE
                                 + address % PAGE)),
                ("(address - start) // PAGE",), _physical_cases, phrase="the previous page's frame"),
        # issue 31 (sixth walk): an index rounded up or to the nearest is right at start: not "one too high"
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[math.ceil((address - start) / PAGE)] * PAGE
                                 + address % PAGE)),
                ("(address - start) // PAGE",), _physical_cases, phrase="rounded up (ceil)"),
        Typical(fixed(_with_none(lambda address, start, pfns: pfns[round((address - start) / PAGE)] * PAGE
                                 + address % PAGE)),
                ("(address - start) // PAGE",), _physical_cases, phrase="to the nearest (round)"),
        # issue 31: hex(...) as cell 4 and the walk's table show it; was told the page, then the answer it gave
        Typical(fixed(_with_none(lambda address, start, pfns:
                                 hex(pfns[(address - start) // PAGE] * PAGE + address % PAGE))),
                phrase="not a string"),
        # issue 31 (fifth walk): a float index raised TypeError, and the learner met only the error
        Typical(fixed(_float_index), ("(address - start) // PAGE",), _physical_cases,
                phrase="what type does `/` give")],
    ("03", "could_be_huge"): [
        Typical(fixed(lambda address, pfns: address % (2 << 20) == 0), ("pfns[0] + i",),
                lambda: [(a, p) for _, a, p in lesson03._huge_cases()]),
        Typical(fixed(_consecutive_either_way), phrase="ASCEND"),
        Typical(fixed(_offset_then_either_way), phrase="ASCEND"),
        Typical(fixed(_ascending_only), phrase="never asks where the frames sit"),
        Typical(fixed(_aligned_only), phrase="check every page"),
        Typical(fixed(_requires_alignment), phrase="middle of a huge page"),
        Typical(fixed(_offsets_only), phrase="same block"),
        Typical(fixed(_first_frame_only), phrase="check every page"),
        Typical(fixed(_bytes_for_pages), phrase="which unit"),
        Typical(fixed(_bytes_in_the_range), phrase="which unit"),
        Typical(fixed(_ignores_the_address), phrase="never looks at the address"),
        Typical(fixed(_strictly_ascending), phrase="ascend but skip"),
        # issue 31 (fifth walk): rules that ignore the frames' order, and a frame number taken as bytes
        Typical(fixed(_sorted_first), ("pfns[0] + i",), phrase="ASCEND"),
        Typical(fixed(_min_and_max), ("pfns[0] + i",), phrase="ASCEND"),
        Typical(fixed(_frame_in_bytes), ("% per_huge",), phrase="counts frames, not bytes"),
        Typical(fixed(_both_in_bytes), ("% per_huge",), phrase="counts frames, not bytes"),
        Typical(fixed(lambda address, pfns: 1), phrase="True or False")],
}


def _second_step(lesson: str, name: str, wrong) -> str:
    exercises.reset_tries(lesson, name)
    exercises.check(lesson, name, wrong)
    step = exercises.check(lesson, name, wrong).message.split("Next step:")[1]
    exercises.reset_tries(lesson, name)
    return step


def test_no_second_step_reads_the_solution_aloud():
    """Issue 31 (third walk): "Next step: the physical address here is 0x1c9476000: the page's position in the buffer
    is (address - start) // PAGE ..." and "add it, the remainder of the address divided by PAGE" dictated the line.
    A second step names neither a key expression of the solution nor the answer's value."""
    for (lesson, name), typical in TYPICAL.items():
        for entry in typical:
            step = _second_step(lesson, name, entry.wrong())
            assert not [k for k in entry.keys if k.replace(" ", "") in step.replace(" ", "")], step
            assert "here is 0x" not in step and "answer here is" not in step, step
    offset = _second_step("03", "physical_address",
                          _with_none(lambda address, start, pfns: pfns[(address - start) // PAGE] * PAGE))
    assert "which operation" in offset and "remainder" not in offset and "%" not in offset, offset


def test_the_prediction_reply_is_translated():
    """Issue 31: "You predicted {n} of {total}." was an unmarked f-string, English in the Chinese edition."""
    from helpers import i18n

    before = i18n.language()
    i18n.use_language("zh")
    try:
        said = lesson03.compare_prediction(8, _walk(8))
    finally:
        i18n.use_language(before)
    assert "You predicted" not in said and "8" in said, said


LESSON03_WRONG = [(name, i) for (lesson, name), typical in TYPICAL.items() for i in range(len(typical))]


@pytest.mark.parametrize("name, i", LESSON03_WRONG, ids=[f"{n}-{i}" for n, i in LESSON03_WRONG])
def test_every_family_of_wrong_answer_is_refused_with_its_own_hint_then_a_smaller_step(name, i):
    """Issue 31 (fifth walk): each family of wrong answer is refused; the first hint names that slip (its phrase);
    the second step differs from it and gives none of the solution's key expressions."""
    entry = TYPICAL[("03", name)][i]
    exercises.reset_tries("03", name)
    try:
        first = exercises.check("03", name, entry.wrong())
        second = exercises.check("03", name, entry.wrong())
    finally:
        exercises.reset_tries("03", name)
    assert first.status == "hint" and second.status == "hint", (first, second)
    assert entry.phrase is None or entry.phrase in first.message, first.message
    step = second.message.split("Next step:")[1]
    assert step.strip() and step.strip() not in first.message, second.message
    assert not [k for k in entry.keys if k.replace(" ", "") in step.replace(" ", "")], step


def test_a_descending_run_is_refused_even_where_its_lowest_frame_sits_at_the_right_offset():
    """Issue 31 (fifth walk): a rule that sorts the frames must meet a descending case it would accept."""
    cases = {label: (address, pfns) for label, address, pfns in lesson03._huge_cases()}
    refused = [label for label, (address, pfns) in cases.items()
               if label.startswith("descending") and not pages.huge_page_possible(address, pfns)]
    assert [label for label in refused if _sorted_first(*cases[label]) and _min_and_max(*cases[label])], refused
