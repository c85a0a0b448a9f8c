"""Errors of the CPU backend, each naming what went wrong (write-your-first-zero-copy-kernel and
coalesce-and-align-accesses)."""

from __future__ import annotations

from ..errors import CourseError
from ..i18n import CHINESE, _, language

__all__ = [
    "CpuBackendError",
    "CxxCompilerNotFoundError",
    "KernelCompileError",
    "UnsupportedFeatureError",
    "KernelArgumentError",
    "UnknownPointerError",
    "LaunchConfigError",
    "MemoryAccessError",
    "OutOfBoundsError",
    "MisalignedAccessError",
    "ReadOnlyWriteError",
    "NullPointerError",
    "BuildCacheError",
    "KernelCrashError",
    "KernelTimeoutError",
    "LaunchTooLargeError",
    "TraceTooLargeError",
    "CompileOptionError",
    "ArraySizeError",
    "KernelArgumentWarning",
]


class CpuBackendError(CourseError):
    """Base class of every error the CPU backend raises on purpose."""


class CxxCompilerNotFoundError(CpuBackendError):
    """No C++ compiler (c++, g++ or clang++) is on PATH."""


class KernelCompileError(CpuBackendError):
    """The C++ compiler rejected the kernel source; the message carries its output."""


class UnsupportedFeatureError(CpuBackendError):
    """The kernel uses a CUDA feature the CPU backend does not emulate (``feature`` names it)."""

    def __init__(self, feature: str, line: int | None, explanation: str, source_name: str = "kernel source") -> None:
        self.feature = feature
        self.line = line
        where = f" (line {line} of {source_name})" if line else ""
        super().__init__(f"The CPU backend does not support {feature}{where}: {explanation}")


class KernelArgumentError(CpuBackendError, TypeError):
    """An argument does not fit the kernel's parameter (wrong count, type or size)."""


class UnknownPointerError(KernelArgumentError):
    """A pointer argument is an address inside no array the backend knows."""


class LaunchConfigError(CpuBackendError, ValueError):
    """``block`` or ``grid`` is not a valid launch configuration."""


class MemoryAccessError(CpuBackendError):
    """A thread accessed memory it must not; attributes say where (like compute-sanitizer)."""

    def __init__(self, message: str, *, kernel: str, block: tuple[int, int, int], thread: tuple[int, int, int],
                 parameter: str, byte_offset: int, size: int, is_store: bool,
                 array_bytes: int | None = None) -> None:
        super().__init__(message)
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.parameter = parameter
        self.byte_offset = byte_offset
        self.size = size
        self.is_store = is_store
        self.array_bytes = array_bytes   # the size of the array behind the parameter, when known

    def gloss(self) -> str:
        """One line saying the error in the chosen language, for an edition whose language is not the message's
        (coalesce-and-align-accesses); empty in English, where the message says it."""
        return ""


class OutOfBoundsError(MemoryAccessError):
    """A load or store outside the array the pointer came from."""

    def gloss(self) -> str:
        if language() != CHINESE or self.array_bytes is None:
            return ""
        said = (_("That is: thread {thread} of block {block} wrote {size} bytes at byte {offset} of parameter "
                  "{parameter}, an array of {nbytes} bytes: outside it.") if self.is_store else
                _("That is: thread {thread} of block {block} read {size} bytes at byte {offset} of parameter "
                  "{parameter}, an array of {nbytes} bytes: outside it."))
        return said.format(thread=self.thread, block=self.block, size=self.size, offset=self.byte_offset,
                           parameter=self.parameter, nbytes=self.array_bytes)


class MisalignedAccessError(MemoryAccessError):
    """A load or store of an N-byte type at an address that is not a multiple of its alignment."""


class ReadOnlyWriteError(MemoryAccessError):
    """A store into a numpy array that is not writeable."""


class NullPointerError(MemoryAccessError):
    """A load or store through a null pointer (an argument passed as None)."""


class BuildCacheError(CpuBackendError):
    """The build cache folder cannot be used (not private, read-only or full); set ``ZC_CPU_CACHE``."""


class KernelCrashError(CpuBackendError):
    """A thread of the kernel crashed (division by zero, a stray access, a stack overflow, abort)."""

    def __init__(self, message: str, *, kernel: str, signal_name: str, block: tuple[int, int, int] | None,
                 thread: tuple[int, int, int] | None) -> None:
        super().__init__(message)
        self.kernel = kernel
        self.signal_name = signal_name
        self.block = block
        self.thread = thread


class KernelTimeoutError(CpuBackendError, TimeoutError):
    """A launch still running after its timeout was stopped."""

    def __init__(self, message: str, *, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int],
                 timeout: float) -> None:
        super().__init__(message)
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.timeout = timeout


class LaunchTooLargeError(LaunchConfigError):
    """A launch with more threads than the CPU backend runs in reasonable time (``ZC_CPU_MAX_THREADS``)."""


class TraceTooLargeError(CpuBackendError):
    """A trace reached its memory cap and was stopped (coalesce-and-align-accesses): one warp made more than
    ``TRACE_WARP_CAP`` accesses (``cap == "warp"``), or the trace's requests and kept accesses
    reached ``$ZC_CPU_TRACE_MB`` (``cap == "total"``); ``limit`` is that cap (accesses or bytes)."""

    def __init__(self, message: str, *, kernel: str, cap: str, limit: int, warp: int) -> None:
        super().__init__(message)
        self.kernel = kernel
        self.cap = cap
        self.limit = limit
        self.warp = warp


class CompileOptionError(CpuBackendError, ValueError):
    """A compile option (``options=``) the CPU backend does not support, or a malformed one."""


class ArraySizeError(CpuBackendError, ValueError):
    """A size for a new array that is zero, negative or not an integer."""


class KernelArgumentWarning(UserWarning):
    """An argument fits a parameter's size rules but probably not its meaning (float64 for float*)."""
