"""decide-when-zero-copy-wins's exercises: a model of copy-once against zero-copy for data used k times, and the
break-even k solved from it (n cancels). ``compare_prediction`` compares the learner's predicted break-even k with the
run."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..i18n import _
from ..tables import Text
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

def _number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


# --------------------------------------------------------------------------- copy once, or cross PCIe k times
def model_seconds_rule(k: int, n: int, link_GBps: float, device_GBps: float, zc_GBps: float) -> tuple[float, float]:
    """(copy, zero-copy) seconds for k vector adds on n floats: 12n bytes each time, over the link once or k times."""
    nbytes = 12 * n
    return nbytes / (link_GBps * 1e9) + k * nbytes / (device_GBps * 1e9), k * nbytes / (zc_GBps * 1e9)


MODEL_CASES = ((1, 1 << 24, 55.0, 2000.0, 70.0), (5, 1 << 20, 25.0, 900.0, 30.0), (8, 3000, 12.0, 400.0, 20.0))


def _model_hint(got: tuple[float, float], case: tuple) -> Feedback | None:
    k, n, link, device, zc = case
    copy, zero = (float(v) for v in got)
    want_copy, want_zero = model_seconds_rule(*case)
    nb = 12 * n

    def close(a: float, b: float) -> bool:
        return bool(np.isclose(a, b, rtol=1e-6))

    if close(copy, want_copy / 4) or close(zero, want_zero / 4):
        return _hint(_("a quarter of the right time: n counts floats. How many bytes does one pass move for a, b "
                       "and c, each 4 bytes per element?"),
                     _("one pass moves 12n bytes: a and b read, c written, 4 bytes "
                       "each."))
    if close(copy, want_copy * 1e3) or close(zero, want_zero * 1e3):
        return _hint(_("you returned milliseconds. Where does your code scale the result?"),
                     _("return seconds: bytes / (bytes per second) already is."))
    if close(copy, want_copy * 1e9 / 2**30) or close(zero, want_zero * 1e9 / 2**30):
        return _hint(_("GB/s means 10^9 bytes per second, not 2^30. How many bytes per second is one GB/s?"),
                     _("multiply each rate by 1e9, not 2**30."))
    if close(copy, want_zero) and close(zero, want_copy):
        return _hint(_("the two times are swapped: the exercise asks for (copy, zero_copy) in that order. Which "
                       "did you return first?"), _("return copy first, then zero_copy."))
    if not close(zero, want_zero):
        if close(zero, nb / (zc * 1e9)) and k > 1:
            return _hint(_("zero-copy: your time does not grow with k. What does each further use cost when the "
                           "data stays in host memory?"),
                         _("every use crosses PCIe again: multiply the time of one use at zc_GBps by k."))
        if close(zero, k * 8 * n / (zc * 1e9)):
            return _hint(_("zero-copy: each use reads a and b over the link; what happens to c, 12 bytes per "
                           "element, not 8?"),
                         _("the kernel writes c back to host memory over the link too: 12 bytes per "
                           "element each use."))
        return _hint(_("zero-copy for k = {k}, n = {n}: you returned {zero:.4g} s. Which bytes cross the link on "
                       "each use, and how many uses are there?").format(k=k, n=n, zero=zero),
                     _("the model gives {want_zero:.4g} s there: the bytes of one use (a, b and c) at zc_GBps, "
                       "times the number of uses.").format(want_zero=want_zero))
    if close(copy, k * nb / (link * 1e9) + k * nb / (device * 1e9)) and k > 1:
        return _hint(_("copy: you pay the link k times. How often does the data cross the link when it is copied "
                       "to the device?"),
                     _("the data crosses the link once, whatever k; only the kernels run k times."))
    if close(copy, nb / (link * 1e9)):
        return _hint(_("copy: you counted only the copies over the link. Where do the k kernels on device memory "
                       "run, and do they take time?"),
                     _("the k kernels move k x 12n bytes at device_GBps: small, but they are the copy line's slope."))
    if close(copy, 8 * n / (link * 1e9) + k * nb / (device * 1e9)):
        return _hint(_("copy: you moved a and b over the link. What about c, 12 bytes per element, not 8?"),
                     _("c comes back over the link too: 12n bytes cross it, not 8n."))
    if not close(copy, want_copy):
        return _hint(_("copy for k = {k}, n = {n}: you returned {copy:.4g} s. How often does the data cross the "
                       "link, and how often do the kernels run on device memory?").format(k=k, n=n, copy=copy),
                     _("the model gives {want_copy:.4g} s there: the bytes of one pass at link_GBps once, plus k "
                       "passes at device_GBps.").format(want_copy=want_copy))
    return None


def check_model_seconds(model_seconds: Callable[..., tuple[float, float]], *, measured: Any = None) -> Feedback:
    """decide-when-zero-copy-wins: ``model_seconds(k, n, link_GBps, device_GBps, zc_GBps)`` returns (copy,
    zero-copy) seconds. With ``measured`` (``reuse``) the message compares it, at the rates fitted to the run
    (:func:`fitted_rates`), with the rows."""
    if is_placeholder(model_seconds):
        return _not_yet(_("define model_seconds(k, n, link_GBps, device_GBps, zc_GBps) returning (copy, zero_copy)."))
    for case in MODEL_CASES:
        got = model_seconds(*case)
        forgot = returned_none(model_seconds, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("model_seconds returns `None`: replace its `...` with the pair (copy seconds, "
                              "zero-copy seconds)."))
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(_number(v) for v in got)):
            said = _("return a pair of numbers (copy seconds, zero-copy seconds); you returned {got!r}.")
            return _hint(said.format(got=got)[:300],
                         _("end with `return copy, zero_copy`: Python makes the pair from the two values."))
        problem = _model_hint(got, case)
        if problem:
            return problem
    extra = ""
    if measured is not None:
        rates = fitted_rates(measured)
        n = int(measured.params["n"])
        worst = 0.0
        for k in sorted({int(k) for k in measured.column("uses")}):
            for method, model in zip(("copy", "zero_copy"), model_seconds(k, n, *rates)):
                real = float(np.median(measured.one(method=method, uses=k)["seconds"]))
                worst = max(worst, abs(model - real) / real)
        extra = (_(" At the rates fitted to this run ({value:.1f} GB/s over the link, {value2:.0f} GB/s in device "
                   "memory, {value3:.1f} GB/s zero-copy) it is within {worst:.0%} of every measured row.").format(
                     value=rates[0], value2=rates[1], value3=rates[2], worst=worst))
    return _correct(_("copying pays the link once and then runs k cheap kernels on device memory; zero-copy pays "
                      "the link on every use.") + extra)


# --------------------------------------------------------------------------- the break-even k, solved
def break_even_k_rule(link_GBps: float, device_GBps: float, zc_GBps: float) -> int | None:
    """The smallest whole k at which copying once and running k kernels on device memory is faster than k zero-copy
    kernels, by :func:`model_seconds_rule` (n cancels); None when zero-copy is never slower per use."""
    per_use = 1 / zc_GBps - 1 / device_GBps          # what each further use costs zero-copy more than the copy
    if per_use <= 0:
        return None
    bound = (1 / link_GBps) / per_use                  # copy(k) < zero_copy(k)  <=>  k > bound
    return int(np.floor(bound)) + 1


# (link, device, zero-copy GB/s): none has a whole-number bound, so rounding cannot decide a case
BREAK_EVEN_CASES = ((11.0, 90.0, 40.0), (7.0, 100.0, 33.0), (55.0, 4000.0, 50.0), (25.0, 900.0, 30.0),
                    (55.0, 3000.0, 104.0), (8.0, 200.0, 3.0))


def fitted_rates(reuse: Any) -> tuple[float, float, float]:
    """(link, device, zero-copy) GB/s read off straight lines fitted to a ``reuse`` result's medians: the copy's fixed
    part moves 12n bytes over the link, its part per use 12n bytes in device memory, zero-copy's part per use 12n
    bytes over the link (decide-when-zero-copy-wins)."""
    ks = sorted({int(k) for k in reuse.column("uses")})

    def medians(method: str) -> list[float]:
        return [float(np.median(reuse.one(method=method, uses=k)["seconds"])) for k in ks]

    copy_per_use, copy_fixed = np.polyfit(ks, medians("copy"), 1)
    zc_per_use, _intercept = np.polyfit(ks, medians("zero_copy"), 1)
    nbytes = 12 * int(reuse.params["n"])
    return nbytes / copy_fixed / 1e9, nbytes / copy_per_use / 1e9, nbytes / zc_per_use / 1e9


def first_copy_win(reuse: Any) -> int | None:
    """The smallest measured k at which copying first was faster (medians), or None."""
    for k in sorted({int(k) for k in reuse.column("uses")}):
        if (np.median(reuse.one(method="copy", uses=k)["seconds"])
                < np.median(reuse.one(method="zero_copy", uses=k)["seconds"])):
            return k
    return None


def check_break_even_k(break_even_k: Callable[[float, float, float], Any], *, measured: Any = None) -> Feedback:
    """decide-when-zero-copy-wins: ``break_even_k(link_GBps, device_GBps, zc_GBps)``, the smallest whole k at which
    copying first is faster by the model of ``model_seconds``; with ``measured`` (``reuse``), the message puts it
    beside the run."""
    if is_placeholder(break_even_k):
        return _not_yet(_("define break_even_k(link_GBps, device_GBps, zc_GBps) returning the smallest whole k."))
    for link, device, zc in BREAK_EVEN_CASES:
        got = break_even_k(link, device, zc)
        forgot = returned_none(break_even_k, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("break_even_k returns `None`: replace its `...` with a whole number of uses."))
        want = break_even_k_rule(link, device, zc)
        bound = (1 / link) / (1 / zc - 1 / device)
        if not _number(got):
            return _hint(_("return a number of uses; you returned {got!r}.").format(got=got)[:300],
                         _("return one whole number, k."))
        if not float(got).is_integer():
            return _hint(_("you returned {got:.3f}: k counts kernel launches, a whole number. Which whole number "
                           "is the first at which copying is faster, the one below the crossing or above it?").format(
                             got=float(got)),
                         _("round the crossing to the next whole number above it."))
        got = int(got)
        if got == want:
            continue
        case = _("(link {link:g}, device {device:g}, zero-copy {zc:g} GB/s)").format(link=link, device=device, zc=zc)
        if got == int(np.floor(bound)) and got < want:
            return _hint(_("{case}: at k = {got} copying is still slower, by your own model_seconds. Is the "
                           "crossing reached by rounding down or up?").format(case=case, got=got),
                         _("the first whole k past the crossing: the next whole number above it."))
        if got in (int(np.floor(zc / link)) + 1, int(np.ceil(zc / link))) and got != want:
            return _hint(_("{case}: your k leaves out the k kernels on device memory that the copy still runs. "
                           "What does each further use cost the copy, and what does it cost zero-copy?").format(
                             case=case),
                         _("write copy(k) < zero_copy(k) with both terms of the copy; each further use costs "
                           "zero-copy 12n/zc and the copy 12n/device: the difference is what the one copy must be "
                           "paid back by."))
        if got in (int(np.floor(link / zc)) + 1, int(np.ceil(link / zc))) and got != want:
            return _hint(_("{case}: the ratio is upside down. Which costs more per byte, a pass over the link at "
                           "zc_GBps or the one copy at link_GBps?").format(case=case),
                         _("seconds per byte are 1 / rate: write the times with 1/link, 1/zc and 1/device."))
        return _hint(_("{case}: you returned k = {got}. Write copy(k) and zero_copy(k) from model_seconds, set "
                       "copy(k) < zero_copy(k): what happens to n, and what is left of k?").format(case=case, got=got),
                     _("n appears in every term and cancels; gather the terms with k on one side, then divide and "
                       "round up to a whole k."))
    extra = ""
    if measured is not None:
        rates = fitted_rates(measured)
        first = first_copy_win(measured)
        said = break_even_k(*rates)
        extra = (_(" With the rates fitted to this run ({value:.1f}, {value2:.0f} and {value3:.1f} GB/s) it gives "
                   "k = {said}; the run's medians had copying first win from k = {first}.").format(
                     value=rates[0], value2=rates[1], value3=rates[2], said=said, first=first))
    return _correct(_("n cancels: each use after the first costs zero-copy a pass over the link and the copy only "
                      "a kernel on device memory, so the one copy is paid back after a number of uses set by the "
                      "rates alone: the same for 64 MiB as for 1 GiB, as long as the fixed costs the model leaves "
                      "out (a launch, each copy's setup: microseconds) are small beside the bytes. For small "
                      "arrays they are not, and they decide instead (section 4's n = 2^10 row).") + extra)


# --------------------------------------------------------------------------- predict, then measure
def compare_prediction(predicted: Any, reuse: Any) -> Text:
    """decide-when-zero-copy-wins: the predicted smallest k at which copying first wins, against the ``reuse`` run
    (its medians, and where straight lines fitted to them cross)."""
    first = first_copy_win(reuse)
    link, device, zc = fitted_rates(reuse)
    k_even = (1 / link) / (1 / zc - 1 / device)
    measured = _("copying first won from k = {first} on").format(first=first) if first else _("copying first won at no measured k")
    said = _("{measured} (the fitted lines cross at k = {k_even:.2f})").format(measured=measured, k_even=k_even)
    if is_placeholder(predicted):
        return Text(_("No prediction made (predicted_k is still `...`). This run: {said}.").format(said=said))
    try:
        guess = float(predicted)
    except (TypeError, ValueError):
        return Text(_("Write your prediction as a number, e.g. 4 (you wrote {predicted!r}). This run: {said}.").format(
                        predicted=predicted, said=said))
    text = _("You predicted k = {guess:g}; {said}. ").format(guess=guess, said=said)
    if first is None:
        return Text(text + _("Zero-copy held out over every k measured here: its per-use cost was close to the "
                             "copy's."))
    if guess == first:
        return Text(text + _("Right."))
    if guess > first:
        return Text(text + _("Copying won sooner than you thought: each zero-copy use moves the same 12n bytes "
                             "over the link that the one copy moves, so one extra use already costs most of a "
                             "copy, while a kernel on device memory costs a small fraction of it."))
    return Text(text + _("Zero-copy held out longer than you thought: at k = 1 it overlaps its reads and writes on "
                         "the two directions of the link (lesson 11), so one use costs less than copying in and "
                         "out."))


CHECKS = {"model_seconds": check_model_seconds, "break_even_k": check_break_even_k}
