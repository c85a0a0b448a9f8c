"""Bandwidth experiments: copies, streaming kernels, requests in flight, caching (measure-what-pinning-buys,
measure-bandwidth and keep-enough-bytes-in-flight)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import kernels
from ..i18n import _
from ..memory.timing import time_gpu, time_host
from ..sharing.gpu_queue import measurement_slot
from .buffers import BLOCK, NEVER, device, full_grid, mapped, pinned, seconds_row
from .result import Result, Row, run

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
SWEEP_SIZES = tuple(4 * KiB * 4**k for k in range(11))  # 4 KiB .. 4 GiB in steps of 4
DEFAULT_SIZES = SWEEP_SIZES[:-1]  # 4 KiB .. 1 GiB


def _repeats_for(nbytes: int, repeats: int) -> int:
    """Every size gets all ``repeats`` (the quiet-sweep rule: >= 9 everywhere, helpers/experiments/quiet.py)."""
    return repeats


def memcpy(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 10) -> Result:
    """``cudaMemcpy`` host-to-device and device-to-host, from pinned and pageable memory (measure-what-pinning-buys,
    measure-bandwidth).

    Beside them, rows with ``host_memory="host_memcpy"`` (direction ``"htoh"``) time a plain CPU copy of the same size
    between two ordinary arrays: the staging copy a pageable transfer needs, on its own (measure-what-pinning-buys).
    """
    return run("memcpy", {"sizes": list(sizes), "repeats": repeats}, _memcpy)


def _memcpy(sizes: list[int], repeats: int) -> list[Row]:
    import pycuda.driver as drv

    largest = max(sizes)
    rows: list[Row] = []
    pageable = np.ones(largest // 4, np.float32)  # ordinary memory, every page touched
    other = np.ones(largest // 4, np.float32)  # a second ordinary array, the target of the host-only copy
    with pinned(largest) as locked, device(largest) as dev:
        for nbytes in sizes:
            for host_memory, host_array in (("pinned", locked), ("pageable", pageable)):
                host = host_array.view(np.uint8)[:nbytes]
                for direction in ("htod", "dtoh"):
                    if direction == "htod":
                        timing = time_gpu(lambda: drv.memcpy_htod(dev, host), repeats=_repeats_for(nbytes, repeats))
                    else:
                        timing = time_gpu(lambda: drv.memcpy_dtoh(host, dev), repeats=_repeats_for(nbytes, repeats))
                    rows.append(seconds_row(timing, direction=direction, host_memory=host_memory, nbytes=nbytes,
                                            GBps=nbytes / timing.median / 1e9))
            source, target = pageable.view(np.uint8)[:nbytes], other.view(np.uint8)[:nbytes]
            timing = time_host(lambda: np.copyto(target, source), repeats=_repeats_for(nbytes, repeats))
            rows.append(seconds_row(timing, direction="htoh", host_memory="host_memcpy", nbytes=nbytes,
                                    GBps=nbytes / timing.median / 1e9))
    return rows


def _stream_kernel(op: str) -> tuple[Any, str]:
    name = "read_float4_x4" if op == "read" else "write_float4"
    return kernels.load_kernel("bandwidth", name), name


def _launch_stream(kernel: Any, op: str, pointer: Any, nbytes: int, sink: Any, grid: int, block: int) -> None:
    n4 = np.uint64(nbytes // 16)
    if op == "read":
        kernel(pointer, n4, NEVER, sink, block=(block, 1, 1), grid=(grid, 1))
    else:
        kernel(pointer, n4, np.float32(2.0), block=(block, 1, 1), grid=(grid, 1))


def kernel_bandwidth(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int = 10) -> Result:
    """Streaming read and write kernels on mapped host memory and on device memory (measure-bandwidth)."""
    return run("kernel_bandwidth", {"sizes": list(sizes), "repeats": repeats}, _kernel_bandwidth)


def _kernel_bandwidth(sizes: list[int], repeats: int) -> list[Row]:
    from ..memory import gpu

    largest = max(sizes)
    grid = full_grid()
    rows: list[Row] = []
    with mapped(largest) as host, device(largest) as dev, device(4) as sink:
        pointers = {"zero_copy": gpu.device_pointer(host), "device": dev}
        for memory, pointer in pointers.items():
            for op in ("read", "write"):
                kernel, name = _stream_kernel(op)
                for nbytes in sizes:
                    timing = time_gpu(lambda: _launch_stream(kernel, op, pointer, nbytes, sink, grid, BLOCK),
                                      repeats=_repeats_for(nbytes, repeats))
                    rows.append(seconds_row(timing, memory=memory, op=op, kernel=name, nbytes=nbytes, grid=grid,
                                            block=BLOCK, GBps=nbytes / timing.median / 1e9))
        if not np.all(host[: largest // 4] == np.float32(2.0)):
            raise AssertionError("write_float4 did not write every element of the mapped buffer")
    return rows


VECTOR_KERNELS = {"read_float": (4, 1), "read_float2": (8, 1), "read_float4": (16, 1), "read_float4_x4": (16, 4),
                  "read_float4_x4_runs": (16, 4), "read_float4_x4_l2_256": (16, 4)}


INFLIGHT_PROBE = 4 * MiB  # the untimed first launch of a row that sizes its buffer


def inflight(nbytes: int = 256 * MiB, repeats: int = 9, min_seconds: float = 0.025) -> Result:
    """Zero-copy read bandwidth against the bytes each thread and the GPU keep in flight (keep-enough-bytes-in-flight).

    A row reads ``nbytes``, or, when few threads move few bytes per second, fewer: the bytes that keep
    one launch busy for at least ``min_seconds`` (sized from one untimed probe launch over 4 MiB).
    Either way every row meets the quiet-sweep rule (>= 256 MiB or >= 20 ms a repeat, >= 9 repeats)."""
    return run("inflight", {"nbytes": nbytes, "repeats": repeats, "min_seconds": min_seconds}, _inflight)


def _row_size(launch: Any, nbytes: int, min_seconds: float, unit: int) -> int:
    """The bytes a row reads: ``nbytes``, or fewer that still take ``min_seconds`` by one probe launch."""
    probe = time_gpu(lambda: launch(INFLIGHT_PROBE), repeats=1, warmup=1).median
    wanted = INFLIGHT_PROBE * min_seconds / max(probe, 1e-9) * 1.25  # a margin over the probe's estimate
    size = int(min(nbytes, max(INFLIGHT_PROBE, wanted)))
    return max(unit, size // unit * unit)


def _inflight(nbytes: int, repeats: int, min_seconds: float) -> list[Row]:
    from ..memory import gpu

    full = full_grid() * BLOCK
    thread_counts = sorted({32 * 2**k for k in range(20) if 32 * 2**k < full} | {full})
    rows: list[Row] = []
    with mapped(nbytes) as host, device(4) as sink:
        pointer = gpu.device_pointer(host)
        # 1. vector width and loads per thread, with the GPU full of threads
        # 2. the number of threads, for one and for four 16-byte loads per thread
        plan = [(name, full) for name in VECTOR_KERNELS]
        plan += [(name, threads) for name in ("read_float4", "read_float4_x4") for threads in thread_counts if threads != full]
        for name, threads in plan:
            vector_bytes, loads = VECTOR_KERNELS[name]
            block = min(BLOCK, threads)
            grid = threads // block
            kernel = kernels.load_kernel("bandwidth", name)

            def launch(size: int) -> None:
                kernel(pointer, np.uint64(size // vector_bytes), NEVER, sink, block=(block, 1, 1), grid=(grid, 1))

            # few threads move few bytes per second: they read fewer bytes, still >= min_seconds a launch
            size = _row_size(launch, nbytes, min_seconds, MiB)
            timing = time_gpu(lambda: launch(size), repeats=repeats)
            rows.append(seconds_row(timing, kernel=name, vector_bytes=vector_bytes, loads_per_thread=loads,
                                    threads=threads, grid=grid, block=block, nbytes=size,
                                    bytes_in_flight=threads * vector_bytes * loads, GBps=size / timing.median / 1e9))
        # 3. the bulk-copy engine: thread 0 of each 32-thread block keeps four 8 KiB copies in flight
        grid = gpu.device_attributes()["MULTIPROCESSOR_COUNT"] * 6
        bulk = kernels.load_kernel("bandwidth", "read_bulk")
        timing = time_gpu(lambda: bulk(pointer, np.uint64(nbytes // 16), NEVER, sink, block=(32, 1, 1),
                                       grid=(grid, 1)), repeats=repeats)
        rows.append(seconds_row(timing, kernel="read_bulk", vector_bytes=8192, loads_per_thread=4, threads=grid * 32,
                                grid=grid, block=32, nbytes=nbytes, bytes_in_flight=grid * 8192 * 4,
                                GBps=nbytes / timing.median / 1e9))
    return rows


CACHE_LOADS = ("ldg", "ldca", "ldcg", "ldcv")  # the `cache` argument of reread_rotate, in order
REREAD_PATTERNS = ("same_sm", "other_sm")
REREAD_DESIGN = "rotate_chunks"  # rows of the controlled design carry design=REREAD_DESIGN (records before lack it)


def reread_rotation(pattern: str) -> int:
    """The ``rotate`` argument of ``reread_rotate`` for a re-read pattern (keep-enough-bytes-in-flight).

    ``same_sm``: 0, every block re-reads its own chunk, so its SM's L1 could serve the re-reads.
    ``other_sm``: 1, every pass hands each block a chunk it has never read and other blocks read
    before, so with one block per SM only the L2, shared by all SMs, could serve it.
    """
    if pattern == "same_sm":
        return 0
    if pattern == "other_sm":
        return 1
    raise ValueError(f"Unknown re-read pattern {pattern!r}; use one of {REREAD_PATTERNS}.")


def reread_schedule(blocks: int, passes: int, rotate: int) -> np.ndarray:
    """The chunk block ``b`` reads in pass ``p`` of ``reread_rotate``, as ``[b, p]`` (keep-enough-bytes-in-flight)."""
    if blocks < 1 or passes < 1:
        raise ValueError("reread_schedule needs at least one block and one pass.")
    return (np.arange(blocks)[:, None] + np.arange(passes)[None, :] * rotate) % blocks


def sm_rereads(sm_of_block: Sequence[int], passes: int, rotate: int) -> int:
    """Chunk reads of one launch made by an SM that had already read that chunk in it (keep-enough-bytes-in-flight).

    ``sm_of_block`` is what the kernel recorded (%smid of each block). The ``other_sm`` control
    is what it claims only when this is 0: no SM ever read a line twice.
    """
    schedule = reread_schedule(len(sm_of_block), passes, rotate)
    pairs = [(int(sm), int(chunk)) for sm, chunks in zip(sm_of_block, schedule) for chunk in chunks]
    return len(pairs) - len(set(pairs))


def caching(nbytes: int = 8 * MiB, repeats: int = 9, block: int = 1024) -> Result:
    """Which on-GPU cache keeps mapped memory: load kind x same-SM or other-SM re-reads (keep-enough-bytes-in-flight).

    ``reread_rotate`` runs one block per SM over ``nbytes`` cut into one chunk per block, for as
    many passes as there are blocks. ``same_sm``: each block re-reads its own chunk every pass (the
    SM's L1 could serve it). ``other_sm``: each pass gives every block a chunk it never read, which
    other blocks read before (only the shared L2 could serve it); each block's SM is read from
    %smid and ``sm_rereads`` counts reads by an SM that had read that chunk before (0 when the
    control holds; same-SM rows count their re-reads, which are the design there). Each block asks for
    more than half an SM's shared memory, so no SM can hold two of them at once, and an other-SM
    launch in which two blocks still shared an SM is run again (``placement_retries``, up to 3).
    Every launch, warm-up and re-runs included, reads its own region of the buffer (``read_bytes``
    a pass, ``nbytes`` rounded down to whole 128-byte lines per chunk), so no line is read in two
    launches. The mapped buffer is written by the CPU at allocation, not evicted
    from its caches. Device memory runs the same grid (its L2 can serve both patterns), and a
    256 MiB pinned memcpy in the same run gives the link rate: bytes delivered above it did not
    all cross the link.
    """
    params = {"nbytes": nbytes, "repeats": repeats, "block": block}
    return run("caching", params, _caching)


def _one_block_per_sm(kernel: Any) -> int:
    """Dynamic shared memory that lets only one block of ``kernel`` fit on an SM at a time
    (keep-enough-bytes-in-flight).

    More than half an SM's shared memory per block: the block scheduler then cannot place two of the
    grid's blocks on one SM together. 0 where the GPU or PyCUDA cannot set it (the ``%smid`` check
    still says where blocks ran).
    """
    import pycuda.driver as drv

    try:
        device_ = drv.Context.get_device()
        per_sm = device_.get_attribute(drv.device_attribute.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
        most = device_.get_attribute(drv.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        shared = (per_sm // 2 // 1024 + 1) * 1024
        if shared > most:
            return 0
        kernel.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
        return shared
    except (AttributeError, drv.Error):
        return 0


def _caching(nbytes: int, repeats: int, block: int) -> list[Row]:
    import pycuda.driver as drv

    from ..memory import gpu

    attributes = gpu.device_attributes()
    grid = attributes["MULTIPROCESSOR_COUNT"]
    block = min(block, attributes.get("MAX_THREADS_PER_BLOCK", 1024))
    chunk4 = nbytes // 16 // grid // 8 * 8  # whole 128-byte lines: no line is shared by two chunks
    if chunk4 < 8:
        raise ValueError(f"{nbytes} bytes cannot give each of {grid} SMs a 128-byte line: use a larger buffer.")
    per_launch = chunk4 * 16 * grid  # the bytes one pass reads; each launch reads a region of its own
    warmup, spare = 1, 3  # spare regions for launches re-run because two blocks shared an SM
    regions = warmup + repeats + spare
    kernel = kernels.load_kernel("bandwidth", "reread_rotate")
    shared = _one_block_per_sm(kernel)
    rows: list[Row] = []
    placement = np.zeros(grid, np.uint32)
    with mapped(per_launch * regions) as host, device(per_launch * regions) as dev, device(4) as sink, \
            device(4 * grid, fill=None) as sm_pointer, pinned(256 * MiB) as staging, \
            device(256 * MiB, fill=None) as target:
        link = time_gpu(lambda: drv.memcpy_htod(target, staging), repeats=repeats)
        rows.append(seconds_row(link, memory="memcpy_htod_pinned", nbytes=256 * MiB, passes=1,
                                delivered_GBps=256 * MiB / link.median / 1e9))
        start, end = drv.Event(), drv.Event()
        for memory, base in (("zero_copy", int(gpu.device_pointer(host))), ("device", int(dev))):
            for pattern in REREAD_PATTERNS:
                rotate = reread_rotation(pattern)
                passes = grid
                for cache, load in enumerate(CACHE_LOADS):
                    seconds, rereads, distinct, first_placement, retries = [], [], [], None, 0
                    drv.Context.synchronize()
                    with measurement_slot(what="caching"):
                        for region in range(regions):
                            if len(seconds) == repeats:
                                break
                            start.record()
                            kernel(np.intp(base + region * per_launch), np.uint64(chunk4), np.int32(passes),
                                   np.int32(rotate), np.int32(cache), NEVER, sink, sm_pointer,
                                   block=(block, 1, 1), grid=(grid, 1), shared=shared)
                            end.record()
                            end.synchronize()
                            drv.memcpy_dtoh(placement, sm_pointer)
                            if region < warmup:
                                continue
                            where = placement.tolist()
                            doubled = len(set(where)) < grid
                            if doubled and retries < spare and pattern == "other_sm":
                                retries += 1  # two blocks shared an SM: run again on a fresh region
                                continue
                            seconds.append(end.time_since(start) / 1e3)
                            rereads.append(sm_rereads(where, passes, rotate))
                            distinct.append(len(set(where)))
                            if first_placement is None:
                                first_placement = [int(s) for s in where]
                    median = float(np.median(seconds))
                    rows.append({"memory": memory, "design": REREAD_DESIGN, "nbytes": nbytes, "read_bytes": per_launch,
                                 "load": load, "pattern": pattern, "rotate": rotate, "passes": passes, "grid": grid,
                                 "block": block, "dynamic_shared_bytes": shared, "seconds": seconds,
                                 "delivered_GBps": per_launch * passes / median / 1e9, "sm_rereads": rereads,
                                 "distinct_sms": distinct, "placement_retries": retries,
                                 "sm_of_block": first_placement})
    return rows


def caching_findings(result: Result) -> dict[str, Any]:
    """What ``caching`` shows, decided from its rows (keep-enough-bytes-in-flight).

    ``controlled``: the rows come from the controlled design (records made before it have
    other-SM rows in which SMs re-read lines they had read). ``valid_other_sm``: every zero-copy
    other-SM launch had ``sm_rereads`` 0. ``l1``: same-SM re-reads through ``__ldg``/``__ldca``
    were delivered at over 1.5x the link. ``l2``: some zero-copy re-read that only the L2 could
    serve (``__ldcg``, or another SM) was delivered above the link. ``device_l2``: the same design
    on device memory ran above the link for other-SM re-reads, so the design lets an L2 show.
    """
    link = float(result.one(memory="memcpy_htod_pinned")["delivered_GBps"])
    zero_copy = [r for r in result.select(memory="zero_copy") if r.get("design") == REREAD_DESIGN]
    if not zero_copy:
        return {"controlled": False, "link_GBps": link}

    def rate(memory: str, load: str, pattern: str) -> float:
        return float(result.one(memory=memory, load=load, pattern=pattern, design=REREAD_DESIGN)["delivered_GBps"])

    other = [r for r in zero_copy if r["pattern"] == "other_sm"]
    valid = all(max(r["sm_rereads"]) == 0 for r in other)
    return {
        "controlled": True, "link_GBps": link, "valid_other_sm": valid,
        "other_sm_within_link": all(r["delivered_GBps"] <= link for r in other),
        "l1": max(rate("zero_copy", "ldg", "same_sm"), rate("zero_copy", "ldca", "same_sm")) > 1.5 * link,
        "l2": rate("zero_copy", "ldcg", "same_sm") > link or any(r["delivered_GBps"] > link for r in other),
        "device_l2": all(rate("device", load, "other_sm") > 1.5 * link for load in ("ldca", "ldcg")),
        "rates": {(r["load"], r["pattern"]): float(r["delivered_GBps"]) for r in zero_copy},
    }


def platform_class(attributes: dict[str, Any]) -> str:
    """The platform class a GPU's attributes name, for scoping a claim (keep-enough-bytes-in-flight): integrated, a
    hardware-coherent link, or a discrete GPU on PCIe."""
    if attributes.get("INTEGRATED"):
        return _("an integrated GPU (it shares the CPU's memory)")
    if attributes.get("PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES"):
        return _("a GPU on a hardware-coherent link to the CPU (such as Grace Hopper's NVLink-C2C)")
    return _("a discrete GPU on PCIe")


def caching_verdict(result: Result, attributes: dict[str, Any]) -> str:
    """What ``caching`` shows, as Markdown bullets scoped to the GPU and its platform class
    (keep-enough-bytes-in-flight)."""
    found = caching_findings(result)
    link = found["link_GBps"]
    where = _("{gpu} ({platform})").format(gpu=result.gpu, platform=platform_class(attributes))
    size = max(result.column("nbytes", memory="zero_copy"))

    def rate(load: str, pattern: str, memory: str = "zero_copy") -> float:
        return float(result.one(memory=memory, nbytes=size, load=load, pattern=pattern)["delivered_GBps"])

    ldg, ldcg = rate("ldg", "same_sm"), rate("ldcg", "same_sm")
    same = _("same-SM re-reads through `__ldg` ran at {ldg:,.0f} GB/s ({times:.0f}x the link's {link:.1f} GB/s), "
             "through `__ldcg`, which bypasses the L1, at {ldcg:,.1f} GB/s ({times_cg:.2f}x the link)").format(
        ldg=ldg, times=ldg / link, link=link, ldcg=ldcg, times_cg=ldcg / link)
    if not found["controlled"]:
        other = max(r["delivered_GBps"] for r in result.select(memory="zero_copy", pattern="other_sm"))
        return "\n".join([
            _("- This record predates the controlled other-SM design. In its other-SM rows nothing kept an SM from "
              "re-reading lines it had read before (over a 1 MiB buffer's 512 passes every block read every line), "
              "so an SM's L1 could serve re-reads there (they reached up to {other:.1f} GB/s, {times:.2f}x the "
              "link): those rows cannot tell the L1 from the L2. Record again on a GPU "
              "(`python -m helpers record --only caching`) for the control.").format(other=other, times=other / link),
            _("- What it does show, on {where}: {same}. A cache on the GPU served the same-SM `__ldg` re-reads; ").format(
                where=where, same=same)
            + (_("the L2 did not serve the `__ldcg` ones.") if ldcg <= link
               else _("the `__ldcg` ones ran above the link, so the L2 served them.")),
        ])
    other = [r for r in result.select(memory="zero_copy", pattern="other_sm", design=REREAD_DESIGN)]
    worst = max(r["delivered_GBps"] for r in other)
    device_other = min(rate(load, "other_sm", "device") for load in ("ldca", "ldcg"))
    lines = [_("- On {where}: {same}.").format(where=where, same=same)]
    if not found["valid_other_sm"]:
        lines.append(_("- In this run some SM ran two blocks (`sm_rereads` above 0), so the other-SM rows are not a "
                       "clean control: no verdict on the L2 from them. Run the cell again on a quiet GPU."))
    within = found["other_sm_within_link"]
    lines.append(_("- The check: every other-SM re-read (each line re-read only by SMs that never read it, read from "
                   "`%smid`) delivered {bound} the link's rate: up to {worst:.1f} GB/s against {link:.1f} GB/s "
                   "({passed}).").format(bound=_("at most") if within else _("more than"), worst=worst, link=link,
                                         passed=_("PASS") if within else _("FAIL: something on the GPU served them")))
    lines.append(_("- The positive control: on device memory the same other-SM re-reads delivered at least "
                   "{device_other:,.0f} GB/s through `__ldca` and `__ldcg`: ").format(device_other=device_other)
                 + (_("where the L2 keeps lines, this design shows it.") if found["device_l2"] else
                    _("not above the link, so this run cannot show an L2 even where one keeps lines: no verdict on "
                      "the L2.")))
    if found["l2"]:
        verdict = _("the L2 served re-reads of mapped memory: \"not cached on the GPU\" does not hold here.")
    elif not found["valid_other_sm"] or not found["device_l2"]:
        verdict = (_("a cache on the GPU served same-SM re-reads") if found["l1"]
                   else _("no cache served same-SM re-reads"))
        verdict += _("; this run gives no verdict on the L2.")
    elif found["l1"]:
        verdict = _("the SM's L1 / read-only cache kept mapped host memory for re-reads by the SM that fetched it "
                    "(`__ldg`, `__ldca`); the L2 did not keep it (`__ldcg` re-reads, and re-reads by SMs that had "
                    "never read the line, came at most at the link's rate). \"Not cached on the GPU\" is wrong for "
                    "the L1 and right for the L2, here.")
    else:
        verdict = _("no cache on the GPU served re-reads of mapped memory: the guide's statement holds here.")
    lines.append(_("- **Verdict for {where}:** {verdict}").format(where=where, verdict=verdict))
    return "\n".join(lines)
