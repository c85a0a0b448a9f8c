"""Zero-copy beyond one mapped allocation: managed memory, read-only registration, CPU traffic on the
same link and memory, pageable memory, NUMA (the platforms lesson).

Each function measures on this machine's GPU live and replays the H200 record otherwise. What one
discrete PCIe GPU cannot show (integrated memory, a coherent NVLink-C2C link, HMM/ATS) the lesson
cites; here the course records what this machine does, including the attributes that decide it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .. import kernels
from ..memory import driver_api, gpu
from ..memory.timing import time_gpu
from ..sharing.gpu_queue import measurement_slot
from .buffers import BLOCK, NEVER, device, full_grid, mapped
from .result import Result, Row, run

MiB, GiB = 1 << 20, 1 << 30
MANAGED_KINDS = ("mapped", "managed, preferred CPU + accessed by GPU", "managed, migrating")


# --------------------------------------------------------------------------- managed memory
def managed(sizes: Sequence[int] = (256 * MiB, 1 * GiB), passes: Sequence[int] = (1, 8), repeats: int = 9) -> Result:
    """A kernel reading ``passes`` times over data the CPU has just written: mapped pinned memory, managed
    memory advised to stay on the CPU (zero-copy through managed memory) and managed memory left to
    migrate on the GPU's first touch (the platforms lesson)."""
    params = {"sizes": list(sizes), "passes": list(passes), "repeats": repeats, "block": BLOCK}
    return run("managed", params, _managed)


def _managed(sizes: list[int], passes: list[int], repeats: int, block: int) -> list[Row]:
    import pycuda.driver as drv

    read = kernels.load_kernel("bandwidth", "read_float4_x4")
    grid = full_grid(block)
    rows: list[Row] = []
    with device(4) as sink:
        for nbytes in sizes:
            n4 = np.uint64(nbytes // 16)
            for kind in MANAGED_KINDS:
                with _HostBuffer(kind, nbytes) as (array, pointer):
                    for k in passes:
                        def work() -> None:
                            for _ in range(k):
                                read(pointer, n4, NEVER, sink, block=(block, 1, 1), grid=(grid, 1))

                        # the CPU writes the data before every repeat: read-once data arrive from the CPU each time
                        seconds = _time_after(lambda: array.fill(1.0), work, repeats)
                        rows.append({"memory": kind, "nbytes": nbytes, "passes": k, "seconds": seconds,
                                     "GBps": nbytes * k / float(np.median(seconds)) / 1e9})
    drv.Context.synchronize()
    return rows


class _HostBuffer:
    """A buffer of one of :data:`MANAGED_KINDS` and its device pointer, freed on exit."""

    def __init__(self, kind: str, nbytes: int) -> None:
        self.kind, self.nbytes = kind, nbytes
        self._free: Callable[[], None] = lambda: None

    def __enter__(self) -> tuple[np.ndarray, np.intp]:
        import pycuda.driver as drv

        gpu.context()
        if self.kind == "mapped":
            array = gpu.mapped_empty(self.nbytes // 4, np.float32)
            self._free = lambda: gpu.free(array)
            return array, gpu.device_pointer(array)
        free_bytes, _ = drv.mem_get_info()
        if self.nbytes > free_bytes // 2:  # a managed allocation larger than free device memory can hang the GPU
            raise MemoryError(f"{self.nbytes} bytes of managed memory is over half of the GPU's free memory "
                              f"({free_bytes} bytes); use smaller sizes.")
        array = drv.managed_empty(self.nbytes // 4, np.float32, mem_flags=drv.mem_attach_flags.GLOBAL)
        self._free = array.base.free
        pointer = array.ctypes.data  # unified addressing: the managed pointer is the same on both sides
        if self.kind.startswith("managed, preferred CPU"):
            driver_api.mem_advise(pointer, self.nbytes, driver_api.MEM_ADVISE_SET_PREFERRED_LOCATION, device=None)
            driver_api.mem_advise(pointer, self.nbytes, driver_api.MEM_ADVISE_SET_ACCESSED_BY, device=0)
        return array, np.intp(pointer)

    def __exit__(self, *exc_info: object) -> None:
        gpu.synchronize()
        self._free()


def _time_after(setup: Callable[[], object], work: Callable[[], object], repeats: int, warmup: int = 1) -> list[float]:
    """Seconds of ``work`` between CUDA events, with ``setup`` run (untimed, GPU idle) before each repeat."""
    import pycuda.driver as drv

    start, end = drv.Event(), drv.Event()
    seconds = []
    drv.Context.synchronize()
    with measurement_slot(what="time_after"):
        for i in range(warmup + repeats):
            setup()
            drv.Context.synchronize()
            start.record()
            work()
            end.record()
            end.synchronize()
            if i >= warmup:
                seconds.append(end.time_since(start) / 1e3)
    return seconds


# --------------------------------------------------------------------------- CPU traffic
def cpu_traffic(threads: Sequence[int] = (0, 1, 2, 4, 8), nbytes: int = 256 * MiB, launches: int = 8,
                cpu_bytes: int = 256 * MiB, repeats: int = 9) -> Result:
    """Zero-copy read bandwidth while ``threads`` CPU threads stream through memory of their own, and
    the CPU threads' rate with and without the kernel (the platforms lesson): the link and the host's
    memory controllers are shared."""
    params = {"threads": list(threads), "nbytes": nbytes, "launches": launches, "cpu_bytes": cpu_bytes,
              "repeats": repeats}
    return run("cpu_traffic", params, _cpu_traffic)


class _Streamers:
    """``count`` threads copying ``cpu_bytes`` arrays over and over (NumPy releases the GIL while it copies)."""

    CHUNK = 32 * MiB

    def __init__(self, count: int, cpu_bytes: int) -> None:
        self.stop = threading.Event()
        self.moved = [0] * count
        self.arrays = [(np.ones(cpu_bytes // 4, np.float32), np.empty(cpu_bytes // 4, np.float32))
                       for _ in range(count)]
        self.threads = [threading.Thread(target=self._stream, args=(i,), daemon=True) for i in range(count)]

    def _stream(self, i: int) -> None:
        source, target = self.arrays[i]
        step = self.CHUNK // 4
        while not self.stop.is_set():
            for at in range(0, source.size, step):
                np.copyto(target[at:at + step], source[at:at + step])
                self.moved[i] += 2 * min(step, source.size - at) * 4  # read and written
                if self.stop.is_set():
                    return

    def __enter__(self) -> "_Streamers":
        for t in self.threads:
            t.start()
        time.sleep(0.2 if self.threads else 0.0)  # let them reach a steady rate
        return self

    def rate_over(self, action: Callable[[], object]) -> tuple[float, Any]:
        """The threads' bytes per second while ``action`` runs, and what it returned."""
        before, t0 = sum(self.moved), time.perf_counter()
        value = action()
        return (sum(self.moved) - before) / (time.perf_counter() - t0), value

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join()


def _cpu_traffic(threads: list[int], nbytes: int, launches: int, cpu_bytes: int, repeats: int) -> list[Row]:
    read = kernels.load_kernel("bandwidth", "read_float4_x4")
    grid = full_grid()
    rows: list[Row] = []
    with mapped(nbytes) as host, device(4) as sink:
        pointer, n4 = gpu.device_pointer(host), np.uint64(nbytes // 16)

        def work() -> None:
            for _ in range(launches):
                read(pointer, n4, NEVER, sink, block=(BLOCK, 1, 1), grid=(grid, 1))

        for count in threads:
            with _Streamers(count, cpu_bytes) as streamers:
                cpu_with, timing = streamers.rate_over(lambda: time_gpu(work, repeats=repeats))
                window = sum(timing.seconds)
                cpu_alone, _ = streamers.rate_over(lambda: time.sleep(max(window, 0.2)))
            row: Row = {"cpu_threads": count, "nbytes": nbytes * launches, "seconds": list(timing.seconds),
                        "GBps": nbytes * launches / timing.median / 1e9}
            if count:
                row.update(cpu_GBps_with_kernel=cpu_with / 1e9, cpu_GBps_alone=cpu_alone / 1e9)
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- read-only registration
def read_only_registration(nbytes: int = 256 * MiB, repeats: int = 9) -> Result:
    """Registering a read-only file mapping with and without ``CU_MEMHOSTREGISTER_READ_ONLY``, and the
    GPU's read bandwidth from registered memory with either flag (the platforms lesson)."""
    return run("read_only_registration", {"nbytes": nbytes, "repeats": repeats}, _read_only_registration)


def _read_only_registration(nbytes: int, repeats: int) -> list[Row]:
    from ..errors import RegistrationError
    from ..memory.pages import page_aligned_empty

    read = kernels.load_kernel("bandwidth", "read_float4_x4")
    grid, n4 = full_grid(), np.uint64(nbytes // 16)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="zc-readonly-") as folder, device(4) as sink:
        path = Path(folder) / "data.f32"
        np.ones(nbytes // 4, np.float32).tofile(path)
        cases = (("read-only file mapping", False), ("read-only file mapping", True),
                 ("anonymous memory", False), ("anonymous memory", True))
        for memory, read_only in cases:
            array = (np.memmap(path, dtype=np.float32, mode="r") if memory.startswith("read-only")
                     else page_aligned_empty(nbytes // 4, np.float32))
            if not memory.startswith("read-only"):
                array.fill(1.0)
            row: Row = {"memory": memory, "read_only_flag": read_only, "nbytes": nbytes}
            try:
                registered = gpu.RegisteredArray(array, read_only=read_only)
            except RegistrationError as exc:  # the driver's own words: "... failed with CUDA error N: ..."
                driver_words = re.search(r"CUDA error \d+: [^.]*", str(exc))
                rows.append({**row, "registered": False,
                             "error": driver_words.group(0) if driver_words else str(exc)[:300]})
                continue
            with registered:
                timing = time_gpu(lambda: read(registered.device_pointer, n4, NEVER, sink, block=(BLOCK, 1, 1),
                                               grid=(grid, 1)), repeats=repeats)
            rows.append({**row, "registered": True, "error": "", "seconds": list(timing.seconds),
                         "GBps": nbytes / timing.median / 1e9})
            del array
    return rows


# --------------------------------------------------------------------------- pageable memory (HMM / ATS)
def pageable_access(n: int = 1 << 20, timeout: float = 120.0) -> Result:
    """What a kernel does when handed a pointer to ordinary ``malloc`` memory, run in a child process so a
    fault cannot harm this one; with the attributes that decide it (the platforms lesson)."""
    return run("pageable_access", {"n": n, "timeout": timeout}, _pageable_access)


def _pageable_access(n: int, timeout: float) -> list[Row]:
    attributes = gpu.device_attributes()
    with measurement_slot(what="pageable_access"):
        done = subprocess.run([sys.executable, "-m", "helpers.experiments.platforms", "pageable", str(n)],
                              capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    child = json.loads(lines[-1]) if lines else {"outcome": "child died",
                                                   "error": (done.stderr or done.stdout).strip()[-300:]}
    return [{"n": n, "PAGEABLE_MEMORY_ACCESS": attributes.get("PAGEABLE_MEMORY_ACCESS", -1),
             "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES":
                 attributes.get("PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES", -1),
             "child_exit_code": done.returncode, **child}]


def _pageable_child(n: int) -> dict[str, Any]:
    """In the child: a kernel reads a NumPy array of ordinary pageable memory through its host address."""
    import pycuda.driver as drv

    data = np.ones(n, np.float32)  # malloc'd by NumPy: pageable, never pinned nor registered
    read = kernels.load_kernel("bandwidth", "read_float")
    sink = drv.mem_alloc(4)
    try:
        read(np.intp(data.ctypes.data), np.uint64(n), NEVER, sink, block=(BLOCK, 1, 1), grid=(64, 1))
        drv.Context.synchronize()
        total = np.zeros(1, np.float32)
        drv.memcpy_dtoh(total, sink)
        return {"outcome": "kernel read it", "error": ""}
    except drv.Error as exc:
        return {"outcome": "fault", "error": f"{type(exc).__name__}: {exc}"[:300]}


# --------------------------------------------------------------------------- NUMA
def numa_topology() -> Result:
    """The host's NUMA nodes, the node the GPU hangs off and its nearby CPUs (the platforms lesson)."""
    return run("numa_topology", {}, _numa_topology)


def _numa_topology() -> list[Row]:
    import pycuda.driver as drv

    gpu.context()
    bus_id = drv.Device(0).pci_bus_id().lower()
    pci = Path("/sys/bus/pci/devices") / bus_id
    nodes = sorted(p.name for p in Path("/sys/devices/system/node").glob("node[0-9]*"))
    return [{"host_numa_nodes": len(nodes), "pci_bus_id": bus_id,
             "sysfs_numa_node": _read_int(pci / "numa_node"),
             "cuda_host_numa_id": driver_api.device_attribute(driver_api.DEVICE_ATTRIBUTE_HOST_NUMA_ID),
             "local_cpulist": _read_text(pci / "local_cpulist"), "cpu_count": os.cpu_count() or 0}]


def _read_text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _read_int(path: Path) -> int:
    text = _read_text(path)
    return int(text) if text.lstrip("-").isdigit() else -1


if __name__ == "__main__":
    if sys.argv[1:2] == ["pageable"]:
        gpu.context()
        print(json.dumps(_pageable_child(int(sys.argv[2]))))
