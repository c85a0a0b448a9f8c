"""write-your-first-zero-copy-kernel's exercises: the seed program's host steps (add_on_gpu) and a SAXPY kernel on
mapped memory; and its prediction of what launching the kernel with the arrays themselves does."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..i18n import _, sentences, series
from . import (Feedback, correct as _correct, hint as _hint, is_placeholder, kernel_failure_hint, live_module,
               not_yet as _not_yet)
from .choices import chosen
from .returns import returned_none


OUTCOMES = ("runs", "refused", "garbage")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def compare_prediction(predicted: Any, by_value: Any) -> str:
    """write-your-first-zero-copy-kernel's prediction: what launching the seed's kernel with the three NumPy arrays
    themselves does ("runs" correctly, the launch is "refused", or it runs on "garbage" addresses), against
    ``experiments.pass_by_value()``. Works on the untouched ``...`` (it says "no prediction")."""
    row = by_value.rows[0]
    where = (_("live on {gpu}") if by_value.live else _("recorded on {gpu}")).format(gpu=by_value.gpu)
    if row["raised"]:
        seen = _("Measured ({where}): the launch was refused, `{error}`.").format(where=where, error=row["error_type"])
    else:
        seen = _("Measured ({where}): the launch was not refused; the kernel ran on whatever the packed bytes "
                 "spelled.").format(where=where)
    if is_placeholder(predicted):
        return _("You made no prediction (`predicted_by_value` is still `...`). {seen}").format(seen=seen)
    said = chosen(predicted, OUTCOMES)
    if said is None:
        return _("A prediction here is one of {outcomes}; you gave {given}. {seen}").format(
            outcomes=series(map(repr, OUTCOMES)), given=repr(predicted), seen=seen)
    text = _("You predicted {said}. {seen}").format(said=repr(said), seen=seen)
    if said == "refused" and row["raised"]:
        return sentences(text, _(
            "Right: {nbytes:,} bytes of parameters where the kernel declares three pointers and an int, and the "
            "driver refuses the launch before anything runs.").format(nbytes=row["passed_argument_bytes"]))
    if said == "garbage" and not row["raised"]:
        return sentences(text, _("Right: nothing stopped it, which is the dangerous case."))
    if said == "runs":
        return sentences(text, _(
            "What does the kernel find in its first parameter: an 8-byte address, or the first bytes of your floats? "
            "Read section 5's first paragraph again."))
    return sentences(text, _(
        "Not this time: how many bytes did PyCUDA pack, and how many does the kernel declare? Going deeper says what "
        "is known of why the driver refused the launch."))


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
                problem = _hint(_("argument {nth} (index {i}) is a NumPy array: PyCUDA would copy its bytes into "
                                  "the kernel's parameters (by value, section 5). What does the kernel expect in that "
                                  "parameter: the array's bytes, or its device pointer? Which call in section 4 gives "
                                  "it?").format(nth=i + 1, i=i),
                                _("pass the array's device pointer: the mapped array's base has "
                                  "get_device_pointer(), wrapped in np.intp(...) so PyCUDA packs 8 bytes."))
            elif not isinstance(arg, (np.intp, np.int64, np.uint64)):
                problem = _hint(_("argument {nth} (index {i}) is {type}. How many bytes does a pointer parameter "
                                  "take, and how does PyCUDA know to pack that many?").format(
                                      nth=i + 1, i=i, type=type(arg).__name__),
                                _("pass a pointer as np.intp(...), a sized NumPy integer, so PyCUDA packs 8 bytes."))
            if problem:
                break
        if problem is None:
            for arg in args[self.pointers:]:
                if not isinstance(arg, (np.int32, np.float32)):
                    problem = _hint(_("the scalar argument {arg} is {type}. The kernel takes a 4-byte int, and "
                                      "PyCUDA packs sized NumPy scalars (np.int32, np.float32): how many bytes should "
                                      "it pack for this one?").format(arg=repr(arg), type=type(arg).__name__),
                                    _("wrap the count in the 4-byte NumPy integer type when you pass it."))
                    break
        if problem is None:
            n = next((int(a) for a in args[self.pointers:] if isinstance(a, (np.int32, int))), 0)
            try:
                threads = int(np.prod(block)) * int(np.prod(grid or (1,)))
            except (TypeError, ValueError):
                threads = -1
            if block is None or threads < n:
                problem = _hint(_("the launch block={block}, grid={grid} starts {threads} threads for n = {n} "
                                  "elements. How many blocks of 256 cover n when n is not a multiple of 256? Round "
                                  "up, not down.").format(block=block, grid=grid, threads=max(threads, 0), n=n),
                                _("a whole number of blocks that covers n is the division n / threads rounded up; in "
                                  "integers, add threads - 1 before the `//`. The kernel's `if (idx < n)` stops the "
                                  "extra threads."))
        if problem is not None:
            log.problem = log.problem or problem
            log.events.append("refused")
            return None
        log.events.append("launch")
        return self.kernel(*args, block=block, grid=grid, **kwargs)


def _patched_sync(namespace: dict[str, Any], log: _Launches) -> list[tuple[Any, str, Any]]:
    """Make drv.Context.synchronize and helpers.gpu.synchronize record a "sync" event; return what to restore."""
    from ..memory import gpu

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


def _patched_alloc(namespace: dict[str, Any], made: list[np.ndarray]) -> list[tuple[Any, str, Any]]:
    """Make drv.pagelocked_empty record each array it hands out in ``made``; return what to restore."""
    drv = namespace.get("drv")
    real = getattr(drv, "pagelocked_empty", None)
    if real is None:
        return []

    def spy(*args: Any, **kwargs: Any) -> np.ndarray:
        array = real(*args, **kwargs)
        made.append(array)
        return array

    setattr(drv, "pagelocked_empty", spy)
    return [(drv, "pagelocked_empty", real)]


def _freed(array: np.ndarray) -> bool:
    """Whether a page-locked array's allocation was freed, leaving none behind: the CPU backend says so; PyCUDA's
    ``free()`` raises on an allocation already freed (its own flag, no driver call: src/cpp/cuda.hpp) and otherwise
    frees the leaked one, so the check leaves no pinned memory behind."""
    base = array.base
    if getattr(base, "freed", None) is not None:
        freed = bool(base.freed)
        if not freed:
            base.free()
        return freed
    try:
        base.free()
    except Exception:  # noqa: BLE001 (pycuda's LogicError: already freed)
        return True
    return False


def _kernel(stem: str, name: str) -> Any:
    from ..mode import detect

    if detect().live:
        from .. import kernels
        return kernels.load_kernel(stem, name)
    from .. import cpu
    return cpu.load_kernel(stem, name)


def check_add_on_gpu(add_on_gpu: Callable[[Any, np.ndarray, np.ndarray], Any]) -> Feedback:
    """write-your-first-zero-copy-kernel: ``add_on_gpu(kernel, a, b)`` runs the seed program as a function and
    returns a + b."""
    if is_placeholder(add_on_gpu):
        return _not_yet(_("define add_on_gpu(kernel, a, b)."))
    kernel = _kernel("vector_add", "vector_add_kernel")
    namespace = getattr(add_on_gpu, "__globals__", {})
    for n in (1000, 100):
        a = np.arange(n, dtype=np.float32)
        b = np.full(n, 2.0, np.float32)
        log, made = _Launches(), []
        restore = _patched_sync(namespace, log) + _patched_alloc(namespace, made)
        try:
            result = add_on_gpu(_SpyKernel(kernel, log, 3, "vector_add_kernel"), a, b)
        finally:
            for owner, name, original in restore:
                setattr(owner, name, original)
        alive = [array for array in made if not _freed(array)]
        if log.problem:
            return log.problem
        if result is None and not log.events:
            return _not_yet(_("add_on_gpu does not launch the kernel yet: follow the four steps in its comments."))
        if "launch" not in log.events:
            return _hint(_("add_on_gpu never launched the kernel. Which of the four steps in its comments runs the "
                           "GPU?"), _("call kernel(...) with the three device pointers and the element count, and "
                                      "block= and grid= as in section 4."))
        if "sync" not in log.events[log.events.index("launch"):]:
            return _hint(_("no synchronisation after the launch. Has the GPU finished when the launch call returns?"),
                         _("a launch returns before the GPU has finished: call drv.Context.synchronize() before "
                           "reading the result."))
        forgot = returned_none(add_on_gpu, result)
        if forgot is not None:
            return forgot
        if not isinstance(result, np.ndarray):
            return _hint(_("return the sums as a NumPy array; add_on_gpu returned {type}.").format(
                type=type(result).__name__),
                         _("return a copy of the result array (after the synchronisation, before free())."))
        root = result
        while isinstance(root.base, np.ndarray):
            root = root.base
        if hasattr(root.base, "free"):
            return _hint(_("you returned the page-locked array itself. What happens to its memory after free(), "
                           "and what if you never call free()?"),
                         _("after free() its memory is gone (reading it can crash the process), and without free() "
                           "it leaks: return a copy (.copy()), made before freeing."))
        if result.shape != a.shape or not np.array_equal(result, a + b):
            wrong = np.flatnonzero(np.asarray(result).ravel()[:n] != (a + b)[:result.size]) if result.size else [0]
            first = int(wrong[0]) if len(wrong) else result.size
            return _hint(_("for n = {n} the sums differ from a + b (first at index {first}). What do the mapped "
                           "arrays hold when the kernel reads them?").format(n=n, first=first),
                         _("copy a and b into the mapped arrays (h_a[:] = a) before the launch, and return the "
                           "result array's copy."))
        if alive:   # _freed has freed them: the check leaves no pinned memory behind
            return _hint(_("the sums are right, but {alive} of the {made} page-locked arrays are still allocated "
                           "when add_on_gpu returns. What happens to pinned memory each time it is called?").format(
                               alive=len(alive), made=len(made)),
                         _("free each array (h.base.free()) after copying the result out, in a `finally:` so that a "
                           "failed launch frees them too."))
    return _correct(_("mapped arrays, device pointers, enough blocks to cover n, a launch, a synchronisation, a copy "
                      "out and free(): the seed program as a reusable function."))


SAXPY_N, SAXPY_A, SAXPY_BLOCK, SAXPY_GUARD = 1000, 2.5, 256, 64


def has_c_linkage(source: str, name: str) -> bool:
    """Whether kernel ``name`` in CUDA ``source`` is declared ``extern "C"`` (on its line or in an ``extern "C" {}``
    block): without it the compiler mangles the name and PyCUDA's get_function does not find it. The CPU backend
    finds any name, so the check asks this in replay too (write-your-first-zero-copy-kernel)."""
    code = _COMMENTS.sub("", source)
    found = re.search(r"__global__[^;{}()]*\b" + re.escape(name) + r"\s*\(", code)
    if found is None:
        return True   # no such kernel: the lookup's own error says so
    start = max(code.rfind(";", 0, found.start()), code.rfind("}", 0, found.start()),
                code.rfind("{", 0, found.start()))
    if re.search(r'extern\s*"C"', code[start + 1:found.start()]):
        return True
    for block in re.finditer(r'extern\s*"C"\s*\{', code):
        depth, i = 1, block.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        if block.end() <= found.start() < i:
            return True
    return False


def check_saxpy(source: str) -> Feedback:
    """write-your-first-zero-copy-kernel: CUDA C ``saxpy(int n, float a, const float *x, float *y)`` doing y = a*x +
    y on mapped memory.

    Live it runs on the GPU (arrays with a guard zone past n, to catch a missing bounds check);
    in replay on the CPU backend, which checks every access against the arrays' bounds.
    """
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet(_("write the body of saxpy: compute this thread's index, and if it is below n set "
                          "y[i] = a * x[i] + y[i]."))
    from ..mode import detect

    n, a, block = SAXPY_N, np.float32(SAXPY_A), SAXPY_BLOCK
    grid = (n + block - 1) // block
    rng = np.random.default_rng(5)
    x0 = rng.random(n, dtype=np.float32)
    y0 = rng.random(n, dtype=np.float32)
    want = a * x0 + y0
    live = detect().live
    if not has_c_linkage(source, "saxpy"):   # live, get_function would not find the mangled name; replay says so too
        return _hint(_("saxpy is declared without extern \"C\": C++ then mangles its name, and PyCUDA's "
                       "get_function, which the check calls, looks the kernel up by the name as written. Which part "
                       "of the given first line is missing?"),
                     _("keep the first line as given, `extern \"C\" __global__ void saxpy(...)`: extern \"C\" keeps "
                       "the name unmangled."))
    try:
        if live:
            from ..memory import gpu
            fn = live_module(source).get_function("saxpy")
            x, y = gpu.mapped_empty(n + SAXPY_GUARD, np.float32), gpu.mapped_empty(n + SAXPY_GUARD, np.float32)
            try:
                x[:n], y[:n], x[n:], y[n:] = x0, y0, 1.0, -7.0   # an unguarded thread changes y[n:]
                fn(np.int32(n), a, gpu.device_pointer(x), gpu.device_pointer(y), block=(block, 1, 1), grid=(grid, 1))
                gpu.synchronize()
                got, guard_ok = y[:n].copy(), bool(np.all(y[n:] == -7.0))
            finally:
                gpu.free(x, y)
        else:
            from .. import cpu
            fn = cpu.SourceModule(source, name="saxpy.cu").get_function("saxpy")
            x, y = cpu.mapped_empty(n, np.float32), cpu.mapped_empty(n, np.float32)
            x[:], y[:] = x0, y0
            fn(np.int32(n), a, cpu.device_pointer(x), cpu.device_pointer(y), block=(block, 1, 1), grid=(grid, 1))
            got, guard_ok = y.copy(), True
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        return kernel_failure_hint(exc, "saxpy", _("an access past the end of the arrays"),
                                   _(". The grid has {threads} threads for n = {n}: what stops the threads "
                                     "whose index is n or more?").format(threads=grid * block, n=n),
                                   _("guard the body with `if (i < n)` (not `<=`)."),
                                   name_note=_(" (extern \"C\" keeps the name unmangled)"))
    if not guard_ok:
        return _hint(_("threads past n wrote beyond y[{last}]: the grid has {threads} threads for n = {n}. What "
                       "stops the threads whose index is n or more?").format(last=n - 1, threads=grid * block, n=n),
                     _("guard the body with `if (i < n)` (not `<=`)."))
    if np.array_equal(got, y0):
        return _not_yet(_("y is unchanged: the kernel ran but wrote nothing. Set y[i] = a * x[i] + y[i]."))
    if np.allclose(got, a * x0):
        return _hint(_("y equals a * x: the old y was overwritten, not added. What does SAXPY add to a * x?"),
                     _("SAXPY updates y in place: the new y[i] uses the old y[i] too."))
    if np.array_equal(got[block:], y0[block:]):
        return _hint(_("only the first {block} elements changed (every block wrote the same ones). Which threads "
                       "share your index, and which built-in variable tells the blocks apart?").format(block=block),
                     _("the index must include the block: blockIdx.x counts blocks, and each block holds blockDim.x "
                       "threads before this one's threadIdx.x."))
    if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
        bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-6, atol=1e-6))
        return _hint(_("y differs from a * x + y at {bad} of {n} elements (first at {first}). Which element does "
                       "each thread read and write, and with which formula?").format(bad=bad.size, n=n, first=bad[0]),
                     _("at index {i} y should be {want:.6g}, it is {got:.6g}: each thread reads x and y at its own "
                       "index i and writes y at the same i.").format(i=bad[0], want=want[bad[0]], got=got[bad[0]]))
    where = _("on the GPU, through mapped memory") if live else _(
        "on the CPU backend (the GPU runs the same source live)")
    return _correct(_("y = a*x + y for all {n} elements {where}, and no thread touched memory past n: one thread "
                      "per element, guarded by i < n.").format(n=n, where=where))


# --------------------------------------------------------------------------- coalesce-and-align-accesses


CHECKS = {"add_on_gpu": check_add_on_gpu, "saxpy": check_saxpy}


def namespace() -> dict[str, Any]:
    """Names write-your-first-zero-copy-kernel's exercise cells use besides NumPy: ``drv``, PyCUDA's driver live,
    its CPU stand-in in replay."""
    from ..mode import detect

    if detect().live:
        import pycuda.driver as drv
    else:
        from ..cpu import driver as drv
    return {"drv": drv}
