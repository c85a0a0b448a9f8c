"""The few names of ``pycuda.driver`` that write-your-first-zero-copy-kernel's raw walk-through uses, on the CPU
backend.

Live, write-your-first-zero-copy-kernel writes ``import pycuda.driver as drv``; in replay it writes
``from helpers.cpu import driver as drv``, and the rest of the text is the same::

    h = drv.pagelocked_empty(n, np.float32, mem_flags=drv.host_alloc_flags.DEVICEMAP)
    d = np.intp(h.base.get_device_pointer())
    kernel(d, ..., block=(256, 1, 1), grid=(blocks, 1))
    drv.Context.synchronize()
    h.base.free()

Here the "device pointer" is the host address (one processor, one page table), a launch has
finished when the call returns, and ``free()`` makes the address unknown to later launches
(the CPU backend then refuses it, where a GPU would read freed memory). The array's bytes stay
readable after ``free()``, unlike freed pinned memory on a GPU machine: do not rely on that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .memory import mapped_empty, unregister

__all__ = ["host_alloc_flags", "HostAllocation", "pagelocked_empty", "Context", "LogicError"]


class host_alloc_flags:  # noqa: N801 (PyCUDA's spelling)
    """PyCUDA's ``host_alloc_flags``: the values of ``CU_MEMHOSTALLOC_*``; on the CPU they change nothing."""

    PORTABLE = 1
    DEVICEMAP = 2
    WRITECOMBINED = 4


class LogicError(RuntimeError):
    """Raised like PyCUDA's ``LogicError`` for a use of freed memory."""


class HostAllocation:
    """The ``.base`` of an array from :func:`pagelocked_empty`: PyCUDA's ``HostAllocation``."""

    def __init__(self, array: np.ndarray, flags: int) -> None:
        self._array: np.ndarray | None = array
        self.flags = flags
        self.__array_interface__ = array.__array_interface__

    @property
    def freed(self) -> bool:
        """Whether :meth:`free` was called (PyCUDA has no such attribute; the exercise checks use it)."""
        return self._array is None

    def get_device_pointer(self) -> int:
        """The address a kernel uses: on the CPU, the host address itself."""
        if self._array is None:
            raise LogicError("get_device_pointer() on freed page-locked memory: the allocation is gone.")
        return int(self._array.ctypes.data)

    def free(self) -> None:
        """``cuMemFreeHost``: later launches refuse this address. Safe to call twice."""
        if self._array is not None:
            unregister(self._array)
            self._keep = self._array   # the numpy view still points at these bytes: keep them valid
            self._array = None


def pagelocked_empty(shape: Any, dtype: Any = np.float32, order: str = "C", mem_flags: int = 0) -> np.ndarray:
    """``pycuda.driver.pagelocked_empty`` on the CPU: a page-aligned array the backend knows."""
    if order != "C":
        raise ValueError("the CPU stand-in supports order='C' only")
    inner = mapped_empty(shape, dtype)
    return np.asarray(HostAllocation(inner, mem_flags))


class Context:
    """PyCUDA's ``Context``, reduced to :meth:`synchronize`."""

    @staticmethod
    def synchronize() -> None:
        """``cudaDeviceSynchronize``: on the CPU a launch has already finished when it returns."""
