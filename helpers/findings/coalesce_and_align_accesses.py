"""coalesce-and-align-accesses: the tables and sentences that quote its traced and measured figures, computed from
the traces and results so that the text beside a figure agrees with it, live and in replay."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from ..analysis import spread
from ..experiments.result import expect
from ..lessons import lesson as _lesson
from ..tables import Table, Text, bullets, join


def useful(result: Any, memory: str, **where: Any) -> float:
    return float(result.one(memory=memory, **where)["useful_GBps"])


def apart(result: Any, name: str, first: dict[str, Any], second: dict[str, Any], key: str = "useful_GBps") -> bool:
    """Whether row ``second`` of ``result`` differs from row ``first`` by the course's rule (helpers.analysis.spread):
    beyond both rows' spreads in this run, and of one sign across the committed records of experiment ``name``."""
    return spread.rates_apart(result, name, first, second, key)


_RULE = "by more than this run's spread (slowest to fastest repeat) and with one sign across the committed records"


def traced(trace: Callable[[int, int], Any], patterns: Iterable[tuple[int, int]]) -> Table:
    """Per warp, the useful bytes, sectors and lines of each (stride, offset), from the CPU backend's traces."""
    rows = []
    for stride, offset in patterns:
        t = trace(stride, offset)
        per = t.requests                                   # one request per warp here
        rows.append([stride, offset, t.useful_bytes // per, t.sectors // per, t.lines // per,
                     f"{t.useful_bytes / (32 * t.sectors):.1%}"])
    return Table(["stride", "offset (floats)", "useful bytes / warp", "sectors / warp", "lines / warp",
                  "useful share of sector bytes"], rows, caption="*traced on the CPU backend*")


def stride(result: Any, memcpy: Any) -> Any:
    """Stride 1 against stride 32 in both memories, the check of the slowdown, and what limits zero-copy there."""
    slowdown, rows = {}, []
    for memory in ("zero_copy", "device"):
        s1, s32 = useful(result, memory, stride=1), useful(result, memory, stride=32)
        slowdown[memory] = s1 / s32
        rows.append([memory, f"{s1:,.1f}", f"{s32:,.2f}", f"{s1 / s32:.1f}x"])
    table = Table(["memory", "stride 1: useful GB/s", "stride 32: useful GB/s", "slowdown 1 -> 32"], rows,
                  caption=f"*{result.origin()}*")
    link = float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))
    zc32, dev32 = useful(result, "zero_copy", stride=32), useful(result, "device", stride=32)
    check = expect((slowdown["zero_copy"] > 2 and slowdown["device"] > 2,
                    "stride 32 slower by more than 2x in both memories (it wastes 7/8 of every sector)",
                    f"{slowdown['zero_copy']:.1f}x (zero-copy) and {slowdown['device']:.1f}x (device)"))
    below = zc32 < link / 8
    text = (f"If only the wasted sector bytes mattered, zero-copy at stride 32 would reach 1/8 of the {link:.1f} GB/s "
            f"link = {link / 8:.1f} GB/s; it reached {zc32:.2f} GB/s, "
            + ("**below** that: PCIe read requests per second limit it, not bytes. " if below else
               "not below that: here the wasted bytes account for the loss. ")
            + f"Each float at stride 32 travels in its own PCIe read request: {zc32 / 4:.2f} G requests/s, against "
            f"{dev32 / 4:.1f} G sectors/s from device memory.")
    return join(table, check, Text(text))


def misalignment(result: Any) -> Any:
    """Aligned against misaligned offsets in both memories, and how many offsets differ beyond the spread."""
    rows, counts = [], []
    for memory in ("zero_copy", "device"):
        aligned = float(np.mean([useful(result, memory, offset_floats=o) for o in (0, 32)]))
        misaligned = float(np.mean([useful(result, memory, offset_floats=o) for o in range(1, 32)]))
        rows.append([memory, f"{aligned:,.1f}", f"{misaligned:,.1f}", f"{1 - misaligned / aligned:.1%}"])
        beyond = [o for o in range(1, 32) if apart(result, "offset", {"memory": memory, "offset_floats": 0},
                                                   {"memory": memory, "offset_floats": o})]
        counts.append(f"{memory}: {len(beyond)} of 31 misaligned offsets differ from offset 0 {_RULE}.")
    table = Table(["memory", "aligned (offsets 0, 32): mean useful GB/s", "misaligned (1..31): mean", "loss"], rows,
                  caption=f"*{result.origin()}*")
    return join(table, bullets(counts))


def sector_groups(trace: Callable[[int, int], Any], offsets: Iterable[int] = range(33)) -> dict[tuple[int, int],
                                                                                                 list[int]]:
    """Offsets grouped by (sectors, lines) per warp at stride 1, from the traces."""
    groups: dict[tuple[int, int], list[int]] = {}
    for o in offsets:
        t = trace(1, o)
        groups.setdefault((t.sectors // t.requests, t.lines // t.requests), []).append(o)
    return groups


def four_against_five(result: Any, groups: dict[tuple[int, int], list[int]]) -> list[dict[str, Any]]:
    """For each misaligned 4-sector offset: against the 5-sector ones, how many it was slower than, faster than, and
    within the spread of (zero-copy), by :func:`apart`."""
    five = groups.get((5, 2), [])
    found = []
    for o in groups.get((4, 2), []):
        row = result.one(memory="zero_copy", offset_floats=o)
        differing = [result.one(memory="zero_copy", offset_floats=f)["useful_GBps"] for f in five
                     if apart(result, "offset", {"memory": "zero_copy", "offset_floats": f},
                              {"memory": "zero_copy", "offset_floats": o})]
        slower = sum(row["useful_GBps"] < rate for rate in differing)
        found.append({"offset": o, "GBps": float(row["useful_GBps"]), "slower": slower,
                      "faster": len(differing) - slower, "within": len(five) - len(differing), "of": len(five)})
    return found


def sectors_by_offset(result: Any, trace: Callable[[int, int], Any]) -> Any:
    """The traced sectors and lines per offset, and whether one sector fewer made a read faster in this run."""
    groups = sector_groups(trace)
    table = Table(["sectors / warp", "lines / warp", "offsets (floats)"],
                  [(s, n, ", ".join(map(str, offs))) for (s, n), offs in sorted(groups.items())],
                  caption="*traced on the CPU backend*")
    found = four_against_five(result, groups)
    def many(n: int, of: int) -> str:
        return "none" if n == 0 else f"all {of}" if n == of else str(n)

    lines = [f"offset {f['offset']} (4 sectors a warp): {f['GBps']:.1f} GB/s zero-copy. Of the {f['of']} offsets "
             f"that touch 5 sectors, it is faster than {many(f['faster'], f['of'])}, slower than "
             f"{many(f['slower'], f['of'])}, and not told apart from {many(f['within'], f['of'])} (the course's "
             "rule: beyond this run's spread, one sign across the committed records)." for f in found]
    beat = [f["offset"] for f in found if f["faster"] == f["of"]]
    rest = [f["offset"] for f in found if f["faster"] < f["of"]]
    if beat and rest:
        verdict = (f"In this run ({result.origin()}) offset{'s' if len(beat) > 1 else ''} "
                   f"{', '.join(map(str, beat))} beat every 5-sector offset, while "
                   f"{', '.join(map(str, rest))}, with the same 4 sectors in 2 lines, did not: one sector fewer "
                   "does not by itself make a read faster.")
    elif beat:
        verdict = (f"In this run ({result.origin()}) every 4-sector offset beat every 5-sector one: here one sector "
                   "fewer made the read faster.")
    else:
        verdict = (f"In this run ({result.origin()}) no 4-sector offset beat every 5-sector one: one sector fewer did "
                   "not make a read faster.")
    return join(table, bullets(lines), Text(verdict))


def vector_width(result: Any) -> Any:
    """float against float4 in both memories, and whether they differ beyond their spread."""
    rows, notes = [], []
    for memory in ("zero_copy", "device"):
        scalar, vector = result.one(memory=memory, vector_bytes=4), result.one(memory=memory, vector_bytes=16)
        rows.append([memory, f"{scalar['useful_GBps']:,.1f}", f"{vector['useful_GBps']:,.1f}",
                     f"{vector['useful_GBps'] / scalar['useful_GBps']:.2f}x"])
        notes.append(f"{memory}: float4 and float " + (
            f"differ {_RULE}." if apart(result, "vector_width", {"memory": memory, "vector_bytes": 4},
                                         {"memory": memory, "vector_bytes": 16}) else
            "do not differ by the course's rule (beyond this run's spread, with one sign across the committed "
            "records): no difference the records can show."))
    table = Table(["memory", "float: useful GB/s", "float4: useful GB/s", "float4 / float"], rows,
                  caption=f"*{result.origin()}*")
    return join(table, bullets(notes))


def what_you_saw(stride_: Any, offset: Any, width: Any) -> Text:
    """The lesson's figures in a few bullets."""
    slow = {m: useful(stride_, m, stride=1) / useful(stride_, m, stride=32) for m in ("zero_copy", "device")}
    loss = {}
    for m in ("zero_copy", "device"):
        aligned = np.mean([useful(offset, m, offset_floats=o) for o in (0, 32)])
        loss[m] = 1 - np.mean([useful(offset, m, offset_floats=o) for o in range(1, 32)]) / aligned
    gain = {m: useful(width, m, vector_bytes=16) / useful(width, m, vector_bytes=4) for m in ("zero_copy", "device")}
    return bullets([
        f"Data from: {stride_.describe()}",
        f"Stride 1 -> 32 slowed zero-copy by {slow['zero_copy']:.1f}x ({useful(stride_, 'zero_copy', stride=1):.1f} "
        f"-> {useful(stride_, 'zero_copy', stride=32):.2f} GB/s) and device memory by {slow['device']:.1f}x.",
        f"Misalignment cost zero-copy {loss['zero_copy']:.1%} and device memory {loss['device']:.1%} of useful "
        "bandwidth on average.",
        f"float4 instead of float: zero-copy {gain['zero_copy']:.2f}x, device memory {gain['device']:.2f}x.",
        device_baselines(stride_, offset, width)])


def device_baselines(stride_: Any, offset: Any, width: Any) -> str:
    """The same coalesced float read of device memory in the three sweeps, and why they may differ (said as a
    hypothesis): each sweep times it in rounds beside other points, over buffers of different spans."""
    rates = [useful(stride_, "device", stride=1), useful(offset, "device", offset_floats=0),
             useful(width, "device", vector_bytes=4)]
    span = max(r["count"] * r["stride"] for r in stride_.select(memory="device")) * 4 / (1 << 30)
    low, high = min(rates), max(rates)
    said = (f"The same coalesced float read of device memory ran at {rates[0]:,.0f} (stride sweep, stride 1), "
            f"{rates[1]:,.0f} (offset sweep, offset 0) and {rates[2]:,.0f} GB/s (float against float4)")
    if high / low < 1.05:
        return said + ": within 5 % of one another."
    return (said + f", {high / low - 1:.0%} apart. Each sweep times it beside other points in rounds, over buffers "
            f"of different spans (the stride sweep's device buffer spans {span:,.0f} GiB); what the neighbouring "
            "points leave in the GPU's address-translation caches is a likely cause, not one this lesson measures.")


def requests_in_flight(stride_: Any, latency: Any) -> Text:
    """Why a rate of requests limits stride 32 (coalesce-and-align-accesses): Little's law with a dependent zero-copy
    load's latency (measure-latency) gives the requests in flight, beside the 768 reads 10-bit tags allow."""
    far = max(r["stride"] for r in stride_.select(memory="zero_copy"))
    rate = useful(stride_, "zero_copy", stride=32) * 1e9 / 4  # one float, one PCIe read request
    load_ns = float(latency.select(memory="zero_copy")[0]["load_ns"])
    in_flight = rate * load_ns * 1e-9
    near = 0.8 <= in_flight / 768 <= 1.25
    where = "" if stride_.live else f", data/{stride_.record_file}"
    return Text(f"At stride 32 every float is its own PCIe read request: {rate / 1e9:.2f} G requests/s "
                f"({stride_.origin()}{where}; {_lesson('model-zero-copy-reads').label} fits its own rate on another "
                f"record). By Little's law, requests in flight = rate x the time each is held; with a "
                f"dependent zero-copy load's {load_ns:,.0f} ns ({latency.origin()}) that is about {in_flight:,.0f} "
                f"requests, {in_flight / 768:.2f}x the 768 reads that 10-bit PCIe tags let one requester keep "
                "outstanding (PCIe 5.0, sect. 2.2.6.2). "
                + ("So a cap on requests in flight, not the link's bytes, fits the figures (the load's latency also "
                   "counts the path inside the GPU, while a tag is held only on the link). " if near else
                   "The tags alone do not account for it: something else caps the requests in flight. ")
                + f"Strides 32 to {far} make the same requests per float; {_lesson('model-zero-copy-reads').label} "
                "models that rate.")
