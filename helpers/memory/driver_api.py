"""The few CUDA driver calls PyCUDA does not wrap usably, through ctypes (map-pages-on-the-gpu and
use-write-combined-and-registered-memory).

``cuMemHostRegister`` / ``cuMemHostUnregister`` / ``cuMemHostGetDevicePointer`` / ``cuMemHostGetFlags``.
The calls act on the CUDA context current in this thread, which is the course's
(:func:`helpers.memory.gpu.context`).
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

MEMHOSTALLOC_PORTABLE = 0x01
MEMHOSTALLOC_DEVICEMAP = 0x02
MEMHOSTALLOC_WRITECOMBINED = 0x04
MEMHOSTREGISTER_PORTABLE = 0x01
MEMHOSTREGISTER_DEVICEMAP = 0x02
MEMHOSTREGISTER_READ_ONLY = 0x08


class DriverError(RuntimeError):
    """A CUDA driver call returned an error code."""


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
    lib.cuMemHostUnregister.argtypes = [ctypes.c_void_p]
    lib.cuMemHostGetDevicePointer_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p, ctypes.c_uint]
    lib.cuMemHostGetFlags.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.c_void_p]
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    for name in ("cuMemHostRegister_v2", "cuMemHostUnregister", "cuMemHostGetDevicePointer_v2",
                 "cuMemHostGetFlags", "cuGetErrorString"):
        getattr(lib, name).restype = ctypes.c_int
    return lib


def _check(code: int, call: str) -> None:
    if code != 0:
        text = ctypes.c_char_p()
        _lib().cuGetErrorString(code, ctypes.byref(text))
        message = text.value.decode() if text.value else "unknown error"
        raise DriverError(f"{call} failed with CUDA error {code}: {message}")


def host_register(pointer: int, nbytes: int, flags: int) -> None:
    _check(_lib().cuMemHostRegister_v2(ctypes.c_void_p(pointer), nbytes, flags), "cuMemHostRegister")


def host_unregister(pointer: int) -> None:
    _check(_lib().cuMemHostUnregister(ctypes.c_void_p(pointer)), "cuMemHostUnregister")


def host_get_device_pointer(pointer: int) -> int:
    device = ctypes.c_uint64()
    _check(_lib().cuMemHostGetDevicePointer_v2(ctypes.byref(device), ctypes.c_void_p(pointer), 0),
           "cuMemHostGetDevicePointer")
    return device.value


def host_get_flags(pointer: int) -> int:
    flags = ctypes.c_uint()
    _check(_lib().cuMemHostGetFlags(ctypes.byref(flags), ctypes.c_void_p(pointer)), "cuMemHostGetFlags")
    return flags.value


# --------------------------------------------------------------------------- managed memory advice, attributes
MEM_ADVISE_SET_READ_MOSTLY = 1
MEM_ADVISE_SET_PREFERRED_LOCATION = 3
MEM_ADVISE_SET_ACCESSED_BY = 5
MEM_LOCATION_TYPE_DEVICE = 1
MEM_LOCATION_TYPE_HOST = 2
DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134  # CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, CUDA 12.2 on


class MemLocation(ctypes.Structure):
    """``CUmemLocation``: where managed memory should live or who accesses it."""

    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


def mem_advise(pointer: int, nbytes: int, advice: int, device: int | None) -> None:
    """``cuMemAdvise`` on managed memory; ``device=None`` means the CPU (the platforms lesson).

    CUDA 12.2 added ``cuMemAdvise_v2`` with a ``CUmemLocation``, which CUDA 13's ``cuMemAdvise`` is;
    drivers before it have only the version that takes a device ordinal (-1 for the CPU)."""
    lib = _lib()
    if hasattr(lib, "cuMemAdvise_v2"):
        location = MemLocation(MEM_LOCATION_TYPE_HOST, 0) if device is None else MemLocation(MEM_LOCATION_TYPE_DEVICE,
                                                                                             device)
        lib.cuMemAdvise_v2.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int, MemLocation]
        lib.cuMemAdvise_v2.restype = ctypes.c_int
        _check(lib.cuMemAdvise_v2(pointer, nbytes, advice, location), "cuMemAdvise_v2")
    else:
        lib.cuMemAdvise.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
        lib.cuMemAdvise.restype = ctypes.c_int
        _check(lib.cuMemAdvise(pointer, nbytes, advice, -1 if device is None else device), "cuMemAdvise")


def device_attribute(attribute: int, device: int = 0) -> int:
    """``cuDeviceGetAttribute`` by number, for attributes newer than PyCUDA's list; -1 if this driver lacks it."""
    lib = _lib()
    lib.cuDeviceGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
    lib.cuDeviceGetAttribute.restype = ctypes.c_int
    value = ctypes.c_int()
    return value.value if lib.cuDeviceGetAttribute(ctypes.byref(value), attribute, device) == 0 else -1
