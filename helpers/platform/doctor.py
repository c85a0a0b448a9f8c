"""What this machine is for the course, and what each lesson does on it (``python -m helpers doctor``, start-here).

:func:`diagnose` is a pure function of :class:`helpers.platform.facts.Facts`: the mode and why, the GPU and its
zero-copy attributes, whether the toolkit, driver and PyCUDA fit together, the platform (Colab, WSL2, container,
VM, macOS, Windows), the page-locked memory it expects to get, and for every lesson one of

- ``live``:    runs on this GPU as written;
- ``changed``: runs on this GPU, but a demonstration or a conclusion differs here (the note says which);
- ``replay``:  shows the measurements recorded on the reference GPU;
- ``blocked``: cannot run as things stand (the note says what to fix).

Sources for the rules: CUDA C++ Best Practices Guide (*Zero Copy*), CUDA C++ Programming Guide (*Mapped Memory*,
*Page-Locked Host Memory*), the Runtime API (``cudaMallocHost``), the CUDA on WSL User Guide (*Known Limitations*),
the CUDA for Tegra application note, the CUDA 12.8 and 13.0 release notes (architectures), PyCUDA's change log.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .. import lessons
from ..i18n import _
from ..lessons import CXX, PINNED, PROC, ids_of
from .facts import Facts, GpuFacts
from .pcie import GT_PER_S, nominal_GBps

__all__ = ["LESSONS", "Effect", "Finding", "diagnose", "render", "lesson_effects", "gpu_effects", "toolkit_findings",
           "pinned_expectation", "platform_summary", "link_GBps", "PINNED_NEEDED_BYTES", "shows_gpu_measurements"]

# Which lessons are which, from the course's table of lessons (helpers.lessons):
LESSONS = lessons.ids()
KERNEL_LESSONS = tuple(entry.id for entry in lessons.LESSONS if entry.kernels)  # they compile helpers/kernels/*.cu live
CPU_BACKEND_LESSONS = lessons.needing(CXX)  # they compile the same kernels with the C++ compiler, in both modes
PROC_LESSONS = lessons.needing(PROC)  # they read /proc/self/pagemap, maps and status
# The largest page-locked buffer a lesson's experiment holds at once: memcpy's 1 GiB (measure-what-pinning-buys,
# measure-bandwidth), the 1 GiB zero-copy footprint of the latency chase (measure-latency) and the out-of-core
# data set (overlap-copies-with-streams, decide-when-zero-copy-wins).
PINNED_NEEDED_BYTES = 1 << 30
PINNED_LESSONS = lessons.needing(PINNED)
# The lessons whose figures and model are those of a PCIe link (an integrated GPU has none).
PCIE_LESSONS = ids_of("measure-bandwidth", "measure-latency", "keep-enough-bytes-in-flight",
                      "coalesce-and-align-accesses", "model-zero-copy-reads")
# The lessons a single attribute changes, by slug.
_START, _PINNING, _GPU_PAGES, _FIRST_KERNEL, _BANDWIDTH, _DECIDE, _WC_REGISTERED, _HAZARDS = ids_of(
    "start-here", "measure-what-pinning-buys", "map-pages-on-the-gpu", "write-your-first-zero-copy-kernel",
    "measure-bandwidth", "decide-when-zero-copy-wins", "use-write-combined-and-registered-memory",
    "avoid-hazards-on-mapped-memory")
(_PIN,) = ids_of("pin-host-memory")
# nvcc's first release that builds each architecture (CUDA release notes: 11.0 sm_80, 11.1 sm_86, 11.8 sm_89
# and sm_90, 12.8 sm_100 and sm_120).
FIRST_NVCC = {(8, 0): (11, 0), (8, 6): (11, 1), (8, 9): (11, 8), (9, 0): (11, 8), (10, 0): (12, 8), (12, 0): (12, 8)}
PYCUDA_FOR_CUDA13 = (2025, 1, 2)
# PCI-SIG signalling rates per lane (GT/s) and line encoding, generations 1-5


@dataclass(frozen=True)
class Effect:
    """What this platform changes in one lesson: ``kind`` is ``changed``, ``blocked`` or ``note``."""

    lesson: str
    kind: str
    text: str


@dataclass(frozen=True)
class Finding:
    """One line of the doctor's verdict on the toolkit or the machine: ``level`` is ``ok``, ``warn`` or ``error``."""

    level: str
    topic: str
    text: str


def _v(version: tuple[int, ...] | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"


def link_GBps(gen: int | None, width: int | None) -> float | None:
    """A PCIe link's nominal rate per direction in GB/s (helpers.platform.pcie), or None when gen or width is
    unknown."""
    return nominal_GBps(gen, width) if gen in GT_PER_S and width else None


# --------------------------------------------------------------------------- toolkit
def toolkit_findings(facts: Facts) -> list[Finding]:
    """Whether nvcc, the driver and PyCUDA fit together and can build for this GPU."""
    found: list[Finding] = []
    gpu, nvcc, driver = facts.gpu, facts.nvcc_version, facts.gpu.driver_cuda_version if facts.gpu else None
    if nvcc is None:
        if gpu is not None:
            found.append(Finding("error", "nvcc", "nvcc is not on PATH, so PyCUDA cannot compile the course's kernels "
                                 "(and pip cannot build PyCUDA). Put the toolkit's bin/ on PATH, e.g. "
                                 "export PATH=/usr/local/cuda/bin:$PATH."))
        return found
    if facts.pycuda_version is not None and nvcc[0] >= 13 and facts.pycuda_version < PYCUDA_FOR_CUDA13:
        found.append(Finding("error", "pycuda", f"PyCUDA {_v(facts.pycuda_version)} predates CUDA 13 support: use "
                             f"PyCUDA {_v(PYCUDA_FOR_CUDA13)} or newer with nvcc {_v(nvcc)} (pip install -U pycuda)."))
    if gpu is not None:
        cc = gpu.compute_capability
        if nvcc[0] >= 13 and cc < (7, 5):
            found.append(Finding("error", "arch", f"CUDA 13's nvcc ({_v(nvcc)}) cannot build for {gpu.arch} "
                                 "(Maxwell, Pascal and Volta, sm_50-sm_72, were removed in CUDA 13.0): install a "
                                 "CUDA 12 toolkit for this GPU."))
        elif nvcc[0] >= 12 and cc < (5, 0):
            found.append(Finding("error", "arch", f"nvcc {_v(nvcc)} cannot build for {gpu.arch} (Kepler was removed "
                                 "in CUDA 12): this GPU needs an older toolkit, which current PyCUDA does not target."))
        needed = FIRST_NVCC.get(cc)
        if needed and nvcc < needed:
            found.append(Finding("error", "arch", f"{gpu.arch} needs nvcc {_v(needed)} or newer; this one is "
                                 f"{_v(nvcc)}. Install a newer CUDA toolkit."))
        if driver is not None:
            if nvcc[0] > driver[0]:
                found.append(Finding("error", "driver", f"nvcc {_v(nvcc)} is newer than the driver, which supports "
                                     f"CUDA {_v(driver)}: kernels built by a newer major version do not load. Update "
                                     f"the NVIDIA driver, or use a CUDA {driver[0]} toolkit."))
            elif nvcc > driver:
                found.append(Finding("warn", "driver", f"nvcc {_v(nvcc)} is newer than the driver's CUDA "
                                     f"{_v(driver)}: PTX it builds fails to load (the driver cannot JIT newer PTX), "
                                     f"but a cubin for {gpu.arch} loads (CUDA minor version compatibility), and "
                                     "helpers.kernels builds cubins for the detected architecture."))
    if not any(f.level == "error" for f in found):
        found.append(Finding("ok", "toolkit", f"nvcc {_v(nvcc)}" + (f", driver CUDA {_v(driver)}" if driver else "")
                             + (f", PyCUDA {_v(facts.pycuda_version)}" if facts.pycuda_version else "")
                             + (f": builds cubins for {gpu.arch}" if gpu else "")))
    return found


# --------------------------------------------------------------------------- platform and memory
def platform_summary(facts: Facts) -> dict[str, Any]:
    """The operating system and what the course runs inside: Colab, WSL2, a container, a VM."""
    system = {"linux": "Linux", "darwin": "macOS", "win32": "Windows", "cygwin": "Windows"}.get(facts.system,
                                                                                               facts.system)
    names = [system]
    if facts.wsl:
        names.append(facts.wsl.upper())
    if facts.colab:
        names.append("Colab")
    if facts.container:
        names.append("container")
    if facts.virtualization not in ("none", "unknown", ""):
        names.append(f"VM ({facts.virtualization})")
    return {"system": system, "names": names, "colab": facts.colab, "wsl": facts.wsl, "container": facts.container,
            "virtualization": facts.virtualization, "proc": facts.proc_available, "os_release": facts.osrelease,
            "cxx": facts.cxx, "cxx_identity": facts.cxx_identity, "make": facts.make,
            "class": platform_class(facts.gpu), "sections": platform_sections(facts)}


# --------------------------------------------------------------------------- platform class
PLATFORM_CLASSES = ("discrete_pcie", "integrated", "coherent_c2c", "none")


def platform_class(gpu: GpuFacts | None) -> str:
    """Which kind of zero-copy platform GPU 0 is, from its attributes (the platforms lesson):

    - ``integrated``: the GPU shares the CPU's DRAM (``INTEGRATED = 1``: Jetson/Tegra);
    - ``coherent_c2c``: a discrete GPU that walks the CPU's page tables and has native host atomics
      (``PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 1`` and ``HOST_NATIVE_ATOMIC_SUPPORTED = 1``:
      Address Translation Services over a coherent link such as Grace Hopper's NVLink-C2C);
    - ``discrete_pcie``: any other GPU, which reads host memory over PCIe (the course's H200);
    - ``none``: no GPU.
    """
    if gpu is None:
        return "none"
    if gpu.attribute("INTEGRATED", 0):
        return "integrated"
    if gpu.attribute("PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES", 0) and gpu.attribute(
            "HOST_NATIVE_ATOMIC_SUPPORTED", 0):
        return "coherent_c2c"
    return "discrete_pcie"


def platform_sections(facts: Facts) -> dict[str, dict[str, Any]]:
    """For each section of the platforms lesson: whether this machine can run it live, and why."""
    gpu, cls = facts.gpu, platform_class(facts.gpu)

    def attr(name: str) -> int | None:
        return None if gpu is None else gpu.attribute(name)

    def entry(applies: bool, why: str) -> dict[str, Any]:
        return {"applies": applies, "why": why}

    nodes = facts.numa_nodes
    return {
        "integrated_memory": entry(cls == "integrated", "the GPU shares the CPU's DRAM (INTEGRATED = 1)"
                                   if cls == "integrated" else "cited only: this GPU has memory of its own"),
        "coherent_link": entry(cls == "coherent_c2c", "ATS and native host atomics: a coherent CPU-GPU link"
                               if cls == "coherent_c2c" else "cited only: this GPU reaches host memory without "
                               "hardware coherence (no ATS with native host atomics)"),
        "managed_as_zero_copy": entry(bool(attr("CONCURRENT_MANAGED_ACCESS")),
                                      f"CONCURRENT_MANAGED_ACCESS = {attr('CONCURRENT_MANAGED_ACCESS')}"),
        "read_only_registration": entry(bool(attr("READ_ONLY_HOST_REGISTER_SUPPORTED")),
                                        f"READ_ONLY_HOST_REGISTER_SUPPORTED = "
                                        f"{attr('READ_ONLY_HOST_REGISTER_SUPPORTED')}"),
        "cpu_traffic": entry(gpu is not None and bool(attr("CAN_MAP_HOST_MEMORY")),
                             "a kernel reads mapped memory while CPU threads stream" if gpu else "no GPU"),
        "pageable_memory": entry(bool(attr("PAGEABLE_MEMORY_ACCESS")),
                                 f"PAGEABLE_MEMORY_ACCESS = {attr('PAGEABLE_MEMORY_ACCESS')}: a kernel "
                                 + ("may read malloc memory (HMM or ATS)" if attr("PAGEABLE_MEMORY_ACCESS")
                                    else "faults on malloc memory; the lesson shows it in a child process")),
        "numa": entry(bool(nodes and nodes > 1), f"{nodes} NUMA node(s)" if nodes else "NUMA nodes unknown"),
        "peer_access": entry(bool(facts.gpu_count and facts.gpu_count > 1),
                             f"{facts.gpu_count} GPU(s)" if facts.gpu_count is not None else "GPU count unknown"),
    }


def pinned_expectation(facts: Facts) -> dict[str, Any]:
    """How much page-locked memory this machine should grant at once, and why (the lessons that pin 1 GiB)."""
    total, available = facts.mem_total_bytes, facts.mem_available_bytes
    cap = int(0.75 * total) if total else None
    candidates = [v for v in (cap, available) if v]
    expected = min(candidates) if candidates else None
    basis = []
    if cap:
        basis.append(f"the helpers refuse more than three quarters of RAM ({cap / 2**30:.1f} GiB)")
    if available:
        basis.append(f"MemAvailable is {available / 2**30:.1f} GiB")
    notes = []
    if facts.wsl == "wsl2":
        notes.append("WSL2: NVIDIA's CUDA on WSL User Guide lists pinned system memory as limited for applications "
                     "(about 1 GB has been reported under some Docker set-ups); the driver may refuse well below "
                     "this figure. WSL2's memory is also capped by .wslconfig.")
    small = expected is not None and expected < PINNED_NEEDED_BYTES
    if small:
        notes.append(f"Below the {PINNED_NEEDED_BYTES / 2**30:.0f} GiB that the largest experiments pin at once.")
    return {"expected_bytes": expected, "mem_total_bytes": total, "mem_available_bytes": available,
            "helpers_cap_bytes": cap, "basis": basis, "small": small or facts.wsl == "wsl2", "notes": notes}


# --------------------------------------------------------------------------- lessons
def gpu_effects(gpu: GpuFacts, reference: GpuFacts | None) -> list[Effect]:
    a = gpu.attributes
    out: list[Effect] = []
    if a.get("INTEGRATED"):
        for lesson in PCIE_LESSONS:
            out.append(Effect(lesson, "changed", _("INTEGRATED = 1: this GPU shares DRAM with the CPU, so no PCIe link "
                              "lies between them: memcpy is a DRAM-to-DRAM copy and a zero-copy kernel reads the same "
                              "DRAM. The lesson's PCIe figures and model describe the discrete reference GPU, not "
                              "this one.")))
        out.append(Effect(_DECIDE, "changed", _(
                          "INTEGRATED = 1: the verdict differs here. The Best Practices Guide (Zero "
                          "Copy): 'On integrated GPUs (i.e., GPUs with the integrated field of the CUDA device "
                          "properties structure set to 1), mapped pinned memory is always a performance gain because "
                          "it avoids superfluous copies as integrated GPU and CPU memory are physically the same.'")))
        if gpu.compute_capability < (7, 2):
            for lesson in (_PINNING, _DECIDE, _WC_REGISTERED):
                out.append(Effect(lesson, "changed", _("An integrated GPU older than Xavier ({arch}): on these "
                                  "Tegra devices pinned memory is not cached for the CPU (CUDA for Tegra), so CPU "
                                  "passes over pinned or mapped arrays are much slower than over ordinary memory; "
                                  "Xavier and Orin are I/O-coherent.").format(arch=gpu.arch)))
    if a.get("PAGEABLE_MEMORY_ACCESS"):
        text = _("PAGEABLE_MEMORY_ACCESS = 1 (HMM or ATS): kernels on this GPU can dereference ordinary, unpinned "
                "NumPy memory, so a demonstration that an unpinned pointer fails does not fail here. Pinned, mapped "
                "memory still differs: its pages stay resident, while pageable access may fault or migrate pages "
                "(Programming Guide, system-allocated memory).")
        out += [Effect(_GPU_PAGES, "changed", text), Effect(_FIRST_KERNEL, "changed", text)]
    if a.get("PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES"):
        out.append(Effect(_PINNING, "changed", _("PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 1: the Runtime API "
                          "(cudaMallocHost) says page-locking may be skipped on such systems, so /proc may not show "
                          "pinned pages the way the lesson describes.")))
    if a.get("UNIFIED_ADDRESSING", 1) == 0:
        for lesson in (_GPU_PAGES, _WC_REGISTERED):
            out.append(Effect(lesson, "changed", _("UNIFIED_ADDRESSING = 0: a mapped allocation's device address "
                              "differs from its host address; always pass helpers.memory.gpu.device_pointer(array).")))
    if a.get("CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", 1) == 0:
        for lesson in (_GPU_PAGES, _WC_REGISTERED):
            out.append(Effect(lesson, "changed", _(
                              "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 0 (as on WSL2): registered "
                              "memory's host address cannot be used in a kernel; pass the pointer "
                              "cuMemHostGetDevicePointer returns "
                              "(helpers.memory.gpu.RegisteredArray.device_pointer).")))
    if a.get("HOST_NATIVE_ATOMIC_SUPPORTED"):
        out.append(Effect(_HAZARDS, "changed", _(
                          "HOST_NATIVE_ATOMIC_SUPPORTED = 1: the link carries atomics natively, so "
                          "system-scope atomics (atomicAdd_system) on mapped memory are atomic with the CPU's too; on "
                          "the x86 PCIe reference this attribute is 0.")))
    else:
        out.append(Effect(_HAZARDS, "note", _(
                          "HOST_NATIVE_ATOMIC_SUPPORTED = 0: atomics on mapped memory are atomic among "
                          "GPU threads, but not with the CPU or other devices (Programming Guide, Mapped Memory).")))
    if not a.get("CONCURRENT_MANAGED_ACCESS", 1):
        out.append(Effect(_START, "note", _(
                          "CONCURRENT_MANAGED_ACCESS = 0: managed memory cannot be touched by CPU and "
                          "GPU at once here; lesson 15 measures managed memory.")))
    sms, ref_sms = gpu.sm_count, reference.sm_count if reference else None
    if sms and ref_sms and sms != ref_sms:
        out.append(Effect(_BANDWIDTH, "note", _("{sms} SMs here ({gpu} has {ref_sms}): the experiments size their "
                          "grids from this GPU's SM count, and lesson 06 compares zero-copy with this machine's own "
                          "memcpy.").format(sms=sms, gpu=reference.name if reference else '', ref_sms=ref_sms)))
    link = gpu.pcie
    if link and link.gen and link.width and not a.get("INTEGRATED"):
        ceiling = link_GBps(link.gen, link.width)
        text = _("PCIe Gen{gen} x{width} here").format(gen=link.gen, width=link.width) + (
            _(" (a {ceiling:.1f} GB/s signalling ceiling per direction)").format(ceiling=ceiling) if ceiling else "")
        if link.max_gen and link.gen < link.max_gen:
            text += _(", below the link's Gen{max_gen} maximum: an idle GPU lowers its link speed, which rises "
                      "again under load").format(max_gen=link.max_gen)
        out.append(Effect(_BANDWIDTH, "note", text + _(".")))
    return out


def shows_gpu_measurements(lesson: str) -> bool:
    """Whether a lesson (by id) runs kernels or shows experiments recorded on a GPU, which replay without one
    (pin-host-memory shows none: every figure it shows is read from this machine's /proc)."""
    entry = lessons.find(lesson)
    return entry is not None and bool(entry.kernels or entry.experiments)


def _runs_here(facts: Facts) -> str:
    """pin-host-memory's replay note: all of it runs live here, its frame numbers only where this process reads them
    (else section 2 shows recorded ones, issue 31)."""
    if facts.frames_visible:
        return _("Every measurement in this lesson reads what Linux reports about this process (section 1) and runs "
                 "live here; none needs a GPU.")
    return _("Every measurement in this lesson reads what Linux reports about this process (section 1) and runs live "
             "here, except frame numbers, which only root may read: section 2 shows recorded ones. None needs a GPU.")


def _machine_effects(facts: Facts, toolkit: list[Finding], pinned: dict[str, Any]) -> list[Effect]:
    out: list[Effect] = []
    live = facts.mode == "live"
    if not facts.proc_available:
        for lesson in PROC_LESSONS:
            out.append(Effect(lesson, "changed", _("This system has no Linux /proc (macOS and Windows have none): the "
                              "cells marked %%linux_only are skipped, and the lesson shows the page tables recorded "
                              "on the Linux GPU machine instead.")))
    elif facts.wsl == "wsl2":
        for lesson in PROC_LESSONS:
            out.append(Effect(lesson, "note", _("WSL2 runs Linux in a virtual machine: /proc/self/pagemap shows "
                              "guest-physical frames.")))
    elif not live:
        for lesson in PROC_LESSONS:
            out.append(Effect(lesson, "note", _("The /proc sections run live on this machine; the GPU measurements "
                              "replay.") if shows_gpu_measurements(lesson) else _runs_here(facts)))
    if facts.proc_available and facts.wsl != "wsl2" and facts.virtualization not in ("none", "unknown", ""):
        for lesson in PROC_LESSONS:   # pin-host-memory's note comes before its section 1 defines frames and VMs
            own = _("Linux here runs in a virtual machine (VM): the frame numbers section 2 shows are the VM's "
                    "own (section 1 says what that means).") if facts.frames_visible else _(
                    "Linux here runs in a virtual machine (VM), but this process may not read its frame numbers "
                    "(only root may): section 2 shows those read as root on the recording machine.")
            vm = (own if lesson == _PIN else
                  _("In this virtual machine (VM) the frames /proc/self/pagemap shows are the VM's own "
                    "(guest-physical): the hypervisor, the software that runs the VM, maps them to the "
                    "physical host's RAM."))
            out.append(Effect(lesson, "note", vm))
    if facts.cxx is None:
        for lesson in CPU_BACKEND_LESSONS:
            out.append(Effect(lesson, "blocked", _("No C++ compiler for the CPU backend: install one (Debian/Ubuntu: "
                              "sudo apt-get install g++; macOS: xcode-select --install), or set CXX.")))
    elif not live:
        for lesson in CPU_BACKEND_LESSONS:
            compiler = facts.cxx_identity or facts.cxx
            out.append(Effect(lesson, "note", _("The CPU backend runs the kernels live here ({compiler}).").format(
                compiler=compiler)))
    if facts.system in ("win32", "cygwin"):
        for lesson in LESSONS:
            out.append(Effect(lesson, "note", _("Native Windows lacks make, /proc and the compiler set-up the course "
                              "expects: take the course in WSL2 (README: 'On macOS and Windows').")))
    if live:
        if any(f.level == "error" for f in toolkit):
            why = "; ".join(f.text for f in toolkit if f.level == "error")
            for lesson in KERNEL_LESSONS:
                out.append(Effect(lesson, "blocked", _("Kernels cannot be built or loaded: {why}").format(why=why)))
        if pinned["small"]:
            expected = pinned["expected_bytes"]
            size = _("about {gib:.1f} GiB").format(gib=expected / 2**30) if expected else _("a limited amount")
            source = "WSL2" if facts.wsl == "wsl2" else _("see python -m helpers doctor")
            for lesson in PINNED_LESSONS:
                out.append(Effect(lesson, "changed", _(
                    "Page-locked memory is limited here ({size}; {source}), and this lesson's largest experiment "
                    "pins {pinned:.0f} GiB at once: if it fails with PinningError, pass smaller sizes (e.g. "
                    "experiments.memcpy(sizes=...)).").format(size=size, source=source,
                                                              pinned=PINNED_NEEDED_BYTES / 2**30)))
    return out


def lesson_effects(facts: Facts, reference: GpuFacts | None = None) -> dict[str, list[Effect]]:
    """Every lesson's platform effects, live from ``facts.gpu``; in replay, only the machine's own (no /proc...)."""
    toolkit = toolkit_findings(facts)
    pinned = pinned_expectation(facts)
    effects = _machine_effects(facts, toolkit, pinned)
    if facts.mode == "live" and facts.gpu is not None:
        effects += gpu_effects(facts.gpu, reference)
    by_lesson: dict[str, list[Effect]] = {lesson: [] for lesson in LESSONS}
    for effect in effects:
        by_lesson[effect.lesson].append(effect)
    return by_lesson


def _status(facts: Facts, effects: list[Effect]) -> str:
    kinds = {e.kind for e in effects}
    if "blocked" in kinds:
        return "blocked"
    if facts.mode != "live":
        return "replay"
    return "changed" if "changed" in kinds else "live"


# --------------------------------------------------------------------------- the report
def _gpu_report(gpu: GpuFacts | None) -> dict[str, Any] | None:
    if gpu is None:
        return None
    link = asdict(gpu.pcie) if gpu.pcie else None
    if link is not None:
        link["ceiling_GBps"] = link_GBps(gpu.pcie.gen, gpu.pcie.width) if gpu.pcie else None
    return {"name": gpu.name, "compute_capability": f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}",
            "arch": gpu.arch, "sm_count": gpu.sm_count, "driver_version": gpu.driver_version,
            "driver_cuda_version": _v(gpu.driver_cuda_version) if gpu.driver_cuda_version else None,
            "total_memory_bytes": gpu.total_memory_bytes, "pcie": link or "unknown",
            "attributes": dict(gpu.attributes)}


def diagnose(facts: Facts, reference: GpuFacts | None = None) -> dict[str, Any]:
    """The doctor's report for these facts, as JSON-ready data (``python -m helpers doctor --json``).

    ``reference`` is the recorded GPU the lessons compare with (its SM count is named where it differs).
    """
    toolkit = toolkit_findings(facts)
    effects = lesson_effects(facts, reference)
    lessons = {lesson: {"status": _status(facts, found), "notes": [e.text for e in found]}
               for lesson, found in effects.items()}
    return {
        "mode": facts.mode, "mode_cause": facts.mode_cause, "mode_reason": facts.mode_reason,
        "gpu": _gpu_report(facts.gpu),
        "toolkit": {"nvcc": _v(facts.nvcc_version) if facts.nvcc_version else None,
                    "pycuda": _v(facts.pycuda_version) if facts.pycuda_version else None,
                    "findings": [asdict(f) for f in toolkit]},
        "platform": platform_summary(facts),
        "pinned_memory": pinned_expectation(facts),
        "lessons": lessons,
        "probe_notes": list(facts.notes),
    }


def _gib(value: int | None) -> str:
    return "unknown" if value is None else f"{value / 2**30:.1f} GiB"


def render(report: dict[str, Any]) -> str:
    """The report as text for a terminal (``python -m helpers doctor``)."""
    lines = [f"Mode: {report['mode']} ({report['mode_reason']})"]
    gpu = report["gpu"]
    if gpu is None:
        lines.append("GPU: none found")
    else:
        pcie = gpu["pcie"]
        link = (f"PCIe Gen{pcie['gen']} x{pcie['width']} (max Gen{pcie['max_gen']} x{pcie['max_width']}, "
                f"from {pcie['source']})" if isinstance(pcie, dict) else "PCIe link unknown")
        lines.append(f"GPU: {gpu['name']}, compute capability {gpu['compute_capability']} ({gpu['arch']}), "
                     f"{gpu['sm_count']} SMs; driver {gpu['driver_version'] or 'unknown'} "
                     f"(CUDA {gpu['driver_cuda_version'] or 'unknown'}); {link}")
        lines.append("Zero-copy attributes: " + ", ".join(f"{k}={v}" for k, v in gpu["attributes"].items()))
    toolkit = report["toolkit"]
    lines.append(f"Toolkit: nvcc {toolkit['nvcc'] or 'not on PATH'}, PyCUDA {toolkit['pycuda'] or 'not installed'}")
    lines += [f"  [{f['level']}] {f['text']}" for f in toolkit["findings"]]
    plat = report["platform"]
    lines.append(f"Platform class: {plat['class']}; live sections of the platforms lesson: "
                 + (", ".join(k for k, v in plat["sections"].items() if v["applies"]) or "none"))
    lines.append(f"Platform: {', '.join(plat['names'])}; /proc {'present' if plat['proc'] else 'MISSING'}; "
                 f"C++ compiler {plat['cxx_identity'] or plat['cxx'] or 'NONE'}")
    pinned = report["pinned_memory"]
    lines.append(f"Page-locked memory: expect up to {_gib(pinned['expected_bytes'])} at once"
                 + (f" ({'; '.join(pinned['basis'])})" if pinned["basis"] else ""))
    lines += [f"  {note}" for note in pinned["notes"]]
    lines.append("Lessons:")
    for lesson, entry in report["lessons"].items():
        lines.append(f"  {lesson}: {entry['status']}")
        lines += [f"      - {note}" for note in entry["notes"]]
    lines += [f"Note: {note}" for note in report["probe_notes"]]
    return "\n".join(lines)
