"""The PCIe link between the GPU and the host: its generation, width and nominal rate (lesson 05).

Nominal rates follow the PCI Express Base Specifications as the PCI-SIG summarises them: a lane runs
2.5, 5, 8, 16, 32 or 64 GT/s for generations 1 to 6; generations 1-2 encode 8 bits in 10, 3-5 use
128b/130b, and 6 sends 242 useful bytes in every 256-byte flit (FLIT mode, PAM4). The figure is per
direction: a link carries as much again the other way at the same time. Packet headers, flow control
and the host's memory system take more off what a transfer achieves.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

GT_PER_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
ENCODING = {1: 8 / 10, 2: 8 / 10, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}


def nominal_GBps(generation: int, width: int) -> float:
    """Data rate of a link per direction in GB/s (1e9 bytes/s), before packet overheads (lesson 05)."""
    if generation not in GT_PER_S:
        raise ValueError(f"PCIe generation {generation!r} is not one of {sorted(GT_PER_S)}.")
    if width not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"A PCIe link is x1, x2, x4, x8, x16 or x32 wide, not x{width}.")
    return GT_PER_S[generation] * ENCODING[generation] * width / 8


@dataclass(frozen=True)
class Link:
    """A GPU's PCIe link as the driver reports it: what runs now and the most it supports."""

    generation: int
    width: int
    max_generation: int | None = None
    max_width: int | None = None
    source: str = "nvidia-smi"

    @property
    def nominal_GBps(self) -> float:
        return nominal_GBps(self.generation, self.width)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_link(index: int = 0) -> Link | None:
    """GPU ``index``'s current PCIe link from ``nvidia-smi``, or None where it cannot be read (lesson 05).

    An idle GPU may train its link down to save power (e.g. Gen1) until traffic starts; the
    current generation is read as it is, and the maximum beside it tells the difference.
    """
    if shutil.which("nvidia-smi") is None:
        return None
    fields = "pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max"
    try:
        done = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=20)
        values = [int(v.strip()) for v in done.stdout.strip().splitlines()[0].split(",")]
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return Link(values[0], values[1], values[2], values[3])


def link_from_record(provenance: dict[str, Any]) -> Link | None:
    """The link a record's provenance stored, or None for records made before it was stored."""
    stored = provenance.get("pcie_link")
    return Link(**stored) if isinstance(stored, dict) else None
