"""keep-enough-bytes-in-flight's exercises: Little's law as a function (threads_for_link) and a zero-copy read
kernel that keeps
enough bytes in flight with few threads (read_inflight); and the comparison of a prediction with the run.

The kernel check launches the learner's ``read_inflight`` with a fixed, small grid (:data:`GRID` blocks of
:data:`BLOCK` threads): too few threads for one 16-byte load each to fill the link, so each thread must keep
several independent loads in flight. In both modes it first runs the kernel on the CPU backend (every element
read exactly once, no access out of bounds), traces it (helpers.cpu) for the width of each load and whether a
warp's loads are coalesced, and counts the independent loads of the loop body in the source. In replay it then
checks Little's law with section 1's figures (the pinned copy rate and one dependent zero-copy load, recorded) and
the margin section 1's table judges by: threads x bytes in flight per thread >= :data:`MARGIN` x link x latency. A
kernel whose sums are wrong gets a hint for its mistake: loads scattered over lines (traced), a missing tail (right
when n4 is a multiple of 4 x the threads), gaps or repeats in one iteration's loads. Live the stopwatch decides instead: it times the kernel on mapped memory (helpers.timing.time_gpu,
which holds the measurement slot of helpers.gpu_queue) against a pinned memcpy timed in the same call, and asks
for :data:`TARGET` of that copy rate; a kernel that falls short gets the load count in its hint.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as np

from ..i18n import N_, _
from . import (Feedback, correct as _correct, hint as _hint, is_placeholder, kernel_failure_hint, live_module,
               not_yet as _not_yet)
from .returns import returned_none
from .lesson07 import compare_value as _compare

KERNEL = "read_inflight"
GRID, BLOCK = 16, 256                 # 4096 threads: one float4 each is 64 KiB in flight
THREADS = GRID * BLOCK
TARGET = 0.85                         # live: this fraction of the pinned copy rate of the same run
MARGIN = 2.0                          # replay: bytes in flight >= this x Little's law (section 1's "above 2x")
LIVE_BYTES = 256 * 2**20
CPU_N4 = THREADS * 4 * 3 + 7          # not a multiple of the threads nor of 4 x threads: the tail matters
CPU_N4_WHOLE = THREADS * 4 * 3        # a multiple of 4 x threads: right here and wrong above means the tail


# --------------------------------------------------------------------------- threads_for_link
# (link GB/s, latency ns, bytes per thread): whole quotients, and fractional ones above and below one half, so that a
# whole number of threads rounded up is told from one rounded down or to the nearest
THREADS_CASES = ((55.0, 1200.0, 16), (25.0, 900.0, 64), (12.0, 2000.0, 4), (10.0, 1000.0, 48))


def threads_right(got: float, want: float) -> bool:
    """True for the exact quotient, or for the fewest whole threads that reach it (math.ceil, ``-(-a // b)``,
    np.ceil): a check judges what the function returns, not how it computes it."""
    if math.isclose(got, want, rel_tol=1e-6):
        return True
    floor = want * (1 - 1e-9)          # a quotient that is whole up to rounding error must not ask for one more
    return float(got).is_integer() and floor <= got < floor + 1


def check_threads_for_link(threads_for_link: Callable[[float, float, int], float]) -> Feedback:
    """keep-enough-bytes-in-flight: ``threads_for_link(link_GBps, latency_ns, bytes_per_thread)`` = link x latency /
    bytes per thread,
    as a float or rounded up to whole threads."""
    if is_placeholder(threads_for_link) or not callable(threads_for_link):
        return _not_yet(_("define threads_for_link(link_GBps, latency_ns, bytes_per_thread): Little's law gives the "
                          "bytes in flight, and each thread keeps bytes_per_thread of them."))
    for link, lat, per in THREADS_CASES:
        got = threads_for_link(link, lat, per)
        forgot = returned_none(threads_for_link, got)
        if forgot is not None:
            return forgot
        if got is None or got is Ellipsis:
            return _not_yet(_("threads_for_link returns nothing yet: return the number of threads."))
        try:
            got = float(got)
        except (TypeError, ValueError):
            return _hint(_("return one number (threads); threads_for_link returned {type}.").format(
                type=type(got).__name__), _("return the count of threads as a number (a float, or an int rounded up)."))
        want = link * lat / per
        if threads_right(got, want):
            continue
        if math.isclose(got, link * lat, rel_tol=1e-6):
            return _hint(_("that is the bytes in flight (Little's law), not the threads. How many of those bytes "
                           "does each thread keep in flight?"),
                         _("share the bytes in flight out among the threads, bytes_per_thread each."))
        if math.isclose(got, want * 1e9, rel_tol=1e-6) or math.isclose(got, want * 1e-9, rel_tol=1e-6) \
                or math.isclose(got, want * 1e-18, rel_tol=1e-6) or math.isclose(got, want * 1e18, rel_tol=1e-6):
            return _hint(_("off by a power of 10^9. What are GB/s x ns in bytes?"),
                         _("GB/s x ns is already bytes (10^9 B/s x 10^-9 s), so no unit factor is needed."))
        if math.isclose(got, want * 8, rel_tol=1e-6) or math.isclose(got, want / 8, rel_tol=1e-6):
            return _hint(_("off by 8: GB/s count bytes, not bits. Where does your factor 8 come from?"),
                         _("everything here is in bytes (gigabytes per second, bytes per thread): drop the 8."))
        if math.isclose(got, link / lat / per, rel_tol=1e-6) or math.isclose(got, lat / link / per, rel_tol=1e-6):
            return _hint(_("Little's law multiplies: bytes in flight = bandwidth x latency, not a ratio of the two. "
                           "Which of your operations divides?"),
                         _("multiply link_GBps by latency_ns for the bytes in flight, then share them out."))
        if got.is_integer() and want - 1 < got < want * (1 - 1e-9):     # the whole number just below the quotient
            return _hint(_("you rounded down: {got:.0f} threads of {per} B keep fewer bytes in flight than the "
                           "link needs. Which way must a whole number of threads round for the link to stay full?")
                         .format(got=got, per=per),
                         _("round up (for example -(-a // b)), or return the quotient itself as a float."))
        return _hint(_("for {link} GB/s, {lat} ns and {per} B per thread yours gave {got:.6g}. How many bytes must "
                       "be in flight to keep the link busy, and how many does one thread keep?").format(
            link=link, lat=lat, per=per, got=got),
                     _("Little's law gives the bytes in flight from the bandwidth and the latency (GB/s x ns is "
                       "bytes); then count the threads that keep that many, bytes_per_thread each."))
    return _correct(_("bytes in flight = bandwidth x latency (GB/s x ns = bytes), shared out at bytes_per_thread each "
                      "(as a float, or rounded up to whole threads): fewer threads than that leave the link idle "
                      "part of every round trip."))


# --------------------------------------------------------------------------- read_inflight
def _body(source: str, start: int) -> tuple[int, int]:
    """The span of the brace block that opens at or after ``start``."""
    open_ = source.index("{", start)
    depth = 0
    for k in range(open_, len(source)):
        depth += {"{": 1, "}": -1}.get(source[k], 0)
        if depth == 0:
            return open_ + 1, k
    return open_ + 1, len(source)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def independent_loads(source: str, pointer: str = "src") -> int:
    """The loads of ``pointer`` in the body of the kernel's first loop: the loads a thread issues per iteration
    before it needs a result (the loop's addresses depend on no loaded value, so the GPU issues them back to back).

    A ``#pragma unroll N`` before a loop, or an inner ``for`` with a literal bound ``< N``, multiplies its loads
    by N (the compiler unrolls it). This is what the replay check reads from the source; live, the stopwatch decides.
    """
    code = _COMMENTS.sub("", source)
    m = re.search(r"__global__[^{]*\{", code)
    if not m:
        return 0
    begin, end = _body(code, m.end() - 1)
    code = code[begin:end]
    load = re.compile(rf"(?<![\w.]){re.escape(pointer)}\s*\[|__ld\w*\s*\(\s*&?\s*\(?\s*{re.escape(pointer)}\b"
                      rf"|\*\s*\(\s*{re.escape(pointer)}\s*\+")
    loop = re.search(r"\b(for|while)\s*\(", code)
    if not loop:
        return len(load.findall(code))

    def count(text: str) -> int:
        total, pos = 0, 0
        for inner in re.finditer(r"(#pragma\s+unroll\s*\(?\s*(\d+)\s*\)?\s*)?\bfor\s*\(([^;]*);([^;]*);[^)]*\)", text):
            if inner.start() < pos:
                continue
            total += len(load.findall(text[pos:inner.start()]))
            b, e = _body(text, inner.end())
            bound = re.search(r"<\s*(\d+)\s*$", inner.group(4).strip())
            times = int(inner.group(2)) if inner.group(2) else int(bound.group(1)) if bound else 1
            total += times * count(text[b:e])
            pos = e + 1
        return total + len(load.findall(text[pos:]))

    pragma = re.search(r"#pragma\s+unroll\s*\(?\s*(\d+)\s*\)?\s*$", code[:loop.start()])
    b, e = _body(code, loop.end())
    return (int(pragma.group(1)) if pragma else 1) * count(code[b:e])


def needed_bytes() -> tuple[float, float, float, str]:
    """(bytes Little's law needs, link GB/s, latency ns, which latency) with section 1's figures: the pinned copy
    rate and lesson 07's dependent zero-copy load (``experiments.memcpy()`` and ``experiments.latency()``, the
    reference record's in replay)."""
    from .. import experiments

    memcpy, latency = experiments.memcpy(), experiments.latency()
    link = float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))
    lat = float(latency.one(memory="zero_copy", cpu_cache="evicted")["load_ns"])
    return link * lat, link, lat, N_("section 1's figures: the pinned copy and one dependent zero-copy load")


def _build(source: str, live: bool) -> Any:
    if live:
        return live_module(source).get_function(KERNEL)
    from .. import cpu
    return cpu.SourceModule(source, name=f"{KERNEL}.cu").get_function(KERNEL)


def _explain(exc: Exception) -> Feedback:
    return kernel_failure_hint(exc, KERNEL, _("a read past the end of src"),
                               _(". In a loop that issues several loads per iteration, which of its loads must the "
                                 "loop's condition keep in bounds?"),
                               _("which load of an iteration reaches furthest? The loop's condition must keep that "
                                 "one in bounds; what it leaves over needs a loop of its own."))


def _correctness(src: np.ndarray, partial: np.ndarray) -> str | None:
    """None when the threads' sums add up to the data's; else "zero", "missed" (too little) or "twice" (too much)."""
    total, want = float(partial.astype(np.float64).sum()), float(src.astype(np.float64).sum())
    if total == want:
        return None
    return "zero" if total == 0 else "missed" if total < want else "twice"


def _wrong_sums(kind: str, whole_ok: bool) -> Feedback:
    """The hint for wrong sums: ``whole_ok`` says whether the kernel was right where n4 is a multiple of 4 x the
    threads (then only the tail is missing)."""
    if kind == "zero":
        return _hint(_("partial[] is all zero. Where does a thread's sum go when the thread is done?"),
                     _("at the end, each thread writes its sum to partial[its global index]."))
    if kind == "missed" and whole_ok:
        return _hint(_("some float4 were not read: your loop is right when n4 is a multiple of 4 x the threads, and "
                       "here it is not. Which elements does the loop with several loads per iteration leave over, "
                       "and does a tail loop read them?"),
                     _("the elements left over lie past the point where that loop stopped: what could read them?"))
    if kind == "missed":
        return _hint(_("some float4 were not read, even when n4 is a multiple of 4 x the threads: the loads of an "
                       "iteration leave gaps. Which elements do one iteration's loads cover, over all the threads?"),
                     _("write down the indices threads 0 and 1 load in their first two iterations, for a grid of "
                       "step threads: which index does nobody load?"))
    return _hint(_("some float4 were read twice. Where must the next iteration start, given the loads this one "
                   "issued?"),
                 _("count the elements one iteration's loads cover over all the threads: the loop's increment must "
                   "move past all of them."))


def check_read_inflight(source: str) -> Feedback:
    """keep-enough-bytes-in-flight: a read kernel that reaches the link with only :data:`THREADS` threads (see the
    module docstring)."""
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet(_("write the body of {kernel}: a grid-stride loop in which each thread issues several "
                          "independent float4 loads before it adds them up, a tail loop, and partial[tid] = sum.")
                        .format(kernel=KERNEL))
    from ..mode import detect

    try:  # the same source on the CPU backend in both modes: bounds, every element once, coalescing
        wrong, width = _check_on_cpu(_build(source, live=False), source)
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        return _explain(exc)
    if wrong is not None:
        return wrong
    if not detect().live:
        return _judge_in_flight(source, width)
    try:
        fn = _build(source, live=True)
    except Exception as exc:  # noqa: BLE001
        return _explain(exc)
    return _check_live(fn, source)


SCATTERED = N_("a warp's load touches {per:.1f}x the 128-byte lines its bytes need. In each load, do consecutive "
             "threads read consecutive float4s (lesson 09 shows what scattered lines cost)?")
SCATTERED_STEP = N_("in one load instruction, thread t + 1 should read the float4 right after thread t's: how far "
                    "apart must one thread's own loads then be?")


def _run_on_cpu(fn: Any, n4: int) -> tuple[str | None, tuple[Any, ...], tuple[np.ndarray, ...]]:
    """Run the kernel over ``n4`` random float4 on the CPU backend: (what is wrong with the sums or None, the
    arguments, to trace; the arrays, which must outlive the trace)."""
    from .. import cpu

    rng = np.random.default_rng(8)
    src = cpu.mapped_empty(n4 * 4, np.float32)
    partial = cpu.mapped_empty(THREADS, np.float32)
    src[:] = rng.integers(0, 4, src.size).astype(np.float32)
    partial[:] = 0
    args = (cpu.device_pointer(src), np.uint64(n4), cpu.device_pointer(partial))
    fn(*args, block=(BLOCK, 1, 1), grid=(GRID, 1))
    return _correctness(src, partial), args, (src, partial)


def _scattered(fn: Any, args: tuple[Any, ...]) -> tuple[float, int]:
    """(lines a warp's loads touch over the lines their bytes need, the bytes one load reads), from the CPU
    backend's trace."""
    from ..cpu.trace import LINE_BYTES

    trace = fn.trace(*args, block=(BLOCK, 1, 1), grid=(GRID, 1), max_warps=8)
    rows = trace.instructions
    loads = rows[(~rows["is_store"]) & (~rows["is_atomic"]) & (rows["param"] == 0)]
    accesses = trace.accesses[(trace.accesses["flags"] == 0) & (trace.accesses["param"] == 0)]
    width = int(np.max(accesses["size"])) if len(accesses) else 0
    useful = loads["useful_bytes"].sum()
    return (loads["lines"].sum() * LINE_BYTES / useful if useful else 1.0), width


def _check_on_cpu(fn: Any, source: str) -> tuple[Feedback | None, int]:
    """Run and trace the kernel on the CPU backend: (a hint for the mistake made: a read out of bounds raises, a
    warp's loads scattered over lines, an element missed or read twice, else None; the bytes one load reads)."""
    wrong, args, arrays = _run_on_cpu(fn, CPU_N4)
    per, width = _scattered(fn, args)
    del arrays
    if per > 1.5:                        # scattered loads come first: they are often why elements were missed too
        return _hint((_("the sums are right, but ") if wrong is None else "") + _(SCATTERED).format(per=per),
                     _(SCATTERED_STEP)), 0
    if wrong:
        whole_ok = _run_on_cpu(fn, CPU_N4_WHOLE)[0] is None
        return _wrong_sums(wrong, whole_ok), 0
    return None, width


def _judge_in_flight(source: str, width: int) -> Feedback:
    """Replay: Little's law with section 1's figures decides, with the margin section 1's table showed the link needs
    (:data:`MARGIN` x the estimate)."""
    loads_per_thread = independent_loads(source)
    in_flight = THREADS * width * loads_per_thread
    need, link, lat, which = needed_bytes()
    have = _("{threads:,} threads x {loads} load(s) x {width} B = {kib:.0f} KiB in flight").format(
        threads=THREADS, loads=loads_per_thread, width=width, kib=in_flight / 1024)
    little = _("{want:.0f} KiB, {margin:g} x Little's law: {link:.1f} GB/s x {lat:.0f} ns = {need:.0f} KiB ({which}), "
               "and section 1's table judges the link nearly full from {margin:g}x the estimate").format(
        want=MARGIN * need / 1024, margin=MARGIN, link=link, lat=lat, need=need / 1024, which=_(which))
    if loads_per_thread <= 1:
        return _hint(_("every element is read once, but {have}; the check asks for {little}. {one_load}").format(
            have=have, little=little, one_load=_(ONE_LOAD)), _(ONE_LOAD_STEP))
    if in_flight < MARGIN * need:
        return _hint(_("every element is read once, but {have} is below {little}. How could each thread keep more "
                       "bytes in flight?").format(have=have, little=little),
                     _("a float4 is already the widest load: how many of them does an iteration issue, and how many "
                       "would reach the figure above?"))
    return _correct(_("every element read once, coalesced, and {have} >= {little}: enough for the link (checked on "
                      "the CPU backend and against the record; live, the check times it against {target:.0%} of the "
                      "pinned copy rate).").format(have=have, little=little, target=TARGET))


ONE_LOAD = N_("One load per iteration waits a whole round trip before the next: how could one thread keep several "
            "loads in flight at once?")
ONE_LOAD_STEP = N_("a load whose value is not needed yet does not hold up the next load: what if one iteration loaded "
                 "several float4 into separate variables before adding any of them?")


def _check_live(fn: Any, source: str) -> Feedback:
    import pycuda.driver as drv

    from ..memory import gpu
    from ..experiments.buffers import device, mapped, pinned
    from ..memory.timing import time_gpu

    n4 = LIVE_BYTES // 16
    try:
        with mapped(LIVE_BYTES, fill=None) as src, pinned(LIVE_BYTES) as host, device(LIVE_BYTES) as dev:
            src[:] = np.random.default_rng(8).integers(0, 4, src.size).astype(np.float32)
            partial = gpu.mapped_empty(THREADS, np.float32)
            try:
                partial[:] = 0
                args = (gpu.device_pointer(src), np.uint64(n4), gpu.device_pointer(partial))
                fn(*args, block=(BLOCK, 1, 1), grid=(GRID, 1))
                gpu.synchronize()
                wrong = _correctness(src, partial)
                if wrong:
                    return _wrong_sums(wrong, whole_ok=False)
                kernel = time_gpu(lambda: fn(*args, block=(BLOCK, 1, 1), grid=(GRID, 1)), repeats=5)
                copy = time_gpu(lambda: drv.memcpy_htod(dev, host), repeats=5)
            finally:
                gpu.free(partial)
    except Exception as exc:  # noqa: BLE001
        return _explain(exc)
    rate, link = LIVE_BYTES / kernel.median / 1e9, LIVE_BYTES / copy.median / 1e9
    loads_per_thread = independent_loads(source)
    if rate < TARGET * link:
        return _hint(_("every element is read once, but with {threads:,} threads it read {rate:.1f} GB/s = "
                       "{share:.0%} of the {link:.1f} GB/s pinned copy measured just now (target {target:.0%}). ")
                     .format(threads=THREADS, rate=rate, share=rate / link, link=link, target=TARGET)
                     + (_(ONE_LOAD) if loads_per_thread <= 1 else _("How could each thread keep more bytes in flight "
                        "(your loop body has {loads} loads)?").format(loads=loads_per_thread))
                     + _(" If another learner shares the GPU, run the check again."),
                     _(ONE_LOAD_STEP) if loads_per_thread <= 1 else _("a float4 is already the widest load: how "
                     "many of them does an iteration issue now, and how many more would help?"))
    return _correct(_("{rate:.1f} GB/s = {share:.0%} of the {link:.1f} GB/s pinned copy measured in the same run, "
                      "with only {threads:,} threads: their independent loads keep the link's round trip full.")
                    .format(rate=rate, share=rate / link, link=link, threads=THREADS))


# --------------------------------------------------------------------------- the prediction
def compare_prediction(predicted: Any, inflight: Any, memcpy: Any, latency: Any, threads: int = THREADS) -> str:
    """keep-enough-bytes-in-flight: a predicted fraction of the link for ``threads`` threads with one float4 each,
    against the run (``experiments.inflight``, ``memcpy`` and ``latency`` results); ``...`` = no prediction."""
    link = float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))
    latency_ns = float(latency.one(memory="zero_copy", cpu_cache="evicted")["load_ns"])
    row = inflight.one(kernel="read_float4", threads=threads)
    return fraction_text(predicted, row["GBps"] / link, row["bytes_in_flight"] / latency_ns / link, threads)


def fraction_text(predicted: Any, measured_fraction: float, little_fraction: float | None = None,
                  threads: int = THREADS) -> str:
    """Text comparing a predicted fraction of the link with the measured one (``...`` = no prediction).

    ``little_fraction``: what Little's law with the idle latency predicts (at most 1), to explain the gap."""
    why = ""
    if little_fraction is not None:
        why = (_("Little's law with the idle latency predicts {fraction:.0%}").format(
            fraction=min(little_fraction, 1.0))
               + (_(": the run fell short of it, because loads that share the link wait in queues and the round "
                    "trip grows (the loaded latency, in Going deeper).")
                  if measured_fraction < 0.9 * min(little_fraction, 1)
                  else _(", close to the run: at this load the round trip stayed near its idle value.")))
    return _compare(predicted, measured_fraction,
                    _("fraction of the link reached by {threads:,} threads with one float4 each").format(
                        threads=threads), fmt="{:.0%}", why=why)


CHECKS = {"threads_for_link": check_threads_for_link, "read_inflight": check_read_inflight}


# --------------------------------------------------------------------------- reread_load
# The learner writes ``reread``: block b re-reads its own chunk of a small mapped buffer ``passes`` times through the
# load they chose. The check judges where the re-reads were served, not the source's text: on the CPU backend it runs
# the kernel with each cache-hint load counted as it executes (a plain load is what is left), then takes the figure for
# that load from the recorded caching experiment (same-SM re-reads) in replay, or times the kernel live.
REREAD = "reread"
REREAD_GRID, REREAD_BLOCK, REREAD_CHUNK4, REREAD_PASSES = 4, 64, 150, 3   # CPU run: chunk4 not a multiple of blocks
LIVE_REREAD_BYTES, LIVE_REREAD_PASSES = 8 * 2**20, 32
# The cache-hint loads (CUDA Programming Guide, load functions using cache hints): the index the CPU run counts them by
HINTS = ("ldg", "ldca", "ldcg", "ldcs", "ldlu", "ldcv")
ON_THE_SM = {"ldg": N_("the read-only / L1 path"), "ldca": N_("the L1 (cache at all levels)"),
             "plain": N_("the L1 (a plain `ld.global` caches at all levels by default)")}
MEASURED = {"ldg": "ldg", "ldca": "ldca", "ldcg": "ldcg", "ldcv": "ldcv", "plain": "ldca"}   # recorded row per path
_ITS_CACHE = N_("its cache")
PTX_LD = "https://docs.nvidia.com/cuda/parallel-thread-execution/#cache-operators"

_COUNTED = r"""
__device__ inline float4 zc_counted(unsigned int *zc_path, int kind, const float4 *p) {
    atomicAdd(&zc_path[kind], 1u);
    return *p;
}
__device__ inline float zc_counted(unsigned int *zc_path, int kind, const float *p) {
    atomicAdd(&zc_path[kind], 1u);
    return *p;
}
"""


def counted_source(source: str) -> str:
    """The learner's ``reread`` for the CPU backend: each cache-hint load (``__ldg(p)``...) becomes a plain load that
    also counts, in a hidden last argument, which hint ran; the backend itself models no cache."""
    header = re.search(rf"(__global__\s+void\s+{REREAD}\s*\([^)]*)\)", source)
    if not header:
        return source                                   # the missing kernel is reported by the build
    text = source[:header.end() - 1] + ", unsigned int *zc_path)" + source[header.end():]
    for kind, name in enumerate(HINTS):
        text = re.sub(rf"\b__{name}\s*\(", f"zc_counted(zc_path, {kind}, ", text)
    return _COUNTED + text


def reread_path(source: str) -> tuple[Feedback | None, str]:
    """Run the learner's ``reread`` on the CPU backend: (a hint when the sums are wrong, else None; the load its
    re-reads took: a name of :data:`HINTS`, "plain", or "mixed")."""
    from .. import cpu

    fn = cpu.SourceModule(counted_source(source), name=f"{REREAD}.cu").get_function(REREAD)
    rng = np.random.default_rng(9)
    n4 = REREAD_GRID * REREAD_CHUNK4
    src = cpu.mapped_empty(n4 * 4, np.float32)
    partial = cpu.mapped_empty(REREAD_GRID * REREAD_BLOCK, np.float32)
    path = cpu.mapped_empty(len(HINTS), np.uint32)
    src[:] = rng.integers(0, 4, src.size).astype(np.float32)
    partial[:] = 0
    path[:] = 0
    fn(cpu.device_pointer(src), np.uint64(REREAD_CHUNK4), np.int32(REREAD_PASSES), cpu.device_pointer(partial),
       cpu.device_pointer(path), block=(REREAD_BLOCK, 1, 1), grid=(REREAD_GRID, 1))
    chunks = src.reshape(REREAD_GRID, -1).astype(np.float64).sum(axis=1)
    blocks = partial.reshape(REREAD_GRID, -1).astype(np.float64).sum(axis=1)
    wrong = _reread_sums(blocks, chunks)
    if wrong:
        return wrong, ""
    loads = REREAD_GRID * REREAD_CHUNK4 * REREAD_PASSES
    counts = {name: int(path[k]) for k, name in enumerate(HINTS) if path[k]}
    counts["plain"] = max(loads - sum(counts.values()), 0)
    used = [name for name, n in counts.items() if n]
    return None, used[0] if len(used) == 1 else "mixed"


def _reread_sums(blocks: np.ndarray, chunks: np.ndarray) -> Feedback | None:
    if np.array_equal(blocks, REREAD_PASSES * chunks):
        return None
    if not blocks.any():
        return _hint(_("partial[] is all zero. Where does a thread's sum go when the thread is done?"),
                     _("at the end, each thread writes its sum to partial[its global index]."))
    if np.array_equal(blocks, chunks):
        return _hint(_("each block read its chunk once: the point is the re-read. What does `passes` ask for?"),
                     _("wrap the loop over the chunk in a loop over the passes."))
    if np.isclose(blocks.sum(), REREAD_PASSES * chunks.sum()) or all(np.isclose(REREAD_PASSES * chunks, b).any()
                                                                      for b in blocks):
        return _hint(_("the sums add up over the whole buffer, but not block by block: a block must re-read its "
                       "OWN chunk. Where does block b's chunk start?"),
                     _("block b's chunk starts chunk4 float4 after block b - 1's: where does your kernel start "
                       "block b, and which blockIdx does it use?"))
    return _hint(_("block by block, the sums are {sums}, and `passes` x each chunk is {want}. Does every thread of a "
                   "block cover its share of the chunk, every pass, without reading past the chunk's end?").format(
        sums=blocks.tolist(), want=(REREAD_PASSES * chunks).tolist()),
                 _("the threads of a block share its chunk: which element should thread t read first, and how far "
                   "on is its next one, so that together they cover the chunk once a pass?"))


def _recorded_rate(path: str) -> tuple[float, float]:
    """(GB/s the recorded same-SM re-reads of mapped memory delivered through ``path``'s load, the link in that run)."""
    from .. import experiments

    caching = experiments.reference("caching")
    size = max(caching.column("nbytes", memory="zero_copy"))
    row = caching.one(memory="zero_copy", nbytes=size, load=MEASURED[path], pattern="same_sm")
    return float(row["delivered_GBps"]), float(caching.one(memory="memcpy_htod_pinned")["delivered_GBps"])


def check_reread_load(source: str) -> Feedback:
    """keep-enough-bytes-in-flight: ``reread`` re-reads each block's chunk of a small mapped buffer through the load
    the learner chose; correct when the re-reads are served on the GPU (faster than the link), see the block above."""
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet(_("write the body of {kernel}: block b reads its own chunk `passes` times through the load "
                          "you chose, adds up what it reads, and writes partial[global thread index] = sum.")
                        .format(kernel=REREAD))
    try:
        wrong, path = reread_path(source)
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        return kernel_failure_hint(exc, REREAD, _("a read past the end of src"),
                                   _(". Which chunk does block b own, and where does it end?"),
                                   _("base = src + blockIdx.x * chunk4; read base[i] for i < chunk4 only."))
    if wrong:
        return wrong
    if path == "mixed":
        return _hint(_("the kernel's loads of src took more than one path. Which single load do you choose for the "
                       "re-reads, and why?"), _("use the same load for every read of the chunk."))
    if path in ("ldcs", "ldlu"):
        return _hint(_("your re-reads went through `__{path}`, which the course did not measure on mapped memory. "
                       "Which of the loads measured in section 2 did the SM serve from its own cache?").format(
            path=path),
                     _("choose among __ldg, __ldca, __ldcg, __ldcv and a plain load: section 2's table has them."))
    from ..mode import detect

    if detect().live:
        return _reread_live(source, path)
    rate, link = _recorded_rate(path)
    return _judge_reread(path, rate, link, _("the recorded caching experiment, same-SM re-reads of 8 MiB"),
                         recorded=True)


def _judge_reread(path: str, rate: float, link: float, how: str, recorded: bool = False) -> Feedback:
    said = f"`__{path}`" if path != "plain" else _("a plain load")
    if rate > 1.5 * link:
        proxy = (_(" (the `__ldca` row: `ld.global`'s default cache operator is `.ca`, [PTX ISA]({url}))").format(
            url=PTX_LD) if path == "plain" and recorded else "")
        return _correct(_("the re-reads through {said} ran at {rate:,.0f} GB/s{proxy}, {times:.0f}x the {link:.1f} "
                          "GB/s link ({how}): after the first pass the SM served them from {where}, not across the "
                          "bus. Only the SM that fetched a line benefits, and the L1 is not coherent with the host "
                          "(lesson 14).").format(said=said, rate=rate, proxy=proxy, times=rate / link, link=link,
                                                 how=how, where=_(ON_THE_SM.get(path, _ITS_CACHE))))
    return _hint(_("the re-reads through {said} ran at {rate:,.1f} GB/s, no faster than the {link:.1f} GB/s link "
                   "({how}): every pass crossed the bus again. Which cache did section 2 find keeps mapped host "
                   "memory, and does your load go through it?").format(said=said, rate=rate, link=link, how=how),
                 _("section 2's verdict: the SM's L1 / read-only path served same-SM re-reads and the L2 did not; "
                   "{said} skips the L1.").format(said=said))


def _reread_live(source: str, path: str) -> Feedback:
    import pycuda.driver as drv

    from ..experiments.buffers import device, mapped, pinned
    from ..memory import gpu
    from ..memory.timing import time_gpu

    try:
        fn = live_module(source).get_function(REREAD)
        blocks = gpu.device_attributes()["MULTIPROCESSOR_COUNT"]
        chunk4 = LIVE_REREAD_BYTES // 16 // blocks // 8 * 8
        with mapped(blocks * chunk4 * 16) as src, pinned(64 * 2**20) as host, device(64 * 2**20) as dev:
            partial = gpu.mapped_empty(blocks * 1024, np.float32)
            try:
                args = (gpu.device_pointer(src), np.uint64(chunk4), np.int32(LIVE_REREAD_PASSES),
                        gpu.device_pointer(partial))
                kernel = time_gpu(lambda: fn(*args, block=(1024, 1, 1), grid=(blocks, 1)), repeats=5)
                copy = time_gpu(lambda: drv.memcpy_htod(dev, host), repeats=5)
            finally:
                gpu.free(partial)
    except Exception as exc:  # noqa: BLE001
        return kernel_failure_hint(exc, REREAD, _("a read past the end of src"), ".",
                                   _("read base[i] for i < chunk4 only."))
    rate = blocks * chunk4 * 16 * LIVE_REREAD_PASSES / kernel.median / 1e9
    return _judge_reread(path, rate, 64 * 2**20 / copy.median / 1e9,
                         _("timed just now on this GPU, beside a pinned copy"))


CHECKS["reread_load"] = check_reread_load
