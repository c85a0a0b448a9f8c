"""The few CUDA driver calls PyCUDA does not wrap usably, through ctypes (lessons 04 and 13).

``cuMemHostRegister`` / ``cuMemHostUnregister`` / ``cuMemHostGetDevicePointer`` / ``cuMemHostGetFlags``.
The calls act on the CUDA context current in this thread, which is the course's
(:func:`helpers.gpu.context`).
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
