"""The sentences and tables of avoid-hazards-on-mapped-memory that quote measured figures, computed from the results
(``zc.findings.avoid_hazards_on_mapped_memory``), so the text beside a figure agrees with it live and in replay."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exercises.lesson14 import median_seconds, atomic_ratio, per_warp_ns, zero_copy_load_ns
from ..experiments.result import Result
from ..i18n import _, sentences
from ..tables import Shown, Table, Text, bullets, join

PUBLISHERS = ("publish_fenced", "publish_unfenced", "publish_flag_first")
FLAG_LOADS = ("volatile", "__ldcv", "__ldcg", "__ldg", "const __restrict__")
COUNTERS = ("count_atomically", "count_plainly", "count_atomically_system")


# --------------------------------------------------------------------------- 1. reading before synchronising
def partial_reads(stale: Result) -> list[dict[str, Any]]:
    """The host's reads before synchronising that saw a partly written buffer."""
    return [r for r in stale.rows if not r["synchronized"] and r["filled"] < r["n"]]


def stale_reads(stale: Result) -> Text:
    """What the host saw in the buffer while one GPU thread filled it, and after synchronising."""
    partial, final = partial_reads(stale), stale.rows[-1]
    early = sum(not r["synchronized"] for r in stale.rows)
    first = (_(", the first {value:.1f}% written {after_launch_ms:.1f} ms after the launch call").format(
                 value=100 * partial[0]['filled'] / partial[0]['n'], after_launch_ms=partial[0]['after_launch_ms']) if partial else "")
    after = (_("every element was written") if final["synchronized"] and final["filled"] == final["n"]
             else _("only {filled:,} of {n:,} elements were written (a broken run)").format(
                      filled=final['filled'], n=final['n']))
    return Text(_("{n_partial} of the host's {early} reads before synchronising saw a partly written "
                  "buffer{first}; after synchronising, {after} ({n:,} elements, {origin}).").format(
                    n_partial=len(partial), early=early, first=first, after=after, n=final['n'], origin=stale.origin(dated=True)))


# --------------------------------------------------------------------------- 2. atomics
def counts(atomics: Result) -> Table:
    """Per kernel and memory: what it counted over the repeats, the increments lost, and its median time."""
    rows = []
    for method in (m for m in COUNTERS if atomics.select(method=m)):
        for memory in ("device", "zero_copy"):
            counted = atomics.column("counted", method=method, memory=memory)
            expected = atomics.select(method=method, memory=memory)[0]["expected"]
            rows.append([method, memory, f"{counted.min():,} .. {counted.max():,}",
                         f"{1 - counted.max() / expected:.2%}", f"{median_seconds(atomics, method, memory) * 1e3:.3f}"])
    expected = atomics.rows[0]["expected"]
    return Table([_("kernel"), _("counter in"), _("counted (over repeats)"), _("lost"), _("median ms")], rows,
                 caption=_("*{expected:,} increments expected in each launch, {origin}*").format(
                             expected=expected, origin=atomics.origin(dated=True)))


def atomics_found(atomics: Result, host_native_atomics: int) -> Text:
    """The counts, what atomicAdd on mapped memory cost against device memory, and what the link offers the host."""
    expected = atomics.rows[0]["expected"]
    exact = [m for m in COUNTERS if m != "count_plainly" and atomics.select(method=m)
             and all(r["counted"] == r["expected"] for r in atomics.select(method=m))]
    inexact = [m for m in COUNTERS if m != "count_plainly" and atomics.select(method=m) and m not in exact]
    plain = int(max(atomics.column("counted", method="count_plainly")))
    link = (_("1: the link carries atomics the host takes part in") if host_native_atomics
            else _("0: no atomic the host takes part in crosses this link"))
    return bullets([
        _("{value} counted all {expected:,} increments exactly, in device and in mapped memory").format(
            value=_(" and ").join(exact) or _("no atomic kernel"), expected=expected) + (_("; {join} did not (a broken run)").format(join=', '.join(inexact)) if inexact else "") + ".",
        _("the plain read-modify-write kept at most {plain:,} of them ({value:.2%} lost).").format(
            plain=plain, value=1 - plain / expected),
        _("atomicAdd on mapped memory took {atomic_ratio:,.0f}x as long as on device memory ({per_warp_ns:.0f} ns "
          "per warp-wide atomic).").format(atomic_ratio=atomic_ratio(atomics), per_warp_ns=per_warp_ns(atomics)),
        _("HOST_NATIVE_ATOMIC_SUPPORTED is {link}.").format(link=link),
    ], head=f"Counting, {atomics.origin(dated=True)}:")


# --------------------------------------------------------------------------- 3. GPU to host
def incomplete_trials(row: dict[str, Any]) -> int:
    """Trials in which the host saw the flag before the whole payload (0 <= written_at_flag < n; -1: never seen)."""
    return sum(0 <= w < row["n"] for w in row["written_at_flag"])


def publish(hs: Result) -> Shown:
    """Per publishing kernel: trials, flag seen, payload complete at the flag; then what the unfenced kernel shows."""
    rows = []
    for name in PUBLISHERS:
        r = hs.need(direction="gpu_to_host", kernel=name)
        at_flag = [w for w in r["written_at_flag"] if w >= 0]
        rows.append([name, r["trials"], sum(r["flag_seen"]), f"{len(at_flag) - incomplete_trials(r)} of {len(at_flag)}",
                     f"{100 * min(at_flag) / r['n']:.1f}%" if at_flag else "-", sum(r["complete_after_sync"])])
    table = Table([_("kernel"), _("trials"), _("flag seen"), _("payload complete at the flag"),
                   _("least written at the flag"), _("complete after sync")], rows, caption=f"*{hs.origin(dated=True)}*")
    return join(table, unfenced(hs))


def unfenced(hs: Result) -> Text:
    """What the kernel without a fence showed, and what that proves (nothing, when it happened to keep the order)."""
    r, fenced = (hs.need(direction="gpu_to_host", kernel=k) for k in ("publish_unfenced", "publish_fenced"))
    bad, bad_fenced = incomplete_trials(r), incomplete_trials(fenced)
    fenced_text = (_("With the fence the payload was complete whenever the flag was seen.") if bad_fenced == 0 else
                   _("With the fence the payload was incomplete at the flag {bad_fenced} time(s): a broken run.").format(
                       bad_fenced=bad_fenced))
    if bad == 0:
        return Text(_("{fenced_text} Without the fence it happened to be complete in all {trials} trials here: "
                      "this GPU and link kept one thread's stores in order. That is an observation, not a "
                      "guarantee: the memory model allows the flag to arrive first, and another GPU or platform "
                      "may show it.").format(fenced_text=fenced_text, trials=r['trials']))
    return Text(_("{fenced_text} Without the fence the host saw the flag before the whole payload {bad} time(s) in "
                  "{trials}.").format(fenced_text=fenced_text, bad=bad, trials=r['trials']))


# --------------------------------------------------------------------------- 4. host to GPU
def missed(hs: Result) -> list[str]:
    """The flag loads that missed the host's write in at least one trial."""
    rows = [hs.need(direction="host_to_gpu", load=load) for load in FLAG_LOADS]
    return [r["load"] for r in rows if sum(r["seen"]) < r["trials"]]


def host_to_gpu(hs: Result) -> Shown:
    """Per way of loading the flag: trials, flag seen, median loads made against the bound, median kernel time."""
    rows = []
    for load in FLAG_LOADS:
        r = hs.need(direction="host_to_gpu", load=load)
        rows.append([load, r["trials"], sum(r["seen"]), f"{int(np.median(r['spins'])):,} of {r['max_spins']:,}",
                     f"{float(np.median(r['seconds'])) * 1e3:.1f}"])
    table = Table([_("flag loaded with"), _("trials"), _("flag seen"),
                   _("median loads made (of the bound)"), _("median kernel ms")],
                  rows, caption=f"*{hs.origin(dated=True)}*")
    stale = missed(hs)
    delay = _("The host raised the flag {host_delay_s:.0f} ms after the kernel said it had started. ").format(
                host_delay_s=hs.params['host_delay_s'] * 1e3)
    if stale:
        text = (delay + _("These loads missed it in at least one trial, reading a stale flag until the bound: "
                          "{join}.").format(join=', '.join(stale)))
    else:
        text = (delay + _("Every load saw it in this run. The read-only path still promises nothing for data that "
                          "changes while the kernel runs: load flags through volatile."))
    return join(table, Text(text))


# A turn that loads the flag over PCIe takes about one dependent zero-copy load (measure-latency); a turn this many
# times shorter cannot have loaded it: the loop tested a register.
NO_LOAD_FACTOR = 10


def spin_turns(spin: Result, latency: Result) -> Shown:
    """Time per turn of a plain spin loop on a flag nobody raises, per way of loading the flag, against one zero-copy
    load (``latency``, whose record the sentence names): which loops loaded the flag on every turn."""
    load_ns = zero_copy_load_ns(latency)
    rows, kept, hoisted = [], [], []
    for row in spin.rows:
        loads = row["turn_ns"] * NO_LOAD_FACTOR >= load_ns
        rows.append([row["load"], f"{row['turn_ns']:,.0f}", "yes" if loads else "no"])
        (kept if loads else hoisted).append(row)
    said = []
    if kept:
        said.append(_("A turn through {names} took about one dependent zero-copy load ({load_ns:,.0f} ns, "
                      "{origin}): those loops loaded the flag on every turn.").format(
                        names=_names(kept), load_ns=load_ns, origin=latency.origin(dated=True)))
    if hoisted:
        fastest = max(r["turn_ns"] for r in hoisted)
        said.append(_("A turn through {names} took at most {fastest:,.0f} ns, {load_ns:,.0f} times less: the flag "
                      "was loaded once, before the loop, into a register; a flag raised later is never seen.").format(
                        names=_names(hoisted), fastest=fastest, load_ns=load_ns / fastest))
    if "__ldcv" in (r["load"] for r in kept):
        said.append(_("This build kept the __ldcv load in the loop; a weak load with a cache hint still does not "
                      "oblige the compiler to, and a volatile or atomic load does."))
    table = Table([_("flag loaded with"), _("ns per turn"), _("loaded every turn?")], rows,
                  caption=_("*{origin}; {spins:,} turns a launch, median of {repeats} launches*").format(
                              origin=spin.origin(dated=True), spins=spin.params['spins'], repeats=spin.params['repeats']))
    return join(table, Text(sentences(*said)))


def _names(rows: list[dict[str, Any]]) -> str:
    names = [r["load"] for r in rows]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _where(row: dict[str, Any]) -> str:
    """Where the flag's load sits in one kernel's SASS."""
    if not row["loads"]:
        return _("no global load found")
    first = min(x["address"] for x in row["loads"])
    if row["load_in_loop"]:
        start, end = next((s, e) for s, e in row["loops"]
                          if any(s <= x["address"] <= e for x in row["loads"]))
        return _("inside the loop ({start:#06x} to {end:#06x}): a load every turn").format(start=start, end=end)
    if not row["loops"]:
        return _("once at {first:#06x}; no loop left").format(first=first)
    return _("once at {first:#06x}, before the loop ({value:#06x} to {value2:#06x})").format(
               first=first, value=row['loops'][0][0], value2=row['loops'][-1][1])


def loop_listing(row: dict[str, Any]) -> str:
    """One kernel's SASS from the flag's first load to the end of its last loop, the load and the branch back marked."""
    if not row["loads"] or not row["loops"]:
        return ""
    first = min(x["address"] for x in row["loads"])
    last = max(e for _, e in row["loops"])
    load_at = {x["address"] for x in row["loads"]}
    lines = []
    for address, text in row["instructions"]:
        if first <= address <= last:
            mark = (_("   <- the flag's load") if address in load_at else
                    "   <- back to " + ", ".join(f"{s:#06x}" for s, e in row["loops"] if e == address)
                    if any(e == address for _, e in row["loops"]) else "")
            lines.append(f"{address:#06x}  {text}{mark}")
    return f"`{row['kernel']}` ({row['load']}):\n\n```text\n" + "\n".join(lines) + "\n```"


def spin_sass(listing: Result, shown: tuple[str, ...] = ("__ldcv",)) -> Shown:
    """Per spin kernel: the flag's load instruction and where it sits (inside the loop or hoisted before it), from the
    SASS of hazards.cu, with the loops of the kernels named in ``shown``; says when no listing is recorded."""
    from ..experiments import sass

    if not listing.rows:
        return Text(_("No SASS listing of the spin kernels is recorded in data/sass/ yet, so replay cannot show "
                      "one: on a machine with a GPU, `python -m helpers sass` builds hazards.cu as the lesson "
                      "does, disassembles it with cuobjdump and saves the listing there."))
    p = listing.provenance
    stale = ("" if p.get("source_sha256") == sass.source_hash() else
             _("; made from an earlier version of these kernels than the one above"))
    where = "" if listing.live else f", data/{listing.record_file}"
    table = Table([_("flag loaded with"), _("kernel"), _("load instruction"), _("where it sits")],
                  [[r["load"], r["kernel"], ", ".join(dict.fromkeys(x["instruction"] for x in r["loads"])) or "-",
                    _where(r)] for r in listing.rows],
                  caption=f"*SASS {listing.origin(dated=True)}{where}: {p.get('arch', '?')}, "
                          f"{p.get('nvcc', '?')}{stale}*")
    return join(table, *(Text(loop_listing(r)) for r in listing.rows if r["load"] in shown and loop_listing(r)))


def spin_listing(listing: Result, load: str = "__ldcv") -> Text:
    """Going deeper: the SASS loop of the spin kernel that loads its flag with ``load``, the flag's load marked."""
    found = next((r for r in listing.rows if r["load"] == load), None)
    text = loop_listing(found) if found else ""
    where = "" if listing.live else f", data/{listing.record_file}"
    return Text(f"*SASS {listing.origin(dated=True)}{where}*\n\n{text}" if text else
                _("No SASS listing of the {load} spin kernel is recorded in data/sass/ yet.").format(load=load))


# --------------------------------------------------------------------------- what you saw
def saw(stale: Result, atomics: Result, hs: Result, latency: Result) -> Text:
    """The lesson's figures in one list."""
    partial, final = partial_reads(stale), stale.rows[-1]
    expected = atomics.rows[0]["expected"]
    plain = int(max(atomics.column("counted", method="count_plainly")))
    bad = {k: incomplete_trials(hs.need(direction="gpu_to_host", kernel=k)) for k in PUBLISHERS}
    trials = hs.need(direction="gpu_to_host", kernel="publish_unfenced")["trials"]
    return bullets([
        _("Before synchronising, {n_partial} host read(s) saw a partly written buffer; after it, all {filled:,} of "
          "{n:,} elements were written ({origin}).").format(
            n_partial=len(partial), filled=final['filled'], n=final['n'], origin=stale.origin(dated=True)),
        (_("atomicAdd counted exactly") if all(r["counted"] == r["expected"]
                                             for r in atomics.select(method="count_atomically"))
         else _("atomicAdd did NOT count exactly (a broken run)"))
        + _("; a plain increment lost {value:.2%} of {expected:,} increments.").format(
              value=1 - plain / expected, expected=expected),
        _("atomicAdd on mapped memory took {atomic_ratio:,.0f}x as long as on device memory ({per_warp_ns:.0f} ns "
          "per warp-wide atomic; one dependent zero-copy load, {origin}: {zero_copy_load_ns:.0f} ns).").format(
            atomic_ratio=atomic_ratio(atomics), per_warp_ns=per_warp_ns(atomics), origin=latency.origin(dated=True), zero_copy_load_ns=zero_copy_load_ns(latency)),
        _("Payloads incomplete when the host saw the flag, in {trials} trials each: flag first "
          "{publish_flag_first}; no fence {publish_unfenced}; __threadfence_system() {publish_fenced}.").format(
            trials=trials, publish_flag_first=bad['publish_flag_first'], publish_unfenced=bad['publish_unfenced'], publish_fenced=bad['publish_fenced']),
    ])
