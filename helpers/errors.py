"""Errors the course raises, each saying what went wrong and what to do (all lessons)."""


class CourseError(Exception):
    """Base class of every error the helpers raise on purpose."""


class NoGPUError(CourseError):
    """A call that needs a live GPU ran in replay mode (start-here explains the modes)."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(
            f"{what} needs a CUDA GPU, but the course runs in replay mode: {reason}. "
            "Use the recorded results (helpers.experiments returns them in replay mode), "
            "or run on a machine with an NVIDIA driver, nvcc and PyCUDA (see README: 'On a GPU machine')."
        )


class HostMappingUnsupportedError(CourseError):
    """The GPU cannot map page-locked host memory into its address space (start-here)."""


class PinningError(CourseError):
    """Host memory could not be page-locked (锁页内存) or mapped (measure-what-pinning-buys)."""


class ProcUnavailableError(CourseError):
    """This system has no Linux /proc (macOS, Windows), so page tables cannot be read (pin-host-memory and
    map-pages-on-the-cpu)."""


class RegistrationError(CourseError):
    """An existing array cannot be registered with cuMemHostRegister (use-write-combined-and-registered-memory)."""


class CompilerNotFoundError(CourseError):
    """nvcc, which PyCUDA's SourceModule calls, is not on PATH (write-your-first-zero-copy-kernel)."""


class RecordError(CourseError):
    """A measurement record in data/ is missing or corrupt (start-here)."""


class ProfilerUnavailableError(CourseError):
    """Nsight Compute (``ncu``) is missing or may not read the GPU's counters (model-zero-copy-reads)."""
