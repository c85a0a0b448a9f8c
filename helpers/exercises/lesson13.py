"""use-write-combined-and-registered-memory's exercises: when registering pays off (reads_needed), which arrays can
be registered
(can_register), and the prediction of how much slower the CPU reads write-combined memory."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet

# (registration seconds, seconds per read, share): cases with a known smallest whole number of reads.
READ_CASES = ((0.21, 0.02, 0.1), (0.15, 0.021, 0.1), (1.1, 0.5, 0.25), (0.05, 0.1, 0.1), (0.31, 0.013, 0.05))
# (none has a whole-number exact answer, so floating-point rounding cannot decide a case)


def reads_needed_rule(register_seconds: float, read_seconds: float, share: float = 0.1) -> int:
    """The smallest whole k with register / (register + k * read) <= share (for the check and the tests)."""
    k = max(math.ceil(register_seconds * (1 - share) / (share * read_seconds) - 1e-9), 0)
    while register_seconds / (register_seconds + k * read_seconds) > share:
        k += 1
    return k


def check_reads_needed(reads_needed: Callable[..., Any], *, seconds_per_gib: float | None = None,
                       read_seconds: float | None = None) -> Feedback:
    """use-write-combined-and-registered-memory: ``reads_needed(register_seconds, read_seconds, share=0.1)``, the
    fewest zero-copy reads after
    which registering once is at most ``share`` of the total time. With the measured figures, the message says
    the answer for this run."""
    if is_placeholder(reads_needed):
        return _not_yet("define reads_needed(register_seconds, read_seconds, share=0.1) returning the fewest whole "
                        "reads k with register_seconds / (register_seconds + k * read_seconds) <= share.")
    for register, read, share in READ_CASES:
        got = reads_needed(register, read, share)
        if is_placeholder(got):
            return _not_yet("reads_needed returns `...`: return the number of reads.")
        want = reads_needed_rule(register, read, share)
        exact = register * (1 - share) / (share * read)
        if isinstance(got, (float, np.floating)) and not float(got).is_integer():
            return _hint(f"you returned {got:.3f} reads: a count of reads is a whole number. Which way must you "
                         "round so that the registration stays within the share?",
                         "round up (math.ceil): rounding down leaves the registration above the share.")
        if not isinstance(got, (int, np.integer, float, np.floating)):
            return _hint(f"return a whole number of reads; you returned {got!r}.",
                         "compute k as a number, round it to a whole count, and return it alone.")
        got = int(got)
        if got == want:
            continue
        if got == math.ceil(register / (share * read) - 1e-9) or got == math.floor(register / (share * read)):
            return _hint("the share is of the TOTAL time, registration included, not of the reading time. Write the "
                         "condition register / (register + k * read) <= share: what do you get when you solve it "
                         "for k?",
                         "multiply both sides by (register + k * read): register then appears on both sides; "
                         "gather it on one side and the term with k on the other, then divide.")
        if got == math.floor(exact) and got < want:
            return _hint(f"for register = {register} s, read = {read} s, share = {share} you returned {got}, one too "
                         "few. Should you round up or down so that the share is not exceeded?",
                         "k must reach the bound, not stop short of it: the next whole number above it (math.ceil).")
        if got > 0 and register / (register + got * read) <= share:
            return _hint(f"{got} reads do bring the registration under {share:.0%} (for register = {register} s, "
                         f"read = {read} s), but fewer do too: the question asks for the fewest. Where is the "
                         "bound on k exactly?",
                         "solve register / (register + k * read) = share for k, then round up to the next whole "
                         "number.")
        return _hint(f"for register = {register} s, read = {read} s, share = {share} you returned {got}. With k "
                     "reads, what share of the total time is the registration, and for which k does it first drop "
                     "to the share?",
                     f"the fewest reads is {want} there: try your k and k - 1 in register / (register + k * read) "
                     "and compare with share.")
    extra = ""
    if seconds_per_gib is not None and read_seconds is not None:
        k = int(reads_needed(seconds_per_gib, read_seconds))
        extra = (f" On this run: registering 1 GiB cost {seconds_per_gib * 1e3:.0f} ms and one read {read_seconds * 1e3:.1f} "
                 f"ms, so {k} reads.")
    return _correct("registering is paid once, reading every time, so its share of the total shrinks as the buffer "
                    "is reused: register once, outside the loop." + extra)


def can_register_rule(array: Any, page_size: int = 4096) -> bool:
    """RegisteredArray's rule (helpers.gpu._check_registrable), as a yes or no."""
    return (isinstance(array, np.ndarray) and array.nbytes > 0
            and (array.flags.c_contiguous or array.flags.f_contiguous)
            and array.ctypes.data % page_size == 0 and array.nbytes % page_size == 0)


def _register_cases() -> list[tuple[str, np.ndarray, int]]:
    from ..memory.pages import page_aligned_empty

    base = page_aligned_empty(4096)          # 16 KiB, page-aligned
    return [
        ("a page-aligned array of 4 pages", base, 4096),
        ("a view starting 4 bytes past a page boundary", base[1:1025], 4096),
        ("a strided view (every other float)", base[::2], 4096),
        ("a page-aligned array of 1000 floats (4000 bytes)", base[:1000], 4096),
        ("the second page of the array (page-aligned view)", base[1024:2048], 4096),
        ("a 2-D array, 4 rows of one page each", base.reshape(4, 1024), 4096),
        ("a column of that 2-D array", base.reshape(4, 1024)[:, 0], 4096),
        ("the same array seen as 64 KiB pages", base, 65536),
    ]


def check_can_register(can_register: Callable[..., Any]) -> Feedback:
    """use-write-combined-and-registered-memory: ``can_register(array, page_size=4096)`` says whether
    cuMemHostRegister may pin ``array`` as it
    is under the course's rule: contiguous, starting on a page boundary, a whole number of pages long."""
    if is_placeholder(can_register):
        return _not_yet("define can_register(array, page_size=4096) returning True only for a contiguous array "
                        "that starts on a page boundary and is a whole number of pages long.")
    for what, array, page in _register_cases():
        got = can_register(array, page)
        if is_placeholder(got):
            return _not_yet("can_register returns `...`: return True or False.")
        if not isinstance(got, (bool, np.bool_)):
            return _hint(f"return True or False; for {what} you returned {got!r}.",
                         "wrap the whole condition in bool(...): `and` returns one of its operands, not a bool.")
        want = can_register_rule(array, page)
        if got == want:
            continue
        contiguous = array.flags.c_contiguous or array.flags.f_contiguous
        starts = array.ctypes.data % page == 0
        if got and page != 4096 and can_register_rule(array, 4096):
            return _hint(f"you accepted {what}: with {page}-byte pages it is not a whole number of pages. Where does "
                         "your code still assume 4096 instead of the page_size argument?",
                         "replace every 4096 in the tests with page_size.")
        if got and not contiguous:
            return _hint(f"you accepted {what}: its elements are not one unbroken address range. How many ranges "
                         "does the driver pin, and what would it pin between the elements?",
                         "test array.flags.c_contiguous (or f_contiguous).")
        if got and not starts:
            return _hint(f"you accepted {what}: its first byte is not on a page boundary, so its first page holds "
                         "bytes before the array. Which attribute gives the first byte's address "
                         "(array.ctypes.data), and how do you test it is a multiple of the page size?",
                         "the array starts on a page boundary when the remainder of that address divided by "
                         "page_size is 0.")
        if got and array.nbytes % page:
            return _hint(f"you accepted {what}: it starts on a page boundary but ends inside a page "
                         f"({array.nbytes} bytes is not a multiple of {page}). What would the driver pin past its "
                         "last byte?",
                         "the driver pins whole pages, so test the size too: its bytes must be a whole number of "
                         "pages.")
        return _hint(f"you refused {what}, which is contiguous, starts on a page boundary and is a whole number of "
                     "pages long. Do you test the address and the size in bytes (array.nbytes), or an index and a "
                     "number of elements?",
                     "test the first byte's address (array.ctypes.data), not the index, and the size in bytes "
                     "(array.nbytes), not array.size.")
    return _correct("the driver pins whole pages of one unbroken address range: a strided view or a partial page "
                    "would pin what is not yours, so RegisteredArray refuses them before calling cuMemHostRegister.")


def compare_prediction(predicted: Any, ratio: float) -> str:
    """Compare the learner's guess of how many times slower the CPU reads write-combined memory with the run's
    ``ratio`` (write-combined GB/s / ordinary GB/s for CPU reads). Works on the untouched ``...``."""
    measured = 1 / ratio
    seen = (f"Measured: the CPU read write-combined memory at {ratio:.0%} of the ordinary rate, "
            f"{measured:.2f}x as long.")
    if is_placeholder(predicted) or not isinstance(predicted, (int, float, np.integer, np.floating)) or predicted <= 0:
        return f"No prediction was made (predicted_wc_read_slowdown is still `...`). {seen}"
    gap = predicted / measured
    text = f"You predicted {float(predicted):g}x slower. {seen} "
    if 0.67 <= gap <= 1.5:
        return text + "Your guess was within 50% of the run."
    if gap > 1.5:
        return text + ("The reads were faster than you expected" + (
            ": the guide's 'prohibitively slow' did not show on this machine; section 1 discusses why."
            if measured < 2 else "."))
    return text + ("The reads were slower than you expected: memory the CPU does not cache gives every load its own "
                   "trip to memory (section 1).")


CHECKS = {"reads_needed": check_reads_needed, "can_register": check_can_register}


def namespace() -> dict[str, Any]:
    """Names use-write-combined-and-registered-memory's exercise cells use besides NumPy."""
    return {"math": math}
