"""decide-when-zero-copy-wins: the sentences and tables that quote its measured figures, computed from the results
(``reuse``, ``out_of_core``, ``read_once_strided``, ``end_to_end``) and the reference record, so that the text agrees
with the figures live and in replay."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..lessons import lesson as _lesson
from ..exercises.lesson12 import first_copy_win, fitted_rates
from ..exercises.lesson15 import passes_rule
from ..experiments import reference
from ..experiments.sparse import allocation_crossings, crossing as sparse_crossing
from ..platform.notes import platform_note
from ..i18n import N_, _
from . import computed_from
from ..tables import Table, Text, bullets, join

LESSON = "decide-when-zero-copy-wins"
NAMES = {"zero_copy": N_("zero-copy"), "chunked": N_("chunked"), "chunked_overlap": N_("chunked + 2 streams")}


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
        rows.append((k, f"{copy * 1e3:.2f} ms", f"{zero * 1e3:.2f} ms", _("copy") if copy < zero else _("zero-copy")))
    link, device, zc = fitted_rates(reuse)
    nbytes = 12 * int(reuse.params["n"])
    text = Text(_("Straight lines fitted to the medians ({origin}): copy = {nbytes:.2f} ms + {nbytes2:.3f} ms per "
                  "use, zero-copy {nbytes3:.3f} ms per use. Read as rates of the 12n bytes of `a`, `b` and `c`: "
                  "the copy crosses the link at {link:.1f} GB/s, a kernel reads device memory at {device:.0f} "
                  "GB/s, a zero-copy kernel moves {zc:.1f} GB/s.").format(
                    origin=reuse.origin(dated=True), nbytes=nbytes / link / 1e6, nbytes2=nbytes / device / 1e6, nbytes3=nbytes / zc / 1e6, link=link, device=device, zc=zc))
    table = Table(["k", _("copy once + k kernels"), _("k zero-copy kernels"), _("faster")], rows)
    return join(text, table)


def _ms_spread(row: dict[str, Any]) -> str:
    seconds = np.asarray(row["seconds"], float) * 1e3
    if seconds.size == 1:
        return f"{seconds[0]:.2f}"
    return f"{np.median(seconds):.2f} ({seconds.min():.2f}-{seconds.max():.2f})"


def sparse_said(strided: Any) -> str:
    """The crossing of copy-then-read and zero-copy by stride, in words (section 3, the table, the summary)."""
    first, at = sparse_crossing(strided)
    if first is None:
        return _("copy-then-read was faster at every stride measured")
    per = [a for a in allocation_crossings(strided)]
    spread = ""
    if len(per) > 1:
        shown = sorted({str(a) if a else "none" for a in per}, key=lambda s: (s == "none", int(s) if s != "none" else 0))
        spread = (_("; on each of the {n_per} allocations alone, from stride {join}").format(
                      n_per=len(per), join=' / '.join(shown)) if len(shown) > 1
                  else _("; the same on each of the {n_per} allocations").format(n_per=len(per)))
    return _("zero-copy was faster from stride {first} on; the medians cross near stride {at:.0f}{spread}").format(
               first=first, at=at, spread=spread)


def sparse(strided: Any) -> Any:
    """Section 3: copy-then-read against zero-copy by stride for data read once, and where they cross."""
    strides = sorted({int(s) for s in strided.column("stride")})
    rows = []
    for s in strides:
        copy, zero = strided.one(method="copy_then_read", stride=s), strided.one(method="zero_copy", stride=s)
        faster = _("zero-copy") if np.median(zero["seconds"]) < np.median(copy["seconds"]) else _("copy")
        rows.append((s, _ms_spread(copy), f"{copy['useful_GBps']:.2f}", _ms_spread(zero),
                     f"{zero['useful_GBps']:.2f}", faster))
    nbytes = int(strided.rows[0]["nbytes"])
    dense = strided.one(method="copy_then_read", stride=strides[0])
    link = nbytes / float(np.median(dense["seconds"])) / 1e9
    far = strides[-1] if 32 not in strides else 32
    cap = strided.one(method="copy_then_read", stride=far)["useful_GBps"]
    zero_far = strided.one(method="zero_copy", stride=far)["useful_GBps"]
    spread = "" if len(dense["seconds"]) == 1 else _(" (in brackets: lowest-highest of the repeats)")
    table = Table([_("stride"), _("copy then read, ms"), _("useful GB/s"), _("zero-copy, ms"), _("useful GB/s"),
                   _("faster")], rows,
                  caption=f"*{strided.describe()}*")
    said = bullets([
        _("The copy moves the whole {nbytes} MiB array whatever the stride: copy-then-read took about the same "
          "time at every stride ({link:.1f} GB/s of the array at stride {value}), so at stride {far} it delivered "
          "{cap:.2f} GB/s of useful data, near {link:.1f} / {far} = {link2:.2f}; zero-copy delivered "
          "{zero_far:.2f}, fetching only the lines the reads touch{spread}.").format(
            nbytes=nbytes >> 20, link=link, value=strides[0], far=far, cap=cap, link2=link / far, zero_far=zero_far, spread=spread),
        _("Read once, {said} ({origin}).").format(said=sparse_said(strided), origin=strided.origin(dated=True)),
    ])
    return join(table, said)


def _two_digits(x: float) -> float:
    """``x`` rounded to two significant digits (a count said as "about ...")."""
    return float(f"{x:.2g}")


def dependent_loads(levels: int = 20, nbytes: int = 1 << 30) -> dict[str, float]:
    """A few dependent lookups in a large structure against copying it first (section 4): the seconds of ``levels``
    dependent zero-copy loads, of copying ``nbytes`` at the recorded pinned rate, and the number of dependent loads
    at which copying first pays back, from the reference record (measure-latency's ``latency``, ``memcpy``)."""
    lat = {r["memory"]: r["load_ns"] * 1e-9 for r in reference("latency").rows
           if r.get("cpu_cache", "evicted") == "evicted"}
    copies = reference("memcpy").select(direction="htod", host_memory="pinned")
    row = min(copies, key=lambda r: abs(np.log2(r["nbytes"] / nbytes)))
    copy = nbytes / (row["GBps"] * 1e9)
    return {"zero_copy_s": levels * lat["zero_copy"], "copy_s": copy, "copy_GBps": row["GBps"],
            "zero_copy_load_s": lat["zero_copy"], "device_load_s": lat["device"],
            "break_even_loads": copy / (lat["zero_copy"] - lat["device"]), "levels": levels, "nbytes": nbytes}


def _chunked(ooc: Any) -> dict[tuple[str, int], float]:
    return {(r["method"], int(r["budget_bytes"])): float(np.median(r["seconds"]))
            for r in ooc.rows if r["method"] != "zero_copy"}


def ways_apart(ooc: Any, best: tuple[str, int]) -> bool:
    """Whether zero-copy and the chunked way ``best`` (method, budget) differ by the course's rule: beyond this run's
    repeats and with one sign across the committed records (helpers.analysis.spread)."""
    from ..analysis import spread

    return spread.seconds_apart(ooc, "out_of_core", {"method": "zero_copy", "budget_bytes": 0},
                                {"method": best[0], "budget_bytes": best[1]})


def out_of_core(ooc: Any) -> Any:
    """Section 2: each way's time and rate against zero-copy, and which came out ahead."""
    total = ooc.rows[0]["total_bytes"]
    zero = _median(ooc, method="zero_copy")
    chunked = _chunked(ooc)
    rows = [(_("zero-copy"), _("none"), f"{zero * 1e3:.1f}", f"{total / zero / 1e9:.1f}", "1.00")]
    rows += [(_(NAMES[m]), f"{b >> 20} MiB", f"{t * 1e3:.1f}", f"{total / t / 1e9:.1f}", f"{t / zero:.2f}")
             for (m, b), t in chunked.items()]
    (best_method, best_budget), best = min(chunked.items(), key=lambda item: item[1])
    sequential = min(t for (m, _), t in chunked.items() if m == "chunked")
    named = _("the best chunked version ({value}, {best_budget} MiB)").format(
                value=_(NAMES[best_method]), best_budget=best_budget >> 20)
    verdict = (_("zero-copy and {named} are not told apart by the course's rule (beyond this run's repeats, with "
                 "one sign across the committed records)").format(named=named) if not ways_apart(ooc, (best_method, best_budget)) else
               _("zero-copy beats every chunked version") if zero < best else _("{named} beats zero-copy").format(
                                                                               named=named))
    said = bullets([
        _("The data set is {total:.0f}x the smallest budget ({origin}).").format(
            total=total / min(ooc.params['budgets']), origin=ooc.origin(dated=True)),
        _("Here {verdict}: zero-copy {zero:.1f} ms, best chunked {best:.1f} ms (zero-copy took {zero2:.2f}x its "
          "time).").format(verdict=verdict, zero=zero * 1e3, best=best * 1e3, zero2=zero / best),
        _("Sequential chunks took {sequential:.2f}x zero-copy's time: without overlap, the copies in and out wait "
          "for each other.").format(sequential=sequential / zero),
    ])
    return join(Table([_("method"), _("budget"), "ms", _("GB/s of a+b+c"), _("vs zero-copy")], rows), said)


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
    choose = (_("advise it to the CPU (zero-copy) below {k} passes, let it migrate from {k} on").format(k=k) if k
              else _("advise it to the CPU (zero-copy)"))
    evidence = (_("{label} (recorded {gpu}, {size:g} GiB, one pass): advised "
                  "{advised:.1f} GB/s, mapped {mapped:.1f}, migrating "
                  "{migrating:.1f}").format(
                    label=_lesson('take-zero-copy-beyond-one-pcie-gpu').label, gpu=result.gpu, size=size / 2**30, advised=rate['managed, preferred CPU + accessed by GPU'], mapped=rate['mapped'], migrating=rate['managed, migrating']))
    return choose, evidence


def pin_limit_bytes() -> float:
    """The most the course's helpers pin on this machine: three quarters of its RAM (helpers.memory.gpu)."""
    return 0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def decision_table(reuse: Any, ooc: Any, e2e: Any, attributes: dict[str, int], strided: Any) -> Table:
    """Section 3: each situation, what to choose, and the figure or citation behind it."""
    sizes = sorted({int(n) for n in e2e.column("n")})
    small, large = sizes[0], sizes[-1]
    speedup = {n: _median(e2e, method="copy", n=n) / _median(e2e, method="zero_copy", n=n) for n in (small, large)}
    first = first_copy_win(reuse)
    link, device, zc = fitted_rates(reuse)
    k_even = (1 / link) / (1 / zc - 1 / device)
    zero = _median(ooc, method="zero_copy")
    best_key, best = min(_chunked(ooc).items(), key=lambda item: item[1])
    chase = dependent_loads()
    sparse_first, _second = sparse_crossing(strided)
    offsets = {r["offset_floats"]: r["useful_GBps"] for r in reference("offset").select(memory="zero_copy")}
    shifted, aligned = [v for o, v in offsets.items() if o % 32], offsets[0]
    inflight = reference("inflight")
    few = int(min(inflight.column("threads")))
    few_rate = inflight.one(kernel="read_float4", threads=few)["GBps"]
    ref = _("recorded {gpu}").format(gpu=inflight.gpu)
    e2e_tag = _("{lesson} section 2 ({origin})").format(lesson=_lesson("overlap-copies-with-streams").label,
                                                        origin=e2e.origin(dated=True))
    rows = [
        (_("GPU integrated with host memory (INTEGRATED = 1)"), _("use zero-copy"),
         _("Best Practices Guide, Zero Copy: always a gain there, memory is physically the same; but on Tegra "
           "before compute capability 7.2 (no I/O coherence) the CPU does not cache pinned memory (CUDA for "
           "Tegra), so CPU work on it is slow. This GPU: INTEGRATED = {integrated}").format(
             integrated=attributes['INTEGRATED'])),
        (_("Data read once, coalesced, host to host"), _("zero-copy can win"),
         _("{e2e_tag}: copy / zero-copy time = {value:.2f} at n = 2^{bit_length}, {value2:.2f} at 2^{bit_length2}").format(
             e2e_tag=e2e_tag, value=speedup[small], bit_length=small.bit_length() - 1, value2=speedup[large], bit_length2=large.bit_length() - 1)),
        (_("Small transfers, few kernels"), _("zero-copy"),
         _("{e2e_tag}: at n = 2^{bit_length}, one launch against four operations: copy / zero-copy time = "
           "{value:.2f}").format(e2e_tag=e2e_tag, bit_length=small.bit_length() - 1, value=speedup[small])),
        (_("Same data used k times"), _("copy once if k >= {first}").format(first=first) if first
         else _("zero-copy for every k measured"),
         _("section 1 ({origin}, n = 2^{bit_length}): fitted lines cross at k = {k_even:.2f}; the same k at any n "
           "large enough that fixed costs (launches, each copy's setup) are small beside the bytes, not at n = "
           "2^{bit_length2} (the row above)").format(
             origin=reuse.origin(dated=True), bit_length=int(reuse.params['n']).bit_length() - 1, k_even=k_even, bit_length2=small.bit_length() - 1)),
        (_("Data larger than the device-memory budget, pinnable"),
         _("zero-copy (simplest)") if zero <= best or not ways_apart(ooc, best_key) else
         _("overlapped chunks, or zero-copy for simplicity ({zero:.2f}x their time)").format(zero=zero / best),
         _("section 2 ({origin}): zero-copy {zero:.1f} ms, best chunked {best:.1f} ms").format(
             origin=ooc.origin(dated=True), zero=zero * 1e3, best=best * 1e3)),
        (_("Data larger than the host memory you may pin"),
                   _("chunked pinned staging with overlap, or managed memory"),
         _("pinned memory cannot be swapped; the helpers refuse above 3/4 of RAM ({pin_limit_bytes:.0f} GiB on the "
           "machine running this notebook); managed memory (cudaMallocManaged): the driver migrates its pages "
           "between CPU and GPU on demand; self-check 4").format(pin_limit_bytes=pin_limit_bytes() / 2**30)),
        (_("Managed memory, read k times"), *_managed_row()),
        (_("Sparse data read once (strided or scattered: each float in its own sector)"),
         _("zero-copy from stride {sparse_first} on").format(sparse_first=sparse_first) if sparse_first else _("copy (zero-copy won at no stride "
                                                                           "measured)"),
         _("section 3 ({origin}): {sparse_said}; a copy moves the whole array, zero-copy only the lines the reads "
           "touch, each from its first to its last touched sector").format(
             origin=strided.origin(dated=True), sparse_said=sparse_said(strided))),
        (_("Dense but misaligned or strided data below that stride, or data used again"),
         _("copy, or fix the access"),
         (_("section 3: copy-then-read was faster below stride {sparse_first}; ").format(sparse_first=sparse_first) if sparse_first else _("section 3; "))
         + _("{label} ({ref}): zero-copy misaligned by 1 to 31 floats read {min_shifted:.1f}-{max_shifted:.1f} "
             "GB/s against {aligned:.1f} aligned; after a copy the misaligned reads hit device memory instead; "
             "used again: section 1").format(
               label=_lesson('coalesce-and-align-accesses').label, ref=ref, min_shifted=min(shifted), max_shifted=max(shifted), aligned=aligned)),
        (_("A few dependent lookups in a large structure ({levels} levels of a tree in {nbytes} GiB)").format(
             levels=chase['levels'], nbytes=chase['nbytes'] >> 30),
         _("zero-copy") if chase["zero_copy_s"] < chase["copy_s"] else _("copy"),
         _("{label} ({ref}): {levels} x {zero_copy_load_s:.0f} ns = {zero_copy_s:.0f} us of zero-copy loads "
           "against {copy_s:.1f} ms to copy {nbytes} GiB at {copy_gbps:.1f} GB/s first").format(
             label=_lesson('measure-latency').label, ref=ref, levels=chase['levels'], zero_copy_load_s=chase['zero_copy_load_s'] * 1e9, zero_copy_s=chase['zero_copy_s'] * 1e6, copy_s=chase['copy_s'] * 1e3, nbytes=chase['nbytes'] >> 30, copy_gbps=chase['copy_GBps'])),
        (_("Many dependent loads (a long pointer chase, a structure searched again and again)"), _("copy"),
         _("{label} ({ref}): {zero_copy_load_s:.0f} ns per zero-copy load against {device_load_s:.0f} ns in device "
           "memory: copying {nbytes} GiB pays back after about {two_digits:,.0f} dependent loads").format(
             label=_lesson('measure-latency').label, ref=ref, zero_copy_load_s=chase['zero_copy_load_s'] * 1e9, device_load_s=chase['device_load_s'] * 1e9, nbytes=chase['nbytes'] >> 30, two_digits=_two_digits(chase['break_even_loads']))),
        (_("Few threads in flight"), _("copy, or put more loads in flight"),
         _("{label} ({ref}): {few} threads x one float4 read {few_rate:.2f} GB/s").format(
             label=_lesson('keep-enough-bytes-in-flight').label, ref=ref, few=few, few_rate=few_rate)),
        (_("Host and GPU touch the data while a kernel runs"), _("only with synchronisation"),
         _("{label}; Programming Guide, Mapped Memory: synchronise with streams or events").format(
             label=_lesson('avoid-hazards-on-mapped-memory').label)),
    ]
    return Table([_("situation"), _("choose"), _("evidence")], rows)


def summary(reuse: Any, ooc: Any, strided: Any) -> Text:
    """What you saw, computed from this run's results."""
    first = first_copy_win(reuse)
    link, device, zc = fitted_rates(reuse)
    total = ooc.rows[0]["total_bytes"]
    zero = _median(ooc, method="zero_copy")
    chunked = _chunked(ooc)
    (method, budget), best = min(chunked.items(), key=lambda item: item[1])
    sequential = min(t for (m, _), t in chunked.items() if m == "chunked")
    budgets = _(", ").join(f"{b >> 20}" for b in ooc.params["budgets"])
    used = (_("copying first won from k = {first}").format(first=first) if first else _("copying first won at no measured k"))
    return bullets([
        _("Data used k times ({origin}): {used} (fitted lines cross at k = {value:.2f}).").format(
            origin=reuse.origin(dated=True), used=used, value=(1 / link) / (1 / zc - 1 / device)),
        _("{total:.1f} GiB out of core, budgets {budgets} MiB ({origin}): zero-copy {zero:.1f} ms, best chunked "
          "({value}, {budget} MiB) {best:.1f} ms, sequential chunks {sequential:.1f} ms.").format(
            total=total / 2**30, budgets=budgets, origin=ooc.origin(dated=True), zero=zero * 1e3, value=_(NAMES[method]), budget=budget >> 20, best=best * 1e3, sequential=sequential * 1e3),
        _("Sparse data read once ({origin}): {sparse_said}.").format(
            origin=strided.origin(dated=True), sparse_said=sparse_said(strided)),
        _("The machine running this notebook would pin at most {pin_limit_bytes:.0f} GiB (three quarters of its "
          "RAM).").format(pin_limit_bytes=pin_limit_bytes() / 2**30),
    ], head=computed_from(reuse))
