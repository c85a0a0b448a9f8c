"""measure-bandwidth's narration: the tables and sentences that quote the sweep's figures, computed from the results
(``memcpy``: ``experiments.memcpy()``, ``streams``: ``experiments.kernel_bandwidth()``), so what the lesson says
agrees with its figure live and in replay. Each function returns a :class:`~helpers.tables.Text`, a
:class:`~helpers.tables.Table` or several of them joined, for a cell's last expression.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import computed_from
from ..i18n import N_, _
from ..tables import Table, Text, bullets, join

# The eight ways of moving bytes of the size sweep: (name, which result, the rows' fields).
SERIES: tuple[tuple[str, str, dict[str, str]], ...] = (
    (N_("memcpy HtoD pinned"), "memcpy", dict(direction="htod", host_memory="pinned")),
    (N_("memcpy DtoH pinned"), "memcpy", dict(direction="dtoh", host_memory="pinned")),
    (N_("memcpy HtoD pageable"), "memcpy", dict(direction="htod", host_memory="pageable")),
    (N_("memcpy DtoH pageable"), "memcpy", dict(direction="dtoh", host_memory="pageable")),
    (N_("zero-copy read kernel"), "streams", dict(memory="zero_copy", op="read")),
    (N_("zero-copy write kernel"), "streams", dict(memory="zero_copy", op="write")),
    (N_("device read kernel"), "streams", dict(memory="device", op="read")),
    (N_("device write kernel"), "streams", dict(memory="device", op="write")),
)


def _kib(nbytes: float) -> str:
    return f"{nbytes / 1024:,.0f} KiB"


def _size(nbytes: float) -> str:
    return f"{nbytes / 2**30:g} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:g} MiB"


def sweep(result: Any, **where_: Any) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, GB/s) of one series, smallest size first."""
    rows = sorted(result.select(**where_), key=lambda r: r["nbytes"])
    return np.array([r["nbytes"] for r in rows], float), np.array([r["GBps"] for r in rows], float)


def largest(memcpy: Any) -> int:
    """The sweep's largest size, in bytes."""
    return int(max(memcpy.column("nbytes")))


def rates(memcpy: Any, streams: Any) -> dict[str, float]:
    """GB/s of every series at the largest size, by series name."""
    results, size = {"memcpy": memcpy, "streams": streams}, largest(memcpy)
    return {name: float(results[which].one(nbytes=size, **fields)["GBps"]) for name, which, fields in SERIES}


def link(session: Any) -> Text:
    """The PCIe link of the GPU the figures come from (``zc.session().link``), and whether it runs below its
    maximum."""
    gpu = _("this GPU") if session.live else _("the recorded {gpu}").format(gpu=session.gpu)
    found = session.link
    if found is None:
        why = _("nvidia-smi is missing") if session.live else _("this record was made before records stored it")
        return Text(_("The PCIe link of {gpu} could not be read ({why}).").format(gpu=gpu, why=why))
    text = _("PCIe link of {gpu} ({how}): Gen{gen} x{width} (at most Gen{max_gen} x{max_width}): {nominal:.1f} GB/s "
             "nominal per direction.").format(gpu=gpu, how=_("live") if session.live else _("recorded"),
                                              gen=found.gen, width=found.width, max_gen=found.max_gen,
                                              max_width=found.max_width, nominal=found.nominal_GBps)
    if found.max_gen and found.gen < found.max_gen:
        text += _(" The link runs below its maximum generation now: an idle GPU trains its link down to save power "
                  "and back up under traffic.")
    return Text(text)


def both_directions(e2e: Any = None, memcpy: Any = None) -> Text:
    """What the two directions of the link carried together: the zero-copy vector add of overlap-copies-with-streams
    (``experiments.end_to_end``, c = a + b: two bytes read for every byte written) at its largest size, against a
    pinned copy in one direction of the same record (the reference record's unless given)."""
    from .. import experiments
    from ..lessons import lesson

    e2e = e2e if e2e is not None else experiments.reference("end_to_end")
    memcpy = memcpy if memcpy is not None else experiments.reference("memcpy")
    n = int(max(e2e.column("n")))
    total = 12 * n / float(np.median(e2e.one(method="zero_copy", n=n)["seconds"])) / 1e9   # a, b in; c out
    one = float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))
    shape = (_("more than one direction carries, less than twice") if one < total < 1.9 * one else
             _("no more than one direction carries") if total <= one else _("about twice one direction"))
    return Text(_("Both directions at once: the zero-copy vector add of {lesson} (c = a + b, two bytes read for every "
                  "byte written; {origin}) moved {total:.1f} GB/s in the two directions together, {in_:.1f} GB/s "
                  "host to GPU and {out:.1f} GB/s back: {times:.2f}x the {one:.1f} GB/s of a pinned copy in one "
                  "direction, {shape}.").format(
        lesson=lesson("overlap-copies-with-streams").label, origin=e2e.origin(), total=total, in_=total * 2 / 3,
        out=total / 3, times=total / one, one=one, shape=shape))


def fixed_costs(memcpy: Any, streams: Any) -> Table:
    """Per series: the smallest transfer's time (the fixed cost t0), the rate at the largest size (the peak), the
    model's half-rate size t0 x peak, and the first measured size at half the peak."""
    results = {"memcpy": memcpy, "streams": streams}
    rows = []
    for name, which, fields in SERIES:
        sizes, gbps = sweep(results[which], **fields)
        t0 = sizes[0] / (gbps[0] * 1e9)
        half = sizes[np.argmax(gbps >= 0.5 * gbps[-1])]
        rows.append([_(name), _("{value:.1f} us").format(value=t0 * 1e6), f"{gbps[-1]:,.1f}",
                     _kib(t0 * gbps[-1] * 1e9), _kib(half)])
    return Table([_("series"), _("time for the smallest size (t0)"), _("GB/s at the largest size (peak)"),
                  _("t0 x peak (predicted half-rate size)"), _("first measured size at half rate")], rows,
                 caption=f"*{streams.origin()}*")


def l2_table(streams: Any, session: Any) -> Any:
    """The device-memory read kernel by size, against the L2's size (``session.attributes``) and the shortest
    launch: where the figure is the cache and the launch, and where it is HBM."""
    l2 = session.attributes["L2_CACHE_SIZE"]
    reads = sorted(streams.select(memory="device", op="read"), key=lambda r: r["nbytes"])
    launch = min(min(r["seconds"]) for r in reads)      # the floor: the fastest repeat of any size
    rows = []
    for r in reads:
        median = float(np.median(r["seconds"]))
        label = (_("fits in the L2") if r["nbytes"] <= l2 / 2 else _("about the L2's size") if r["nbytes"] <= 2 * l2
                 else _("far above the L2: HBM"))
        rows.append([_kib(r["nbytes"]), _("{value:,.1f} us").format(value=median * 1e6), f"{median / launch:.1f}x",
                     f"{r['GBps']:,.0f}", label])
    head = Text(_("Device-memory read kernel ({origin}); L2 = {mib:.0f} MiB ({mb:.1f} MB); the shortest launch (the "
                  "fastest repeat of any size) took {launch:.1f} us.").format(
        origin=streams.origin(), mib=l2 / 2**20, mb=l2 / 1e6, launch=launch * 1e6))
    return join(head, Table([_("size"), _("time (median)"), _("x shortest launch"), "GB/s", _("label")], rows))


def ratio_values(memcpy: Any, streams: Any) -> dict[str, float]:
    """The five ratios at the largest size, by name."""
    r = rates(memcpy, streams)
    return {
        N_("zero-copy read / pinned memcpy HtoD"): r["zero-copy read kernel"] / r["memcpy HtoD pinned"],
        N_("zero-copy write / pinned memcpy DtoH"): r["zero-copy write kernel"] / r["memcpy DtoH pinned"],
        N_("device-memory read / zero-copy read"): r["device read kernel"] / r["zero-copy read kernel"],
        N_("pinned / pageable memcpy HtoD"): r["memcpy HtoD pinned"] / r["memcpy HtoD pageable"],
        N_("pinned / pageable memcpy DtoH"): r["memcpy DtoH pinned"] / r["memcpy DtoH pageable"],
    }


def ratios(memcpy: Any, streams: Any) -> Table:
    """The five ratios that sum the sweep up, at its largest size."""
    return Table([_("ratio"), _("value")],
                 [(_(name), f"{value:.2f}") for name, value in ratio_values(memcpy, streams).items()],
                 caption=_("*At {size}, {origin}*").format(size=_size(largest(memcpy)), origin=memcpy.origin()))


def link_share(memcpy: Any, session: Any) -> Text:
    """The pinned copies' rates as a fraction of the link's nominal rate per direction."""
    from ..platform import pcie

    found = session.link
    if found is None:
        return Text(_("The link could not be read, so the copies cannot be set against its nominal rate."))
    gen, width = found.max_gen or found.gen, found.max_width or found.width
    nominal = pcie.nominal_GBps(gen, width)
    size = largest(memcpy)
    htod, dtoh = (float(memcpy.one(nbytes=size, direction=d, host_memory="pinned")["GBps"]) for d in ("htod", "dtoh"))
    return Text(_("Pinned memcpy HtoD reached {htod:.1f} GB/s = {htod_share:.0%} of the {nominal:.1f} GB/s a "
                  "Gen{gen} x{width} link carries per direction before packet overheads; DtoH {dtoh_share:.0%} "
                  "({origin}).").format(htod=htod, htod_share=htod / nominal, nominal=nominal, gen=gen, width=width,
                                        dtoh_share=dtoh / nominal, origin=memcpy.origin()))


def expectations(memcpy: Any, streams: Any) -> list[tuple[bool, str, str]]:
    """What the lessons after this one rely on, as ``(ok, expected, got)`` for ``experiments.expect``: these hold on
    any discrete GPU on PCIe that nothing else is using."""
    v = ratio_values(memcpy, streams)
    read, device = v["zero-copy read / pinned memcpy HtoD"], v["device-memory read / zero-copy read"]
    return [
        (device > 5, _("device memory several times (> 5x) faster than reading host memory over the bus"),
         f"{device:.1f}x"),
        (read < 1.15, _("a kernel reading host memory no faster (< 1.15x) than the copy engine on the same link"),
         _("{read:.2f}x the copy").format(read=read)),
        (read > 0.5, _("zero-copy reads with a full grid of threads close to the link rate (> 0.5x the copy)"),
         _("{read:.2f}x the copy").format(read=read)),
    ]


def _beats(memcpy: Any, streams: Any, host_memory: str) -> str:
    """Whether the zero-copy read kernel beats the host-to-device copy from ``host_memory`` at the largest size, by
    the course's rule (helpers.analysis.spread): beyond both rows' repeats, and of one sign across the records."""
    from ..analysis import spread
    from ..experiments.quiet import band

    size = largest(memcpy)
    kernel = streams.one(nbytes=size, memory="zero_copy", op="read")
    copy = memcpy.one(nbytes=size, direction="htod", host_memory=host_memory)
    difference = float(kernel["GBps"]) - float(copy["GBps"])
    (k_lo, k_mid, k_hi), (c_lo, c_mid, c_hi) = band(kernel, "GBps"), band(copy, "GBps")
    own = (k_mid - k_lo) + (c_hi - c_mid) if difference > 0 else (c_mid - c_lo) + (k_hi - k_mid)
    try:
        across = spread.across_record_pairs("kernel_bandwidth", "memcpy", lambda k, m: float(
            k.one(nbytes=largest(m), memory="zero_copy", op="read")["GBps"])
            - float(m.one(nbytes=largest(m), direction="htod", host_memory=host_memory)["GBps"]))
    except LookupError:
        across = spread.Range(difference, difference, ("this run",))
    if getattr(streams, "live", False):
        across = across.including(difference)
    if not spread.beyond_spread(difference, across, own):
        return N_("is not told apart from")
    return N_("beats") if difference > 0 else N_("does not beat")


def lore(memcpy: Any, streams: Any) -> Text:
    """"Zero-copy improves PCIe transfer rates", tested against the pinned and the pageable copy."""
    r = rates(memcpy, streams)
    zc, pinned, pageable = r["zero-copy read kernel"], r["memcpy HtoD pinned"], r["memcpy HtoD pageable"]
    return bullets([
        _("against the pinned copy: zero-copy {verdict} it ({share:.0%} of its rate);").format(
            verdict=_(_beats(memcpy, streams, "pinned")), share=zc / pinned),
        _("against the pageable copy: zero-copy {verdict} it ({times:.1f}x its rate).").format(
            verdict=_(_beats(memcpy, streams, "pageable")), times=zc / pageable),
    ], head=_("Zero-copy read kernel {zc:.1f} GB/s, pinned memcpy HtoD {pinned:.1f} GB/s, pageable memcpy HtoD "
              "{pageable:.1f} GB/s (all at {size}, {origin}); each verdict beyond this run's repeats and of one sign "
              "across the committed records:").format(zc=zc, pinned=pinned, pageable=pageable,
                                                       size=_size(largest(memcpy)), origin=streams.origin()))


def what_you_saw(memcpy: Any, streams: Any) -> Text:
    """The lesson's findings, computed from the run."""
    r, size = rates(memcpy, streams), _size(largest(memcpy))
    zc_read, zc_write, dev = r["zero-copy read kernel"], r["zero-copy write kernel"], r["device read kernel"]
    htod, dtoh = r["memcpy HtoD pinned"], r["memcpy DtoH pinned"]
    return bullets([
        _("Data from: {source}").format(source=memcpy.describe()),
        _("At {size} a zero-copy read kernel reached {zc_read:.1f} GB/s = {read_share:.0%} of pinned memcpy HtoD "
          "({htod:.1f} GB/s); a zero-copy write kernel {zc_write:.1f} GB/s = {write_share:.0%} of pinned DtoH.").format(
            size=size, zc_read=zc_read, read_share=zc_read / htod, htod=htod, zc_write=zc_write,
            write_share=zc_write / dtoh),
        _("Device memory (read_float4_x4, experiments.kernel_bandwidth, {size}) read at {dev:,.0f} GB/s, "
          "{times:.0f}x the zero-copy read.").format(size=size, dev=dev, times=dev / zc_read),
        _("Pinned copies ran {htod_x:.1f}x (HtoD) and {dtoh_x:.1f}x (DtoH) faster than pageable ones; zero-copy reads "
          "ran {zc_x:.1f}x the rate of a pageable HtoD copy. {scope}").format(
            htod_x=htod / r["memcpy HtoD pageable"], dtoh_x=dtoh / r["memcpy DtoH pageable"],
            zc_x=zc_read / r["memcpy HtoD pageable"], scope=_pageable_scope(largest(memcpy))),
    ], head=computed_from(memcpy))


def _pageable_scope(nbytes: int) -> str:
    """The pinned/pageable factors' range across the committed H200 records (issue 30 §5: one run is one draw)."""
    from . import measure_what_pinning_buys as pinning

    r = pinning.rates_across_records(nbytes)
    return _("Across the {count} committed H200 records those factors ran {htod} (HtoD) and {dtoh} (DtoH): the "
             "pageable rate moves with the host's side (its memcpy, the VM), the pinned one barely.").format(
        count=r["htod factor"].count, htod=r["htod factor"].words("x"), dtoh=r["dtoh factor"].words("x"))
