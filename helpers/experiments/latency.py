"""Dependent-load latency: a pointer chase over a random path at cache-line stride (lessons 07 and 08)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import kernels
from ..gpu_queue import measurement_slot
from .buffers import BLOCK, NEVER, device, full_grid, mapped
from .result import Result, Row, run

LINE = 128  # bytes between two visited elements: one per cache line
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
EVICT_BYTES = 1 * GiB  # a CPU pass over this much ordinary memory pushes a table out of the CPU's caches
FOOTPRINTS_DEVICE = tuple(MiB * 4**k for k in range(8))  # 1 MiB .. 16 GiB
FOOTPRINTS_ZERO_COPY = (64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB)


def random_cycle(nbytes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A chase table over ``nbytes`` and the order it visits (lesson 07).

    The table holds uint32 element indices; only the first element of each 128-byte line
    is used. ``table[order[i]] == order[i + 1]``, and the last entry leads back to the first.
    """
    lines = nbytes // LINE
    if lines < 2:
        raise ValueError("A chase needs at least two 128-byte lines.")
    per_line = LINE // 4
    order = np.random.default_rng(seed).permutation(lines).astype(np.uint32) * np.uint32(per_line)
    table = np.zeros(nbytes // 4, np.uint32)
    table[order] = np.roll(order, -1)
    return table, order


def random_path(nbytes: int, visits: int, seed: int = 0) -> np.ndarray:
    """``visits`` distinct random lines of an ``nbytes`` buffer, as uint32 element indices (lesson 07).

    For buffers far larger than the chase: only these lines are written, so a path through
    16 GiB costs a few megabytes to build. ``path[i]`` leads to ``path[i + 1]`` and the last back
    to the first.
    """
    lines = nbytes // LINE
    if nbytes // 4 > 2**32:
        raise ValueError("The chase stores 32-bit element indices: at most 16 GiB.")
    if visits > lines:
        raise ValueError(f"{visits} distinct lines do not fit in a {lines}-line buffer.")
    picked = np.random.default_rng(seed).choice(lines, size=visits, replace=False)
    return picked.astype(np.uint32) * np.uint32(LINE // 4)


def latency(zero_copy_bytes: int = 64 * MiB, device_bytes: int = 1 * GiB, l2_bytes: int = 4 * MiB,
            steps: int = 4096, repeats: int = 7) -> Result:
    """Nanoseconds per dependent load: mapped host memory, device memory, an L2-resident buffer (lesson 07).

    For host and device memory every repeat continues the chase where the last stopped, so no line
    is visited twice and no GPU cache helps. The zero-copy table is chased twice: once right after
    the CPU wrote it (``cpu_cache="just_written"``: its lines may still sit in the CPU's caches) and
    once after the CPU has streamed through 1 GiB of other memory (``"evicted"``). The L2 buffer is
    chased around its whole cycle once first, on purpose, so that it is in the L2.
    """
    params = {"zero_copy_bytes": zero_copy_bytes, "device_bytes": device_bytes, "l2_bytes": l2_bytes,
              "steps": steps, "repeats": repeats}
    return run("latency", params, _latency)


def evict_cpu_caches(nbytes: int = EVICT_BYTES) -> None:
    """Stream the CPU through ``nbytes`` of fresh memory, so earlier data leave its caches (lesson 07)."""
    scratch = np.empty(nbytes // 8, np.int64)
    scratch.fill(1)
    del scratch


class _Chaser:
    """Runs ``pointer_chase`` and checks where each chase ended."""

    def __init__(self) -> None:
        import pycuda.driver as drv

        self.drv = drv
        self.kernel = kernels.load_kernel("latency", "pointer_chase")
        self.result = np.zeros(1, np.uint32)

    def timed(self, pointer: Any, result_pointer: Any, path: np.ndarray, first: int, steps: int,
              stream: Any = None, when_done: Callable[[], None] | None = None) -> float:
        """Seconds for ``steps`` loads starting at ``path[first]``; asserts the chase ended where expected.

        ``when_done`` runs as soon as the chase has ended, before anything else is queued.
        """
        start, end = self.drv.Event(), self.drv.Event()
        with measurement_slot(what="pointer_chase"):
            return self._timed(start, end, pointer, result_pointer, path, first, steps, stream, when_done)

    def _timed(self, start: Any, end: Any, pointer: Any, result_pointer: Any, path: np.ndarray, first: int,
               steps: int, stream: Any, when_done: Callable[[], None] | None) -> float:
        start.record(stream)
        self.kernel(pointer, np.uint32(path[first % len(path)]), np.uint64(steps), result_pointer,
                    block=(1, 1, 1), grid=(1, 1), stream=stream)
        end.record(stream)
        end.synchronize()
        if when_done is not None:
            when_done()
        self.drv.memcpy_dtoh(self.result, result_pointer)
        expected = path[(first + steps) % len(path)]
        if self.result[0] != expected:
            raise AssertionError(f"pointer chase ended at {self.result[0]}, expected {expected}")
        return end.time_since(start) / 1e3


def _chase_rows(memory: str, nbytes: int, steps: int, repeats: int) -> list[Row]:
    import pycuda.driver as drv

    from .. import gpu

    chaser = _Chaser()
    table, order = random_cycle(nbytes)
    lines = len(order)
    warm = memory == "l2"
    if warm:
        steps = lines  # one whole cycle per repeat; the warm-up cycle brings the buffer into L2
    elif steps * repeats * (2 if memory == "zero_copy" else 1) >= lines:
        raise ValueError(f"{steps} steps x {repeats} repeats would revisit lines of a {lines}-line buffer; "
                         "use a larger buffer or fewer steps.")

    def row(seconds: list[float], **fields: Any) -> Row:
        return {"memory": memory, **fields, "nbytes": nbytes, "steps": steps, "seconds": seconds,
                "load_ns": float(np.median(seconds)) / steps * 1e9}

    with device(4, fill=None) as result_pointer:
        if memory == "zero_copy":
            with mapped(nbytes, np.uint32, fill=None) as host:
                host[:] = table
                del table
                pointer = gpu.device_pointer(host)
                with measurement_slot(what="latency"):
                    hot = [chaser.timed(pointer, result_pointer, order, r * steps, steps) for r in range(repeats)]
                evict_cpu_caches()
                with measurement_slot(what="latency"):
                    cold = [chaser.timed(pointer, result_pointer, order, (repeats + r) * steps, steps)
                            for r in range(repeats)]
            return [row(cold, cpu_cache="evicted"), row(hot, cpu_cache="just_written")]
        with device(nbytes, fill=None) as dev:
            drv.memcpy_htod(dev, table)
            del table
            with measurement_slot(what="latency"):
                if warm:
                    chaser.timed(dev, result_pointer, order, 0, steps)
                seconds = [chaser.timed(dev, result_pointer, order, 0 if warm else r * steps, steps)
                           for r in range(repeats)]
    return [row(seconds)]


def _latency(zero_copy_bytes: int, device_bytes: int, l2_bytes: int, steps: int, repeats: int) -> list[Row]:
    return [
        *_chase_rows("zero_copy", zero_copy_bytes, steps, repeats),
        *_chase_rows("device", device_bytes, steps * 4, repeats),
        *_chase_rows("l2", l2_bytes, steps, repeats),
    ]


# --------------------------------------------------------------------------- footprint
def latency_footprint(device_sizes: Sequence[int] = FOOTPRINTS_DEVICE,
                      zero_copy_sizes: Sequence[int] = FOOTPRINTS_ZERO_COPY,
                      steps: int = 4096, repeats: int = 5, warm_lines: int = 1 << 18) -> Result:
    """Latency of one dependent load against the size of the buffer chased (lesson 07).

    A buffer of at most ``warm_lines`` lines is chased around its whole random cycle once before
    timing (``warm=True``): the steady state of a program that keeps using that much memory, so a
    buffer the L2 (or an SM's L1) can hold shows that cache. A larger buffer is chased along a
    random path that never revisits a line (``warm=False``): every load misses the caches, and the
    sweep then shows what the page-translation caches (TLBs) add as the footprint spans more pages.
    """
    params = {"device_sizes": list(device_sizes), "zero_copy_sizes": list(zero_copy_sizes), "steps": steps,
              "repeats": repeats, "warm_lines": warm_lines}
    return run("latency_footprint", params, _latency_footprint)


def _footprint_row(chaser: _Chaser, memory: str, pointer: Any, result_pointer: Any, nbytes: int,
                   path: np.ndarray, warm: bool, steps: int, repeats: int) -> Row:
    with measurement_slot(what="latency_footprint"):
        if warm:
            steps = min(steps, len(path))
            chaser.timed(pointer, result_pointer, path, 0, len(path))  # one whole cycle: the caches fill
        seconds = [chaser.timed(pointer, result_pointer, path, r * steps, steps) for r in range(repeats)]
    return {"memory": memory, "nbytes": nbytes, "warm": warm, "steps": steps, "seconds": seconds,
            "load_ns": float(np.median(seconds)) / steps * 1e9}


def _latency_footprint(device_sizes: list[int], zero_copy_sizes: list[int], steps: int, repeats: int,
                       warm_lines: int) -> list[Row]:
    import pycuda.driver as drv

    from .. import gpu

    chaser = _Chaser()
    scatter = kernels.load_kernel("latency", "scatter_u32")
    rows: list[Row] = []
    free, _ = drv.mem_get_info()
    with device(4, fill=None) as result_pointer:
        for nbytes in device_sizes:
            if nbytes > free // 2:
                continue  # this GPU has not that much memory to spare: the row is left out
            warm = nbytes // LINE <= warm_lines
            path = random_cycle(nbytes)[1] if warm else random_path(nbytes, steps * repeats + 1)
            with device(nbytes, fill=None) as dev:
                nxt = np.roll(path, -1)
                with device(path.nbytes, fill=None) as where, device(nxt.nbytes, fill=None) as value:
                    drv.memcpy_htod(where, path)
                    drv.memcpy_htod(value, nxt)
                    scatter(dev, where, value, np.uint64(len(path)), block=(BLOCK, 1, 1),
                            grid=(min(full_grid(), max(1, len(path) // BLOCK)), 1))
                    drv.Context.synchronize()
                rows.append(_footprint_row(chaser, "device", dev, result_pointer, nbytes, path, warm, steps, repeats))
        for nbytes in zero_copy_sizes:
            warm = nbytes // LINE <= warm_lines
            path = random_cycle(nbytes)[1] if warm else random_path(nbytes, steps * repeats + 1)
            with mapped(nbytes, np.uint32, fill=None) as host:
                host[path] = np.roll(path, -1)
                evict_cpu_caches()
                rows.append(_footprint_row(chaser, "zero_copy", gpu.device_pointer(host), result_pointer, nbytes,
                                           path, warm, steps, repeats))
    return rows


# --------------------------------------------------------------------------- loaded latency
def loaded_latency(nbytes: int = 64 * MiB, load_bytes: int = 1 * GiB, steps: int = 1024, repeats: int = 5,
                   load_threads: Sequence[int] = (4096, 0), load_launches: int = 8) -> Result:
    """The zero-copy round trip while a read kernel keeps the link busy (lesson 08).

    A streaming zero-copy read (``read_float4`` over ``load_bytes``, launched ``load_launches``
    times back to back) runs on one stream while the pointer chase runs on another; the chase's
    time per load is the latency a load sees under that traffic, and the row is kept only if the
    reads were still running when the chase ended. ``load_threads`` 0 stands for half the GPU's
    resident threads (enough to fill the link and leave room for the chase); 4096 threads x 16
    bytes is the example lesson 08 checks with Little's law. The first row (``load_threads=None``)
    is the same chase with no traffic.
    """
    params = {"nbytes": nbytes, "load_bytes": load_bytes, "steps": steps, "repeats": repeats,
              "load_threads": list(load_threads), "load_launches": load_launches}
    return run("loaded_latency", params, _loaded_latency)


def _loaded_latency(nbytes: int, load_bytes: int, steps: int, repeats: int, load_threads: list[int],
                    load_launches: int) -> list[Row]:
    import pycuda.driver as drv

    from .. import gpu

    chaser = _Chaser()
    reader = kernels.load_kernel("bandwidth", "read_float4")
    path = random_path(nbytes, steps * repeats * (len(load_threads) + 1) + 1)
    rows: list[Row] = []
    chase_stream, load_stream = drv.Stream(), drv.Stream()
    with mapped(nbytes, np.uint32, fill=None) as table, mapped(load_bytes) as load, device(4) as sink, \
            device(4, fill=None) as result_pointer:
        table[path] = np.roll(path, -1)
        evict_cpu_caches()
        table_pointer, load_pointer = gpu.device_pointer(table), gpu.device_pointer(load)
        first = 0
        alone = []
        with measurement_slot(what="loaded_latency"):
            for _ in range(repeats):
                alone.append(chaser.timed(table_pointer, result_pointer, path, first, steps, chase_stream))
                first += steps
        rows.append({"load_threads": None, "steps": steps, "seconds": alone,
                     "load_ns": float(np.median(alone)) / steps * 1e9})
        half = full_grid() * BLOCK // 2
        for threads in load_threads:
            threads = threads or half
            block = min(BLOCK, threads)
            chase_seconds, load_rates = [], []
            with measurement_slot(what="loaded_latency"):
                for _ in range(repeats):
                    load_start, load_end = drv.Event(), drv.Event()
                    load_start.record(load_stream)
                    for _ in range(load_launches):
                        reader(load_pointer, np.uint64(load_bytes // 16), NEVER, sink, block=(block, 1, 1),
                               grid=(threads // block, 1), stream=load_stream)
                    load_end.record(load_stream)
                    loading: list[bool] = []
                    chase_seconds.append(chaser.timed(table_pointer, result_pointer, path, first, steps, chase_stream,
                                                      when_done=lambda: loading.append(not load_end.query())))
                    first += steps
                    load_end.synchronize()
                    if not loading[0]:
                        raise AssertionError(f"The reads ({load_launches} x {load_bytes} bytes) ended before the chase of "
                                             f"{steps} loads: raise load_launches so the chase runs under load throughout.")
                    load_rates.append(load_bytes * load_launches / (load_end.time_since(load_start) / 1e3) / 1e9)
            rows.append({"load_threads": threads, "load_kernel": "read_float4", "load_GBps": float(np.median(load_rates)),
                         "bytes_in_flight": threads * 16, "steps": steps, "seconds": chase_seconds,
                         "load_ns": float(np.median(chase_seconds)) / steps * 1e9})
    return rows
