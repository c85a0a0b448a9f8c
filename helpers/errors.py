"""Errors the course raises, each saying what went wrong and what to do (all lessons)."""


class CourseError(Exception):
    """Base class of every error the helpers raise on purpose."""


class NoGPUError(CourseError):
    """A call that needs a live GPU ran in replay mode (lesson 00 explains the modes)."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(
            f"{what} needs a CUDA GPU, but the course runs in replay mode: {reason}. "
            "Use the recorded results (helpers.experiments returns them in replay mode), "
            "or run on a machine with an NVIDIA driver, nvcc and PyCUDA (see README: 'On a GPU machine')."
        )


class HostMappingUnsupportedError(CourseError):
    """The GPU cannot map page-locked host memory into its address space (lesson 00)."""


class PinningError(CourseError):
    """Host memory could not be page-locked (锁页内存) or mapped (lesson 02)."""


class ProcUnavailableError(CourseError):
    """This system has no Linux /proc (macOS, Windows), so page tables cannot be read (lessons 01 and 03)."""


class RegistrationError(CourseError):
    """An existing array cannot be registered with cuMemHostRegister (lesson 13)."""


class CompilerNotFoundError(CourseError):
    """nvcc, which PyCUDA's SourceModule calls, is not on PATH (lesson 05)."""


class RecordError(CourseError):
    """A measurement record in data/ is missing or corrupt (lesson 00)."""


class ProfilerUnavailableError(CourseError):
    """Nsight Compute (``ncu``) is missing or may not read the GPU's counters (lesson 10)."""
