"""measure-latency's exercises and its prediction.

* ``chase``: the learner writes the dependent loop of ``chase_timed``, a CUDA kernel that measures the latency of one
  load (the pointer chase); the check runs the source over random cycles on the CPU backend in replay and, live, on
  the GPU over mapped memory (:func:`helpers.exercises.live_module`), where it also reports the ns per load it timed.
* ``line_cycle``: the learner builds the chase's table, one random cycle through every 128-byte line of a buffer;
  the check follows it (one cycle, every line once, each step to a new line, no constant stride).
* :func:`compare_prediction`: whether the CPU's cache state speeds a zero-copy load up, against the run and the
  committed records;
  :func:`compare_value`, the comparing text that keep-enough-bytes-in-flight also uses.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable

import numpy as np

from ..cpu.errors import CxxCompilerNotFoundError
from ..i18n import N_, _
from . import (Feedback, correct as _correct, hint as _hint, is_placeholder, kernel_failure_hint, live_module,
               not_yet as _not_yet)
from .choices import as_share, chosen
from .returns import returned_none

KERNEL = "chase_timed"
PER_LINE = 32                 # uint32 elements per 128-byte line


def _reference_chase(table: np.ndarray, start: int, steps: int) -> int:
    j = int(start)
    for _ in range(steps):
        j = int(table[j])
    return j


# (lines in the cycle, seed, steps): a short cycle, a long chase round it several times, one step over a large cycle
CHASE_CASES = ((8, 1, 5), (64, 2, 100), (1024, 3, 1), (256, 4, 37))
LIVE_BYTES, LIVE_STEPS = 64 * 2**20, 8192   # live: a chase over mapped memory far larger than the L2, timed


def chase_case(lines: int, seed: int, steps: int) -> tuple[np.ndarray, int, int]:
    """(table, start, steps) of one chase case: a random cycle over ``lines`` 128-byte lines, from its first element."""
    from ..experiments.latency import LINE, random_cycle

    table, order = random_cycle(lines * LINE, seed=seed)
    return table, int(order[0]), steps


def _run_chase(source: str, live: bool) -> Callable[[np.ndarray, int, int], tuple[int, int]]:
    """The learner's ``chase_timed`` as a function (table, start, steps) -> (where it ended, ns it timed), run on the
    GPU over mapped memory live, on the CPU backend in replay."""
    if live:
        from ..memory import gpu

        fn = live_module(source).get_function(KERNEL)
        mapped_empty, pointer, free = gpu.mapped_empty, gpu.device_pointer, gpu.free
    else:
        from .. import cpu

        fn = cpu.SourceModule(source, name="chase.cu").get_function(KERNEL)
        mapped_empty, pointer, free = cpu.mapped_empty, cpu.device_pointer, cpu.free

    def run(table: np.ndarray, start: int, steps: int) -> tuple[int, int]:
        next_, out = mapped_empty(table.size, np.uint32), mapped_empty(2, np.uint64)
        try:
            next_[:], out[:] = table, 0
            fn(pointer(next_), np.uint32(start), np.uint64(steps), pointer(out), block=(1, 1, 1), grid=(1, 1))
            if live:
                gpu.synchronize()
            return int(out[0]), int(out[1])
        finally:
            free(next_, out)
    return run


def check_chase(source: str) -> Feedback:
    """measure-latency: the learner's CUDA source of ``chase_timed(next, start, steps, out)``, whose single thread
    does ``steps`` dependent loads from ``start`` and writes where it ended to out[0] (and the ns to out[1])."""
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet(_("write the loop of chase_timed where the TODO is: `steps` loads, each at the index the "
                          "load before it returned."))
    from ..mode import detect

    live = detect().live
    try:  # judged on the CPU backend first, where a stray load is caught safely; live, then on the GPU too
        try:
            run = _run_chase(source, live=False)
        except CxxCompilerNotFoundError:
            if not live:
                raise
            run = _run_chase(source, live=True)
        ended = [(case, run(*chase_case(*case))) for case in CHASE_CASES]
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        return kernel_failure_hint(exc, KERNEL, _("a load outside the table"),
                                   _(". The table holds element indices: which index may a load use?"),
                                   _("each load's index is a value read from the table, starting from `start`."),
                                   name_note=_(' (extern "C" keeps the name unmangled)'))
    if all(got == chase_case(*case)[1] for case, (got, _) in ended):
        return _not_yet(_("the kernel ran but j never left `start`: write the loop where the TODO is."))
    cases = [(chase_case(*case), got) for case, (got, _) in ended]
    if all(got == _reference_chase(*case) for case, got in cases):
        return _correct_chase(source, live)
    for wrong, question, step in _TYPICAL_CHASES:
        if all(got == wrong(*case) for case, got in cases):
            return _hint(_(question), _(step))
    for (table, start, steps), got in cases:
        if got != _reference_chase(table, start, steps):
            return _hint(_("on the {size}-line cycle from element {start}, after {steps} steps your kernel ended "
                           "at element {got}. Follow two steps by hand: which element does each load reach?").format(
                             size=table.size // PER_LINE, start=start, steps=steps, got=got),
                         _("start at j = start and replace j by the value stored at next[j], once per "
                           "step."))
    return _correct_chase(source, live)


# Typical wrong chases, as what they end at: (table, start, steps) -> element; the question; the smaller step.
_TYPICAL_CHASES: tuple[tuple[Callable[[np.ndarray, int, int], int], str, str], ...] = (
    (lambda t, start, n: int(t[n - 1]),
     N_("each load's address came from the loop counter, known before any load returns: the GPU can issue them all at "
        "once, and the kernel would time bandwidth, not one load. What must each address depend on?"),
     N_("index `next` with the value the previous load returned (the current j), not with the counter.")),
    (lambda t, start, n: int(t[start]),
     N_("every load read the same element, the one `start` names: the chase never moved on. Where must each load's "
        "address come from for the loads to wait on each other?"),
     N_("the address of each load is the value the previous load returned: index `next` with the current j.")),
    (lambda t, start, n: _reference_chase(t, start, n + 1),
     N_("off by one step: one load too many. After `steps` steps, how many loads has the thread done?"),
     N_("exactly `steps` loads: check your loop's bounds (how many times the body runs).")),
    (lambda t, start, n: _reference_chase(t, start, n - 1),
     N_("off by one step: one load too few. After `steps` steps, how many loads has the thread done?"),
     N_("exactly `steps` loads: check your loop's bounds (how many times the body runs).")),
)


def _correct_chase(source: str, live: bool) -> Feedback:
    """The verdict on a chase that ended right on the CPU backend; live, the same source also runs on the GPU over
    mapped memory, where it must end right too, and times one chase far larger than the L2."""
    where = _("on the CPU backend (no GPU timer there; live, the same source times the loads)")
    if live:
        try:
            from ..experiments.latency import random_cycle

            run = _run_chase(source, live=True)
            for case in CHASE_CASES:
                table, start, steps = chase_case(*case)
                if run(table, start, steps)[0] != _reference_chase(table, start, steps):
                    return _hint(_("on the GPU your chase ended elsewhere than on the CPU. Does j depend on "
                                   "anything but `next`, `start` and `steps`?"),
                                 _("declare and set every variable the loop "
                                   "reads."))
            table, order = random_cycle(LIVE_BYTES, seed=7)
            _table, ns = run(table, int(order[0]), LIVE_STEPS)
            where = (_("on the GPU, where it timed {ns:,.0f} ns per load over {LIVE_BYTES} MiB of mapped memory "
                       "(the cycle was just written by the CPU)").format(
                         ns=ns / LIVE_STEPS, LIVE_BYTES=LIVE_BYTES // 2**20))
        except Exception as exc:  # noqa: BLE001 (a check never raises)
            return kernel_failure_hint(exc, KERNEL, _("a load outside the table"), "", "")
    return _correct(_("each load's address is the value the previous load returned, so no load can start before "
                      "the one before it has come back: the timed loop over steps is one load's latency. It ran "
                      "{where}.").format(where=where))


# (lines, seed): a tiny buffer, a medium one, one larger than the L1 of an SM
CYCLE_CASES = ((8, 1), (64, 2), (1024, 3))


def _follow(table: np.ndarray, lines: int) -> tuple[list[int], int]:
    """Element indices the chase visits from element 0 until it comes back or has taken ``lines`` steps, and the
    element it stands on then."""
    seen, j = [], 0
    for _ in range(lines):
        seen.append(j)
        j = int(table[j])
        if j == 0 or not 0 <= j < table.size:
            break
    return seen, j


def check_line_cycle(line_cycle: Callable[[int, int], Any]) -> Feedback:
    """measure-latency: ``line_cycle(lines, seed)`` returns a uint32 chase table over ``lines`` 128-byte lines in
    which the chase from element 0 visits every line once, at its first element, in an unpredictable order, and
    comes back to 0."""
    if is_placeholder(line_cycle) or not callable(line_cycle):
        return _not_yet(_("define line_cycle(lines, seed): a table of lines x 32 uint32 elements in which the "
                          "chase from element 0 visits every line once, in a random order, and comes back."))
    for lines, seed in CYCLE_CASES:
        got = line_cycle(lines, seed)
        forgot = returned_none(line_cycle, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("line_cycle returns nothing yet: return the table."))
        table = np.asarray(got)
        if table.ndim != 1 or table.size != lines * PER_LINE or not np.issubdtype(table.dtype, np.integer):
            return _hint(_("for {lines} lines you returned {dtype} of shape {shape}. The table is the buffer the "
                           "kernel chases: how many uint32 elements do that many 128-byte lines hold?").format(
                             lines=lines, dtype=table.dtype, shape=table.shape),
                         _("return a 1-D integer array with one entry per uint32 element of the buffer (most of "
                           "them unused), e.g. made with np.zeros(..., np.uint32)."))
        seen, end = _follow(table, lines)
        if any(j % PER_LINE for j in seen) or not 0 <= end < table.size or end % PER_LINE:
            return _hint(_("the chase landed inside a line, not at its first element. Two loads in one 128-byte "
                           "line: what serves the second? Which elements may the chase visit?"),
                         _("let every entry you write, and every index you write it at, be the first element of a "
                           "line: line number times 32."))
        if len(seen) < lines:
            return _hint(_("the chase from element 0 came back after {n_seen} of {lines} lines: it runs round a "
                           "cycle that misses the other lines. Does each line lead to the next one of a single "
                           "visiting order, and does the last line of that order lead back to the first?").format(
                             n_seen=len(seen), lines=lines),
                         _("build one visiting order of all lines (a permutation): the element of order[k] holds "
                           "order[k + 1], and the last one holds order[0]. A permutation used as 'line i goes to "
                           "line perm[i]' makes several cycles."))
        if end != 0 or len(set(seen)) != lines:
            return _hint(_("after {lines} steps the chase did not come back to element 0 having visited each line "
                           "once. Does every line's entry lead to a line not yet visited?").format(lines=lines),
                         _("build the table from one visiting order of all lines, each leading to the next."))
        strides = Counter((b - a) // PER_LINE % lines for a, b in zip(seen, seen[1:] + [0]))
        if lines >= 64 and strides.most_common(1)[0][1] > lines // 2:
            stride = strides.most_common(1)[0][0]
            return _hint(_("most steps go {stride} line(s) further on: the next address is predictable, so a "
                           "prefetcher could fetch it ahead, and neighbouring lines share DRAM pages. What order "
                           "leaves the hardware nothing to guess?").format(stride=stride),
                         _("visit the lines in a random order: np.random.default_rng(seed).permutation(lines)."))
    return _correct(_("one cycle through every line, each step to a line not seen for a whole cycle, in an order "
                      "nothing can predict: no load can be served by a cache or a prefetch. zc.experiments.latency "
                      "builds its tables this way."))


def compare_value(predicted: Any, measured: float, what: str, *, fmt: str = "{:.1f}", why: str = "") -> str:
    """Text comparing a learner's prediction with the measured value; ``...`` (untouched) says none was made."""
    shown = fmt.format(measured)
    if predicted is None or predicted is Ellipsis:
        return (_("No prediction made (the cell still holds `...`). Measured {what}: {shown}. Next time, write "
                  "your guess down first: a surprise is how a measurement teaches.").format(what=what, shown=shown))
    try:
        guess = float(predicted)
    except (TypeError, ValueError):
        return _("Your prediction {predicted!r} is not a number. Measured {what}: {shown}.").format(
                   predicted=predicted, what=what, shown=shown)
    guess, read = as_share(guess) if "%" in fmt else (guess, "")
    if guess <= 0 or measured <= 0:
        return _("You predicted {guess}; measured {what}: {shown}. {why}").format(
            guess=fmt.format(guess), what=what, shown=shown, why=why).strip()
    factor = measured / guess
    if 0.8 <= factor <= 1.25:
        verdict = _("Within 25%: a good model of the machine.")
    elif factor > 1:
        verdict = _("The run gave {factor:.1f}x your guess.").format(factor=factor)
    else:
        verdict = _("The run gave {value:.1f}x less than your guess.").format(value=1 / factor)
    return read + _("You predicted {guess}; measured {what}: {shown}. {verdict} {why}").format(
        guess=fmt.format(guess), what=what, shown=shown, verdict=verdict, why=why).strip()


def latency_factor(latency: Any) -> tuple[float, float]:
    """(zero-copy ns, device-memory ns) per dependent load of ``experiments.latency()``: the zero-copy chase over a
    table pushed out of the CPU's caches."""
    zero_copy = latency.select(memory="zero_copy", cpu_cache="evicted") or latency.select(memory="zero_copy")
    return float(zero_copy[0]["load_ns"]), float(latency.select(memory="device")[0]["load_ns"])


CPU_CACHE_CHOICES = ("faster", "same", "slower")


def cpu_cache_truth(latency: Any, directory: Any = None) -> tuple[str, str]:
    """(the answer the run and the committed records support, the figures that say why): "faster" or "slower" only
    where the difference is beyond this run's spread and of one sign across the records
    (:func:`helpers.analysis.cpu_cache.judge`, as the lesson's findings sentence judges it), "same" otherwise."""
    from ..analysis import cpu_cache

    j = cpu_cache.judge(latency, directory)
    why = (_("Measured: just written minus pushed out of the CPU's caches = {round:+,d} ns per load ({origin}); "
             "across {count} H200 runs it ran from {round2:+,d} to {round3:+,d} ns. The next cell's table and "
             "sentence say what that supports.").format(
               round=round(j.difference), origin=latency.origin(), count=j.across.count, round2=round(j.across.low), round3=round(j.across.high)))
    return j.answer, why


def compare_prediction(predicted: Any, latency: Any) -> str:
    """measure-latency's prediction, ``zc.exercises.compare("07", predicted_cpu_cache, latency)``: whether a zero-copy
    load over a table the CPU has just written is "faster", the "same" or "slower" than over one pushed out of the
    CPU's caches, against the run judged with the committed records."""
    answer, why = cpu_cache_truth(latency)
    if is_placeholder(predicted):
        return _("You made no prediction (predicted_cpu_cache is still `...`). {why}").format(why=why)
    choice = chosen(predicted, CPU_CACHE_CHOICES)
    if choice is None:
        return _("Predict one of {join}; you wrote {predicted!r}. {why}").format(
                   join=', '.join(map(repr, CPU_CACHE_CHOICES)), predicted=predicted, why=why)
    predicted = choice
    if predicted == answer:
        return _("You predicted {predicted!r}, and the run with the records says {answer!r}. {why}").format(
                   predicted=predicted, answer=answer, why=why)
    if predicted == "faster":
        lesson = (_("A PCIe read of a line still in a CPU cache can be answered from that cache (Going deeper), so "
                    "'faster' was a fair guess; but"))
    else:
        lesson = _("A changed CPU cache state could move the figure either way, but")
    return (_("You predicted {predicted!r}; the run with the records says {answer!r}. {lesson} a difference counts "
              "only where it keeps one sign across runs. {why}").format(
                predicted=predicted, answer=answer, lesson=lesson, why=why))


CHECKS = {"chase": check_chase, "line_cycle": check_line_cycle}
