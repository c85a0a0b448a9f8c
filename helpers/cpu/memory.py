"""Which arrays the CPU backend knows, so that an address can stand for an array (write-your-first-zero-copy-kernel).

On a GPU a zero-copy buffer has two addresses, the host's and the device's. On the CPU
backend they are literally the same number: ``device_pointer(a) == a.ctypes.data``.
A kernel argument may be an ``np.intp`` address; it must lie inside an array passed to
:func:`register` or passed to an earlier kernel call (the registry holds weak
references, so it never keeps an array alive).
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass

import numpy as np

from ..memory.pages import page_aligned_empty
from .errors import ArraySizeError, KernelArgumentError, UnknownPointerError

__all__ = ["register", "unregister", "device_pointer", "mapped_empty", "pinned_bytes_live", "lookup", "In", "Out", "InOut", "flat_extent"]


@dataclass
class _Entry:
    start: int
    nbytes: int
    ref: "weakref.ReferenceType[np.ndarray]"


_registry: dict[tuple[int, int], _Entry] = {}


def flat_extent(array: np.ndarray) -> tuple[int, int]:
    """(address, nbytes) of a contiguous array; raise for a strided view a kernel cannot index."""
    if not isinstance(array, np.ndarray):
        raise KernelArgumentError(f"expected a numpy array, got {type(array).__name__}")
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise KernelArgumentError(
            f"a {array.dtype} array of shape {array.shape} is not contiguous (a strided view?): a kernel sees "
            "one flat range of memory. Pass np.ascontiguousarray(a) instead.")
    return int(array.ctypes.data), int(array.nbytes)


def register(array: np.ndarray) -> np.intp:
    """Make the backend know ``array``; return its address (write-your-first-zero-copy-kernel)."""
    start, nbytes = flat_extent(array)
    _registry[(start, nbytes)] = _Entry(start, nbytes, weakref.ref(array))
    return np.intp(start)


def unregister(array: np.ndarray) -> None:
    """Forget ``array``: its address is unknown to later launches."""
    start, nbytes = flat_extent(array)
    _registry.pop((start, nbytes), None)


def device_pointer(array: np.ndarray) -> np.intp:
    """The address a kernel uses for ``array``: on the CPU, the host address itself (write-your-first-zero-copy-kernel).

    The CPU counterpart of ``np.intp(a.base.get_device_pointer())`` for mapped memory;
    it also registers ``array``.
    """
    return register(array)


def mapped_empty(shape: int | tuple[int, ...], dtype: "np.typing.DTypeLike" = np.float32, *,
                 write_combined: bool = False, portable: bool = False) -> np.ndarray:
    """An uninitialised, page-aligned array the backend knows: the CPU stand-in for
    ``helpers.gpu.mapped_empty`` (write-your-first-zero-copy-kernel).

    It takes the same keywords; ``write_combined`` and ``portable`` change nothing on the
    CPU (there is no PCIe write-combining, and one process sees its memory everywhere).
    """
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape) if isinstance(shape, (tuple, list)) \
        else ()
    if not dims or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in dims):
        raise ArraySizeError(f"mapped_empty({shape!r}): every size must be a positive integer (at least one element).")
    array = page_aligned_empty(dims, dtype)
    register(array)
    return array


def free(*arrays: np.ndarray) -> None:
    """The CPU stand-in for ``helpers.gpu.free`` (write-your-first-zero-copy-kernel): each array is forgotten by
    later launches at once; Python frees its memory when the last reference goes, as for any NumPy array.
    Like ``cudaFreeHost``, it takes only arrays of :func:`mapped_empty` or :func:`register`."""
    for array in arrays:
        if not isinstance(array, np.ndarray):
            raise TypeError(f"free() takes NumPy arrays from helpers.cpu.mapped_empty, not {type(array).__name__}.")
        start, nbytes = flat_extent(array)
        if (start, nbytes) not in _registry:
            raise TypeError("free() takes arrays from helpers.cpu.mapped_empty (or registered with "
                            "helpers.cpu.register); this one is unknown to the CPU backend, or freed already.")
        unregister(array)


def pinned_bytes_live() -> int:
    """Bytes of the arrays the backend knows and that are still alive: the CPU stand-in for
    ``helpers.gpu.pinned_bytes_live``, so a leak check runs the same way on both backends
    (write-your-first-zero-copy-kernel)."""
    gc.collect()
    return sum(entry.nbytes for entry in _registry.values() if entry.ref() is not None)


def synchronize() -> None:
    """The CPU stand-in for ``helpers.gpu.synchronize``: a CPU launch has finished when its call returns,
    so there is nothing to wait for (write-your-first-zero-copy-kernel)."""


def lookup(address: int) -> tuple[np.ndarray, int]:
    """The known array containing ``address`` and the byte offset of ``address`` in it.

    The largest array that holds the byte at ``address``; failing that, one that ends there
    (a pointer one past the end). So an address that is the end of one array and the start
    of another belongs to the one it starts."""
    best: _Entry | None = None
    for key, entry in list(_registry.items()):
        if entry.ref() is None:
            del _registry[key]
            continue
        if not entry.start <= address <= entry.start + entry.nbytes:
            continue
        inside = address < entry.start + entry.nbytes
        best_inside = best is not None and address < best.start + best.nbytes
        if best is None or (inside, entry.nbytes) > (best_inside, best.nbytes):
            best = entry
    if best is None:
        raise UnknownPointerError(
            f"the address {address:#x} lies in no array the CPU backend knows. Pass the numpy array itself, "
            "or register it first with helpers.cpu.register(a) (helpers.cpu.device_pointer(a) does both) and "
            "pass an address inside it.")
    array = best.ref()
    assert array is not None
    return array, address - best.start


class In:
    """PyCUDA's ``drv.In(a)`` for the CPU backend: host and device memory are the same, so it is ``a``."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


class Out(In):
    """PyCUDA's ``drv.Out(a)``: on the CPU the kernel writes ``a`` directly."""


class InOut(In):
    """PyCUDA's ``drv.InOut(a)``: on the CPU the kernel reads and writes ``a`` directly."""
