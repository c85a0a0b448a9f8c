"""Where and how a live record was made: GPU, driver, CUDA, PyCUDA, the machine, the date and the command.

``python -m helpers record`` starts every record with it (:func:`helpers.records.new_record`); data/README.md
documents every field.
"""

from __future__ import annotations

import platform
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .machine import detect_virtualization

__all__ = ["provenance"]


def provenance(command: str) -> dict[str, Any]:
    """Where and how a live record was made: GPU, driver, CUDA, PyCUDA, date, command."""
    from ..memory import gpu

    gpu.context()
    import numpy
    import pycuda
    import pycuda.driver as drv

    major, minor = drv.Device(0).compute_capability()
    driver = drv.get_driver_version()
    return {
        "gpu": gpu.device_name(),
        "compute_capability": f"{major}.{minor}",
        "driver_version": _nvidia_driver_version() or "unknown",
        "cuda_version": f"{driver // 1000}.{driver % 1000 // 10}",
        "pycuda_version": pycuda.VERSION_TEXT,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "attributes": gpu.device_attributes(),
        "virtualization": detect_virtualization(),
        "pcie_link": _pcie_link(),
        "cpu": _cpu_model(),
    }


def _pcie_link() -> dict[str, Any] | None:
    """The GPU's PCIe link while recording (generation and width, current and maximum), or None."""
    from .pcie import read_link

    link = read_link()
    return link.as_dict() if link else None


def _cpu_model() -> str:
    """The host CPU's model name and last-level cache size as /proc/cpuinfo gives them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    return f"{fields.get('model name', 'unknown')}; cache size {fields.get('cache size', '?')}"


def driver_version() -> str:
    """This machine's NVIDIA driver version, e.g. "580.159.04", or "unknown" (use-write-combined-and-registered-memory
    names the driver that answered live)."""
    return _nvidia_driver_version() or "unknown"


def _nvidia_driver_version() -> str | None:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    match = re.search(r"Kernel Module(?: for \w+)?\s+([\d.]+)", text)
    return match.group(1) if match else None
