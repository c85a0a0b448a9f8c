"""The platforms lesson's exercises (15-take-zero-copy-beyond-one-pcie-gpu): which platform class a GPU's
attributes describe (platform_class), after how many passes migrating managed memory beats zero-copy
(passes_until_migration_wins), and the prediction of what CPU traffic costs a zero-copy kernel."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..i18n import N_, _
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .choices import as_share
from .returns import returned_none

_H200 = {"INTEGRATED": 0, "PAGEABLE_MEMORY_ACCESS": 0, "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES": 0,
         "HOST_NATIVE_ATOMIC_SUPPORTED": 0, "CONCURRENT_MANAGED_ACCESS": 1, "CAN_MAP_HOST_MEMORY": 1}
# (what, attributes, class): the attributes each kind of machine reports (CUDA Programming Guide, device
# attributes; CUDA for Tegra; Grace Hopper tuning guide), as in helpers.doctor.platform_class.
PLATFORM_CASES = (
    (N_("the course's H200 (PCIe, in a VM)"), _H200, "discrete_pcie"),
    (N_("a Jetson AGX Orin"), {**_H200, "INTEGRATED": 1}, "integrated"),
    (N_("a Jetson TX2 (before I/O coherence)"), {**_H200, "INTEGRATED": 1, "CONCURRENT_MANAGED_ACCESS": 0}, "integrated"),
    (N_("a GH200 (Grace Hopper, NVLink-C2C)"), {**_H200, "PAGEABLE_MEMORY_ACCESS": 1,
                                            "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES": 1,
                                            "HOST_NATIVE_ATOMIC_SUPPORTED": 1}, "coherent_c2c"),
    (N_("a PCIe workstation GPU with HMM"), {**_H200, "PAGEABLE_MEMORY_ACCESS": 1}, "discrete_pcie"),
    (N_("a PCIe GPU whose link carries atomics"), {**_H200, "HOST_NATIVE_ATOMIC_SUPPORTED": 1}, "discrete_pcie"),
)
CLASSES = ("discrete_pcie", "integrated", "coherent_c2c")


def check_platform_class(platform_class: Callable[[dict[str, int]], Any]) -> Feedback:
    """Platforms lesson: ``platform_class(attributes)`` names the class a GPU's attributes describe."""
    if is_placeholder(platform_class):
        return _not_yet(_("define platform_class(attributes) returning 'discrete_pcie', 'integrated' or "
                          "'coherent_c2c' from a dict of device attributes."))
    for what, attributes, want in PLATFORM_CASES:
        got = platform_class(dict(attributes))
        forgot = returned_none(platform_class, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("platform_class returns `...`: return one of 'discrete_pcie', 'integrated', "
                              "'coherent_c2c'."))
        if got not in CLASSES:
            return _hint(_("return one of {join}; for {what} you returned {got!r}.").format(
                             join=', '.join(CLASSES), what=_(what), got=got),
                         _("return one of the three strings exactly as written, lower case with underscores."))
        if got == want:
            continue
        if want == "integrated":
            return _hint(_("you called {what} {got!r}. Which attribute says that the GPU and the CPU share one "
                           "DRAM? Section 1's table names it.").format(what=_(what), got=got),
                         _("test INTEGRATED first: a GPU that shares the CPU's DRAM is integrated, whatever the "
                           "other attributes say."))
        if want == "coherent_c2c":
            return _hint(_("you called {what} {got!r}. What does a coherent link let the GPU do with the CPU's "
                           "page tables and with atomics that PCIe does not? Look for the attributes that say so.").format(
                             what=_(what), got=got),
                         _("a coherent link shows as two attributes together: the GPU walks the CPU's own page "
                           "tables (the _USES_HOST_PAGE_TABLES one), and host atomics are native."))
        if attributes["PAGEABLE_MEMORY_ACCESS"] and not attributes["PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES"]:
            return _hint(_("you called {what} {got!r}. It can read pageable memory, but through HMM: the driver "
                           "mirrors the CPU's page tables and migrates pages over PCIe (section 5). Which "
                           "attribute tells HMM from ATS?").format(what=_(what), got=got),
                         _("PAGEABLE_MEMORY_ACCESS alone is HMM; only with the page-table attribute that ends in "
                           "_USES_HOST_PAGE_TABLES does the GPU use the CPU's own tables."))
        if attributes["HOST_NATIVE_ATOMIC_SUPPORTED"]:
            return _hint(_("you called {what} {got!r}. PCIe can carry atomic operations too (PCIe AtomicOps), so "
                           "native host atomics alone do not make a link coherent. What else must hold?").format(
                             what=_(what), got=got),
                         _("require the page-table attribute of ATS as well, not the atomics alone."))
        return _hint(_("you called {what} {got!r}; it reads host memory over PCIe without coherence. Which "
                       "attributes would it need for another class?").format(what=_(what), got=got),
                     _("a PCIe GPU is the class left when neither the integrated test nor the coherent-link test "
                       "holds."))
    return _correct(_("INTEGRATED says one DRAM; a coherent link shows as the GPU walking the CPU's own page "
                      "tables (ATS) with native host atomics; HMM or PCIe atomics alone still leave a PCIe GPU."))


# (seconds for 1 pass and for 8 passes, zero-copy then migrating): cases with known answers.
MIGRATION_CASES = (
    ((0.0054, 0.043), (0.0350, 0.0370)),   # migration costs ~6 zero-copy passes; then HBM is almost free
    ((0.0054, 0.043), (0.0030, 0.0045)),   # migrating wins from the first pass
    ((0.0054, 0.043), (0.0900, 0.1300)),   # each migrating pass is dearer: never within reach
    ((0.0100, 0.080), (0.0505, 0.0575)),   # the lines cross between 5 and 6 passes
    ((1.0, 8.0), (3.2, 3.9)),               # cross at k = 3.4: rounding gives 3, the first whole pass past it is 4
    ((1.0, 8.0), (0.5, 7.9)),               # migrating is cheaper from the first pass: 1, whatever the slopes
)


def _passes_with(zero_copy: tuple[float, float], migrating: tuple[float, float], extra: int) -> int | None:
    """:func:`passes_rule` with the 8-pass point taken as ``extra`` passes beyond the first (7 is right; 8 is the
    typical slip)."""
    (z1, z8), (m1, m8) = zero_copy, migrating
    z_step, m_step = (z8 - z1) / extra, (m8 - m1) / extra
    if m1 < z1:
        return 1
    if m_step >= z_step:
        return None
    return next(k for k in range(1, 10**6) if m1 + (k - 1) * m_step < z1 + (k - 1) * z_step)


def _everywhere_as_with_eight(passes: Callable[..., Any]) -> bool:
    """True when ``passes`` gives, on every case, what the 8-pass point taken as 8 extra passes gives."""
    try:
        return all(passes(z, m) == _passes_with(z, m, 8) for z, m in MIGRATION_CASES)
    except Exception:  # noqa: BLE001 - the learner's function may fail on a case: then it is not this slip
        return False


def passes_rule(zero_copy: tuple[float, float], migrating: tuple[float, float]) -> int | None:
    """Fewest whole passes k >= 1 at which migrating takes less time than zero-copy, with each time a straight
    line through its 1-pass and 8-pass points; None if it never does (for the check and the tests)."""
    (z1, z8), (m1, m8) = zero_copy, migrating
    z_step, m_step = (z8 - z1) / 7, (m8 - m1) / 7
    if m1 < z1:
        return 1
    if m_step >= z_step:
        return None
    k = 1 + math.floor((m1 - z1) / (z_step - m_step)) + 1
    while k > 1 and m1 + (k - 2) * m_step < z1 + (k - 2) * z_step:
        k -= 1
    return k


def _empty_body(function: Callable[..., Any]) -> bool:
    """True for a function whose body is only ``...`` or ``pass`` (it returns None without computing anything)."""
    def empty(*args: Any) -> None:
        ...

    code = getattr(function, "__code__", None)
    return code is not None and code.co_code == empty.__code__.co_code


def check_passes_until_migration_wins(passes: Callable[..., Any], *, measured: list[dict[str, Any]] | None = None,
                                      nbytes: int | None = None) -> Feedback:
    """Platforms lesson: ``passes(zero_copy, migrating)``, each a (1-pass seconds, 8-pass seconds) pair, returns
    the fewest passes at which migrating managed memory takes less time than zero-copy, or None."""
    if is_placeholder(passes) or _empty_body(passes):
        return _not_yet(_("define passes_until_migration_wins(zero_copy, migrating): each argument is (seconds for "
                          "1 pass, seconds for 8 passes); return the fewest whole passes k at which migrating "
                          "takes less time, or None if it never does."))
    for zero_copy, migrating in MIGRATION_CASES:
        got = passes(zero_copy, migrating)
        if got is Ellipsis:  # None is an answer here (migrating never wins), so only `...` is the placeholder
            return _not_yet(_("passes_until_migration_wins returns `...`: return a whole number of passes or None."))
        want = passes_rule(zero_copy, migrating)
        if want is None:
            if got is not None:
                return _hint(_("for zero-copy {zero_copy} and migrating {migrating} you returned {got!r}. Compare "
                               "what ONE MORE pass costs on each side: if a migrating pass is not cheaper, can it "
                               "ever catch up?").format(zero_copy=zero_copy, migrating=migrating, got=got),
                             _("the cost of one more pass is (8-pass time - 1-pass time) / 7 on each side: when "
                               "migrating's is not smaller, return None."))
            continue
        if got is None and want == 1:
            return _hint(_("for zero-copy {zero_copy} and migrating {migrating} you returned None, but migrating "
                           "already takes less time for one pass. What does the function answer before it compares "
                           "the cost of more passes?").format(zero_copy=zero_copy, migrating=migrating),
                         _("compare the 1-pass times first: when migrating's is already lower, return 1."))
        if got is None:
            return _hint(_("for zero-copy {zero_copy} and migrating {migrating} you returned None, but migrating "
                           "does catch up. What does each extra pass cost on each side, once the first is paid?").format(
                             zero_copy=zero_copy, migrating=migrating),
                         _("the cost of one more pass is (8-pass time - 1-pass time) / 7 on each side; if "
                           "migrating's is smaller, its line crosses zero-copy's at some k."))
        if isinstance(got, (float, np.floating)) and not float(got).is_integer():
            return _hint(_("you returned {got:.3f} passes: a kernel makes whole passes. Which whole number is the "
                           "first one past the crossing?").format(got=got),
                         _("return the smallest whole k at which migrating's time is below zero-copy's: test whole "
                           "k one by one, or round the crossing the right way."))
        if not isinstance(got, (int, np.integer, float, np.floating)):
            return _hint(_("return a whole number of passes or None; you returned {got!r}.").format(got=got),
                         _("return k itself (an int), or None when migrating never wins."))
        if int(got) == want:
            continue
        if _everywhere_as_with_eight(passes):
            return _hint(_("for zero-copy {zero_copy} and migrating {migrating} you returned {got}. From the "
                           "1-pass time to the 8-pass time, how many extra passes are there?").format(
                             zero_copy=zero_copy, migrating=migrating, got=int(got)),
                         _("8 passes are the first pass plus 7 more: the cost of one more pass is (8-pass time - "
                           "1-pass time) / 7 on each side."))
        if int(got) == 8 or int(got) == 1:
            return _hint(_("for zero-copy {zero_copy} and migrating {migrating} you returned {got}: the two "
                           "measured points are only where the lines are pinned. Write each time as a line in k "
                           "(first pass, then a cost per extra pass) and find where they cross.").format(
                             zero_copy=zero_copy, migrating=migrating, got=int(got)),
                         _("time(k) = 1-pass time + (k - 1) x cost of one more pass, on each side; find the first "
                           "whole k with migrating's time below zero-copy's."))
        return _hint(_("for zero-copy {zero_copy} and migrating {migrating} you returned {got}. Is that the FIRST "
                       "whole k at which migrating takes less time? Try your k and k - 1 in both lines.").format(
                         zero_copy=zero_copy, migrating=migrating, got=int(got)),
                     _("write both times as lines, time(k) = 1-pass time + (k - 1) x cost of one more pass, and "
                       "evaluate them at your k and at k - 1: migrating must be below zero-copy at k, not at k - 1."))
    extra = ""
    if measured and nbytes:
        def seconds(kind: str, k: int) -> float:
            row = next(r for r in measured if r["memory"] == kind and r["nbytes"] == nbytes and r["passes"] == k)
            return float(np.median(row["seconds"]))

        zc = (seconds("mapped", 1), seconds("mapped", 8))
        mig = (seconds("managed, migrating", 1), seconds("managed, migrating", 8))
        found = passes_rule(zc, mig)  # the true figure, not the learner's (which passed every case above)
        extra = (_(" On this run, for {nbytes} MiB: ").format(nbytes=nbytes >> 20) + (_("from {found} passes on, migrating wins.").format(
                                                                  found=found)
                                                               if found else _("migrating never wins.")))
    return _correct(_("zero-copy pays the link on every pass; migration pays it once (page faults included), then "
                      "each pass reads HBM, so the reuse count decides.") + extra)


def share_with_threads(traffic: Any, threads: int = 8) -> float:
    """The zero-copy kernel's read rate with ``threads`` CPU threads copying memory, as a share of its rate alone."""
    return float(traffic.one(cpu_threads=threads)["GBps"] / traffic.one(cpu_threads=0)["GBps"])


def compare_prediction(predicted: Any, traffic: Any) -> str:
    """Compare the learner's guess of the zero-copy kernel's rate with 8 CPU threads streaming (a share of its rate
    alone) with the run: ``traffic`` is the cpu_traffic result (or the share itself). Works on the untouched ``...``."""
    if hasattr(traffic, "one"):
        share = share_with_threads(traffic)
        where = (_("measured live on {gpu}") if traffic.live else _("recorded on {gpu}")).format(gpu=traffic.gpu)
        seen = (_("Measured: with 8 CPU threads copying memory, the kernel read at {share:.0%} of its rate alone "
                  "({where}).").format(share=share, where=where))
    else:
        share = float(traffic)
        seen = _("Measured: with 8 CPU threads copying memory, the kernel read at {share:.0%} of its rate alone.").format(
                   share=share)
    if is_placeholder(predicted):
        return _("No prediction was made (predicted_share_with_8_threads is still `...`). {seen}").format(seen=seen)
    if (isinstance(predicted, (bool, np.bool_)) or not isinstance(predicted, (int, float, np.integer, np.floating))
            or not np.isfinite(predicted) or predicted <= 0):
        return _("A prediction here is a positive number, a share of the kernel's rate alone (e.g. 0.8 for 80%), "
                 "without quotes; you gave {predicted!r}. {seen}").format(predicted=predicted, seen=seen)
    predicted, read = as_share(float(predicted))
    text = read + _("You predicted {predicted:.0%}. {seen} ").format(predicted=float(predicted), seen=seen)
    if abs(predicted - share) <= 0.1:
        return text + _("Your guess was within 10 points of the run.")
    if predicted < share:
        return text + (_("The kernel lost less than you expected: in this run the link, not the host's memory "
                         "controllers, limits it (section 4)."))
    return text + _("The kernel lost more than you expected: the CPU's traffic competes for the same memory "
                    "(section 4).")


CHECKS = {"platform_class": check_platform_class, "passes_until_migration_wins": check_passes_until_migration_wins}


def namespace() -> dict[str, Any]:
    """Names the platforms lesson's exercise cells use besides NumPy."""
    return {"math": math}
