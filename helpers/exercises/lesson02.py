"""measure-what-pinning-buys's exercises: the time pinning saves per copy, from the measured rows; a model of the
staged pageable copy.

Also the comparison after measure-what-pinning-buys's prediction cell (tagged ``predict``):
:func:`compare_prediction`, which :func:`helpers.exercises.compare` calls. The checks use fixed rows first, then
the run's own ``copies`` (recorded in replay, this GPU's live), so they hold in both modes.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..analysis import spread
from ..i18n import _
from ..tables import Text
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

# Fixed rows: distinct rates per direction, so an answer that ignores the direction or the memory kind shows.
_RATES = {("htod", "pinned"): 50.0, ("htod", "pageable"): 10.0, ("dtoh", "pinned"): 40.0,
          ("dtoh", "pageable"): 16.0, ("htoh", "host_memcpy"): 12.0}
_SIZES = (2**20, 2**30)


def _fixed_copies() -> Any:
    from ..experiments import Result

    rows = [{"direction": d, "host_memory": m, "nbytes": n, "GBps": rate * (0.5 if n < 2**30 else 1.0),
             "seconds": [n / (rate * (0.5 if n < 2**30 else 1.0) * 1e9)] * 3}
            for (d, m), rate in _RATES.items() for n in _SIZES]
    return Result("memcpy", {"sizes": list(_SIZES)}, rows, False)


def _one_copy(copies: Any, direction: str, memory: str, nbytes: int, unit: float = 1e9) -> float:
    return nbytes / (copies.one(direction=direction, host_memory=memory, nbytes=nbytes)["GBps"] * unit)


def saved(copies: Any, nbytes: int, direction: str) -> float:
    """Seconds one copy of ``nbytes`` saves from pinned rather than pageable memory, for the check."""
    return _one_copy(copies, direction, "pageable", nbytes) - _one_copy(copies, direction, "pinned", nbytes)


def _close(a: Any, b: float) -> bool:
    try:
        return bool(np.isclose(float(a), b, rtol=1e-6, atol=0.0))
    except (TypeError, ValueError):
        return False


def check_seconds_saved(seconds_saved: Callable[[Any, int, str], float], *, copies: Any = None) -> Feedback:
    """measure-what-pinning-buys: ``seconds_saved(copies, nbytes, direction)``: pageable time minus pinned time of
    one copy."""
    if is_placeholder(seconds_saved):
        return _not_yet(_("define seconds_saved(copies, nbytes, direction) returning the seconds one copy saves."))
    fixed = _fixed_copies()
    for nbytes in _SIZES:
        for direction in ("htod", "dtoh"):
            got = seconds_saved(fixed, nbytes, direction)
            forgot = returned_none(seconds_saved, got)
            if forgot is not None:
                return forgot
            if is_placeholder(got):
                return _not_yet(_("seconds_saved returns `...`: replace it with the seconds one copy saves."))
            want = saved(fixed, nbytes, direction)
            if _close(got, want):
                continue
            pageable, pinned = (_one_copy(fixed, direction, m, nbytes) for m in ("pageable", "pinned"))
            where = _("for {nbytes} bytes {direction} you returned {got!r}").format(
                        nbytes=nbytes, direction=direction, got=got)
            expected = _("one copy saves {want:.6g} s there").format(want=want)
            if not isinstance(got, (int, float, np.floating, np.integer)):
                return _hint(_("return one number of seconds; {where}.").format(where=where),
                             _("compute the time of each copy as a number, then return their difference alone."))
            if _close(got, -want):
                return _hint(_("{where}: the sign is reversed. Which copy takes longer, so which time comes first "
                               "in the difference?").format(where=where),
                             _("time saved = the slower copy's time - the faster copy's time."))
            if _close(got, want * 1e3) or _close(got, want * 1e6):
                return _hint(_("{where}: return seconds, not milliseconds or microseconds. Where does your code "
                               "scale the result?").format(where=where),
                             _("drop the factor 1e3 (or 1e6): bytes / (bytes per second) is "
                               "already seconds."))
            if _close(got, want * 1e9):
                return _hint(_("{where}: 10^9 times too large. The rows give GB/s: what does nbytes / GBps leave "
                               "out?").format(where=where),
                             _("turn GB/s into bytes per second first (GBps * 1e9), then divide the bytes by it."))
            if _close(got, want * 1e9 / 2**30):
                return _hint(_("{where}: GB/s in these rows means 10^9 bytes per second, not 2^30. How many bytes "
                               "per second is one GB/s?").format(where=where),
                             _("multiply GBps by 1e9, not by 2**30, to get bytes per "
                               "second."))
            if _close(got, pageable / pinned) or _close(got, pinned / pageable):
                return _hint(_("{where}: that is the ratio of the two times (how many times faster), not the time "
                               "saved. Which operation turns two times into the time saved?").format(where=where),
                             _("subtract the two times instead of dividing them."))
            rate = {m: fixed.one(direction=direction, host_memory=m, nbytes=nbytes)["GBps"] for m in ("pinned", "pageable")}
            if _close(got, nbytes / ((rate["pinned"] - rate["pageable"]) * 1e9)):
                return _hint(_("{where}: rates do not subtract like times. What does subtracting two rates mean "
                               "for one copy?").format(where=where),
                             _("turn each rate into the time of one copy first (bytes over bytes per "
                               "second), then subtract the times."))
            other = "dtoh" if direction == "htod" else "htod"
            if _close(got, saved(fixed, nbytes, other)):
                return _hint(_("{where}: you used the {other} rows. Which argument says the direction?").format(
                                 where=where, other=other),
                             _("pass direction=direction to copies.one(...), not a fixed string."))
            if _close(got, _one_copy(fixed, "htoh", "host_memcpy", nbytes) - pinned):
                return _hint(_("{where}: you used the host_memcpy rows (a CPU copy). Which host_memory value do "
                               "the pageable copies have?").format(where=where),
                             _("the pageable rows have host_memory='pageable'."))
            return _hint(_("{where}. How long does one copy of nbytes take at a row's GBps, and which two copies "
                           "does the exercise compare?").format(where=where),
                         _("{expected}. Take each row with copies.one(direction=..., host_memory=..., nbytes=...), "
                           "turn its GBps into the seconds of one copy, and compare pageable with pinned.").format(
                             expected=expected))
    extra = ""
    if copies is not None:
        largest = int(max(copies.column("nbytes")))
        mine, want = float(seconds_saved(copies, largest, "htod")), saved(copies, largest, "htod")
        if not _close(mine, want):
            return _hint(_("right on the fixed rows, but on this run's rows it gives {mine:.6g} s for {largest} "
                           "bytes host-to-device. What do this run's rows have that the fixed ones do not?").format(
                             mine=mine, largest=largest),
                         _("the answer there is {want:.6g} s: look up the rows with the `copies` argument your "
                           "function is given, not a table of your own.").format(want=want))
        extra = (_(" On this run's rows ({gpu}) pinning saves {mine:.1f} ms per {largest:.0f} MiB host-to-device "
                   "copy.").format(gpu=copies.gpu, mine=mine * 1e3, largest=largest / 2**20))
    return _correct(_("a copy takes nbytes / rate, so the time saved is the difference of the two times; a factor "
                      "in bandwidth is seconds saved on every copy, which adds up when a program copies in a loop.")
                    + extra)


# --------------------------------------------------------------------------- the staged (pageable) copy
STAGE_CASES = ((2**30, 2**21, 10.0, 50.0), (2**30, 2**30, 10.0, 50.0), (2**26, 2**16, 50.0, 10.0),
               (2**24, 2**22, 20.0, 20.0), (2**22, 2**20, 12.0, 55.0))


def staged(nbytes: int, chunk: int, host_GBps: float, dma_GBps: float) -> float:
    """Seconds for ``nbytes`` staged in chunks: CPU copy of chunk i overlaps the DMA of chunk i-1, for the check."""
    k = nbytes // chunk
    h, d = chunk / (host_GBps * 1e9), chunk / (dma_GBps * 1e9)
    return h + d + (k - 1) * max(h, d)


def check_staged_seconds(staged_seconds: Callable[[int, int, float, float], float], *, copies: Any = None) -> Feedback:
    """measure-what-pinning-buys: ``staged_seconds(nbytes, chunk, host_GBps, dma_GBps)`` models a pageable copy
    staged in chunks.

    With ``copies`` (this run's memcpy result) the message compares the model, fed the measured host-copy and
    pinned-DMA rates, with the measured pageable copy.
    """
    if is_placeholder(staged_seconds):
        return _not_yet(_("define staged_seconds(nbytes, chunk, host_GBps, dma_GBps) returning seconds."))
    for nbytes, chunk, host, dma in STAGE_CASES:
        got = staged_seconds(nbytes, chunk, host, dma)
        forgot = returned_none(staged_seconds, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("staged_seconds returns `...`: replace it with the pipeline's time in seconds."))
        want = staged(nbytes, chunk, host, dma)
        if _close(got, want):
            continue
        k, h, d = nbytes // chunk, chunk / (host * 1e9), chunk / (dma * 1e9)
        where = _("for {nbytes} bytes in {chunk}-byte chunks at {host:g} and {dma:g} GB/s you returned {got!r}").format(
                    nbytes=nbytes, chunk=chunk, host=host, dma=dma, got=got)
        expected = _("the pipeline takes {want:.6g} s there").format(want=want)
        if not isinstance(got, (int, float, np.floating, np.integer)):
            return _hint(_("return one number of seconds; {where}.").format(where=where),
                         _("compute the pipeline's total time as a number and return it alone."))
        if _close(got, want * 1e3):
            return _hint(_("{where}: return seconds, not milliseconds. Where does your code scale the result?").format(
                             where=where),
                         _("drop the factor 1e3: bytes / (bytes per second) is already seconds."))
        if _close(got, want * 1e9 / 2**30):
            return _hint(_("{where}: GB/s means 10^9 bytes per second here, not 2^30. How many bytes per second is "
                           "one GB/s?").format(where=where),
                         _("a chunk takes chunk / (GBps * 1e9) seconds in each stage."))
        if _close(got, k * (h + d)):
            return _hint(_("{where}: that is the two copies one after the other, with no overlap. What does the "
                           "CPU do while the copy engine DMAs chunk i?").format(where=where),
                         _("with two staging buffers the CPU already copies chunk i+1 while chunk i is sent: after "
                           "the first chunk, each further chunk costs only the slower of the two stages."))
        if _close(got, k * max(h, d)):
            return _hint(_("{where}: perfect overlap forgets the pipeline's fill and drain. What overlaps the "
                           "first chunk's CPU copy, and the last chunk's DMA?").format(where=where),
                         _("nothing does: the DMA has nothing to send before the first chunk is staged. The first "
                           "chunk pays both stages, each further one the slower stage."))
        if _close(got, h + d + k * max(h, d)) or _close(got, h + d + (k - 2) * max(h, d)):
            return _hint(_("{where}: an off-by-one in the chunk count. After the first chunk, how many chunks are "
                           "left?").format(where=where),
                         _("there are k = nbytes // chunk chunks; the first pays both stages, so the "
                           "slower stage is added once for each of the others."))
        if _close(got, h + d + (k - 1) * min(h, d)):
            return _hint(_("{where}: each further chunk adds the faster stage, min(h, d). Once the pipeline is "
                           "full, can it run faster than its slower stage, or is the pace that of the slower one, "
                           "not min?").format(where=where),
                         _("the faster stage waits for the slower one, so each further chunk adds max(h, d), not "
                           "min."))
        return _hint(_("{where}. How long does one chunk take in each stage, and which stage sets the pace once "
                       "the pipeline is full?").format(where=where),
                     _("{expected}. With h = chunk / (host_GBps * 1e9) and d = chunk / (dma_GBps * 1e9), the first "
                       "chunk costs h + d; what does each of the other chunks add?").format(expected=expected))
    extra = ""
    if copies is not None and copies.select(host_memory="host_memcpy"):
        n = int(max(copies.column("nbytes")))
        host = copies.one(direction="htoh", host_memory="host_memcpy", nbytes=n)["GBps"]
        dma = copies.one(direction="htod", host_memory="pinned", nbytes=n)["GBps"]
        pageable = n / (copies.one(direction="htod", host_memory="pageable", nbytes=n)["GBps"] * 1e9)
        whole, chunked = (float(staged_seconds(n, c, host, dma)) for c in (n, 2**21))
        extra = (_(" Fed this run's rates for {n:.0f} MiB (host memcpy {host:.1f} GB/s, pinned DMA {dma:.1f} "
                   "GB/s), it gives {whole:.1f} ms staged in one piece and {chunked:.1f} ms in 2 MiB chunks (a "
                   "size picked for this exercise: the CUDA documentation does not give the driver's), "
                   "{chunked2:.2f} ms above the slower copy alone (the staging cell's 'overlapped'): the chunk "
                   "that fills the pipeline; the measured pageable copy took {pageable:.1f} ms.").format(
                     n=n / 2**20, host=host, dma=dma, whole=whole * 1e3, chunked=chunked * 1e3,
                     chunked2=(chunked - max(n / (host * 1e9), n / (dma * 1e9))) * 1e3, pageable=pageable * 1e3))
    return _correct(_("a pipeline runs at its slowest stage once it is full, so chunked staging costs about the "
                      "slower of the two copies, plus one chunk of the faster to fill it.") + extra)


CHECKS = {"seconds_saved": check_seconds_saved, "staged_seconds": check_staged_seconds}


# --------------------------------------------------------------------------- the prediction
def compare_prediction(predicted_speedup: Any, copies: Any) -> Text:
    """measure-what-pinning-buys's predict cell, through ``exercises.compare("02", predicted_speedup, copies)``: the
    learner's guess of pinned / pageable (host to device, largest size) against this run's. Not graded: it says how
    far off the guess was and what the measurement shows; "no prediction" on the untouched ``...``."""
    n = int(max(copies.column("nbytes")))
    pinned, pageable = (copies.one(direction="htod", host_memory=m, nbytes=n)["GBps"] for m in ("pinned", "pageable"))
    measured = pinned / pageable
    said = (_("at {n:.0f} MiB host to device, pinned ran at {pinned:.1f} GB/s and pageable at {pageable:.1f} GB/s: "
              "{measured:.1f}x ({gpu}, {how}).").format(
                n=n / 2**20, pinned=pinned, pageable=pageable, measured=measured, gpu=copies.gpu,
                how=_("live") if copies.live else _("recorded")))
    if is_placeholder(predicted_speedup):
        across = factor_across_records(n)
        return Text(_("You made no prediction (predicted_speedup is still `...`); the measurement: ") + said
                    + _(" Across the {count} committed H200 records the same factor ran {words}.").format(
                          count=across.count, words=across.words('x')))
    try:
        guess = float(predicted_speedup)
    except (TypeError, ValueError):
        return Text(_("predicted_speedup should be a number, not {predicted_speedup!r}; the measurement: ").format(
                        predicted_speedup=predicted_speedup) + said)
    if guess <= 0:
        return Text(_("A speed-up is a positive factor (1 = no difference); you wrote {guess:g}. The measurement: ").format(
                        guess=guess)
                    + said)
    off, across = guess / measured, factor_across_records(n)
    records = (_("Across the {count} committed H200 records the same factor ran {words}: the pageable rate moves "
                 "with the host from run to run, so judge a guess against that range.").format(
                   count=across.count, words=across.words('x')))
    if 0.8 <= off <= 1.25:
        return Text(_("You predicted {guess:g}x; {said} Close: within 25%. {records}").format(
                        guess=guess, said=said, records=records))
    if across.low <= guess <= across.high:
        return Text(_("You predicted {guess:g}x; {said} Off by a factor of {max_off:.1f} from this run, but inside "
                      "the records' range. {records}").format(
                        guess=guess, said=said, max_off=max(off, 1 / off), records=records))
    if off < 1:
        why = (_("the pageable copy was slower than you expected: the staging question after the table asks "
                 "whether a second, CPU copy into a staging buffer explains it."))
    else:
        why = (_("the pageable copy was faster than you expected, or the pinned one slower: a pinned copy is "
                 "capped by the PCIe link (lesson 06), and the staging copy can overlap the DMA (exercise 2 models "
                 "it)."))
    return Text(_("You predicted {guess:g}x; {said} Off by a factor of {max_off:.1f}, outside the records' range "
                  "too: {why} {records}").format(
                    guess=guess, said=said, max_off=max(off, 1 / off), why=why, records=records))


def factor_across_records(nbytes: int) -> spread.Range:
    """Pinned over pageable host-to-device GB/s at ``nbytes`` in every committed H200 record that holds it."""
    def factor(result: Any) -> float:
        rate = {m: result.one(direction="htod", host_memory=m, nbytes=nbytes)["GBps"] for m in ("pinned", "pageable")}
        return float(rate["pinned"] / rate["pageable"])
    return spread.across_records("memcpy", factor)
