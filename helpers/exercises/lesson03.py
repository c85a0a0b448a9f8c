"""map-pages-on-the-cpu's exercises: an element's physical address from a page walk; the 2 MiB huge-page rule; a
prediction.

The checks use the page walks recorded on the GPU machine (``experiments.reference("pagemap_pinned")``), so they
work without root (which hides frame numbers) and in replay alike.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Callable

from ..i18n import N_, _
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

PAGE = 4096
HUGE_PAGE_SIZE = 2 << 20
PER_HUGE = HUGE_PAGE_SIZE // PAGE


def _recorded_rows() -> list[dict[str, Any]]:
    """The recorded page walks (address, pfns) of measure-what-pinning-buys's buffers, hidden-frame rows included."""
    from .. import experiments

    return [r for r in experiments.reference("pagemap_pinned").rows if "pfns" in r]


def _physical(address: int, start: int, pfns: list[int | None]) -> int | None:
    pfn = pfns[(address - start) // PAGE]
    return None if pfn is None else pfn * PAGE + address % PAGE


def _neighbour_page(got: Any, address: int, page: int, pfns: list[int | None]) -> tuple[int, str] | None:
    """(index, "next" or "previous") where ``got`` is the byte's place in the frame of the page one after or one
    before its own (the page index one too high or too low; -1 wraps round to the last page), else None."""
    if not isinstance(got, Integral):
        return None
    for index, slip in ((page + 1, N_("next")), (page - 1, N_("previous"))):
        if -len(pfns) <= index < len(pfns) and pfns[index] is not None and \
                int(got) == pfns[index] * PAGE + address % PAGE:
            return index % len(pfns), slip
    return None


def _rounds(physical_address: Callable[[int, int, list], Any], start: int, page: int,
            pfns: list[int | None]) -> bool:
    """Whether ``physical_address`` is right at the first byte of ``page`` (where a page index rounded up or to the
    nearest still is) though it gave the next page's frame later in that page: an index one too high is wrong at
    both."""
    address = start + page * PAGE
    try:
        return physical_address(address, start, list(pfns)) == _physical(address, start, pfns)
    except Exception:   # the learner's code: any error means it is not merely rounding
        return False


def check_physical_address(physical_address: Callable[[int, int, list], Any]) -> Feedback:
    """map-pages-on-the-cpu: ``physical_address(address, start, pfns)``: the physical address of a byte, or None
    without a frame."""
    if is_placeholder(physical_address):
        return _not_yet(_("define physical_address(address, start, pfns) returning the physical address of the "
                          "byte at `address`, or None where its page has no frame."))
    rows = _recorded_rows()
    present = [r for r in rows if all(p is not None for p in r["pfns"])]
    missing = [r for r in rows if all(p is None for p in r["pfns"])]
    for row in present:
        start, pfns = int(row["address"], 16), row["pfns"]
        for page, offset in ((0, 0), (1, 0x123), (2, 4095), (5, 6000 % PAGE), (len(pfns) - 1, 8)):
            address = start + page * PAGE + offset
            try:
                got = physical_address(address, start, list(pfns))
            except TypeError as exc:
                if "float" not in str(exc):
                    raise
                return _hint(_("your code raised TypeError: {exc}. A list index must be an int: what type does "
                               "`/` give, even where it divides exactly?").format(exc=exc),
                             _("drop every `/`: which integer operator gives a quotient without a fraction?"))
            except IndexError:
                return _hint(_("IndexError: pfns has one entry per page of the buffer, not one per page of the "
                               "whole address space. Which page of the buffer holds the byte: the first, the "
                               "second, ...?"),
                             _("pfns[0] is the frame of the page at start, not of virtual page 0: how many pages "
                               "after start does the byte's page lie?"))
            forgot = returned_none(physical_address, got)
            if forgot is not None:
                return forgot
            if is_placeholder(got):
                return _not_yet(_("physical_address returns `...`: replace it with the byte's physical address."))
            want = _physical(address, start, pfns)
            if isinstance(got, str):
                return _hint(_("return an int, not a string: you returned {got!r}, the text hex() makes for "
                               "reading. Can the program compute with text, or compare it with an address?").format(
                                 got=got),
                             _("return the number itself, without hex(); wrap the call in hex() only where you "
                               "want to read it."))
            if isinstance(got, float):
                return _hint(_("you returned a float: a float has 53 bits, too few for an exact address. Which "
                               "operations keep integer arithmetic exact?"),
                             _("drop every `/`: which integer operators give a quotient and a remainder?"))
            if isinstance(got, Integral) and int(got) == want:
                continue
            pfn = pfns[page]
            if got == pfn:
                return _hint(_("that is the frame number (PFN), not an address. Where in memory does frame number "
                               "f start, and where in it is the byte?"),
                             _("a frame is PAGE bytes long: at which byte does frame 0 start, frame 1, frame f? "
                               "Then, where in that frame is the byte?"))
            if got == pfn * PAGE and offset:
                return _hint(_("the offset inside the page is missing: you returned the start of the frame. What "
                               "does translation keep of the virtual address?"),
                             _("which operation on the address gives a position inside a PAGE-byte page?"))
            if got == pfns[0] * PAGE + (address - start):
                return _hint(_("you assumed the buffer's frames are consecutive (first frame + distance). Do "
                               "consecutive virtual pages sit in consecutive frames (section 2)?"),
                             _("they need not: which entry of pfns belongs to the page that holds the byte?"))
            if got == pfn * PAGE + address or got == pfn * PAGE + (address - start):
                return _hint(_("you added more than the offset inside the page. What is the byte's position in its "
                               "own page?"),
                             _("a byte's position in its own page is below PAGE: which operation on the address "
                               "gives a number below PAGE?"))
            shown = f"{int(got):#x}" if isinstance(got, Integral) else repr(got)   # in hex, as the addresses
            slip = _neighbour_page(got, address, page, pfns)
            if slip is not None and slip[1] == "next" and _rounds(physical_address, start, page, pfns):
                return _hint(_("for address {address:#x}, {offset} bytes into page {page} of the buffer, you "
                               "returned an address in the next page's frame, yet for the first byte of page {page} "
                               "you return its own frame: your page index is rounded up (ceil) or to the nearest "
                               "(round), so it moves to the next page partway through a page. Which way must it "
                               "round for every byte of a page to stay on that page?").format(
                                 address=address, offset=offset, page=page),
                             _("try it at the first and the last byte of page 0 (start and start + PAGE - 1): "
                               "both must give index 0. Which integer operator never rounds up?"))
            if slip is not None:
                return _hint(_("for address {address:#x} you returned {got}: that is in frame {frame:#x}, the {slip} "
                               "page's frame, not the frame of the page that holds the byte. Which page of the "
                               "buffer holds the byte at start itself: page 0 or page 1?").format(
                                 address=address, got=shown, frame=pfns[slip[0]], slip=_(slip[1])),
                             _("take a byte at start + 10: how many whole pages lie between start and it? That "
                               "count is its page's position in pfns."))
            return _hint(_("for address {address:#x} in a buffer at {start:#x} you returned {got}. Which page of "
                           "the buffer holds the byte, which frame holds that page, and where in the frame is the "
                           "byte?").format(address=address, start=start, got=shown),
                         _("work this case by hand: how many whole pages lie between start and the address? That "
                           "page's frame is in pfns; then place the byte inside the frame."))
    for row in missing:
        start = int(row["address"], 16)
        try:
            got = physical_address(start + 5, start, list(row["pfns"]))
        except TypeError:
            got = TypeError
        if got is not None:
            shown = f"{int(got):#x}" if isinstance(got, Integral) and got is not TypeError else repr(got)
            return _hint(_("a page that was never touched has no frame: the exercise gives it the pfn None")
                         + (_(" and your code raised TypeError") if got is TypeError
                            else _(" and you returned {got}").format(got=shown))
                         + _(". What physical address does a byte without a frame have?"),
                         _("before computing, look at the page's entry in pfns: what must a page without a frame "
                           "give?"))
    example = present[0]
    start = int(example["address"], 16)
    address = start + 1500 * 4
    return _correct(_("a page table maps whole pages and the offset passes through: element 1500 of the recorded "
                      "'{allocation}' buffer (virtual {address:#x}) is at physical {physical:#x}, from the frame "
                      "of its own page.").format(
                        allocation=example['allocation'], address=address, physical=_physical(address, start, example['pfns'])))


def _huge(address: int, pfns: list[int]) -> bool:
    from ..memory import pages

    return pages.huge_page_possible(address, pfns)


BASE = 0x7F4478800000                          # a 2 MiB-aligned address
BLOCK = 0x103C00                               # a 2 MiB-aligned frame block (a multiple of 512)


def _run(first: int, n: int = 16) -> list[int]:
    """Consecutive ascending frames, the first at place ``first`` of its 2 MiB block."""
    return [BLOCK + first + i for i in range(n)]


def _huge_cases() -> list[tuple[str, int, list[int]]]:
    block = BLOCK
    cases = [
        (N_("aligned, ascending from the block's start"), BASE, _run(0)),
        # before the descending case, so a rule that checks only the first frame meets its own hint (issue 31)
        (N_("aligned address, scattered frames"), BASE, [block, block + 40, block + 3, block + 900]),
        # the first frame at the first page's offset (15), so only the direction can refuse it (issue 31)
        (N_("descending consecutive frames"), BASE + 15 * PAGE, [block + 15 - i for i in range(16)]),
        # the lowest frame at the first page's offset: a rule that sorts the frames, or takes min and max, accepts
        # it (issue 31, fifth walk)
        (N_("descending consecutive frames, the lowest at the first page's offset"), BASE,
         [block + 15 - i for i in range(16)]),
        (N_("ascending consecutive frames, at the wrong offset in their block"), BASE, _run(7)),
        (N_("ascending with one break"), BASE, [block + i for i in range(8)] + [block + 100 + i for i in range(8)]),
        # every frame at its page's offset, the second in the next block: offsets alone accept it (issue 31)
        (N_("right offsets, frames in different 2 MiB blocks"), BASE, [block, block + PER_HUGE + 1]),
        (N_("pairs of consecutive frames"), BASE + 2 * PAGE, [block + 2, block + 3, block + 700, block + 701]),
        (N_("starts at page 5 of its 2 MiB range, frames at 5 of their block"), BASE + 5 * PAGE, _run(5)),
    ]
    for row in _recorded_rows():
        if all(p is not None for p in row["pfns"]):
            cases.append((f"recorded {row['allocation']}", int(row["address"], 16), list(row["pfns"])))
    return cases


def _says(rule: Callable[[int, list[int]], Any], address: int, pfns: list[int]) -> bool | None:
    """The learner's verdict on a probe the cases do not hold, or None where it raises."""
    try:
        return bool(rule(address, list(pfns)))
    except Exception:  # noqa: BLE001 (a probe only tells slips apart; the cases report errors)
        return None


def _accepted_bad(rule: Callable[[int, list[int]], Any], label: str) -> Feedback:
    """The hint for a rule that accepts frames which rule a huge page out: which check it skips."""
    if label.startswith("descending"):
        return _hint(_("a descending run of frames is one contiguous piece of memory, but does a 2 MiB entry "
                       "map its pages in either order? The paragraph \"What would a 2 MiB huge page need?\" (above "
                       "the pinned buffer's figure) says where page i of the range lands; do frames that ASCEND "
                       "with the pages, or frames in any order, fit it?"),
                     _("if page 0 sits in frame f, in which frames must pages 1 and 2 sit? Compare that with "
                       "the descending frames."))
    if label.startswith("ascending consecutive frames, at the wrong offset"):
        return _hint(_("for '{label}' your rule never asks where the frames sit in their 2 MiB block. Page i of "
                       "a 2 MiB range lands in frame i of its block: so where must the first frame sit, given "
                       "where the buffer's first page sits in its range?").format(label=_(label)),
                     _("a 2 MiB block holds {PER_HUGE} frames and a 2 MiB range {PER_HUGE} virtual pages: find "
                       "where the first frame sits in its block, and where the first page sits in its range.").format(
                         PER_HUGE=PER_HUGE))
    if label.startswith("right offsets"):
        return _hint(_("for '{label}' each frame sits at its page's offset in a 2 MiB block, but not in the "
                       "same block. One 2 MiB entry maps one block: besides the offsets, what must hold "
                       "between neighbouring frames?").format(label=_(label)),
                     _("inside one 2 MiB block, how far apart are the frames of two neighbouring pages? Check "
                       "every pair."))
    skipping, scattered = [BLOCK + 2 * i for i in range(16)], [BLOCK, BLOCK + 40, BLOCK + 3]
    if _says(rule, BASE, skipping) and not _says(rule, BASE, scattered):
        return _hint(_("your rule accepts frames that ascend but skip numbers ('{label}', and frames two apart). "
                       "Inside one 2 MiB block, how far from the one before must each frame be?").format(
                         label=_(label)),
                     _("ascending is not enough: how large may the step from one frame to the next be?"))
    return _hint(_("for '{label}' you said a huge page is possible, but the frames rule it out. Did you "
                   "check every page, not only the alignment or the first frame?").format(label=_(label)),
                 _("work that case by hand: if page 0 sits in frame f, where must pages 1, 2, 3 sit, and where "
                   "do they?"))


def _refused_good(rule: Callable[[int, list[int]], Any]) -> Feedback | None:
    """The hint for a rule that refuses a possible huge page, told apart by moving only the address or only the
    frames: the address's bytes counted as pages, the address never used, a 2 MiB-aligned address
    required, or a frame number counted as bytes."""
    at = lambda page, first: _says(rule, BASE + page * PAGE, _run(first))   # noqa: E731
    if _says(rule, BASE + 5, _run(5)) and not at(5, 5):
        return _hint(_("your rule accepts a buffer 5 bytes into its 2 MiB range whose first frame is frame 5 of "
                       "its block, and refuses one 5 pages in. A frame number counts pages: in which unit does "
                       "your rule count the address?"),
                     _("turn the address into a page number first, as section 1 split it, then take that page's "
                       "place in its 2 MiB range."))
    if at(0, 0) and at(5, 0) and not at(5, 5):
        return _hint(_("your rule never looks at the address: with the same frames it answers alike for a buffer "
                       "at the start of its 2 MiB range and one 5 pages in. The first frame's place in its block "
                       "must match the first page's place in its range: which page of its range is the first?"),
                     _("find the first page's place among the {PER_HUGE} pages of its 2 MiB range from the address "
                       "(its page number, as section 1 split it), and compare it with the first frame's place in "
                       "its block.").format(PER_HUGE=PER_HUGE))
    if at(0, 0) and not at(5, 0) and not at(5, 5):
        return _hint(_("a buffer may start in the middle of a huge page: does the address itself have to be 2 "
                       "MiB-aligned, or only the pages' positions in their range and the frames' in their "
                       "block to agree?"),
                     _("drop the alignment test: a buffer 5 pages into its range may sit in a block whose first "
                       "frame is 5 frames in. What must your rule compare instead?"))
    low = (_says(rule, BASE + 5 * PAGE, [5 + i for i in range(16)])                 # frames 5, 6, ... of memory
           or _says(rule, BASE + 5 * PAGE, [5 * PAGE + i for i in range(16)]))     # frame number = byte offset
    if low and not at(5, 5):
        return _hint(_("your rule refuses frames that start at the right place in a 2 MiB block high in "
                       "memory, and accepts runs only near frame 0. A frame number counts frames, not bytes: in "
                       "which unit does your rule take a frame's place in its 2 MiB block?"),
                     _("a 2 MiB block holds {PER_HUGE} frames: count a frame's place in its block in frames, as a "
                       "page's place in its range is counted in pages.").format(PER_HUGE=PER_HUGE))
    return None


def check_could_be_huge(could_be_huge: Callable[[int, list[int]], Any]) -> Feedback:
    """map-pages-on-the-cpu: ``could_be_huge(address, pfns)``: False when the frames rule out one 2 MiB page, else
    True. A wrong rule gets the hint for its own slip, found by probing it (issue 31)."""
    if is_placeholder(could_be_huge):
        return _not_yet(_("define could_be_huge(address, pfns) returning False when these frames rule out one 2 "
                          "MiB page behind the buffer, else True."))
    for label, address, pfns in _huge_cases():
        got = could_be_huge(address, list(pfns))
        forgot = returned_none(could_be_huge, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("could_be_huge returns `...`: return True or False."))
        if not isinstance(got, bool) and type(got).__name__ != "bool_":
            return _hint(_("return True or False; for the case '{label}' you returned {got!r}.").format(
                             label=_(label), got=got),
                         _("a comparison (==, %) or all(...) gives a bool: return that, or wrap the value in "
                           "bool(...)."))
        want = _huge(address, pfns)
        if bool(got) == want:
            continue
        if got:
            return _accepted_bad(could_be_huge, label)
        found = _refused_good(could_be_huge)
        if found is not None:
            return found
        return _hint(_("for '{label}' (address {address:#x}, frames {value} ...) you returned {got}. Which of the "
                       "two conditions (frames ascending by one, the same offset in the 2 MiB block) does this "
                       "case meet?").format(label=_(label), address=address, value=[hex(p) for p in pfns[:4]], got=got),
                     _("work the case by hand: first the first frame's place in its block against the first "
                       "page's place in its range, then each frame against the one before."))
    verdicts = "; ".join(f"{row['allocation']}: " + (_("not ruled out") if could_be_huge(int(row['address'], 16),
                                                                                      row['pfns']) else _("ruled out"))
                         for row in _recorded_rows() if all(p is not None for p in row["pfns"]))
    return _correct(_("a 2 MiB entry maps an aligned range onto an aligned frame block in order, so frames must "
                      "ascend one by one from the same offset. On the recorded buffers your rule says: {verdicts}.").format(
                        verdicts=verdicts))


CHECKS = {"physical_address": check_physical_address, "could_be_huge": check_could_be_huge}


def namespace() -> dict[str, Any]:
    """Names map-pages-on-the-cpu's exercise cells use besides NumPy: only names the lesson defines (``PAGE``, and
    ``zc.pages`` of the face; tests/test_exercise_stubs.py holds the solutions to the notebook's own names)."""
    from types import SimpleNamespace

    from ..memory import pages

    return {"PAGE": PAGE, "zc": SimpleNamespace(pages=pages)}


def compare_prediction(predicted: Any, read_only: list | None, total: int = 8) -> str:
    """map-pages-on-the-cpu's prediction: how many of ``total`` untouched private pages are present after only
    reading them.

    ``read_only`` is the page walk measured after reading (``pages.frames_of``), or None where the cell that
    measures it did not run (no /proc). Returns a paragraph for the notebook to print.
    """
    measured = None if read_only is None else sum(bool(f.present) for f in read_only)
    if measured is None:
        seen = _("This machine has no /proc/self/pagemap, so section 3 measured nothing to compare with.")
    else:
        seen = _("Measured: after reading, {measured} of {total} pages were present.").format(
                   measured=measured, total=total)
    if is_placeholder(predicted):
        return _("You made no prediction (predicted_present_after_reading is still `...`). {seen}").format(seen=seen)
    typed = ""
    if isinstance(predicted, str):   # '8' is read as 8, as pin-host-memory reads it (issue 31)
        try:
            given, predicted = predicted, float(predicted)
            typed = _(" You typed the text {given}, read as the number {guess} (a number needs no quotes).").format(
                given=repr(given), guess=f"{predicted:g}")
        except ValueError:
            pass
    if not isinstance(predicted, Real) or isinstance(predicted, bool) or not 0 <= predicted <= total:
        return _("Predict a number of pages from 0 to {total}; you wrote {predicted!r}. {seen}").format(
                   total=total, predicted=predicted, seen=seen)
    head = _("You predicted {predicted:g} of {total}. {seen}").format(predicted=predicted, total=total,
                                                                     seen=(typed.strip() + " " + seen).strip())
    if measured is None:
        return head
    if predicted == measured:
        return head + _(" Your prediction matched.")
    if predicted < measured:
        return (head + _(" Reading an untouched page is a page fault too: the OS kernel answers it by mapping a "
                         "frame read-only (where frames are visible, section 3 shows it is one shared frame, the "
                         "zero page), so the page becomes present without any write. The first write then gives it "
                         "a private frame (copy-on-write)."))
    return (head + _(" This OS kernel mapped fewer pages on reading than you expected: the read faults did not "
                     "give those pages a frame, and only the writes did (the 'after writing' line)."))
