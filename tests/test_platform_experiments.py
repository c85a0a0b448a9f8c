"""The platforms lesson's experiments: the pieces that need no GPU (helpers.experiments.platforms)."""

from __future__ import annotations

import time

from helpers.experiments import platforms


def test_streamers_move_bytes_and_stop():
    with platforms._Streamers(2, 8 << 20) as streamers:
        rate, value = streamers.rate_over(lambda: time.sleep(0.2) or "done")
    assert value == "done"
    assert rate > 1e8, f"two threads copying 8 MiB arrays moved only {rate:.3g} B/s"
    assert all(not t.is_alive() for t in streamers.threads)
    before = sum(streamers.moved)
    time.sleep(0.05)
    assert sum(streamers.moved) == before, "the threads kept copying after the block ended"


def test_no_streamers_is_a_quiet_baseline():
    with platforms._Streamers(0, 1 << 20) as streamers:
        rate, _ = streamers.rate_over(lambda: time.sleep(0.01))
    assert rate == 0.0


def test_managed_kinds_name_the_three_ways():
    assert platforms.MANAGED_KINDS[0] == "mapped"
    assert any("preferred CPU" in k for k in platforms.MANAGED_KINDS)
    assert any("migrating" in k for k in platforms.MANAGED_KINDS)
