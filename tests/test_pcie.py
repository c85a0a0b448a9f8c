"""The PCIe link's nominal rate and how a record stores the link (lesson 06)."""

import pytest

from helpers.platform import pcie


def test_nominal_rates_follow_the_generations():
    assert pcie.nominal_GBps(3, 16) == pytest.approx(15.75, rel=1e-3)
    assert pcie.nominal_GBps(4, 16) == pytest.approx(31.5, rel=1e-3)
    assert pcie.nominal_GBps(5, 16) == pytest.approx(63.0, rel=1e-3)
    assert pcie.nominal_GBps(5, 8) == pytest.approx(pcie.nominal_GBps(4, 16))
    with pytest.raises(ValueError, match="generation"):
        pcie.nominal_GBps(7, 16)
    with pytest.raises(ValueError, match="x3"):
        pcie.nominal_GBps(4, 3)


def test_a_record_without_a_link_says_none_and_one_with_it_round_trips():
    assert pcie.link_from_record({"gpu": "x"}) is None
    link = pcie.Link(1, 16, 5, 16, "nvidia-smi")  # an idle link trained down: the nominal rate is the maximum's
    assert pcie.link_from_record({"pcie_link": link.as_dict()}) == link
    assert link.nominal_GBps == pytest.approx(63.0, rel=1e-3)
    assert pcie.Link(None, None).nominal_GBps is None


def test_reading_the_link_without_nvml_or_nvidia_smi_gives_none(monkeypatch):
    monkeypatch.setattr(pcie, "_from_nvml", lambda index: None)
    monkeypatch.setattr(pcie.shutil, "which", lambda name: None)
    assert pcie.read_link() is None
