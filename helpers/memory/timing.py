"""Timing on the GPU with CUDA events, every repeat kept (measure-what-pinning-buys on).

Events are recorded in the GPU's stream around the work alone, so host-side Python
overhead between launches is not counted. The warm-up and the timed repeats hold the GPU's
measurement slot (:mod:`helpers.sharing.gpu_queue`), so learners sharing a GPU never time at once.
Nothing here prints (a learner who waits for the slot sees one line on stderr).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

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


def rounds(points: int, repeats: int) -> list[list[int]]:
    """The order in which :func:`time_gpu_rounds` visits ``points`` points in ``repeats`` rounds: every round
    visits each point once, and round r starts at point ``r * points // repeats`` (rotated), so no point is
    always timed first or last, and a slow drift of the machine reaches every point's median alike."""
    if points < 1 or repeats < 1:
        raise ValueError("points and repeats must be at least 1")
    return [[(r * points // repeats + i) % points for i in range(points)] for r in range(repeats)]


@dataclass(frozen=True)
class RoundTiming(Timing):
    """A :class:`Timing` taken in rounds: ``started`` gives, per repeat, the seconds from the first timed
    launch of the sweep to this repeat's launch (host clock), so a drift across the sweep can be seen."""

    started: tuple[float, ...] = ()


def time_gpu_rounds(works: Sequence[Callable[[], object]], *, repeats: int = 9, warmup: int = 1) -> list[RoundTiming]:
    """Time every work of a sweep ``repeats`` times, interleaved: round after round, each round timing every
    work once in the rotated order of :func:`rounds` (coalesce-and-align-accesses, model-zero-copy-reads).

    Repeats of one point taken back to back agree within 1 % on the lent H200 while the machine drifts by
    more over the tens of seconds a sweep lasts; in rounds, every point samples the same stretch of time.
    Each work is launched ``warmup`` times first. Each round holds the measurement slot (a second or so), not the
    whole sweep, so a learner sharing the GPU waits at most a round."""
    context()
    import pycuda.driver as drv

    order = rounds(len(works), repeats)
    start, end = drv.Event(), drv.Event()
    drv.Context.synchronize()
    seconds: list[list[float]] = [[] for _ in works]
    started: list[list[float]] = [[] for _ in works]
    with measurement_slot(what="time_gpu_rounds"):
        for work in works:
            for _ in range(warmup):
                work()
        drv.Context.synchronize()
    t0 = time.perf_counter()
    for visit in order:
        with measurement_slot(what="time_gpu_rounds"):
            for i in visit:
                started[i].append(time.perf_counter() - t0)
                start.record()
                works[i]()
                end.record()
                end.synchronize()
                seconds[i].append(end.time_since(start) / 1e3)
    return [RoundTiming(tuple(s), tuple(t)) for s, t in zip(seconds, started)]


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
