"""Access patterns: stride, misalignment, vector width (coalesce-and-align-accesses).

Every kernel reads ``count`` useful floats (one per thread and iteration); the pattern decides how
many 32-byte sectors and 128-byte lines those floats are spread over, and so how many bytes move.
The sweeps are quiet (helpers/experiments/quiet.py): every zero-copy point reads across 1 GiB of
mapped memory (6 to 20 ms a launch on the H200) and is timed 9 times; every repeat is kept. The stride,
offset and vector-width sweeps time their points in rounds (:func:`helpers.memory.timing.time_gpu_rounds`): each
round times every point once, so a drift of the machine during the sweep reaches every point alike;
``params["order"]`` says so, and each row's ``started_s`` gives when each repeat ran. The rounds are taken over
``ALLOCATIONS`` fresh buffers in turn, ``REPEATS`` on each (:func:`helpers.memory.timing.time_gpu_rounds_over`):
a request-bound point's rate moves with each fresh allocation (on the lent H200, stride 32 read 2.24-2.93 GB/s over
twelve allocations while offset 0 held within 0.5 %), so each row keeps every allocation's median
(``allocation_seconds``) and which allocation each repeat timed (``allocation``).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import kernels
from ..memory.timing import time_gpu_rounds_over
from .buffers import BLOCK, NEVER, device, full_grid, mapped, seconds_row
from .result import Result, Row, run

STRIDES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
OFFSETS = tuple(range(33))
NBYTES = 1 << 30  # mapped host memory every zero-copy point reads across: about 20 ms a launch at ~50 GB/s
DEVICE_COUNT = 1 << 28  # 1 GiB of useful floats: far beyond the 60 MiB L2, and long beside a launch
# Useful floats a stride point reads at least (0: none). 2^25 would make strides >= 32 take ~45 ms a launch
# instead of ~6 ms, but across up to 8 GiB of page-locked memory: too much for a learner's machine or a
# classroom of 16 sharing one host (helpers/sharing/pinned_budget.py), so the default keeps every point within 1 GiB.
MIN_COUNT = 0
ORDER = "rounds"  # how the repeats are taken: round after round over all points (time_gpu_rounds)
# Fresh buffers a sweep is timed on, and rounds on each: 3 x 3 = 9 repeats, the quiet-sweep rule
# (helpers/experiments/quiet.py: >= 9 repeats, >= 256 MiB). Repeats on one buffer agree within about 1 % at
# link-bound points, so three buffers of three repeats buy a truer median than one of nine, in the same GPU time.
ALLOCATIONS = 3
REPEATS = 3


def stride_count(stride: int, nbytes: int = NBYTES, min_count: int = 0) -> int:
    """Useful floats a zero-copy stride point reads: across ``nbytes`` of host memory, and at least
    ``min_count`` floats (then across more) (coalesce-and-align-accesses)."""
    return max(nbytes // (4 * stride), min_count)


def stride(strides: Sequence[int] = STRIDES, nbytes: int = NBYTES, device_count: int = DEVICE_COUNT,
           repeats: int = REPEATS, min_count: int = MIN_COUNT, allocations: int = ALLOCATIONS) -> Result:
    """Useful bandwidth when thread t reads float ``t * stride`` (coalesce-and-align-accesses).

    On mapped memory every stride reads across ``nbytes`` of host memory (:func:`stride_count`: stride
    s reads ``nbytes / 4 / s`` floats, or ``min_count`` across ``4 * s * min_count`` bytes when that is
    more): about 20 ms a launch up to stride 8, about 6 ms from stride 32 on (one PCIe request per
    float); on device memory ``device_count`` floats (fewer if the GPU's free memory
    is short). Each row gives the count it used, every repeat's time and each of the ``allocations`` fresh
    buffers' median (``repeats`` rounds on each)."""
    params = {"kernel": "read_strided", "strides": list(strides), "nbytes": nbytes, "device_count": device_count,
              "repeats": repeats, "allocations": allocations, "block": BLOCK, "min_count": min_count,
              "order": ORDER}
    return run("stride", params, _stride)


def offset(offsets: Sequence[int] = OFFSETS, nbytes: int = NBYTES, device_count: int = DEVICE_COUNT,
           repeats: int = REPEATS, allocations: int = ALLOCATIONS) -> Result:
    """Useful bandwidth when every thread's float is shifted by ``offset`` floats (coalesce-and-align-accesses).

    Every offset reads ``nbytes / 4`` useful floats of mapped memory (a buffer ``nbytes`` plus the
    largest offset long), on ``allocations`` fresh buffers in turn, ``repeats`` rounds each."""
    params = {"kernel": "read_strided", "offsets": list(offsets), "nbytes": nbytes, "device_count": device_count,
              "repeats": repeats, "allocations": allocations, "block": BLOCK, "order": ORDER}
    return run("offset", params, _offset)


def _span(patterns: list[tuple[int, int, int]]) -> int:
    """Bytes a list of (stride, offset, count) points reads across."""
    return max(o + n * s for s, o, n in patterns) * 4


def _fitting_count(patterns: list[tuple[int, int]], wanted: int) -> int:
    """The largest power-of-two count up to ``wanted`` whose span fits in half the free device memory."""
    import pycuda.driver as drv

    free, _ = drv.mem_get_info()
    count = wanted
    while count > 1 << 16 and _span([(s, o, count) for s, o in patterns]) > free // 2:
        count //= 2
    return count


def _sweep(patterns: list[tuple[int, int]], counts: list[int], device_count: int, repeats: int,
           allocations: int) -> list[Row]:
    """Zero-copy points (stride, offset) with their own useful counts, then the same on device memory; each over
    ``allocations`` fresh buffers, ``repeats`` rounds on each."""
    from ..memory import gpu

    kernel = kernels.load_kernel("access_pattern", "read_strided")
    grid = full_grid()
    rows: list[Row] = []

    def launch(pointer: object, s: int, o: int, n: int) -> Callable[[], object]:
        return lambda: kernel(pointer, np.uint64(n), np.int32(s), np.int32(o), NEVER, sink,
                              block=(BLOCK, 1, 1), grid=(grid, 1))

    def measure(memory: str, allocate: Callable[[], Any], pointer: Callable[[Any], object], ns: list[int]) -> None:
        timings = time_gpu_rounds_over(
            allocate, lambda buffer: [launch(pointer(buffer), s, o, n) for (s, o), n in zip(patterns, ns)],
            allocations=allocations, repeats=repeats)
        for ((s, o), n), timing in zip(zip(patterns, ns), timings):
            rows.append(seconds_row(timing, memory=memory, stride=s, offset_floats=o, count=n, grid=grid,
                                    useful_GBps=n * 4 / timing.median / 1e9))

    with device(4) as sink:
        span = _span([(s, o, n) for (s, o), n in zip(patterns, counts)])
        measure("zero_copy", lambda: mapped(span), gpu.device_pointer, counts)
        device_count = _fitting_count(patterns, device_count)
        device_span = _span([(s, o, device_count) for s, o in patterns])
        measure("device", lambda: device(device_span), lambda dev: dev, [device_count] * len(patterns))
    return rows


def _stride(kernel: str, strides: list[int], nbytes: int, device_count: int, repeats: int, block: int,
            min_count: int, order: str, allocations: int = 1) -> list[Row]:
    return _sweep([(s, 0) for s in strides], [stride_count(s, nbytes, min_count) for s in strides], device_count,
                  repeats, allocations)


def _offset(kernel: str, offsets: list[int], nbytes: int, device_count: int, repeats: int, block: int,
            order: str, allocations: int = 1) -> list[Row]:
    return _sweep([(1, o) for o in offsets], [nbytes // 4] * len(offsets), device_count, repeats, allocations)


def vector_width(nbytes: int = NBYTES, device_nbytes: int = 1 << 30, repeats: int = REPEATS,
                 allocations: int = ALLOCATIONS) -> Result:
    """The same contiguous bytes read as one float or one float4 per thread (coalesce-and-align-accesses).

    Mapped memory reads ``nbytes`` (1 GiB, about 20 ms a launch); device memory reads ``device_nbytes`` (1 GiB: a buffer the
    size of the L2 would measure the L2 and the launch, not HBM); both on ``allocations`` fresh buffers in turn."""
    return run("vector_width", {"nbytes": nbytes, "device_nbytes": device_nbytes, "repeats": repeats,
                                "allocations": allocations, "order": ORDER}, _vector_width)


def _vector_width(nbytes: int, device_nbytes: int, repeats: int, order: str, allocations: int = 1) -> list[Row]:
    from ..memory import gpu

    grid = full_grid()
    variants: list[tuple[str, int, Any]] = [
        ("read_strided", 4, kernels.load_kernel("access_pattern", "read_strided")),
        ("read_strided_float4", 16, kernels.load_kernel("access_pattern", "read_strided_float4")),
    ]
    points = [(memory, size, name, vector_bytes, kernel) for memory, size in (("zero_copy", nbytes),
                                                                             ("device", device_nbytes))
              for name, vector_bytes, kernel in variants]

    @contextmanager
    def buffers() -> Iterator[tuple[object, object]]:
        with mapped(nbytes) as host, device(device_nbytes) as dev:
            yield gpu.device_pointer(host), dev

    with device(4) as sink:
        def launch(pointer: object, count: int, kernel: Any) -> Callable[[], object]:
            return lambda: kernel(pointer, np.uint64(count), np.int32(1), np.int32(0), NEVER, sink,
                                  block=(BLOCK, 1, 1), grid=(grid, 1))

        def works(pointers: tuple[object, object]) -> list[Callable[[], object]]:
            on = {"zero_copy": pointers[0], "device": pointers[1]}
            return [launch(on[memory], size // vb, k) for memory, size, _, vb, k in points]

        timings = time_gpu_rounds_over(buffers, works, allocations=allocations, repeats=repeats)
    return [seconds_row(timing, memory=memory, kernel=name, vector_bytes=vector_bytes, nbytes=size,
                        useful_GBps=size / timing.median / 1e9)
            for (memory, size, name, vector_bytes, _), timing in zip(points, timings)]
