"""coalesce-and-align-accesses: the tables and sentences that quote its traced and measured figures, computed from
the traces and results so that the text beside a figure agrees with it, live and in replay."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from ..analysis import spread
from ..experiments.result import expect
from ..lessons import lesson as _lesson
from . import computed_from
from ..i18n import N_, _
from ..tables import Table, Text, bullets, join


# The memories of the sweeps, as the tables name them.
MEMORY = {"zero_copy": N_("zero_copy"), "device": N_("device")}


def useful(result: Any, memory: str, **where: Any) -> float:
    return float(result.one(memory=memory, **where)["useful_GBps"])


def apart(result: Any, name: str, first: dict[str, Any], second: dict[str, Any], key: str = "useful_GBps") -> bool:
    """Whether row ``second`` of ``result`` differs from row ``first`` by the course's rule (helpers.analysis.spread):
    beyond both rows' spreads in this run, and of one sign across the committed records of experiment ``name``."""
    return spread.rates_apart(result, name, first, second, key)


_RULE = N_("by more than this run's spread (slowest to fastest repeat) and with one sign across the committed "
           "records")


def traced(trace: Callable[[int, int], Any], patterns: Iterable[tuple[int, int]]) -> Table:
    """Per warp, the useful bytes, sectors and lines of each (stride, offset), from the CPU backend's traces."""
    rows = []
    for stride, offset in patterns:
        t = trace(stride, offset)
        per = t.requests                                   # one request per warp here
        rows.append([stride, offset, t.useful_bytes // per, t.sectors // per, t.lines // per,
                     f"{t.useful_bytes / (32 * t.sectors):.1%}"])
    return Table([_("stride"), _("offset (floats)"), _("useful bytes / warp"), _("sectors / warp"),
                  _("lines / warp"), _("useful share of sector bytes")], rows,
                 caption=_("*traced on the CPU backend*"))


def stride(result: Any, memcpy: Any) -> Any:
    """Stride 1 against stride 32 in both memories, the check of the slowdown, and what limits zero-copy there."""
    slowdown, rows = {}, []
    for memory in ("zero_copy", "device"):
        s1, s32 = useful(result, memory, stride=1), useful(result, memory, stride=32)
        slowdown[memory] = s1 / s32
        rows.append([_(MEMORY[memory]), f"{s1:,.1f}", f"{s32:,.2f}", f"{s1 / s32:.1f}x"])
    table = Table([_("memory"), _("stride 1: useful GB/s"), _("stride 32: useful GB/s"), _("slowdown 1 -> 32")],
                  rows,
                  caption=f"*{result.origin()}*")
    link = float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))
    zc32, dev32 = useful(result, "zero_copy", stride=32), useful(result, "device", stride=32)
    check = expect((slowdown["zero_copy"] > 2 and slowdown["device"] > 2,
                    _("stride 32 slower by more than 2x in both memories (it wastes 7/8 of every sector)"),
                    _("{zc:.1f}x (zero-copy) and {dev:.1f}x (device)").format(zc=slowdown["zero_copy"],
                                                                               dev=slowdown["device"])))
    below = zc32 < link / 8
    text = (_("If only the wasted sector bytes mattered, zero-copy at stride 32 would reach 1/8 of the {link:.1f} "
              "GB/s link = {eighth:.1f} GB/s; it reached {zc32:.2f} GB/s, ").format(link=link, eighth=link / 8,
                                                                                    zc32=zc32)
            + (_("**below** that: PCIe read requests per second limit it, not bytes. ") if below else
               _("not below that: here the wasted bytes account for the loss. "))
            + _("Each float at stride 32 travels in its own PCIe read request: {requests:.2f} G requests/s, against "
                "{sectors:.1f} G sectors/s from device memory.").format(requests=zc32 / 4, sectors=dev32 / 4))
    return join(table, check, Text(text))


def misalignment(result: Any) -> Any:
    """Aligned against misaligned offsets in both memories, and how many offsets differ beyond the spread."""
    rows, counts = [], []
    for memory in ("zero_copy", "device"):
        aligned = float(np.mean([useful(result, memory, offset_floats=o) for o in (0, 32)]))
        misaligned = float(np.mean([useful(result, memory, offset_floats=o) for o in range(1, 32)]))
        rows.append([_(MEMORY[memory]), f"{aligned:,.1f}", f"{misaligned:,.1f}", f"{1 - misaligned / aligned:.1%}"])
        beyond = [o for o in range(1, 32) if apart(result, "offset", {"memory": memory, "offset_floats": 0},
                                                   {"memory": memory, "offset_floats": o})]
        counts.append(_("{memory}: {n} of 31 misaligned offsets differ from offset 0 {rule}.").format(
            memory=_(MEMORY[memory]), n=len(beyond), rule=_(_RULE)))
    table = Table([_("memory"), _("aligned (offsets 0, 32): mean useful GB/s"), _("misaligned (1..31): mean"),
                   _("loss")], rows,
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


# One sentence per shape of (faster, slower, within) > 0, so that each language says only the counts that are not 0
_COMPARISONS = {
    (True, False, False): N_("it is faster than all {of}, slower than none, and not told apart from none"),
    (False, True, False): N_("it is faster than none, slower than all {of}, and not told apart from none"),
    (False, False, True): N_("it is faster than none, slower than none, and not told apart from all {of}"),
    (True, True, False): N_("it is faster than {faster}, slower than {slower}, and not told apart from none"),
    (True, False, True): N_("it is faster than {faster}, slower than none, and not told apart from {within}"),
    (False, True, True): N_("it is faster than none, slower than {slower}, and not told apart from {within}"),
    (True, True, True): N_("it is faster than {faster}, slower than {slower}, and not told apart from {within}"),
    (False, False, False): N_("it is faster than none, slower than none, and not told apart from none"),
}


def _comparison(found: dict[str, Any]) -> str:
    """How one 4-sector offset compares with the 5-sector ones (:func:`four_against_five`'s row), in words."""
    shape = (found["faster"] > 0, found["slower"] > 0, found["within"] > 0)
    return _(_COMPARISONS[shape]).format(**found)


def sectors_by_offset(result: Any, trace: Callable[[int, int], Any]) -> Any:
    """The traced sectors and lines per offset, and whether one sector fewer made a read faster in this run."""
    groups = sector_groups(trace)
    table = Table([_("sectors / warp"), _("lines / warp"), _("offsets (floats)")],
                  [(s, n, ", ".join(map(str, offs))) for (s, n), offs in sorted(groups.items())],
                  caption=_("*traced on the CPU backend*"))
    found = four_against_five(result, groups)
    lines = [_("offset {offset} (4 sectors a warp): {rate:.1f} GB/s zero-copy. Of the {of} offsets that touch 5 "
               "sectors, {comparison} (the course's rule: beyond this run's spread, one sign across the committed "
               "records).").format(offset=f["offset"], rate=f["GBps"], of=f["of"], comparison=_comparison(f))
             for f in found]
    beat = [f["offset"] for f in found if f["faster"] == f["of"]]
    rest = [f["offset"] for f in found if f["faster"] < f["of"]]
    if beat and rest:
        verdict = (_("In this run ({origin}) offsets {beat} beat every 5-sector offset, while {rest}, with the same "
                     "4 sectors in 2 lines, did not: one sector fewer does not by itself make a read faster.")
                   if len(beat) > 1 else
                   _("In this run ({origin}) offset {beat} beat every 5-sector offset, while {rest}, with the same 4 "
                     "sectors in 2 lines, did not: one sector fewer does not by itself make a read faster.")).format(
            origin=result.origin(), beat=", ".join(map(str, beat)), rest=", ".join(map(str, rest)))
    elif beat:
        verdict = _("In this run ({origin}) every 4-sector offset beat every 5-sector one: here one sector fewer made "
                    "the read faster.").format(origin=result.origin())
    else:
        verdict = _("In this run ({origin}) no 4-sector offset beat every 5-sector one: one sector fewer did not make "
                    "a read faster.").format(origin=result.origin())
    return join(table, bullets(lines), Text(verdict))


def vector_width(result: Any) -> Any:
    """float against float4 in both memories, and whether they differ beyond their spread."""
    rows, notes = [], []
    for memory in ("zero_copy", "device"):
        scalar, vector = result.one(memory=memory, vector_bytes=4), result.one(memory=memory, vector_bytes=16)
        rows.append([_(MEMORY[memory]), f"{scalar['useful_GBps']:,.1f}", f"{vector['useful_GBps']:,.1f}",
                     f"{vector['useful_GBps'] / scalar['useful_GBps']:.2f}x"])
        notes.append((_("{memory}: float4 and float differ {rule}.").format(memory=_(MEMORY[memory]), rule=_(_RULE))
                      if apart(result, "vector_width", {"memory": memory, "vector_bytes": 4},
                               {"memory": memory, "vector_bytes": 16}) else
                      _("{memory}: float4 and float do not differ by the course's rule (beyond this run's spread, "
                        "with one sign across the committed records): no difference the records can show.").format(
                          memory=_(MEMORY[memory]))))
    table = Table([_("memory"), _("float: useful GB/s"), _("float4: useful GB/s"), "float4 / float"], rows,
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
        _("Data from: {source}").format(source=stride_.describe()),
        _("Stride 1 -> 32 slowed zero-copy by {zc:.1f}x ({s1:.1f} -> {s32:.2f} GB/s) and device memory by "
          "{dev:.1f}x.").format(zc=slow["zero_copy"], s1=useful(stride_, "zero_copy", stride=1),
                                s32=useful(stride_, "zero_copy", stride=32), dev=slow["device"]),
        _("Misalignment cost zero-copy {zc:.1%} and device memory {dev:.1%} of useful bandwidth on average.").format(
            zc=loss["zero_copy"], dev=loss["device"]),
        _("float4 instead of float: zero-copy {zc:.2f}x, device memory {dev:.2f}x.").format(
            zc=gain["zero_copy"], dev=gain["device"]),
        device_baselines(stride_, offset, width)], head=computed_from(stride_))


def device_baselines(stride_: Any, offset: Any, width: Any) -> str:
    """The same coalesced float read of device memory in the three sweeps, and why they may differ (said as a
    hypothesis): each sweep times it in rounds beside other points, over buffers of different spans."""
    rates = [useful(stride_, "device", stride=1), useful(offset, "device", offset_floats=0),
             useful(width, "device", vector_bytes=4)]
    span = max(r["count"] * r["stride"] for r in stride_.select(memory="device")) * 4 / (1 << 30)
    low, high = min(rates), max(rates)
    said = _("The same coalesced float read of device memory ran at {a:,.0f} (stride sweep, stride 1), {b:,.0f} "
             "(offset sweep, offset 0) and {c:,.0f} GB/s (float against float4)").format(a=rates[0], b=rates[1],
                                                                                        c=rates[2])
    if high / low < 1.05:
        return said + _(": within 5 % of one another.")
    return said + _(", {apart:.0%} apart. Each sweep times it beside other points in rounds, over buffers of "
                    "different spans (the stride sweep's device buffer spans {span:,.0f} GiB); what the neighbouring "
                    "points leave in the GPU's address-translation caches is a likely cause, not one this lesson "
                    "measures.").format(apart=high / low - 1, span=span)


def requests_in_flight(stride_: Any, latency: Any) -> Text:
    """Why a rate of requests limits stride 32 (coalesce-and-align-accesses): Little's law with a dependent zero-copy
    load's latency (measure-latency) gives the requests in flight, beside the 768 reads 10-bit tags allow."""
    far = max(r["stride"] for r in stride_.select(memory="zero_copy"))
    rate = useful(stride_, "zero_copy", stride=32) * 1e9 / 4  # one float, one PCIe read request
    load_ns = float(latency.select(memory="zero_copy")[0]["load_ns"])
    in_flight = rate * load_ns * 1e-9
    near = 0.8 <= in_flight / 768 <= 1.25
    where = "" if stride_.live else _(", data/{file}").format(file=stride_.record_file)
    model = _lesson("model-zero-copy-reads").label
    return Text(_("At stride 32 every float is its own PCIe read request: {rate:.2f} G requests/s ({origin}{where}; "
                  "{model} fits its own rate on another record). By Little's law, requests in flight = rate x the "
                  "time each is held; with a dependent zero-copy load's {load_ns:,.0f} ns ({lat_origin}) that is "
                  "about {in_flight:,.0f} requests, {share:.2f}x the 768 reads that 10-bit PCIe tags let one "
                  "requester keep outstanding (PCIe 5.0, sect. 2.2.6.2). ").format(
        rate=rate / 1e9, origin=stride_.origin(), where=where, model=model, load_ns=load_ns,
        lat_origin=latency.origin(), in_flight=in_flight, share=in_flight / 768)
                + (_("So a cap on requests in flight, not the link's bytes, fits the figures (the load's latency also "
                     "counts the path inside the GPU, while a tag is held only on the link). ") if near else
                   _("The tags alone do not account for it: something else caps the requests in flight. "))
                + _("Strides 32 to {far} make the same requests per float; {model} models that rate.").format(
                    far=far, model=model))
