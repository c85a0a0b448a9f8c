"""take-zero-copy-beyond-one-pcie-gpu's findings quote the share the result's rows give, and say live or recorded
from the result."""

from __future__ import annotations

import copy
import dataclasses

from helpers import experiments
from helpers.findings import take_zero_copy_beyond_one_pcie_gpu as found


def test_the_share_comes_from_the_rows_live_and_recorded():
    traffic = experiments.reference("cpu_traffic")
    share = traffic.one(cpu_threads=8)["GBps"] / traffic.one(cpu_threads=0)["GBps"]
    assert found.share_with_threads(traffic) == share
    text = found.kernel_share(traffic)
    assert f"{share:.0%}" in text and "recorded on" in text
    halved = dataclasses.replace(traffic, rows=copy.deepcopy(traffic.rows), live=True, provenance={"gpu": "Test GPU"})
    for r in halved.rows:
        if r["cpu_threads"] == 8:
            r["GBps"] /= 2
    text = found.kernel_share(halved)
    assert f"{share / 2:.0%}" in text and "measured live on Test GPU" in text and "recorded" not in text
