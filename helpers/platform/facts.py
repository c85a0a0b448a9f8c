"""What this machine is, as plain data: GPU, toolkit, operating system, memory (``python -m helpers doctor``,
start-here).

:func:`gather` reads the real machine once into a :class:`Facts`; everything that judges those facts
(:mod:`helpers.platform.doctor`, :mod:`helpers.platform.notes`) is a pure function of them, so the tests can hand
it any platform's facts: a Jetson, WSL2, a Mac, a toolkit newer than the driver. Every probe here is
allowed to fail: what cannot be read is ``None``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping


from ..memory import pages
from .pcie import Link as PcieLink, read_link

__all__ = ["PcieLink", "GpuFacts", "Facts", "gather", "current", "gpu_from_record",
           "parse_nvcc_version", "parse_meminfo", "parse_version", "wsl_kind"]

# The attributes the doctor reads (PyCUDA's names); those an older PyCUDA lacks are skipped.
ATTRIBUTES = (
    "CAN_MAP_HOST_MEMORY", "UNIFIED_ADDRESSING", "INTEGRATED", "PAGEABLE_MEMORY_ACCESS",
    "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES", "CONCURRENT_MANAGED_ACCESS", "HOST_NATIVE_ATOMIC_SUPPORTED",
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", "HOST_REGISTER_SUPPORTED", "MULTIPROCESSOR_COUNT",
    "MAX_THREADS_PER_MULTIPROCESSOR", "L2_CACHE_SIZE", "ASYNC_ENGINE_COUNT",
    "READ_ONLY_HOST_REGISTER_SUPPORTED", "GPU_DIRECT_RDMA_SUPPORTED",
)


@dataclass(frozen=True)
class GpuFacts:
    """GPU 0 as the driver describes it."""

    name: str
    compute_capability: tuple[int, int]
    attributes: Mapping[str, int]
    driver_cuda_version: tuple[int, int] | None = None  # the newest CUDA the driver supports (cuDriverGetVersion)
    driver_version: str | None = None  # e.g. "580.159.04"
    pcie: PcieLink | None = None
    total_memory_bytes: int | None = None

    def attribute(self, name: str, default: int | None = None) -> int | None:
        return self.attributes.get(name, default)

    @property
    def sm_count(self) -> int | None:
        return self.attributes.get("MULTIPROCESSOR_COUNT")

    @property
    def arch(self) -> str:
        """The architecture nvcc builds a cubin for, e.g. ``"sm_90"``."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


@dataclass(frozen=True)
class Facts:
    """Everything the doctor judges. The defaults describe a Linux machine without a GPU."""

    mode: str = "replay"  # "live" | "replay" (helpers.mode)
    mode_cause: str = "no-pycuda"
    mode_reason: str = "PyCUDA is not installed"
    gpu: GpuFacts | None = None
    nvcc_version: tuple[int, int] | None = None
    pycuda_version: tuple[int, ...] | None = None
    system: str = "linux"  # sys.platform: "linux", "darwin", "win32"
    proc_version: str = ""  # /proc/version
    osrelease: str = ""  # /proc/sys/kernel/osrelease, else platform.release()
    colab: bool = False
    container: str | None = None  # how a container was recognised, e.g. "/.dockerenv"
    virtualization: str = "unknown"  # helpers.platform.machine.detect_virtualization()
    proc_available: bool = True
    frames_visible: bool = True  # helpers.memory.pages.pfns_visible(): root reads frame numbers (pin-host-memory)
    mem_total_bytes: int | None = None
    mem_available_bytes: int | None = None
    cxx: str | None = None  # the C++ compiler the CPU backend would use
    cxx_identity: str = ""  # its first --version line
    make: bool = True
    numa_nodes: int | None = None  # /sys/devices/system/node/node*
    gpu_count: int | None = None  # CUDA devices the driver lists (None without PyCUDA)
    notes: tuple[str, ...] = field(default=())  # probes that failed, and why

    @property
    def wsl(self) -> str | None:
        return wsl_kind(self.proc_version, self.osrelease)


# --------------------------------------------------------------------------- parsers (pure)
def parse_nvcc_version(text: str) -> tuple[int, int] | None:
    """``(13, 0)`` from ``nvcc --version`` output ("Cuda compilation tools, release 13.0, V13.0.48")."""
    found = re.search(r"release (\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def parse_version(text: str) -> tuple[int, ...] | None:
    """``(2025, 1, 2)`` from ``"2025.1.2"``; the numeric prefix of each part; None if none."""
    parts = []
    for piece in text.strip().split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts) or None


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo's lines as bytes, e.g. ``{"MemTotal": ..., "MemAvailable": ...}``."""
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            values[key.strip()] = int(fields[0]) * (1024 if fields[1:2] == ["kB"] else 1)
    return values


def wsl_kind(proc_version: str, osrelease: str) -> str | None:
    """``"wsl2"``, ``"wsl1"`` or None from the kernel's version strings.

    WSL kernels name Microsoft in their release ("5.15.167.4-microsoft-standard-WSL2"); WSL 1 has no
    Linux kernel and reports "...-Microsoft". Only WSL 2 runs CUDA.
    """
    text = f"{proc_version} {osrelease}"
    if "microsoft" not in text.lower():
        return None
    return "wsl2" if ("WSL2" in text or "microsoft-standard" in text) else "wsl1"


def gpu_from_record(provenance: Mapping[str, Any]) -> GpuFacts:
    """The recorded GPU of a record's provenance as :class:`GpuFacts` (replay; lesson notes)."""
    attributes = dict(provenance.get("attributes") or {})
    major = attributes.get("COMPUTE_CAPABILITY_MAJOR")
    minor = attributes.get("COMPUTE_CAPABILITY_MINOR")
    if major is None:
        capability = parse_version(str(provenance.get("compute_capability", "0.0"))) or (0, 0)
        major, minor = capability[0], (capability[1] if len(capability) > 1 else 0)
    cuda = parse_version(str(provenance.get("cuda_version", "")))
    return GpuFacts(name=str(provenance.get("gpu", "the recorded GPU")), compute_capability=(int(major), int(minor or 0)),
                    attributes=attributes, driver_cuda_version=cuda[:2] if cuda and len(cuda) >= 2 else None,
                    driver_version=provenance.get("driver_version"),
                    total_memory_bytes=attributes.get("TOTAL_MEMORY_BYTES"))


# --------------------------------------------------------------------------- probes (the real machine)
def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _run(command: list[str], timeout: float = 20) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _int_or_none(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def _driver_version_text(root: Path) -> str | None:
    found = re.search(r"Kernel Module(?: for [\w-]+)?\s+(\d+(?:\.\d+)+)", _read(root / "driver" / "nvidia" / "version"))
    if found:
        return found.group(1)
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"])
    return out.strip().splitlines()[0] if out and out.strip() else None


def _gpu(notes: list[str]) -> GpuFacts | None:
    try:
        import pycuda.driver as drv
    except ImportError:
        return None
    try:
        drv.init()
        if drv.Device.count() == 0:
            return None
        device = drv.Device(0)
        attributes = {}
        for name in ATTRIBUTES:
            attribute = getattr(drv.device_attribute, name, None)
            if attribute is not None:
                attributes[name] = int(device.get_attribute(attribute))
        version = drv.get_driver_version()
        return GpuFacts(name=device.name(), compute_capability=tuple(device.compute_capability()),  # type: ignore[arg-type]
                        attributes=attributes, driver_cuda_version=(version // 1000, version % 1000 // 10),
                        driver_version=_driver_version_text(pages.proc_root()),
                        pcie=read_link(), total_memory_bytes=int(device.total_memory()))
    except Exception as exc:  # the driver's own error types; the mode says why in plain words
        notes.append(f"the GPU could not be read ({exc})")
        return None


def _gpu_count() -> int | None:
    try:
        import pycuda.driver as drv

        drv.init()
        return int(drv.Device.count())
    except Exception:  # no PyCUDA, or no driver: unknown
        return None


def _numa_nodes() -> int | None:
    found = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    return len(found) or None


def _container() -> str | None:
    for marker in ("/.dockerenv", "/run/.containerenv"):
        if Path(marker).exists():
            return marker
    cgroup = _read(pages.proc_root() / "1" / "cgroup")
    for word in ("docker", "kubepods", "containerd", "lxc", "podman"):
        if word in cgroup:
            return f"/proc/1/cgroup names {word}"
    return None


def _colab() -> bool:
    if os.environ.get("COLAB_RELEASE_TAG"):
        return True
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):  # no "google" package at all
        return False


def _memory() -> tuple[int | None, int | None]:
    info = parse_meminfo(_read(pages.proc_root() / "meminfo"))
    total = info.get("MemTotal")
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = None
    return total, info.get("MemAvailable")


def _cxx() -> tuple[str | None, str]:
    from ..cpu.compiler import find_compiler
    from ..cpu.errors import CxxCompilerNotFoundError

    try:
        compiler = find_compiler()
    except CxxCompilerNotFoundError:
        return None, ""
    out = _run([compiler, "--version"]) or ""
    return compiler, (out.splitlines()[0] if out else "")


def gather() -> Facts:
    """Read this machine into :class:`Facts` (``python -m helpers doctor``; start-here). Never raises."""
    import platform

    from ..mode import detect
    from .machine import detect_virtualization

    notes: list[str] = []
    mode = detect()
    nvcc_out = _run(["nvcc", "--version"])
    try:
        from importlib.metadata import PackageNotFoundError, version

        try:
            pycuda_version = parse_version(version("pycuda"))
        except PackageNotFoundError:
            pycuda_version = None
    except ImportError:
        pycuda_version = None
    root = pages.proc_root()
    try:
        virtualization = detect_virtualization()
    except (OSError, subprocess.SubprocessError) as exc:
        virtualization = "unknown"
        notes.append(f"virtualization could not be read ({exc})")
    total, available = _memory()
    cxx, cxx_identity = _cxx()
    return Facts(
        mode=mode.name, mode_cause=mode.cause, mode_reason=mode.reason, gpu=_gpu(notes),
        nvcc_version=parse_nvcc_version(nvcc_out) if nvcc_out else None, pycuda_version=pycuda_version,
        system=sys.platform, proc_version=_read(root / "version").strip(),
        osrelease=_read(root / "sys" / "kernel" / "osrelease").strip() or platform.release(),
        colab=_colab(), container=_container(), virtualization=virtualization,
        proc_available=pages.proc_available(), frames_visible=pages.pfns_visible(), mem_total_bytes=total, mem_available_bytes=available,
        cxx=cxx, cxx_identity=cxx_identity, make=shutil.which("make") is not None, numa_nodes=_numa_nodes(),
        gpu_count=_gpu_count(), notes=tuple(notes))


@lru_cache(maxsize=1)
def current() -> Facts:
    """:func:`gather`, once per process (the lessons' platform notes call it)."""
    return gather()
