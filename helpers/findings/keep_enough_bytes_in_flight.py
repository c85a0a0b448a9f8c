"""keep-enough-bytes-in-flight: the sentences and tables that quote its measured figures, computed from the results
so that the text beside a figure agrees with it, live and in replay."""

from __future__ import annotations

from typing import Any

from ..analysis.summary import gap_sentence, headline
from ..experiments.latency import load_ns_spread
from ..experiments.transfer import caching_verdict
from ..experiments.result import expect
from . import computed_from
from ..i18n import N_, _
from ..tables import Table, Text, bullets, join


def link_GBps(memcpy: Any) -> float:
    """The pinned host-to-device copy rate: the link's ceiling."""
    return float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))


def _share(low: float, high: float) -> str:
    """'92%', or '88% to 92%' when the two differ as printed."""
    return f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else _("{low:.0%} to {high:.0%}").format(low=low, high=high)


def latency_ns(latency: Any) -> float:
    """One dependent zero-copy load with the table out of the CPU's caches (measure-latency)."""
    return float(latency.one(memory="zero_copy", cpu_cache="evicted")["load_ns"])


def little(memcpy: Any, latency: Any) -> Text:
    """Little's law with this run's link rate and round trip."""
    link, lat = link_GBps(memcpy), latency_ns(latency)
    return Text(_("One dependent zero-copy load took **{lat:.0f} ns** ({lat_origin}); the pinned copy reached "
                  "**{link:.1f} GB/s** ({link_origin}). Little's law: {link:.1f} GB/s x {lat:.0f} ns = "
                  "**{kib:.0f} KiB** must be in flight at every moment to keep the link full.").format(
        lat=lat, lat_origin=latency.origin(), link=link, link_origin=memcpy.origin(), kib=link * lat / 1024))


def few_threads(inflight: Any, memcpy: Any, latency: Any) -> Any:
    """The sweep below a full GPU against Little's law, and the two checks of the estimate."""
    link, lat = link_GBps(memcpy), latency_ns(latency)
    full = int(max(inflight.column("threads")))
    few = sorted({r["threads"] for r in inflight.select(kernel="read_float4") if r["threads"] < full})
    rows = []
    for threads in few:
        one = inflight.one(kernel="read_float4", threads=threads)
        four = inflight.one(kernel="read_float4_x4", threads=threads)
        rows.append([f"{threads:,}", f"{one['GBps']:.2f}", f"{min(one['bytes_in_flight'] / lat, link):.2f}",
                     f"{four['GBps']:.2f}", f"{min(four['bytes_in_flight'] / lat, link):.2f}"])
    table = Table([_("threads"), _("1 x float4: measured"), _("1 x float4: Little"), _("4 x float4: measured"),
                   _("4 x float4: Little")], rows,
                  caption=_("*GB/s {origin}, and Little's law min(bytes in flight / latency, link)*").format(
                      origin=inflight.origin()))
    needed = link * lat / 16                                   # threads of one 16-byte load
    sweep = inflight.select(kernel="read_float4")
    above = [r["GBps"] / link for r in sweep if r["threads"] >= 2 * needed]
    below = [r["GBps"] / link for r in sweep if r["threads"] <= needed / 4]
    checks = expect((min(above) > 0.75, _("from 2x the estimate on, the link nearly full: above 75 %"),
                     _("at least {share:.0%} of the link").format(share=min(above))),
                    (max(below) < 0.5, _("at 1/4 of the estimate or less, the link mostly idle: below 50 %"),
                     _("at most {share:.0%} of the link").format(share=max(below))))
    return join(table, Text(_("Little's law asks for about **{needed:,.0f} threads** of one float4 each: above 2x "
                              "that the run kept >= {above:.0%} of the link, below 1/4 of it <= {below:.0%}.").format(
        needed=needed, above=min(above), below=max(below))), checks)


def full_gpu(inflight: Any, memcpy: Any, latency: Any) -> Any:
    """Every way of putting bytes in flight, with the GPU full of threads."""
    link, need = link_GBps(memcpy), link_GBps(memcpy) * latency_ns(latency)
    full = int(max(inflight.column("threads")))
    rows = inflight.select(threads=full)
    table = Table([_("kernel"), _("bytes per load"), _("independent loads per thread"), _("bytes in flight"), "GB/s"],
                  [[r["kernel"], r["vector_bytes"], r["loads_per_thread"], f"{r['bytes_in_flight'] / 2**20:.1f} MiB",
                    f"{r['GBps']:.1f}"] for r in rows],
                  caption=_("*{threads:,} threads, {origin}*").format(threads=full, origin=inflight.origin()))
    rates = [r["GBps"] for r in rows]
    few = min(r["threads"] for r in inflight.select(kernel="read_float4"))
    x4 = inflight.one(kernel="read_float4_x4", threads=few)["GBps"] / inflight.one(kernel="read_float4",
                                                                                   threads=few)["GBps"]
    floats = inflight.one(kernel="read_float", threads=full)["bytes_in_flight"] / need
    return join(table, bullets([
        _("With {few} threads, four independent loads per thread gave {x4:.1f}x the rate of one (Little's law "
          "predicts 4x while far below the link).").format(few=few, x4=x4),
        _("With a full GPU the {n} variants spread over {low:.1f} to {high:.1f} GB/s ({share} of the pinned copy): "
          "even 4-byte loads put {floats:.0f}x the bytes the link needs in flight.").format(
            n=len(rates), low=min(rates), high=max(rates), share=_share(min(rates) / link, max(rates) / link),
            floats=floats)]))


def loaded(loaded_latency: Any, memcpy: Any) -> Any:
    """The pointer chase's latency beside streaming reads, and Little's law with each latency."""
    link = link_GBps(memcpy)
    alone = loaded_latency.one(load_threads=None)
    spread = "{:,.0f}-{:,.0f}".format(*load_ns_spread(alone)[::2])
    rows = [[_("none (idle link)"), "-", f"{alone['load_ns']:,.0f}", spread, "-", "-"]]
    busy = sorted((r for r in loaded_latency.rows if r["load_threads"]), key=lambda r: r["load_threads"])
    for r in busy:
        rows.append([_("{threads:,} threads x 16 B").format(threads=r["load_threads"]), f"{r['load_GBps']:.1f}",
                     f"{r['load_ns']:,.0f}",
                     "{:,.0f}-{:,.0f}".format(*load_ns_spread(r)[::2]),
                     f"{min(r['bytes_in_flight'] / alone['load_ns'], link):.1f}",
                     f"{r['bytes_in_flight'] / r['load_ns']:.1f}"])
    table = Table([_("traffic beside the chase"), _("traffic GB/s"), _("chase: ns per load (median)"),
                   _("lowest-highest repeat"), _("Little, unloaded latency, GB/s"), _("Little, loaded latency, GB/s")],
                  rows,
                  caption=f"*{loaded_latency.origin()}*")
    small = busy[0]
    worst = max(r["load_ns"] for r in loaded_latency.rows)
    return join(table, Text(
        _("With {threads:,} threads the reads delivered {rate:.1f} GB/s; the unloaded latency predicts "
          "{unloaded:.1f}, the loaded one {loaded:.1f} GB/s. Under a full link one load took {times:.0f}x its idle "
          "time: the extra requests wait in queues, they add no bandwidth.").format(
            threads=small["load_threads"], rate=small["load_GBps"],
            unloaded=small["bytes_in_flight"] / alone["load_ns"], loaded=small["bytes_in_flight"] / small["load_ns"],
            times=worst / alone["load_ns"])))


ORDER = ["same_sm", "other_sm", "ldg", "ldca", "ldcg", "ldcv"]


def caching(result: Any, attributes: dict[str, Any]) -> Any:
    """The re-read table of mapped memory beside device memory, and the verdict on which cache served it."""
    link = float(result.one(memory="memcpy_htod_pinned")["delivered_GBps"])
    size = max(result.column("nbytes", memory="zero_copy"))
    rows = []
    for r in sorted(result.select(memory="zero_copy", nbytes=size),
                    key=lambda r: (ORDER.index(r["pattern"]), ORDER.index(r["load"]))):
        dev = result.one(memory="device", nbytes=size, load=r["load"], pattern=r["pattern"])
        rereads = f"{max(r['sm_rereads']):,}" if "sm_rereads" in r else _("not recorded")
        rows.append([f"__{r['load']}", r["pattern"], f"{r['delivered_GBps']:,.1f}",
                     f"{r['delivered_GBps'] / link:.2f}x", rereads, f"{dev['delivered_GBps']:,.0f}"])
    table = Table([_("load"), _("who re-reads"), _("zero-copy GB/s delivered"), _("/ link rate"),
                   _("chunk reads by an SM that read it before"), _("device memory GB/s")], rows,
                  caption=_("*{mib} MiB, {origin}; the link in the same run: {link:.1f} GB/s*").format(
                      mib=size >> 20, origin=result.origin(), link=link))
    return join(table, Text(caching_verdict(result, attributes)))


def what_you_saw(inflight: Any, memcpy: Any, latency: Any, result: Any, attributes: dict[str, Any]) -> Text:
    """The lesson's figures in a few bullets."""
    link, lat = link_GBps(memcpy), latency_ns(latency)
    few = min(r["threads"] for r in inflight.select(kernel="read_float4"))
    size = max(result.column("nbytes", memory="zero_copy"))
    reread = {(r["load"], r["pattern"]): r["delivered_GBps"] for r in result.select(memory="zero_copy", nbytes=size)}
    same_link = float(result.one(memory="memcpy_htod_pinned")["delivered_GBps"])
    return bullets([
        _("Data from: {source}").format(source=inflight.describe()),
        _("Little's law with the {lat:.0f} ns round trip and the {link:.1f} GB/s pinned copy: {kib:.0f} KiB in flight "
          "fill the link; {few} threads with one float4 each reached {rate:.2f} GB/s.").format(
            lat=lat, link=link, kib=link * lat / 1024, few=few,
            rate=inflight.one(kernel="read_float4", threads=few)["GBps"]),
        _("Re-reading {mib} MiB of mapped memory by the same blocks: {ldg:,.0f} GB/s through __ldg, {ldcg:,.1f} GB/s "
          "through __ldcg (L2 only); by other SMs through __ldg: {other:,.1f} GB/s; the link: {link:.1f} GB/s.")
        .format(mib=size >> 20, ldg=reread[("ldg", "same_sm")], ldcg=reread[("ldcg", "same_sm")],
                other=reread[("ldg", "other_sm")], link=same_link),
        caching_verdict(result, attributes).splitlines()[-1].lstrip("- ")], head=computed_from(inflight))


KEYS = [("memcpy_htod_pinned_GBps", N_("pinned memcpy HtoD, GB/s")),
        ("memcpy_htod_pageable_GBps", N_("pageable memcpy HtoD, GB/s")),
        ("zero_copy_read_GBps", N_("zero-copy read, GB/s")), ("zero_copy_write_GBps", N_("zero-copy write, GB/s")),
        ("device_read_GBps", N_("device-memory read (read_float4_x4, kernel_bandwidth), GB/s")),
        ("zero_copy_latency_ns", N_("zero-copy load latency, ns"))]


def reference_for(first: Any) -> tuple[dict[str, Any], Any]:
    """The record to compare a run with: live, the reference record; replayed, the oldest record of the same GPU
    (the newest is the one replayed), when there are two."""
    from .. import records

    runs = records.matching_records()
    return runs[0] if not first.live and len(runs) > 1 else records.reference_record()


def against_reference(runs: list[Any], reference: tuple[dict[str, Any], Any] | None = None) -> Any:
    """This run's headline figures beside a reference record's (``runs``: memcpy first, then the experiments the
    headline reads; ``reference``: :func:`reference_for` unless given)."""
    first = runs[0]
    reference = reference or reference_for(first)
    mine = headline({"provenance": {"gpu": first.gpu, "date": first.provenance.get("date", "")},
                     "experiments": {r.name: {"params": r.params, "rows": r.rows} for r in runs}})
    record, path = reference
    ref = headline(record)
    table = Table([_("figure"), _("this run"), _("reference"), _("this run / reference")],
                  [(_(label), f"{mine[k]:,.1f}", f"{ref[k]:,.1f}", f"{mine[k] / ref[k]:.2f}") for k, label in KEYS],
                  caption=_("*this run: {origin}; reference: {gpu} recorded {date} (data/{file})*").format(
                      origin=first.origin(), gpu=ref["gpu"], date=ref["date"][:10], file=path.name))
    return join(table, Text(gap_sentence(mine, ref, KEYS, live=first.live)))
