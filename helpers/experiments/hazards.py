"""Hazards of sharing memory with a running kernel: reading too early, atomics (lesson 09)."""

from __future__ import annotations

import time

import numpy as np

from .. import gpu, kernels
from .buffers import BLOCK, device, full_grid, mapped
from .result import Result, Row, run


def stale_read(n: int = 1 << 22, samples: int = 40) -> Result:
    """Read a mapped buffer while one GPU thread is still filling it, then after synchronising (lesson 09)."""
    return run("stale_read", {"n": n, "samples": samples}, _stale_read)


def _stale_read(n: int, samples: int) -> list[Row]:
    kernel = kernels.load_kernel("hazards", "fill_in_order")
    rows: list[Row] = []
    with mapped(n * 4, fill=0.0) as host:
        pointer = gpu.device_pointer(host)
        t0 = time.perf_counter()
        kernel(pointer, np.uint64(n), np.float32(1.0), block=(1, 1, 1), grid=(1, 1))
        for _ in range(samples):
            filled = int(np.count_nonzero(host))
            rows.append({"after_launch_ms": (time.perf_counter() - t0) * 1e3, "synchronized": False,
                         "filled": filled, "n": n})
            if filled == n:
                break
        gpu.synchronize()
        rows.append({"after_launch_ms": (time.perf_counter() - t0) * 1e3, "synchronized": True,
                     "filled": int(np.count_nonzero(host)), "n": n})
    return rows


def atomics(per_thread: int = 16, repeats: int = 3) -> Result:
    """Counting with atomicAdd and with a plain read-modify-write, in device and mapped memory (lesson 09)."""
    return run("atomics", {"per_thread": per_thread, "repeats": repeats}, _atomics)


def _atomics(per_thread: int, repeats: int) -> list[Row]:
    import pycuda.driver as drv

    grid = full_grid() // 4
    expected = grid * BLOCK * per_thread
    rows: list[Row] = []
    counted = np.zeros(1, np.int32)
    for method in ("count_atomically", "count_plainly"):
        kernel = kernels.load_kernel("hazards", method)
        for memory in ("device", "zero_copy"):
            for _ in range(repeats):
                start, end = drv.Event(), drv.Event()
                if memory == "device":
                    with device(4, fill=None) as counter:
                        drv.memset_d32(counter, 0, 1)
                        start.record()
                        kernel(counter, np.int32(per_thread), block=(BLOCK, 1, 1), grid=(grid, 1))
                        end.record()
                        end.synchronize()
                        drv.memcpy_dtoh(counted, counter)
                        value = int(counted[0])
                else:
                    with mapped(4, np.int32, fill=0) as host:
                        start.record()
                        kernel(gpu.device_pointer(host), np.int32(per_thread), block=(BLOCK, 1, 1), grid=(grid, 1))
                        end.record()
                        end.synchronize()
                        value = int(host[0])
                rows.append({"method": method, "memory": memory, "expected": expected, "counted": value,
                             "seconds": [end.time_since(start) / 1e3]})
    return rows
