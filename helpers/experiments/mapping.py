"""How host memory is mapped for the GPU: addresses, page frames, flags, registration (the pinning, mapping and
registered-memory lessons)."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import numpy as np

from .. import kernels
from ..errors import PinningError
from ..i18n import _
from ..memory import driver_api, gpu, pages
from ..memory.timing import time_gpu, time_host
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
    host address itself (map-pages-on-the-gpu)."""
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
            row: Row = {"allocation": kind, "host_pointer": hex(array.ctypes.data),
                        "host_flags": [flag for flag, on in gpu.host_flags(array).items() if on]}
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
    """The CPU's page table for pageable, locked, CUDA-pinned and registered memory (measure-what-pinning-buys and
    map-pages-on-the-cpu)."""
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


def registered(nbytes: int = 256 * MiB, repeats: int = 9) -> Result:
    """Zero-copy reads from registered pageable memory against cudaHostAlloc memory, and the cost of
    registering (use-write-combined-and-registered-memory)."""
    return run("registered", {"nbytes": nbytes, "repeats": repeats}, _registered)


def _registered(nbytes: int, repeats: int) -> list[Row]:
    import pycuda.driver as drv

    kernel = kernels.load_kernel("bandwidth", "read_float4_x4")
    grid = full_grid()
    rows: list[Row] = []
    rows.append(_try_pycuda_register("pycuda.driver.register_host_memory", np.ones(1024, np.float32), 0))
    # the same call on page-aligned memory with DEVICEMAP, as the driver wants it (1 MiB)
    flags = getattr(getattr(drv, "mem_host_register_flags", None), "DEVICEMAP", driver_api.MEMHOSTREGISTER_DEVICEMAP)
    rows.append(_try_pycuda_register("pycuda.driver.register_host_memory (aligned_empty, DEVICEMAP)",
                                     drv.aligned_empty((MiB // 4,), np.float32, alignment=gpu.PAGE_SIZE), flags))
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
    rows += _alignment_probes()
    return rows


# (start, in bytes past a page boundary; length in bytes): what the driver itself accepts
# (use-write-combined-and-registered-memory)
ALIGNMENT_PROBES = ((0, 4 * 4096), (100, 4 * 4096), (4095, 4 * 4096), (0, 4 * 4096 + 100), (100, 100))


def _alignment_probes() -> list[Row]:
    """``cuMemHostRegister`` straight on ranges that do not start or end on a page boundary, past
    ``RegisteredArray``'s own stricter rule: what this driver accepts (use-write-combined-and-registered-memory)."""
    rows: list[Row] = []
    backing = gpu.page_aligned_empty(8 * gpu.PAGE_SIZE // 4)
    backing[:] = 1.0
    for offset, length in ALIGNMENT_PROBES:
        pointer = backing.ctypes.data + offset
        row: Row = {"allocation": "alignment probe (cuMemHostRegister)", "page_offset": offset, "nbytes": length}
        try:
            driver_api.host_register(pointer, length, driver_api.MEMHOSTREGISTER_DEVICEMAP)
        except driver_api.DriverError as exc:
            rows.append({**row, "works": False, "error": str(exc)})
            continue
        try:
            row["device_pointer_equal"] = driver_api.host_get_device_pointer(pointer) == pointer
        finally:
            driver_api.host_unregister(pointer)
        rows.append({**row, "works": True, "error": ""})
    return rows


def _try_pycuda_register(label: str, array: np.ndarray, flags: Any) -> Row:
    """Register ``array`` with PyCUDA's own ``register_host_memory`` and record what happened
    (use-write-combined-and-registered-memory)."""
    row: Row = {"allocation": label, "nbytes": array.nbytes, "page_offset": array.ctypes.data % gpu.PAGE_SIZE,
                "flags": int(flags)}
    try:
        registered = _register_with_pycuda(array, flags)
    except Exception as exc:  # PyCUDA 2026.1 raises here; record exactly what, and what caused it
        cause = exc.__cause__ or exc.__context__
        row.update(works=False, error=f"{type(exc).__name__}: {exc}",
                   cause=f"{type(cause).__name__}: {cause}" if cause is not None else None)
        row["explanation"] = explain_register_error(row)
        return row
    row["works"] = True
    try:
        row["device_pointer_equal"] = int(registered.base.get_device_pointer()) == array.ctypes.data
    except Exception as exc:  # registered, but no device pointer: record that too
        row["device_pointer_error"] = f"{type(exc).__name__}: {exc}"
    finally:
        registered.base.unregister()
    return row


def explain_register_error(row: Row) -> str:
    """A clear sentence for a failed ``pycuda.driver.register_host_memory`` row of :func:`registered` (the raw
    error is a ``SystemError`` from Boost.Python that says nothing of the cause) (use-write-combined-and-registered-memory)."""
    if row.get("works", True):
        return ""
    cause = row.get("cause") or ""
    if row.get("error", "").startswith("SystemError") and "base" in cause:
        return _("PyCUDA's `register_host_memory` failed with a `SystemError`: the driver was not at fault. "
                 "PyCUDA's wrapper tried to set the NumPy array's `base` a second time, which NumPy 2 refuses "
                 "(`{cause}`). This is a PyCUDA bug seen with some PyCUDA and NumPy versions on some platforms. The "
                 "lesson registers memory through the driver's `cuMemHostRegister` instead "
                 "(`zc.gpu.RegisteredArray`, through ctypes), which works.").format(cause=cause)
    return _("PyCUDA's `register_host_memory` failed ({error}{cause}). The lesson registers memory through the "
             "driver's `cuMemHostRegister` instead (`zc.gpu.RegisteredArray`, through ctypes).").format(
        error=row.get("error"), cause=_("; cause: {cause}").format(cause=cause) if cause else "")


def _register_with_pycuda(array: np.ndarray, flags: Any) -> np.ndarray:
    """``pycuda.driver.register_host_memory(array, flags)``, in one place so a test can stand in for it."""
    import pycuda.driver as drv

    return drv.register_host_memory(array, flags)


def write_combined(gpu_bytes: int = 256 * MiB, cpu_bytes: int = 256 * MiB, repeats: int = 9) -> Result:
    """The CPU and the GPU reading and writing write-combined against ordinary mapped memory
    (use-write-combined-and-registered-memory): the rows only; the verdict that compares them is the findings'
    (``helpers.findings.use_write_combined_and_registered_memory.write_combined_verdict``)."""
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


def pass_by_value(n: int = 1024) -> Result:
    """The seed's vector add launched with the three mapped NumPy arrays themselves instead of their device pointers:
    what PyCUDA and the driver say, and whether the context still works afterwards
    (write-your-first-zero-copy-kernel)."""
    return run("pass_by_value", {"n": n}, _pass_by_value)


def _pass_by_value(n: int) -> list[Row]:
    import pycuda.driver as drv

    kernel = kernels.load_kernel("vector_add", "vector_add_kernel")
    launch = {"block": (BLOCK, 1, 1), "grid": ((n + BLOCK - 1) // BLOCK, 1)}
    x, y, z = (gpu.mapped_empty(n, np.float32) for _ in range(3))
    try:
        x[:], y[:], z[:] = 1.0, 2.0, 0.0
        row: Row = {"n": n, "passed_argument_bytes": 3 * x.nbytes + 4, "raised": False, "error_type": "",
                    "error": ""}
        try:
            kernel(x, y, z, np.int32(n), **launch)  # WRONG: PyCUDA packs each array's bytes, by value
            gpu.synchronize()
        except drv.Error as exc:
            row.update(raised=True, error_type=type(exc).__name__, error=str(exc))
        try:
            z[:] = 0.0
            kernel(gpu.device_pointer(x), gpu.device_pointer(y), gpu.device_pointer(z), np.int32(n), **launch)
            gpu.synchronize()
            row["context_ok_after"] = bool(np.all(z == 3.0))
        except drv.Error as exc:
            row.update(context_ok_after=False, error_after=f"{type(exc).__name__}: {exc}")
        return [row]
    finally:
        gpu.free(x, y, z)
