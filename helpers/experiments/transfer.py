"""Bandwidth experiments: copies, streaming kernels, requests in flight, caching (lessons 02, 06 and 08)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import kernels
from ..timing import time_gpu, time_host
from .buffers import BLOCK, NEVER, device, full_grid, mapped, pinned, seconds_row
from .result import Result, Row, run

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
SWEEP_SIZES = tuple(4 * KiB * 4**k for k in range(11))  # 4 KiB .. 4 GiB in steps of 4
DEFAULT_SIZES = SWEEP_SIZES[:-1]  # 4 KiB .. 1 GiB


def _repeats_for(nbytes: int, repeats: int) -> int:
    """Every size gets all ``repeats`` (the quiet-sweep rule: >= 9 everywhere, helpers/experiments/quiet.py)."""
    return repeats


def memcpy(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 10) -> Result:
    """``cudaMemcpy`` host-to-device and device-to-host, from pinned and pageable memory (lessons 02, 06).

    Beside them, rows with ``host_memory="host_memcpy"`` (direction ``"htoh"``) time a plain CPU copy of the
    same size between two ordinary arrays: the staging copy a pageable transfer needs, on its own (lesson 02).
    """
    return run("memcpy", {"sizes": list(sizes), "repeats": repeats}, _memcpy)


def _memcpy(sizes: list[int], repeats: int) -> list[Row]:
    import pycuda.driver as drv

    largest = max(sizes)
    rows: list[Row] = []
    pageable = np.ones(largest // 4, np.float32)  # ordinary memory, every page touched
    other = np.ones(largest // 4, np.float32)  # a second ordinary array, the target of the host-only copy
    with pinned(largest) as locked, device(largest) as dev:
        for nbytes in sizes:
            for host_memory, host_array in (("pinned", locked), ("pageable", pageable)):
                host = host_array.view(np.uint8)[:nbytes]
                for direction in ("htod", "dtoh"):
                    if direction == "htod":
                        timing = time_gpu(lambda: drv.memcpy_htod(dev, host), repeats=_repeats_for(nbytes, repeats))
                    else:
                        timing = time_gpu(lambda: drv.memcpy_dtoh(host, dev), repeats=_repeats_for(nbytes, repeats))
                    rows.append(seconds_row(timing, direction=direction, host_memory=host_memory, nbytes=nbytes,
                                            GBps=nbytes / timing.median / 1e9))
            source, target = pageable.view(np.uint8)[:nbytes], other.view(np.uint8)[:nbytes]
            timing = time_host(lambda: np.copyto(target, source), repeats=_repeats_for(nbytes, repeats))
            rows.append(seconds_row(timing, direction="htoh", host_memory="host_memcpy", nbytes=nbytes,
                                    GBps=nbytes / timing.median / 1e9))
    return rows


def _stream_kernel(op: str) -> tuple[Any, str]:
    name = "read_float4_x4" if op == "read" else "write_float4"
    return kernels.load_kernel("bandwidth", name), name


def _launch_stream(kernel: Any, op: str, pointer: Any, nbytes: int, sink: Any, grid: int, block: int) -> None:
    n4 = np.uint64(nbytes // 16)
    if op == "read":
        kernel(pointer, n4, NEVER, sink, block=(block, 1, 1), grid=(grid, 1))
    else:
        kernel(pointer, n4, np.float32(2.0), block=(block, 1, 1), grid=(grid, 1))


def kernel_bandwidth(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 10) -> Result:
    """Streaming read and write kernels on mapped host memory and on device memory (lesson 06)."""
    return run("kernel_bandwidth", {"sizes": list(sizes), "repeats": repeats}, _kernel_bandwidth)


def _kernel_bandwidth(sizes: list[int], repeats: int) -> list[Row]:
    from .. import gpu

    largest = max(sizes)
    grid = full_grid()
    rows: list[Row] = []
    with mapped(largest) as host, device(largest) as dev, device(4) as sink:
        pointers = {"zero_copy": gpu.device_pointer(host), "device": dev}
        for memory, pointer in pointers.items():
            for op in ("read", "write"):
                kernel, name = _stream_kernel(op)
                for nbytes in sizes:
                    timing = time_gpu(lambda: _launch_stream(kernel, op, pointer, nbytes, sink, grid, BLOCK),
                                      repeats=_repeats_for(nbytes, repeats))
                    rows.append(seconds_row(timing, memory=memory, op=op, kernel=name, nbytes=nbytes, grid=grid,
                                            block=BLOCK, GBps=nbytes / timing.median / 1e9))
        if not np.all(host[: largest // 4] == np.float32(2.0)):
            raise AssertionError("write_float4 did not write every element of the mapped buffer")
    return rows


VECTOR_KERNELS = {"read_float": (4, 1), "read_float2": (8, 1), "read_float4": (16, 1), "read_float4_x4": (16, 4),
                  "read_float4_x4_runs": (16, 4), "read_float4_x4_l2_256": (16, 4)}


INFLIGHT_PROBE = 4 * MiB  # the untimed first launch of a row that sizes its buffer


def inflight(nbytes: int = 256 * MiB, repeats: int = 9, min_seconds: float = 0.025) -> Result:
    """Zero-copy read bandwidth against the bytes each thread and the GPU keep in flight (lesson 08).

    A row reads ``nbytes``, or, when few threads move few bytes per second, fewer: the bytes that keep
    one launch busy for at least ``min_seconds`` (sized from one untimed probe launch over 4 MiB).
    Either way every row meets the quiet-sweep rule (>= 256 MiB or >= 20 ms a repeat, >= 9 repeats)."""
    return run("inflight", {"nbytes": nbytes, "repeats": repeats, "min_seconds": min_seconds}, _inflight)


def _row_size(launch: Any, nbytes: int, min_seconds: float, unit: int) -> int:
    """The bytes a row reads: ``nbytes``, or fewer that still take ``min_seconds`` by one probe launch."""
    probe = time_gpu(lambda: launch(INFLIGHT_PROBE), repeats=1, warmup=1).median
    wanted = INFLIGHT_PROBE * min_seconds / max(probe, 1e-9) * 1.25  # a margin over the probe's estimate
    size = int(min(nbytes, max(INFLIGHT_PROBE, wanted)))
    return max(unit, size // unit * unit)


def _inflight(nbytes: int, repeats: int, min_seconds: float) -> list[Row]:
    from .. import gpu

    full = full_grid() * BLOCK
    thread_counts = sorted({32 * 2**k for k in range(20) if 32 * 2**k < full} | {full})
    rows: list[Row] = []
    with mapped(nbytes) as host, device(4) as sink:
        pointer = gpu.device_pointer(host)
        # 1. vector width and loads per thread, with the GPU full of threads
        # 2. the number of threads, for one and for four 16-byte loads per thread
        plan = [(name, full) for name in VECTOR_KERNELS]
        plan += [(name, threads) for name in ("read_float4", "read_float4_x4") for threads in thread_counts if threads != full]
        for name, threads in plan:
            vector_bytes, loads = VECTOR_KERNELS[name]
            block = min(BLOCK, threads)
            grid = threads // block
            kernel = kernels.load_kernel("bandwidth", name)

            def launch(size: int) -> None:
                kernel(pointer, np.uint64(size // vector_bytes), NEVER, sink, block=(block, 1, 1), grid=(grid, 1))

            # few threads move few bytes per second: they read fewer bytes, still >= min_seconds a launch
            size = _row_size(launch, nbytes, min_seconds, MiB)
            timing = time_gpu(lambda: launch(size), repeats=repeats)
            rows.append(seconds_row(timing, kernel=name, vector_bytes=vector_bytes, loads_per_thread=loads,
                                    threads=threads, grid=grid, block=block, nbytes=size,
                                    bytes_in_flight=threads * vector_bytes * loads, GBps=size / timing.median / 1e9))
        # 3. the bulk-copy engine: thread 0 of each 32-thread block keeps four 8 KiB copies in flight
        grid = gpu.device_attributes()["MULTIPROCESSOR_COUNT"] * 6
        bulk = kernels.load_kernel("bandwidth", "read_bulk")
        timing = time_gpu(lambda: bulk(pointer, np.uint64(nbytes // 16), NEVER, sink, block=(32, 1, 1),
                                       grid=(grid, 1)), repeats=repeats)
        rows.append(seconds_row(timing, kernel="read_bulk", vector_bytes=8192, loads_per_thread=4, threads=grid * 32,
                                grid=grid, block=32, nbytes=nbytes, bytes_in_flight=grid * 8192 * 4,
                                GBps=nbytes / timing.median / 1e9))
    return rows


CACHE_LOADS = ("ldg", "ldca", "ldcg", "ldcv")  # the `cache` argument of reread_cached, in order
REREAD_PATTERNS = ("same_sm", "other_sm")


def reread_shift(pattern: str, n4: int, block: int = BLOCK) -> int:
    """How far (in float4) each pass of ``reread_cached`` moves every thread's element (lesson 08).

    ``same_sm``: 0, every block re-reads its own lines. ``other_sm``: half the buffer plus one
    block, so each pass hands every line to a block far away in the grid (another SM), and a
    thread comes back to its first element only after ``n4 / gcd(shift, n4)`` passes.
    """
    if pattern == "same_sm":
        return 0
    if pattern == "other_sm":
        return (n4 // 2 + block) % n4
    raise ValueError(f"Unknown re-read pattern {pattern!r}; use one of {REREAD_PATTERNS}.")


def caching(nbytes_list: Sequence[int] = (1 * MiB, 4 * MiB), delivered: int = 512 * MiB, repeats: int = 5) -> Result:
    """Which on-GPU cache keeps mapped memory: load kind x same-SM or other-SM re-reads (lesson 08).

    Every thread re-reads a small buffer through ``__ldg``, ``__ldca``, ``__ldcg`` or ``__ldcv``,
    either its own block's lines again (the SM's L1 could serve them) or lines another SM read
    last (only the shared L2 could). Device memory runs the same grid as the control, and a pinned
    memcpy in the same run gives the link rate.
    """
    params = {"nbytes_list": list(nbytes_list), "delivered": delivered, "repeats": repeats}
    return run("caching", params, _caching)


def _caching(nbytes_list: list[int], delivered: int, repeats: int) -> list[Row]:
    import pycuda.driver as drv

    from .. import gpu

    kernel = kernels.load_kernel("bandwidth", "reread_cached")
    rows: list[Row] = []
    largest = max(nbytes_list)
    with mapped(largest) as host, device(largest) as dev, device(4) as sink, pinned(256 * MiB) as staging, \
            device(256 * MiB, fill=None) as target:
        link = time_gpu(lambda: drv.memcpy_htod(target, staging), repeats=repeats)
        rows.append(seconds_row(link, memory="memcpy_htod_pinned", nbytes=256 * MiB, passes=1,
                                delivered_GBps=256 * MiB / link.median / 1e9))
        for memory, pointer in (("zero_copy", gpu.device_pointer(host)), ("device", dev)):
            for nbytes in nbytes_list:
                n4 = nbytes // 16
                grid = max(1, min(full_grid(), n4 // BLOCK))
                for pattern in REREAD_PATTERNS:
                    shift = reread_shift(pattern, n4)
                    for cache, load in enumerate(CACHE_LOADS):
                        passes = max(2, delivered // nbytes)  # the first, cold pass weighs little
                        timing = time_gpu(lambda: kernel(pointer, np.uint64(n4), np.int32(passes), np.uint64(shift),
                                                         np.int32(cache), NEVER, sink, block=(BLOCK, 1, 1),
                                                         grid=(grid, 1)), repeats=repeats)
                        rows.append(seconds_row(timing, memory=memory, nbytes=nbytes, load=load, pattern=pattern,
                                                shift_float4=shift, passes=passes, grid=grid, block=BLOCK,
                                                delivered_GBps=nbytes * passes / timing.median / 1e9))
    return rows
