"""Timing on the GPU with CUDA events, every repeat kept (measure-what-pinning-buys on).

Events are recorded in the GPU's stream around the work alone, so host-side Python
overhead between launches is not counted. The warm-up and the timed repeats hold the GPU's
measurement slot (:mod:`helpers.sharing.gpu_queue`), so learners sharing a GPU never time at once.
Nothing here prints (a learner who waits for the slot sees one line on stderr).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..sharing.gpu_queue import measurement_slot
from .gpu import context


@dataclass(frozen=True)
class Timing:
    """Seconds of every timed repeat, and their median."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return float(np.median(self.seconds))


def time_gpu(work: Callable[[], object], *, repeats: int = 10, warmup: int = 2) -> Timing:
    """Time ``work`` (which enqueues GPU work on the default stream) with CUDA events."""
    context()
    import pycuda.driver as drv

    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    start, end = drv.Event(), drv.Event()
    drv.Context.synchronize()  # earlier, untimed work finishes before the slot is taken
    seconds = []
    with measurement_slot(what="time_gpu"):
        for _ in range(warmup):
            work()
        drv.Context.synchronize()
        for _ in range(repeats):
            start.record()
            work()
            end.record()
            end.synchronize()
            seconds.append(end.time_since(start) / 1e3)
    return Timing(tuple(seconds))


def time_host(work: Callable[[], object], *, repeats: int = 5, warmup: int = 1) -> Timing:
    """Time host-only work (a CPU reading memory, use-write-combined-and-registered-memory) with a monotonic clock."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for _ in range(warmup):
        work()
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - t0)
    return Timing(tuple(seconds))
