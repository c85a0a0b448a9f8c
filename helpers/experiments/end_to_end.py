"""End to end: explicit copies plus a kernel against zero-copy (overlap-copies-with-streams and
decide-when-zero-copy-wins).

Every variant computes ``c = a + b`` with the seed's ``vector_add_kernel`` and is checked.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import kernels
from ..memory.timing import time_gpu
from .buffers import BLOCK, device, mapped, seconds_row
from .result import Result, Row, run

MiB = 1 << 20
SIZES = tuple(2**k for k in range(10, 27))


def _add(a: Any, b: Any, c: Any, n: int, stream: Any = None) -> None:
    kernel = kernels.load_kernel("vector_add", "vector_add_kernel")
    kernel(a, b, c, np.int32(n), block=(BLOCK, 1, 1), grid=((n + BLOCK - 1) // BLOCK, 1), stream=stream)


def _inputs(n: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    a[:n] = np.arange(n, dtype=np.float32) % 1000
    b[:n] = 2.0
    c[:n] = -1.0  # poisoned: every element must be written


def _check(a: np.ndarray, b: np.ndarray, c: np.ndarray, n: int, what: str) -> None:
    if not np.array_equal(c[:n], a[:n] + b[:n]):
        raise AssertionError(f"{what}: c != a + b for n = {n}")


def end_to_end(sizes: Sequence[int] = SIZES, repeats: int = 10) -> Result:
    """Vector add from host data to host result: copies + kernel against zero-copy, n = 2^10..2^26
    (overlap-copies-with-streams)."""
    return run("end_to_end", {"sizes": list(sizes), "repeats": repeats}, _end_to_end)


def _end_to_end(sizes: list[int], repeats: int) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu

    largest = max(sizes)
    nbytes = largest * 4
    rows: list[Row] = []
    with mapped(nbytes) as a, mapped(nbytes) as b, mapped(nbytes) as c, \
            device(nbytes) as da, device(nbytes) as db, device(nbytes) as dc:
        pa, pb, pc = (gpu.device_pointer(x) for x in (a, b, c))
        for n in sizes:
            _inputs(n, a, b, c)

            def copy_then_add() -> None:
                drv.memcpy_htod(da, a[:n])
                drv.memcpy_htod(db, b[:n])
                _add(da, db, dc, n)
                drv.memcpy_dtoh(c[:n], dc)

            timing = time_gpu(copy_then_add, repeats=repeats)
            _check(a, b, c, n, "copy")
            rows.append(seconds_row(timing, method="copy", n=n, nbytes=12 * n))
            c[:n] = -1.0
            timing = time_gpu(lambda: _add(pa, pb, pc, n), repeats=repeats)
            _check(a, b, c, n, "zero_copy")
            rows.append(seconds_row(timing, method="zero_copy", n=n, nbytes=12 * n))
    return rows


def reuse(n: int = 1 << 24, uses: Sequence[int] = tuple(range(1, 9)), repeats: int = 5) -> Result:
    """The same inputs used by k kernels: copy once then k kernels, or k kernels over PCIe
    (decide-when-zero-copy-wins)."""
    return run("reuse", {"n": n, "uses": list(uses), "repeats": repeats}, _reuse)


def _reuse(n: int, uses: list[int], repeats: int) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu

    nbytes = n * 4
    rows: list[Row] = []
    with mapped(nbytes) as a, mapped(nbytes) as b, mapped(nbytes) as c, \
            device(nbytes) as da, device(nbytes) as db, device(nbytes) as dc:
        _inputs(n, a, b, c)
        pa, pb, pc = (gpu.device_pointer(x) for x in (a, b, c))
        for k in uses:
            def copy_once() -> None:
                drv.memcpy_htod(da, a)
                drv.memcpy_htod(db, b)
                for _ in range(k):
                    _add(da, db, dc, n)
                drv.memcpy_dtoh(c, dc)

            def zero_copy_k_times() -> None:
                for _ in range(k):
                    _add(pa, pb, pc, n)

            for method, work in (("copy", copy_once), ("zero_copy", zero_copy_k_times)):
                c[:] = -1.0
                timing = time_gpu(work, repeats=repeats)
                _check(a, b, c, n, method)
                rows.append(seconds_row(timing, method=method, uses=k, n=n))
    return rows


def out_of_core(n: int = 1 << 27, budgets: Sequence[int] = (64 * MiB, 256 * MiB), repeats: int = 3) -> Result:
    """A data set larger than a device-memory budget: in place through mapped memory, or in chunks
    (decide-when-zero-copy-wins).

    ``budgets`` are the device bytes the chunked versions may use for their buffers; the learner sets them.
    """
    return run("out_of_core", {"n": n, "budgets": list(budgets), "repeats": repeats}, _out_of_core)


def _out_of_core(n: int, budgets: list[int], repeats: int) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu

    nbytes = n * 4
    rows: list[Row] = []
    with mapped(nbytes) as a, mapped(nbytes) as b, mapped(nbytes) as c:
        _inputs(n, a, b, c)
        pa, pb, pc = (gpu.device_pointer(x) for x in (a, b, c))
        timing = time_gpu(lambda: _add(pa, pb, pc, n), repeats=repeats)
        _check(a, b, c, n, "zero_copy")
        rows.append(seconds_row(timing, method="zero_copy", budget_bytes=0, n=n, total_bytes=3 * nbytes))
        for budget in budgets:
            # sequential: one set of three chunk buffers; overlapped: two sets, two streams
            for method, sets in (("chunked", 1), ("chunked_overlap", 2)):
                chunk = max(BLOCK, budget // (12 * sets) // BLOCK * BLOCK)
                streams = [drv.Stream() for _ in range(sets)]
                with device(3 * chunk * 4 * sets, fill=None) as pool:
                    base = int(pool)

                    def buffers(s: int) -> tuple[int, int, int]:
                        start = base + s * 3 * chunk * 4
                        return start, start + chunk * 4, start + 2 * chunk * 4

                    def chunked() -> None:
                        for i, first in enumerate(range(0, n, chunk)):
                            last = min(n, first + chunk)
                            s = i % sets
                            da, db, dc = buffers(s)
                            stream = streams[s]
                            drv.memcpy_htod_async(da, a[first:last], stream)
                            drv.memcpy_htod_async(db, b[first:last], stream)
                            _add(np.intp(da), np.intp(db), np.intp(dc), last - first, stream=stream)
                            drv.memcpy_dtoh_async(c[first:last], dc, stream)
                        for stream in streams:
                            stream.synchronize()

                    c[:] = -1.0
                    timing = time_gpu(chunked, repeats=repeats)
                    _check(a, b, c, n, method)
                    rows.append(seconds_row(timing, method=method, budget_bytes=budget, n=n,
                                            total_bytes=3 * nbytes, chunk_elements=chunk))
    return rows
