"""decide-when-zero-copy-wins: the sentences and tables that quote its measured figures, computed from the results
(``reuse``, ``out_of_core``, ``end_to_end``) and the reference record, so that the text agrees with the figures live
and in replay."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..lessons import lesson as _lesson
from ..exercises.lesson12 import first_copy_win, fitted_rates
from ..exercises.lesson15 import passes_rule
from ..experiments import reference
from ..platform.notes import platform_note
from ..tables import Table, Text, bullets, join

LESSON = "decide-when-zero-copy-wins"
NAMES = {"zero_copy": "zero-copy", "chunked": "chunked", "chunked_overlap": "chunked + 2 streams"}


def _median(result: Any, **where: Any) -> float:
    return float(np.median(result.one(**where)["seconds"]))


def this_machine() -> Text:
    """What this machine changes in the lesson, beside the reference GPU."""
    return Text(platform_note(LESSON))


def crossing(reuse: Any) -> Any:
    """Section 1: each k's medians, and straight lines fitted to them read as rates."""
    ks = sorted({int(k) for k in reuse.column("uses")})
    rows = []
    for k in ks:
        copy, zero = _median(reuse, method="copy", uses=k), _median(reuse, method="zero_copy", uses=k)
        rows.append((k, f"{copy * 1e3:.2f} ms", f"{zero * 1e3:.2f} ms", "copy" if copy < zero else "zero-copy"))
    link, device, zc = fitted_rates(reuse)
    nbytes = 12 * int(reuse.params["n"])
    text = Text(f"Straight lines fitted to the medians ({reuse.origin(dated=True)}): copy = {nbytes / link / 1e6:.2f} ms + "
                f"{nbytes / device / 1e6:.3f} ms per use, zero-copy {nbytes / zc / 1e6:.3f} ms per use. Read as rates "
                f"of the 12n bytes of `a`, `b` and `c`: the copy crosses the link at {link:.1f} GB/s, a kernel reads "
                f"device memory at {device:.0f} GB/s, a zero-copy kernel moves {zc:.1f} GB/s.")
    table = Table(["k", "copy once + k kernels", "k zero-copy kernels", "faster"], rows)
    return join(text, table)


def _chunked(ooc: Any) -> dict[tuple[str, int], float]:
    return {(r["method"], int(r["budget_bytes"])): float(np.median(r["seconds"]))
            for r in ooc.rows if r["method"] != "zero_copy"}


def out_of_core(ooc: Any) -> Any:
    """Section 2: each way's time and rate against zero-copy, and which came out ahead."""
    total = ooc.rows[0]["total_bytes"]
    zero = _median(ooc, method="zero_copy")
    chunked = _chunked(ooc)
    rows = [("zero-copy", "none", f"{zero * 1e3:.1f}", f"{total / zero / 1e9:.1f}", "1.00")]
    rows += [(NAMES[m], f"{b >> 20} MiB", f"{t * 1e3:.1f}", f"{total / t / 1e9:.1f}", f"{t / zero:.2f}")
             for (m, b), t in chunked.items()]
    (best_method, best_budget), best = min(chunked.items(), key=lambda item: item[1])
    sequential = min(t for (m, _), t in chunked.items() if m == "chunked")
    verdict = ("zero-copy beats every chunked version" if zero < best else
               f"the best chunked version ({NAMES[best_method]}, {best_budget >> 20} MiB) beats zero-copy")
    said = bullets([
        f"The data set is {total / min(ooc.params['budgets']):.0f}x the smallest budget ({ooc.origin(dated=True)}).",
        f"Here {verdict}: zero-copy {zero * 1e3:.1f} ms, best chunked {best * 1e3:.1f} ms "
        f"(zero-copy took {zero / best:.2f}x its time).",
        f"Sequential chunks took {sequential / zero:.2f}x zero-copy's time: without overlap, the copies in and out "
        "wait for each other.",
    ])
    return join(Table(["method", "budget", "ms", "GB/s of a+b+c", "vs zero-copy"], rows), said)


def _managed_row() -> tuple[str, str]:
    """Managed memory read k times: what to choose, and the evidence (take-zero-copy-beyond-one-pcie-gpu's ``managed`` record)."""
    result = reference("managed")
    size = max(r["nbytes"] for r in result.rows)

    def seconds(kind: str, passes: int) -> float:
        return _median(result, memory=kind, nbytes=size, passes=passes)

    k = passes_rule((seconds("mapped", 1), seconds("mapped", 8)),
                    (seconds("managed, migrating", 1), seconds("managed, migrating", 8)))
    rate = {kind: result.one(memory=kind, nbytes=size, passes=1)["GBps"] for kind in
            ("mapped", "managed, preferred CPU + accessed by GPU", "managed, migrating")}
    choose = (f"advise it to the CPU (zero-copy) below {k} passes, let it migrate from {k} on" if k
              else "advise it to the CPU (zero-copy)")
    evidence = (f"{_lesson('take-zero-copy-beyond-one-pcie-gpu').label} (recorded {result.gpu}, {size / 2**30:g} GiB, one pass): advised "
                f"{rate['managed, preferred CPU + accessed by GPU']:.1f} GB/s, mapped {rate['mapped']:.1f}, "
                f"migrating {rate['managed, migrating']:.1f}")
    return choose, evidence


def pin_limit_bytes() -> float:
    """The most the course's helpers pin on this machine: three quarters of its RAM (helpers.memory.gpu)."""
    return 0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def decision_table(reuse: Any, ooc: Any, e2e: Any, attributes: dict[str, int]) -> Table:
    """Section 3: each situation, what to choose, and the figure or citation behind it."""
    sizes = sorted({int(n) for n in e2e.column("n")})
    small, large = sizes[0], sizes[-1]
    speedup = {n: _median(e2e, method="copy", n=n) / _median(e2e, method="zero_copy", n=n) for n in (small, large)}
    first = first_copy_win(reuse)
    link, device, zc = fitted_rates(reuse)
    k_even = (1 / link) / (1 / zc - 1 / device)
    zero = _median(ooc, method="zero_copy")
    best = min(_chunked(ooc).values())
    lat = {r["memory"]: r["load_ns"] for r in reference("latency").rows if r.get("cpu_cache", "evicted") == "evicted"}
    stride = {r["stride"]: r["useful_GBps"] for r in reference("stride").select(memory="zero_copy")}
    inflight = reference("inflight")
    few = int(min(inflight.column("threads")))
    few_rate = inflight.one(kernel="read_float4", threads=few)["GBps"]
    ref = f"recorded {inflight.gpu}"
    e2e_tag = f"{_lesson('overlap-copies-with-streams').label} section 2 ({e2e.origin(dated=True)})"
    rows = [
        ("GPU integrated with host memory (INTEGRATED = 1)", "use zero-copy",
         "Best Practices Guide, Zero Copy: always a gain there, memory is physically the same; but on Tegra before "
         "compute capability 7.2 (no I/O coherence) the CPU does not cache pinned memory (CUDA for Tegra), so CPU "
         f"work on it is slow. This GPU: INTEGRATED = {attributes['INTEGRATED']}"),
        ("Data read once, coalesced, host to host", "zero-copy can win",
         f"{e2e_tag}: copy / zero-copy time = {speedup[small]:.2f} at n = 2^{small.bit_length() - 1}, "
         f"{speedup[large]:.2f} at 2^{large.bit_length() - 1}"),
        ("Small transfers, few kernels", "zero-copy",
         f"{e2e_tag}: at n = 2^{small.bit_length() - 1}, one launch against four operations: copy / zero-copy "
         f"time = {speedup[small]:.2f}"),
        ("Same data used k times", f"copy once if k >= {first}" if first else "zero-copy for every k measured",
         f"section 1 ({reuse.origin(dated=True)}): fitted lines cross at k = {k_even:.2f}"),
        ("Data larger than the device-memory budget, pinnable",
         "zero-copy (simplest)" if zero <= best else
         f"overlapped chunks, or zero-copy for simplicity ({zero / best:.2f}x their time)",
         f"section 2 ({ooc.origin(dated=True)}): zero-copy {zero * 1e3:.1f} ms, best chunked {best * 1e3:.1f} ms"),
        ("Data larger than the host memory you may pin", "chunked pinned staging with overlap, or managed memory",
         "pinned memory cannot be swapped; the helpers refuse above 3/4 of RAM "
         f"({pin_limit_bytes() / 2**30:.0f} GiB on this machine); managed memory (cudaMallocManaged): the driver "
         "migrates its pages between CPU and GPU on demand; self-check 3"),
        ("Managed memory, read k times", *_managed_row()),
        ("Strided or scattered access", "copy (or fix the access)",
         f"{_lesson('coalesce-and-align-accesses').label} ({ref}): stride 32 gave {stride[32]:.2f} of {stride[1]:.1f} GB/s useful"),
        ("Dependent loads (pointer chasing, trees)", "copy",
         f"{_lesson('measure-latency').label} ({ref}): {lat['zero_copy']:.0f} ns per zero-copy load against {lat['device']:.0f} ns in "
         "device memory"),
        ("Few threads in flight", "copy, or put more loads in flight",
         f"{_lesson('keep-enough-bytes-in-flight').label} ({ref}): {few} threads x one float4 read {few_rate:.2f} GB/s"),
        ("Host and GPU touch the data while a kernel runs", "only with synchronisation",
         f"{_lesson('avoid-hazards-on-mapped-memory').label}; Programming Guide, Mapped Memory: synchronise with streams or events"),
    ]
    return Table(["situation", "choose", "evidence"], rows)


def summary(reuse: Any, ooc: Any) -> Text:
    """What you saw, computed from this run's results."""
    first = first_copy_win(reuse)
    link, device, zc = fitted_rates(reuse)
    total = ooc.rows[0]["total_bytes"]
    zero = _median(ooc, method="zero_copy")
    chunked = _chunked(ooc)
    (method, budget), best = min(chunked.items(), key=lambda item: item[1])
    sequential = min(t for (m, _), t in chunked.items() if m == "chunked")
    budgets = ", ".join(f"{b >> 20}" for b in ooc.params["budgets"])
    used = (f"copying first won from k = {first}" if first else "copying first won at no measured k")
    return bullets([
        f"Data used k times ({reuse.origin(dated=True)}): {used} (fitted lines cross at "
        f"k = {(1 / link) / (1 / zc - 1 / device):.2f}).",
        f"{total / 2**30:.1f} GiB out of core, budgets {budgets} MiB ({ooc.origin(dated=True)}): zero-copy {zero * 1e3:.1f} ms, "
        f"best chunked ({NAMES[method]}, {budget >> 20} MiB) {best * 1e3:.1f} ms, sequential chunks "
        f"{sequential * 1e3:.1f} ms.",
        f"This machine would pin at most {pin_limit_bytes() / 2**30:.0f} GiB (three quarters of its RAM).",
    ])
