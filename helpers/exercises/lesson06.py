"""measure-bandwidth's exercises: the fixed-cost model of a transfer's rate; zero-copy as a fraction of the right copy;
and the prediction of that fraction at the largest size.

The checks use the run's results when the notebook passes them (``memcpy=``, ``streams=``: live, this GPU's) and
the recorded H200 results otherwise, so they work live and in replay alike.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, Callable

import numpy as np

from ..i18n import N_, _
from . import Feedback, correct as _correct, ended, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

GB = 1e9


def _results(memcpy: Any = None, streams: Any = None) -> tuple[Any, Any]:
    from .. import experiments

    return (memcpy if memcpy is not None else experiments.reference("memcpy"),
            streams if streams is not None else experiments.reference("kernel_bandwidth"))


def _sweep(result: Any, **where: Any) -> tuple[np.ndarray, np.ndarray]:
    rows = sorted(result.select(**where), key=lambda r: r["nbytes"])
    return np.array([r["nbytes"] for r in rows], float), np.array([r["GBps"] for r in rows], float)


def _model(nbytes: float, t0: float, peak_GBps: float) -> float:
    return nbytes / (t0 + nbytes / (peak_GBps * GB)) / GB


# (nbytes, t0 seconds, peak GB/s): sizes where the fixed cost rules, where neither does, where the link rules
MODEL_CASES = tuple((nbytes, t0, peak) for t0, peak in ((10e-6, 50.0), (3e-6, 25.0)) for nbytes in (4096, 2**20, 2**30))


def check_model_GBps(model_GBps: Callable[[float, float, float], Any], *, streams: Any = None) -> Feedback:
    """measure-bandwidth: ``model_GBps(nbytes, t0, peak_GBps)``: the rate (GB/s) of a transfer taking t0 + nbytes /
    peak."""
    if is_placeholder(model_GBps):
        return _not_yet(_("define model_GBps(nbytes, t0, peak_GBps): first the seconds the transfer takes (the "
                          "fixed cost, then the bytes at the peak rate), then the rate in GB/s."))
    for nbytes, t0, peak in MODEL_CASES:
        got = model_GBps(nbytes, t0, peak)
        forgot = returned_none(model_GBps, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("model_GBps returns `...`: return the rate in GB/s."))
        if not isinstance(got, Real):
            return _hint(_("return one number (GB/s); model_GBps({nbytes}, {t0}, {peak}) returned {got}.").format(
                nbytes=nbytes, t0=t0, peak=peak, got=repr(got)),
                         _("compute the time as a number, then return nbytes over it, in GB/s."))
        want = _model(nbytes, t0, peak)
        if math.isclose(got, want, rel_tol=1e-6):
            continue
        mixed = nbytes / (t0 + nbytes / peak)  # peak_GBps taken as bytes per second: t0 all but vanishes
        if got != peak and (math.isclose(got, mixed, rel_tol=1e-12) or math.isclose(got, mixed / GB, rel_tol=1e-12)):
            return _hint(_("for {nbytes} bytes you returned {got:.4g}: mind the units. Your time adds t0 "
                           "(seconds) to nbytes / peak_GBps, which is not in seconds. In which unit is peak_GBps?")
                         .format(nbytes=nbytes, got=got),
                         _("peak_GBps is in GB/s, 10^9 bytes per second: the bytes take nbytes / (peak_GBps * 1e9) "
                           "seconds; then return the rate in GB/s."))
        if math.isclose(got, peak, rel_tol=1e-6):
            return _hint(_("your model always gives the peak: it leaves out the fixed cost t0. Why does every "
                           "curve of section 3 start low at 4 KiB?"),
                         _("at 4 KiB the fixed cost is most of the time: the transfer's time is the fixed cost "
                           "plus the time on the link, and the rate is the bytes over that whole time."))
        if math.isclose(got, nbytes / t0 / GB, rel_tol=1e-6):
            return _hint(_("your model never flattens: it leaves out the time on the link. What limits a large "
                           "transfer, once the fixed cost is small beside it?"),
                         _("the bytes also take time on the link, at peak_GBps: add that time to t0 before "
                           "dividing."))
        if any(math.isclose(got, other, rel_tol=1e-3) for other in
               (want * GB, want / GB, nbytes / (t0 + nbytes / peak) / GB, nbytes / (t0 + nbytes / peak))):
            return _hint(_("a units slip: the shape is right, the scale is off by 10^9. In which units is each "
                           "quantity: t0, peak_GBps and the answer?"),
                         _("peak_GBps is in GB/s, so the link moves peak_GBps * 1e9 bytes per second, and the "
                           "answer is bytes per second / 1e9."))
        if math.isclose(got, nbytes / t0 / GB + peak, rel_tol=1e-6):
            return _hint(_("rates do not add: times do. How long does the whole transfer take?"),
                         _("the transfer takes the fixed cost t0 plus the time its bytes take at the peak rate; "
                           "the rate is nbytes over that time."))
        return _hint(_("model_GBps({nbytes}, {t0}, {peak}) returned {got:.6g}. How many seconds does that "
                       "transfer take, fixed cost included, and what rate is that?").format(
            nbytes=nbytes, t0=t0, peak=peak, got=got),
                     _("the model gives {want:.6g} GB/s there: first the time in seconds (t0, then the bytes at "
                       "peak_GBps * 1e9 bytes per second), then nbytes / time / 1e9.").format(want=want))
    streams = _results(None, streams)[1]
    sizes, gbps = _sweep(streams, memory="zero_copy", op="read")
    t0, peak = sizes[0] / (gbps[0] * GB), gbps[-1]
    errors = np.array([model_GBps(s, t0, peak) for s in sizes]) / gbps - 1
    worst = int(np.argmax(np.abs(errors)))
    middle = _(": between the two ends neither cost alone rules") if 0 < worst < len(sizes) - 1 else ""
    return _correct(_("time adds, so a fixed cost rules small transfers and the link large ones. Fitted to this "
                      "sweep's zero-copy read (t0 = {t0:.1f} us from {first:g} KiB, peak = {peak:.1f} GB/s), the "
                      "model is off by at most {error:.0%}, at {worst:,.0f} KiB{middle}.").format(
        t0=t0 * 1e6, first=sizes[0] / 1024, peak=peak, error=abs(errors[worst]), worst=sizes[worst] / 1024,
        middle=middle))


def _truth(memcpy: Any, streams: Any, nbytes: int, *, copy: dict[str, str] | None = None,
           kernel: str = "read") -> float:
    where = copy or dict(direction="htod", host_memory="pinned")
    return streams.one(nbytes=nbytes, memory="zero_copy", op=kernel)["GBps"] / memcpy.one(nbytes=nbytes, **where)["GBps"]


def fields(result: Any) -> str:
    """The fields that pick a row of ``result``, with the values its rows hold, read from the rows themselves:
    ``memory ("zero_copy", "device"), op ("read", "write")`` (measure-bandwidth's hint)."""
    found: dict[str, list[str]] = {}
    for row in result.rows:
        for key, value in row.items():
            if isinstance(value, str) and value not in found.setdefault(key, []):
                found[key].append(value)
    return ", ".join(f"{key} ({', '.join(map(repr, values))})" for key, values in found.items())


def _lookup_hint(exc: Exception, memcpy: Any, streams: Any) -> Feedback:
    """A hint for a row that is not there: the fields each result's rows really have."""
    keys = ", ".join(repr(k) for k in streams.rows[0] if not isinstance(streams.rows[0][k], str))
    return _hint(_("your code raised {type}: {error} Each result has its own fields: memcpy's rows {memcpy}; "
                   "streams' rows {streams}; both also nbytes. A row's numbers are under {keys}. Which fields did "
                   "your .one(...) calls use, and on which result?").format(
        type=type(exc).__name__, error=ended(str(exc)), memcpy=fields(memcpy), streams=fields(streams), keys=keys),
                 _("give each .one(...) only fields from that result's own list (memcpy's fields are not "
                   "streams'), with nbytes=nbytes, and read the row's [\"GBps\"]."))


def check_fraction_of_copy(fraction_of_copy: Callable[[Any, Any, int], Any], *, memcpy: Any = None,
                           streams: Any = None) -> Feedback:
    """measure-bandwidth: ``fraction_of_copy(memcpy, streams, nbytes)``: zero-copy read rate / pinned HtoD memcpy
    rate."""
    if is_placeholder(fraction_of_copy):
        return _not_yet(_("define fraction_of_copy(memcpy, streams, nbytes): the zero-copy read kernel's GB/s "
                          "divided by the GB/s of the copy that moves the same bytes the same way at the link's "
                          "rate."))
    memcpy, streams = _results(memcpy, streams)
    sizes = sorted({int(n) for n in memcpy.column("nbytes")})
    alternatives = (
        ("pageable", dict(copy=dict(direction="htod", host_memory="pageable")),
         (N_("you compared with the pageable copy. That copy is slower than the link (the driver stages it through "
             "a pinned buffer), so beating it says nothing about the link. Which copy runs at the link's rate? (This "
             "is the lore of section 5.)"),
          N_("compare with the copy from pinned memory in the same direction: host_memory=\"pinned\"."))),
        ("dtoh", dict(copy=dict(direction="dtoh", host_memory="pinned")),
         (N_("wrong direction. Which way do the bytes go when a kernel reads host memory?"),
          N_("a kernel that reads host memory moves bytes host-to-device, like memcpy HtoD (direction=\"htod\"), "
             "not DtoH."))),
        ("write", dict(kernel="write"),
         (N_("that is the zero-copy WRITE kernel (op=\"write\"). Which kernel moves bytes the same way as the copy "
             "you compare with?"),
          N_("the read kernel (op=\"read\") pulls host memory across the link, like memcpy HtoD."))),
    )
    for nbytes in sizes:
        try:
            got = fraction_of_copy(memcpy, streams, nbytes)
        except (LookupError, TypeError) as exc:     # KeyError is a LookupError: a field or a key that is not there
            return _lookup_hint(exc, memcpy, streams)
        forgot = returned_none(fraction_of_copy, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("fraction_of_copy returns `...`: return a ratio of two GB/s figures."))
        if not isinstance(got, Real):
            return _hint(_("return one number; for {nbytes} bytes you returned {got}. What does one row's rate "
                           "look like?").format(nbytes=nbytes, got=repr(got)),
                         _("result.one(nbytes=..., ...)[\"GBps\"] gives one row's rate, a number; return the ratio "
                           "of two of them."))
        want = _truth(memcpy, streams, nbytes)
        if math.isclose(got, want, rel_tol=1e-9):
            continue
        if math.isclose(got, 1 / want, rel_tol=1e-9):
            return _hint(_("the ratio is upside down. A fraction OF the copy: which rate goes on top?"),
                         _("divide the zero-copy kernel's rate by the copy's rate."))
        for _name, kwargs, (question, step) in alternatives:
            if math.isclose(got, _truth(memcpy, streams, nbytes, **kwargs), rel_tol=1e-9):  # type: ignore[arg-type]
                return _hint(_(question), _(step))
        largest = streams.one(nbytes=sizes[-1], memory="zero_copy", op="read")["GBps"] / \
            memcpy.one(nbytes=sizes[-1], direction="htod", host_memory="pinned")["GBps"]
        if math.isclose(got, largest, rel_tol=1e-9):
            return _hint(_("you returned the ratio at the largest size for {nbytes} bytes. Do your rows follow "
                           "the argument, nbytes=nbytes, or a fixed size?").format(nbytes=nbytes),
                         _("pass nbytes=nbytes to both .one(...) calls, so each size gets its own rows."))
        return _hint(_("for {nbytes} bytes you returned {got:.4g}. Which kernel reads host memory across the link, "
                       "and which copy moves the same bytes the same way at the link's rate?").format(
            nbytes=nbytes, got=got),
                     _("the check expects {want:.4g} there: the zero-copy read kernel's row "
                       "(memory=\"zero_copy\", op=\"read\") over the row of the copy from pinned memory, host to "
                       "device.").format(want=want))
    fractions = [_truth(memcpy, streams, n) for n in sizes]
    return _correct(_("the pinned HtoD copy is the link rate, the only fair baseline. Zero-copy reads ran at "
                      "{low:.0%} to {high:.0%} of it over this sweep ({first:.0%} at {small:g} KiB, {last:.0%} at "
                      "{large:,.0f} MiB): one link, two ways of driving it.").format(
        low=min(fractions), high=max(fractions), first=fractions[0], small=sizes[0] / 1024, last=fractions[-1],
        large=sizes[-1] / 2**20))


CHECKS = {"model_GBps": check_model_GBps, "fraction_of_copy": check_fraction_of_copy}


def compare_prediction(predicted: Any, memcpy: Any, streams: Any) -> str:
    """measure-bandwidth's prediction, ``zc.exercises.compare("06", predicted_fraction_of_copy, memcpy, streams)``:
    the zero-copy read kernel's rate as a fraction of the pinned HtoD copy at the sweep's largest size."""
    nbytes = int(max(memcpy.column("nbytes")))
    return verdict(predicted, _truth(memcpy, streams, nbytes), nbytes)


def verdict(predicted: Any, measured: float, nbytes: int) -> str:
    """The prediction against the measured fraction ``measured`` at ``nbytes``."""
    size = f"{nbytes / 2**30:g} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:g} MiB"
    seen = _("Measured: at {size} the zero-copy read kernel reached {measured:.2f} of the pinned memcpy HtoD "
             "rate.").format(size=size, measured=measured)
    if is_placeholder(predicted):
        return _("You made no prediction (predicted_fraction_of_copy is still `...`). {seen}").format(seen=seen)
    if not isinstance(predicted, Real) or isinstance(predicted, bool) or predicted < 0:
        return _("Predict a fraction (a number such as 0.5); you wrote {given}. {seen}").format(
            given=repr(predicted), seen=seen)
    head = _("You predicted {predicted:.2f}. {seen}").format(predicted=predicted, seen=seen)
    gap = predicted - measured
    if abs(gap) <= 0.1:
        return head + _(" Close: the kernel and the copy engine share one PCIe link.")
    if predicted > 1 >= measured:
        return head + _(" You expected zero-copy to beat the copy engine. Both cross the same PCIe link, so a "
                        "kernel can approach the copy's rate but not raise the link's (section 5 tests that lore).")
    if gap > 0:
        return head + _(" Lower than you expected: each load waits a PCIe round trip, and this kernel did not keep "
                        "enough bytes in flight to fill the link (Little's law; lessons 07 and 08 measure both "
                        "sides).")
    near = _(", so it runs near the copy engine's rate") if measured >= 0.8 else ""
    return head + _(" Higher than you expected: with a full grid and four 16-byte loads in flight per thread, the "
                    "kernel keeps many requests outstanding while each waits its round trip (Little's law; lesson "
                    "08){near}.").format(near=near)
