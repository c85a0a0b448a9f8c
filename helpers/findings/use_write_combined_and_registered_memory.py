"""use-write-combined-and-registered-memory: the sentences and tables that quote its measured figures, computed from
the results (``write_combined``, ``pagemap_pinned``, ``address_identity``, ``registered``), so that the text agrees
with the figures live and in replay. Write-combined against ordinary memory is judged by the course's rule
(helpers.analysis.spread): beyond the repeats, and of one sign across the committed records of the same kind of
machine (:func:`write_combined_verdict`)."""

from __future__ import annotations

import platform
import re
from typing import Any

import numpy as np

from ..analysis import spread
from ..errors import RegistrationError
from ..exercises.lesson13 import (reads_apart, reads_needed_rule, recording_machine,  # noqa: F401
                                  registration_seconds, same_machine, which_run, write_combined_verdict)
from ..experiments.mapping import explain_register_error
from ..experiments.quiet import band
from ..memory import gpu, pages
from ..platform.notes import HOLDS, platform_note
from ..platform.provenance import driver_version
from ..tables import Table, Text, bullets, join
from . import computed_from

LESSON = "use-write-combined-and-registered-memory"
SIDES = [(side, op) for side in ("cpu", "gpu") for op in ("read", "write")]
WC_KINDS = ("cudaHostAlloc mapped", "cudaHostAlloc mapped + write-combined")


HOLD = HOLDS    # the note's sentence, up to the GPU's name: replaced whole (to its full stop) below


def this_machine(provenance: dict[str, Any] | None = None) -> Text:
    """What this machine changes in the lesson, beside the reference GPU; in replay, the recording machine named, and
    that section 1's write-combining result is that machine's (a virtual machine's), not every host's."""
    note = platform_note(LESSON)
    if HOLD not in note:
        return Text(note)
    if provenance is None:
        from ..records import reference_record

        provenance = reference_record()[0]["provenance"]
    said = (f"This lesson's figures hold for {recording_machine(provenance)}. Section 1's "
            "CPU reads of write-combined memory show what that machine gave the CPU; registration and the flags hold "
            "as measured.")
    return Text(re.sub(re.escape(HOLD) + r"[^\n]*?\.(?=\s|$)", lambda _match: said, note, count=1))


def ratios(wc: Any) -> dict[tuple[str, str], float]:
    """Write-combined GB/s over ordinary mapped GB/s, for each (side, op)."""
    return {(side, op): wc.one(allocation="mapped + write-combined", side=side, op=op)["GBps"]
            / wc.one(allocation="mapped", side=side, op=op)["GBps"] for side, op in SIDES}


DRIVER_MEMORY = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html"
GUIDE = "Programming Guide"   # linked in section 1's text, above the verdict


def describe_write_combined(wc: Any) -> str:
    """The verdict on write-combined memory, in words, from :func:`write_combined_verdict`."""
    v = write_combined_verdict(wc)
    ratio = v["cpu_read_ratio"]
    machine = "this machine (live)" if wc.live else recording_machine(wc.provenance)
    if v["cpu_wc_honoured"]:
        cpu = (f"The CPU's reads of write-combined memory took {1 / ratio:.1f}x as long as of ordinary pinned memory "
               f"on {machine}, beyond their spread and of one sign across the committed records of such a machine: "
               f"the flag reached the CPU's page tables, as the {GUIDE} warns.")
    elif ratio < 0.5:
        cpu = (f"The CPU read write-combined memory at {ratio:.0%} of the ordinary rate on {machine}, "
               "but the records of such a machine do not all show a slowdown: one run cannot tell whether the flag "
               "reached the CPU's page tables.")
    else:
        cpu = (f"The CPU read write-combined memory at {ratio:.0%} of the ordinary rate "
               f"({'beyond' if v['cpu_apart'] else 'within'} their spread, across the committed records of such a "
               f"machine) on {machine}: it did not give the CPU a write-combined mapping (a hypervisor may decide "
               f"its guest's memory types: Going deeper), so the slowdown the {GUIDE} warns of cannot show on it; on bare metal, where the flag "
               "reaches the CPU's page tables, expect CPU reads many times slower.")
    gpu = (f" The GPU read both at the same rate (ratio {v['gpu_read_ratio']:.3f}, within their spread): "
           "write-combining does not make GPU reads faster on it. It is for buffers the CPU writes and the GPU reads, "
           "whose reads need not be snooped where the platform honours the type." if v["gpu_same"] else
           f" The GPU read write-combined memory at {v['gpu_read_ratio']:.2f}x the ordinary rate, beyond their "
           "spread.")
    return cpu + gpu


def spread_said(row: dict[str, Any], key: str = "GBps") -> str:
    """A rate with its spread, as the tables show it: "11.2 (10.3-11.5)", the median and, in brackets, the rates of
    the slowest and the fastest repeat (the band the course's rule compares)."""
    low, mid, high = band(row, key)
    return f"{mid:.1f} ({low:.1f}-{high:.1f})"


def verdict(wc: Any) -> Any:
    """Section 1: each side's rates with their spread and their ratio, the machine, and the verdict on the guide's
    warning."""
    ratio = ratios(wc)
    rows = [(f"{side.upper()} {op}", spread_said(wc.one(allocation="mapped", side=side, op=op)),
             spread_said(wc.one(allocation="mapped + write-combined", side=side, op=op)),
             f"{ratio[side, op]:.2f}") for side, op in SIDES]
    machine = platform.platform() if wc.live else wc.provenance.get("platform", "not recorded")
    repeats = len(wc.rows[0]["seconds"])
    return join(Table(["who, what", "ordinary mapped GB/s", "write-combined GB/s", "WC / ordinary"], rows,
                      caption=f"*{wc.origin(dated=True)}; median of {repeats} repeats (slowest-fastest); "
                              f"machine: {machine}*"),
                Text(describe_write_combined(wc)))


def backing(pagemap: Any) -> Any:
    """Section 1: the file /proc/self/maps names behind the ordinary and the write-combined allocation."""
    found = {kind: " ".join(pagemap.one(allocation=kind)["maps_line"].split()[5:]) for kind in WC_KINDS}
    differ = len(set(found.values())) > 1
    said = ("The two allocations are backed differently: the driver did treat them differently." if differ else
            f"The two allocations are backed the same way: {which_run(pagemap)} does not show that the flag "
            "changed the allocation.")
    return join(Table(["allocation", "backed by"], list(found.items()), caption=f"*{pagemap.origin(dated=True)}*"), Text(said))


def flags(identity: Any) -> Any:
    """Section 1: the flags cuMemHostGetFlags reports for each kind of allocation, and why the one allocated without
    DEVICEMAP reports it where addressing is unified."""
    rows = [(r["allocation"], ", ".join(r["host_flags"]) or "none") for r in identity.rows if "host_flags" in r]
    if not rows:
        return Text(f"data/{identity.record_file} was recorded before address_identity stored the flags; run "
                    "`python -m helpers record` on a GPU to add them.")
    table = Table(["allocation", "flags the driver reports"], rows, caption=(
        f"*{identity.origin(dated=True)}; registered memory has no row: `cuMemHostGetFlags` reads only "
        f"`cuMemHostAlloc`/`cuMemAllocHost` memory ([Driver API]({DRIVER_MEMORY}))*"))
    unasked = dict(rows).get("pinned, no DEVICEMAP flag", "")
    if "DEVICEMAP" not in unasked:
        return table
    return join(table, Text(
        "With unified addressing every page-locked allocation is mapped (Runtime API, Unified Addressing), so the one "
        "made without `DEVICEMAP` reports it too."))


def addresses(identity: Any, attributes: dict[str, int]) -> Any:
    """Section 2: the two attributes that decide, and each allocation's host and device pointers."""
    said = Text(", ".join(f"`{k}` = {attributes[k]}" for k in ("UNIFIED_ADDRESSING",
                                                                "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM")) + ".")
    return join(said, identity.table(["allocation", "host_pointer", "device_pointer", "equal",
                                      "kernel_through_host_pointer_ok"]))


def _registered_apart(reg: Any) -> bool:
    """Whether registered memory read at another rate than `cudaHostAlloc` memory by the course's rule
    (:func:`helpers.analysis.spread.rates_apart`, among the committed records of the same GPU)."""
    return spread.rates_apart(reg, "registered", {"allocation": "cudaHostAlloc mapped"}, {"allocation": "registered"},
                              "GBps", like=spread.same_gpu(reg))


def registration(reg: Any) -> Text:
    """Section 3: what PyCUDA's own call did, what registering cost, and how fast registered memory read."""
    plain = reg.one(allocation="pycuda.driver.register_host_memory")
    aligned = reg.select(allocation="pycuda.driver.register_host_memory (aligned_empty, DEVICEMAP)")
    per_gib, _ = registration_seconds(reg)
    cost = reg.one(allocation="register + unregister (host)")
    registered, allocated = reg.one(allocation="registered"), reg.one(allocation="cudaHostAlloc mapped")
    change = registered["GBps"] / allocated["GBps"] - 1
    pycuda = ("PyCUDA's `register_host_memory` worked on an ordinary array." if plain["works"] else
              explain_register_error(plain))   # today's words for the recorded error, not the record's
    if aligned:
        a = aligned[0]
        pycuda += (f" On {a['nbytes'] >> 20} MiB of page-aligned memory from `aligned_empty` with `DEVICEMAP` it "
                   + ("worked." if a["works"] else "failed the same way: alignment is not the reason."))
    return bullets([
        f"Figures {reg.origin(dated=True)}.",
        pycuda,
        f"Registering and unregistering {cost['nbytes'] >> 20} MiB took {float(np.median(cost['seconds'])) * 1e3:.1f} "
        f"ms: {per_gib * 1e3:.0f} ms per GiB.",
        f"`read_float4_x4` read registered memory at {spread_said(registered)} and `cudaHostAlloc` memory at "
        f"{spread_said(allocated)} GB/s (median, slowest-fastest repeat; its own runs, not "
        "section 1's): "
        + (f"{abs(change):.0%} {'slower' if change < 0 else 'faster'}, beyond their spread."
           if _registered_apart(reg) else "as fast, within their spread."),
    ])


def probes(reg: Any) -> Table:
    """Section 3: the alignment probes, with the driver that answered them in the caption."""
    shown = reg.table(["page_offset", "nbytes", "works", "error"], allocation="alignment probe (cuMemHostRegister)")
    driver = driver_version() if reg.live else reg.provenance.get("driver_version", "not recorded")
    return Table(shown.header, shown.rows, caption=f"*{reg.origin(dated=True)}; driver {driver}*")


def refusals() -> Table:
    """Section 3: two arrays RegisteredArray refuses before calling the driver, and why (no GPU needed)."""
    rows = []
    for name, array in (("`zc.pages.page_aligned_empty(2048)[::2]`, every other float",
                         pages.page_aligned_empty(2048)[::2]),
                        ("`zc.pages.page_aligned_empty(2048)[1:]`, 4 bytes in", pages.page_aligned_empty(2048)[1:])):
        try:
            gpu._check_registrable(array)
            said = "accepted"
        except RegistrationError as exc:
            said = str(exc)
        rows.append((name, said))
    return Table(["array", "RegisteredArray says"], rows)


def _kept(identity: Any) -> str:
    """How many kinds kept the host address on the GPU, as words: "All 5" or "3 of 5"."""
    kept, n = sum(bool(r["equal"]) for r in identity.rows), len(identity.rows)
    return f"All {n}" if kept == n else f"{kept} of {n}"


def summary(wc: Any, pagemap: Any, identity: Any, reg: Any, attributes: dict[str, int]) -> Text:
    """What you saw, computed from the results: this run's live, the record's in replay."""
    ratio = ratios(wc)
    found = {kind: pagemap.one(allocation=kind)["maps_line"].split()[5:] for kind in WC_KINDS}
    wc_flags = identity.one(allocation="mapped + write-combined").get("host_flags")
    per_gib, read = registration_seconds(reg)
    registered, allocated = reg.one(allocation="registered")["GBps"], reg.one(allocation="cudaHostAlloc mapped")["GBps"]
    return bullets([
        f"The CPU read write-combined memory at {ratio['cpu', 'read']:.0%} and wrote it at {ratio['cpu', 'write']:.0%} "
        f"of the ordinary rate; the GPU read it at {ratio['gpu', 'read']:.0%} and wrote it at "
        f"{ratio['gpu', 'write']:.0%} ({wc.origin(dated=True)}).",
        "The write-combined allocation was backed " + ("differently from" if found[WC_KINDS[0]] != found[WC_KINDS[1]]
                                                       else "the same way as") + " the ordinary one; the driver's "
        f"flags for it: {', '.join(wc_flags) if wc_flags else 'not recorded'}.",
        f"{_kept(identity)} kinds of page-locked allocation had a device pointer equal to the host pointer "
        f"(`UNIFIED_ADDRESSING` = {attributes['UNIFIED_ADDRESSING']}).",
        f"Registering cost {per_gib * 1e3:.0f} ms per GiB; registered memory read at {registered / allocated:.0%} of "
        f"`cudaHostAlloc` memory's rate; {reads_needed_rule(per_gib, read)} reads of 1 GiB bring registering under "
        f"10% of the total ({reg.origin(dated=True)}).",
    ], head=computed_from(wc))
