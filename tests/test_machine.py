"""Whether a record (or this machine) is a virtual machine, and the caveat lessons print (helpers.platform.machine)."""

from __future__ import annotations

from helpers.platform import machine
from helpers import records


def test_virtualization_key_wins_over_the_platform_string():
    assert machine.virtualization({"virtualization": "firecracker", "platform": "Linux-6.1-generic"}) == "firecracker"
    assert machine.in_vm({"virtualization": "none"}) is False
    assert machine.in_vm({"platform": "Linux-6.8.0-45-generic-x86_64"}) is None


def test_older_records_are_read_from_the_kernel_release():
    name = machine.virtualization({"platform": "Linux-6.18.44-fc-v973-gpu-x86_64-with-glibc2.39"})
    assert name is not None and name.startswith("firecracker")


def test_the_reference_record_says_it_ran_in_a_vm():
    record, _ = records.reference_record()
    assert machine.in_vm(record["provenance"]) is True
    sentence = machine.address_caveat(record["provenance"])
    assert "virtual machine" in sentence and "guest-physical" in sentence and "IOMMU" in sentence


def test_unknown_provenance_says_so_instead_of_guessing():
    assert "did not record" in machine.address_caveat({"gpu": "X", "date": "2026-01-01"})


def test_live_detection_returns_a_word():
    assert isinstance(machine.detect_virtualization(), str) and machine.detect_virtualization()
    groups = machine.iommu_groups()
    assert groups is None or groups >= 0
