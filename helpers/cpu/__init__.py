"""Run the course's CUDA kernels on the CPU and trace their memory accesses
(write-your-first-zero-copy-kernel and coalesce-and-align-accesses).

    from helpers import cpu
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    add(a, b, c, np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
    t = cpu.load_kernel("access_pattern", "read_strided").trace(..., max_warps=64)

A learner's kernel cannot take the notebook down: a launch stops after ``timeout=`` seconds
(``ZC_CPU_TIMEOUT``, else 60; KernelTimeoutError), on Jupyter's interrupt (KeyboardInterrupt),
and a crash inside it (division by zero, a stray access, a stack overflow, abort) becomes a
KernelCrashError; the next launch works. A launch of more than ``ZC_CPU_MAX_THREADS``
threads is refused with an estimate of its time (LaunchTooLargeError); a trace whose memory
would pass its caps (an endless loop while tracing) stops with TraceTooLargeError.

Submodules: runtime (launching), transform (source rewrite + feature scan), compiler
(build + cache), memory (address registry), trace, driver (the few ``pycuda.driver`` names
write-your-first-zero-copy-kernel
writes, for replay). The tools of coalesce-and-align-accesses and model-zero-copy-reads, built on the traces,
live outside the backend: helpers.pcie_model, helpers.sector_explorer, helpers.coalescing_exercise.
"""

from .errors import (ArraySizeError, BuildCacheError, CompileOptionError, CpuBackendError, CxxCompilerNotFoundError,
                     KernelArgumentError, KernelArgumentWarning, KernelCompileError, KernelCrashError,
                     KernelTimeoutError, LaunchConfigError, LaunchTooLargeError, MemoryAccessError,
                     MisalignedAccessError, NullPointerError, OutOfBoundsError, ReadOnlyWriteError,
                     TraceTooLargeError, UnknownPointerError, UnsupportedFeatureError)
from .memory import (In, InOut, Out, device_pointer, free, mapped_empty, pinned_bytes_live, register, synchronize,
                     unregister)
from .runtime import Function, SourceModule, load_kernel
from .trace import Trace

__all__ = [
    "SourceModule", "Function", "load_kernel", "Trace",
    "register", "unregister", "device_pointer", "mapped_empty", "free", "synchronize", "pinned_bytes_live", "In", "Out", "InOut",
    "CpuBackendError", "CxxCompilerNotFoundError", "KernelCompileError", "UnsupportedFeatureError",
    "KernelArgumentError", "UnknownPointerError", "LaunchConfigError", "MemoryAccessError", "OutOfBoundsError",
    "MisalignedAccessError", "ReadOnlyWriteError", "NullPointerError",
    "KernelCrashError", "KernelTimeoutError", "LaunchTooLargeError", "TraceTooLargeError", "BuildCacheError",
    "CompileOptionError",
    "ArraySizeError", "KernelArgumentWarning",
]
