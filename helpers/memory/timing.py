"""Timing on the GPU with CUDA events, every repeat kept (measure-what-pinning-buys on).

Events are recorded in the GPU's stream around the work alone, so host-side Python
overhead between launches is not counted. The warm-up and the timed repeats hold the GPU's
measurement slot (:mod:`helpers.sharing.gpu_queue`), so learners sharing a GPU never time at once.
Nothing here prints (a learner who waits for the slot sees one line on stderr).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, ContextManager, Sequence, TypeVar

import numpy as np

from ..sharing.gpu_queue import measurement_slot
from .gpu import context

T = TypeVar("T")


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
    always timed first or last, and a slow drift of the machine reaches every point's median alike. A sweep over
    several allocations (:func:`time_gpu_rounds_over`) takes these rounds in turns, ``repeats`` per allocation."""
    if points < 1 or repeats < 1:
        raise ValueError("points and repeats must be at least 1")
    return [[(r * points // repeats + i) % points for i in range(points)] for r in range(repeats)]


@dataclass(frozen=True)
class RoundTiming(Timing):
    """A :class:`Timing` taken in rounds: ``started`` gives, per repeat, the seconds from the first timed
    launch of the sweep to this repeat's launch (host clock), so a drift across the sweep can be seen."""

    started: tuple[float, ...] = ()


def time_gpu_rounds(works: Sequence[Callable[[], object]], *, repeats: int = 9, warmup: int = 1,
                    order: Sequence[Sequence[int]] | None = None, t0: float | None = None) -> list[RoundTiming]:
    """Time every work of a sweep ``repeats`` times, interleaved: round after round, each round timing every
    work once in the rotated order of :func:`rounds` (coalesce-and-align-accesses, model-zero-copy-reads).

    Repeats of one point taken back to back agree within 1 % on the lent H200 while the machine drifts by
    more over the tens of seconds a sweep lasts; in rounds, every point samples the same stretch of time.
    Each work is launched ``warmup`` times first. Each round holds the measurement slot (a second or so), not the
    whole sweep, so a learner sharing the GPU waits at most a round. ``order`` (default :func:`rounds`) gives the
    rounds to take; ``t0`` the host clock that ``started`` counts from (default: the first timed launch)."""
    context()
    import pycuda.driver as drv

    order = rounds(len(works), repeats) if order is None else [list(visit) for visit in order]
    start, end = drv.Event(), drv.Event()
    drv.Context.synchronize()
    seconds: list[list[float]] = [[] for _ in works]
    started: list[list[float]] = [[] for _ in works]
    with measurement_slot(what="time_gpu_rounds"):
        for work in works:
            for _ in range(warmup):
                work()
        drv.Context.synchronize()
    t0 = time.perf_counter() if t0 is None else t0
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


@dataclass(frozen=True)
class AllocationTiming(RoundTiming):
    """A :class:`RoundTiming` taken over several fresh allocations (:func:`time_gpu_rounds_over`): ``allocation``
    gives, per repeat, which allocation it timed (0, 1, ...)."""

    allocation: tuple[int, ...] = ()

    def allocation_medians(self) -> tuple[float, ...]:
        """Each allocation's median seconds, in allocation order."""
        labels = np.asarray(self.allocation)
        seconds = np.asarray(self.seconds)
        return tuple(float(np.median(seconds[labels == a])) for a in sorted(set(self.allocation)))


def time_gpu_rounds_over(allocate: Callable[[], ContextManager[T]],
                         make_works: Callable[[T], Sequence[Callable[[], object]]], *, allocations: int = 3,
                         repeats: int = 3, warmup: int = 1) -> list[AllocationTiming]:
    """Time a sweep over ``allocations`` fresh buffers in turn, ``repeats`` rounds each (coalesce-and-align-accesses,
    model-zero-copy-reads).

    ``allocate()`` gives a context manager that makes and frees one buffer; ``make_works(buffer)`` the sweep's works
    on it. The ``allocations * repeats`` rounds are those of :func:`rounds` (rotated), taken ``repeats`` at a time on
    each buffer, so every point is timed on every buffer and no point is always first. On the lent H200 a
    request-bound point's rate moves with each fresh allocation by more than its repeats on one buffer do, while a
    link-bound point's does not: a sweep on one buffer shows that buffer, several show the machine."""
    if allocations < 1:
        raise ValueError("allocations must be at least 1")
    seconds: list[list[float]] = []
    started: list[list[float]] = []
    labels: list[list[int]] = []
    t0 = time.perf_counter()
    schedule: list[list[int]] | None = None
    for a in range(allocations):
        with allocate() as buffer:
            works = make_works(buffer)
            if schedule is None:
                schedule = rounds(len(works), allocations * repeats)
                seconds, started, labels = ([[] for _ in works] for _ in range(3))
            timings = time_gpu_rounds(works, repeats=repeats, warmup=warmup, t0=t0,
                                      order=schedule[a * repeats:(a + 1) * repeats])
        for i, timing in enumerate(timings):
            seconds[i] += timing.seconds
            started[i] += timing.started
            labels[i] += [a] * len(timing.seconds)
    return [AllocationTiming(tuple(s), tuple(t), tuple(lab)) for s, t, lab in zip(seconds, started, labels)]


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
