"""Dependent-load latency: a pointer chase over a random path at cache-line stride (measure-latency and
keep-enough-bytes-in-flight)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import kernels
from ..sharing.gpu_queue import measurement_slot
from .buffers import BLOCK, NEVER, device, full_grid, mapped
from .result import Result, Row, run

LINE = 128  # bytes between two visited elements: one per cache line
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
EVICT_BYTES = 1 * GiB  # a CPU pass over this much ordinary memory pushes a table out of the CPU's caches
FOOTPRINTS_DEVICE = (64 * KiB, *(MiB * 4**k for k in range(8)))  # 64 KiB, 1 MiB .. 16 GiB
FOOTPRINTS_ZERO_COPY = (64 * KiB, 1 * MiB, 64 * MiB, 256 * MiB, 1 * GiB)
TARGET_SECONDS = 0.025  # a timed chase runs at least about this long (quiet measurements: >= 20 ms a repeat)


def random_cycle(nbytes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A chase table over ``nbytes`` and the order it visits (measure-latency).

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
    """``visits`` distinct random lines of an ``nbytes`` buffer, as uint32 element indices (measure-latency).

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
            zero_copy_steps: int = 24576, device_steps: int = 65536, l2_steps: int = 163840,
            repeats: int = 9) -> Result:
    """Nanoseconds per dependent load: mapped host memory, device memory, an L2-resident buffer (measure-latency).

    Each repeat is one launch of ``pointer_chase_timed``, timed inside the kernel (the GPU's
    global timer around the timed loads alone), long enough (about 20-30 ms on an H200) that
    its spread is small. For host and device memory every repeat continues the chase where the
    last stopped, so no line is visited twice and no GPU cache helps (no warm-up). The zero-copy
    table is chased twice: once right after the CPU wrote it (``cpu_cache="just_written"``: its
    lines may still sit in the CPU's caches) and once after the CPU has streamed through 1 GiB of
    other memory (``"evicted"``). The L2 buffer is warmed on purpose, inside each launch: the
    same thread chases its whole cycle once untimed, then the timed loads go round it again.
    """
    params = {"zero_copy_bytes": zero_copy_bytes, "device_bytes": device_bytes, "l2_bytes": l2_bytes,
              "zero_copy_steps": zero_copy_steps, "device_steps": device_steps, "l2_steps": l2_steps,
              "repeats": repeats}
    return run("latency", params, _latency)


def evict_cpu_caches(nbytes: int = EVICT_BYTES) -> None:
    """Stream the CPU through ``nbytes`` of fresh memory, so earlier data leave its caches (measure-latency)."""
    scratch = np.empty(nbytes // 8, np.int64)
    scratch.fill(1)
    del scratch


@dataclass(frozen=True)
class Chase:
    """One launch of ``pointer_chase_timed``: seconds of the timed loads (GPU timer), of the whole launch
    (CUDA events), and the SM that ran it."""

    seconds: float
    launch_seconds: float
    sm: int


class _Chaser:
    """Runs ``pointer_chase_timed`` and checks where each chase ended."""

    def __init__(self) -> None:
        import pycuda.driver as drv

        self.drv = drv
        self.kernel = kernels.load_kernel("latency", "pointer_chase_timed")
        self.out = np.zeros(3, np.uint64)
        self.out_pointer = drv.mem_alloc(self.out.nbytes)

    def _launch(self, pointer: Any, path: np.ndarray, first: int, steps: int, warm_steps: int, stream: Any,
                when_done: Callable[[], None] | None) -> tuple[float, float]:
        """One chase: the seconds the GPU's timer gave the timed loads, and the launch's (CUDA events)."""
        start, end = self.drv.Event(), self.drv.Event()
        start.record(stream)
        self.kernel(pointer, np.uint32(path[first % len(path)]), np.uint64(warm_steps), np.uint64(steps),
                    self.out_pointer, block=(1, 1, 1), grid=(1, 1), stream=stream)
        end.record(stream)
        end.synchronize()
        if when_done is not None:
            when_done()
        self.drv.memcpy_dtoh(self.out, self.out_pointer)
        expected = path[(first + warm_steps + steps) % len(path)]
        if self.out[0] != expected:
            raise AssertionError(f"pointer chase ended at {self.out[0]}, expected {expected}")
        return float(self.out[1]) / 1e9, end.time_since(start) / 1e3

    def chase(self, pointer: Any, path: np.ndarray, first: int, steps: int, warm_steps: int = 0,
              stream: Any = None, when_done: Callable[[], None] | None = None) -> Chase:
        """``warm_steps`` untimed then ``steps`` timed loads from ``path[first]``; checks where it ended.

        ``when_done`` runs as soon as the chase has ended, before anything else is queued. The caller
        holds the measurement slot.
        """
        timed, launch = self._launch(pointer, path, first, steps, warm_steps, stream, when_done)
        # The GPU's timer checked against CUDA events: never longer than the launch. It may be much shorter:
        # events also count the time the GPU gave other processes' kernels (learners sharing a GPU run untimed
        # kernels while one measures: 4.2 ms of a 34.5 ms launch in a 32-learner classroom on the H200), which
        # the timer inside the kernel does not; each row keeps both (seconds, launch_seconds).
        if not 0 < timed <= launch * 1.01 + 1e-5:
            raise AssertionError(f"the GPU's global timer gave {timed * 1e3:.3f} ms for loads inside a launch of "
                                 f"{launch * 1e3:.3f} ms (CUDA events): the timer cannot be used on this GPU.")
        return Chase(timed, launch, int(self.out[2]))

    def free(self) -> None:
        self.out_pointer.free()


def _chase_row(chases: list[Chase], **fields: Any) -> Row:
    """A row of timed chases: every repeat's seconds, the median ns per load and the SMs that ran them."""
    seconds = [c.seconds for c in chases]
    return {**fields, "seconds": seconds, "launch_seconds": [c.launch_seconds for c in chases],
            "sm": [c.sm for c in chases], "load_ns": float(np.median(seconds)) / fields["steps"] * 1e9}


def load_ns_spread(row: Row) -> tuple[float, float, float]:
    """(lowest, median, highest) ns per load over a row's repeats (measure-latency and keep-enough-bytes-in-flight)."""
    ns = np.asarray(row["seconds"], float) / row["steps"] * 1e9
    return float(ns.min()), float(np.median(ns)), float(ns.max())


@contextmanager
def device_chase_table(nbytes: int, path: np.ndarray) -> Iterator[Any]:
    """Device memory of ``nbytes`` holding the chase along ``path`` (only the visited entries written)."""
    import pycuda.driver as drv

    scatter = kernels.load_kernel("latency", "scatter_u32")
    with device(nbytes, fill=None) as dev:
        nxt = np.roll(path, -1)
        with device(path.nbytes, fill=None) as where, device(nxt.nbytes, fill=None) as value:
            drv.memcpy_htod(where, path)
            drv.memcpy_htod(value, nxt)
            scatter(dev, where, value, np.uint64(len(path)), block=(BLOCK, 1, 1),
                    grid=(min(full_grid(), max(1, len(path) // BLOCK)), 1))
            drv.Context.synchronize()
        yield dev


def _need_lines(nbytes: int, visits: int, what: str) -> None:
    lines = nbytes // LINE
    if visits > lines:
        raise ValueError(f"{what}: {visits:,} loads would revisit lines of a {lines:,}-line buffer of {nbytes:,} "
                         "bytes; use a larger buffer, fewer steps or fewer repeats.")


def _latency(zero_copy_bytes: int, device_bytes: int, l2_bytes: int, zero_copy_steps: int, device_steps: int,
             l2_steps: int, repeats: int) -> list[Row]:
    from ..memory import gpu

    _need_lines(zero_copy_bytes, 2 * repeats * zero_copy_steps + 1, "zero-copy chase")
    _need_lines(device_bytes, repeats * device_steps + 1, "device-memory chase")
    chaser = _Chaser()
    rows: list[Row] = []
    try:
        path = random_path(zero_copy_bytes, 2 * repeats * zero_copy_steps + 1)
        steps = zero_copy_steps
        with mapped(zero_copy_bytes, np.uint32, fill=None) as host:
            host[path] = np.roll(path, -1)
            pointer = gpu.device_pointer(host)
            with measurement_slot(what="latency"):
                hot = [chaser.chase(pointer, path, r * steps, steps) for r in range(repeats)]
            evict_cpu_caches()
            with measurement_slot(what="latency"):
                cold = [chaser.chase(pointer, path, (repeats + r) * steps, steps) for r in range(repeats)]
        for cpu_cache, chases in (("evicted", cold), ("just_written", hot)):
            rows.append(_chase_row(chases, memory="zero_copy", cpu_cache=cpu_cache, nbytes=zero_copy_bytes,
                                   steps=steps, warm_steps=0))
        path = random_path(device_bytes, repeats * device_steps + 1)
        with device_chase_table(device_bytes, path) as dev, measurement_slot(what="latency"):
            chases = [chaser.chase(dev, path, r * device_steps, device_steps) for r in range(repeats)]
        rows.append(_chase_row(chases, memory="device", nbytes=device_bytes, steps=device_steps, warm_steps=0))
        cycle = random_path(l2_bytes, l2_bytes // LINE)  # every line of the buffer, in a random cycle
        with device_chase_table(l2_bytes, cycle) as dev, measurement_slot(what="latency"):
            # one whole untimed cycle first, by the same thread in the same launch: the buffer is in the L2
            chases = [chaser.chase(dev, cycle, 0, l2_steps, warm_steps=len(cycle)) for _ in range(repeats)]
        rows.append(_chase_row(chases, memory="l2", nbytes=l2_bytes, steps=l2_steps, warm_steps=len(cycle)))
    finally:
        chaser.free()
    return rows


# --------------------------------------------------------------------------- footprint
def latency_footprint(device_sizes: Sequence[int] = FOOTPRINTS_DEVICE,
                      zero_copy_sizes: Sequence[int] = FOOTPRINTS_ZERO_COPY,
                      device_steps: int = 65536, zero_copy_steps: int = 24576, repeats: int = 9,
                      warm_lines: int = 1 << 18, target_seconds: float = TARGET_SECONDS) -> Result:
    """Latency of one dependent load against the size of the buffer chased (measure-latency).

    A buffer of at most ``warm_lines`` lines is **warm** (``warm=True``): each launch first chases
    its whole random cycle untimed, by the same thread on the same SM, then times enough loads
    round the same cycle to last about ``target_seconds``; so whichever cache of that SM or of
    the GPU holds that many lines serves them (an SM's L1 does not outlive a launch, so a warm-up
    in an earlier launch would leave its state to chance). A larger buffer is **cold**
    (``warm=False``): a random path that never visits a line twice, ``steps`` loads a repeat,
    fewer where the buffer has too few lines (then a repeat is shorter). Every row has
    ``repeats`` launches; ``sm`` says which SM ran each. Mapped tables are pushed out of the CPU's
    caches (``cpu_cache="evicted"``) after the CPU wrote them and before the first chase.
    """
    params = {"device_sizes": list(device_sizes), "zero_copy_sizes": list(zero_copy_sizes),
              "device_steps": device_steps, "zero_copy_steps": zero_copy_steps, "repeats": repeats,
              "warm_lines": warm_lines, "target_seconds": target_seconds}
    return run("latency_footprint", params, _latency_footprint)


def _footprint_chases(chaser: _Chaser, pointer: Any, path: np.ndarray, warm: bool, steps: int, repeats: int,
                      target_seconds: float) -> tuple[list[Chase], int, int]:
    """The timed chases of one footprint row, their steps and warm-up steps."""
    with measurement_slot(what="latency_footprint"):
        if not warm:
            return [chaser.chase(pointer, path, r * steps, steps) for r in range(repeats)], steps, 0
        lines = len(path)
        probe = chaser.chase(pointer, path, 0, lines, warm_steps=lines)  # untimed in the row: sets the steps
        per_load = probe.seconds / lines
        steps = int(min(max(lines, np.ceil(target_seconds / per_load)), 1 << 26))
        return [chaser.chase(pointer, path, 0, steps, warm_steps=lines) for _ in range(repeats)], steps, lines


def _latency_footprint(device_sizes: list[int], zero_copy_sizes: list[int], device_steps: int,
                       zero_copy_steps: int, repeats: int, warm_lines: int, target_seconds: float) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu

    chaser = _Chaser()
    rows: list[Row] = []
    free, _ = drv.mem_get_info()

    def path_for(nbytes: int, steps: int) -> tuple[np.ndarray, bool, int]:
        lines = nbytes // LINE
        if lines <= warm_lines:
            return random_path(nbytes, lines), True, steps
        steps = min(steps, (lines - 1) // repeats)
        return random_path(nbytes, steps * repeats + 1), False, steps

    try:
        for nbytes in device_sizes:
            if nbytes > free // 2:
                continue  # this GPU has not that much memory to spare: the row is left out
            path, warm, steps = path_for(nbytes, device_steps)
            with device_chase_table(nbytes, path) as dev:
                chases, steps, warm_steps = _footprint_chases(chaser, dev, path, warm, steps, repeats, target_seconds)
            rows.append(_chase_row(chases, memory="device", nbytes=nbytes, warm=warm, steps=steps,
                                   warm_steps=warm_steps))
        for nbytes in zero_copy_sizes:
            path, warm, steps = path_for(nbytes, zero_copy_steps)
            with mapped(nbytes, np.uint32, fill=None) as host:
                host[path] = np.roll(path, -1)
                evict_cpu_caches()
                chases, steps, warm_steps = _footprint_chases(chaser, gpu.device_pointer(host), path, warm, steps,
                                                              repeats, target_seconds)
            rows.append(_chase_row(chases, memory="zero_copy", cpu_cache="evicted", nbytes=nbytes, warm=warm,
                                   steps=steps, warm_steps=warm_steps))
    finally:
        chaser.free()
    return rows


def compare_rows(a: Row, b: Row) -> dict[str, Any]:
    """How chase row ``b`` differs from row ``a`` (measure-latency and keep-enough-bytes-in-flight).

    ``change``: b's median ns per load over a's, minus 1. ``spread``: the larger of the two rows'
    (highest - lowest repeat) / median. ``beyond_spread``: whether the two rows' bands (lowest to
    highest repeat) do not overlap, in this run alone; whether the two chases differ is decided above
    this layer, against the committed records too (helpers.analysis.spread, issue 30).
    """
    (a_low, a_mid, a_high), (b_low, b_mid, b_high) = load_ns_spread(a), load_ns_spread(b)
    spread = max((a_high - a_low) / a_mid, (b_high - b_low) / b_mid)
    change = b_mid / a_mid - 1
    return {"a_ns": a_mid, "b_ns": b_mid, "change": change, "spread": spread,
            "beyond_spread": b_low > a_high or b_high < a_low}


def footprint_change(result: Result, memory: str, warm: bool = False) -> dict[str, Any] | None:
    """How the ns per load changed from the smallest to the largest buffer of one kind (measure-latency).

    Among the rows of ``memory`` with this ``warm``, :func:`compare_rows` of the smallest and the
    largest buffer, plus ``monotonic``: whether no median in between steps back by more than the
    larger end's spread. None when fewer than two rows qualify.
    """
    rows = sorted((r for r in result.select(memory=memory) if r.get("warm") == warm), key=lambda r: r["nbytes"])
    if len(rows) < 2:
        return None
    found = compare_rows(rows[0], rows[-1])
    medians = [load_ns_spread(r)[1] for r in rows]
    sign = 1 if found["change"] >= 0 else -1
    step_back = max(sign * (a - b) / a for a, b in zip(medians, medians[1:]))
    return {**found, "memory": memory, "warm": warm, "smallest": rows[0]["nbytes"], "largest": rows[-1]["nbytes"],
            "monotonic": step_back <= found["spread"], "medians_ns": medians, "sizes": [r["nbytes"] for r in rows]}


def size_label(nbytes: int) -> str:
    """``64 KiB``, ``4 MiB``, ``16 GiB``."""
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


# --------------------------------------------------------------------------- loaded latency
def loaded_latency(nbytes: int = 128 * MiB, load_bytes: int = 1 * GiB, repeats: int = 9,
                   load_threads: Sequence[int] = (4096, 0), load_launches: int = 4,
                   target_seconds: float = TARGET_SECONDS, min_steps: int = 1024) -> Result:
    """The zero-copy round trip while a read kernel keeps the link busy (keep-enough-bytes-in-flight).

    A streaming zero-copy read (``read_float4`` over ``load_bytes``, launched ``load_launches``
    times back to back) runs on one stream while the pointer chase (``pointer_chase_timed``,
    timed inside the kernel, over lines never visited before) runs on another; the chase's time
    per load is the latency a load sees under that traffic, and a repeat counts only if the reads
    were still running when the chase ended. ``load_threads`` 0 stands for half the GPU's
    resident threads (enough to fill the link and leave room for the chase); 4096 threads x 16
    bytes is the example keep-enough-bytes-in-flight checks with Little's law. The first row (``load_threads=None``)
    is the same chase with no traffic. For each row one untimed probe chase of ``min_steps`` loads
    sets the steps, so that a timed chase lasts about ``target_seconds`` (at least ``min_steps``, and
    no more than the row's share of the table's lines).
    """
    params = {"nbytes": nbytes, "load_bytes": load_bytes, "repeats": repeats,
              "load_threads": list(load_threads), "load_launches": load_launches,
              "target_seconds": target_seconds, "min_steps": min_steps}
    return run("loaded_latency", params, _loaded_latency)


def _loaded_latency(nbytes: int, load_bytes: int, repeats: int, load_threads: list[int], load_launches: int,
                    target_seconds: float, min_steps: int) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu

    chaser = _Chaser()
    reader = kernels.load_kernel("bandwidth", "read_float4")
    path = random_path(nbytes, nbytes // LINE)
    rows: list[Row] = []
    chase_stream, load_stream = drv.Stream(), drv.Stream()
    half = full_grid() * BLOCK // 2
    first = 0

    def one(threads: int | None, steps: int) -> tuple[Chase, float | None]:
        """One chase of ``steps`` fresh lines, beside ``threads`` reading threads (None: none)."""
        nonlocal first
        if first + steps >= len(path):
            raise ValueError(f"The {nbytes:,}-byte table has too few lines left for a chase of {steps:,} loads: "
                             "raise nbytes or lower target_seconds.")
        if threads is None:
            chase = chaser.chase(table_pointer, path, first, steps, stream=chase_stream)
            first += steps
            return chase, None
        block = min(BLOCK, threads)
        load_start, load_end = drv.Event(), drv.Event()
        load_start.record(load_stream)
        for _ in range(load_launches):
            reader(load_pointer, np.uint64(load_bytes // 16), NEVER, sink, block=(block, 1, 1),
                   grid=(threads // block, 1), stream=load_stream)
        load_end.record(load_stream)
        loading: list[bool] = []
        chase = chaser.chase(table_pointer, path, first, steps, stream=chase_stream,
                             when_done=lambda: loading.append(not load_end.query()))
        first += steps
        load_end.synchronize()
        if not loading[0]:
            raise AssertionError(f"The reads ({load_launches} x {load_bytes} bytes) ended before the chase of "
                                 f"{steps} loads: raise load_launches so the chase runs under load throughout.")
        return chase, load_bytes * load_launches / (load_end.time_since(load_start) / 1e3) / 1e9

    try:
        with mapped(nbytes, np.uint32, fill=None) as table, mapped(load_bytes) as load, device(4) as sink:
            table[path] = np.roll(path, -1)
            evict_cpu_caches()
            table_pointer, load_pointer = gpu.device_pointer(table), gpu.device_pointer(load)
            share = len(path) // ((len(load_threads) + 1) * (repeats + 1))  # lines each row's chases may use
            for threads in [None, *load_threads]:
                threads = None if threads is None else threads or half
                with measurement_slot(what="loaded_latency"):
                    probe, _ = one(threads, min_steps)
                    steps = int(max(min_steps, min(np.ceil(target_seconds / (probe.seconds / min_steps)), share)))
                    done = [one(threads, steps) for _ in range(repeats)]
                row = _chase_row([chase for chase, _ in done], load_threads=threads, steps=steps)
                if threads is not None:
                    row.update({"load_kernel": "read_float4",
                                "load_GBps": float(np.median([rate for _, rate in done])),
                                "bytes_in_flight": threads * 16})
                rows.append(row)
    finally:
        chaser.free()
    return rows
