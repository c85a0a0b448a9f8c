"""overlap-copies-with-streams: the sentences and tables that quote the run's figures, computed from its results.

``platform`` (what this machine changes), ``sizes`` (copy + kernel against zero-copy per n), ``directions`` (bytes
per second against one direction of the link), ``baselines`` (the fair, pipelined comparison), ``seen`` (what you
saw). Live or recorded is said from each result's ``live``, never from the mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exercises.lesson11 import two_stream_speedup
from ..experiments.result import Result
from ..i18n import _
from . import computed_from
from ..tables import Table, Text, bullets

MiB = 1 << 20
BYTES_PER_ELEMENT = 12   # a and b in, c out: three float32 arrays


def _source(result: Any) -> str:
    return _("live") if getattr(result, "live", False) else _("recorded")


def _pow2(n: int) -> str:
    return f"2^{int(n).bit_length() - 1}"


def median_seconds(result: Result, **where: Any) -> float:
    """The median of one row's repeats, in seconds."""
    return float(np.median(result.one(**where)["seconds"]))


def platform() -> Text:
    """What this machine changes in this lesson, beside the reference GPU."""
    from ..platform.notes import platform_note

    return Text(platform_note("overlap-copies-with-streams"))


def _sizes(e2e: Result) -> list[int]:
    return sorted({int(n) for n in e2e.column("n")})


def _speedup(e2e: Result, n: int) -> float:
    return median_seconds(e2e, method="copy", n=n) / median_seconds(e2e, method="zero_copy", n=n)


def sizes(e2e: Result) -> Table:
    """Copy + kernel against the zero-copy kernel, every fourth size and the largest."""
    found = _sizes(e2e)
    shown = [n for i, n in enumerate(found) if i % 4 == 0 or n == found[-1]]
    rows = [(_pow2(n), f"{median_seconds(e2e, method='copy', n=n) * 1e6:,.1f} us",
             f"{median_seconds(e2e, method='zero_copy', n=n) * 1e6:,.1f} us", f"{_speedup(e2e, n):.2f}")
            for n in shown]
    wins = len(_faster_sizes(e2e))
    return Table(["n", _("copy + kernel"), _("zero-copy kernel"), _("copy / zero-copy")], rows,
                 caption=_("*{source}; zero-copy was faster at {wins} of {n_found} sizes (beyond the repeats, with "
                           "one sign across the committed records)*").format(
                             source=_source(e2e), wins=wins, n_found=len(found)))


def _faster_sizes(e2e: Result) -> list[int]:
    """The sizes at which zero-copy took less time than copy + kernel, by the course's rule (helpers.analysis.spread)."""
    from ..analysis import spread

    return [n for n in _sizes(e2e) if _speedup(e2e, n) > 1
            and spread.seconds_apart(e2e, "end_to_end", {"method": "copy", "n": n}, {"method": "zero_copy", "n": n})]


def link_GBps(memcpy: Result) -> float:
    """One direction of the link: the fastest pinned host-to-device copy."""
    return float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))


def rates(e2e: Result) -> dict[str, float]:
    """GB/s of a + b + c at the largest size, copy path and zero-copy."""
    n = _sizes(e2e)[-1]
    moved = BYTES_PER_ELEMENT * n
    return {"n": n, "moved": moved, "copy": moved / median_seconds(e2e, method="copy", n=n) / 1e9,
            "zero_copy": moved / median_seconds(e2e, method="zero_copy", n=n) / 1e9}


def directions(e2e: Result, memcpy: Result) -> Text:
    """The zero-copy kernel's bytes per second against one direction of the link, at the largest size."""
    r, link = rates(e2e), link_GBps(memcpy)
    said = (_("n = {pow2}: {moved:,.0f} MiB moved ({source}). Copy path {copy:.1f} GB/s, zero-copy {zero_copy:.1f} "
              "GB/s; one direction of the link (pinned memcpy HtoD, {source2}) {link:.1f} GB/s. ").format(
                pow2=_pow2(r['n']), moved=r['moved'] / MiB, source=_source(e2e), copy=r['copy'], zero_copy=r['zero_copy'], source2=_source(memcpy), link=link))
    if r["zero_copy"] > 1.05 * link:
        return Text(said + _("Zero-copy moved more bytes per second than one direction can carry: its reads (host "
                             "to GPU) and writes (GPU to host) travelled at the same time, in the two directions "
                             "of the link."))
    return Text(said + _("Zero-copy stayed within the rate of one direction of the link here."))


def _best(pipelined: Result, method: str) -> dict[str, Any]:
    return min(pipelined.select(method=method), key=lambda r: float(np.median(r["seconds"])))


def _rate(pipelined: Result, row: dict[str, Any]) -> float:
    return float(row["total_bytes"]) / float(np.median(row["seconds"])) / 1e9


def baselines(e2e: Result, pipelined: Result) -> Table:
    """Every way of computing c = a + b, as GB/s of a + b + c moved."""
    r = rates(e2e)
    small, big = _pow2(r["n"]), _pow2(pipelined.params["n"])
    serial, overlap = _best(pipelined, "chunked"), _best(pipelined, "chunked_overlap")
    rows = [(_("copy, no overlap (n = {n})").format(n=small), r["copy"]),
            (_("zero-copy (n = {n})").format(n=small), r["zero_copy"]),
            (_("chunks on one stream ({budget_bytes} MiB budget, n = {big})").format(
                 budget_bytes=serial['budget_bytes'] // MiB, big=big), _rate(pipelined, serial)),
            (_("chunks double-buffered on two streams ({budget_bytes} MiB budget, n = {big})").format(
                 budget_bytes=overlap['budget_bytes'] // MiB, big=big),
             _rate(pipelined, overlap)),
            (_("zero-copy (n = {n})").format(n=big), _rate(pipelined, pipelined.one(method="zero_copy")))]
    return Table([_("method"), _("GB/s of a+b+c")], [(name, f"{value:.1f}") for name, value in rows],
                 caption=f"*{pipelined.describe()}*")


def against(e2e: Result, pipelined: Result) -> Text:
    """Zero-copy against copies without overlap, and against pipelined copies."""
    r = rates(e2e)
    fair = _rate(pipelined, _best(pipelined, "chunked_overlap"))
    zc_big = _rate(pipelined, pipelined.one(method="zero_copy"))
    small, big = _pow2(r["n"]), _pow2(pipelined.params["n"])
    return Text(_("Against copies without overlap (both at n = {small}), zero-copy moved {zero_copy:.2f}x the "
                  "bytes per second; against the pipelined copies (both at n = {big}), {zc_big:.2f}x.").format(
                    small=small, zero_copy=r['zero_copy'] / r['copy'], big=big, zc_big=zc_big / fair))


def seen(e2e: Result, memcpy: Result, pipelined: Result) -> Text:
    """The lesson's figures, computed from this run."""
    found = _sizes(e2e)
    r, link = rates(e2e), link_GBps(memcpy)
    wins = len(_faster_sizes(e2e))
    fair = _rate(pipelined, _best(pipelined, "chunked_overlap"))
    zc_big = _rate(pipelined, pipelined.one(method="zero_copy"))
    return bullets([
        _("Data from: {source}").format(source=e2e.describe()),
        _("Vector add, host to host: copy / zero-copy time = {speedup:.2f} at n = {pow2} and {speedup2:.2f} at n = "
          "{pow22}; zero-copy moved {zero_copy:.1f} GB/s of a+b+c against {link:.1f} GB/s for one direction of the "
          "link.").format(
            speedup=_speedup(e2e, found[0]), pow2=_pow2(found[0]), speedup2=_speedup(e2e, found[-1]), pow22=_pow2(found[-1]), zero_copy=r['zero_copy'], link=link),
        _("Zero-copy was faster than copy + kernel at {wins} of {n_found} sizes (beyond the repeats, with one sign "
          "across the committed records).").format(wins=wins, n_found=len(found)),
        _("Double buffering on two streams moved {two_stream_speedup:.2f}x the bytes per second of one stream, "
          "each at its fastest budget.").format(two_stream_speedup=two_stream_speedup(pipelined)),
        _("Against pipelined copies, zero-copy moved {zc_big:.2f}x the bytes per second; against copies without "
          "overlap {zero_copy:.2f}x.").format(zc_big=zc_big / fair, zero_copy=r['zero_copy'] / r['copy'])], head=computed_from(e2e))
