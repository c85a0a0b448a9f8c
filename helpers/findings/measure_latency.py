"""measure-latency's narration: the tables and sentences that quote the chases' figures, computed from the results
(``latency``: ``experiments.latency()``, ``footprint``: ``experiments.latency_footprint()``), so what the lesson says
agrees with its figures live and in replay. Two figures differ only by the course's rule (helpers.analysis.spread):
the bands of repeats apart, and one sign across the committed records (:mod:`helpers.analysis.cpu_cache` for the
CPU's cache state, :func:`apart` for the footprint); and no sentence names a cause the figures do not show.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..analysis import cpu_cache, spread
from ..lessons import lesson as _lesson
from ..experiments.latency import LINE, compare_rows, footprint_change, load_ns_spread, size_label
from ..i18n import N_, _
from . import computed_from
from ..tables import Table, Text, bullets, join

NAMES = {"zero_copy": N_("zero-copy"), "device": N_("device memory"), "l2": N_("L2")}
CPU_CACHE_STATE = {"just_written": N_(" (table just written by the CPU)"),
                   "evicted": N_(" (table evicted by the CPU)")}


def _cpu_cache_note(row: dict[str, Any]) -> str:
    """How the CPU left a zero-copy chase's table, for its row (measure-latency): "" where the row does not say."""
    state = row.get("cpu_cache")
    if state is None:
        return ""
    if state in CPU_CACHE_STATE:
        return _(CPU_CACHE_STATE[state])
    return " (table {} by the CPU)".format(state.replace("_", " "))


def ns(latency: Any) -> dict[str, float]:
    """ns per dependent load by memory; the zero-copy chase over a table pushed out of the CPU's caches."""
    return {r["memory"]: float(r["load_ns"]) for r in latency.rows if r.get("cpu_cache", "evicted") == "evicted"}


def _spread(row: dict[str, Any]) -> str:
    low, _, high = load_ns_spread(row)
    return f"{low:,.0f}-{high:,.0f} ns"


def chases(latency: Any, session: Any) -> Any:
    """The chases of section 3: buffer, steps, time of one repeat, share of the lines visited, ns per load with the
    spread of the repeats; then whether the CPU's cache state changed the zero-copy figure."""
    rows = []
    for r in latency.rows:
        lines, repeats = r["nbytes"] // LINE, len(r["seconds"])
        note = (_("the whole cycle, every repeat (warm, on purpose)") if r["memory"] == "l2"
                else _("{steps:.1%} of the lines, each once").format(steps=r['steps'] * repeats / lines))
        memory = _(NAMES[r["memory"]]) + _cpu_cache_note(r)
        rows.append([memory, size_label(r["nbytes"]), f"{r['steps']:,} x {repeats}",
                     f"{np.median(r['seconds']) * 1e3:.1f} ms", note, f"{load_ns_spread(r)[1]:,.0f} ns", _spread(r)])
    table = Table([_("memory"), _("buffer"), _("steps x repeats"), _("one repeat"), _("lines visited"),
                   _("per load (median)"),
                   _("lowest-highest repeat")], rows,
                  caption=_("*{origin}; its L2 holds {l2_cache_size:.0f} MiB ({l2_cache_size2:.1f} MB)*").format(
                              origin=latency.origin(), l2_cache_size=session.attributes['L2_CACHE_SIZE'] / 2**20, l2_cache_size2=session.attributes['L2_CACHE_SIZE'] / 1e6))
    return join(table, cpu_state(latency))


def cpu_state(latency: Any, directory: Any = None) -> Text:
    """The zero-copy chase over a table just written by the CPU against one pushed out of its caches, judged by the
    course's rule (:func:`helpers.analysis.cpu_cache.judge`): beyond this run's spread, and of one sign in every
    committed record (``directory``: data/ unless given)."""
    j = cpu_cache.judge(latency, directory)
    if j is None:
        return Text("")
    across, levels = j.across, j.levels
    said = (_("Zero-copy table just written by the CPU: {hot_ns:,.0f} ns per load; pushed out of the CPU's caches: "
              "{cold_ns:,.0f} ns ({round:+,d} ns, {hot_ns2:+.1%}; {origin}). Across {count} H200 runs (the "
              "committed records{value}) the difference ran from {round2:+,d} to {round3:+,d} ns, and the figure "
              "pushed out of the caches alone from {low:,.0f} to {high:,.0f} ns.").format(
                value=_(", and this run") if latency.live else "",
                hot_ns=j.hot_ns, cold_ns=j.cold_ns, round=round(j.difference), hot_ns2=j.hot_ns / j.cold_ns - 1, origin=latency.origin(), count=across.count, round2=round(across.low), round3=round(across.high), low=levels.low, high=levels.high))
    if j.real:
        verdict = (_("The difference is beyond this run's spread and has the same sign in every run: the CPU's "
                     "cache state mattered, so say which state a zero-copy latency figure was taken in."))
    elif j.bands_part:
        verdict = (_("This run's bands do not overlap, but across the runs the difference changes sign: one run "
                     "cannot tell whether the CPU's cache state matters."))
        if levels.high - levels.low > abs(j.difference):
            verdict += (_(" What the runs do show is that the zero-copy latency itself moved from run to run by "
                          "more than this difference."))
    else:
        verdict = (_("The bands of this run overlap, and the difference does not keep one sign across the runs: no "
                     "effect of the CPU's cache state that the records can show."))
    return Text(_("{said} {verdict} The zero-copy figure used below is the one pushed out of the CPU's caches.").format(
                    said=said, verdict=verdict))


def ratio_values(latency: Any) -> dict[str, float]:
    n = ns(latency)
    return {N_("zero-copy / device memory"): n["zero_copy"] / n["device"],
            N_("zero-copy / L2"): n["zero_copy"] / n["l2"], N_("device memory / L2"): n["device"] / n["l2"]}


def ratios(latency: Any) -> Any:
    """The three latency factors with their orders of magnitude, and the verdict on "several orders of magnitude"."""
    values = ratio_values(latency)
    table = Table([_("ratio"), _("factor"), _("orders of magnitude (log10)")],
                  [(_(name), f"{v:.1f}x", f"{math.log10(v):.2f}") for name, v in values.items()],
                  caption=f"*{latency.origin()}*")
    factor = values["zero-copy / device memory"]
    if factor < 10:
        verdict = (_("A zero-copy load took {factor:.1f}x as long as a device-memory load: {log10:.1f} orders of "
                     "magnitude, not 'several'. The seed's claim does not hold here.").format(
                       factor=factor, log10=math.log10(factor)))
    elif factor < 100:
        verdict = (_("A zero-copy load took {factor:.0f}x as long as a device-memory load: {log10:.1f} orders of "
                     "magnitude, not 'several'.").format(factor=factor, log10=math.log10(factor)))
    else:
        verdict = (_("A zero-copy load took {factor:.0f}x as long as a device-memory load: {log10:.1f} orders of "
                     "magnitude: here the claim holds.").format(factor=factor, log10=math.log10(factor)))
    return join(table, Text(verdict))


def ordering(latency: Any) -> tuple[bool, str, str]:
    """``(ok, expected, got)`` for ``experiments.expect``: host memory the slowest, the L2 the fastest."""
    n = ns(latency)
    return (n["zero_copy"] > n["device"] > n["l2"], _("host memory the slowest, the L2 the fastest"),
            _("zero-copy {zero_copy:,.0f} ns, device {device:,.0f} ns, L2 {l2:,.0f} ns").format(
                zero_copy=n['zero_copy'], device=n['device'], l2=n['l2']))


def trip_to_host(latency: Any, GBps: float = 50.0) -> Text:
    """What the trip to the host adds to a device-memory miss, and the bytes in flight each latency needs at
    ``GBps`` (Little's law)."""
    n = ns(latency)
    return bullets([
        _("zero-copy {zero_copy:,.0f} ns - device memory {device:,.0f} ns = {zero_copy2:,.0f} ns more per "
          "dependent load ({origin}).").format(
            zero_copy=n['zero_copy'], device=n['device'], zero_copy2=n['zero_copy'] - n['device'], origin=latency.origin()),
        _("Little's law ({label}; {label2} puts it to work) turns latency into the bytes a kernel must keep in "
          "flight: at {GBps:g} GB/s, {zero_copy:,.0f} ns needs {GBps2:,.0f} KiB in flight over PCIe; device memory "
          "at {device:,.0f} ns needs {GBps3:,.0f} KiB for the same {GBps:g} GB/s.").format(
            label=_lesson('measure-bandwidth').label, label2=_lesson('keep-enough-bytes-in-flight').label, GBps=GBps, zero_copy=n['zero_copy'], GBps2=GBps * n['zero_copy'] / 1024, device=n['device'], GBps3=GBps * n['device'] / 1024),
    ])


def _state(row: dict[str, Any]) -> str:
    return (_("cold") if not row["warm"] else _("warm (same launch)") if "warm_steps" in row
            else _("warmed (earlier launch)"))


def footprint(result: Any) -> Any:
    """The footprint sweep as a table, and what it shows: steps beyond the spread of the repeats, with no cause the
    sweep does not test."""
    rows = [(_(NAMES[r["memory"]]), size_label(r["nbytes"]), _state(r), f"{r['steps']:,} x {len(r['seconds'])}",
             f"{load_ns_spread(r)[1]:,.0f}", _spread(r))
            for memory in ("device", "zero_copy")
            for r in sorted(result.select(memory=memory), key=lambda r: r["nbytes"])]
    table = Table([_("memory"), _("buffer"), _("cache state"), _("steps x repeats"), _("ns per load (median)"),
                   _("lowest-highest repeat")], rows, caption=f"*{result.origin()}*")
    return join(table, footprint_findings(result))


def _chase_key(row: dict[str, Any]) -> dict[str, Any]:
    """The fields that find the same chase in another record: memory, size, cache state, and the controls a row
    carries (the CPU's caches, the warm-up inside the launch); a record made before a control is not the same chase
    and is left out."""
    key = {k: row[k] for k in ("memory", "nbytes", "warm", "cpu_cache") if k in row}
    return {**key, "warm_steps": row["warm_steps"]} if row["warm"] and "warm_steps" in row else key


def _ns_per_load(row: dict[str, Any]) -> np.ndarray:
    return np.asarray(row["seconds"], float) / row["steps"] * 1e9


def apart(result: Any, a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether chase ``b`` of the footprint sweep differs from chase ``a`` by the course's rule
    (:func:`helpers.analysis.spread.values_apart` on ns per load): beyond both rows' repeats, and of one sign in
    every committed record of this GPU that holds both chases; a live run is counted among them."""
    return spread.values_apart(result, "latency_footprint", _chase_key(a), _chase_key(b), _ns_per_load,
                               like=spread.same_gpu(result))


RUNS = N_("the spread of the runs")   # this run's repeats and the committed records, section 3's rule


def footprint_findings(result: Any) -> Text:
    """One line per finding of the footprint sweep, decided from its rows by :func:`apart`."""
    lines = []
    warm = {m: sorted((r for r in result.select(memory=m) if r["warm"]), key=lambda r: r["nbytes"])
            for m in ("device", "zero_copy")}
    cold = {m: sorted((r for r in result.select(memory=m) if not r["warm"]), key=lambda r: r["nbytes"])
            for m in ("device", "zero_copy")}
    device = warm["device"]
    if len(device) > 1:
        c = compare_rows(device[1], device[0])
        if c["change"] < 0 and apart(result, device[1], device[0]):
            lines.append(_("Device memory, warm: the {size_label} buffer took {b_ns:,.0f} ns a load against "
                           "{a_ns:,.0f} ns for {size_label2}, {a_ns2:.1f}x faster, beyond {RUNS}: a step down at "
                           "the smallest size. The figure shows the step; which cache serves the small buffer, it "
                           "does not show.").format(
                             size_label=size_label(device[0]['nbytes']), b_ns=c['b_ns'], a_ns=c['a_ns'], size_label2=size_label(device[1]['nbytes']), a_ns2=c['a_ns'] / c['b_ns'], RUNS=_(RUNS)))
        else:
            lines.append(_("Device memory, warm: {size_label} and {size_label2} took {b_ns:,.0f} and {a_ns:,.0f} "
                           "ns a load: no step down beyond {RUNS}.").format(
                             size_label=size_label(device[0]['nbytes']), size_label2=size_label(device[1]['nbytes']), b_ns=c['b_ns'], a_ns=c['a_ns'], RUNS=_(RUNS)))
    if cold["zero_copy"]:
        link = cold["zero_copy"][0]
        for row in warm["zero_copy"]:
            c, real = compare_rows(link, row), apart(result, link, row)
            head = (_("Zero-copy, warm {size_label}: {b_ns:,.0f} ns against {a_ns:,.0f} ns cold ({size_label2})").format(
                        size_label=size_label(row['nbytes']), b_ns=c['b_ns'], a_ns=c['a_ns'], size_label2=size_label(link['nbytes'])))
            if real and c["change"] < -0.5:
                lines.append(_("{head}: a fraction of a round trip over the link, so the re-visited lines did not "
                               "cross the link again; something on the GPU kept them.").format(head=head))
            elif not real:
                lines.append(_("{head} ({change:+.1%}, within {RUNS}): as slow as a cold load, so every load "
                               "crossed the link: nothing on the GPU kept these lines from one visit to the next.").format(
                                 head=head, change=c['change'], RUNS=_(RUNS)))
            else:
                lines.append(_("{head} ({change:+.1%}, beyond {RUNS}) but near a cold load: the loads still "
                               "crossed the link.").format(head=head, change=c['change'], RUNS=_(RUNS)))
    for memory in ("device", "zero_copy"):
        change = footprint_change(result, memory, warm=False)
        if change is None:
            continue
        span = (_("{capitalize}, cold: {a_ns:,.0f} -> {b_ns:,.0f} ns per load from {size_label} to {size_label2} "
                  "({change:+.1%}").format(
                    capitalize=_(NAMES[memory]).capitalize(), a_ns=change['a_ns'], b_ns=change['b_ns'], size_label=size_label(change['smallest']), size_label2=size_label(change['largest']), change=change['change']))
        if apart(result, cold[memory][0], cold[memory][-1]):
            lines.append(_("{span}, beyond {RUNS}; repeats within {spread:.1%}): the footprint changed the "
                           "latency. The sweep shows that it did, not why.").format(
                             span=span, RUNS=_(RUNS), spread=change['spread']))
        else:
            lines.append(_("{span}, within {RUNS}; repeats within {spread:.1%}): no effect of footprint to explain.").format(
                             span=span, RUNS=_(RUNS), spread=change['spread']))
    return bullets(lines)


def what_you_saw(latency: Any) -> Text:
    """The lesson's findings, computed from the run, with the walk of a 10^6-node linked list."""
    n, r = ns(latency), ratio_values(latency)
    factor = r["zero-copy / device memory"]
    walk = {m: 1e6 * v * 1e-9 for m, v in n.items()}
    return bullets([
        _("Data from: {source}").format(source=latency.describe()),
        _("One dependent load: zero-copy {zero_copy:,.0f} ns, device memory {device:,.0f} ns, L2 {l2:,.0f} ns.").format(
            zero_copy=n['zero_copy'], device=n['device'], l2=n['l2']),
        _("Zero-copy is {factor:.1f}x device memory ({log10:.2f} orders of magnitude) and {zero_copy___l2:.1f}x "
          "the L2.").format(factor=factor, log10=math.log10(factor), zero_copy___l2=r['zero-copy / L2']),
        _("The trip to host memory adds {zero_copy:,.0f} ns to a load that misses every cache on the GPU.").format(
            zero_copy=n['zero_copy'] - n['device']),
        _("A linked list of 10^6 nodes walked by one thread: {zero_copy:.2f} s in mapped memory, {device:.2f} s in "
          "device memory, {l2:.2f} s if it fitted in the L2.").format(
            zero_copy=walk['zero_copy'], device=walk['device'], l2=walk['l2']),
    ], head=computed_from(latency))
