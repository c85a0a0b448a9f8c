"""pin-host-memory's exercises: how many pages (so frames, so first-touch faults) a buffer spans; decode a pagemap
entry; and its prediction: how many untouched pages have a frame right after ``mlock``.

Both checks test the learner's function on fixed cases, then, where this system has a Linux ``/proc``, against what
the OS kernel itself reports for this process (``helpers.pages.frames``), in replay and live alike: neither needs a GPU.
"""

from __future__ import annotations

import struct
from numbers import Integral
from typing import Any, Callable

from ..i18n import N_, _
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

# (address, nbytes, page_size): aligned, unaligned, straddling, one byte, the last byte of a page, larger pages.
SPAN_CASES = ((0x7F0000000000, 65536, 4096), (0x7F0000000000, 1, 4096), (0x7F0000000FFF, 1, 4096),
              (0x7F0000000FFF, 2, 4096), (0x7F0000000800, 4096, 4096), (0x7F0000001000, 4097, 4096),
              (0x7F0000000010, 65536, 4096), (0x7F0000000100, 100, 4096), (0x7F0000010000, 65536, 65536),
              (0x7F0000008000, 65536, 65536), (0x7F00001FF000, 8192, 2**21))


def spanned(address: int, nbytes: int, page_size: int) -> int:
    """The number of pages ``[address, address + nbytes)`` touches (nbytes >= 1), for the check."""
    return (address + nbytes - 1) // page_size - address // page_size + 1


def _measured_spans() -> list[tuple[int, int, int, int]]:
    """(address, nbytes, page size, pages the OS kernel lists) for slices of a fresh page-aligned buffer; [] without /proc."""
    from ..memory import pages

    if not pages.proc_available():
        return []
    import numpy as np

    buffer = pages.page_aligned_empty(8 * pages.PAGE_SIZE, np.uint8)
    base, page = buffer.ctypes.data, pages.PAGE_SIZE
    slices = ((0, 8 * page), (100, page), (page - 1, 2), (3 * page + 5, 2 * page), (10, 1))
    return [(base + start, n, page, len(pages.frames(base + start, n))) for start, n in slices]


def _answers(pages_spanned: Callable[[int, int, int], int]) -> list[int | None]:
    """The learner's answer on every case (None where it raised or was no int), to name the rule it follows."""
    found: list[int | None] = []
    for case in SPAN_CASES:
        try:
            found.append(int(pages_spanned(*case)))
        except Exception:  # noqa: BLE001 - any failure simply matches no rule
            found.append(None)
    return found


# The typical wrong rules, each with its own hint: a learner's function is matched on every case before one case
# decides, since two rules can give the same number on one case ((address + nbytes) // size - address // size and
# nbytes // size both give 0 for one byte at a page boundary).
RULES: tuple[tuple[str, Callable[[int, int, int], int]], ...] = (
    ("page_size", lambda a, n, s: spanned(a, n, 4096)),
    ("one over", lambda a, n, s: (a + n) // s - a // s + 1),
    ("one short", lambda a, n, s: (a + n - 1) // s - a // s),
    ("two slips", lambda a, n, s: (a + n) // s - a // s),
    ("rounds down", lambda a, n, s: n // s),
    ("rounds up", lambda a, n, s: -(-n // s)),
)
SIZES = tuple(2**k for k in range(9, 31))   # a page size of the learner's own, used in place of page_size


def _own_size(answers: list[int | None]) -> int | None:
    """The one size, other than each case's page_size, that gives all of the learner's ``answers``, else None."""
    return next((size for size in SIZES if answers == [spanned(a, n, size) for a, n, _s in SPAN_CASES]), None)


def _ignores_start(pages_spanned: Callable[[int, int, int], int]) -> bool:
    """Whether the learner's count never changes when the same bytes start elsewhere in a page (``nbytes //
    page_size + 1`` and the like): then it ignores where the buffer starts."""
    try:
        return all(int(pages_spanned(a - a % s + shift, n, s)) == int(pages_spanned(a, n, s))
                   for a, n, s in SPAN_CASES for shift in (0, 1, s - 1))
    except Exception:  # noqa: BLE001 - a function that fails somewhere follows no rule
        return False


def _start_matters(pages_spanned: Callable[[int, int, int], int]) -> tuple[int, int, int, int, int] | None:
    """The first case the learner gets wrong where the start decides the count (the same bytes from a page boundary
    touch fewer pages), as (address, nbytes, page size, got, want): the case that shows a count ignoring the start."""
    for (address, nbytes, size), got in zip(SPAN_CASES, _answers(pages_spanned)):
        want = spanned(address, nbytes, size)
        if got is not None and got != want and want != spanned(address - address % size, nbytes, size):
            return address, nbytes, size, got, want
    return None


def _rule(pages_spanned: Callable[[int, int, int], int], address: int, nbytes: int, size: int, got: int,
          want: int) -> str | None:
    """The typical wrong rule the learner's function follows on every case, else the first one this case fits."""
    answers = _answers(pages_spanned)
    for name, rule in RULES:
        if answers == [rule(*case) for case in SPAN_CASES]:
            return name
    if _own_size(answers) is not None:
        return "own size"
    if _ignores_start(pages_spanned):
        return "ignores the start"
    if size != 4096 and got == spanned(address, nbytes, 4096):
        return "page_size"
    if got == want - 1:
        return "one short"
    if got == want + 1:
        return "one over"
    return {nbytes // size: "rounds down", -(-nbytes // size): "rounds up"}.get(got)


_OWN_SIZE_STEP = N_("look through your function for a number (such as 4096) or a shift (such as `>> 12`): each "
                    "is a page size of its own. Which argument carries the case's page size?")
# The step of every count from the size alone (rounded down, rounded up, + 1): smaller than the first hint, which
# shows a case, and no case of its own to work again: how one address gives its page.
_PAGE_OF_STEP = N_("a byte at address A lies in page A // page_size: with 4096-byte pages, byte 4095 in page 0 and "
                   "byte 4096 in page 1. Which pages hold the first and the last byte of the case above?")


def _span_hint(pages_spanned: Callable[[int, int, int], int], address: int, nbytes: int, size: int, got: int,
               want: int) -> Feedback:
    """pin-host-memory: the hint for the rule a wrong ``pages_spanned`` follows, on its first wrong case."""
    where = _("address {address:#x}, nbytes = {nbytes}, page_size = {size}: you returned {got}").format(
        address=address, nbytes=nbytes, size=size, got=got)
    rule = _rule(pages_spanned, address, nbytes, size, got, want)
    if rule == "page_size":
        return _hint(_("right for 4 KiB pages, but you ignored page_size ({where}). Other systems use larger "
                       "pages: where does your code still assume 4096?").format(where=where),
                     _(_OWN_SIZE_STEP))
    if rule == "own size":
        own = _own_size(_answers(pages_spanned))
        return _hint(_("{where}. Your count is right on every case for pages of {own} bytes, whatever page_size the "
                       "case passes. Where does your code use a page size of its own?").format(
                           where=where, own=own),
                     _(_OWN_SIZE_STEP))
    if rule == "one short":
        return _hint(_("{where}. That is an off-by-one, one short (one page fewer than the bytes touch). When the "
                       "first and the last byte share a page, what does your code give?").format(where=where),
                     _("count pages 3, 4 and 5 on your fingers, then work out 5 - 3: what does the difference "
                       "leave out?"))
    if rule == "one over":
        return _hint(_("{where}. That is an off-by-one, one over (one page more than the bytes touch). Which byte "
                       "is the buffer's last, and which page does your code take for it?").format(where=where),
                     _("take a 1-byte buffer at address 0: at which address is its last byte, and which address "
                       "does your code use as the last?"))
    if rule == "two slips":
        return _hint(_("{where}. That is one page short. Your count is right only where the buffer ends exactly "
                       "on a page boundary: it has two off-by-one slips, and there they cancel out. Which address does the last byte have, and do you "
                       "count both the first and the last page?").format(where=where),
                     _("fix one slip at a time: at which address is a 1-byte buffer's last byte? Then, how many "
                       "pages lie from page 3 to page 5, and what is 5 - 3?"))
    if rule == "ignores the start":
        shown = _start_matters(pages_spanned)
        if shown is not None:
            where = _("address {address:#x}, nbytes = {nbytes}, page_size = {size}: you returned {got}").format(
                address=shown[0], nbytes=shown[1], size=shown[2], got=shown[3])
        return _hint(_("{where}. Your count uses nbytes and page_size only, so it ignores where the buffer starts: "
                       "the same bytes can touch one page more when they start late in a page. Which page holds "
                       "the first byte, and which the last?").format(where=where),
                     _(_PAGE_OF_STEP))
    if rule == "rounds down":
        return _hint(_("{where}. nbytes // page_size rounds down and ignores where the buffer starts: a page is "
                       "touched even if only one of its bytes is used. Which page holds the first byte, and which "
                       "the last?").format(where=where),
                     _(_PAGE_OF_STEP))
    if rule == "rounds up":
        return _hint(_("{where}. Rounding nbytes up is right only for a buffer that starts on a page boundary: "
                       "one that starts inside a page can spill into one more. What decides the pages touched, "
                       "the size alone or where the first and the last byte fall?").format(where=where),
                     _(_PAGE_OF_STEP))
    return _hint(_("{where}. Which page holds the buffer's first byte, which its last, and how many pages lie "
                   "from one to the other, both included?").format(where=where),
                 _("work this case by hand: the page of the first byte, the address and page of the last byte, "
                   "then the pages from one to the other, both included."))


def check_pages_spanned(pages_spanned: Callable[[int, int, int], int]) -> Feedback:
    """pin-host-memory: ``pages_spanned(address, nbytes, page_size)`` counts the pages a buffer touches."""
    if is_placeholder(pages_spanned):
        return _not_yet(_("define pages_spanned(address, nbytes, page_size) returning how many pages the bytes "
                          "[address, address + nbytes) touch."))
    for address, nbytes, size in SPAN_CASES:
        got = pages_spanned(address, nbytes, size)
        forgot = returned_none(pages_spanned, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("pages_spanned returns `...`: replace it with the number of pages."))
        want = spanned(address, nbytes, size)
        if isinstance(got, float):
            return _hint(_("you returned a float: a count of pages is a whole number, and a float has only 53 bits, "
                           "too few for 64-bit addresses. Which operator divides integers and stays an integer, `/` "
                           "or `//`?"),
                         _("in a new cell, compare 2**53 + 1 with float(2**53 + 1): which one lost its last "
                           "bit? Then find where your count first becomes a float."))
        if not isinstance(got, int) and not hasattr(got, "__index__"):
            return _hint(_("return an int; for address {address:#x} you returned {got}.").format(
                address=address, got=repr(got)),
                         _("the answer is a count of pages: compute it with integers and return that number alone."))
        got = int(got)
        if got == want:
            continue
        return _span_hint(pages_spanned, address, nbytes, size, got, want)
    extra = ""
    measured = _measured_spans()
    if measured:
        agree = sum(int(pages_spanned(a, n, p)) == listed for a, n, p, listed in measured)
        if agree != len(measured):
            return _hint(_("your function disagrees with this process's own page table on {wrong} of {n} slices "
                           "of a fresh buffer (zc.pages.frames). Which page size does this system use, and which "
                           "does your function use?").format(wrong=len(measured) - agree, n=len(measured)),
                         _("the check passes zc.pages.PAGE_SIZE as page_size: use the argument, not a size of your "
                           "own."))
        extra = _(" It agrees with this process's page table (/proc/self/pagemap) on {agree} slices of a fresh "
                  "buffer.").format(agree=agree)
    return _correct(_("a buffer needs a frame for every page it touches, partial pages included, so that is how many "
                      "page faults its first touch takes and how many frames pinning it holds.") + extra)


PRESENT, SWAPPED, EXCLUSIVE, SOFT_DIRTY, FILE_SHARED = 1 << 63, 1 << 62, 1 << 56, 1 << 55, 1 << 61
PFN_MASK = (1 << 55) - 1
ENTRY_CASES = (PRESENT | 0x1234, PRESENT | SOFT_DIRTY | EXCLUSIVE | 0x8F00A, PRESENT | FILE_SHARED | 0x42,
               PRESENT | (1 << 54) | 7, 0, SWAPPED | (0x3 << 5) | 0x2,  # swapped: the low bits are a swap slot
               PRESENT, PRESENT | SOFT_DIRTY | PFN_MASK)


def decoded(entry: int) -> tuple[bool, int]:
    """(present, PFN) of a pagemap entry as the documentation defines them, for the check."""
    return bool(entry >> 63 & 1), entry & PFN_MASK


def _own_entries() -> list[tuple[int, bool, int | None]]:
    """(raw entry, present, pfn or None) for a few pages of this process; [] without /proc."""
    from ..memory import pages

    if not pages.proc_available():
        return []
    import numpy as np

    buffer = pages.page_aligned_empty(4 * pages.PAGE_SIZE, np.uint8)
    buffer[: 2 * pages.PAGE_SIZE] = 1          # two pages touched, two left without frames
    first = buffer.ctypes.data // pages.PAGE_SIZE
    with open(pages.proc_path("self", "pagemap"), "rb") as pagemap:
        pagemap.seek(first * 8)
        raw = [e for (e,) in struct.iter_unpack("<Q", pagemap.read(4 * 8))]
    return [(entry, frame.present, frame.pfn) for entry, frame in zip(raw, pages.frames(buffer.ctypes.data, buffer.nbytes))]


def _shown(value: Any, small: int = 10) -> str:
    """``value`` as a hint shows it: integers from ``small`` up in hex, as the entries are written, inside a tuple or
    list too; anything else as Python writes it."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_shown(v, small) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, Integral) and not isinstance(value, bool) and abs(int(value)) >= small:
        return f"{int(value):#x}"
    return repr(value)


# How a wrong present flag was read, each tried on every case before one case decides (a single entry cannot tell
# bit 62 from bit 0 or from "any bit set"): (name, the flag that reading gives).
READINGS: tuple[tuple[str, Callable[[int], bool]], ...] = (
    ("bit 62", lambda e: bool(e >> 62 & 1)),
    ("bit 0", lambda e: bool(e & 1)),
    ("any bit", lambda e: e != 0),
    ("never", lambda e: False),
    ("inverted", lambda e: not e >> 63 & 1),
)


LOW_BITS_ONLY = 0x1234     # a probe: no flag bit set, so a present flag true here reads more than bits 62-63
ALL_ONES = (1 << 64) - 1   # a probe: every bit set, so a PFN read from it is the learner's mask itself


def _mask(decode_entry: Callable[[int], Any]) -> int | None:
    """The mask ``decode_entry`` keeps its PFN with, read from the all-ones probe and confirmed on every present
    case (``entry & 0xFFFFFFFFFFFF`` gives 48 ones), else None: a single case cannot tell widths apart."""
    try:
        mask = decode_entry(ALL_ONES)[1]
        if not isinstance(mask, int) or isinstance(mask, bool) or not 0 < mask < ALL_ONES:
            return None
        fits = all(decode_entry(e)[1] == e & mask for e in ENTRY_CASES if decoded(e)[0])
    except Exception:  # noqa: BLE001 - a function that fails somewhere keeps no mask
        return None
    return mask if fits else None


def _bits(low: int, high: int) -> str:
    """Bits ``low`` to ``high`` as a hint names them."""
    return _("bit {low}").format(low=low) if low == high else _("bits {low}-{high}").format(low=low, high=high)


_WIDTH_STEP = N_("bits 0 to 3 are 4 bits, and (1 << 4) - 1, that is 0b1111 or 0xF, has 4 ones. How many bits lie "
                 "from bit 0 to bit 54, and how many ones has your mask?")


def _mask_hint(entry: int, mask: int) -> Feedback | None:
    """pin-host-memory: the hint for a PFN kept with a mask of the wrong width, or with a single bit, naming the
    bits the learner's mask actually keeps; None for any other mask."""
    width = mask.bit_length()
    if mask == 1 << (width - 1) and width > 1:   # 1 << 55: one bit set, bit 55
        return _hint(_("for {entry:#018x} your mask has a single bit set, bit {bit} (that is what 1 << {bit} is). "
                       "How do you write a number whose lowest 55 bits are all ones?").format(entry=entry,
                                                                                           bit=width - 1),
                     _("1 << {bit} is a one followed by {bit} zeros in binary: what is binary 1000 minus "
                       "1?").format(bit=width - 1))
    if mask != (1 << width) - 1 or width == 55:
        return None
    if width < 55:
        return _hint(_("for {entry:#018x} your mask keeps {bits}: the PFN ends at bit 54, {missing} higher, so "
                       "your PFN lost its top bits. Which mask keeps bits 0 to 54 and none above?").format(
                           entry=entry, bits=_bits(0, width - 1), missing=55 - width),
                     _(_WIDTH_STEP))
    return _hint(_("for {entry:#018x} your mask keeps {bits}: the PFN ends at bit 54, {extra} lower, and from bit "
                   "55 up the entry holds flags (bit 55 is soft-dirty). Which mask keeps bits 0 to 54 and "
                   "none above?").format(entry=entry, bits=_bits(0, width - 1), extra=width - 55),
                 _(_WIDTH_STEP))


def _reading(decode_entry: Callable[[int], Any]) -> str | None:
    """The reading of the present flag that ``decode_entry`` follows on every case, else None."""
    try:
        flags = [bool(decode_entry(e)[0]) for e in ENTRY_CASES]
    except Exception:  # noqa: BLE001 - a function that fails somewhere follows no reading
        return None
    return next((name for name, read in READINGS if flags == [read(e) for e in ENTRY_CASES]), None)


def _true_on(decode_entry: Callable[[int], Any], entry: int) -> bool:
    """Whether ``decode_entry``'s present flag is truthy for ``entry`` (False where it raises)."""
    try:
        return bool(decode_entry(entry)[0])
    except Exception:  # noqa: BLE001 - a function that fails on the probe reads no more than the cases show
        return False


def _flags_right(decode_entry: Callable[[int], Any]) -> bool:
    """Whether ``decode_entry``'s present flag is truthy exactly where it should be on every case (a wrong reading
    gets its own hint before the flag's type does)."""
    try:
        return all(bool(decode_entry(e)[0]) == decoded(e)[0] for e in ENTRY_CASES)
    except Exception:  # noqa: BLE001 - a function that fails somewhere is judged case by case
        return False


def _present_hint(decode_entry: Callable[[int], Any], entry: int, present: Any, want: bool) -> Feedback:
    """pin-host-memory: the hint for a wrong present flag, naming the bit the learner's function actually read."""
    reading = _reading(decode_entry)
    shown = _shown(present)
    if reading == "bit 62":
        return _hint(_("for {entry:#018x} you read bit 62, *swapped*. Which bit does the pagemap layout above "
                       "the exercise give *present*?").format(entry=entry),
                     _("bits are numbered from 0, the lowest: which number has the highest of 64 bits? "
                       "Compare it with the bit the layout calls *present*."))
    if reading == "bit 0":
        return _hint(_("for {entry:#018x} your present flag is {present}: you read bit 0, the lowest bit of the "
                       "PFN. Which bit is *present* in the layout above the exercise?").format(entry=entry,
                                                                                               present=shown),
                     _("`& 1` keeps bit 0 alone: which operator moves bit 63 down to bit 0 first?"))
    if reading == "any bit" and not _true_on(decode_entry, LOW_BITS_ONLY):
        return _hint(_("for {entry:#018x} your present flag is {present}, yet bit 63 is 0: your flag is true "
                       "where bit 62 or bit 63 is set (a shift by 62 keeps both), and bit 62 is *swapped*. How do "
                       "you read bit 63 alone?").format(entry=entry, present=shown),
                     _("after a shift, which mask keeps only the lowest bit of what is left?"))
    if reading == "any bit":
        return _hint(_("for {entry:#018x} your present flag is {present}, yet bit 63 is 0: your flag is true "
                       "whenever any bit of the entry is set. With `bin(entry)`, note that bin() drops leading "
                       "zeros, so its first digit is the highest bit set, not bit 63. Which single bit is "
                       "*present*, and how do you read it alone?").format(entry=entry, present=shown),
                     _("f\"{e:064b}\" keeps all 64 digits, bit 63 first; or move bit 63 down to bit 0 with a "
                       "shift and keep bit 0 alone with a mask."))
    if reading == "never":
        return _hint(_("your present flag is false for every entry, even for {entry:#018x}, whose bit 63 is set. "
                       "How far must bit 63 move to become bit 0: does your shift move it out of the number?").format(
                           entry=entry),
                     _("a shift by 64 drops all 64 bits: bit 1 reaches bit 0 with a shift by 1; with which "
                       "shift does bit 63?"))
    if reading == "inverted":
        return _hint(_("your present flag is the opposite of bit 63 on every entry ({present} for {entry:#018x}). "
                       "Does a set bit 63 mean a frame is there, or that none is?").format(entry=entry,
                                                                                          present=shown),
                     _("a set bit 63 means present: drop the `not` (or `== 0`) that turns it round."))
    return _hint(_("for {entry:#018x} present should be {want}. Which bit of the entry says whether a frame "
                   "backs the page?").format(entry=entry, want=want),
                 _("present is bit 63: which operator moves it down to bit 0, and which keeps bit 0 alone?"))


def check_decode_entry(decode_entry: Callable[[int], tuple[Any, int]]) -> Feedback:
    """pin-host-memory: ``decode_entry(entry)`` returns (present, PFN) from a 64-bit ``/proc/self/pagemap`` entry."""
    if is_placeholder(decode_entry):
        return _not_yet(_("define decode_entry(entry) returning (present, pfn): bit 63 and bits 0-54."))
    for entry in ENTRY_CASES:
        got = decode_entry(entry)
        forgot = returned_none(decode_entry, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("decode_entry returns `...`: replace it with the pair (present, pfn)."))
        if not (isinstance(got, (tuple, list)) and len(got) == 2):   # a two-item list is a pair too
            return _hint(_("return a pair (present, pfn); for {entry:#018x} you returned {got}.").format(
                entry=entry, got=_shown(got)),
                         _("`return a, b` returns the pair (a, b): which two values does your function compute, "
                           "and does its return give both?"))
        present, pfn = got
        want_present, want_pfn = decoded(entry)
        if want_pfn > 1 and present == want_pfn and not isinstance(pfn, float) and pfn == want_present:
            return _hint(_("for {entry:#018x} you returned ({first:#x}, {second}): the frame number first and the "
                           "present bit second. In which order does the exercise ask for the pair?").format(
                entry=entry, first=want_pfn, second=pfn),
                         _("call your function on 1 << 63 in a new cell: which item of the pair is the flag, "
                           "and where does the exercise's pair put it?"))
        if isinstance(pfn, str):
            return _hint(_("return an int, not a string: for {entry:#018x} your PFN is {pfn!r}, the text hex() "
                           "makes for reading. Can the program compute with text?").format(entry=entry, pfn=pfn),
                         _("type hex(66) + 1 in a new cell: what does Python say? Where does your function "
                           "turn its number into text?"))
        if isinstance(pfn, float):
            return _hint(_("your PFN is a float: a float has only 53 bits, too few for a 64-bit entry. Which of the "
                           "integer operators takes bits out of an integer and keeps it exact?"),
                         _("in a new cell, compare 2**53 + 1 with float(2**53 + 1): which one lost its last "
                           "bit? Then find where your PFN first becomes a float."))
        if bool(present) != want_present:
            return _present_hint(decode_entry, entry, present, want_present)
        if want_present and present not in (0, 1) and _flags_right(decode_entry):   # True == 1; 2**63: no flag
            bit = _("bit 63 left in its place") if present == PRESENT else _("a number, not a flag")
            return _hint(_("for {entry:#018x} your present flag is {present}: {bit}. The exercise asks for True or "
                           "False (or 1 or 0): how does bit 63 become bit 0?").format(
                entry=entry, present=_shown(present), bit=bit),
                         _("shift the entry right by the number of bits below bit 63, then keep bit 0 alone with "
                           "`& 1`; or wrap your test in bool()."))
        if not want_present:
            continue                         # the low bits of an absent page are not a PFN: any value passes
        if pfn == want_pfn:
            continue
        mask = _mask(decode_entry)
        masked = _mask_hint(entry, mask) if mask is not None and mask < 1 << 63 else None
        if masked is not None:
            return masked
        if pfn == entry or pfn == entry & ((1 << 63) - 1) or pfn == entry & ((1 << 62) - 1):
            return _hint(_("for {entry:#018x} your PFN still holds flag bits (55-63: present, swapped and other "
                           "flags the pagemap documentation lists). Which bits belong to the frame number?").format(
                entry=entry),
                         _("keep bits 0-54 only: which operator keeps the bits of a number where a mask has ones "
                           "and clears the rest?"))
        if (want_pfn >= 4096 and pfn == want_pfn >> 12) or pfn in (entry >> 12, entry >> 12 & PFN_MASK):
            return _hint(_("for {entry:#018x} you returned the PFN {pfn}: you divided by 4096 (or shifted right by "
                           "12), before or after the mask. Section 1 divides a physical *address* by 4096 to get a "
                           "PFN; what do bits 0-54 of the entry already hold?").format(entry=entry, pfn=_shown(pfn)),
                         _("call your function on (1 << 63) | 5, the entry of frame 5: which PFN does it "
                           "return, and which step of your code changes the 5?"))
        if pfn == want_pfn * 4096 or pfn == want_pfn << 12:
            return _hint(_("that is the physical address (PFN x 4096). What does the exercise ask for: the frame's "
                           "address or its number?"),
                         _("a PFN counts frames: frame 3 starts at byte 3 x 4096. Which of the two does your "
                           "function return, and where does it multiply?"))
        return _hint(_("for {entry:#018x} you returned the PFN {pfn}. Which bits of the entry hold the frame "
                       "number, and how do you keep only those?").format(entry=entry, pfn=_shown(pfn, small=0)),
                     _("print the entry in binary, f\"{e:064b}\", with your PFN below it: which of the 64 digits "
                       "belong to the PFN, and where does yours differ?"))
    extra = ""
    own = _own_entries()
    if own:
        def agrees(raw: int, present: bool, pfn: int | None) -> bool:
            got_present, got_pfn = decode_entry(raw)
            return bool(got_present) == present and (not present or got_pfn == (pfn or 0))

        agree = sum(agrees(*row) for row in own)
        if agree != len(own):
            return _hint(_("your decoder disagrees with zc.pages on {wrong} of {n} entries read from this process's "
                           "/proc/self/pagemap. Which kind of entry did the fixed cases not cover?").format(
                wrong=len(own) - agree, n=len(own)),
                         _("print decode_entry(e) next to zc.pages.frames' answer for the entries of a fresh buffer "
                           "and compare them bit by bit (f\"{e:064b}\")."))
        hidden = all(pfn is None for _raw, present, pfn in own if present)
        extra = (_(" On {n} entries of this process's own pagemap it agrees with zc.pages").format(n=len(own))
                 + (_(" (the PFNs read 0 here: the OS kernel hides them from users other than root).") if hidden
                    else _(".")))
    return _correct(_("bit 63 says whether a frame backs the page, bits 0-54 which frame; this is all "
                      "zc.pages.frames_of does for each page.") + extra)


def compare_prediction(predicted: Any, present: int, total: int = 4) -> str:
    """pin-host-memory's prediction: how many of ``total`` untouched pages have a frame right after ``mlock``
    (``present``, read from /proc/self/pagemap), against the learner's ``predicted``."""
    if is_placeholder(predicted):
        return _("no prediction: replace `...` with how many of the 4 untouched pages you expect to have a frame "
                 "right after mlock, then run the prediction cell and this one again.")
    try:
        if isinstance(predicted, bool):
            raise TypeError(predicted)
        guess = int(predicted)
    except (TypeError, ValueError):
        return _("could not read {given} as a number of pages (0 to {total}).").format(given=repr(predicted),
                                                                                      total=total)
    typed = (_(" You typed the text {given}, read as the number {guess} (a number needs no quotes).").format(
        given=repr(predicted), guess=guess) if isinstance(predicted, str) else "")
    why = (_("To keep pages in RAM, mlock must first put them there: it faults every page in, without a touch.")
           if present == total else
           _("Here mlock left {left} of them without a frame; on Linux it normally faults them all in.").format(
               left=total - present))
    verdict = _("as you predicted") if guess == present else _("you predicted {guess}").format(guess=guess)
    if not 0 <= guess <= total:
        verdict = _("you predicted {guess}, out of range: of {total} pages, 0 to {total} can have one").format(
            guess=guess, total=total)
    return _("Right after mlock, {present} of {total} untouched pages had a frame ({verdict}).{typed} {why}").format(
        present=present, total=total, verdict=verdict, typed=typed, why=why)


CHECKS = {"pages_spanned": check_pages_spanned, "decode_entry": check_decode_entry}
