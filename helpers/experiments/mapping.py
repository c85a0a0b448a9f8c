"""How host memory is mapped for the GPU: addresses, page frames, flags, registration (lessons 01, 03, 09)."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import numpy as np

from .. import gpu, kernels, pages
from ..errors import PinningError
from ..timing import time_gpu, time_host
from .buffers import BLOCK, NEVER, device, full_grid, mapped
from .result import Result, Row, run

MiB = 1 << 20


def _double_in_place(pointer: Any, n: int) -> None:
    """x = x + x through one pointer, with the seed's kernel."""
    kernel = kernels.load_kernel("vector_add", "vector_add_kernel")
    kernel(pointer, pointer, pointer, np.int32(n), block=(BLOCK, 1, 1), grid=((n + BLOCK - 1) // BLOCK, 1))
    gpu.synchronize()


def address_identity(nbytes: int = 1 * MiB) -> Result:
    """Host and device addresses of each kind of page-locked memory, and a kernel run through the
    host address itself (lesson 03)."""
    return run("address_identity", {"nbytes": nbytes}, _address_identity)


def _address_identity(nbytes: int) -> list[Row]:
    import pycuda.driver as drv

    n = nbytes // 4
    rows: list[Row] = []
    kinds = {
        "mapped (DEVICEMAP)": lambda: gpu.mapped_empty(n),
        "mapped + write-combined": lambda: gpu.mapped_empty(n, write_combined=True),
        "mapped + portable": lambda: gpu.mapped_empty(n, portable=True),
        "pinned, no DEVICEMAP flag": lambda: gpu.pinned_empty(n),
    }
    for kind, allocate in kinds.items():
        array = allocate()
        try:
            array[:] = 1.5
            row: Row = {"allocation": kind, "host_pointer": hex(array.ctypes.data)}
            try:
                device_pointer = int(gpu.device_pointer(array))
                row["device_pointer"] = hex(device_pointer)
                row["equal"] = device_pointer == array.ctypes.data
            except (drv.Error, PinningError) as exc:
                row.update(device_pointer=None, equal=False, error=str(exc))
            _double_in_place(np.intp(array.ctypes.data), n)
            row["kernel_through_host_pointer_ok"] = bool(np.all(array == 3.0))
            rows.append(row)
        finally:
            gpu.free(array)
    plain = gpu.page_aligned_empty(n)
    plain[:] = 1.5
    with gpu.RegisteredArray(plain) as registered:
        device_pointer = int(registered.device_pointer)
        _double_in_place(np.intp(plain.ctypes.data), n)
        rows.append({"allocation": "registered (cuMemHostRegister)", "host_pointer": hex(plain.ctypes.data),
                     "device_pointer": hex(device_pointer), "equal": device_pointer == plain.ctypes.data,
                     "kernel_through_host_pointer_ok": bool(np.all(plain == 3.0))})
    return rows


def pagemap_pinned(nbytes: int = 64 * 1024) -> Result:
    """The CPU's page table for pageable, locked, CUDA-pinned and registered memory (lessons 01 and 02)."""
    return run("pagemap_pinned", {"nbytes": nbytes}, _pagemap_pinned)


def _describe_pages(kind: str, array: np.ndarray) -> Row:
    frames = pages.frames_of(array)
    mapping = pages.mapping_of(array.ctypes.data)
    pfns = [frame.pfn for frame in frames]
    return {"allocation": kind, "address": hex(array.ctypes.data), "pages": len(frames),
            "present_pages": sum(frame.present for frame in frames), "pfns": pfns,
            "maps_line": mapping.line, "mapping_bytes": mapping.nbytes}


def _pagemap_pinned(nbytes: int) -> list[Row]:
    rows: list[Row] = []
    fresh = gpu.page_aligned_empty(nbytes // 4)
    rows.append(_describe_pages("pageable, never touched", fresh))
    fresh[:] = 1.0
    rows.append(_describe_pages("pageable, touched", fresh))
    with ExitStack() as stack:
        for kind, flags in (("cudaHostAlloc mapped", {}), ("cudaHostAlloc mapped + write-combined",
                                                            {"write_combined": True})):
            array = stack.enter_context(mapped(nbytes, fill=None, **flags))
            rows.append(_describe_pages(kind, array))
        plain = gpu.page_aligned_empty(nbytes // 4)
        registered = stack.enter_context(gpu.RegisteredArray(plain))
        rows.append(_describe_pages("cuMemHostRegister", registered.array))
        # read while all three page-locked buffers are still held
        rows.append({"allocation": "process, while the buffers above are held", "pfns_visible": pages.pfns_visible(),
                     "memlock_soft_bytes": pages.memlock_limit()[0] or -1, "held_bytes": 3 * nbytes,
                     **pages.locked_kib()})
    return rows


def registered(nbytes: int = 256 * MiB, repeats: int = 5) -> Result:
    """Zero-copy reads from registered pageable memory against cudaHostAlloc memory, and the cost of
    registering (lesson 09)."""
    return run("registered", {"nbytes": nbytes, "repeats": repeats}, _registered)


def _registered(nbytes: int, repeats: int) -> list[Row]:
    import pycuda.driver as drv

    kernel = kernels.load_kernel("bandwidth", "read_float4_x4")
    grid = full_grid()
    rows: list[Row] = []
    try:
        handle = drv.register_host_memory(np.ones(1024, np.float32))
        handle.base.unregister()
        rows.append({"allocation": "pycuda.driver.register_host_memory", "works": True})
    except Exception as exc:  # PyCUDA 2026.1 raises here; record exactly what
        rows.append({"allocation": "pycuda.driver.register_host_memory", "works": False,
                     "error": f"{type(exc).__name__}: {exc}"})
    plain = gpu.page_aligned_empty(nbytes // 4)
    plain[:] = 1.0
    cost = time_host(lambda: gpu.RegisteredArray(plain).unregister(), repeats=repeats)
    rows.append({"allocation": "register + unregister (host)", "nbytes": nbytes,
                 "seconds": list(cost.seconds), "GBps": nbytes / cost.median / 1e9})
    with device(4) as sink:
        def read(pointer: Any) -> Any:
            return time_gpu(lambda: kernel(pointer, np.uint64(nbytes // 16), NEVER, sink, block=(BLOCK, 1, 1),
                                           grid=(grid, 1)), repeats=repeats)

        with gpu.RegisteredArray(plain) as reg:
            timing = read(reg.device_pointer)
        rows.append({"allocation": "registered", "nbytes": nbytes, "seconds": list(timing.seconds),
                     "GBps": nbytes / timing.median / 1e9})
        with mapped(nbytes) as host:
            timing = read(gpu.device_pointer(host))
        rows.append({"allocation": "cudaHostAlloc mapped", "nbytes": nbytes, "seconds": list(timing.seconds),
                     "GBps": nbytes / timing.median / 1e9})
    return rows


def write_combined(gpu_bytes: int = 256 * MiB, cpu_bytes: int = 16 * MiB, repeats: int = 5) -> Result:
    """The CPU and the GPU reading and writing write-combined against ordinary mapped memory (lesson 09)."""
    return run("write_combined", {"gpu_bytes": gpu_bytes, "cpu_bytes": cpu_bytes, "repeats": repeats},
               _write_combined)


def _write_combined(gpu_bytes: int, cpu_bytes: int, repeats: int) -> list[Row]:
    read_kernel = kernels.load_kernel("bandwidth", "read_float4_x4")
    write_kernel = kernels.load_kernel("bandwidth", "write_float4")
    grid = full_grid()
    rows: list[Row] = []
    with device(4) as sink:
        for kind, flags in (("mapped", {}), ("mapped + write-combined", {"write_combined": True})):
            with mapped(max(gpu_bytes, cpu_bytes), **flags) as host:
                pointer = gpu.device_pointer(host)
                n4 = np.uint64(gpu_bytes // 16)
                timing = time_gpu(lambda: read_kernel(pointer, n4, NEVER, sink, block=(BLOCK, 1, 1),
                                                      grid=(grid, 1)), repeats=repeats)
                rows.append({"allocation": kind, "side": "gpu", "op": "read", "nbytes": gpu_bytes,
                             "seconds": list(timing.seconds), "GBps": gpu_bytes / timing.median / 1e9})
                timing = time_gpu(lambda: write_kernel(pointer, n4, np.float32(1.0), block=(BLOCK, 1, 1),
                                                       grid=(grid, 1)), repeats=repeats)
                rows.append({"allocation": kind, "side": "gpu", "op": "write", "nbytes": gpu_bytes,
                             "seconds": list(timing.seconds), "GBps": gpu_bytes / timing.median / 1e9})
                view = host[: cpu_bytes // 4]
                ordinary = np.empty_like(view)
                timing = time_host(lambda: np.copyto(ordinary, view), repeats=repeats)
                rows.append({"allocation": kind, "side": "cpu", "op": "read", "nbytes": cpu_bytes,
                             "seconds": list(timing.seconds), "GBps": cpu_bytes / timing.median / 1e9})
                timing = time_host(lambda: view.fill(3.0), repeats=repeats)
                rows.append({"allocation": kind, "side": "cpu", "op": "write", "nbytes": cpu_bytes,
                             "seconds": list(timing.seconds), "GBps": cpu_bytes / timing.median / 1e9})
    return rows
