"""The PCIe link between the GPU and the host: its generation, width and nominal rate (measure-bandwidth).

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
    """Data rate of a link per direction in GB/s (1e9 bytes/s), before packet overheads (measure-bandwidth)."""
    if generation not in GT_PER_S:
        raise ValueError(f"PCIe generation {generation!r} is not one of {sorted(GT_PER_S)}.")
    if width not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"A PCIe link is x1, x2, x4, x8, x16 or x32 wide, not x{width}.")
    return GT_PER_S[generation] * ENCODING[generation] * width / 8


@dataclass(frozen=True)
class Link:
    """A GPU's PCIe link as the driver reports it: current and maximum generation and width (measure-bandwidth,
    doctor)."""

    gen: int | None
    width: int | None
    max_gen: int | None = None
    max_width: int | None = None
    source: str = "unknown"  # "nvml" | "nvidia-smi" | "record"

    @property
    def nominal_GBps(self) -> float | None:
        """The nominal rate per direction of the fastest link it supports (max, else current), or None."""
        gen, width = self.max_gen or self.gen, self.max_width or self.width
        return nominal_GBps(gen, width) if gen in GT_PER_S and width else None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _run(command: list[str]) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _from_nvml(index: int) -> Link | None:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            return Link(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle), pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle),
                        pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle), pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle),
                        "nvml")
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # pynvml raises NVMLError subclasses; an integrated GPU has no PCIe link to report
        return None


def _from_nvidia_smi(index: int) -> Link | None:
    if shutil.which("nvidia-smi") is None:
        return None
    out = _run(["nvidia-smi", f"--id={index}", "--query-gpu=pcie.link.gen.current,pcie.link.width.current,"
                "pcie.link.gen.max,pcie.link.width.max", "--format=csv,noheader,nounits"])
    if not out:
        return None
    fields = [f.strip() for f in out.splitlines()[0].split(",")]
    values = [int(f) if f.isdigit() else None for f in fields[:4]]
    return Link(*values, source="nvidia-smi") if len(values) == 4 and any(v is not None for v in values) else None


def read_link(index: int = 0) -> Link | None:
    """GPU ``index``'s PCIe link through NVML (nvidia-ml-py), else ``nvidia-smi``; None where neither answers.

    An idle GPU may train its link down to save power (e.g. Gen1) until traffic starts; the
    current generation is read as it is, and the maximum beside it tells the difference.
    """
    return _from_nvml(index) or _from_nvidia_smi(index)


def link_from_record(provenance: dict[str, Any]) -> Link | None:
    """The link a record's provenance stored, or None for records made before it was stored."""
    stored = provenance.get("pcie_link")
    return Link(**stored) if isinstance(stored, dict) else None
