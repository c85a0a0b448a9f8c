"""measure-bandwidth's narration: the tables and sentences that quote the sweep's figures, computed from the results
(``memcpy``: ``experiments.memcpy()``, ``streams``: ``experiments.kernel_bandwidth()``), so what the lesson says
agrees with its figure live and in replay. Each function returns a :class:`~helpers.tables.Text`, a
:class:`~helpers.tables.Table` or several of them joined, for a cell's last expression.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tables import Table, Text, bullets, join

# The eight ways of moving bytes of the size sweep: (name, which result, the rows' fields).
SERIES: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("memcpy HtoD pinned", "memcpy", dict(direction="htod", host_memory="pinned")),
    ("memcpy DtoH pinned", "memcpy", dict(direction="dtoh", host_memory="pinned")),
    ("memcpy HtoD pageable", "memcpy", dict(direction="htod", host_memory="pageable")),
    ("memcpy DtoH pageable", "memcpy", dict(direction="dtoh", host_memory="pageable")),
    ("zero-copy read kernel", "streams", dict(memory="zero_copy", op="read")),
    ("zero-copy write kernel", "streams", dict(memory="zero_copy", op="write")),
    ("device read kernel", "streams", dict(memory="device", op="read")),
    ("device write kernel", "streams", dict(memory="device", op="write")),
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
    gpu = f"{'this GPU' if session.live else 'the recorded ' + session.gpu}"
    found = session.link
    if found is None:
        why = "nvidia-smi is missing" if session.live else "this record was made before records stored it"
        return Text(f"The PCIe link of {gpu} could not be read ({why}).")
    text = (f"PCIe link of {gpu} ({'live' if session.live else 'recorded'}): Gen{found.gen} x{found.width} (at most "
            f"Gen{found.max_gen} x{found.max_width}): {found.nominal_GBps:.1f} GB/s nominal per direction.")
    if found.max_gen and found.gen < found.max_gen:
        text += (" The link runs below its maximum generation now: an idle GPU trains its link down to save power "
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
    shape = ("more than one direction carries, less than twice" if one < total < 1.9 * one else
             "no more than one direction carries" if total <= one else "about twice one direction")
    return Text(f"Both directions at once: the zero-copy vector add of {lesson('overlap-copies-with-streams').label} "
                f"(c = a + b, two bytes read for every byte written; {e2e.origin()}) moved {total:.1f} GB/s in the two "
                f"directions together, {total * 2 / 3:.1f} GB/s host to GPU and {total / 3:.1f} GB/s back: "
                f"{total / one:.2f}x the {one:.1f} GB/s of a pinned copy in one direction, {shape}.")


def fixed_costs(memcpy: Any, streams: Any) -> Table:
    """Per series: the smallest transfer's time (the fixed cost t0), the rate at the largest size (the peak), the
    model's half-rate size t0 x peak, and the first measured size at half the peak."""
    results = {"memcpy": memcpy, "streams": streams}
    rows = []
    for name, which, fields in SERIES:
        sizes, gbps = sweep(results[which], **fields)
        t0 = sizes[0] / (gbps[0] * 1e9)
        half = sizes[np.argmax(gbps >= 0.5 * gbps[-1])]
        rows.append([name, f"{t0 * 1e6:.1f} us", f"{gbps[-1]:,.1f}", _kib(t0 * gbps[-1] * 1e9), _kib(half)])
    return Table(["series", "time for the smallest size (t0)", "GB/s at the largest size (peak)",
                  "t0 x peak (predicted half-rate size)", "first measured size at half rate"], rows,
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
        label = ("fits in the L2" if r["nbytes"] <= l2 / 2 else "about the L2's size" if r["nbytes"] <= 2 * l2
                 else "far above the L2: HBM")
        rows.append([_kib(r["nbytes"]), f"{median * 1e6:,.1f} us", f"{median / launch:.1f}x", f"{r['GBps']:,.0f}",
                     label])
    head = Text(f"Device-memory read kernel ({streams.origin()}); L2 = {l2 / 2**20:.0f} MiB ({l2 / 1e6:.1f} MB); the shortest launch (the "
                f"fastest repeat of any size) took {launch * 1e6:.1f} us.")
    return join(head, Table(["size", "time (median)", "x shortest launch", "GB/s", "label"], rows))


def ratio_values(memcpy: Any, streams: Any) -> dict[str, float]:
    """The five ratios at the largest size, by name."""
    r = rates(memcpy, streams)
    return {
        "zero-copy read / pinned memcpy HtoD": r["zero-copy read kernel"] / r["memcpy HtoD pinned"],
        "zero-copy write / pinned memcpy DtoH": r["zero-copy write kernel"] / r["memcpy DtoH pinned"],
        "device-memory read / zero-copy read": r["device read kernel"] / r["zero-copy read kernel"],
        "pinned / pageable memcpy HtoD": r["memcpy HtoD pinned"] / r["memcpy HtoD pageable"],
        "pinned / pageable memcpy DtoH": r["memcpy DtoH pinned"] / r["memcpy DtoH pageable"],
    }


def ratios(memcpy: Any, streams: Any) -> Table:
    """The five ratios that sum the sweep up, at its largest size."""
    return Table(["ratio", "value"], [(name, f"{value:.2f}") for name, value in ratio_values(memcpy, streams).items()],
                 caption=f"*At {_size(largest(memcpy))}, {memcpy.origin()}*")


def link_share(memcpy: Any, session: Any) -> Text:
    """The pinned copies' rates as a fraction of the link's nominal rate per direction."""
    from ..platform import pcie

    found = session.link
    if found is None:
        return Text("The link could not be read, so the copies cannot be set against its nominal rate.")
    gen, width = found.max_gen or found.gen, found.max_width or found.width
    nominal = pcie.nominal_GBps(gen, width)
    size = largest(memcpy)
    htod, dtoh = (float(memcpy.one(nbytes=size, direction=d, host_memory="pinned")["GBps"]) for d in ("htod", "dtoh"))
    return Text(f"Pinned memcpy HtoD reached {htod:.1f} GB/s = {htod / nominal:.0%} of the {nominal:.1f} GB/s a "
                f"Gen{gen} x{width} link carries per direction before packet overheads; DtoH {dtoh / nominal:.0%} "
                f"({memcpy.origin()}).")


def expectations(memcpy: Any, streams: Any) -> list[tuple[bool, str, str]]:
    """What the lessons after this one rely on, as ``(ok, expected, got)`` for ``experiments.expect``: these hold on
    any discrete GPU on PCIe that nothing else is using."""
    v = ratio_values(memcpy, streams)
    read, device = v["zero-copy read / pinned memcpy HtoD"], v["device-memory read / zero-copy read"]
    return [
        (device > 5, "device memory several times (> 5x) faster than reading host memory over the bus",
         f"{device:.1f}x"),
        (read < 1.15, "a kernel reading host memory no faster (< 1.15x) than the copy engine on the same link",
         f"{read:.2f}x the copy"),
        (read > 0.5, "zero-copy reads with a full grid of threads close to the link rate (> 0.5x the copy)",
         f"{read:.2f}x the copy"),
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
        return "is not told apart from"
    return "beats" if difference > 0 else "does not beat"


def lore(memcpy: Any, streams: Any) -> Text:
    """"Zero-copy improves PCIe transfer rates", tested against the pinned and the pageable copy."""
    r = rates(memcpy, streams)
    zc, pinned, pageable = r["zero-copy read kernel"], r["memcpy HtoD pinned"], r["memcpy HtoD pageable"]
    return bullets([
        f"against the pinned copy: zero-copy {_beats(memcpy, streams, 'pinned')} it ({zc / pinned:.0%} of its rate);",
        f"against the pageable copy: zero-copy {_beats(memcpy, streams, 'pageable')} it ({zc / pageable:.1f}x its "
        "rate).",
    ], head=(f"Zero-copy read kernel {zc:.1f} GB/s, pinned memcpy HtoD {pinned:.1f} GB/s, pageable memcpy HtoD "
             f"{pageable:.1f} GB/s (all at {_size(largest(memcpy))}, {streams.origin()}); each verdict beyond this run's "
             "repeats and of one sign across the committed records:"))


def what_you_saw(memcpy: Any, streams: Any) -> Text:
    """The lesson's findings, computed from the run."""
    r, size = rates(memcpy, streams), _size(largest(memcpy))
    zc_read, zc_write, dev = r["zero-copy read kernel"], r["zero-copy write kernel"], r["device read kernel"]
    htod, dtoh = r["memcpy HtoD pinned"], r["memcpy DtoH pinned"]
    return bullets([
        f"Data from: {memcpy.describe()}",
        f"At {size} a zero-copy read kernel reached {zc_read:.1f} GB/s = {zc_read / htod:.0%} of pinned memcpy HtoD "
        f"({htod:.1f} GB/s); a zero-copy write kernel {zc_write:.1f} GB/s = {zc_write / dtoh:.0%} of pinned DtoH.",
        f"Device memory (read_float4_x4, experiments.kernel_bandwidth, {size}) read at {dev:,.0f} GB/s, "
        f"{dev / zc_read:.0f}x the zero-copy read.",
        f"Pinned copies ran {htod / r['memcpy HtoD pageable']:.1f}x (HtoD) and {dtoh / r['memcpy DtoH pageable']:.1f}x "
        f"(DtoH) faster than pageable ones; zero-copy reads ran {zc_read / r['memcpy HtoD pageable']:.1f}x the rate "
        f"of a pageable HtoD copy. {_pageable_scope(largest(memcpy))}",
    ])


def _pageable_scope(nbytes: int) -> str:
    """The pinned/pageable factors' range across the committed H200 records (issue 30 §5: one run is one draw)."""
    from . import measure_what_pinning_buys as pinning

    r = pinning.rates_across_records(nbytes)
    return (f"Across the {r['htod factor'].count} committed H200 records those factors ran "
            f"{r['htod factor'].words('x')} (HtoD) and {r['dtoh factor'].words('x')} (DtoH): the pageable rate moves "
            "with the host's side (its memcpy, the VM), the pinned one barely.")
