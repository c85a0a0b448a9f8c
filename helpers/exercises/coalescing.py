"""The exercise of coalesce-and-align-accesses: make a zero-copy matrix copy read whole sectors.

:data:`BROKEN_SOURCE` copies a ``rows x cols`` row-major matrix from ``src`` (mapped host
memory) to ``dst``, but consecutive threads walk *down a column*: their loads are ``cols``
floats apart, so every thread's 4 bytes cost a whole 32-byte sector over PCIe.
The learner rewrites the index arithmetic; :func:`check_fix` runs the new kernel on the
CPU backend, checks that it still copies the matrix, and that its loads from ``src``
touch fewer sectors than the broken kernel's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cpu import CpuBackendError, SourceModule, Trace
from ..i18n import _

__all__ = ["FUNCTION_NAME", "BROKEN_SOURCE", "ExerciseResult", "trace_copy", "check_fix"]

FUNCTION_NAME = "copy_matrix"

BROKEN_SOURCE = r"""
// Copy a rows x cols row-major matrix: src is zero-copy (mapped host) memory.
extern "C" __global__ void copy_matrix(const float *src, float *dst, int rows, int cols) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < rows * cols) {
        int r = t % rows;   // consecutive threads go DOWN a column ...
        int c = t / rows;   // ... so their addresses are `cols` floats apart
        dst[r * cols + c] = src[r * cols + c];
    }
}
"""


ROWS, COLS, BLOCK = 64, 96, 128


@dataclass(frozen=True)
class ExerciseResult:
    """What :func:`check_fix` found; ``message`` says it in a sentence or two."""

    passed: bool
    correct: bool
    broken_sectors: int
    fixed_sectors: int
    ideal_sectors: int
    message: str
    ran: bool = True   # False when the kernel did not build or run (``message`` then quotes the backend's error)
    error: Exception | None = field(default=None, repr=False, compare=False)   # that error, when it did not

    def __str__(self) -> str:
        return self.message

    def _repr_markdown_(self) -> str:
        return (_("**Passed.** ") if self.passed else _("**Not yet.** ")) + self.message


def trace_copy(source: str, function_name: str = FUNCTION_NAME, rows: int = ROWS, cols: int = COLS) -> tuple[np.ndarray, np.ndarray, Trace]:
    """Run a copy kernel on a random matrix with tracing: (src, dst, trace)."""
    fn = SourceModule(source, name="exercise.cu").get_function(function_name)
    src = np.random.default_rng(7).random((rows, cols), dtype=np.float32)
    dst = np.zeros_like(src)
    n = rows * cols
    trace = fn.trace(src, dst, np.int32(rows), np.int32(cols), block=(BLOCK, 1, 1), grid=((n + BLOCK - 1) // BLOCK, 1))
    return src, dst, trace


def _src_load_sectors(trace: Trace) -> int:
    rows = trace.instructions
    return int(rows["sectors"][(~rows["is_store"]) & (rows["param"] == 0)].sum())


def check_fix(source: str, function_name: str = FUNCTION_NAME) -> ExerciseResult:
    """Run the learner's kernel: does it copy the matrix, reading fewer sectors of src than the broken one?"""
    broken = trace_copy(BROKEN_SOURCE)[2]
    broken_sectors = _src_load_sectors(broken)
    ideal = ROWS * COLS * 4 // 32
    try:
        src, dst, trace = trace_copy(source, function_name)
    except CpuBackendError as exc:
        return ExerciseResult(False, False, broken_sectors, 0, ideal,
                              _("The kernel failed: {error}").format(error=exc), ran=False, error=exc)
    wrong = np.argwhere(dst != src)
    if len(wrong):
        r, c = wrong[0]
        return ExerciseResult(False, False, broken_sectors, _src_load_sectors(trace), ideal,
                              _("dst differs from src at {wrong} of {size} elements (first at row {row}, column "
                                "{column}): every element must still be copied exactly once.").format(
                                  wrong=len(wrong), size=src.size, row=r, column=c))
    fixed = _src_load_sectors(trace)
    if fixed >= broken_sectors:
        return ExerciseResult(False, True, broken_sectors, fixed, ideal,
                              _("The copy is right, but the loads from src touch {fixed} sectors, no fewer than the "
                                "broken kernel's {broken}. Make consecutive threads read consecutive floats.").format(
                                  fixed=fixed, broken=broken_sectors))
    extra = "" if fixed <= ideal else _(" (the minimum is {ideal}: there is still room to improve)").format(
        ideal=ideal)
    return ExerciseResult(True, True, broken_sectors, fixed, ideal,
                          _("Correct copy, and the loads from src touch {fixed} sectors instead of {broken}: "
                            "{times:.1f}x fewer bytes over PCIe{extra}.").format(
                              fixed=fixed, broken=broken_sectors, times=broken_sectors / fixed, extra=extra))
