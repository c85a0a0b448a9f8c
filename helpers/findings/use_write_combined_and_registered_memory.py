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
from ..exercises.lesson13 import (machine_runs, reads_apart, reads_needed_rule, recording_machine,  # noqa: F401
                                  registration_seconds, same_machine, which_run, write_combined_verdict)
from ..experiments.mapping import explain_register_error
from ..experiments.quiet import band
from ..memory import gpu, pages
from ..platform.notes import HOLDS, holds, platform_note
from ..platform.provenance import driver_version
from ..i18n import N_, _
from ..tables import Table, Text, bullets, join
from . import computed_from
from .map_pages_on_the_gpu import write_combined_address

LESSON = "use-write-combined-and-registered-memory"
SIDES = [(side, op) for side in ("cpu", "gpu") for op in ("read", "write")]
WC_KINDS = ("cudaHostAlloc mapped", "cudaHostAlloc mapped + write-combined")
HOLD = HOLDS    # the note's sentence in English, up to the GPU's name (holds(): in the chosen language)


def this_machine(provenance: dict[str, Any] | None = None) -> Text:
    """What this machine changes in the lesson, beside the reference GPU; in replay, the recording machine named, and
    that section 1's write-combining result is that machine's (a virtual machine's), not every host's."""
    note, hold = platform_note(LESSON), holds()   # hold: the note's sentence up to the GPU's name, replaced whole
    if hold not in note:
        return Text(note)
    if provenance is None:
        from ..records import reference_record

        provenance = reference_record()[0]["provenance"]
    said = (_("This lesson's figures hold for {recording_machine}. Section 1's CPU reads of write-combined memory "
              "show what that machine gave the CPU; registration and the flags hold as measured.").format(
                recording_machine=recording_machine(provenance)))
    return Text(re.sub(re.escape(hold) + r"[^\n]*?[.。](?=\s|$)", lambda _match: said, note, count=1))


def ratios(wc: Any) -> dict[tuple[str, str], float]:
    """Write-combined GB/s over ordinary mapped GB/s, for each (side, op)."""
    return {(side, op): wc.one(allocation="mapped + write-combined", side=side, op=op)["GBps"]
            / wc.one(allocation="mapped", side=side, op=op)["GBps"] for side, op in SIDES}


DRIVER_MEMORY = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html"
GUIDE = "Programming Guide"   # linked in section 1's text, above the verdict


def runs_said(wc: Any) -> str:
    """The runs the verdict judges over, and where a reader finds them: the committed records of the machine in
    data/, and this run where it is live."""
    runs = machine_runs(wc)
    if wc.live and runs == 1:
        return _("1 run, this one")
    if wc.live:
        return _("{runs} runs: this one and the machine's committed records in data/").format(runs=runs)
    return _("{runs} runs: the machine's committed records in data/").format(runs=runs)


def describe_write_combined(wc: Any) -> str:
    """The verdict on write-combined memory, in words, from :func:`write_combined_verdict`."""
    v = write_combined_verdict(wc)
    ratio = v["cpu_read_ratio"]
    machine = _("this machine (live)") if wc.live else recording_machine(wc.provenance)
    runs = runs_said(wc)
    if v["cpu_wc_honoured"]:
        cpu = (_("On {machine}, the CPU's reads of write-combined memory took {value:.1f}x as long as of ordinary "
                 "pinned memory. That is beyond their spread, and slower in every recorded run of that machine "
                 "({runs}). The flag reached the CPU's page tables, as the {GUIDE} warns.").format(
                   value=1 / ratio, machine=machine, GUIDE=GUIDE, runs=runs))
    elif ratio < 0.5:
        cpu = (_("On {machine}, the CPU read write-combined memory at {ratio:.0%} of the ordinary rate. Not every "
                 "recorded run of that machine ({runs}) shows a slowdown, so one run cannot tell whether the "
                 "flag reached the CPU's page tables.").format(ratio=ratio, machine=machine, runs=runs))
    else:
        apart = _("beyond their spread") if v["cpu_apart"] else _("within their spread")
        cpu = (_("On {machine}, the CPU read write-combined memory at {ratio:.0%} of the ordinary rate. That is "
                 "{value}, judged over every recorded run of that machine ({runs}). So it did "
                 "not give the CPU a write-combined mapping, and the slowdown the {GUIDE} warns of cannot show on it; a "
                 "hypervisor may decide its guest's memory types (Going deeper).").format(
                   ratio=ratio, value=apart, machine=machine, GUIDE=GUIDE, runs=runs))
    gpu = (_(" The GPU read both at the same rate (WC / ordinary {gpu_read_ratio:.0%}, within their spread): "
             "write-combining does not make GPU reads faster on it. It is for buffers the CPU writes and the GPU "
             "reads, whose reads need not be snooped where the platform honours the type.").format(
               gpu_read_ratio=v['gpu_read_ratio']) if v["gpu_same"] else
           _(" The GPU read write-combined memory at {gpu_read_ratio:.0%} of the ordinary rate, beyond their spread.").format(
               gpu_read_ratio=v['gpu_read_ratio']))
    return cpu + gpu


def spread_said(row: dict[str, Any], key: str = "GBps") -> str:
    """A rate with its spread, as the tables show it: "11.2 (10.3-11.5)", the median and, in brackets, the rates of
    the slowest and the fastest repeat (the band the course's rule compares)."""
    low, mid, high = band(row, key)
    return f"{mid:.1f} ({low:.1f}-{high:.1f})"


# The rows of section 1's table: who reads or writes (the side), and which (the op).
SIDE_OPS = {("cpu", "read"): N_("CPU read"), ("cpu", "write"): N_("CPU write"), ("gpu", "read"): N_("GPU read"),
            ("gpu", "write"): N_("GPU write")}


def verdict(wc: Any) -> Any:
    """Section 1: each side's rates with their spread and their ratio, the machine, and the verdict on the guide's
    warning."""
    ratio = ratios(wc)
    rows = [(_(SIDE_OPS[side, op]), spread_said(wc.one(allocation="mapped", side=side, op=op)),
             spread_said(wc.one(allocation="mapped + write-combined", side=side, op=op)),
             f"{ratio[side, op]:.0%}") for side, op in SIDES]
    machine = platform.platform() if wc.live else wc.provenance.get("platform", _("not recorded"))
    repeats = len(wc.rows[0]["seconds"])
    caption = _("{origin}; median of {repeats} repeats (slowest-fastest); machine: {machine}").format(
        origin=wc.origin(dated=True), repeats=repeats, machine=machine)
    return join(Table([_("who, what"), _("ordinary mapped GB/s"), _("write-combined GB/s"), _("WC / ordinary")], rows,
                      caption=f"*{caption}*"),
                Text(describe_write_combined(wc)))


def backing(pagemap: Any) -> Any:
    """Section 1: the file /proc/self/maps names behind the ordinary and the write-combined allocation."""
    found = {kind: " ".join(pagemap.one(allocation=kind)["maps_line"].split()[5:]) for kind in WC_KINDS}
    differ = len(set(found.values())) > 1
    said = (_("The two allocations are backed differently: the driver did treat them differently.") if differ else
            _("The two allocations are backed the same way: {which_run} does not show that the flag changed the "
              "allocation.").format(which_run=which_run(pagemap)))
    return join(Table([_("allocation"), _("backed by")], list(found.items()), caption=f"*{pagemap.origin(dated=True)}*"), Text(said))


def flags(identity: Any) -> Any:
    """Section 1: the flags cuMemHostGetFlags reports for each kind of allocation, and why the one allocated without
    DEVICEMAP reports it where addressing is unified."""
    rows = [(r["allocation"], ", ".join(r["host_flags"]) or "none") for r in identity.rows if "host_flags" in r]
    if not rows:
        return Text(_("data/{record_file} was recorded before address_identity stored the flags; run `python -m "
                      "helpers record` on a GPU to add them.").format(record_file=identity.record_file))
    table = Table([_("allocation"), _("flags the driver reports")], rows, caption=(
        _("*{origin}; registered memory has no row: `cuMemHostGetFlags` reads only "
          "`cuMemHostAlloc`/`cuMemAllocHost` memory ([Driver API]({DRIVER_MEMORY}))*").format(
            origin=identity.origin(dated=True), DRIVER_MEMORY=DRIVER_MEMORY)))
    unasked = dict(rows).get("pinned, no DEVICEMAP flag", "")
    if "DEVICEMAP" not in unasked:
        return table
    said = _("With unified addressing every page-locked allocation is mapped (Runtime API, Unified Addressing), so the "
             "one made without `DEVICEMAP` reports it too.")
    if all(("PORTABLE" in flags) == ("portable" in kind) for kind, flags in rows):
        said += _(" `PORTABLE` is implied too (section 2), but the driver reports it only where it was asked for.")
    return join(table, Text(said))


def addresses(identity: Any, attributes: dict[str, int]) -> Any:
    """Section 2: the two attributes that decide, each allocation's host and device pointers, and the write-combined
    row set against the documented distinct address (map-pages-on-the-gpu's sentence)."""
    said = Text(", ".join(f"`{k}` = {attributes[k]}" for k in ("UNIFIED_ADDRESSING",
                                                                "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"))
                + f" (*{identity.origin(dated=True)}*).")
    return join(said, identity.table(["allocation", "host_pointer", "device_pointer", "equal",
                                      "kernel_through_host_pointer_ok"]), Text(write_combined_address(identity, brief=True)))


def _registered_apart(reg: Any) -> bool:
    """Whether registered memory read at another rate than `cudaHostAlloc` memory by the course's rule
    (:func:`helpers.analysis.spread.rates_apart`, among the committed records of the same GPU)."""
    return spread.rates_apart(reg, "registered", {"allocation": "cudaHostAlloc mapped"}, {"allocation": "registered"},
                              "GBps", like=spread.same_gpu(reg))


def registration(reg: Any) -> Text:
    """Section 3: what PyCUDA's own call did, what registering cost, and how fast registered memory read."""
    plain = reg.one(allocation="pycuda.driver.register_host_memory")
    aligned = reg.select(allocation="pycuda.driver.register_host_memory (aligned_empty, DEVICEMAP)")
    per_gib, _fixed = registration_seconds(reg)
    cost = reg.one(allocation="register + unregister (host)")
    registered, allocated = reg.one(allocation="registered"), reg.one(allocation="cudaHostAlloc mapped")
    change = registered["GBps"] / allocated["GBps"] - 1
    pycuda = (_("PyCUDA's `register_host_memory` worked on an ordinary array.") if plain["works"] else
              explain_register_error(plain))   # today's words for the recorded error, not the record's
    if aligned:
        a = aligned[0]
        pycuda += (_(" On {nbytes} MiB of page-aligned memory from `aligned_empty` with `DEVICEMAP` it ").format(
                       nbytes=a['nbytes'] >> 20)
                   + (_("worked.") if a["works"] else _("failed the same way: alignment is not the reason.")))
    return bullets([
        _("Figures {origin}.").format(origin=reg.origin(dated=True)),
        pycuda,
        _("Registering and unregistering {nbytes} MiB took {median:.1f} ms: {per_gib:.0f} ms per GiB.").format(
            nbytes=cost['nbytes'] >> 20, median=float(np.median(cost['seconds'])) * 1e3, per_gib=per_gib * 1e3),
        _("`read_float4_x4` read registered memory at {spread_said} and `cudaHostAlloc` memory at {spread_said2} "
          "GB/s (median, slowest-fastest repeat; its own runs, not section 1's): ").format(
            spread_said=spread_said(registered), spread_said2=spread_said(allocated))
        + (_("{change:.0%} {value}, beyond their spread.").format(
               change=abs(change), value=_("slower") if change < 0 else _("faster"))
           if _registered_apart(reg) else _("as fast, within their spread.")),
    ])


def probes(reg: Any) -> Table:
    """Section 3: the alignment probes, with the driver that answered them in the caption."""
    tried = reg.select(allocation="alignment probe (cuMemHostRegister)")
    columns = ["page_offset", "nbytes", "works"] + (["error"] if any(r.get("error") for r in tried) else [])
    shown = reg.table(columns, allocation="alignment probe (cuMemHostRegister)")
    driver = driver_version() if reg.live else reg.provenance.get("driver_version", _("not recorded"))
    caption = _("{origin}; driver {driver}").format(origin=reg.origin(dated=True), driver=driver)
    return Table(shown.header, shown.rows, caption=f"*{caption}*")


def refusals() -> Table:
    """Section 3: two arrays RegisteredArray refuses before calling the driver, and why (no GPU needed)."""
    rows = []
    for name, array in ((_("`zc.pages.page_aligned_empty(2048)[::2]`, every other float"),
                         pages.page_aligned_empty(2048)[::2]),
                        (_("`zc.pages.page_aligned_empty(2048)[1:]`, 4 bytes in"), pages.page_aligned_empty(2048)[1:])):
        try:
            gpu._check_registrable(array)
            said = "accepted"
        except RegistrationError as exc:
            said = str(exc)
        rows.append((name, said))
    return Table([_("array"), _("RegisteredArray says")], rows)


def in_short(wc: Any, reg: Any) -> Text:
    """The summary as one list: its first point computed from section 1's result (what write-combined memory is for,
    what the CPU's reads of it did on the machine that ran it, the Programming Guide's words and the course's own
    reasoning kept apart), then the lesson's other points, the last from section 3's probes."""
    v = write_combined_verdict(wc)
    machine = _("this machine (live)") if wc.live else recording_machine(wc.provenance)
    if v["cpu_wc_honoured"]:
        found = _("the CPU's reads of it took {value:.1f}x as long as of ordinary pinned memory: the \"prohibitively "
                  "slow\" reads the Programming Guide warns of.").format(value=1 / v["cpu_read_ratio"])
    elif v["cpu_read_ratio"] < 0.5:
        found = _("the CPU read it at {ratio:.0%} of the ordinary rate, but not every recorded run of that machine "
                  "was slower.").format(ratio=v["cpu_read_ratio"])
    else:
        found = _("the CPU read it at {ratio:.0%} of the ordinary rate. The Programming Guide calls host reads of "
                  "write-combining memory \"prohibitively slow\", with no condition; that the slowdown needs the CPU "
                  "to map the pages write-combining, which that machine did not, is the course's reasoning "
                  "(section 1).").format(ratio=v["cpu_read_ratio"])
    probes = reg.select(allocation="alignment probe (cuMemHostRegister)")
    refused = sum(not r["works"] for r in probes)
    alignment = (_("which section 3's driver did not require") if not refused else
                 _("and section 3's driver refused {refused} of its {n} probes").format(refused=refused,
                                                                                       n=len(probes)))
    return bullets([
        _("Write-combined memory is for buffers the host writes and the GPU reads. Section 1, on {machine}: "
          "{found}").format(machine=machine, found=found),
        _("`zc.gpu.host_flags` (`cuMemHostGetFlags`) reads back a page-locked allocation's flags."),
        _("With unified addressing, `cudaHostAlloc` memory is usable by every device at its host address (mapped "
          "and portable in effect, whatever flags it was given), except write-combined memory, documented as distinct; registered "
          "memory only where `CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM` is 1."),
        _("`cuMemHostRegister` pins existing memory in place: it costs time per GiB once, then reads as section 3 "
          "showed; it needs one contiguous range; the course also asks for page-aligned arrays, {alignment}.").format(
            alignment=alignment),
    ])


def _kept(identity: Any) -> str:
    """How many kinds kept the host address on the GPU, as words: "All 5" or "3 of 5"."""
    kept, n = sum(bool(r["equal"]) for r in identity.rows), len(identity.rows)
    return _("All {n}").format(n=n) if kept == n else _("{kept} of {n}").format(kept=kept, n=n)


def summary(wc: Any, pagemap: Any, identity: Any, reg: Any, attributes: dict[str, int]) -> Text:
    """What you saw, computed from the results: this run's live, the record's in replay."""
    found = {kind: pagemap.one(allocation=kind)["maps_line"].split()[5:] for kind in WC_KINDS}
    wc_flags = identity.one(allocation="mapped + write-combined").get("host_flags")
    per_gib, read = registration_seconds(reg)
    registered, allocated = reg.one(allocation="registered")["GBps"], reg.one(allocation="cudaHostAlloc mapped")["GBps"]
    return bullets([   # the four write-combined ratios: section 1's table, and the summary's first point
        _("The write-combined allocation was backed ") + (_("differently from") if found[WC_KINDS[0]] != found[WC_KINDS[1]]
                                                       else _("the same way as")) + _(" the ordinary one; the driver's flags "
                                                                                   "for it: {value}.").format(
                                                                                     value=', '.join(wc_flags) if wc_flags else _("not recorded")),
        _("{kept} kinds of page-locked allocation had a device pointer equal to the host pointer "
          "(`UNIFIED_ADDRESSING` = {unified_addressing}).").format(
            kept=_kept(identity), unified_addressing=attributes['UNIFIED_ADDRESSING']),
        _("Registering and unregistering cost {per_gib:.0f} ms per GiB; registered memory read at {registered:.0%} of "
          "`cudaHostAlloc` memory's rate; {reads_needed_rule} reads of 1 GiB bring registering to at most 10% of the "
          "total ({origin}).").format(
            per_gib=per_gib * 1e3, registered=registered / allocated, reads_needed_rule=reads_needed_rule(per_gib, read), origin=reg.origin(dated=True)),
    ], head=computed_from(wc))
