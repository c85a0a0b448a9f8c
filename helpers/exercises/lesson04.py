"""map-pages-on-the-gpu's exercises: a page and an offset from an address; when the device pointer is the host
pointer."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet

PAGE_CASES = ((0x7F4478801234, 4096), (0x7F4478800000, 4096), (0x7F4478800FFF, 4096), (4096, 4096), (4095, 4096),
              (0x7F44788A1234, 65536), (0x7F44789A1234, 2**21))


def check_page_and_offset(page_and_offset: Callable[[int, int], tuple[int, int]]) -> Feedback:
    """map-pages-on-the-gpu: ``page_and_offset(address, page_size)`` returns (page number, offset in the page)."""
    if is_placeholder(page_and_offset):
        return _not_yet("define page_and_offset(address, page_size) returning (page number, offset in that page).")
    first_wrong = None
    for address, size in PAGE_CASES:
        got = page_and_offset(address, size)
        if is_placeholder(got):
            return _not_yet("page_and_offset returns `...`: replace it with the page number and the offset.")
        want = divmod(address, size)
        if not (isinstance(got, tuple) and len(got) == 2):
            return _hint(f"return a pair (page, offset); for {address:#x} you returned {got!r}.",
                         "end with `return page, offset`: Python makes the pair from the two values.")
        if any(isinstance(v, float) for v in got):
            return _hint("you returned a float: a page number is a whole number, and a float has only 53 bits, too "
                         "few to be trusted with 64-bit addresses. Which operators do integer division and its "
                         "remainder?", "use integer division `//` and the remainder `%`, never `/`.")
        if tuple(int(v) for v in got) == want:
            continue
        if tuple(got) == want[::-1]:
            return _hint("page and offset are swapped. Which of the two is the large number, the page or the "
                         "position inside it?", "return (page number, offset): the quotient first, the remainder "
                         "second.")
        if size != 4096 and tuple(got) == divmod(address, 4096):
            return _hint(f"right for 4 KiB pages, but you ignored page_size ({size} here). The GPU's MMU may map host "
                         "memory with larger pages (64 KiB, 2 MiB): where does your code still assume 4096?",
                         "use the page_size argument, not 4096 or `>> 12`.")
        first_wrong = first_wrong or (address, size, got, want)
    if first_wrong:
        address, size, got, want = first_wrong
        return _hint(f"for address {address:#x} and {size}-byte pages you returned {got}. How many whole pages "
                     "come before the address, and how far into the next one is it?",
                     f"the answer here is {want}: the page number is a quotient of the address by the page size, "
                     "the offset what is left over.")
    return _correct("the page number is what a page table translates; the offset passes through unchanged. "
                    "So both MMUs can map one frame and agree on every byte in it.")


KINDS = ("mapped (DEVICEMAP)", "mapped + write-combined", "mapped + portable", "pinned, no DEVICEMAP flag",
         "registered (cuMemHostRegister)")


def same_address_rule(allocation: str, attributes: dict[str, int]) -> bool:
    """The documented rule (Runtime API Unified Addressing; ``cuMemHostGetDevicePointer``), for the check."""
    if not attributes.get("UNIFIED_ADDRESSING"):
        return False
    if allocation.startswith("registered"):
        return bool(attributes.get("CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"))
    return True


def check_same_address(same_address: Callable[[str, dict[str, int]], bool], *,
                       measured: list[dict[str, Any]] | None = None,
                       attributes: dict[str, int] | None = None) -> Feedback:
    """map-pages-on-the-gpu: ``same_address(allocation, attributes)`` predicts device pointer == host pointer.

    ``measured`` (``address_identity().rows``) and the ``attributes`` they ran with, when given,
    are compared with the prediction in the message.
    """
    if is_placeholder(same_address):
        return _not_yet("define same_address(allocation, attributes) returning True or False.")
    for uva in (0, 1):
        for can_use in (1, 0):
            attrs = {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can_use}
            for kind in KINDS:
                got = same_address(kind, dict(attrs))
                if is_placeholder(got):
                    return _not_yet("same_address returns `...`: return True or False from the two attributes.")
                if not isinstance(got, (bool, np.bool_)):
                    return _hint(f"return True or False; for {kind!r} you returned {got!r}.",
                                 "return a comparison or bool(...) of the attributes, not the attribute's number.")
                want = same_address_rule(kind, attrs)
                if got == want:
                    continue
                if not uva:
                    return _hint(f"you predicted {got} for {kind!r} without UNIFIED_ADDRESSING. Without unified "
                                 "addressing, can the device use the host's addresses at all (section 3)?",
                                 "without UNIFIED_ADDRESSING the device has its own address for mapped memory; only "
                                 "cuMemHostGetDevicePointer can give it, so test that attribute first.")
                if kind.startswith("registered"):
                    return _hint(f"for registered memory with CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = {can_use} you "
                                 f"predicted {got}. What does that attribute say about memory registered with "
                                 "cuMemHostRegister (cuMemHostGetDevicePointer's reference)?",
                                 "registered memory keeps its host address only where that attribute is non-zero: "
                                 "for allocation names starting with 'registered', return what it says.")
                if kind.startswith("pinned, no DEVICEMAP"):
                    return _hint(f"you predicted {got} for {kind!r}. Does the DEVICEMAP flag matter once addressing is "
                                 "unified? Section 3's table has a row for it.",
                                 "with unified addressing, cudaHostAlloc memory is mapped at the host address with or "
                                 "without the DEVICEMAP flag (the Runtime API's Unified Addressing section).")
                return _hint(f"you predicted {got} for {kind!r} with unified addressing. What does unified addressing "
                             "give memory from cudaHostAlloc?",
                             "with unified addressing, cudaHostAlloc memory has device pointer == host pointer, "
                             "whatever its other flags.")
    extra = ""
    if measured and attributes:
        agree = sum(same_address(r["allocation"], dict(attributes)) == r["equal"] for r in measured)
        extra = f" On the measured run it agrees with the `equal` column for {agree} of {len(measured)} kinds."
    return _correct("equality needs unified addressing, and for registered memory also "
                    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM; everywhere else ask the driver." + extra)


CHECKS = {"page_and_offset": check_page_and_offset, "same_address": check_same_address}


def namespace() -> dict[str, Any]:
    """Names map-pages-on-the-gpu's exercise cells use besides NumPy."""
    return {"PAGE": 4096}
