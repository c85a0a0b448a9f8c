"""Sparse data read once: copy the whole array then read it on the GPU, or read the touched elements in place
(decide-when-zero-copy-wins).

Thread t reads float ``t * stride`` of an ``nbytes`` array (``access_pattern.cu``'s ``read_strided``, as in
coalesce-and-align-accesses). **copy_then_read** copies the whole array with a pinned ``memcpy_htod`` and reads the strided floats in
device memory; **zero_copy** reads the same floats through mapped memory, which fetches only the sectors they
touch. The copy costs the same at every stride, zero-copy less the sparser the reads, so the two cross.

Request-bound points (large strides) move with each fresh allocation on the lent H200 (issue 30), so the sweep is
timed over ``allocations`` fresh mapped buffers in turn (``repeats`` rounds on each), each row
keeping every allocation's median. About 1-2 s of GPU time with the defaults.

A record made before this experiment existed has no rows of it: replayed from such a record,
:func:`read_once_strided` returns :class:`ModelledResult`, computed from that record's stride sweep and pinned
copy rate and labelled as a model, until ``python -m helpers record --only read_once_strided`` adds it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .. import kernels, records
from ..errors import RecordError
from .buffers import BLOCK, NEVER, device, full_grid, mapped, seconds_row
from .result import Result, Row, reference, run

NAME = "read_once_strided"
STRIDES = (1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64)
NBYTES = 256 << 20     # the array: about 5 ms to copy at the H200's pinned rate; the quiet-sweep rule's 256 MiB
# Fresh mapped buffers the rounds are taken on in turn, and rounds on each: 3 x 3 = 9 repeats a point, the
# quiet-sweep rule (helpers/experiments/quiet.py), as the stride sweep (helpers/experiments/access.py) takes them.
ALLOCATIONS = 3
REPEATS = 3
METHODS = ("copy_then_read", "zero_copy")


def read_once_strided(strides: Sequence[int] = STRIDES, nbytes: int = NBYTES, repeats: int = REPEATS,
                      allocations: int = ALLOCATIONS) -> Result:
    """Copy-then-read against zero-copy for data read once, by stride (decide-when-zero-copy-wins).

    Each row: ``method``, ``stride``, ``count`` (floats read), ``nbytes`` (the array), every repeat's ``seconds``
    and ``useful_GBps`` (the floats read over the median time). Replayed from a record that predates the
    experiment, a :class:`ModelledResult` (say so, never a measurement)."""
    params = {"kernel": "read_strided", "strides": list(strides), "nbytes": nbytes, "repeats": repeats,
              "allocations": allocations, "block": BLOCK}
    try:
        return run(NAME, params, _measure)
    except RecordError:
        record, _ = records.reference_record()
        if NAME in record["experiments"]:
            raise
        return modelled(nbytes)


def _measure(kernel: str, strides: list[int], nbytes: int, repeats: int, allocations: int, block: int) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu
    from ..memory.timing import time_gpu_rounds_over

    read = kernels.load_kernel("access_pattern", "read_strided")
    grid = full_grid()
    counts = [nbytes // (4 * s) for s in strides]

    def launch(pointer: object, s: int, n: int) -> None:
        read(pointer, np.uint64(n), np.int32(s), np.int32(0), NEVER, sink, block=(BLOCK, 1, 1), grid=(grid, 1))

    def works(host: np.ndarray) -> list[Callable[[], object]]:
        pointer = gpu.device_pointer(host)

        def copy_then_read(s: int, n: int) -> Callable[[], object]:
            return lambda: (drv.memcpy_htod(dev, host), launch(dev, s, n))

        def zero_copy(s: int, n: int) -> Callable[[], object]:
            return lambda: launch(pointer, s, n)

        return [make(s, n) for s, n in zip(strides, counts) for make in (copy_then_read, zero_copy)]

    def allocate() -> AbstractContextManager[np.ndarray]:
        return mapped(nbytes)

    with device(4) as sink, device(nbytes, fill=None) as dev:
        timings = time_gpu_rounds_over(allocate, works, allocations=allocations, repeats=repeats)
    points = [(s, n, method) for s, n in zip(strides, counts) for method in METHODS]
    return [seconds_row(timing, method=method, stride=s, count=n, nbytes=nbytes, grid=grid,
                        useful_GBps=n * 4 / timing.median / 1e9)
            for (s, n, method), timing in zip(points, timings)]


@dataclass
class ModelledResult(Result):
    """Rows computed from a record that predates :data:`NAME`, with the assumptions said; never a measurement."""

    basis: str = ""

    def origin(self, dated: bool = False) -> str:
        date = f" on {str(self.provenance.get('date', '?'))[:10]}" if dated else ""
        return f"MODELLED from the record of {self.gpu}{date}, not measured"

    def describe(self) -> str:
        return (f"{self.name}: MODELLED, not measured. data/{self.record_file} (recorded on {self.gpu} on "
                f"{str(self.provenance.get('date', '?'))[:10]}) predates this experiment, so each row is computed "
                f"from it: {self.basis} On a GPU, `python -m helpers record --only {self.name}` measures it.")


def modelled(nbytes: int = NBYTES) -> ModelledResult:
    """The experiment's rows modelled from the reference record's ``stride`` sweep and pinned ``memcpy`` rate
    (decide-when-zero-copy-wins, until the experiment is recorded). Assumptions, labelled as such: zero-copy
    reads an ``nbytes`` array at each stride at the useful rate the stride sweep measured across its own buffer;
    the copy runs at the pinned host-to-device rate recorded for the size nearest ``nbytes``; the read after it
    runs at the device-memory rate of the same stride sweep."""
    stride, memcpy = reference("stride"), reference("memcpy")
    copies = memcpy.select(direction="htod", host_memory="pinned")
    nearest = min(copies, key=lambda r: abs(np.log2(r["nbytes"] / nbytes)))
    copy_seconds = nbytes / (nearest["GBps"] * 1e9)
    rows: list[Row] = []
    for s in sorted({int(r["stride"]) for r in stride.rows}):
        n = nbytes // (4 * s)
        zero = n * 4 / (stride.one(memory="zero_copy", stride=s)["useful_GBps"] * 1e9)
        after = n * 4 / (stride.one(memory="device", stride=s)["useful_GBps"] * 1e9)
        for method, seconds in (("copy_then_read", copy_seconds + after), ("zero_copy", zero)):
            rows.append({"method": method, "stride": s, "count": n, "nbytes": nbytes, "seconds": [seconds],
                         "useful_GBps": n * 4 / seconds / 1e9})
    basis = (f"zero-copy at the useful rate of its stride sweep ({stride.params['nbytes'] >> 20} MiB buffer); the "
             f"copy at its pinned host-to-device rate for {nearest['nbytes'] >> 20} MiB "
             f"({nearest['GBps']:.1f} GB/s), then the read at the stride sweep's device-memory rate.")
    params = {"strides": [r["stride"] for r in rows[::2]], "nbytes": nbytes, "modelled_from": ["stride", "memcpy"]}
    return ModelledResult(NAME, params, rows, False, stride.provenance, stride.record_file, basis=basis)


def crossing(result: Result) -> tuple[int | None, float | None]:
    """(the smallest measured stride from which zero-copy is faster at every larger stride too, the stride where the
    two medians' ratio crosses 1, interpolated in log stride between the strides around it); None where zero-copy
    never wins (decide-when-zero-copy-wins)."""
    strides = sorted({int(s) for s in result.column("stride")})
    ratio = {s: float(np.median(result.one(method="zero_copy", stride=s)["seconds"]))
             / float(np.median(result.one(method="copy_then_read", stride=s)["seconds"])) for s in strides}
    first = None
    for s in reversed(strides):
        if ratio[s] >= 1:
            break
        first = s
    if first is None:
        return None, None
    i = strides.index(first)
    if i == 0:
        return first, float(first)
    lo, hi = strides[i - 1], first
    x = np.log([lo, hi])
    y = np.log([ratio[lo], ratio[hi]])
    return first, float(np.exp(x[0] + (0 - y[0]) * (x[1] - x[0]) / (y[1] - y[0])))


def allocation_crossings(result: Result) -> list[int | None]:
    """The first stride from which zero-copy wins, per allocation (rows that keep ``allocation_seconds``); empty
    for a modelled or older result."""
    rows = result.select(method="zero_copy")
    if not rows or "allocation_seconds" not in rows[0]:
        return []
    found: list[int | None] = []
    for a in range(len(rows[0]["allocation_seconds"])):
        per = [{"method": r["method"], "stride": r["stride"], "seconds": [r["allocation_seconds"][a]]}
               for r in result.rows]
        found.append(crossing(Result(result.name, result.params, per, result.live))[0])
    return found
