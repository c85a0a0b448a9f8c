"""measure-what-pinning-buys's narration: CUDA's pinned buffers seen from /proc, pinned against pageable copies,
and whether staging explains a pageable copy, computed from the run's results (live or recorded).

Each function returns Markdown (:class:`helpers.tables.Text`, a table, or both through :func:`helpers.tables.join`)
for the lesson to show as a cell's last expression; "live" or "recorded" comes from the result, never from the mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis import spread
from ..experiments.result import Result, expect, reference
from ..platform import machine
from ..platform.notes import platform_note
from ..i18n import N_, _
from ..lessons import lesson
from . import computed_from
from .map_pages_on_the_cpu import neighbours
from ..tables import Shown, Table, Text, bullets, join

LESSON = "measure-what-pinning-buys"
CUDA_BUFFERS = ("cudaHostAlloc", "cuMemHostRegister")


def _source(result: Result) -> str:
    return (_("{gpu}, live") if result.live else _("{gpu}, recorded")).format(gpu=result.gpu)


def this_machine() -> Text:
    """What this machine changes in the lesson, beside the reference GPU (cells marked %%linux_only read /proc)."""
    return Text(platform_note(LESSON))


# --------------------------------------------------------------------------- section 1: /proc
def _buffers(result: Result) -> list[dict[str, Any]]:
    return [row for row in result.rows if "pages" in row]


def _visible(row: dict[str, Any]) -> bool:
    return bool(row["pfns"]) and None not in row["pfns"]


def _runs_cell(row: dict[str, Any]) -> str:
    if row["present_pages"] == 0:
        return _("no frames yet")
    return neighbours(row["pfns"]) if _visible(row) else _("frames hidden (not root)")


# The recorded allocations named in words (the others are named by their API calls).
ALLOCATION_WORDS = (N_("pageable, never touched"), N_("pageable, touched"))


def buffers(pinning: Result) -> Shown:
    """Section 1's view of each buffer: pages present, which neighbouring pages got neighbouring frames (in
    map-pages-on-the-cpu's words), and its /proc/self/maps mapping
    (size, permissions, backing); where this process may not read frames, the recorded machine's runs beside."""
    rows = []
    for row in _buffers(pinning):
        fields = row["maps_line"].split(maxsplit=5)
        rows.append([_(row["allocation"]), f"{row['present_pages']}/{row['pages']}", _runs_cell(row),
                     f"{row['mapping_bytes'] // 1024} KiB", fields[1],
                     fields[5].strip() if len(fields) > 5 else "(anonymous)"])
    header = [_("allocation"), _("pages present"), _("frames of neighbouring pages"), _("mapping"), _("perms"),
              _("backing")]
    shown: list[Any] = [Text(f"**{pinning.describe()}** "
                             + machine.address_caveat(pinning.provenance, live=pinning.live, brief=True,
                                                      deeper=_("{lesson}, *Going deeper*").format(
                                                          lesson=lesson("start-here").label))),
                        Table(header, rows, caption=_("*{kib} KiB buffers ({source})*").format(
                            kib=pinning.params["nbytes"] // 1024, source=_source(pinning)))]
    hidden = [row for row in _buffers(pinning) if row["present_pages"] and not _visible(row)]
    if hidden:
        recorded = reference("pagemap_pinned")
        shown.append(Table([_("allocation"), _("frames of neighbouring pages")],
                           [[row["allocation"], neighbours(row["pfns"])] for row in _buffers(recorded)
                            if _visible(row)],
                           caption=_("*Frames are hidden here (not root); those recorded on {gpu}:*").format(
                                       gpu=recorded.gpu)))
    return join(*shown)


def _held(pinning: Result) -> dict[str, Any]:
    return next(row for row in pinning.rows if row["allocation"].startswith("process"))


def counters(pinning: Result) -> str:
    """VmLck and VmPin while the experiment's page-locked buffers were held, in one clause."""
    held = _held(pinning)
    return (_("VmLck = {vmlck} KiB and VmPin = {vmpin} KiB while {held_bytes} KiB of page-locked buffers were held "
              "({source})").format(
                vmlck=held['VmLck'], vmpin=held['VmPin'], held_bytes=held['held_bytes'] // 1024, source=_source(pinning)))


def locked(pinning: Result) -> Text:
    """Whether CUDA's pinning moved `VmLck` or `VmPin`, and what follows for RLIMIT_MEMLOCK."""
    held = _held(pinning)
    if held["VmLck"] or held["VmPin"]:
        verdict = (_("A counter moved while CUDA buffers were held: there, CUDA's pinning is accounted, and "
                     "RLIMIT_MEMLOCK (`ulimit -l`) may bound it."))
    else:
        limit = held["memlock_soft_bytes"]
        verdict = (_("Neither counter moved: the driver pinned these pages without `mlock` and without the OS "
                     "kernel's pinned-page accounting, so they were not charged against RLIMIT_MEMLOCK (`ulimit "
                     "-l`; the recording process's own limit: {limit}).").format(
                       limit=_("unlimited") if limit < 0 else _("{limit} bytes").format(limit=limit)))
    return Text(_("{counters}. {verdict}").format(counters=counters(pinning), verdict=verdict))


# --------------------------------------------------------------------------- section 2: copies
def _size(nbytes: int) -> str:
    if nbytes >= 2**30:
        return f"{nbytes / 2**30:g} GiB"
    return f"{nbytes / 2**20:.0f} MiB" if nbytes >= 2**20 else f"{nbytes // 1024} KiB"


def largest(copies: Result) -> int:
    return int(max(copies.column("nbytes")))


def rate(copies: Result, direction: str, memory: str, nbytes: int | None = None) -> float:
    """GB/s of one copy kind at ``nbytes`` (the largest size when not given)."""
    n = largest(copies) if nbytes is None else nbytes
    return float(copies.one(direction=direction, host_memory=memory, nbytes=n)["GBps"])


def speedups(copies: Result) -> Shown:
    """Pinned against pageable at the largest size, each direction; what a small copy costs; and the check that
    pinned beat pageable."""
    n, small = largest(copies), int(min(copies.column("nbytes")))
    rows, checks = [], []
    for direction in ("htod", "dtoh"):
        pinned, pageable = rate(copies, direction, "pinned"), rate(copies, direction, "pageable")
        rows.append([direction, f"{pinned:.1f}", f"{pageable:.1f}", f"{pinned / pageable:.1f}x"])
        across = spread.across_records("memcpy", lambda r, d=direction: rate(r, d, "pinned", n)
                                       - rate(r, d, "pageable", n))
        faster = spread.beyond_spread(pinned - pageable, across.including(pinned - pageable) if copies.live
                                      else across)
        checks.append((faster,
                _("pinned faster than pageable beyond the spread across the records, {direction}").format(
                                   direction=direction),
                       f"{pinned / pageable:.1f}x"))
    table = Table([_("direction"), _("pinned GB/s"), _("pageable GB/s"), _("pinned / pageable")], rows,
                  caption=_("*Copies of {size} ({source}; medians)*").format(size=_size(n), source=_source(copies)))
    tiny = {m: rate(copies, "htod", m, small) for m in ("pinned", "pageable")}
    took, moving = small / tiny["pinned"] / 1e3, small / rate(copies, "htod", "pinned") / 1e3
    sentence = Text(_("At {size} host to device, pinned ran at {pinned:.2f} GB/s and pageable at {pageable:.2f} "
                      "GB/s, a factor of {pinned2:.1f}: one pinned copy took {took:.1f} us, of which moving its "
                      "bytes at the {size2} rate would take {moving:.2f} us. Small copies pay a fixed cost per "
                      "copy, not per byte.").format(
                        size=_size(small), pinned=tiny['pinned'], pageable=tiny['pageable'], pinned2=tiny['pinned'] / tiny['pageable'], took=took, size2=_size(n), moving=moving))
    return join(table, sentence, scope(copies), expect(*checks))


def rates_across_records(nbytes: int) -> dict[str, spread.Range]:
    """The GB/s of each copy kind at ``nbytes``, and the pinned/pageable factor per direction, across the committed
    H200 records (data/) that hold that size: keys ``htod pinned``, ``htod pageable``, ``htod factor``, the same
    for ``dtoh``, and ``htoh host_memcpy``."""
    def one(direction: str, memory: str) -> spread.Range:
        return spread.across_records("memcpy", lambda r: rate(r, direction, memory, nbytes))

    def factor(direction: str) -> spread.Range:
        return spread.across_records("memcpy", lambda r: rate(r, direction, "pinned", nbytes)
                                     / rate(r, direction, "pageable", nbytes))
    found = {f"{d} {m}": one(d, m) for d in ("htod", "dtoh") for m in ("pinned", "pageable")}
    found.update({f"{d} factor": factor(d) for d in ("htod", "dtoh")})
    found["htoh host_memcpy"] = one("htoh", "host_memcpy")
    return found


def _percent(span: spread.Range) -> str:
    return f"{(span.high - span.low) / span.low:.0%}"


def scope(copies: Result) -> Text:
    """What one run's pageable rates and factors are worth: their range across the committed records, beside the
    pinned rates' (issue 30 §5)."""
    n = largest(copies)
    r = rates_across_records(n)
    return Text(_("Across the {count} committed H200 records, {size} pageable copies ran {words} host to device "
                  "and {words2} device to host (pinned/pageable {words3} and {words4}); pinned ones stayed within "
                  "{max__percent}. A pageable copy also carries the host's memcpy (alone {words5}) and the VM: "
                  "quote it with its range.").format(
                    count=r['htod pageable'].count, size=_size(n), words=r['htod pageable'].words('GB/s'), words2=r['dtoh pageable'].words('GB/s'), words3=r['htod factor'].words('x'), words4=r['dtoh factor'].words('x'), max__percent=max(_percent(r['htod pinned']), _percent(r['dtoh pinned'])), words5=r['htoh host_memcpy'].words('GB/s')))


def _seconds(copies: Result, direction: str, memory: str, nbytes: int) -> float:
    return float(np.median(copies.need(direction=direction, host_memory=memory, nbytes=nbytes)["seconds"]))


def staging_times(copies: Result) -> dict[str, float]:
    """Seconds at the largest size: the host copy alone, the pinned DMA alone, both in series, overlapped, and the
    measured pageable copy. Raises RecordError for a record made before the host copy was measured."""
    n = largest(copies)
    gap = {"host": _seconds(copies, "htoh", "host_memcpy", n), "dma": _seconds(copies, "htod", "pinned", n),
           "pageable": _seconds(copies, "htod", "pageable", n)}
    gap.update(serial=gap["host"] + gap["dma"], overlapped=max(gap["host"], gap["dma"]))
    return gap


def staging_gap_ms(copies: Result) -> float:
    """The pageable copy's median minus a host copy plus a DMA in series, in ms, at the largest size."""
    gap = staging_times(copies)
    return (gap["pageable"] - gap["serial"]) * 1e3


def staging_across_records() -> spread.Range:
    """:func:`staging_gap_ms` in every committed H200 record that measured the host copy (data/)."""
    return spread.across_records("memcpy", staging_gap_ms)


def _own_spread_ms(copies: Result, gap_ms: float) -> tuple[float, float, float]:
    """The pageable copy's repeats: (fastest, slowest, the distance from the median toward the gap's side), ms."""
    seconds = np.array(copies.need(direction="htod", host_memory="pageable", nbytes=largest(copies))["seconds"])
    low, mid, high = (float(v) * 1e3 for v in (seconds.min(), np.median(seconds), seconds.max()))
    return low, high, (mid - low) if gap_ms > 0 else (high - mid)


def staging_verdict(copies: Result, across: spread.Range | None = None) -> tuple[float, spread.Range, str]:
    """This run's gap (ms), the range it is judged against (the committed records', and this run where live), and
    the verdict: "does not explain", "explains" or "cannot tell" (:func:`spread.beyond_spread`)."""
    gap_ms = staging_gap_ms(copies)
    across = across or staging_across_records()
    if copies.live:
        across = across.including(gap_ms)
    if not spread.beyond_spread(gap_ms, across, _own_spread_ms(copies, gap_ms)[2]):
        return gap_ms, across, "cannot tell"
    return gap_ms, across, "does not explain" if gap_ms > 0 else "explains"


def staging(copies: Result, across: spread.Range | None = None) -> Text:
    """Does "the data move twice" explain a pageable copy? Its time against a host copy plus a DMA, judged against
    the pageable copy's own spread and the same gap in every committed record (:func:`spread.beyond_spread`);
    ``across`` replaces the committed records' range (tests)."""
    n, gap = largest(copies), staging_times(copies)
    gbps = {k: n / s / 1e9 for k, s in gap.items()}
    head = (_("{size} host to device ({source}): host memcpy {host:.1f} GB/s, pinned DMA {dma:.1f} GB/s, pageable "
              "{pageable:.1f} GB/s. Copy then DMA, one after the other: {serial:.1f} ms; overlapped: "
              "{overlapped:.1f} ms; measured pageable: {pageable2:.1f} ms (median). ").format(
                size=_size(n), source=_source(copies), host=gbps['host'], dma=gbps['dma'], pageable=gbps['pageable'], serial=gap['serial'] * 1e3, overlapped=gap['overlapped'] * 1e3, pageable2=gap['pageable'] * 1e3))
    gap_ms, across, verdict = staging_verdict(copies, across)
    low, high, own = _own_spread_ms(copies, gap_ms)
    records = (_("across the {count} committed H200 records that hold the host copy and this run, the same gap "
                 "ran from {low:+.1f} to {high:+.1f} ms") if copies.live else
               _("across the {count} committed H200 records that hold the host copy, the same gap ran from "
                 "{low:+.1f} to {high:+.1f} ms")).format(count=across.count - (1 if copies.live else 0),
                                                         low=across.low, high=across.high)
    if verdict == "does not explain":
        return Text(head + _("The pageable copy took {gap_ms:.1f} ms longer than both copies in series, beyond its "
                             "own repeats ({low:.1f}-{high:.1f} ms), and {records}, above zero in every one. "
                             "Moving the data twice **does not explain** it; per-chunk work in the driver "
                             "(locking, synchronisation) is a hypothesis this lesson does not test.").format(
                               gap_ms=gap_ms, low=low, high=high, records=records))
    if verdict == "explains":
        return Text(head + _("The pageable copy took {value:.1f} ms less than both copies in series, beyond its "
                             "own repeats ({low:.1f}-{high:.1f} ms), and {records}, below zero in every one: "
                             "staging **explains** its cost, with some overlap of the two steps.").format(
                               value=-gap_ms, low=low, high=high, records=records))
    why = (_("This run's gap, {gap_ms:+.1f} ms, lies within the pageable copy's own repeats ({low:.1f}-{high:.1f} "
             "ms)").format(gap_ms=gap_ms, low=low, high=high) if abs(gap_ms) <= own else _("This run's gap is {gap_ms:+.1f} ms").format(gap_ms=gap_ms))
    sides = (_("on both sides of zero") if not across.one_sign() else _("all of one sign")
             if (gap_ms > 0) == (across.low > 0) else _("all of the other sign"))
    return Text(head + _("Is the pageable copy slower than the two in series? {why}, and {records}, {sides}. The "
                         "records **cannot tell** whether moving the data twice explains the pageable copy.").format(
                           why=why, records=records, sides=sides))


# --------------------------------------------------------------------------- what you saw
def what_you_saw(pinning: Result, copies: Result) -> Text:
    """The lesson's findings from this run, one bullet each."""
    mapped = pinning.one(allocation="cudaHostAlloc mapped")
    cuda = {row["allocation"]: neighbours(row["pfns"]) for row in _buffers(pinning)
            if row["allocation"].startswith(CUDA_BUFFERS) and _visible(row)}
    n, gap = largest(copies), staging_times(copies)
    pinned, pageable = rate(copies, "htod", "pinned"), rate(copies, "htod", "pageable")
    runs_said = (_("; ").join(_("{name}: {said}").format(name=name, said=said) for name, said in cuda.items())
                 if cuda else _("hidden here (not root; section 1 shows the recorded ones)"))
    return bullets([
        _("cudaHostAlloc memory had {present_pages} of {pages} pages present without a touch ({source}); "
          "{counters}.").format(
            present_pages=mapped['present_pages'], pages=mapped['pages'], source=_source(pinning), counters=counters(pinning)),
        _("Frames of neighbouring pages in the CUDA buffers: {runs_said}.").format(runs_said=runs_said),
        _("Host-to-device copies of {size}: pinned {pinned:.1f} GB/s against pageable {pageable:.1f} GB/s, a "
          "factor of {pinned2:.1f} ({source}); pinning saved {pageable2:.1f} ms per copy (medians). Across the "
          "committed H200 records the factor ran {words}.").format(
            size=_size(n), pinned=pinned, pageable=pageable, pinned2=pinned / pageable, source=_source(copies), pageable2=(gap['pageable'] - gap['dma']) * 1e3, words=rates_across_records(n)['htod factor'].words('x')),
        _("A host memcpy plus a pinned DMA in series would take {serial:.1f} ms; the pageable copy took "
          "{pageable:.1f} ms: whether staging explains it, the records ").format(
            serial=gap['serial'] * 1e3, pageable=gap['pageable'] * 1e3)
        + {"cannot tell": _("**cannot tell** (section 2)."), "explains": _("say it **explains** it (section 2)."),
           "does not explain": _("say it **does not explain** it (section 2).")}[staging_verdict(copies)[2]],
    ], head=computed_from(copies))
