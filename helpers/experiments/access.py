"""Access patterns: stride, misalignment, vector width (lesson 09).

Every kernel reads ``count`` useful floats (one per thread and iteration); the pattern decides how
many 32-byte sectors and 128-byte lines those floats are spread over, and so how many bytes move.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import kernels
from ..timing import time_gpu
from .buffers import BLOCK, NEVER, device, full_grid, mapped, seconds_row
from .result import Result, Row, run

STRIDES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
OFFSETS = tuple(range(33))
COUNT = 1 << 22  # useful floats read from mapped memory
DEVICE_COUNT = 1 << 28  # 1 GiB of useful floats: far beyond the 60 MB L2, and long beside a launch


def stride(strides: Sequence[int] = STRIDES, count: int = COUNT, device_count: int = DEVICE_COUNT,
           repeats: int = 5) -> Result:
    """Useful bandwidth when thread t reads float ``t * stride`` (lesson 09).

    ``count`` floats are read from mapped memory, ``device_count`` (fewer if the GPU's free memory
    is short) from device memory; each row gives the count it used."""
    params = {"kernel": "read_strided", "strides": list(strides), "count": count, "device_count": device_count,
              "repeats": repeats, "block": BLOCK}
    return run("stride", params, _stride)


def offset(offsets: Sequence[int] = OFFSETS, count: int = COUNT, device_count: int = DEVICE_COUNT,
           repeats: int = 5) -> Result:
    """Useful bandwidth when every thread's float is shifted by ``offset`` floats (lesson 09)."""
    params = {"kernel": "read_strided", "offsets": list(offsets), "count": count, "device_count": device_count,
              "repeats": repeats, "block": BLOCK}
    return run("offset", params, _offset)


def _span(patterns: list[tuple[int, int]], count: int) -> int:
    return max(o + count * s for s, o in patterns) * 4


def _fitting_count(patterns: list[tuple[int, int]], wanted: int) -> int:
    """The largest power-of-two count up to ``wanted`` whose span fits in half the free device memory."""
    import pycuda.driver as drv

    free, _ = drv.mem_get_info()
    count = wanted
    while count > 1 << 16 and _span(patterns, count) > free // 2:
        count //= 2
    return count


def _sweep(patterns: list[tuple[int, int]], count: int, device_count: int, repeats: int) -> list[Row]:
    from .. import gpu

    kernel = kernels.load_kernel("access_pattern", "read_strided")
    grid = full_grid()
    rows: list[Row] = []

    def measure(memory: str, pointer: object, n: int) -> None:
        for s, o in patterns:
            timing = time_gpu(lambda: kernel(pointer, np.uint64(n), np.int32(s), np.int32(o), NEVER, sink,
                                             block=(BLOCK, 1, 1), grid=(grid, 1)), repeats=repeats)
            rows.append(seconds_row(timing, memory=memory, stride=s, offset_floats=o, count=n, grid=grid,
                                    useful_GBps=n * 4 / timing.median / 1e9))

    with device(4) as sink:
        with mapped(_span(patterns, count)) as host:
            measure("zero_copy", gpu.device_pointer(host), count)
        device_count = _fitting_count(patterns, device_count)
        with device(_span(patterns, device_count)) as dev:
            measure("device", dev, device_count)
    return rows


def _stride(kernel: str, strides: list[int], count: int, device_count: int, repeats: int, block: int) -> list[Row]:
    return _sweep([(s, 0) for s in strides], count, device_count, repeats)


def _offset(kernel: str, offsets: list[int], count: int, device_count: int, repeats: int, block: int) -> list[Row]:
    return _sweep([(1, o) for o in offsets], count, device_count, repeats)


def vector_width(nbytes: int = 64 << 20, device_nbytes: int = 1 << 30, repeats: int = 5) -> Result:
    """The same contiguous bytes read as one float or one float4 per thread (lesson 09).

    Mapped memory reads ``nbytes``; device memory reads ``device_nbytes`` (1 GiB: a buffer the
    size of the L2 would measure the L2 and the launch, not HBM)."""
    return run("vector_width", {"nbytes": nbytes, "device_nbytes": device_nbytes, "repeats": repeats},
               _vector_width)


def _vector_width(nbytes: int, device_nbytes: int, repeats: int) -> list[Row]:
    from .. import gpu

    grid = full_grid()
    variants: list[tuple[str, int, Any]] = [
        ("read_strided", 4, kernels.load_kernel("access_pattern", "read_strided")),
        ("read_strided_float4", 16, kernels.load_kernel("access_pattern", "read_strided_float4")),
    ]
    rows: list[Row] = []
    with mapped(nbytes) as host, device(device_nbytes) as dev, device(4) as sink:
        for memory, pointer, size in (("zero_copy", gpu.device_pointer(host), nbytes), ("device", dev, device_nbytes)):
            for name, vector_bytes, kernel in variants:
                count = np.uint64(size // vector_bytes)
                timing = time_gpu(lambda: kernel(pointer, count, np.int32(1), np.int32(0), NEVER, sink,
                                                 block=(BLOCK, 1, 1), grid=(grid, 1)), repeats=repeats)
                rows.append(seconds_row(timing, memory=memory, kernel=name, vector_bytes=vector_bytes,
                                        nbytes=size, useful_GBps=size / timing.median / 1e9))
    return rows
