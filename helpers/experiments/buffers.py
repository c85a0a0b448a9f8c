"""Buffers that free themselves, and launch shapes, shared by the experiments."""

from __future__ import annotations

from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any, Iterator

import numpy as np

from ..memory import gpu

BLOCK = 256
NEVER = np.float32(-1.0)  # read kernels only write their sum when it equals this; data are positive


@contextmanager
def _page_locked(array: np.ndarray, fill: float | None) -> Iterator[np.ndarray]:
    try:
        if fill is not None:
            array.fill(fill)
        yield array
    finally:
        gpu.free(array)


def mapped(nbytes: int, dtype: Any = np.float32, fill: float | None = 1.0, **flags: bool) -> AbstractContextManager[np.ndarray]:
    """Mapped page-locked host memory, filled with ``fill``, freed on exit."""
    return _page_locked(gpu.mapped_empty(nbytes // np.dtype(dtype).itemsize, dtype, **flags), fill)


def pinned(nbytes: int, dtype: Any = np.float32, fill: float | None = 1.0) -> AbstractContextManager[np.ndarray]:
    """Page-locked host memory (not mapped), filled with ``fill``, freed on exit."""
    return _page_locked(gpu.pinned_empty(nbytes // np.dtype(dtype).itemsize, dtype), fill)


@contextmanager
def device(nbytes: int, fill: float | None = 1.0) -> Iterator[Any]:
    """Device memory (``cudaMalloc``), filled with float32 ``fill``, freed on exit."""
    gpu.context()
    import pycuda.driver as drv

    allocation = drv.mem_alloc(nbytes)
    try:
        if fill is not None:
            drv.memset_d32(allocation, int(np.float32(fill).view(np.uint32)), nbytes // 4)
        yield allocation
    finally:
        allocation.free()


@lru_cache(maxsize=None)
def full_grid(block: int = BLOCK) -> int:
    """Enough blocks to fill every multiprocessor with resident threads."""
    attributes = gpu.device_attributes()
    per_sm = attributes.get("MAX_THREADS_PER_MULTIPROCESSOR", 2048) // block
    return attributes["MULTIPROCESSOR_COUNT"] * max(per_sm, 1)


def seconds_row(timing: Any, **fields: Any) -> dict[str, Any]:
    """A row with every repeat's seconds and the fields given; a timing taken in rounds
    (:func:`helpers.memory.timing.time_gpu_rounds`) adds when each repeat started (``started_s``); one taken over
    several allocations (:func:`helpers.memory.timing.time_gpu_rounds_over`) adds which allocation each repeat timed
    (``allocation``) and each allocation's median (``allocation_seconds``)."""
    row = {**fields, "seconds": [float(s) for s in timing.seconds]}
    if getattr(timing, "started", ()):
        row["started_s"] = [round(float(t), 4) for t in timing.started]
    if getattr(timing, "allocation", ()):
        row["allocation"] = [int(a) for a in timing.allocation]
        row["allocation_seconds"] = [float(s) for s in timing.allocation_medians()]
    return row
