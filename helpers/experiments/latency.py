"""Dependent-load latency: a pointer chase over a random cycle at cache-line stride (lesson 06)."""

from __future__ import annotations

import numpy as np

from .. import kernels
from .buffers import device, mapped
from .result import Result, Row, run

LINE = 128  # bytes between two visited elements: one per cache line
MiB, GiB = 1 << 20, 1 << 30


def random_cycle(nbytes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A chase table over ``nbytes`` and the order it visits (lesson 06).

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


def latency(zero_copy_bytes: int = 64 * MiB, device_bytes: int = 1 * GiB, l2_bytes: int = 4 * MiB,
            steps: int = 4096, repeats: int = 7) -> Result:
    """Nanoseconds per dependent load: mapped host memory, device memory, an L2-resident buffer (lesson 06).

    For host and device memory every repeat continues the chase where the last stopped, so no line
    is visited twice and no cache helps. The L2 buffer is chased around its whole cycle once first,
    on purpose, so that it is in the L2.
    """
    params = {"zero_copy_bytes": zero_copy_bytes, "device_bytes": device_bytes, "l2_bytes": l2_bytes,
              "steps": steps, "repeats": repeats}
    return run("latency", params, _latency)


def _chase(memory: str, nbytes: int, steps: int, repeats: int) -> Row:
    import pycuda.driver as drv

    from .. import gpu

    kernel = kernels.load_kernel("latency", "pointer_chase")
    table, order = random_cycle(nbytes)
    lines = len(order)
    warm = memory == "l2"
    if warm:
        steps = lines  # one whole cycle per repeat; the warm-up cycle brings the buffer into L2
    elif steps * repeats >= lines:
        raise ValueError(f"{steps} steps x {repeats} repeats would revisit lines of a {lines}-line buffer; "
                         "use a larger buffer or fewer steps.")
    result = np.zeros(1, np.uint32)
    start_event, end_event = drv.Event(), drv.Event()

    def timed_chases(pointer: object, result_pointer: object) -> list[float]:
        seconds = []
        if warm:
            kernel(pointer, np.uint32(order[0]), np.uint64(steps), result_pointer, block=(1, 1, 1), grid=(1, 1))
        for r in range(repeats):
            first = 0 if warm else r * steps
            start_event.record()
            kernel(pointer, np.uint32(order[first]), np.uint64(steps), result_pointer, block=(1, 1, 1), grid=(1, 1))
            end_event.record()
            end_event.synchronize()
            seconds.append(end_event.time_since(start_event) / 1e3)
            drv.memcpy_dtoh(result, result_pointer)
            expected = order[(first + steps) % lines]
            if result[0] != expected:
                raise AssertionError(f"pointer chase ended at {result[0]}, expected {expected}")
        return seconds

    with device(4, fill=None) as result_pointer:
        if memory == "zero_copy":
            with mapped(nbytes, np.uint32, fill=None) as host:
                host[:] = table
                del table
                seconds = timed_chases(gpu.device_pointer(host), result_pointer)
        else:
            with device(nbytes, fill=None) as dev:
                drv.memcpy_htod(dev, table)
                del table
                seconds = timed_chases(dev, result_pointer)
    median = float(np.median(seconds))
    return {"memory": memory, "nbytes": nbytes, "steps": steps, "seconds": seconds,
            "load_ns": median / steps * 1e9}


def _latency(zero_copy_bytes: int, device_bytes: int, l2_bytes: int, steps: int, repeats: int) -> list[Row]:
    return [
        _chase("zero_copy", zero_copy_bytes, steps, repeats),
        _chase("device", device_bytes, steps * 4, repeats),
        _chase("l2", l2_bytes, steps, repeats),
    ]
