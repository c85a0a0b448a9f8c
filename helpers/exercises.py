"""Exercises: the learner writes code, a check says "not yet", "correct" or gives a hint (issue 10).

Every exercise is a notebook cell tagged ``exercise`` followed by a cell calling :func:`check`.
A check never raises: on the untouched placeholder (``...``, ``None``, a function whose body is
``...``, a kernel whose body is only a ``// TODO`` comment) it says "not yet" and what to do; on a
right answer "correct" and why; on a typical wrong answer a specific hint. Solutions live in
``lessons/solutions/lessonNN.py`` (an instructor may delete the folder); :func:`solution` shows
one only when asked.

Lesson 04 introduces :class:`Feedback`, :func:`check` and :func:`solution`; the checks are
``page_and_offset`` and ``same_address`` (lesson 04), ``add_on_gpu`` and ``saxpy`` (lesson 05).
Lesson 09's kernel exercise lives in :mod:`helpers.coalescing_exercise`; :func:`check` wraps it
as ``("09", "coalesce")``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

__all__ = ["Feedback", "check", "solution", "is_placeholder", "SOLUTIONS", "EXERCISES"]

SOLUTIONS = Path(__file__).resolve().parent.parent / "lessons" / "solutions"
Status = Literal["not yet", "correct", "hint"]
_LABEL = {"not yet": "Not yet", "correct": "Correct", "hint": "Hint"}


@dataclass(frozen=True)
class Feedback:
    """What a check found: ``status`` is "not yet", "correct" or "hint"; ``message`` says it (lesson 04)."""

    status: Status
    message: str
    exercise: str = ""

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def __str__(self) -> str:
        where = f" [{self.exercise}]" if self.exercise else ""
        return f"{_LABEL.get(self.status, self.status)}{where}: {self.message}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        icon = {"correct": "✅", "hint": "💡", "not yet": "⏳"}.get(self.status, "")
        return f"{icon} **{_LABEL.get(self.status, self.status)}.** {self.message}"


def _not_yet(what: str) -> Feedback:
    return Feedback("not yet", what)


def _hint(what: str) -> Feedback:
    return Feedback("hint", what)


def _correct(why: str) -> Feedback:
    return Feedback("correct", why)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def is_placeholder(answer: Any) -> bool:
    """True for an untouched placeholder: ``...``, ``None``, or CUDA source whose kernel bodies are empty (lesson 04)."""
    if answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, str):
        code = _COMMENTS.sub("", answer)
        bodies = re.findall(r"__global__[^{]*\{(.*?)\}\s*$", code, re.S)
        return not code.strip() or (bool(bodies) and all(not b.strip() for b in bodies))
    return False


# --------------------------------------------------------------------------- lesson 04
PAGE_CASES = ((0x7F4478801234, 4096), (0x7F4478800000, 4096), (0x7F4478800FFF, 4096), (4096, 4096), (4095, 4096),
              (0x7F44788A1234, 65536), (0x7F44789A1234, 2**21))


def check_page_and_offset(page_and_offset: Callable[[int, int], tuple[int, int]]) -> Feedback:
    """Lesson 04: ``page_and_offset(address, page_size)`` returns (page number, offset in the page)."""
    if is_placeholder(page_and_offset):
        return _not_yet("define page_and_offset(address, page_size) returning (page number, offset in that page).")
    first_wrong = None
    for address, size in PAGE_CASES:
        got = page_and_offset(address, size)
        if is_placeholder(got):
            return _not_yet("page_and_offset returns `...`: replace it with the page number and the offset.")
        want = divmod(address, size)
        if not (isinstance(got, tuple) and len(got) == 2):
            return _hint(f"return a pair (page, offset); for {address:#x} you returned {got!r}.")
        if any(isinstance(v, float) for v in got):
            return _hint("use integer division `//` and `%`: a page number is a whole number, and a float has only 53 "
                         "bits, too few to be trusted with 64-bit addresses.")
        if tuple(int(v) for v in got) == want:
            continue
        if tuple(got) == want[::-1]:
            return _hint("page and offset are swapped: the page number is address // page_size, the offset the rest.")
        if size != 4096 and tuple(got) == divmod(address, 4096):
            return _hint(f"right for 4 KiB pages, but you ignored page_size ({size} here). The GPU's MMU may map host "
                         "memory with larger pages (64 KiB, 2 MiB): use the argument, not 4096 or `>> 12`.")
        first_wrong = first_wrong or (address, size, got, want)
    if first_wrong:
        address, size, got, want = first_wrong
        return _hint(f"for address {address:#x} and {size}-byte pages you returned {got}, expected {want}. "
                     "page = address // page_size; offset = address % page_size.")
    return _correct("the page number is what a page table translates; the offset passes through unchanged. "
                    "So both MMUs can map one frame and agree on every byte in it.")


KINDS = ("mapped (DEVICEMAP)", "mapped + write-combined", "mapped + portable", "pinned, no DEVICEMAP flag",
         "registered (cuMemHostRegister)")


def same_address_rule(allocation: str, attributes: dict[str, int]) -> bool:
    """The documented rule (Runtime API Unified Addressing; ``cuMemHostGetDevicePointer``), for the check."""
    if not attributes.get("UNIFIED_ADDRESSING"):
        return False
    if allocation.startswith("registered"):
        return bool(attributes.get("CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"))
    return True


def check_same_address(same_address: Callable[[str, dict[str, int]], bool], *,
                       measured: list[dict[str, Any]] | None = None,
                       attributes: dict[str, int] | None = None) -> Feedback:
    """Lesson 04: ``same_address(allocation, attributes)`` predicts device pointer == host pointer.

    ``measured`` (``address_identity().rows``) and the ``attributes`` they ran with, when given,
    are compared with the prediction in the message.
    """
    if is_placeholder(same_address):
        return _not_yet("define same_address(allocation, attributes) returning True or False.")
    for uva in (0, 1):
        for can_use in (1, 0):
            attrs = {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can_use}
            for kind in KINDS:
                got = same_address(kind, dict(attrs))
                if is_placeholder(got):
                    return _not_yet("same_address returns `...`: return True or False from the two attributes.")
                if not isinstance(got, (bool, np.bool_)):
                    return _hint(f"return True or False; for {kind!r} you returned {got!r}.")
                want = same_address_rule(kind, attrs)
                if got == want:
                    continue
                if not uva:
                    return _hint("without UNIFIED_ADDRESSING the device has its own address for mapped memory; only "
                                 "cuMemHostGetDevicePointer can give it. Predict False when UNIFIED_ADDRESSING is 0.")
                if kind.startswith("registered"):
                    return _hint("registered memory keeps its host address only where "
                                 "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM is non-zero (cuMemHostGetDevicePointer's "
                                 f"reference); with it = {can_use} you predicted {got}.")
                if kind.startswith("pinned, no DEVICEMAP"):
                    return _hint("with unified addressing, cudaHostAlloc memory is mapped at the host address with or "
                                 "without the DEVICEMAP flag (the Runtime API's Unified Addressing section).")
                return _hint(f"with unified addressing, {kind!r} memory from cudaHostAlloc has device pointer == host "
                             "pointer: predict True.")
    extra = ""
    if measured and attributes:
        agree = sum(same_address(r["allocation"], dict(attributes)) == r["equal"] for r in measured)
        extra = f" On the measured run it agrees with the `equal` column for {agree} of {len(measured)} kinds."
    return _correct("equality needs unified addressing, and for registered memory also "
                    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM; everywhere else ask the driver." + extra)


# --------------------------------------------------------------------------- lesson 05
class _Launches:
    """Records what the learner's code did: launches, synchronisations, in order."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.problem: Feedback | None = None


class _SpyKernel:
    """Wraps a kernel (GPU or CPU): checks each launch's arguments before passing it on."""

    def __init__(self, kernel: Any, log: _Launches, pointers: int, name: str) -> None:
        self.kernel, self.log, self.pointers, self.name = kernel, log, pointers, name

    def __call__(self, *args: Any, block: Any = None, grid: Any = None, **kwargs: Any) -> Any:
        log = self.log
        problem = None
        for i, arg in enumerate(args[:self.pointers]):
            if isinstance(arg, np.ndarray):
                problem = _hint(f"argument {i} is a NumPy array: PyCUDA would copy its bytes into the kernel's "
                                "parameters (by value, section 5). Pass its device pointer, "
                                "np.intp(h.base.get_device_pointer()).")
            elif not isinstance(arg, (np.intp, np.int64, np.uint64)):
                problem = _hint(f"argument {i} is {type(arg).__name__}: pass a pointer as np.intp(...), a sized "
                                "NumPy integer, so PyCUDA packs 8 bytes.")
            if problem:
                break
        if problem is None:
            for arg in args[self.pointers:]:
                if not isinstance(arg, (np.int32, np.float32)):
                    problem = _hint(f"the scalar argument {arg!r} is {type(arg).__name__}: the kernel takes a 4-byte "
                                    "int or float, so pass np.int32(n) / np.float32(a); PyCUDA needs sized NumPy "
                                    "scalars.")
                    break
        if problem is None:
            n = next((int(a) for a in args[self.pointers:] if isinstance(a, (np.int32, int))), 0)
            try:
                threads = int(np.prod(block)) * int(np.prod(grid or (1,)))
            except (TypeError, ValueError):
                threads = -1
            if block is None or threads < n:
                problem = _hint(f"the launch block={block}, grid={grid} starts {max(threads, 0)} threads for n = {n} "
                                "elements. Round up: blocks = (n + threads - 1) // threads, and the kernel's "
                                "`if (idx < n)` stops the extra ones.")
        if problem is not None:
            log.problem = log.problem or problem
            log.events.append("refused")
            return None
        log.events.append("launch")
        return self.kernel(*args, block=block, grid=grid, **kwargs)


def _patched_sync(namespace: dict[str, Any], log: _Launches) -> list[tuple[Any, str, Any]]:
    """Make drv.Context.synchronize and helpers.gpu.synchronize record a "sync" event; return what to restore."""
    from . import gpu

    restore: list[tuple[Any, str, Any]] = []
    targets = [(gpu, "synchronize")]
    drv = namespace.get("drv")
    if drv is not None and hasattr(drv, "Context"):
        targets.append((drv.Context, "synchronize"))
    for owner, name in targets:
        original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name)
        real = getattr(owner, name)

        def spy(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            log.events.append("sync")
            return _real(*args, **kwargs)

        try:
            setattr(owner, name, spy)
            restore.append((owner, name, original))
        except (AttributeError, TypeError):
            pass
    return restore


def _kernel(stem: str, name: str) -> Any:
    from .mode import detect

    if detect().live:
        from . import kernels
        return kernels.load_kernel(stem, name)
    from . import cpu
    return cpu.load_kernel(stem, name)


def check_add_on_gpu(add_on_gpu: Callable[[Any, np.ndarray, np.ndarray], Any]) -> Feedback:
    """Lesson 05: ``add_on_gpu(kernel, a, b)`` runs the seed program as a function and returns a + b."""
    if is_placeholder(add_on_gpu):
        return _not_yet("define add_on_gpu(kernel, a, b).")
    kernel = _kernel("vector_add", "vector_add_kernel")
    namespace = getattr(add_on_gpu, "__globals__", {})
    for n in (1000, 100):
        a = np.arange(n, dtype=np.float32)
        b = np.full(n, 2.0, np.float32)
        log = _Launches()
        restore = _patched_sync(namespace, log)
        try:
            result = add_on_gpu(_SpyKernel(kernel, log, 3, "vector_add_kernel"), a, b)
        finally:
            for owner, name, original in restore:
                setattr(owner, name, original)
        if log.problem:
            return log.problem
        if result is None and not log.events:
            return _not_yet("add_on_gpu does not launch the kernel yet: follow the four steps in its comments.")
        if "launch" not in log.events:
            return _hint("add_on_gpu never launched the kernel: call kernel(d_a, d_b, d_c, np.int32(n), "
                         "block=(256, 1, 1), grid=(blocks, 1)).")
        if "sync" not in log.events[log.events.index("launch"):]:
            return _hint("no synchronisation after the launch: a launch returns before the GPU has finished, so "
                         "read the result only after drv.Context.synchronize().")
        if not isinstance(result, np.ndarray):
            return _hint(f"return the sums as a NumPy array; add_on_gpu returned {type(result).__name__}.")
        root = result
        while isinstance(root.base, np.ndarray):
            root = root.base
        if hasattr(root.base, "free"):
            return _hint("you returned the page-locked array itself. After free() its memory is gone (reading it can "
                         "crash the process), and without free() it leaks: return h_c.copy(), made before freeing.")
        if result.shape != a.shape or not np.array_equal(result, a + b):
            wrong = np.flatnonzero(np.asarray(result).ravel()[:n] != (a + b)[:result.size]) if result.size else [0]
            first = int(wrong[0]) if len(wrong) else result.size
            return _hint(f"for n = {n} the sums differ from a + b (first at index {first}). Did you copy a and b "
                         "into the mapped arrays (h_a[:] = a) before the launch?")
    return _correct("mapped arrays, device pointers, enough blocks to cover n, a launch, a synchronisation, a copy "
                    "out and free(): the seed program as a reusable function.")


SAXPY_N, SAXPY_A, SAXPY_BLOCK, SAXPY_GUARD = 1000, 2.5, 256, 64


def check_saxpy(source: str) -> Feedback:
    """Lesson 05: CUDA C ``saxpy(int n, float a, const float *x, float *y)`` doing y = a*x + y on mapped memory.

    Live it runs on the GPU (arrays with a guard zone past n, to catch a missing bounds check);
    in replay on the CPU backend, which checks every access against the arrays' bounds.
    """
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet("write the body of saxpy: compute this thread's index, and if it is below n set "
                        "y[i] = a * x[i] + y[i].")
    from .mode import detect

    n, a, block = SAXPY_N, np.float32(SAXPY_A), SAXPY_BLOCK
    grid = (n + block - 1) // block
    rng = np.random.default_rng(5)
    x0 = rng.random(n, dtype=np.float32)
    y0 = rng.random(n, dtype=np.float32)
    want = a * x0 + y0
    live = detect().live
    try:
        if live:
            from pycuda.compiler import SourceModule

            from . import gpu
            fn = SourceModule(source, no_extern_c=True).get_function("saxpy")
            x, y = gpu.mapped_empty(n + SAXPY_GUARD, np.float32), gpu.mapped_empty(n + SAXPY_GUARD, np.float32)
            try:
                x[:n], y[:n], x[n:], y[n:] = x0, y0, 1.0, -7.0   # an unguarded thread changes y[n:]
                fn(np.int32(n), a, gpu.device_pointer(x), gpu.device_pointer(y), block=(block, 1, 1), grid=(grid, 1))
                gpu.synchronize()
                got, guard_ok = y[:n].copy(), bool(np.all(y[n:] == -7.0))
            finally:
                gpu.free(x, y)
        else:
            from . import cpu
            fn = cpu.SourceModule(source, name="saxpy.cu").get_function("saxpy")
            x, y = cpu.mapped_empty(n, np.float32), cpu.mapped_empty(n, np.float32)
            x[:], y[:] = x0, y0
            fn(np.int32(n), a, cpu.device_pointer(x), cpu.device_pointer(y), block=(block, 1, 1), grid=(grid, 1))
            got, guard_ok = y.copy(), True
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        text = f"{type(exc).__name__}: {exc}"
        if "OutOfBounds" in type(exc).__name__ or "outside" in str(exc):
            return _hint(f"an access past the end of the arrays ({text.splitlines()[0][:300]}). The grid has "
                         f"{grid * block} threads for n = {n}: guard the body with `if (i < n)` (not `<=`).")
        if "No __global__ function named" in str(exc) or "named symbol not found" in str(exc):
            return _hint("no kernel named saxpy: keep `extern \"C\" __global__ void saxpy(...)` (extern \"C\" keeps "
                         "the name unmangled).")
        return _hint(f"the kernel did not build or run: {text[:600]}")
    if not guard_ok:
        return _hint(f"threads past n wrote beyond y[{n - 1}]: the grid has {grid * block} threads for n = {n}; "
                     "guard the body with `if (i < n)`.")
    if np.array_equal(got, y0):
        return _not_yet("y is unchanged: the kernel ran but wrote nothing. Set y[i] = a * x[i] + y[i].")
    if np.allclose(got, a * x0):
        return _hint("y equals a * x: the old y was overwritten, not added. SAXPY is y = a * x + y.")
    if np.array_equal(got[block:], y0[block:]):
        return _hint(f"only the first {block} elements changed (every block wrote the same ones): the index must "
                     "include the block, i = blockIdx.x * blockDim.x + threadIdx.x.")
    if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
        bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-6, atol=1e-6))
        return _hint(f"y differs from a * x + y at {bad.size} of {n} elements (first at {bad[0]}: "
                     f"expected {want[bad[0]]:.6g}, got {got[bad[0]]:.6g}).")
    where = "on the GPU, through mapped memory" if live else "on the CPU backend (the GPU runs the same source live)"
    return _correct(f"y = a*x + y for all {n} elements {where}, and no thread touched memory past n: one thread "
                    "per element, guarded by i < n.")


# --------------------------------------------------------------------------- lesson 09
def check_coalesce(source: str) -> Feedback:
    """Lesson 09: :func:`helpers.coalescing_exercise.check_fix`, as a :class:`Feedback`."""
    from . import coalescing_exercise as ex

    if is_placeholder(source) or source == ex.BROKEN_SOURCE:
        return _not_yet("rewrite the index arithmetic of copy_matrix so that consecutive threads read consecutive "
                        "floats.")
    result = ex.check_fix(source)
    return Feedback("correct" if result.passed else "hint", result.message)


# --------------------------------------------------------------------------- registry
EXERCISES: dict[tuple[str, str], Callable[..., Feedback]] = {
    ("04", "page_and_offset"): check_page_and_offset,
    ("04", "same_address"): check_same_address,
    ("05", "add_on_gpu"): check_add_on_gpu,
    ("05", "saxpy"): check_saxpy,
    ("09", "coalesce"): check_coalesce,
}


def check(lesson: str, name: str, answer: Any, **context: Any) -> Feedback:
    """Check ``answer`` to exercise ``name`` of lesson ``lesson``; never raises (lesson 04)."""
    checker = EXERCISES.get((lesson, name))
    if checker is None:
        known = ", ".join(f"{lsn}/{nm}" for lsn, nm in EXERCISES)
        return Feedback("hint", f"no exercise {lesson}/{name}; the exercises are {known}.", f"{lesson}/{name}")
    try:
        feedback = checker(answer, **context)
    except Exception as exc:  # noqa: BLE001 (the learner's code may raise anything)
        feedback = _hint(f"your code raised {type(exc).__name__}: {exc}".strip()[:800])
    return Feedback(feedback.status, feedback.message, f"{lesson}/{name}")


_SECTION = re.compile(r"^# exercise: (\w+)\s*$", re.M)


def solution(lesson: str, name: str) -> str:
    """The text of a solution from ``lessons/solutions/lessonNN.py``, or a plain note that it is absent (lesson 04)."""
    path = SOLUTIONS / f"lesson{lesson}.py"
    if not SOLUTIONS.is_dir():
        return ("The solutions folder lessons/solutions/ is not here: your instructor removed it (for a graded "
                "class, perhaps). Ask them, or keep working with the check's hints.")
    if not path.is_file():
        return f"There is no solution file for lesson {lesson} ({path.name} is not in lessons/solutions/)."
    text = path.read_text()
    parts = _SECTION.split(text)
    sections = dict(zip(parts[1::2], parts[2::2]))
    if name not in sections:
        return f"{path.name} has no solution named {name!r}; it has {', '.join(sections) or 'none'}."
    return sections[name].strip() + "\n"
