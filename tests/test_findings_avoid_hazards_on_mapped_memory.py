"""avoid-hazards-on-mapped-memory's findings quote the figures of the result they are given, and their words follow
the figures and where they came from: the replayed record, and changed copies of it (a live-like result, counts
that lost updates, an unfenced kernel that saw the flag early, a read-only load that saw the flag)."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from helpers import experiments
from helpers.findings import avoid_hazards_on_mapped_memory as found


@pytest.fixture(scope="module")
def results():
    return experiments.reference("stale_read"), experiments.reference("atomics"), experiments.reference("handshake"), experiments.reference("latency")


def _changed(result, **fields):
    return dataclasses.replace(result, rows=copy.deepcopy(result.rows), **fields)


def test_stale_reads_quote_the_rows_and_say_where_they_came_from(results):
    stale = results[0]
    text = found.stale_reads(stale)
    partial = [r for r in stale.rows if not r["synchronized"] and r["filled"] < r["n"]]
    assert text.startswith(f"{len(partial)} of the host's") and "recorded on" in text
    assert f"{100 * partial[0]['filled'] / partial[0]['n']:.1f}%" in text
    live = _changed(stale, live=True, provenance={"gpu": "Test GPU"})
    for r in live.rows[:-1]:
        r["filled"] = r["n"]
    text = found.stale_reads(live)
    assert text.startswith("0 of the host's") and "measured live on Test GPU" in text and "recorded" not in text


def test_atomics_quote_the_ratio_and_the_losses(results):
    atomics = results[1]
    seconds = lambda mem: float(np.median([r["seconds"][0] for r in atomics.select(method="count_atomically",  # noqa
                                                                                       memory=mem)]))
    ratio = seconds("zero_copy") / seconds("device")
    assert found.atomic_ratio(atomics) == pytest.approx(ratio)
    text = found.atomics_found(atomics, 0)
    assert f"{ratio:,.0f}x" in text and "is 0: no atomic" in text and "broken run" not in text
    plain = max(r["counted"] for r in atomics.select(method="count_plainly"))
    assert f"at most {plain:,} of them" in text
    scaled = _changed(atomics, live=True, provenance={"gpu": "Test GPU"})
    for r in scaled.rows:
        if r["memory"] == "zero_copy":
            r["seconds"] = [s * 2 for s in r["seconds"]]
        if r["method"] == "count_atomically_system":
            r["counted"] -= 1
    text = found.atomics_found(scaled, 1)
    assert f"{2 * ratio:,.0f}x" in text and "is 1: the link carries" in text and "measured live" in text
    assert "count_atomically_system did not (a broken run)" in text
    assert "atomicAdd counted exactly" in found.saw(*results)
    broken = _changed(atomics)
    broken.rows[0]["counted"] -= 1
    assert "atomicAdd did NOT count exactly" in found.saw(results[0], broken, *results[2:])
    assert "| count_plainly |" in found.counts(atomics)._repr_markdown_()


def test_the_unfenced_verdict_follows_the_trials(results):
    hs = results[2]
    assert "happened to be complete" in found.unfenced(hs)
    early = _changed(hs)
    row = next(r for r in early.rows if r.get("kernel") == "publish_unfenced")
    row["written_at_flag"][:3] = [5, 6, -1]
    text = found.unfenced(early)
    assert "before the whole payload 2 time(s)" in text and "happened to" not in text
    shown = found.publish(hs)._repr_markdown_()
    flag_first = next(r for r in hs.rows if r.get("kernel") == "publish_flag_first")
    assert f"{100 * min(flag_first['written_at_flag']) / flag_first['n']:.1f}%" in shown


def test_the_host_to_gpu_verdict_follows_the_loads(results):
    hs = results[2]
    stale = [r["load"] for r in hs.rows if r["direction"] == "host_to_gpu" and sum(r["seen"]) < r["trials"]]
    assert found.missed(hs) == stale
    assert "missed it" in found.host_to_gpu(hs)._repr_markdown_()
    seen = _changed(hs)
    for r in seen.rows:
        if r["direction"] == "host_to_gpu":
            r["seen"] = [True] * r["trials"]
    text = found.host_to_gpu(seen)._repr_markdown_()
    assert "Every load saw it" in text and "missed it" not in text
    # what you saw sums up the main path only: the flag loads of Going deeper stay there
    assert "missed the host's write" not in found.saw(results[0], results[1], seen, results[3])


def test_what_you_saw_quotes_the_latency(results):
    latency = results[3]
    # the figure every lesson quotes: the load with the table out of the CPU's caches
    load = float(latency.one(memory="zero_copy", cpu_cache="evicted")["load_ns"])
    assert f"{load:.0f} ns" in found.saw(*results)


def _spin(volatile_ns: float, ldcv_ns: float):
    from helpers.experiments.result import Result

    rows = [{"load": load, "spins": 1 << 17, "turns": 1 << 17, "seconds": [ns * (1 << 17) / 1e9] * 9, "turn_ns": ns}
            for load, ns in (("volatile", volatile_ns), ("__ldcv", ldcv_ns))]
    return Result("spin_loop", {"spins": 1 << 17, "repeats": 9}, rows, True,
                  {"gpu": "Test GPU", "date": "2026-12-04T10:00:00+00:00"})


def test_spin_turns_say_the_ldcv_loop_tested_a_register_when_its_turns_are_short(results):
    latency = results[3]
    load_ns = float(np.median(latency.column("load_ns", memory="zero_copy")))
    shown = str(found.spin_turns(_spin(load_ns * 1.05, 19.3), latency))
    assert "19 ns" in shown and f"{load_ns / 19.3:,.0f} times less" in shown and "into a register" in shown
    markdown = found.spin_turns(_spin(load_ns * 1.05, 19.3), latency)._repr_markdown_()
    assert "| volatile |" in markdown and "| yes |" in markdown and "| no |" in markdown
    assert "131,072 turns a launch" in markdown and "measured live on Test GPU" in shown


def test_spin_turns_say_when_the_compiler_kept_the_ldcv_load_in_the_loop(results):
    latency = results[3]
    load_ns = float(np.median(latency.column("load_ns", memory="zero_copy")))
    shown = str(found.spin_turns(_spin(load_ns, load_ns * 0.98), latency))
    markdown = found.spin_turns(_spin(load_ns, load_ns * 0.98), latency)._repr_markdown_()
    assert "kept the __ldcv load in the loop" in shown and "| no |" not in markdown
    assert "into a register" not in shown and "does not oblige" in shown


def test_spin_turns_name_the_record_of_the_latency_they_compare_with(results):
    latency = results[3]
    shown = str(found.spin_turns(_spin(2000.0, 19.3), latency))
    assert latency.origin(dated=True) in shown and "volatile" in shown and "__ldcv" in shown


def test_spin_turns_show_every_way_the_record_holds():
    spin = experiments.reference("spin_loop")
    shown = found.spin_turns(spin, experiments.reference("latency"))._repr_markdown_()
    assert all(f"| {row['load']} |" in shown for row in spin.rows)


SYNTHETIC = [(0x00, "LDC R1, c[0x0][0x28]"), (0x10, "LDG.E.STRONG.SYS R2, desc[UR6][R2.64]"),
             (0x20, "UIADD3 UR5, UP0, UR5, 0x1, URZ"), (0x30, "@!P0 BRA P1, 0x20"), (0x40, "EXIT"),
             (0x50, "BRA 0x50")]


def _listing(rows):
    from helpers.experiments import sass
    from helpers.experiments.result import Result

    return Result("spin_sass", {}, rows, True, {"gpu": "Test GPU", "date": "2026-12-04T10:00:00+00:00",
                                                "arch": "sm_90", "nvcc": "V13.0", "source_sha256": sass.source_hash()})


def test_the_sass_table_says_where_each_load_sits():
    from helpers.experiments import sass

    hoisted = sass.analyse("__ldcv", "spin_ldcv", SYNTHETIC)
    inside = sass.analyse("volatile", "spin_volatile", [SYNTHETIC[0], (0x20, "UIADD3 UR5"),
                                                        (0x28, "LDG.E.STRONG.SYS R4, desc[UR8][R2.64]"),
                                                        (0x30, "@P1 BRA P0, 0x20"), (0x40, "EXIT")])
    shown = found.spin_sass(_listing([inside, hoisted]))._repr_markdown_()
    assert "inside the loop (0x0020 to 0x0030)" in shown and "once at 0x0010, before the loop" in shown
    assert "<- the flag's load" in shown and "<- back to 0x0020" in shown and "LDG.E.STRONG.SYS" in shown
    assert "earlier version" not in shown and "measured live on Test GPU" in shown


def test_the_sass_table_says_when_no_listing_is_recorded_or_it_is_of_older_source():
    from helpers.experiments import sass

    assert "No SASS listing" in str(found.spin_sass(_listing([])))
    old = _listing([sass.analyse("__ldcv", "spin_ldcv", SYNTHETIC)])
    old.provenance["source_sha256"] = "0" * 64
    assert "earlier version of these kernels" in found.spin_sass(old)._repr_markdown_()
