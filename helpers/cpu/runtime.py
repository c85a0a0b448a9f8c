"""Launch kernels on the CPU with PyCUDA's calling convention (lesson 04; tracing: lesson 07).

``SourceModule(src).get_function("k")(a, b, np.int32(n), block=(256, 1, 1), grid=(g, 1))``
runs every thread of every block, one after another (threads of a block in linear order,
x fastest; warp w of a block is its threads 32w .. 32w+31).

Arguments, as PyCUDA takes them:
  * pointer parameters: a numpy array (its data), an ``np.intp``/``np.uint64`` address inside
    a known array (see memory.py), ``None`` (a null pointer), or ``In/Out/InOut(a)``;
  * scalar parameters: numpy scalars of the declared type (``np.int32`` for ``int``,
    ``np.uint64`` for ``unsigned long long`` ...). A Python int or float is an error, as in
    PyCUDA, which cannot tell how many bytes to pass. A numpy scalar whose size or kind
    (integer vs floating) differs from the declared type is an error too (PyCUDA would
    silently pass the wrong bytes); signed/unsigned of the same size is accepted.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
import time
from typing import Any, Sequence

import numpy as np

from ..kernels import KERNEL_DIR, files as kernel_files
from . import memory
from .compiler import build
from .errors import (KernelArgumentError, LaunchConfigError, MemoryAccessError, MisalignedAccessError,
                     NullPointerError, OutOfBoundsError, ReadOnlyWriteError, CpuBackendError)
from .trace import RECORD_DTYPE, Trace
from .transform import KernelSignature, Param, transform

__all__ = ["SourceModule", "Function", "load_kernel"]

_SCALAR_TYPES: dict[str, str] = {
    "float": "f4", "double": "f8", "bool": "?",
    "char": "i1", "signed char": "i1", "unsigned char": "u1", "int8_t": "i1", "uint8_t": "u1",
    "short": "i2", "short int": "i2", "unsigned short": "u2", "int16_t": "i2", "uint16_t": "u2",
    "int": "i4", "signed": "i4", "signed int": "i4", "int32_t": "i4",
    "unsigned": "u4", "unsigned int": "u4", "uint32_t": "u4",
    "long": "i8", "long int": "i8", "long long": "i8", "long long int": "i8", "int64_t": "i8",
    "ptrdiff_t": "i8", "intptr_t": "i8",
    "unsigned long": "u8", "unsigned long int": "u8", "unsigned long long": "u8", "unsigned long long int": "u8",
    "uint64_t": "u8", "size_t": "u8", "uintptr_t": "u8",
}


class _ArrayInfo(ctypes.Structure):
    _fields_ = [("base", ctypes.c_uint64), ("nbytes", ctypes.c_uint64), ("param", ctypes.c_int32),
                ("flags", ctypes.c_int32)]


class _ErrorInfo(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("param", ctypes.c_int32), ("offset", ctypes.c_int64),
                ("size", ctypes.c_uint64), ("is_store", ctypes.c_int32), ("block", ctypes.c_uint32 * 3),
                ("thread", ctypes.c_uint32 * 3), ("message", ctypes.c_char * 256)]


class _Launch(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("block", ctypes.c_uint32 * 3), ("max_warps", ctypes.c_uint64),
                ("tracing", ctypes.c_int32), ("pad", ctypes.c_int32), ("trace_data", ctypes.c_void_p),
                ("trace_count", ctypes.c_uint64), ("trace_vec", ctypes.c_void_p), ("err", _ErrorInfo)]


class SourceModule:
    """CPU stand-in for ``pycuda.compiler.SourceModule`` (lesson 04).

    Compiles ``source`` (CUDA C++, unchanged) with the system C++ compiler; ``name`` is
    used in error messages. PyCUDA's compile options (``options=``, ``no_extern_c=``,
    ``arch=`` ...) are accepted and ignored, so code can swap backends.
    """

    def __init__(self, source: str, name: str | None = None, **pycuda_options: Any) -> None:
        self.source = source
        self.name = name or f"source-{hashlib.sha256(source.encode()).hexdigest()[:8]}.cu"
        transformed = transform(source, self.name)
        self.kernels: dict[str, KernelSignature] = transformed.kernels
        self._lib = build(transformed.cpp, self.name)

    def get_function(self, name: str) -> "Function":
        """The kernel ``name`` as a callable (PyCUDA's ``mod.get_function``)."""
        if name not in self.kernels:
            known = ", ".join(self.kernels) or "none"
            raise CpuBackendError(f"No __global__ function named {name!r} in {self.name} (kernels there: {known}).")
        return Function(self, self.kernels[name])


_modules: dict[tuple[str, str], SourceModule] = {}
_launch_lock = threading.Lock()  # a compiled module keeps its launch state in globals: one launch at a time


def load_kernel(file_stem: str, function_name: str) -> "Function":
    """The kernel ``function_name`` of helpers/kernels/<file_stem>.cu, compiled for the CPU (lesson 04)."""
    path = KERNEL_DIR / f"{file_stem}.cu"
    if not path.is_file():
        raise CpuBackendError(f"No kernel file {path.name} in {KERNEL_DIR} (available: {', '.join(kernel_files())}).")
    text = path.read_text()
    key = (path.name, text)
    if key not in _modules:
        _modules[key] = SourceModule(text, name=path.name)
    return _modules[key].get_function(function_name)


def _launch_dims(block: Sequence[int] | None, grid: Sequence[int] | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if block is None:
        raise LaunchConfigError("Pass block=(x, y, z), the threads per block, as PyCUDA requires.")
    b, g = tuple(block), tuple(grid if grid is not None else (1, 1))
    if len(b) != 3:
        raise LaunchConfigError(f"block must have 3 entries (x, y, z), got {b!r}.")
    if not 1 <= len(g) <= 3:
        raise LaunchConfigError(f"grid must have 1 to 3 entries, got {g!r}.")
    g = g + (1,) * (3 - len(g))
    if not all(isinstance(v, (int, np.integer)) and v >= 1 for v in b + g):
        raise LaunchConfigError(f"block {b!r} and grid {g!r} must be positive integers.")
    b, g = tuple(int(v) for v in b), tuple(int(v) for v in g)
    if b[0] * b[1] * b[2] > 1024 or b[0] > 1024 or b[1] > 1024 or b[2] > 64:
        raise LaunchConfigError(f"block {b} has too many threads: at most 1024 per block (x, y <= 1024, z <= 64), "
                                "as on every CUDA GPU.")
    if g[0] > 2**31 - 1 or g[1] > 65535 or g[2] > 65535:
        raise LaunchConfigError(f"grid {g} exceeds CUDA's limits (x < 2**31, y and z <= 65535).")
    return b, g


def _describe(array: np.ndarray | None) -> str:
    if array is None:
        return "a null pointer"
    return f"{array.dtype} array of shape {array.shape}, {array.nbytes} bytes"


class Function:
    """A kernel of a :class:`SourceModule`; call it like a PyCUDA function (lesson 04)."""

    def __init__(self, module: SourceModule, signature: KernelSignature) -> None:
        self.module = module
        self.signature = signature
        self.name = signature.name
        self._entry = getattr(module._lib, f"zc_launch_{self.name}")
        self._entry.restype = ctypes.c_int
        self._entry.argtypes = [ctypes.POINTER(_Launch), ctypes.c_void_p, ctypes.POINTER(_ArrayInfo)]
        n = len(signature.params)
        self._sizes = list((ctypes.c_ulonglong * (n + 1)).in_dll(module._lib, f"zc_sizes_{self.name}"))[:n]
        self._free = module._lib.zc_free_trace
        self._free.argtypes = [ctypes.POINTER(_Launch)]

    def __repr__(self) -> str:
        params = ", ".join(f"{p.type} {p.name}" for p in self.signature.params)
        return f"<CPU kernel {self.name}({params}) from {self.module.name}>"

    # ------------------------------------------------------------------ arguments
    def _pointer(self, i: int, p: Param, arg: Any) -> tuple[int, np.ndarray | None, int]:
        """(address, array, byte offset of address in array) of a pointer argument."""
        where = f"argument {i} ({p.name!r}, declared {p.type}) of {self.name}"
        if isinstance(arg, memory.In):
            arg = arg.array
        if arg is None:
            return 0, None, 0
        if isinstance(arg, np.ndarray):
            try:
                memory.register(arg)
            except KernelArgumentError as exc:
                raise KernelArgumentError(f"{where}: {exc}") from None
            return int(arg.ctypes.data), arg, 0
        if isinstance(arg, np.integer):
            try:
                array, offset = memory.lookup(int(arg))
            except KernelArgumentError as exc:
                raise type(exc)(f"{where}: {exc}") from None
            return int(arg), array, offset
        if isinstance(arg, int) and not isinstance(arg, bool):
            raise KernelArgumentError(f"{where} is a pointer; pass the numpy array or an address as np.intp({arg}).")
        raise KernelArgumentError(f"{where} is a pointer; got {type(arg).__name__}. Pass a numpy array or an np.intp address.")

    def _scalar(self, i: int, p: Param, arg: Any) -> bytes:
        declared = p.value_type
        expected = _SCALAR_TYPES.get(declared)
        where = f"argument {i} ({p.name!r}) of {self.name} is declared {p.type}"
        suggestion = f"np.{np.dtype(expected).name}" if expected else "a numpy scalar of that size"
        if isinstance(arg, (np.ndarray, memory.In)):
            raise KernelArgumentError(f"{where}, not a pointer; pass one value as {suggestion}(...).")
        if not isinstance(arg, np.generic):
            raise KernelArgumentError(
                f"{where}; pass {suggestion}({arg!r}), not a Python {type(arg).__name__}: like PyCUDA, the backend "
                "needs the numpy type to know how many bytes to pass.")
        if arg.dtype.itemsize != self._sizes[i]:
            raise KernelArgumentError(f"{where} ({self._sizes[i]} bytes) but got {arg.dtype} ({arg.dtype.itemsize} bytes); "
                                      f"pass {suggestion}(...).")
        if expected and np.dtype(expected).kind in "fb" and arg.dtype.kind != np.dtype(expected).kind \
                or expected and np.dtype(expected).kind in "iu" and arg.dtype.kind not in "iu":
            raise KernelArgumentError(f"{where} but got {arg.dtype}; pass {suggestion}(...).")
        return arg.tobytes()

    def _marshal(self, args: Sequence[Any]) -> tuple[Any, Any, list[Any], list[tuple[np.ndarray | None, int]]]:
        params = self.signature.params
        if len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise KernelArgumentError(f"{self.name} takes {len(params)} arguments ({names}), got {len(args)}.")
        slots = (ctypes.c_void_p * max(1, len(params)))()
        infos = (_ArrayInfo * max(1, len(params)))()
        keep: list[Any] = []
        arrays: list[tuple[np.ndarray | None, int]] = []
        for i, (p, arg) in enumerate(zip(params, args)):
            if p.is_pointer:
                address, array, offset = self._pointer(i, p, arg)
                if array is not None:
                    base = int(array.ctypes.data)
                    infos[i] = _ArrayInfo(base, array.nbytes, i, 0 if array.flags.writeable else 1)
                else:
                    infos[i] = _ArrayInfo(0, 0, i, 0)
                buf = ctypes.create_string_buffer(np.uint64(address).tobytes(), 8)
                arrays.append((array, offset))
            else:
                buf = ctypes.create_string_buffer(self._scalar(i, p, arg), max(1, self._sizes[i]))
                infos[i] = _ArrayInfo(0, 0, i, 0)
                arrays.append((None, 0))
            keep.append(buf)
            slots[i] = ctypes.cast(buf, ctypes.c_void_p)
        return slots, infos, keep, arrays

    # ------------------------------------------------------------------ launching
    def _run(self, args: Sequence[Any], block: Any, grid: Any, tracing: bool, max_warps: int | None) -> tuple[_Launch, float]:
        b, g = _launch_dims(block, grid)
        slots, infos, keep, arrays = self._marshal(args)
        launch = _Launch()
        launch.grid[:] = g
        launch.block[:] = b
        launch.max_warps = int(max_warps or 0)
        launch.tracing = int(tracing)
        with _launch_lock:
            start = time.perf_counter()
            kind = self._entry(ctypes.byref(launch), ctypes.cast(slots, ctypes.c_void_p), infos)
            elapsed = time.perf_counter() - start
        del keep
        if kind:
            self._free(ctypes.byref(launch))
            raise self._error(launch.err, arrays)
        return launch, elapsed

    def __call__(self, *args: Any, block: Sequence[int] | None = None, grid: Sequence[int] | None = None,
                 shared: int = 0, stream: Any = None, time_kernel: bool = False) -> float | None:
        """Run the kernel; with ``time_kernel=True`` return the CPU seconds it took (like PyCUDA).

        ``stream`` is accepted and ignored: a CPU launch finishes before the call returns.
        """
        if shared:
            raise CpuBackendError("shared= asks for dynamic shared memory, which the CPU backend does not support.")
        launch, elapsed = self._run(args, block, grid, False, None)
        self._free(ctypes.byref(launch))
        return elapsed if time_kernel else None

    def trace(self, *args: Any, block: Sequence[int] | None = None, grid: Sequence[int] | None = None,
              max_warps: int | None = None) -> Trace:
        """Run the kernel recording every load and store, grouped per warp-level request (lesson 07).

        ``max_warps`` runs only the first N warps (blocks in order, x fastest); the trace's
        ``scale`` then extrapolates to the whole launch. Stores of traced warps do happen.
        """
        launch, _ = self._run(args, block, grid, True, max_warps)
        try:
            n = int(launch.trace_count)
            if n:
                raw = (ctypes.c_char * (n * RECORD_DTYPE.itemsize)).from_address(launch.trace_data)
                records = np.frombuffer(raw, RECORD_DTYPE).copy()
            else:
                records = np.zeros(0, RECORD_DTYPE)
        finally:
            self._free(ctypes.byref(launch))
        b, g = _launch_dims(block, grid)
        return Trace.from_records(records, kernel=self.name, block=b, grid=g,
                                  param_names=[p.name for p in self.signature.params], max_warps=max_warps)

    def _error(self, err: _ErrorInfo, arrays: list[tuple[np.ndarray | None, int]]) -> CpuBackendError:
        block = tuple(int(v) for v in err.block)
        thread = tuple(int(v) for v in err.thread)
        who = f"in kernel {self.name} by thread {thread} in block {block}"
        if err.kind == 5:
            return CpuBackendError(f"A C++ exception {who}: {err.message.decode(errors='replace')}")
        param = self.signature.params[err.param] if 0 <= err.param < len(self.signature.params) else None
        array, ptr_offset = arrays[err.param] if param else (None, 0)
        pname = param.name if param else "?"
        op = "write" if err.is_store else "read"
        offset, size = int(err.offset), int(err.size)
        cls: type[MemoryAccessError]
        if err.kind == 4:
            cls, what = NullPointerError, f"through parameter {pname!r}, which is a null pointer (None was passed)"
        else:
            item = array.dtype.itemsize if array is not None else 1
            index = offset // item if offset >= 0 else -((-offset + item - 1) // item)
            elem = f"byte offset {offset} (element {index}"
            elem += f" of {array.dtype}; the pointer starts at byte {ptr_offset})" if ptr_offset else f" of {array.dtype})" \
                if array is not None else ")"
            desc = f"parameter {pname!r} ({_describe(array)})"
            if err.kind == 1:
                cls, what = OutOfBoundsError, f"{elem} is outside {desc}"
            elif err.kind == 2:
                cls, what = MisalignedAccessError, f"{elem} of {desc} is not a multiple of the {size}-byte access's alignment"
            else:
                cls, what = ReadOnlyWriteError, f"{elem} of {desc}: the numpy array is not writeable"
        message = f"Invalid __global__ {op} of size {size} bytes {who}: {what}."
        return cls(message, kernel=self.name, block=block, thread=thread,  # type: ignore[arg-type]
                   parameter=pname, byte_offset=offset, size=size, is_store=bool(err.is_store))
