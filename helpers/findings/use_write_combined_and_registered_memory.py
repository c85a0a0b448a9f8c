"""use-write-combined-and-registered-memory: the sentences and tables that quote its measured figures, computed from
the results (``write_combined``, ``pagemap_pinned``, ``address_identity``, ``registered``), so that the text agrees
with the figures live and in replay."""

from __future__ import annotations

import platform
from typing import Any

import numpy as np

from ..errors import RegistrationError
from ..exercises.lesson13 import reads_needed_rule, registration_seconds
from ..experiments.mapping import describe_write_combined, explain_register_error
from ..memory import gpu, pages
from ..platform.notes import platform_note
from ..tables import Table, Text, bullets, join

LESSON = "use-write-combined-and-registered-memory"
SIDES = [(side, op) for side in ("cpu", "gpu") for op in ("read", "write")]
WC_KINDS = ("cudaHostAlloc mapped", "cudaHostAlloc mapped + write-combined")


HOLD = "Its conclusions hold as written for it."


def recording_machine(provenance: dict[str, Any]) -> str:
    """The machine a record was made on, named for a sentence: its GPU, and the virtual machine if it was one."""
    vm = provenance.get("virtualization") or ""
    inside = f", inside a virtual machine ({vm}; {provenance.get('platform', 'platform not recorded')})" \
        if vm and vm != "none" else ""
    return f"the {provenance.get('gpu', 'recorded GPU')}'s host{inside}"


def this_machine(provenance: dict[str, Any] | None = None) -> Text:
    """What this machine changes in the lesson, beside the reference GPU; in replay, the recording machine named, and
    that section 1's write-combining result is that machine's (a virtual machine's), not every host's."""
    note = platform_note(LESSON)
    if HOLD not in note:
        return Text(note)
    if provenance is None:
        from ..records import reference_record

        provenance = reference_record()[0]["provenance"]
    said = (f"Its figures hold for the machine they were recorded on, {recording_machine(provenance)}. Section 1's "
            "CPU reads of write-combined memory show what that machine gave the CPU, which on a virtual machine may "
            "not be a write-combined mapping at all (Going deeper); registration and the flags hold as measured.")
    return Text(note.replace(HOLD, said))


def ratios(wc: Any) -> dict[tuple[str, str], float]:
    """Write-combined GB/s over ordinary mapped GB/s, for each (side, op)."""
    return {(side, op): wc.one(allocation="mapped + write-combined", side=side, op=op)["GBps"]
            / wc.one(allocation="mapped", side=side, op=op)["GBps"] for side, op in SIDES}


def verdict(wc: Any) -> Any:
    """Section 1: each side's rates and their ratio, the machine, and the verdict on the guide's warning."""
    ratio = ratios(wc)
    rows = [(f"{side.upper()} {op}", f"{wc.one(allocation='mapped', side=side, op=op)['GBps']:.1f}",
             f"{wc.one(allocation='mapped + write-combined', side=side, op=op)['GBps']:.1f}",
             f"{ratio[side, op]:.2f}") for side, op in SIDES]
    machine = platform.platform() if wc.live else wc.provenance.get("platform", "not recorded")
    return join(Table(["who, what", "ordinary mapped GB/s", "write-combined GB/s", "WC / ordinary"], rows,
                      caption=f"*{wc.origin(dated=True)}; machine: {machine}*"),
                Text(describe_write_combined(wc)))


def backing(pagemap: Any) -> Any:
    """Section 1: the file /proc/self/maps names behind the ordinary and the write-combined allocation."""
    found = {kind: " ".join(pagemap.one(allocation=kind)["maps_line"].split()[5:]) for kind in WC_KINDS}
    differ = len(set(found.values())) > 1
    said = ("The two allocations are backed differently: the driver did treat them differently." if differ else
            "The two allocations are backed the same way: this run does not show that the flag changed the "
            "allocation.")
    return join(Table(["allocation", "backed by"], list(found.items()), caption=f"*{pagemap.origin(dated=True)}*"), Text(said))


def flags(identity: Any) -> Any:
    """Section 1: the flags cuMemHostGetFlags reports for each kind of allocation."""
    rows = [(r["allocation"], ", ".join(r["host_flags"]) or "none") for r in identity.rows if "host_flags" in r]
    if not rows:
        return Text(f"data/{identity.record_file} was recorded before address_identity stored the flags; run "
                    "`python -m helpers record` on a GPU to add them.")
    return Table(["allocation", "flags the driver reports"], rows, caption=f"*{identity.origin(dated=True)}*")


def addresses(identity: Any, attributes: dict[str, int]) -> Any:
    """Section 2: the two attributes that decide, and each allocation's host and device pointers."""
    said = Text(", ".join(f"`{k}` = {attributes[k]}" for k in ("UNIFIED_ADDRESSING",
                                                                "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM")) + ".")
    return join(said, identity.table(["allocation", "host_pointer", "device_pointer", "equal",
                                      "kernel_through_host_pointer_ok"]))


def registration(reg: Any) -> Text:
    """Section 3: what PyCUDA's own call did, what registering cost, and how fast registered memory read."""
    plain = reg.one(allocation="pycuda.driver.register_host_memory")
    aligned = reg.select(allocation="pycuda.driver.register_host_memory (aligned_empty, DEVICEMAP)")
    per_gib, _ = registration_seconds(reg)
    cost = reg.one(allocation="register + unregister (host)")
    registered, allocated = reg.one(allocation="registered")["GBps"], reg.one(allocation="cudaHostAlloc mapped")["GBps"]
    change = registered / allocated - 1
    pycuda = ("PyCUDA's `register_host_memory` worked on an ordinary array." if plain["works"] else
              plain.get("explanation") or explain_register_error(plain))
    if aligned:
        a = aligned[0]
        pycuda += (f" On {a['nbytes'] >> 20} MiB of page-aligned memory from `aligned_empty` with `DEVICEMAP` it "
                   + ("worked." if a["works"] else "failed the same way: alignment is not the reason."))
    return bullets([
        f"Figures {reg.origin(dated=True)}.",
        pycuda,
        f"Registering and unregistering {cost['nbytes'] >> 20} MiB took {float(np.median(cost['seconds'])) * 1e3:.1f} "
        f"ms: {per_gib * 1e3:.0f} ms per GiB.",
        f"`read_float4_x4` read registered memory at {registered:.1f} GB/s and `cudaHostAlloc` memory at "
        f"{allocated:.1f} GB/s: " + ("within 5%, as fast." if abs(change) < 0.05 else
                                     f"{abs(change):.0%} {'slower' if change < 0 else 'faster'} on this run."),
    ])


def refusals() -> Table:
    """Section 3: two arrays RegisteredArray refuses before calling the driver, and why (no GPU needed)."""
    rows = []
    for name, array in (("`page_aligned_empty(2048)[::2]`, every other float", pages.page_aligned_empty(2048)[::2]),
                        ("`page_aligned_empty(2048)[1:]`, 4 bytes in", pages.page_aligned_empty(2048)[1:])):
        try:
            gpu._check_registrable(array)
            said = "accepted"
        except RegistrationError as exc:
            said = str(exc)
        rows.append((name, said))
    return Table(["array", "RegisteredArray says"], rows)


def summary(wc: Any, pagemap: Any, identity: Any, reg: Any, attributes: dict[str, int]) -> Text:
    """What you saw, computed from this run's results."""
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
        "Every page-locked allocation had equal host and device pointers: "
        f"{all(r['equal'] for r in identity.rows)} (`UNIFIED_ADDRESSING` = {attributes['UNIFIED_ADDRESSING']}).",
        f"Registering cost {per_gib * 1e3:.0f} ms per GiB; registered memory read at {registered / allocated:.0%} of "
        f"`cudaHostAlloc` memory's rate; {reads_needed_rule(per_gib, read)} reads of 1 GiB bring registering under "
        f"10% of the total ({reg.origin(dated=True)}).",
    ])
