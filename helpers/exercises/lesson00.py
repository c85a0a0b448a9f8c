"""start-here's exercises: read the attribute table (a function that gives a GPU's L2 cache size in MiB), and count
the bytes a vector add moves over the bus with explicit copies and with zero-copy.

The first check calls the learner's function on the session's attributes (live: this GPU's; replay: the recorded
one's) and on other L2 sizes, so it judges behaviour and needs no GPU: a number typed in for one GPU fails on the
others, and a typical wrong answer (bytes, KiB, GiB, or MB of 10^6 bytes) gets a hint about units. The second runs the learner's function on fixed cases: no measurement, a model whose assumption (no cache
keeps mapped data) the lesson states.

Its messages are marked for the Chinese edition (``_("...")``, figures put in by ``.format`` after the lookup): the
first module so marked (helpers.i18n).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..i18n import _
from . import Feedback, correct, hint, is_placeholder, not_yet
from .returns import returned_none


def _attributes() -> dict[str, int]:
    """The GPU's attributes as the session has them (``zc.session().attributes``): live from the driver, in replay
    from the reference record."""
    from ..mode import detect

    if detect().live:
        from ..memory import gpu

        return gpu.device_attributes()
    from .. import records

    return dict(records.reference_record()[0]["provenance"]["attributes"])


def namespace() -> dict[str, Any]:
    """The exercise cell reads ``course.attributes`` (the session's, in the notebook); tests get the same values."""
    return {"course": SimpleNamespace(attributes=_attributes())}


# L2 sizes in bytes of other GPUs the check also asks about: the function must hold for any GPU, not only this one
OTHER_L2_BYTES = (40 * 2**20, 50 * 2**20, 6 * 2**20)


def l2_cases(attributes: dict[str, int] | None = None) -> list[dict[str, int]]:
    """The attribute dicts the check calls ``l2_mib`` on: the session's GPU first, then other L2 sizes."""
    first = dict(attributes if attributes is not None else _attributes())
    return [first] + [{**first, "L2_CACHE_SIZE": size} for size in OTHER_L2_BYTES
                      if size != first["L2_CACHE_SIZE"]]


def _unit_hint(got: float, size: int, where: str) -> Feedback:
    """A hint for a result that is the L2 size in another unit, or not the size at all."""
    def near(value: float) -> bool:
        return math.isclose(got, value, rel_tol=1e-6)

    if near(size):
        return hint(_("{where}: that is the attribute itself, in bytes. Which unit does the exercise ask for?")
                    .format(where=where),
                    _("a MiB is 1024 KiB and a KiB is 1024 bytes: how many times do you divide by 1024?"))
    if near(size / 1e6) or near(size / 1e3):
        return hint(_("{where}: close, but that counts in powers of ten (MB or kB). A MiB (mebibyte) is a power of "
                      "two: which one?").format(where=where),
                    _("a MiB is 1024 KiB and a KiB is 1024 bytes: divide by 1024, then by 1024 again."))
    if near(size / 2**10):
        return hint(_("{where}: that is KiB (kibibytes): one step short. How many KiB make a MiB?").format(where=where),
                    _("divide by 1024 once more."))
    if near(size / 2**30):
        return hint(_("{where}: that is GiB (gibibytes): one step too far. How many MiB make a GiB?")
                    .format(where=where), _("divide the bytes by 1024 twice, not three times."))
    return hint(_("{where}, your function gave {got:g}: not the L2 size in MiB. Which attribute holds the L2 size, "
                  "and in which unit?").format(where=where, got=got),
                _("read attributes[\"L2_CACHE_SIZE\"] (it is in bytes) and convert bytes to MiB."))


def check_l2_mib(l2_mib: Any, attributes: dict[str, int] | None = None) -> Feedback:
    """start-here: ``l2_mib(attributes)`` gives the L2 cache's size in MiB from a GPU's attributes. The check calls
    it on the session's attributes and on other L2 sizes: behaviour, so a number typed in for one GPU fails."""
    if is_placeholder(l2_mib):
        return not_yet(_("define l2_mib(attributes): replace ... with an expression that gives the L2 cache's size "
                         "in MiB from attributes[\"L2_CACHE_SIZE\"]."))
    if not callable(l2_mib):
        return hint(_("l2_mib is {value}, not a function: the exercise asks for a function of a GPU's "
                      "attributes, so that it holds for any GPU.").format(value=repr(l2_mib)),
                    _("keep the `def l2_mib(attributes):` line and put your expression after `return`."))
    cases = l2_cases(attributes)
    for i, case in enumerate(cases):
        size = case["L2_CACHE_SIZE"]
        where = (_("for this GPU (L2_CACHE_SIZE = {size:,} bytes)") if i == 0
                 else _("for another GPU whose L2_CACHE_SIZE is {size:,} bytes")).format(size=size)
        where = where[0].upper() + where[1:]
        got = l2_mib(dict(case))
        forgot = returned_none(l2_mib, got)
        if forgot is not None:
            return forgot
        if got is None:   # a body of `pass`: nothing computed yet
            return not_yet(_("l2_mib returned None: its body computes nothing yet. After `return`, give the L2 size "
                             "in MiB, computed from attributes."))
        if is_placeholder(got):
            return not_yet(_("l2_mib returns `...`: replace it with the L2 size in MiB, computed from attributes."))
        if isinstance(got, (str, bytes)):
            return hint(_("{where}, l2_mib returned {value}, a string: text, not a number. What does your expression "
                          "give without str() or the quotes?").format(where=where, value=repr(got)),
                        _("return the number itself (the bytes divided down to MiB), not text made from it."))
        try:
            got = float(got)
        except (TypeError, ValueError):
            return hint(_("{where}, l2_mib returned {value}: make it return a number, the size in MiB.")
                        .format(where=where, value=repr(got)),
                        _("start from attributes[\"L2_CACHE_SIZE\"], a number of bytes, and convert it."))
        if not math.isclose(got, size / 2**20, rel_tol=1e-6):
            if i > 0 and math.isclose(got, cases[0]["L2_CACHE_SIZE"] / 2**20, rel_tol=1e-6):
                return hint(_("{where}, your function gave the same figure as for this GPU: it holds for one GPU "
                              "only. Where in `attributes` does the size come from?").format(where=where),
                            _("compute the result from attributes[\"L2_CACHE_SIZE\"] instead of typing a number."))
            return _unit_hint(got, size, where)
    size = cases[0]["L2_CACHE_SIZE"]
    return correct(_("the L2 holds {mib:g} MiB ({size:,} bytes, {mb:.1f} MB), shared by every SM, and your function "
                     "gave the right size for the {others} other GPUs too. A bandwidth buffer must be many times that "
                     "(the course's sweeps use 256 MiB and more), or repeated passes over device memory read the "
                     "cache, not the memory behind it.").format(mib=size / 2**20, size=size, mb=size / 1e6,
                                                                 others=len(cases) - 1))


# (n, reads): float32 elements per array, and how many times the kernel reads each element of a and b
BUS_CASES = ((1000, 1), (1000, 3), (1, 2), (2**20, 1), (2**20, 10), (12345, 7))


def bus_bytes_rule(n: int, reads: int) -> tuple[int, int]:
    """Bytes over the bus for ``c = a + b`` on ``n`` float32, each input element read ``reads`` times: (explicit
    copies, zero-copy), with no cache keeping mapped data (for the check)."""
    return 3 * 4 * n, reads * 2 * 4 * n + 4 * n


def _copies_hint(where: str, copies: int, n: int, reads: int) -> Feedback:
    """The hint for a wrong explicit-copy count."""
    want_copies = bus_bytes_rule(n, reads)[0]
    if copies == 2 * 4 * n:
        return hint(_("{where}: your explicit-copy count leaves one array out. Which array has to come back to the "
                      "host after the kernel?").format(where=where),
                    _("the copy program moves a and b in before the kernel and c out after it: three arrays, once "
                      "each."))
    if reads > 1 and copies == want_copies * reads:
        return hint(_("{where}: your explicit copies grow with reads. Once a and b have been copied, where do the "
                      "kernel's second and later reads of them go?").format(where=where),
                    _("re-reads of a copied array hit device memory, not the bus: the copies move each array once, "
                      "whatever the kernel does."))
    return hint(_("{where}: the explicit-copy count is not right. Which arrays does the copy program move, in which "
                  "direction, and how many times?").format(where=where),
                _("count the cudaMemcpy calls in the side-by-side table and the bytes of each."))


def _zero_copy_hint(where: str, zero: int, n: int, reads: int) -> Feedback:
    """The hint for a wrong zero-copy count."""
    want_copies = bus_bytes_rule(n, reads)[0]
    if zero == want_copies:
        return hint(_("{where}: your zero-copy count ignores reads. With zero-copy nothing sits in device memory: "
                      "where does each of the kernel's reads of a and b go?").format(where=where),
                    _("every read of a mapped element crosses the bus again (the model assumes no cache keeps it): "
                      "the inputs' bytes are multiplied by reads, the output's are not."))
    if reads > 1 and zero == want_copies * reads:
        return hint(_("{where}: your zero-copy count multiplies c's bytes by reads too. How many times does the "
                      "kernel write each element of c?").format(where=where),
                    _("c is written once: only the reads of a and b repeat."))
    return hint(_("{where}: the zero-copy count is not right. Which loads and stores of the kernel cross the bus, "
                  "and how many times each?").format(where=where),
                _("with zero-copy every load and store on a, b and c crosses the bus: count the reads of a and b, "
                  "then the writes of c."))


def check_bus_bytes(bus_bytes: Any) -> Feedback:
    """start-here: ``bus_bytes(n, reads)`` returns the bytes a vector add moves over the bus, (explicit copies,
    zero-copy)."""
    if is_placeholder(bus_bytes):
        return not_yet(_("define bus_bytes(n, reads) returning (explicit copies, zero-copy): the bytes each program "
                         "moves over the bus."))
    for n, reads in BUS_CASES:
        got = bus_bytes(n, reads)
        forgot = returned_none(bus_bytes, got)
        if forgot is not None:
            return forgot
        if got is None:   # a body of `pass`: nothing computed yet
            return not_yet(_("bus_bytes returned None: its body computes nothing yet. After `return`, give the pair "
                             "(explicit copies, zero-copy)."))
        if is_placeholder(got):
            return not_yet(_("bus_bytes returns `...`: replace it with the pair (explicit copies, zero-copy)."))
        if isinstance(got, (list, np.ndarray)) and np.shape(got) == (2,):
            got = tuple(got)           # a list or array of two is a pair too
        if not (isinstance(got, tuple) and len(got) == 2):
            return hint(_("return a pair (explicit copies, zero-copy); for n = {n} you returned {value}.")
                        .format(n=n, value=repr(got)),
                        _("end with `return copies, zero_copy`: Python makes the pair from the two names."))
        copies, zero = got
        want_copies, want_zero = bus_bytes_rule(n, reads)
        where = _("n = {n}, reads = {reads}").format(n=n, reads=reads)
        if copies == n * 3 or zero == reads * 2 * n + n:
            return hint(_("{where}: you counted elements, not bytes. How many bytes does one float32 take?")
                        .format(where=where), _("multiply each element count by the size of a float32 in bytes."))
        if copies != want_copies:
            return _copies_hint(where, copies, n, reads)
        if zero != want_zero:
            return _zero_copy_hint(where, zero, n, reads)
    return correct(_("read once, both programs move the same bytes over the bus: zero-copy saves the separate copy "
                     "steps and the device memory, not traffic. Read k times, zero-copy moves the inputs k times, so "
                     "it pays when data is touched once, unless a cache serves the re-reads (an SM's L1 can, for "
                     "mapped memory, as a later lesson measures)."))


CHECKS = {"l2_mib": check_l2_mib, "bus_bytes": check_bus_bytes}
