"""use-write-combined-and-registered-memory's findings quote the figures of the results they are given, and their
words follow those figures: on the replayed record and on changed copies of it (live, a CPU that honours
write-combining, a PyCUDA whose register_host_memory works)."""

from __future__ import annotations

import dataclasses
import platform

from helpers import experiments
from helpers.exercises.lesson13 import reads_needed_rule, registration_seconds
from helpers.findings import use_write_combined_and_registered_memory as found

def _wc_slower(wc, factor):
    """CPU reads of write-combined memory ``factor`` times as slow (rate and every repeat)."""
    rows = []
    for r in wc.rows:
        if r["allocation"] == "mapped + write-combined" and r["side"] == "cpu" and r["op"] == "read":
            r = dict(r, GBps=r["GBps"] / factor, seconds=[s * factor for s in r["seconds"]])
        rows.append(dict(r))
    return dataclasses.replace(wc, rows=rows)

def test_verdict_quotes_the_ratios_and_flips_with_the_cpu():
    wc = experiments.reference("write_combined")
    ratio = found.ratios(wc)
    said = str(found.verdict(wc))
    assert f"{ratio['cpu', 'read']:.2f}" in said and "recorded on" in said
    assert "did not give the CPU a write-combined mapping" in said and "the host the record was made on" in said
    slow = _wc_slower(wc, 20)    # a virtual machine whose other records show no slowdown: the rule cannot tell
    assert "one run cannot tell" in str(found.verdict(slow)) and "as long" not in str(found.verdict(slow))
    slow = dataclasses.replace(slow, provenance={**wc.provenance, "virtualization": "none"})   # bare metal
    said = str(found.verdict(slow))
    assert f"{1 / found.ratios(slow)['cpu', 'read']:.1f}x as long" in said and "reached the CPU's page tables" in said
    live = str(found.verdict(dataclasses.replace(wc, live=True)))
    assert "measured live" in live and platform.platform() in live and "live, this machine" in live


def test_this_machine_names_the_recording_machine_and_its_vm():
    """Issue 31: in replay the note names the machine the record was made on, not "this machine", and does not say
    that the lesson's conclusions hold as written for it when its write-combining result is the VM's."""
    from helpers.findings.use_write_combined_and_registered_memory import HOLD

    provenance = {"gpu": "Test GPU", "virtualization": "kvm", "platform": "Linux-test"}
    said = str(found.this_machine(provenance))
    if "Replay" in said:
        assert HOLD not in said and "Test GPU's host, inside a virtual machine (kvm)" in said
        # the note comes before the prediction: it does not give away the write-combining answer
        assert "may not be a write-combined mapping" not in said
    bare = found.recording_machine({"gpu": "Test GPU", "virtualization": "none"})
    assert bare == "the Test GPU's host"
    unknown = found.recording_machine({"gpu": "Test GPU", "virtualization": "unknown-hypervisor"})
    assert unknown == "the Test GPU's host, inside a virtual machine (hypervisor unknown)"


def test_flags_say_why_the_allocation_without_devicemap_reports_it():
    identity = experiments.reference("address_identity")
    said = str(found.flags(identity))
    assert "cuMemHostGetFlags" in said and "made without `DEVICEMAP` reports it too" in said
    asked = dataclasses.replace(identity, rows=[dict(r, host_flags=[]) if r["allocation"].startswith("pinned, no")
                                                else r for r in identity.rows])
    assert "reports it too" not in str(found.flags(asked))


def test_the_probes_caption_names_the_driver_from_the_record():
    reg = experiments.reference("registered")
    assert f"driver {reg.provenance['driver_version']}" in str(found.probes(reg))
    live = dataclasses.replace(reg, live=True, provenance={"gpu": "Test GPU"})    # live results carry no driver
    assert "driver not recorded" not in str(found.probes(live)) and "measured live" in str(found.probes(live))

def test_registration_explains_pycuda_and_quotes_the_cost():
    reg = experiments.reference("registered")
    per_gib, read = registration_seconds(reg)
    said = str(found.registration(reg))
    assert "SystemError" in said and "PyCUDA bug" in said and "cuMemHostRegister" in said
    assert "Boost.Python" not in said                      # the raw error is explained, not shown
    assert f"{per_gib * 1e3:.0f} ms per GiB" in said
    worked = dataclasses.replace(reg, rows=[dict(r, works=True) if r["allocation"].startswith("pycuda") else r
                                            for r in reg.rows])
    said = str(found.registration(worked))
    assert "worked on an ordinary array" in said and "PyCUDA bug" not in said
    assert "as fast, within their spread" in str(found.registration(reg))   # the records change sign
    slower = dataclasses.replace(reg, rows=[dict(r, GBps=r["GBps"] / 2, seconds=[t * 2 for t in r["seconds"]])
                                            if r["allocation"] == "registered" else r for r in reg.rows],
                                 provenance={"gpu": "Test GPU"})          # no record of that GPU: its repeats decide
    assert "50% slower, beyond their spread" in str(found.registration(slower))
    summary = str(found.summary(experiments.reference("write_combined"), experiments.reference("pagemap_pinned"),
                                experiments.reference("address_identity"), reg, {"UNIFIED_ADDRESSING": 1}))
    assert f"{reads_needed_rule(per_gib, read)} reads of 1 GiB" in summary
    kinds = len(experiments.reference("address_identity").rows)
    assert f"All {kinds} kinds of page-locked allocation had a device pointer equal" in summary
    assert ": True" not in summary and ": False" not in summary       # sentences, not Python's booleans

def test_backing_and_refusals():
    pagemap = experiments.reference("pagemap_pinned")
    assert "backed differently" in str(found.backing(pagemap))
    same = dataclasses.replace(pagemap, rows=[dict(r, maps_line="7f00-7f01 rw-s 0 00:05 1 /dev/zero") if
                                              "maps_line" in r else r for r in pagemap.rows])
    assert "backed the same way" in str(found.backing(same))
    said = str(found.refusals())
    assert "not contiguous" in said and "starts 4 bytes past a page boundary" in said and "accepted" not in said
