"""Lesson 04's exercises: a page and an offset from an address; when the device pointer is the host pointer."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet

PAGE_CASES = ((0x7F4478801234, 4096), (0x7F4478800000, 4096), (0x7F4478800FFF, 4096), (4096, 4096), (4095, 4096),
              (0x7F44788A1234, 65536), (0x7F44789A1234, 2**21))


def check_page_and_offset(page_and_offset: Callable[[int, int], tuple[int, int]]) -> Feedback:
    """Lesson 04: ``page_and_offset(address, page_size)`` returns (page number, offset in the page)."""
    if is_placeholder(page_and_offset):
        return _not_yet("define page_and_offset(address, page_size) returning (page number, offset in that page).")
    first_wrong = None
    for address, size in PAGE_CASES:
        got = page_and_offset(address, size)
        if is_placeholder(got):
            return _not_yet("page_and_offset returns `...`: replace it with the page number and the offset.")
        want = divmod(address, size)
        if not (isinstance(got, tuple) and len(got) == 2):
            return _hint(f"return a pair (page, offset); for {address:#x} you returned {got!r}.")
        if any(isinstance(v, float) for v in got):
            return _hint("use integer division `//` and `%`: a page number is a whole number, and a float has only 53 "
                         "bits, too few to be trusted with 64-bit addresses.")
        if tuple(int(v) for v in got) == want:
            continue
        if tuple(got) == want[::-1]:
            return _hint("page and offset are swapped: the page number is address // page_size, the offset the rest.")
        if size != 4096 and tuple(got) == divmod(address, 4096):
            return _hint(f"right for 4 KiB pages, but you ignored page_size ({size} here). The GPU's MMU may map host "
                         "memory with larger pages (64 KiB, 2 MiB): use the argument, not 4096 or `>> 12`.")
        first_wrong = first_wrong or (address, size, got, want)
    if first_wrong:
        address, size, got, want = first_wrong
        return _hint(f"for address {address:#x} and {size}-byte pages you returned {got}, expected {want}. "
                     "page = address // page_size; offset = address % page_size.")
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
    """Lesson 04: ``same_address(allocation, attributes)`` predicts device pointer == host pointer.

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
                    return _hint(f"return True or False; for {kind!r} you returned {got!r}.")
                want = same_address_rule(kind, attrs)
                if got == want:
                    continue
                if not uva:
                    return _hint("without UNIFIED_ADDRESSING the device has its own address for mapped memory; only "
                                 "cuMemHostGetDevicePointer can give it. Predict False when UNIFIED_ADDRESSING is 0.")
                if kind.startswith("registered"):
                    return _hint("registered memory keeps its host address only where "
                                 "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM is non-zero (cuMemHostGetDevicePointer's "
                                 f"reference); with it = {can_use} you predicted {got}.")
                if kind.startswith("pinned, no DEVICEMAP"):
                    return _hint("with unified addressing, cudaHostAlloc memory is mapped at the host address with or "
                                 "without the DEVICEMAP flag (the Runtime API's Unified Addressing section).")
                return _hint(f"with unified addressing, {kind!r} memory from cudaHostAlloc has device pointer == host "
                             "pointer: predict True.")
    extra = ""
    if measured and attributes:
        agree = sum(same_address(r["allocation"], dict(attributes)) == r["equal"] for r in measured)
        extra = f" On the measured run it agrees with the `equal` column for {agree} of {len(measured)} kinds."
    return _correct("equality needs unified addressing, and for registered memory also "
                    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM; everywhere else ask the driver." + extra)


CHECKS = {"page_and_offset": check_page_and_offset, "same_address": check_same_address}


def namespace() -> dict[str, Any]:
    """Names lesson 04's exercise cells use besides NumPy."""
    return {"PAGE": 4096}
