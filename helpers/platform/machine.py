"""What kind of machine a measurement ran on: bare metal or a virtual machine, with or without an IOMMU
(start-here, measure-what-pinning-buys, map-pages-on-the-cpu, map-pages-on-the-gpu and wherever recorded frames,
pageable copies or latencies are read).

A device reaches host memory by DMA (bus) addresses. With an IOMMU, or inside a virtual machine, those
differ from the frame numbers /proc/self/pagemap shows: in a VM the pagemap frames are guest-physical,
the hypervisor's page tables translate the CPU's accesses again, and the physical host's IOMMU, with mappings
the hypervisor sets up, the device's DMA addresses.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..i18n import N_, _

# kernel release strings of known micro-VM guests, for records made before the 'virtualization' key existed
_KERNEL_HINTS = ((re.compile(r"-fc-"), "firecracker"),)


def detect_virtualization() -> str:
    """This machine's virtualization, e.g. ``"none"``, ``"kvm"``, ``"firecracker"`` (live; start-here).

    Asks ``systemd-detect-virt --vm`` where it exists, else the DMI product name and the CPU's
    ``hypervisor`` flag; ``"unknown"`` when nothing answers.
    """
    if shutil.which("systemd-detect-virt"):
        done = subprocess.run(["systemd-detect-virt", "--vm"], capture_output=True, text=True, timeout=10)
        answer = done.stdout.strip()
        if answer:
            return answer
    for path in ("/sys/class/dmi/id/product_name", "/sys/class/dmi/id/sys_vendor"):
        try:
            text = Path(path).read_text().strip().lower()
        except OSError:
            continue
        for name in ("firecracker", "kvm", "qemu", "vmware", "virtualbox", "microsoft", "xen", "amazon ec2"):
            if name in text:
                return name.replace(" ", "-")
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    return "unknown-hypervisor" if re.search(r"^flags\s*:.*\bhypervisor\b", flags, re.M) else "none"


def plainly(name: str) -> str:
    """A virtualization name as a sentence says it: the detector's ``unknown-hypervisor`` becomes "hypervisor
    unknown", as start-here says it (map-pages-on-the-gpu, use-write-combined-and-registered-memory)."""
    return name.replace("unknown-hypervisor", _("hypervisor unknown"))


def iommu_groups() -> int | None:
    """How many IOMMU groups this Linux kernel exposes (0: no IOMMU in use); None if it cannot tell
    (map-pages-on-the-gpu)."""
    groups = Path("/sys/kernel/iommu_groups")
    if not groups.is_dir():
        return None
    return sum(1 for _ in groups.iterdir())


def virtualization(provenance: dict[str, Any]) -> str | None:
    """The virtualization a record's provenance names, or infers from its platform string; None if neither says.

    New records carry ``provenance["virtualization"]``; older ones only a ``platform`` string such as
    ``Linux-6.18.44-fc-...``, whose ``-fc-`` marks a Firecracker guest kernel.
    """
    named = provenance.get("virtualization")
    if named:
        return str(named)
    platform = str(provenance.get("platform", ""))
    for pattern, name in _KERNEL_HINTS:
        if pattern.search(platform):
            return f"{name}, inferred from the kernel release in provenance['platform']"
    return None


def in_vm(provenance: dict[str, Any]) -> bool | None:
    """True if the record says it ran in a VM, False if it says bare metal, None if it does not say."""
    name = virtualization(provenance)
    if name is None:
        return None
    return not name.startswith("none")


def address_caveat(provenance: dict[str, Any], *, live: bool = False, brief: bool = False,
                   deeper: str = N_("*Going deeper*")) -> str:
    """One sentence on what the frames, copies and latencies of a run mean on its machine (the first lessons,
    measure-latency).

    ``provenance`` is a record's (replay); with ``live=True`` this machine is examined instead. ``brief`` says only
    what the frame numbers are, in the words map-pages-on-the-cpu has taught by then (no DMA, IOMMU or hypervisor),
    pointing to ``deeper`` for the rest (measure-what-pinning-buys points to start-here's *Going deeper*).
    """
    if brief:
        return _frames_caveat(provenance, live=live, deeper=deeper)
    if live:
        name: str | None = detect_virtualization()
        vm = name not in ("none", "unknown")
        where = _("This machine")
    else:
        name = virtualization(provenance)
        vm = bool(in_vm(provenance))
        where = _("The recording machine ({gpu}, {date})").format(gpu=provenance.get("gpu", "GPU"),
                                                                  date=str(provenance.get("date", ""))[:10])
    if name is None:
        return _("{where} did not record whether it was a virtual machine. If it was, its /proc/self/pagemap frames "
                 "are guest-physical, and the GPU's DMA addresses are translated again by the physical host's "
                 "IOMMU.").format(where=where)
    if vm:
        return _("{where} is a virtual machine ({name}): its /proc/self/pagemap frames are guest-physical, not the "
                 "physical host's; the GPU reaches memory by DMA (bus) addresses that the physical host's IOMMU "
                 "translates, with mappings the hypervisor sets up, and costs (page faults, pageable copies, latency) "
                 "may include the virtualization layer.").format(where=where, name=plainly(name)) + _iommu_note(live)
    return _("{where} reports no virtualization ({name}): pagemap frames are physical addresses, though an IOMMU, "
             "if enabled, still gives the GPU DMA addresses that differ from them.").format(
                 where=where, name=name) + _iommu_note(live)


def _frames_caveat(provenance: dict[str, Any], *, live: bool, deeper: str = N_("*Going deeper*")) -> str:
    """What a run's frame numbers are on its machine, in one short sentence (map-pages-on-the-cpu)."""
    where = _("This machine") if live else _("The recording machine")
    deeper = _(deeper)   # the default, N_("*Going deeper*"), in the chosen language; a caller's is translated already
    name = detect_virtualization() if live else None
    vm = (None if name == "unknown" else name != "none") if live else in_vm(provenance)
    if vm is None:
        return _("{where} did not record whether it was a virtual machine; if it was, its frame numbers are "
                 "physical only as the VM sees them ({deeper}).").format(where=where, deeper=deeper)
    if vm and not live:   # the glossary's name for it: the recording VM
        return _("The recording VM's frame numbers are physical only as the VM sees them ({deeper}).").format(
            deeper=deeper)
    if vm:
        return _("{where} is a virtual machine: its frame numbers are physical only as the VM sees them "
                 "({deeper}).").format(where=where, deeper=deeper)
    return _("{where} is no virtual machine: its frame numbers are physical addresses.").format(where=where)


def _iommu_note(live: bool) -> str:
    if not live:
        return ""
    groups = iommu_groups()
    if groups is None:
        return _(" (The OS kernel here does not say whether an IOMMU is in use.)")
    if groups:
        return _(" (The OS kernel here shows {groups} IOMMU group(s): an IOMMU is in use.)").format(groups=groups)
    return _(" (The OS kernel here shows {groups} IOMMU group(s).)").format(groups=groups)
