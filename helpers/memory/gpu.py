"""The GPU side of the course: one context, pinned and mapped allocations, device pointers.

start-here introduces :func:`context` and :func:`device_attributes`; measure-what-pinning-buys
:func:`pinned_empty`; map-pages-on-the-gpu and write-your-first-zero-copy-kernel :func:`mapped_empty` and
:func:`device_pointer`; use-write-combined-and-registered-memory the write-combined and portable flags and
:class:`RegisteredArray` (cuMemHostRegister).

Every function that needs a GPU raises :class:`helpers.errors.NoGPUError` in replay mode.
"""

from __future__ import annotations

import atexit
import gc
import os
import weakref
from typing import Any

import numpy as np

from ..errors import PinningError, RegistrationError
from ..i18n import _
from ..mode import require_live
from ..sharing import pinned_budget
from . import driver_api
from .pages import PAGE_SIZE, page_aligned_empty  # the registered-memory lesson registers what this makes

__all__ = [
    "context", "device_attributes", "device_name", "synchronize",
    "pinned_empty", "mapped_empty", "device_pointer", "free", "pinned_bytes_live",
    "page_aligned_empty", "RegisteredArray", "host_flags", "PAGE_SIZE",
]

# Attributes start-here shows, by their PyCUDA names; those an older PyCUDA lacks are skipped.
SHOWN_ATTRIBUTES = (
    "CAN_MAP_HOST_MEMORY", "UNIFIED_ADDRESSING", "INTEGRATED",
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", "HOST_REGISTER_SUPPORTED",
    "PAGEABLE_MEMORY_ACCESS", "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES",
    "HOST_NATIVE_ATOMIC_SUPPORTED", "CONCURRENT_MANAGED_ACCESS", "ASYNC_ENGINE_COUNT",
    "MULTIPROCESSOR_COUNT", "MAX_THREADS_PER_MULTIPROCESSOR", "L2_CACHE_SIZE",
    "COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR", "PCI_BUS_ID", "PCI_DEVICE_ID",
    "READ_ONLY_HOST_REGISTER_SUPPORTED", "GPU_DIRECT_RDMA_SUPPORTED",
)

_context: Any = None
_live_allocations: dict[int, int] = {}  # id(array) -> bytes, for arrays not yet freed


# --------------------------------------------------------------------------- context
def context() -> Any:
    """The notebook's one CUDA context: GPU 0's primary context, pushed once (start-here).

    Calling it again returns the same context, so re-running a cell is safe. At interpreter
    exit the context is popped, so none is left on the stack.
    """
    global _context
    require_live("A CUDA context")
    if _context is None:
        import pycuda.driver as drv

        drv.init()
        ctx = drv.Device(0).retain_primary_context()
        ctx.push()
        _context = ctx
        atexit.register(_release_context)
        from ..sharing import gpu_queue

        try:
            gpu_queue.register_member()  # so that contention checks know this process is a learner's
        except (gpu_queue.QueueError, OSError):
            pass  # the measurement slots will say what is wrong with the lock folder
    return _context


def _release_context() -> None:
    """Pop the context at exit, after dropping what still refers to it."""
    global _context
    if _context is None:
        return
    from pycuda.tools import clear_context_caches

    gc.collect()
    _context.synchronize()
    _context.pop()
    _context = None
    clear_context_caches()


def synchronize() -> None:
    """Wait for all work on the GPU to finish (``cudaDeviceSynchronize``, write-your-first-zero-copy-kernel)."""
    context().synchronize()


def device_name() -> str:
    """The name of GPU 0 (start-here)."""
    context()
    import pycuda.driver as drv

    return drv.Device(0).name()


def device_attributes() -> dict[str, int]:
    """The attributes of GPU 0 that matter for zero-copy, by name (start-here)."""
    context()
    import pycuda.driver as drv

    device = drv.Device(0)
    found: dict[str, int] = {}
    for name in SHOWN_ATTRIBUTES:
        attribute = getattr(drv.device_attribute, name, None)
        if attribute is not None:
            found[name] = int(device.get_attribute(attribute))
    found["TOTAL_MEMORY_BYTES"] = int(device.total_memory())
    return found


# --------------------------------------------------------------------------- allocation
def _check_pinnable(nbytes: int) -> None:
    if nbytes <= 0:
        raise PinningError(f"Cannot pin {nbytes} bytes: ask for at least one element.")
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if nbytes > 0.75 * total:
        raise PinningError(
            f"Refusing to pin {nbytes / 2**30:.1f} GiB: this machine has {total / 2**30:.1f} GiB of RAM, "
            "and page-locked memory cannot be swapped, so pinning most of it starves the system. "
            "Use a smaller size (at most three quarters of RAM) or process the data in chunks (lesson 12)."
        )


def _forget(key: int) -> None:
    """An allocation is gone: stop counting it here and in the machine-wide budget."""
    nbytes = _live_allocations.pop(key, None)
    if nbytes:
        pinned_budget.release(nbytes)


def _track(array: np.ndarray) -> np.ndarray:
    key = id(array)
    _live_allocations[key] = array.nbytes
    weakref.finalize(array, _forget, key)
    return array


def _allocate(shape: Any, dtype: Any, flags: int, what: str) -> np.ndarray:
    context()
    import pycuda.driver as drv

    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    _check_pinnable(nbytes)
    pinned_budget.reserve(nbytes)  # the machine-wide budget all learners share
    try:
        array = drv.pagelocked_empty(shape, dtype, mem_flags=flags)
    except (drv.MemoryError, drv.Error) as exc:
        pinned_budget.release(nbytes)
        raise PinningError(
            f"The driver could not allocate {nbytes / 2**20:.1f} MiB of {what}: {exc}. "
            "The NVIDIA driver pins this memory itself, not through mlock, so the locked-memory limit "
            "(ulimit -l) was not charged for it on the course's machine (VmLck and VmPin stayed 0, lesson 02); what "
            "bounds it is free physical memory and the driver. Free other pinned buffers (helpers.memory.gpu.free), "
            "use a smaller size, check MemAvailable in /proc/meminfo and the driver's messages in dmesg."
        ) from exc
    return _track(array)


def pinned_empty(shape: Any, dtype: Any = np.float32) -> np.ndarray:
    """Page-locked host memory without the mapping flag, for fast copies (measure-what-pinning-buys)."""
    return _allocate(shape, dtype, 0, "page-locked host memory")


def mapped_empty(shape: Any, dtype: Any = np.float32, *, write_combined: bool = False,
                 portable: bool = False) -> np.ndarray:
    """Mapped page-locked host memory: ``cudaHostAlloc(..., cudaHostAllocMapped)`` (write-your-first-zero-copy-kernel).

    ``write_combined`` and ``portable`` add ``cudaHostAllocWriteCombined`` and
    ``cudaHostAllocPortable`` (use-write-combined-and-registered-memory).
    """
    context()
    import pycuda.driver as drv

    flags = drv.host_alloc_flags.DEVICEMAP
    if write_combined:
        flags |= drv.host_alloc_flags.WRITECOMBINED
    if portable:
        flags |= drv.host_alloc_flags.PORTABLE
    return _allocate(shape, dtype, flags, "mapped page-locked host memory")


def _allocation_root(array: np.ndarray) -> tuple[np.ndarray, Any]:
    """The ndarray that owns a page-locked allocation, and the allocation itself."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root, root.base


def device_pointer(array: np.ndarray) -> np.intp:
    """The GPU's address of a mapped array, ``cudaHostGetDevicePointer`` (write-your-first-zero-copy-kernel).

    Pass the result, not the array, to a kernel: PyCUDA copies an ndarray argument
    into the kernel's parameters by value (write-your-first-zero-copy-kernel shows the pitfall).
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"device_pointer expects a numpy array from helpers.memory.gpu.mapped_empty, got {type(array).__name__}.")
    root, allocation = _allocation_root(array)
    if not hasattr(allocation, "get_device_pointer"):
        raise TypeError(
            "This array is not page-locked host memory from PyCUDA, so the GPU has no address for it. "
            "Allocate it with helpers.memory.gpu.mapped_empty, or register it with helpers.memory.gpu.RegisteredArray."
        )
    import pycuda.driver as drv

    try:
        base_pointer = int(allocation.get_device_pointer())
    except drv.Error as exc:
        raise PinningError(
            f"The driver has no device pointer for this allocation ({exc}). "
            "Was it allocated with mapped_empty (DEVICEMAP), and is it still allocated?"
        ) from exc
    return np.intp(base_pointer + (array.ctypes.data - root.ctypes.data))


def free(*arrays: np.ndarray) -> None:
    """Free page-locked arrays now, like ``cudaFreeHost`` (write-your-first-zero-copy-kernel).

    Do not touch an array after freeing it: its memory is gone.
    """
    for array in arrays:
        root, allocation = _allocation_root(array)
        if not hasattr(allocation, "free"):
            raise TypeError("free() takes arrays from helpers.memory.gpu.pinned_empty or mapped_empty.")
        allocation.free()
        _forget(id(array))
        _forget(id(root))


def pinned_bytes_live() -> int:
    """Bytes of page-locked memory that helpers allocated and that are still held
    (write-your-first-zero-copy-kernel)."""
    gc.collect()
    return sum(_live_allocations.values())


def host_flags(array: np.ndarray) -> dict[str, bool]:
    """The flags the driver keeps for a page-locked allocation, ``cuMemHostGetFlags``
    (use-write-combined-and-registered-memory)."""
    context()
    flags = driver_api.host_get_flags(array.ctypes.data)
    return {
        "PORTABLE": bool(flags & driver_api.MEMHOSTALLOC_PORTABLE),
        "DEVICEMAP": bool(flags & driver_api.MEMHOSTALLOC_DEVICEMAP),
        "WRITECOMBINED": bool(flags & driver_api.MEMHOSTALLOC_WRITECOMBINED),
    }


# --------------------------------------------------------------------------- registered memory
class RegisteredArray:
    """An existing numpy array page-locked and mapped in place with ``cuMemHostRegister``
    (use-write-combined-and-registered-memory).

    PyCUDA 2026.1's ``register_host_memory`` raises, so this calls the driver through ctypes.
    Use it as a context manager, or call :meth:`unregister`::

        with RegisteredArray(page_aligned_empty(1 << 20)) as reg:
            kernel(reg.device_pointer, ...)
    """

    def __init__(self, array: np.ndarray, *, portable: bool = False, read_only: bool = False) -> None:
        _check_registrable(array)   # before the driver: the refusal needs no GPU (lesson 13)
        context()
        flags = driver_api.MEMHOSTREGISTER_DEVICEMAP
        if portable:
            flags |= driver_api.MEMHOSTREGISTER_PORTABLE
        if read_only:
            flags |= driver_api.MEMHOSTREGISTER_READ_ONLY
        self.array = array
        self.host_pointer = array.ctypes.data
        pinned_budget.reserve(array.nbytes)
        try:
            driver_api.host_register(self.host_pointer, array.nbytes, flags)
        except driver_api.DriverError as exc:
            pinned_budget.release(array.nbytes)
            if not array.flags.writeable and not read_only:
                raise RegistrationError(
                    f"cuMemHostRegister refused {array.nbytes} bytes at {self.host_pointer:#x}: {exc}. This array is "
                    "read-only for this process (a file mapped for reading, say), and by default the driver pins "
                    "pages for writing: register it with RegisteredArray(array, read_only=True) "
                    "(CU_MEMHOSTREGISTER_READ_ONLY), where READ_ONLY_HOST_REGISTER_SUPPORTED is 1."
                ) from exc
            raise RegistrationError(
                f"cuMemHostRegister refused {array.nbytes} bytes at {self.host_pointer:#x}: {exc}. "
                "Check that the range is not registered already and that enough physical memory is free "
                "(MemAvailable in /proc/meminfo). The NVIDIA driver pins it itself, not through mlock, so ulimit -l "
                "was not charged for it on the course's machine (VmLck and VmPin stayed 0, lesson 02)."
            ) from exc
        self.registered = True
        _live_allocations[id(self)] = array.nbytes
        self.device_pointer = np.intp(driver_api.host_get_device_pointer(self.host_pointer))

    def unregister(self) -> None:
        """Unpin the pages again (``cuMemHostUnregister``); safe to call twice."""
        if self.registered:
            driver_api.host_unregister(self.host_pointer)
            self.registered = False
            _forget(id(self))

    def __enter__(self) -> "RegisteredArray":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.unregister()

    def __del__(self) -> None:
        if getattr(self, "registered", False) and _context is not None:
            self.unregister()


def _check_registrable(array: Any) -> None:
    if not isinstance(array, np.ndarray):
        raise RegistrationError(_("Only numpy arrays can be registered, not {kind}.").format(
            kind=type(array).__name__))
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise RegistrationError(
            _("This array is not contiguous (a strided view?): cuMemHostRegister pins one address range. "
              "Register the whole array it views, or a contiguous copy (np.ascontiguousarray).")
        )
    if array.nbytes == 0:
        raise RegistrationError(_("This array is empty; there is nothing to register."))
    misaligned = array.ctypes.data % PAGE_SIZE
    if misaligned or array.nbytes % PAGE_SIZE:
        said = (_("The array starts {misaligned} bytes past a page boundary, and its size ({nbytes} B) is not a "
                  "multiple of the {page}-byte page.") if misaligned and array.nbytes % PAGE_SIZE else
                _("The array starts {misaligned} bytes past a page boundary.") if misaligned else
                _("The array's size ({nbytes} B) is not a multiple of the {page}-byte page."))
        raise RegistrationError(
            said.format(misaligned=misaligned, nbytes=array.nbytes, page=PAGE_SIZE)
            + _(" The OS kernel pins whole pages, so a partial page would pin the neighbouring data too. Create "
                "it with zc.pages.page_aligned_empty and a size that is a whole number of pages.")
        )

