"""The sentences and tables of avoid-hazards-on-mapped-memory that quote measured figures, computed from the results
(``zc.findings.avoid_hazards_on_mapped_memory``), so the text beside a figure agrees with it live and in replay."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exercises.lesson14 import median_seconds, atomic_ratio, per_warp_ns, zero_copy_load_ns
from ..experiments.result import Result
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
    first = (f", the first {100 * partial[0]['filled'] / partial[0]['n']:.1f}% written "
             f"{partial[0]['after_launch_ms']:.1f} ms after the launch call" if partial else "")
    after = ("every element was written" if final["synchronized"] and final["filled"] == final["n"]
             else f"only {final['filled']:,} of {final['n']:,} elements were written (a broken run)")
    return Text(f"{len(partial)} of the host's {early} reads before synchronising saw a partly written buffer{first}; "
                f"after synchronising, {after} ({final['n']:,} elements, {stale.origin(dated=True)}).")


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
    return Table(["kernel", "counter in", "counted (over repeats)", "lost", "median ms"], rows,
                 caption=f"*{expected:,} increments expected in each launch, {atomics.origin(dated=True)}*")


def atomics_found(atomics: Result, host_native_atomics: int) -> Text:
    """The counts, what atomicAdd on mapped memory cost against device memory, and what the link offers the host."""
    expected = atomics.rows[0]["expected"]
    exact = [m for m in COUNTERS if m != "count_plainly" and atomics.select(method=m)
             and all(r["counted"] == r["expected"] for r in atomics.select(method=m))]
    inexact = [m for m in COUNTERS if m != "count_plainly" and atomics.select(method=m) and m not in exact]
    plain = int(max(atomics.column("counted", method="count_plainly")))
    link = ("1: the link carries atomics the host takes part in" if host_native_atomics
            else "0: no atomic the host takes part in crosses this link")
    return bullets([
        f"{' and '.join(exact) or 'no atomic kernel'} counted all {expected:,} increments exactly, in device and in "
        "mapped memory" + (f"; {', '.join(inexact)} did not (a broken run)" if inexact else "") + ".",
        f"the plain read-modify-write kept at most {plain:,} of them ({1 - plain / expected:.2%} lost).",
        f"atomicAdd on mapped memory took {atomic_ratio(atomics):,.0f}x as long as on device memory "
        f"({per_warp_ns(atomics):.0f} ns per warp-wide atomic).",
        f"HOST_NATIVE_ATOMIC_SUPPORTED is {link}.",
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
    table = Table(["kernel", "trials", "flag seen", "payload complete at the flag", "least written at the flag",
                   "complete after sync"], rows, caption=f"*{hs.origin(dated=True)}*")
    return join(table, unfenced(hs))


def unfenced(hs: Result) -> Text:
    """What the kernel without a fence showed, and what that proves (nothing, when it happened to keep the order)."""
    r, fenced = (hs.need(direction="gpu_to_host", kernel=k) for k in ("publish_unfenced", "publish_fenced"))
    bad, bad_fenced = incomplete_trials(r), incomplete_trials(fenced)
    fenced_text = ("With the fence the payload was complete whenever the flag was seen." if bad_fenced == 0 else
                   f"With the fence the payload was incomplete at the flag {bad_fenced} time(s): a broken run.")
    if bad == 0:
        return Text(f"{fenced_text} Without the fence it happened to be complete in all {r['trials']} trials here: "
                    "this GPU and link kept one thread's stores in order. That is an observation, not a guarantee: the "
                    "memory model allows the flag to arrive first, and another GPU or platform may show it.")
    return Text(f"{fenced_text} Without the fence the host saw the flag before the whole payload {bad} time(s) in "
                f"{r['trials']}.")


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
    table = Table(["flag loaded with", "trials", "flag seen", "median loads made (of the bound)", "median kernel ms"],
                  rows, caption=f"*{hs.origin(dated=True)}*")
    stale = missed(hs)
    delay = f"The host raised the flag {hs.params['host_delay_s'] * 1e3:.0f} ms after the kernel said it had started. "
    if stale:
        text = (delay + f"These loads missed it in at least one trial, reading a stale flag until the bound: "
                f"{', '.join(stale)}.")
    else:
        text = (delay + "Every load saw it in this run. The read-only path still promises nothing for data that "
                "changes while the kernel runs: load flags through volatile.")
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
        said.append(f"A turn through {_names(kept)} took about one dependent zero-copy load ({load_ns:,.0f} ns, "
                    f"{latency.origin(dated=True)}): those loops loaded the flag on every turn.")
    if hoisted:
        fastest = max(r["turn_ns"] for r in hoisted)
        said.append(f"A turn through {_names(hoisted)} took at most {fastest:,.0f} ns, {load_ns / fastest:,.0f} times "
                    "less: the flag was loaded once, before the loop, into a register; a flag raised later is "
                    "never seen.")
    if "__ldcv" in (r["load"] for r in kept):
        said.append("This build kept the __ldcv load in the loop; a weak load with a cache hint still does not "
                    "oblige the compiler to, and a volatile or atomic load does.")
    table = Table(["flag loaded with", "ns per turn", "loaded every turn?"], rows,
                  caption=f"*{spin.origin(dated=True)}; {spin.params['spins']:,} turns a launch, median of "
                          f"{spin.params['repeats']} launches*")
    return join(table, Text(" ".join(said)))


def _names(rows: list[dict[str, Any]]) -> str:
    names = [r["load"] for r in rows]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _where(row: dict[str, Any]) -> str:
    """Where the flag's load sits in one kernel's SASS."""
    if not row["loads"]:
        return "no global load found"
    first = min(x["address"] for x in row["loads"])
    if row["load_in_loop"]:
        start, end = next((s, e) for s, e in row["loops"]
                          if any(s <= x["address"] <= e for x in row["loads"]))
        return f"inside the loop ({start:#06x} to {end:#06x}): a load every turn"
    if not row["loops"]:
        return f"once at {first:#06x}; no loop left"
    return f"once at {first:#06x}, before the loop ({row['loops'][0][0]:#06x} to {row['loops'][-1][1]:#06x})"


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
            mark = ("   <- the flag's load" if address in load_at else
                    "   <- back to " + ", ".join(f"{s:#06x}" for s, e in row["loops"] if e == address)
                    if any(e == address for _, e in row["loops"]) else "")
            lines.append(f"{address:#06x}  {text}{mark}")
    return f"`{row['kernel']}` ({row['load']}):\n\n```text\n" + "\n".join(lines) + "\n```"


def spin_sass(listing: Result, shown: tuple[str, ...] = ("__ldcv",)) -> Shown:
    """Per spin kernel: the flag's load instruction and where it sits (inside the loop or hoisted before it), from the
    SASS of hazards.cu, with the loops of the kernels named in ``shown``; says when no listing is recorded."""
    from ..experiments import sass

    if not listing.rows:
        return Text("No SASS listing of the spin kernels is recorded in data/sass/ yet, so replay cannot show one: on "
                    "a machine with a GPU, `python -m helpers sass` builds hazards.cu as the lesson does, "
                    "disassembles it with cuobjdump and saves the listing there.")
    p = listing.provenance
    stale = ("" if p.get("source_sha256") == sass.source_hash() else
             "; made from an earlier version of these kernels than the one above")
    where = "" if listing.live else f", data/{listing.record_file}"
    table = Table(["flag loaded with", "kernel", "load instruction", "where it sits"],
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
                f"No SASS listing of the {load} spin kernel is recorded in data/sass/ yet.")


# --------------------------------------------------------------------------- what you saw
def saw(stale: Result, atomics: Result, hs: Result, latency: Result) -> Text:
    """The lesson's figures in one list."""
    partial, final = partial_reads(stale), stale.rows[-1]
    expected = atomics.rows[0]["expected"]
    plain = int(max(atomics.column("counted", method="count_plainly")))
    bad = {k: incomplete_trials(hs.need(direction="gpu_to_host", kernel=k)) for k in PUBLISHERS}
    trials = hs.need(direction="gpu_to_host", kernel="publish_unfenced")["trials"]
    return bullets([
        f"Before synchronising, {len(partial)} host read(s) saw a partly written buffer; after it, all "
        f"{final['filled']:,} of {final['n']:,} elements were written ({stale.origin(dated=True)}).",
        ("atomicAdd counted exactly" if all(r["counted"] == r["expected"]
                                             for r in atomics.select(method="count_atomically"))
         else "atomicAdd did NOT count exactly (a broken run)")
        + f"; a plain increment lost {1 - plain / expected:.2%} of {expected:,} increments.",
        f"atomicAdd on mapped memory took {atomic_ratio(atomics):,.0f}x as long as on device memory "
        f"({per_warp_ns(atomics):.0f} ns per warp-wide atomic; one dependent zero-copy load, {latency.origin(dated=True)}: "
        f"{zero_copy_load_ns(latency):.0f} ns).",
        f"Payloads incomplete when the host saw the flag, in {trials} trials each: flag first "
        f"{bad['publish_flag_first']}; no fence {bad['publish_unfenced']}; __threadfence_system() "
        f"{bad['publish_fenced']}.",
    ])
