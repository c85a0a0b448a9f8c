"""Other programs on the GPU, which the measurement queue cannot hold back (measure-bandwidth).

The queue orders the course's own timed sections. A process outside the course (a training job, a
benchmark, another course's notebook) may use the same GPU and its PCIe link meanwhile; NVML (through
nvidia-ml-py) lists the processes that hold a context on the GPU, and :func:`outsiders` keeps those that
are neither this process nor a course process known to the queue's folder. Seeing a process does not
prove it was busy: the note in :meth:`helpers.experiments.Result.describe` says so.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["outsiders", "nvml_handle"]

_handle: Any = None
_unavailable = False


def nvml_handle() -> Any:
    """NVML's handle of this process's GPU 0 (matched by PCI bus id), or None without NVML."""
    global _handle, _unavailable
    if _handle is not None or _unavailable:
        return _handle
    try:
        import pynvml  # nvidia-ml-py
        import pycuda.driver as drv

        pynvml.nvmlInit()
        bus = drv.Device(0).pci_bus_id().lower()
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            nvml_bus = pynvml.nvmlDeviceGetPciInfo(handle).busId
            nvml_bus = (nvml_bus.decode() if isinstance(nvml_bus, bytes) else nvml_bus).lower()
            if nvml_bus.endswith(bus.split(":", 1)[1]):  # NVML writes an 8-digit domain, CUDA a 4-digit one
                _handle = handle
                break
        else:
            _unavailable = True
    except Exception:  # no nvidia-ml-py, no NVML library, or a driver that refuses: nothing to say
        _unavailable = True
    return _handle


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def outsiders() -> list[dict[str, Any]] | None:
    """Processes with a compute context on this GPU that are not course processes; None if NVML cannot say."""
    handle = nvml_handle()
    if handle is None:
        return None
    import pynvml

    from .gpu_queue import QueueError, course_pids

    try:
        processes = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    except Exception:  # e.g. NVML_ERROR_NO_PERMISSION
        return None
    try:
        ours = course_pids()
    except (QueueError, OSError):
        ours = set()
    ours.add(os.getpid())
    return [{"pid": int(p.pid), "name": _name(int(p.pid)),
             "gpu_memory_bytes": int(p.usedGpuMemory) if p.usedGpuMemory is not None else None}
            for p in processes if int(p.pid) not in ours]
