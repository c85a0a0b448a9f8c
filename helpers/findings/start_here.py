"""start-here's narration: the GPU's attributes and what each means for the course, the course plan, the reference
record and its headline figures, computed from the session (live: this GPU; replay: the recorded one). Its table
headers and sentences are marked for the Chinese edition (helpers.i18n); the driver API's quoted meanings, the
headline's notes and the registry's lesson lines are still English there.

Each function takes the session (``zc.session()``) or the values it holds and returns Markdown
(:class:`helpers.tables.Text`, :func:`~helpers.tables.bullets`, :class:`~helpers.tables.Table`) that a lesson cell
shows as its last expression; the words say live or recorded from ``course.live``, never from a mode test in the
lesson.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import lessons
from ..analysis import spread
from ..platform import machine
from ..platform.notes import platform_note
from ..i18n import CHINESE, N_, _, language
from ..i18n.edition import notebook as chinese_notebook
from . import computed_from
from ..tables import Shown, Table, Text, bullets, join

# attribute: (the driver API's one-line description, why this course cares); {slug} names a lesson (:func:`_named`)
MEANING: dict[str, tuple[str, str]] = {
    "CAN_MAP_HOST_MEMORY": (N_("Device can map host memory into CUDA address space"),
                            N_("Zero-copy needs it: 0 means no mapped memory at all, and the course replays.")),
    "UNIFIED_ADDRESSING": (N_("Device shares a unified address space with the host"),
                           N_("1: a mapped allocation has the same address on CPU and GPU ({map-pages-on-the-gpu}).")),
    "INTEGRATED": (N_("Device is integrated with host memory"),
                   N_("0: a discrete GPU. Mapped data live in host memory across the bus; a load goes there unless an "
                   "SM's L1 still holds the line from an earlier read (on this PCIe H200 the L2 did not keep mapped "
                   "memory: {keep-enough-bytes-in-flight}; a GPU on a coherent link, such as Grace Hopper, may "
                   "cache it: {take-zero-copy-beyond-one-pcie-gpu}).")),
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": (
        N_("Device can access host registered memory at the same virtual address as the CPU"),
        N_("Registered memory ({use-write-combined-and-registered-memory}) keeps its host address on the GPU.")),
    "READ_ONLY_HOST_REGISTER_SUPPORTED": (
        N_("Device supports using the cuMemHostRegister flag CU_MEMHOSTERGISTER_READ_ONLY [sic: "
           "CU_MEMHOSTREGISTER_READ_ONLY] to register memory that must be mapped as read-only to the GPU"),
        N_("Memory the process may only read can be registered ({take-zero-copy-beyond-one-pcie-gpu}).")),
    "GPU_DIRECT_RDMA_SUPPORTED": (
        N_("Device supports GPUDirect RDMA APIs, like nvidia_p2p_get_pages"),
        N_("Another device (a network card) may read this GPU's memory directly "
           "({take-zero-copy-beyond-one-pcie-gpu}).")),
    "HOST_REGISTER_SUPPORTED": (
        N_("Device supports host memory registration via cudaHostRegister"),
        N_("Existing arrays can be pinned in place ({use-write-combined-and-registered-memory}).")),
    "PAGEABLE_MEMORY_ACCESS": (
        N_("Device supports coherently accessing pageable memory without calling cudaHostRegister on it"),
        N_("0: a kernel cannot touch ordinary NumPy memory; it must be pinned and mapped first.")),
    "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES": (
        N_("Device accesses pageable memory via the host's page tables"),
        N_("0: the GPU keeps its own page tables for host memory ({map-pages-on-the-cpu} and "
           "{map-pages-on-the-gpu}).")),
    "HOST_NATIVE_ATOMIC_SUPPORTED": (N_("Link between the device and the host supports native atomic operations"),
                                     N_("Whether atomics on mapped memory are native on the link "
                                     "({avoid-hazards-on-mapped-memory} tests them).")),
    "CONCURRENT_MANAGED_ACCESS": (N_("Device can coherently access managed memory concurrently with the CPU"),
                                  N_("About managed (unified) memory, which {take-zero-copy-beyond-one-pcie-gpu} "
                                  "measures as another way to zero-copy.")),
    "ASYNC_ENGINE_COUNT": (N_("Number of asynchronous engines"),
                           N_("Copy engines: DMA copies that can overlap kernels "
                           "({overlap-copies-with-streams}: chunked copies).")),
    "MULTIPROCESSOR_COUNT": (N_("Number of multiprocessors on device"),
                             N_("SMs; the experiments size their grids to fill every one.")),
    "MAX_THREADS_PER_MULTIPROCESSOR": (N_("Maximum resident threads per multiprocessor"),
                                       N_("With the SM count, bounds the resident threads. It bounds threads, not "
                                       "loads in flight: those also depend on the loads each thread issues "
                                       "({keep-enough-bytes-in-flight}).")),
    "L2_CACHE_SIZE": (N_("Size of L2 cache in bytes"),
                      N_("Bandwidth buffers must be far larger than this ({measure-bandwidth}).")),
    "COMPUTE_CAPABILITY_MAJOR": (N_("Major compute capability version number"),
                                 N_("The GPU's architecture generation.")),
    "COMPUTE_CAPABILITY_MINOR": (N_("Minor compute capability version number"), ""),
    "PCI_BUS_ID": (N_("PCI bus identifier of the device"), N_("Where the GPU sits on the PCIe bus.")),
    "PCI_DEVICE_ID": (N_("PCI device (also known as slot) identifier of the device"), ""),
    "TOTAL_MEMORY_BYTES": (N_("(cuDeviceTotalMem, not an attribute) device memory in bytes"),
                           N_("Zero-copy's first use: data that does not fit here ({decide-when-zero-copy-wins}).")),
}


def _named(text: str) -> str:
    """``text`` in the chosen language with each ``{slug}`` replaced by the lesson's label (``lessons.Lesson.label``,
    in Chinese 第 NN 课): the registry holds the numbers."""
    return re.sub(r"\{([a-z0-9-]+)\}", lambda m: _("lesson {id}").format(id=lessons.lesson_id(m.group(1))),
                  _(text) if text else text)


def attributes(course: Any) -> Shown:
    """The GPU's attributes with the driver API's meaning and the course's reason for each; where they come from
    (live: this GPU; replay: the record's provenance) heads the table."""
    rows = [(f"`{name}`", f"{value:,}", *(_named(t) for t in MEANING.get(name, ("", ""))))
            for name, value in course.attributes.items()]
    return join(Text(_("**Attributes:** {source}.").format(source=course.attributes_source)),
                Table([_("attribute"), _("value"), _("driver API meaning"), _("for this course")], rows))


def essentials(attributes: dict[str, int]) -> Text:
    """What the attributes that decide the rest of the course say, in words."""
    a = attributes
    return bullets([
        _("Maps host memory (`CAN_MAP_HOST_MEMORY` = {value}): ").format(value=a["CAN_MAP_HOST_MEMORY"])
        + (_("yes, zero-copy works on it.") if a["CAN_MAP_HOST_MEMORY"] else _("NO: zero-copy is impossible on it.")),
        _("Unified virtual addressing (统一虚拟寻址, `UNIFIED_ADDRESSING` = {value}): ").format(
            value=a["UNIFIED_ADDRESSING"])
        + (_("yes: a mapped array has one address on both sides.") if a["UNIFIED_ADDRESSING"]
           else _("NO: the GPU sees a mapped array at an address of its own.")),
        _("Integrated with host memory (`INTEGRATED` = {value}): ").format(value=a["INTEGRATED"])
        + (_("yes: the GPU shares the CPU's memory.") if a["INTEGRATED"]
           else _("no, a discrete GPU: mapped host memory lies across the bus.")),
        _("Kernels read pageable (unpinned) memory directly (`PAGEABLE_MEMORY_ACCESS` = {value}): ").format(
            value=a["PAGEABLE_MEMORY_ACCESS"])
        + (_("yes.") if a["PAGEABLE_MEMORY_ACCESS"] else _("no: pin and map it first.")),
        _("L2 cache: {mib:.0f} MiB ({mb:.1f} MB) on {sms} SMs; copy engines: {engines}.").format(
            mib=a["L2_CACHE_SIZE"] / 2**20, mb=a["L2_CACHE_SIZE"] / 1e6, sms=a["MULTIPROCESSOR_COUNT"],
            engines=a["ASYNC_ENGINE_COUNT"]),
    ])


def this_machine() -> Text:
    """What this machine changes in the course, beside the reference GPU (``python -m helpers doctor`` says all)."""
    return Text(platform_note(lessons.lesson_id("start-here")))


def _plan_name(entry: lessons.Lesson) -> str:
    """A lesson as the course plan names it: its file stem, in Chinese 第 NN 课 · its Chinese title (the heading of
    lessons/zh/<lesson>.ipynb)."""
    path = chinese_notebook(entry)
    if language() != CHINESE or not path.exists():
        return entry.name
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    heading = "".join(cells[0]["source"]).splitlines()[0] if cells else ""
    return f"{entry.label} · {heading.split(' · ', 1)[1]}" if " · " in heading else entry.name


def course_plan() -> Shown:
    """Every lesson with its time (the registry's estimate) and what the learner does in it, and the total."""
    rows = [(_plan_name(entry), _("{minutes} min").format(minutes=entry.minutes), _(entry.does)) for entry in lessons.LESSONS]
    total = sum(entry.minutes for entry in lessons.LESSONS)
    return join(Table([_("lesson"), _("time (estimate)"), _("what you do")], rows),
                Text(_("In all about {hours:g} hours.").format(hours=total / 60)))


def reference_record(course: Any) -> Text:
    """The reference record: file, GPU, software, date, experiments, GPU time, platform."""
    p, path = course.provenance, course.reference[1]
    experiments = course.record["experiments"]
    seconds = sum(p.get("experiment_wall_seconds", {}).values())
    return bullets([
        _("GPU {gpu}, driver {driver_version}, CUDA {cuda_version}, PyCUDA {pycuda_version}, recorded {date}").format(
            gpu=p['gpu'], driver_version=p['driver_version'], cuda_version=p['cuda_version'], pycuda_version=p['pycuda_version'], date=p['date']),
        _("{n} experiments: {names}").format(n=len(experiments), names=", ".join(experiments)),
        _("recording took {seconds:.0f} s of GPU time in all").format(seconds=seconds),
        _("platform: {platform}").format(platform=p.get("platform", _("not recorded"))),
    ], head=_("**Reference record:** `data/{name}`").format(name=path.name))


def _figure(value: float | None, unit: str, digits: int = 1) -> str:
    return _("not recorded") if value is None else f"{value:.{digits}f} {unit}"


def _at_largest(rows: list[dict[str, Any]], **where: Any) -> dict[str, Any] | None:
    """The row at the largest size among those matching ``where`` (None when there is none)."""
    found = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
    return max(found, key=lambda r: r["nbytes"]) if found else None


def _bytes(nbytes: int) -> str:
    return f"{nbytes / 2**30:g} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:g} MiB"


def _largest_note(row: dict[str, Any] | None, slug: str) -> str:
    """The row's figure at its size, as the lesson ``slug`` quotes it ("" when there is no row)."""
    return "" if row is None else _("{lesson}'s figure, at {size}: {rate:.1f} GB/s").format(
        lesson=lessons.lesson(slug).label, size=_bytes(row["nbytes"]), rate=row["GBps"])


def pageable_range(nbytes: int) -> str:
    """Pageable host-to-device GB/s at ``nbytes`` across the committed H200 records, in words ("" if none)."""
    try:
        span = spread.across_records("memcpy", lambda r: r.one(direction="htod", host_memory="pageable",
                                                               nbytes=nbytes)["GBps"])
    except LookupError:
        return ""
    return _("{words} at {bytes} across {count} committed H200 records").format(
               words=span.words('GB/s'), bytes=_bytes(nbytes), count=span.count)


def _notes(*parts: str) -> str:
    """The non-empty ``parts`` of a headline note, joined by the chosen language's semicolon."""
    return _("; ").join(part for part in parts if part)


def headline(course: Any) -> Table:
    """The reference record's headline figures (``helpers.analysis.summary.headline``), recorded in both modes; the
    notes say which size each best figure came from, give the largest size's figure (the one lessons 02 and 06
    quote) and the pageable rate's range across the committed records."""
    head, experiments = course.headline, course.record["experiments"]
    memcpy = experiments.get("memcpy", {}).get("rows", [])
    streams = experiments.get("kernel_bandwidth", {}).get("rows", [])
    pageable = [r for r in memcpy if r["direction"] == "htod" and r["host_memory"] == "pageable"]
    where = ""
    if pageable:
        best, largest = max(pageable, key=lambda r: r["GBps"]), max(pageable, key=lambda r: r["nbytes"])
        where = _notes(
            _("the best, at {size}").format(size=_bytes(best["nbytes"])),
            _largest_note(largest, "measure-what-pinning-buys"), pageable_range(largest["nbytes"]))
    ratio = head.get("zero_copy_read_over_memcpy_htod")
    latency = (_("zero-copy {figure}, device memory {figure2}, L2 {figure3}").format(
                   figure=_figure(head['zero_copy_latency_ns'], 'ns', 0), figure2=_figure(head['device_latency_ns'], 'ns', 0), figure3=_figure(head['l2_latency_ns'], 'ns', 0)))
    pinned = _largest_note(_at_largest(memcpy, direction="htod", host_memory="pinned"), "measure-what-pinning-buys")
    read = _notes(
        _("the best over the sizes and kernels"), "" if ratio is None else _("{ratio:.0%} of pinned memcpy").format(
            ratio=ratio),
        _largest_note(_at_largest(streams, memory="zero_copy", op="read"), "measure-bandwidth"))
    rows = [
        (N_("pinned memcpy host->device"), _figure(head["memcpy_htod_pinned_GBps"], "GB/s"),
         _notes(_("the best over the sizes"), pinned)),
        (N_("pageable memcpy host->device"), _figure(head["memcpy_htod_pageable_GBps"], "GB/s"), where),
        (N_("zero-copy kernel read"), _figure(head["zero_copy_read_GBps"], "GB/s"), read),
        (N_("zero-copy kernel write"), _figure(head["zero_copy_write_GBps"], "GB/s"), _("the best over the sizes")),
        (N_("device-memory kernel read"), _figure(head["device_read_GBps"], "GB/s"), _("the best over the sizes")),
        (N_("one dependent load"), latency, lessons.lesson("measure-latency").label),
    ]
    return Table([_("headline figure"), _("value"), _("note")], [(_(name), *rest) for name, *rest in rows],
                 caption=_("*Recorded on {gpu} on {date} (the reference record, in both modes).*").format(
                     gpu=head["gpu"], date=str(head["date"])[:10]))


def address_caveat(course: Any) -> Text:
    """What the recorded frames, copies and latencies mean on the recording machine, and live on this one too."""
    parts = [machine.address_caveat(course.provenance)]
    if course.live:
        parts.append(machine.address_caveat({}, live=True))
    return Text("\n\n".join(parts))


def what_you_saw(course: Any) -> Text:
    """The lesson's recap, computed from this session."""
    a, head = course.attributes, course.headline
    ratio, zc_ns, dev_ns = (head.get("zero_copy_read_over_memcpy_htod"), head.get("zero_copy_latency_ns"),
                            head.get("device_latency_ns"))
    reference = (_("On the reference {gpu}, a zero-copy read kernel reached {ratio:.0%} of the pinned memcpy rate, "
                   "and one dependent zero-copy load took {times:.1f}x as long as one from device memory.").format(
        gpu=head["gpu"], ratio=ratio, times=zc_ns / dev_ns) if ratio and zc_ns and dev_ns else "")
    runs = _("This notebook runs **live** ({reason}).") if course.live else _(
        "This notebook runs **in replay** ({reason}).")
    vm = machine.virtualization(course.provenance)
    return bullets([
        runs.format(reason=course.mode.reason),
        _("The GPU's attributes came from: {source}.").format(source=course.attributes_source),
        _("The reference machine: {machine}.").format(machine={
            "unknown-hypervisor": _("a virtual machine (hypervisor unknown)"),
            "none": _("no virtual machine seen")}.get(vm or "", vm or _("virtualization not recorded"))),
        _("`CAN_MAP_HOST_MEMORY` = {can_map_host_memory}, `UNIFIED_ADDRESSING` = {unified_addressing}, "
          "`PAGEABLE_MEMORY_ACCESS` = {pageable_memory_access}.").format(
            can_map_host_memory=a['CAN_MAP_HOST_MEMORY'], unified_addressing=a['UNIFIED_ADDRESSING'], pageable_memory_access=a['PAGEABLE_MEMORY_ACCESS']),
        reference,
    ], head=computed_from(course))
