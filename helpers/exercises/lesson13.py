"""use-write-combined-and-registered-memory's exercises: when registering pays off (reads_needed), what the driver
pins beside a range that does not start or end on a page boundary (neighbours_pinned), and the prediction of how much
slower the CPU reads write-combined memory."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..analysis import spread
from ..platform.machine import detect_virtualization, in_vm, plainly
from ..i18n import _
from ..tables import Text
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

# (registration seconds, seconds per read, share): cases with a known smallest whole number of reads.
READ_CASES = ((0.21, 0.02, 0.1), (0.15, 0.021, 0.1), (1.1, 0.5, 0.25), (0.05, 0.1, 0.1), (0.31, 0.013, 0.05),
              (0.75, 0.0625, 0.25))
# The first five have no whole-number exact answer, so floating-point rounding cannot decide them; the last one's
# bound is exactly 36 in binary floating point (quarters and sixteenths), so `int(x) + 1` is refused there.


def reads_needed_rule(register_seconds: float, read_seconds: float, share: float = 0.1) -> int:
    """The smallest whole k with register / (register + k * read) <= share (for the check and the tests)."""
    k = max(math.ceil(register_seconds * (1 - share) / (share * read_seconds) - 1e-9), 0)
    while register_seconds / (register_seconds + k * read_seconds) > share:
        k += 1
    return k


def recording_machine(provenance: dict[str, Any]) -> str:
    """The machine a record was made on, named for a sentence: the virtual machine it ran in (never "the host", which
    a reader takes for the physical machine under the hypervisor), or the machine itself on bare metal."""
    gpu, vm = provenance.get("gpu", "recorded GPU"), provenance.get("virtualization") or ""
    if vm and vm != "none":
        return _("the virtual machine the {gpu} was recorded in ({plainly})").format(gpu=gpu, plainly=plainly(vm))
    return _("the machine the {gpu} was recorded on").format(gpu=gpu)


def which_run(result: Any) -> str:
    """The run a result comes from, for a sentence: "this run" live, "the instructor's run" for a class record,
    "the recorded run" in replay (as :func:`helpers.findings.computed_from` says it)."""
    if getattr(result, "live", False):
        return _("this run")
    return _("the instructor's run") if getattr(result, "class_record", None) else _("the recorded run")


def same_machine(wc: Any) -> Any:
    """Which committed records are runs of the machine behind ``wc``: the same GPU, and a virtual machine where it
    was one (whether the CPU gets a write-combined mapping is the machine's, not the GPU's). A live run on bare metal
    has no such record and is judged by its own repeats alone."""
    if wc.live:
        name = detect_virtualization()
        vm = None if name == "unknown" else not name.startswith("none")
    else:
        vm = in_vm(wc.provenance)
    return lambda record: record.gpu == wc.gpu and in_vm(record.provenance) == vm


def reads_apart(wc: Any, side: str, like: Any = None) -> bool:
    """Whether ``side``'s reads of write-combined memory differ from its reads of ordinary mapped memory by the
    course's rule (:func:`helpers.analysis.spread.rates_apart`), among the records ``like`` accepts (those of
    :func:`same_machine` unless given)."""
    return spread.rates_apart(wc, "write_combined", {"allocation": "mapped", "side": side, "op": "read"},
                              {"allocation": "mapped + write-combined", "side": side, "op": "read"}, "GBps",
                              like=like or same_machine(wc))


def machine_runs(wc: Any) -> int:
    """How many runs of the machine behind ``wc`` hold its write-combined figures: the committed records that
    :func:`same_machine` accepts, and this run where it is live (the runs :func:`reads_apart` judges over)."""
    like = same_machine(wc)
    figure = (lambda r: 0.0 if like(r) and r.one(allocation="mapped + write-combined", side="cpu", op="read")
              else None)
    try:
        count = spread.across_records("write_combined", figure).count
    except LookupError:
        count = 0
    return count + 1 if wc.live else max(count, 1)


def write_combined_verdict(wc: Any) -> dict[str, Any]:
    """Whether the CPU got a write-combined mapping on the machine that ran ``write_combined``.

    A CPU read of write-combined memory bypasses the caches, so where the flag reaches the CPU's page tables it runs
    many times slower than a read of ordinary pinned memory (Programming Guide, Write-Combining Memory).
    ``cpu_apart``: the CPU's two read rates differ by the course's rule (:func:`reads_apart`); ``cpu_wc_honoured``:
    they do, and the write-combined reads ran at under half the rate; ``gpu_same``: the GPU's two read rates do not
    differ by that rule."""
    ratio = {side: wc.one(allocation="mapped + write-combined", side=side, op="read")["GBps"]
             / wc.one(allocation="mapped", side=side, op="read")["GBps"] for side in ("cpu", "gpu")}
    like = same_machine(wc)
    cpu_apart = reads_apart(wc, "cpu", like)
    return {"cpu_read_ratio": ratio["cpu"], "gpu_read_ratio": ratio["gpu"], "cpu_apart": cpu_apart,
            "cpu_wc_honoured": cpu_apart and ratio["cpu"] < 0.5, "gpu_same": not reads_apart(wc, "gpu", like)}


def registration_seconds(reg: Any) -> tuple[float, float]:
    """(seconds to register and unregister 1 GiB, seconds for one zero-copy read of 1 GiB of registered memory) from a
    ``registered`` result."""
    cost = reg.one(allocation="register + unregister (host)")
    per_gib = float(np.median(cost["seconds"])) / cost["nbytes"] * 2**30
    return per_gib, 2**30 / (reg.one(allocation="registered")["GBps"] * 1e9)


def _ignores_share(reads_needed: Callable[..., Any], register: float, read: float, share: float, got: int) -> bool:
    """Whether the learner's count stays ``got`` for other shares, while the right one changes with the share."""
    others = [other for other in (share / 2, min(2 * share, 0.5)) if
              reads_needed_rule(register, read, other) != reads_needed_rule(register, read, share)]
    try:
        return bool(others) and all(int(reads_needed(register, read, other)) == got for other in others)
    except Exception:   # the learner's function may fail on another share: then it does not ignore it
        return False


def _acts_as(reads_needed: Callable[..., Any], model: Callable[[float, float, float], float],
             within: float = 0.0) -> bool:
    """Whether the learner's count agrees with ``model`` on every case of :data:`READ_CASES` (to ``within``, or
    exactly): a slip is judged by what the function does on other inputs, not by one result."""
    try:
        return all(abs(float(reads_needed(*case)) - model(*case)) <= within for case in READ_CASES)
    except Exception:   # the learner's function may fail elsewhere: then it is not that slip
        return False


def _returned(got: Any) -> str:
    """A placeholder return value as the two checks' "not yet" messages name it: `...` or `None`."""
    return "`...`" if got is Ellipsis else f"`{got!r}`"


def _reads(n: int) -> str:
    """A count of reads with its plural: "1 read", "2 reads"."""
    return _("1 read") if n == 1 else _("{n} reads").format(n=n)


def _exact(r: float, t: float, s: float) -> float:
    """The bound on k: registration at exactly ``s`` of the total."""
    return r * (1 - s) / (s * t)


# Each slip of reads_needed the check names: (test on the learner's function, the case and its result; the
# question; the smaller step). The first that holds gives the hint; its step names the kind its grade counts.
def _read_slips(f: Callable[..., Any], r: float, t: float, s: float, got: int) -> list[tuple[bool, str, str]]:
    """The slips of reads_needed, in the order the check tries them (each test already evaluated)."""
    want, exact, case = reads_needed_rule(r, t, s), _exact(r, t, s), dict(register=r, read=t, share=s)
    said = _("for register = {register} s, read = {read} s, share = {share} you returned {reads}").format(
        reads=_reads(got), **case)
    whole = READ_CASES[-1]
    return [
        (_acts_as(f, lambda a, b, c: a * (1 - c) / c * b, 1) or _acts_as(f, lambda a, b, c: a / c * b, 1),
         said + _(", far too few. Does your division by `share` and `read_seconds` divide by both? Python reads "
                  "`a / b * c` as `(a / b) * c`."),
         _("a divisor of two factors needs parentheses around both: `a / (b * c)`.")),
        (_acts_as(f, lambda a, b, c: a * c / ((1 - c) * b), 1),
         said + _(": your k makes the reading `share` of the total and the registration the rest. Which of the "
                  "two may be at most `share`?"),
         _("swap the roles: the registration's share must be at most `share`, so the reading's is at least "
           "1 - `share`. Solve for k again.")),
        (_ignores_share(f, r, t, s, got),
         _("you returned {reads} for register = {register} s, read = {read} s, and {got} again whatever `share` "
           "is: your count leaves the share out. How does the share the registration may take of the total decide "
           "how many reads are needed?").format(reads=_reads(got), got=got, register=r, read=t),
         _("write the registration's share of the total time after k reads, then find the first k for which it "
           "is at most `share`.")),
        (got in (math.ceil(r / (s * t) - 1e-9), math.floor(r / (s * t))),
         _("the share is of the TOTAL time, registration included, not of the reading time. What is the total "
           "time of registering once and reading k times, and what share of it is the registration?"),
         _("the total after k reads is register + k * read. Write the registration's share of that total, require "
           "it to be at most `share`, and solve for k.")),
        (float(exact).is_integer() and got == int(exact) + 1,
         said + _(": one read too many where the bound on k is whole. Equal is enough: the registration may be at "
                  "most `share` of the total. Where does your count step past a bound it has reached?"),
         _("at the bound the share is exactly `share`, which is allowed: a loop stops when the share equals it, "
           "not only below it; a rounding leaves a whole number as it is (`int(x) + 1` adds one to it).")),
        (got == want + 1 and _acts_as(f, lambda a, b, c: reads_needed_rule(a, b, c) + 1),
         said + _(": one read more than the fewest, on every case. With one read fewer, is the registration "
                  "already at most `share` of the total?"),
         _("compute the registration's share with your k - 1 reads: it is at most `share` already. Find where "
           "your count adds the extra read.")),
        (got == want - 1 and _acts_as(f, lambda a, b, c: round(_exact(a, b, c))),
         said + _(", one read too few: your count rounds to the nearest whole number, which goes down when the "
                  "bound's fraction is under a half. Which way must it round so that the share is never exceeded?"),
         _("any k below the bound leaves the registration above `share`, however close k is: round in the one "
           "direction that never goes below.")),
        (got == want - 1 and _acts_as(f, lambda a, b, c: reads_needed_rule(a, b, c) - 1),
         said + _(", one read too few, and one too few where the bound on k is whole too: your count stops one "
                  "read early everywhere. With your k, is the registration at most `share` of the total?"),
         _("compute the registration's share with the k you return: it is still above `share`. Return the first "
           "k at which it is not, not the last one before it.")),
        (got == math.floor(exact) and got < want,
         said + _(", one read too few. Should you round up or down so that the share is not exceeded?"),
         _("k must reach the bound, not stop short of it: the next whole number at or above it. Which function "
           "of the math module gives that?")),
        (got > 0 and r / (r + got * t) <= s,
         _("{reads} do bring the registration to at most {share:.0%} (for register = {register} s, read = "
           "{read} s), but fewer do too: the question asks for the fewest. Where is the bound on k exactly?").format(
             reads=_reads(got), share=s, register=r, read=t),
         _("find the k at which the registration's share of the total is exactly `share`, then take the first "
           "whole number at or above it.")),
    ]


def check_reads_needed(reads_needed: Callable[..., Any], *, measured: Any = None) -> Feedback:
    """use-write-combined-and-registered-memory: ``reads_needed(register_seconds, read_seconds, share=0.1)``, the
    fewest zero-copy reads after which registering once is at most ``share`` of the total time. With ``measured``
    (``registered``), the message says the answer for 1 GiB on that run."""
    if is_placeholder(reads_needed):
        return _not_yet(_("define reads_needed(register_seconds, read_seconds, share=0.1) returning the fewest "
                          "whole number of reads k after which registering once is at most `share` of the total "
                          "time."))
    for register, read, share in READ_CASES:
        got = reads_needed(register, read, share)
        forgot = returned_none(reads_needed, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("reads_needed returns {got}: return the number of reads.").format(
                got=_returned(got)))
        if isinstance(got, (float, np.floating)) and not float(got).is_integer():
            return _hint(_("you returned {got:.3f} reads: a count of reads is a whole number. Which way must you "
                           "round so that the registration stays within the share?").format(got=got),
                         _("round up, not down: rounding down leaves the registration above the share. The math module "
                           "imported in the cell has a function that rounds up."))
        if not isinstance(got, (int, np.integer, float, np.floating)):
            return _hint(_("return a whole number of reads; you returned {got!r}.").format(got=got),
                         _("compute k as a number, round it to a whole count, and return it alone."))
        got = int(got)
        if got == reads_needed_rule(register, read, share):
            continue
        for holds, question, step in _read_slips(reads_needed, register, read, share, got):
            if holds:
                return _hint(question, step)
        return _hint(_("for register = {register} s, read = {read} s, share = {share} you returned {got}. With k "
                       "reads, what share of the total time is the registration, and for which k does it first "
                       "drop to the share?").format(register=register, read=read, share=share, got=got),
                     _("compute the registration's share of the total with your k and with k - 1: the fewest k "
                       "brings it to `share` or under, while k - 1 leaves it above."))
    extra = ""
    if measured is not None:
        per_gib, read = registration_seconds(measured)
        extra = (_(" On {which_run}: registering and unregistering 1 GiB cost {per_gib:.0f} ms and one read {read:.1f} ms, so "
                   "{reads_needed} reads.").format(
                     which_run=which_run(measured), per_gib=per_gib * 1e3, read=read * 1e3, reads_needed=int(reads_needed(per_gib, read))))
    return _correct(_("registering is paid once, reading every time, so its share of the total shrinks as the "
                      "buffer is reused: register once, outside the loop.") + extra)


# --------------------------------------------------------------------------- what the driver pins beside a range
def neighbours_pinned_rule(address: int, nbytes: int, page_size: int = 4096) -> tuple[int, int]:
    """(bytes before, bytes after) ``[address, address + nbytes)`` that registering pins too: the OS kernel pins whole
    pages (mlock(2); the kernel's pin_user_pages documentation)."""
    return address % page_size, -(address + nbytes) % page_size


_BASE = 0x7F3A_0000_0000    # a page-aligned address, as a 64-bit Linux process has them
# (address, nbytes, page size): the probes of experiments.registered, a range inside one page, ranges that end on a
# boundary, and 64 KiB pages
NEIGHBOUR_CASES = ((_BASE + 100, 16384, 4096), (_BASE, 16384, 4096), (_BASE + 4095, 16384, 4096),
                   (_BASE, 16484, 4096), (_BASE + 100, 100, 4096), (_BASE + 4, 8188, 4096),
                   (_BASE + 4000, 200, 4096), (_BASE + 100, 100, 65536))


def check_neighbours_pinned(neighbours_pinned: Callable[..., Any], *, measured: Any = None) -> Feedback:
    """use-write-combined-and-registered-memory: ``neighbours_pinned(address, nbytes, page_size=4096)`` returns the
    bytes before and after the range that the driver pins with it; with ``measured`` (``registered``), the message
    applies it to the alignment probes the driver accepted."""
    if is_placeholder(neighbours_pinned):
        return _not_yet(_("define neighbours_pinned(address, nbytes, page_size=4096) returning (bytes before, "
                          "bytes after)."))
    for address, nbytes, page in NEIGHBOUR_CASES:
        got = neighbours_pinned(address, nbytes, page)
        forgot = returned_none(neighbours_pinned, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("neighbours_pinned returns {got}: return (before, after).").format(
                got=_returned(got)))
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in got)):
            said = _("return a pair of whole numbers of bytes (before, after); you returned {got!r}.")
            return _hint(said.format(got=got)[:300],
                         _("end with `return before, after`, both counted with integer arithmetic (% and //)."))
        before, after = (int(v) for v in got)
        want_before, want_after = neighbours_pinned_rule(address, nbytes, page)
        if (before, after) == (want_before, want_after):
            continue
        offset = (address % page, nbytes, page)
        case = _("a range {value} bytes into a page, {nbytes} bytes long, {page}-byte pages").format(
                   value=offset[0], nbytes=nbytes, page=page)
        if page != 4096 and (before, after) == neighbours_pinned_rule(address, nbytes, 4096):
            return _hint(_("{case}: your answer is the one for 4096-byte pages. Where does your code still assume "
                           "4096 instead of the page_size argument?").format(case=case),
                         _("use page_size wherever the page size "
                           "appears."))
        if (after, before) == (want_before, want_after):
            return _hint(_("{case}: the pair is swapped. Which comes first, the bytes before the range or after it?").format(
                             case=case),
                         _("return (before, after)."))
        if before != want_before:
            if before == (page - address % page) % page:
                return _hint(_("{case}: you counted from the range's first byte up to the next page boundary. "
                               "Which page holds the first byte, and where does that page begin?").format(case=case),
                             _("the first pinned page begins at the page boundary at or below the address: the "
                               "bytes before are the distance from that boundary to the address."))
            if before == page and address % page == 0:
                return _hint(_("{case}: the range starts exactly on a page boundary, and you counted a whole page "
                               "before it. Does the driver pin the page that ends where the range starts?").format(
                                 case=case),
                             _("your count is right except on a boundary, where it gives a full page instead of 0. "
                               "Which operation turns page_size into 0?"))
            if before == want_before + 1:
                return _hint(_("{case}: one byte too many before it: the byte at `address` is the range's first, "
                               "not a neighbour. Where do the bytes before it end?").format(case=case),
                             _("count from the page's first byte up to the range's first byte, leaving that one "
                               "out."))
            if before == want_before - 1:
                return _hint(_("{case}: one byte too few before it: the page's first byte is pinned too. Where "
                               "do the bytes before it begin?").format(case=case),
                             _("count every byte from the page's first byte, that one included, up to the "
                               "range's first."))
            return _hint(_("{case}: you returned {before} bytes before it. The driver's first pinned page is the "
                           "one that holds the range's first byte: where does that page begin?").format(
                             case=case, before=before),
                         _("the distance from the page boundary below the address to the address: what is left "
                           "over when the address is divided by the page size."))
        if after == page - (address + nbytes) % page and (address + nbytes) % page == 0:
            return _hint(_("{case}: the range ends exactly on a page boundary, and you counted a whole page after "
                           "it. Does the driver pin the page that starts where the range ends?").format(case=case),
                         _("your count is right except on a boundary, where it gives a full page instead of 0. "
                           "Which operation that you already use turns page_size into 0?"))
        if after == -nbytes % page and nbytes % page != (address + nbytes) % page:
            return _hint(_("{case}: your bytes after depend on the length only. Where does the range end: at "
                           "nbytes, or at address + nbytes?").format(case=case),
                         _("the last pinned page is the one that holds address + nbytes - 1: count from the "
                           "range's end to the next page boundary."))
        if after == (address + nbytes) % page:
            return _hint(_("{case}: you returned {after} bytes after it: you counted how far the range reaches "
                           "into its last page, not what is left of that page. Where does that page end?").format(
                             case=case, after=after),
                         _("what is left of the last page is the page size minus how far the range reaches into "
                           "it, and 0 when the range ends on a boundary."))
        if after == want_after + 1:
            return _hint(_("{case}: one byte too many after it. The last byte belongs to the range, not to its "
                           "neighbours: where do the bytes after it begin?").format(case=case),
                         _("the bytes after the range begin one past its last byte: count from there up to the "
                           "page's end."))
        if after == want_after - 1:
            return _hint(_("{case}: one byte too few after it: the page's last byte is pinned too. Where do the "
                           "bytes after it end?").format(case=case),
                         _("count every byte from the one past the range up to the page's last byte, that one "
                           "included."))
        return _hint(_("{case}: you returned {after} bytes after it. The driver's last pinned page is the one that "
                       "holds the range's last byte: where does that page end?").format(case=case, after=after),
                     _("the distance from the range's end (address + nbytes) up to the next page boundary, 0 when "
                       "it is one already."))
    extra = ""
    if measured is not None:
        tried = measured.select(allocation="alignment probe (cuMemHostRegister)")
        probes = [r for r in tried if r["works"]]
        odd = [(r, neighbours_pinned(_BASE + r["page_offset"], r["nbytes"], 4096)) for r in probes]
        odd = [(r, pair) for r, pair in odd if any(pair)]
        if odd:
            r, (before, after) = odd[-1]
            accepted = (_("all {n}").format(n=len(tried)) if len(probes) == len(tried)
                        else _("{count} of the {n}").format(count=len(probes), n=len(tried)))
            extra = (_(" The driver accepted {accepted} alignment probes; as pages are pinned whole, {n_odd} of "
                       "them pinned bytes that were not theirs: the {nbytes}-byte range {page_offset} bytes into a "
                       "page pinned {before} bytes before it and {after} after it.").format(
                         accepted=accepted, n_odd=len(odd), nbytes=r['nbytes'], page_offset=r['page_offset'], before=before, after=after))
    return _correct(_("the OS kernel pins whole pages, so a range pins nothing of its neighbours only when both "
                      "numbers are 0: it starts on a page boundary and is a whole number of pages long. That is "
                      "the rule RegisteredArray applies before calling cuMemHostRegister (with one unbroken, "
                      "contiguous range).")
                    + extra)


def compare_prediction(predicted: Any, wc: Any) -> Text:
    """The learner's guess of how many times as long the CPU takes to read write-combined memory, against the
    ``write_combined`` result (write-combined GB/s / ordinary GB/s for CPU reads). Works on the untouched ``...``."""
    ratio = (wc.one(allocation="mapped + write-combined", side="cpu", op="read")["GBps"]
             / wc.one(allocation="mapped", side="cpu", op="read")["GBps"])
    measured = 1 / ratio
    seen = (_("Measured: the CPU read write-combined memory at {ratio:.0%} of the ordinary rate, {measured:.2f}x "
              "as long.").format(ratio=ratio, measured=measured))
    if is_placeholder(predicted):
        return Text(_("No prediction was made (predicted_wc_read_slowdown is still `...`). {seen}").format(seen=seen))
    if (isinstance(predicted, (bool, np.bool_)) or not isinstance(predicted, (int, float, np.integer, np.floating))
            or not np.isfinite(predicted) or predicted <= 0):
        return Text(_("A prediction here is a positive number, how many times as long as an ordinary read (e.g. "
                      "10); you gave {predicted!r}. {seen}").format(predicted=predicted, seen=seen))
    gap = predicted / measured
    where = (_("on this machine") if wc.live
             else _("in {machine}").format(machine=recording_machine(wc.provenance)))
    text = _("You predicted {predicted:g}x as long. {seen} ").format(predicted=float(predicted), seen=seen)
    if 0.67 <= gap <= 1.5:
        return Text(text + _("Your guess was within 50% of the run."))
    if gap > 1.5:
        return Text(text + _("The reads were faster than you expected") + (
            _(": the guide's 'prohibitively slow' did not show {where}; the text below says why.").format(where=where)
            if measured < 2 else "."))
    verdict = write_combined_verdict(wc)     # the reason the verdict below gives, never another
    if verdict["cpu_wc_honoured"]:
        why = _("memory the CPU does not cache gives every load its own trip to memory (section 1).")
    elif verdict["cpu_read_ratio"] < 0.5:
        why = _("the verdict below says what one run can tell of why.")
    else:
        why = (_("{value} gave the CPU an ordinary cached mapping (the verdict below), so write-combined memory "
                 "read about as fast as ordinary memory.").format(value=_("this machine") if wc.live else _("that machine")))
    return Text(text + _("The reads were slower than you expected: ") + why)

CHECKS = {"reads_needed": check_reads_needed, "neighbours_pinned": check_neighbours_pinned}


def namespace() -> dict[str, Any]:
    """Names use-write-combined-and-registered-memory's exercise cells use besides NumPy."""
    return {"math": math}
