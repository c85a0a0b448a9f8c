"""Launch kernels on the CPU with PyCUDA's calling convention (write-your-first-zero-copy-kernel; tracing:
coalesce-and-align-accesses).

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

A launch runs on a kernel thread inside the C++ runtime (cuda_cpu.h says why and how): it is
stopped after ``timeout`` seconds (``ZC_CPU_TIMEOUT``, else 60) with :class:`KernelTimeoutError`,
by Jupyter's interrupt (SIGINT) with KeyboardInterrupt, and a crash inside the kernel
(SIGFPE, SIGSEGV, a stack overflow, abort) becomes :class:`KernelCrashError`; the Python
process and the backend stay usable. A launch of more than ``ZC_CPU_MAX_THREADS`` threads
(default 2**28) is refused with an estimate of its time. On Linux a kernel's own ``new``/``delete`` (and
``std::vector``, ``std::string``) may be stopped too: the stop waits until malloc returns.

A trace's memory is capped (:class:`TraceTooLargeError` when a cap is reached, so a traced endless
loop ends in a few milliseconds rather than filling the machine's memory): one warp may make at
most ``TRACE_WARP_CAP`` accesses (24 MiB), and the requests and kept accesses of the whole trace
may hold at most ``ZC_CPU_TRACE_MB`` MiB (default 256).
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..kernels import KERNEL_DIR, files as kernel_files
from . import memory
from .compiler import build
from .errors import (CompileOptionError, CpuBackendError, KernelArgumentError, KernelArgumentWarning,
                     KernelCrashError, KernelTimeoutError, LaunchConfigError, LaunchTooLargeError, MemoryAccessError,
                     MisalignedAccessError, NullPointerError, OutOfBoundsError, ReadOnlyWriteError, TraceTooLargeError)
from .trace import INSTRUCTION_DTYPE, RECORD_DTYPE, Trace
from .transform import KernelSignature, Param, quoted_includes, transform

__all__ = ["SourceModule", "Function", "load_kernel", "launch_timeout", "max_threads", "trace_memory_cap",
           "TRACE_MAX_WARPS", "RAW_WARPS", "TRACE_WARP_CAP"]

TRACE_MAX_WARPS = 1 << 14   # warps a trace runs when max_warps is not given (the trace is then sampled)
RAW_WARPS = 32              # warps whose every access a trace keeps (Trace.accesses)
TRACE_WARP_CAP = 1 << 20    # accesses one warp may make in a trace: 32,768 per thread, 24 MiB of records
_GPU_ONLY_OPTIONS = ("nvcc", "keep", "no_extern_c", "arch", "code", "cache_dir")

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
                ("thread", ctypes.c_uint32 * 3), ("signo", ctypes.c_int32), ("sigcode", ctypes.c_int32),
                ("stack_overflow", ctypes.c_int32), ("fault_addr", ctypes.c_uint64), ("message", ctypes.c_char * 256)]


class _Launch(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("block", ctypes.c_uint32 * 3), ("max_warps", ctypes.c_uint64),
                ("tracing", ctypes.c_int32), ("raw_warps", ctypes.c_int32), ("warp_cap", ctypes.c_uint64),
                ("total_cap", ctypes.c_uint64), ("rows", ctypes.c_void_p),
                ("row_count", ctypes.c_uint64), ("raw", ctypes.c_void_p), ("raw_count", ctypes.c_uint64),
                ("trace_vec", ctypes.c_void_p), ("threads_started", ctypes.c_uint64), ("elapsed_ns", ctypes.c_uint64),
                ("err", _ErrorInfo)]


# what zc_sizeof(i) in cuda_cpu.h must return, checked when a library loads
_SIZES = {0: ("array_info", ctypes.sizeof(_ArrayInfo)), 1: ("error_info", ctypes.sizeof(_ErrorInfo)),
          2: ("launch", ctypes.sizeof(_Launch)), 3: ("trace_rec", RECORD_DTYPE.itemsize),
          4: ("instr_rec", INSTRUCTION_DTYPE.itemsize)}

_OK, _CRASHED, _CANCELLED, _TRACE_FULL = 0, 6, 7, 8


def _env_number(name: str, default: float, kind: type = float) -> Any:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(float(text)) if kind is int else float(text)
    except ValueError:
        value = -1
    if not (value > 0 and math.isfinite(value)):
        raise LaunchConfigError(f"{name}={text!r} is not a positive number; unset it or give e.g. {name}={default}.")
    return value


def launch_timeout(timeout: float | None = None) -> float:
    """Seconds a launch may run: ``timeout``, else ``$ZC_CPU_TIMEOUT``, else 60 (write-your-first-zero-copy-kernel)."""
    if timeout is None:
        return float(_env_number("ZC_CPU_TIMEOUT", 60.0))
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)) \
            or not (timeout > 0 and math.isfinite(timeout)):
        raise LaunchConfigError(f"timeout={timeout!r}: give a positive number of seconds.")
    return float(timeout)


def max_threads() -> int:
    """The most threads one launch may run: ``$ZC_CPU_MAX_THREADS``, else 2**28."""
    return int(_env_number("ZC_CPU_MAX_THREADS", 1 << 28, int))


def trace_memory_cap() -> int:
    """The most bytes a trace's requests and kept accesses may hold: ``$ZC_CPU_TRACE_MB`` MiB, else 256."""
    return int(float(_env_number("ZC_CPU_TRACE_MB", 256.0)) * (1 << 20))


def _parse_options(options: Sequence[str] | None, include_dirs: Sequence[str | os.PathLike[str]] | None,
                   name: str) -> tuple[list[str], list[Path]]:
    """PyCUDA's ``options`` and ``include_dirs`` as C++ compiler flags: -D and -I act as they do for
    nvcc, -O<n> sets the optimisation level; anything else is refused by name."""
    if isinstance(options, str):
        raise CompileOptionError(f"options must be a list of strings, e.g. options=[{options!r}], not a string.")
    flags: list[str] = []
    dirs = [Path(d) for d in (include_dirs or ())]
    items = list(options or ())
    i = 0
    while i < len(items):
        opt = items[i]
        if not isinstance(opt, str):
            raise CompileOptionError(f"options must be strings; got {opt!r}.")
        value: str | None = None
        for prefix in ("-D", "--define-macro", "-I", "--include-path"):
            if opt == prefix or opt.startswith(prefix + "=") and prefix.startswith("--"):
                if opt == prefix:
                    if i + 1 >= len(items):
                        raise CompileOptionError(f"the option {opt} of {name} needs a value after it.")
                    i += 1
                    value = items[i]
                else:
                    value = opt[len(prefix) + 1:]
                kind = prefix
                break
            if prefix in ("-D", "-I") and opt.startswith(prefix) and len(opt) > 2:
                value, kind = opt[2:], prefix
                break
        if value is None:
            if len(opt) == 3 and opt[:2] == "-O" and opt[2] in "0123s":
                flags.append(opt)
                i += 1
                continue
            raise CompileOptionError(
                f"The CPU backend does not support the compile option {opt!r} (in {name}'s options): it takes -D "
                "(define a macro), -I (an include folder) and -O<n>, as PyCUDA passes them to nvcc. Leave the "
                "others out when running on the CPU.")
        if kind in ("-D", "--define-macro"):
            macro = value.split("=", 1)[0]
            if not macro.isidentifier():
                raise CompileOptionError(f"The option {opt if opt != kind else opt + ' ' + value!r} of {name}: "
                                         f"{macro!r} is not a macro name (write -DNAME or -DNAME=value).")
            flags.append(f"-D{value}")
        else:
            dirs.append(Path(value))
        i += 1
    for d in dirs:
        if not d.is_dir():
            raise CompileOptionError(f"The include folder {d} (for {name}) does not exist.")
    for d in dirs:
        flags += ["-I", str(d.resolve())]
    return flags, [d.resolve() for d in dirs]


class SourceModule:
    """CPU stand-in for ``pycuda.compiler.SourceModule`` (write-your-first-zero-copy-kernel).

    Compiles ``source`` (CUDA C++, unchanged) with the system C++ compiler; ``name`` is
    used in error messages. ``options`` takes -D and -I (and -O<n>) as PyCUDA's does, and
    ``include_dirs`` adds include folders; any other option is refused by name. The
    GPU-only keywords (``nvcc``, ``arch``, ``code``, ``keep``, ``no_extern_c``,
    ``cache_dir``) are accepted so code can swap backends; they change nothing on the CPU.
    """

    def __init__(self, source: str, name: str | None = None, *, options: Sequence[str] | None = None,
                 include_dirs: Sequence[str | os.PathLike[str]] | None = None, **gpu_only: Any) -> None:
        unknown = sorted(set(gpu_only) - set(_GPU_ONLY_OPTIONS))
        if unknown:
            raise TypeError(f"SourceModule got unexpected keyword argument(s) {', '.join(unknown)}; it takes options=, "
                            f"include_dirs= and PyCUDA's {', '.join(_GPU_ONLY_OPTIONS)}.")
        self.source = source
        self.name = name or f"source-{hashlib.sha256(source.encode()).hexdigest()[:8]}.cu"
        flags, dirs = _parse_options(options, include_dirs, self.name)
        transformed = transform(source, self.name, include_dirs=dirs)
        self.kernels: dict[str, KernelSignature] = transformed.kernels
        headers = "\0".join(f"{path}\0{path.read_text(errors='replace')}"
                             for path in quoted_includes(source, dirs))
        self._lib = build(transformed.cpp, self.name, options=flags, key_extra=headers)
        self._check_layout()
        self._stuck: list[Any] = []   # set (holding the launch's buffers) when a kernel thread could not be stopped
        for fn_name, restype, argtypes in (("zc_wait", ctypes.c_int, [ctypes.c_int]), ("zc_cancel", None, []),
                                           ("zc_finish", ctypes.c_int, [ctypes.POINTER(_Launch)]),
                                           ("zc_free_trace", None, [ctypes.POINTER(_Launch)]),
                                           ("zc_loop_ns", ctypes.c_double, [ctypes.c_uint])):
            fn = getattr(self._lib, fn_name)
            fn.restype, fn.argtypes = restype, argtypes

    def _check_layout(self) -> None:
        sizeof = self._lib.zc_sizeof
        sizeof.restype, sizeof.argtypes = ctypes.c_ulonglong, [ctypes.c_int]
        for i, (what, size) in _SIZES.items():
            if sizeof(i) != size:
                raise CpuBackendError(f"cuda_cpu.h's struct {what} has {sizeof(i)} bytes but runtime.py expects {size}: "
                                      "the two files disagree. Update both together (a partial update of helpers/?).")

    def get_function(self, name: str) -> "Function":
        """The kernel ``name`` as a callable (PyCUDA's ``mod.get_function``)."""
        if name not in self.kernels:
            known = ", ".join(self.kernels) or "none"
            raise CpuBackendError(f"No __global__ function named {name!r} in {self.name} (kernels there: {known}).")
        return Function(self, self.kernels[name])


_modules: dict[tuple[str, str], SourceModule] = {}
_launch_lock = threading.Lock()  # a compiled module keeps its launch state in globals: one launch at a time


def load_kernel(file_stem: str, function_name: str) -> "Function":
    """The kernel ``function_name`` of helpers/kernels/<file_stem>.cu, compiled for the CPU
    (write-your-first-zero-copy-kernel)."""
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
    """A kernel of a :class:`SourceModule`; call it like a PyCUDA function (write-your-first-zero-copy-kernel)."""

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
        self._ns_per_thread: float | None = None   # measured by this kernel's last launch

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
            self._check_element_type(where, p, arg)
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

    @staticmethod
    def _check_element_type(where: str, p: Param, array: np.ndarray) -> None:
        """Warn when an array's elements are not the pointee's type (e.g. float64 for float*)."""
        expected = _SCALAR_TYPES.get(p.value_type)
        if expected is None or np.dtype(expected).itemsize == 1:
            return  # a struct, or bytes: any array may be viewed so
        want = np.dtype(expected)
        same_kind = (want.kind in "iu") == (array.dtype.kind in "iu") and (want.kind == "f") == (array.dtype.kind == "f")
        if array.dtype.itemsize != want.itemsize or not same_kind:
            warnings.warn(f"{where} points to {p.value_type} ({want.itemsize} bytes each) but gets a {array.dtype} "
                          f"array: the kernel will read its bytes as {p.value_type}s and see wrong values. Pass "
                          f"a.astype(np.{want.name}).", KernelArgumentWarning, stacklevel=5)

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
    def _check_size(self, threads: int, b: tuple[int, ...], g: tuple[int, ...], limit: float) -> None:
        """Refuse a launch of more than max_threads() threads, with an estimate of its time."""
        cap = max_threads()
        if threads <= cap:
            return
        if self._ns_per_thread is not None:
            ns, basis = self._ns_per_thread, f"{self.name}'s last launch here took {self._ns_per_thread:.2g} ns per thread"
        else:
            with _launch_lock:
                ns = float(self.module._lib.zc_loop_ns(1 << 20))
            basis = f"at least: the launch loop alone takes {ns:.2g} ns per thread here, before the kernel's own work"
        seconds = threads * ns * 1e-9
        raise LaunchTooLargeError(
            f"{self.name} with grid {g} and block {b} is {threads:,} threads, more than the CPU backend runs in one "
            f"launch ({cap:,}; ZC_CPU_MAX_THREADS). The CPU runs them one after another: about {seconds:,.0f} s "
            f"({basis}; the timeout is {limit:g} s). Try the kernel on a smaller n here (a grid-stride loop lets a "
            "smaller grid cover every element), trace with max_warps=, or raise ZC_CPU_MAX_THREADS and timeout= "
            "if you mean it.")

    def _run(self, args: Sequence[Any], block: Any, grid: Any, tracing: bool, max_warps: int | None,
             timeout: float | None) -> _Launch:
        b, g = _launch_dims(block, grid)
        limit = launch_timeout(timeout)
        threads = b[0] * b[1] * b[2] * g[0] * g[1] * g[2]
        if max_warps:
            threads = min(threads, max_warps * 32)
        self._check_size(threads, b, g, limit)
        slots, infos, keep, arrays = self._marshal(args)
        launch = _Launch()
        launch.grid[:] = g
        launch.block[:] = b
        launch.max_warps = int(max_warps or 0)
        launch.tracing = int(tracing)
        launch.raw_warps = RAW_WARPS if tracing else 0
        if tracing:
            launch.warp_cap, launch.total_cap = TRACE_WARP_CAP, trace_memory_cap()
        lib = self.module._lib
        with _launch_lock:
            if self.module._stuck:
                raise CpuBackendError(
                    f"An earlier launch from {self.module.name} could not be stopped and still runs; its kernels cannot "
                    "launch again in this Python process. Restart the kernel (Jupyter: Kernel > Restart).")
            rc = self._entry(ctypes.byref(launch), ctypes.cast(slots, ctypes.c_void_p), infos)
            if rc:
                raise CpuBackendError(f"The CPU backend could not start a thread for {self.name}: {os.strerror(rc)}.")
            interrupted = timed_out = False
            deadline = time.monotonic() + limit
            try:
                while not lib.zc_wait(50):
                    if time.monotonic() >= deadline:
                        timed_out = True
                        break
            except KeyboardInterrupt:
                interrupted = True
            if (interrupted or timed_out) and not _stop(lib):
                self.module._stuck.append((launch, slots, infos, keep))
                raise CpuBackendError(
                    f"{self.name} (grid {g}, block {b}) did not stop when asked: its thread still runs. Restart the "
                    "Python kernel (Jupyter: Kernel > Restart) before launching from this module again.")
            lib.zc_finish(ctypes.byref(launch))
        del keep
        kind = int(launch.err.kind)
        if kind == _OK and launch.threads_started >= 1024:
            self._ns_per_thread = launch.elapsed_ns / launch.threads_started
        if kind:
            lib.zc_free_trace(ctypes.byref(launch))
        if interrupted:
            raise KeyboardInterrupt(f"{self.name} (grid {g}, block {b}) was interrupted and stopped; "
                                    f"{self._state(launch)}")
        if timed_out:
            raise KernelTimeoutError(
                f"{self.name} (grid {g}, block {b}) was still running after {limit:g} s and was stopped. "
                f"{self._state(launch)} An endless loop? Check each loop's condition and step. A launch that "
                "needs longer: pass timeout=seconds, or set ZC_CPU_TIMEOUT.",
                kernel=self.name, grid=g, block=b, timeout=limit)  # type: ignore[arg-type]
        if kind == _TRACE_FULL:
            raise self._trace_full(launch, g, b)
        if kind:
            raise self._error(launch.err, arrays)
        return launch

    def _trace_full(self, launch: _Launch, g: tuple[int, ...], b: tuple[int, ...]) -> TraceTooLargeError:
        """The error of a trace stopped at one of its memory caps (cuda_cpu.h's TRACE_FULL)."""
        err = launch.err
        per_warp, limit, warp = err.param == 0, int(err.size), int(err.offset)
        what = _warp_cap_reached(warp, limit, err) if per_warp else _total_cap_reached(warp, limit)
        return TraceTooLargeError(f"Tracing {self.name} (grid {g}, block {b}) stopped: {what} {self._state(launch)}",
                                  kernel=self.name, cap="warp" if per_warp else "total", limit=limit, warp=warp)

    @staticmethod
    def _state(launch: _Launch) -> str:
        """What the arrays hold after a launch that ended early."""
        if launch.threads_started == 0:
            return "No thread had started: the arrays are as they were."
        block = tuple(int(v) for v in launch.err.block)
        thread = tuple(int(v) for v in launch.err.thread)
        return (f"The arrays it writes are partly written: the threads before thread {thread} of block {block} ran "
                "to the end (launch order: blocks x fastest, then threads x fastest), that thread stopped midway, "
                "and later threads did not run.")

    def __call__(self, *args: Any, block: Sequence[int] | None = None, grid: Sequence[int] | None = None,
                 shared: int = 0, stream: Any = None, time_kernel: bool = False,
                 timeout: float | None = None) -> float | None:
        """Run the kernel; with ``time_kernel=True`` return the CPU seconds it took (like PyCUDA).

        ``stream`` is accepted and ignored: a CPU launch finishes before the call returns.
        ``timeout`` (seconds; default ``$ZC_CPU_TIMEOUT`` or 60) stops a launch that runs longer.
        """
        if shared:
            raise CpuBackendError("shared= asks for dynamic shared memory, which the CPU backend does not support.")
        launch = self._run(args, block, grid, False, None, timeout)
        self._free(ctypes.byref(launch))
        return launch.elapsed_ns * 1e-9 if time_kernel else None

    def trace(self, *args: Any, block: Sequence[int] | None = None, grid: Sequence[int] | None = None,
              max_warps: int | None = None, timeout: float | None = None) -> Trace:
        """Run the kernel recording every load and store, grouped per warp-level request (coalesce-and-align-accesses).

        Only the first ``max_warps`` warps run (blocks in order, x fastest; default
        ``TRACE_MAX_WARPS``, so that a trace's memory and time stay bounded); the trace's
        ``scale`` then extrapolates to the whole launch. Stores of traced warps do happen.
        The requests are counted in the C++ runtime as each warp ends; ``Trace.accesses``
        keeps the single accesses of the first ``RAW_WARPS`` warps only. A warp that makes more
        than ``TRACE_WARP_CAP`` accesses, or a trace that would hold more than ``$ZC_CPU_TRACE_MB``
        MiB (default 256), stops with :class:`TraceTooLargeError`.
        """
        if max_warps is not None and (isinstance(max_warps, bool) or not isinstance(max_warps, (int, np.integer))
                                      or max_warps < 1):
            raise LaunchConfigError(f"max_warps={max_warps!r}: give a positive number of warps, or leave it out.")
        warps = int(max_warps) if max_warps is not None else TRACE_MAX_WARPS
        launch = self._run(args, block, grid, True, warps, timeout)
        try:
            rows = _copy(launch.rows, int(launch.row_count), INSTRUCTION_DTYPE)
            raw = _copy(launch.raw, int(launch.raw_count), RECORD_DTYPE)
        finally:
            self._free(ctypes.byref(launch))
        b, g = _launch_dims(block, grid)
        return Trace.from_rows(rows, raw, kernel=self.name, block=b, grid=g,
                               param_names=[p.name for p in self.signature.params], max_warps=warps)

    def _error(self, err: _ErrorInfo, arrays: list[tuple[np.ndarray | None, int]]) -> CpuBackendError:
        block = tuple(int(v) for v in err.block)
        thread = tuple(int(v) for v in err.thread)
        who = f"in kernel {self.name} by thread {thread} in block {block}"
        if err.kind == _CRASHED:
            return self._crash(err, block, thread)  # type: ignore[arg-type]
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
                   parameter=pname, byte_offset=offset, size=size, is_store=bool(err.is_store),
                   array_bytes=None if array is None else int(array.nbytes))

    def _crash(self, err: _ErrorInfo, block: tuple[int, int, int], thread: tuple[int, int, int]) -> KernelCrashError:
        signo = int(err.signo)
        try:
            name = signal.Signals(signo).name
        except ValueError:
            name = f"signal {signo}"
        if err.stack_overflow:
            what = ("a stack overflow: recursion too deep, or a local array too large for the kernel thread's 64 MiB "
                    "stack (a GPU thread's stack is far smaller still)")
        else:
            what = _SIGNAL_MEANING.get(name, "a crash")
        launch = _Launch()
        launch.err = err
        launch.threads_started = 1
        message = (f"Kernel {self.name} crashed with {name} in thread {thread} of block {block}: {what}. "
                   f"{self._state(launch)} The process and the backend are fine; fix the kernel and launch again.")
        return KernelCrashError(message, kernel=self.name, signal_name=name, block=block, thread=thread)


_SIGNAL_MEANING = {
    "SIGFPE": "an arithmetic fault, an integer division (or %) by zero, or INT_MIN / -1",
    "SIGSEGV": ("an access to memory that is not the kernel's: a local array indexed outside its bounds, or a raw "
                "pointer (from .get() or a cast) that points nowhere; accesses through the kernel's pointer "
                "parameters are checked and would have said which"),
    "SIGBUS": ("a bus error: an access to memory that is not the kernel's: a local array indexed far outside its "
               "bounds, or a raw pointer (from .get() or a cast) that points nowhere"),
    "SIGILL": ("an illegal instruction: __builtin_trap(), or code the compiler proved unreachable (a function "
               "that ends without returning its value?)"),
    "SIGABRT": "abort(): a failed check in C++ code (abort, std::terminate, a failed assert)",
}


def _warp_cap_reached(warp: int, limit: int, err: _ErrorInfo) -> str:
    """Why a trace stopped at its cap per warp, and what to do."""
    who = f"thread {tuple(int(v) for v in err.thread)} of block {tuple(int(v) for v in err.block)}"
    return (f"warp {warp} ({who}) reached {limit:,} loads and stores, the most one warp may make in a trace "
            f"(TRACE_WARP_CAP: {limit // 32:,} per thread, {limit * RECORD_DTYPE.itemsize / 2**20:g} MiB of records). "
            "A thread that never stops loading or storing is the usual cause: an endless loop? Check each loop's "
            "condition and step. A kernel that really makes that many accesses per thread: trace it on a smaller "
            "problem (fewer iterations per thread).")


def _total_cap_reached(warp: int, limit: int) -> str:
    """Why a trace stopped at its total cap, and what to do."""
    return (f"its requests and kept accesses reached {limit / 2**20:g} MiB at warp {warp}, the most one trace may "
            f"hold (ZC_CPU_TRACE_MB). Trace fewer warps (e.g. max_warps={max(1, warp // 2)}), a smaller grid or less "
            "work per thread; an endless loop in a thread? Check each loop's condition and step. Raise "
            "ZC_CPU_TRACE_MB only if you mean it: a trace of that size takes that much memory again in Python.")


def _copy(address: int | None, count: int, dtype: np.dtype) -> np.ndarray:
    """A numpy copy of ``count`` records of ``dtype`` at ``address`` (the C++ side frees its own)."""
    if not count or not address:
        return np.zeros(0, dtype)
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(raw, dtype).copy()


def _stop(lib: ctypes.CDLL) -> bool:
    """Ask a running launch to stop, again every 200 ms, for up to 5 s; True once it has ended.

    A further interrupt while stopping is swallowed: the stop goes on (the caller re-raises)."""
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        try:
            lib.zc_cancel()
            if lib.zc_wait(200):
                return True
        except KeyboardInterrupt:
            continue
    return False
