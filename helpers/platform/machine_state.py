"""What may differ between two runs of the same experiment on the same machine (model-zero-copy-reads).

Two records made an hour apart on the lent H200 gave the same request-bound sweep point up to 20 % apart
while each point's own repeats agreed within 1 %. :func:`snapshot` takes, before and after each
experiment of ``python -m helpers record``, what could explain that: the GPU's clocks, temperature,
power and clock-event reasons, its PCIe link and replay counter (NVML, through nvidia-ml-py), and the
host's load and the time the hypervisor took from this virtual machine's CPUs (steal, /proc/stat).
:func:`change` says what moved between two snapshots. Every figure is optional: a key is left out
where NVML or /proc cannot answer.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

__all__ = ["snapshot", "change", "board", "summary"]

SWEEPS = ("stride", "offset")  # the experiments whose state :func:`summary` reads

_PROC_STAT = "/proc/stat"
_LOADAVG = "/proc/loadavg"


def _host() -> dict[str, Any]:
    """Load average and cumulative steal time of this machine's CPUs, in seconds (Linux)."""
    state: dict[str, Any] = {}
    try:
        with open(_LOADAVG) as f:
            state["loadavg_1min"] = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(_PROC_STAT) as f:
            fields = f.readline().split()
        ticks = os.sysconf("SC_CLK_TCK")
        # cpu  user nice system idle iowait irq softirq steal ...
        state["steal_seconds"] = int(fields[8]) / ticks
        state["busy_seconds"] = sum(int(x) for x in (fields[1], fields[2], fields[3], fields[6], fields[7])) / ticks
    except (OSError, ValueError, IndexError):
        pass
    return state


def _nvml(handle: Any) -> dict[str, Any]:
    """The GPU's clocks, temperature, power, clock-event reasons, link and replay counter."""
    import pynvml

    reads: dict[str, Callable[[], Any]] = {
        "sm_clock_MHz": lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
        "memory_clock_MHz": lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
        "temperature_C": lambda: pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU),
        "power_W": lambda: pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
        "clock_event_reasons": lambda: int(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)),
        "pcie_gen": lambda: pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle),
        "pcie_width": lambda: pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle),
        "pcie_replays": lambda: pynvml.nvmlDeviceGetPcieReplayCounter(handle),
    }
    state: dict[str, Any] = {}
    for key, read in reads.items():
        try:
            state[key] = read()
        except Exception:  # NVMLError_NotSupported and kin: a figure this GPU or driver does not give
            continue
    return state


def snapshot() -> dict[str, Any]:
    """The GPU's and the host's state now (live; NVML figures only where nvidia-ml-py and the driver give them)."""
    from ..sharing.contention import nvml_handle

    state: dict[str, Any] = {"monotonic_s": time.monotonic()}
    handle = nvml_handle()
    if handle is not None:
        state.update(_nvml(handle))
    state.update(_host())
    return state


def board() -> str | None:
    """A short hash of the GPU's UUID (NVML): tells two records made on the same board from two made on different
    boards of one model, without publishing the board's identifier; None without NVML."""
    import hashlib

    from ..sharing.contention import nvml_handle

    handle = nvml_handle()
    if handle is None:
        return None
    try:
        import pynvml

        uuid = pynvml.nvmlDeviceGetUUID(handle)
    except Exception:  # NVMLError: a driver that does not say
        return None
    uuid = uuid.decode() if isinstance(uuid, bytes) else str(uuid)
    return hashlib.sha256(uuid.encode()).hexdigest()[:12]


def change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What moved between two snapshots: the CPUs' steal as a share of the wall time between them, the
    PCIe replays, and every GPU figure that differs (as ``[before, after]``)."""
    moved: dict[str, Any] = {}
    wall = after.get("monotonic_s", 0.0) - before.get("monotonic_s", 0.0)
    cpus = os.cpu_count() or 1
    if wall > 0 and "steal_seconds" in before and "steal_seconds" in after:
        moved["steal_share"] = (after["steal_seconds"] - before["steal_seconds"]) / (wall * cpus)
    if "pcie_replays" in before and "pcie_replays" in after:
        moved["pcie_replays"] = after["pcie_replays"] - before["pcie_replays"]
    for key in ("sm_clock_MHz", "memory_clock_MHz", "clock_event_reasons", "pcie_gen", "pcie_width"):
        if key in before and key in after and before[key] != after[key]:
            moved[key] = [before[key], after[key]]
    return moved


def summary(provenance: dict[str, Any], experiments: tuple[str, ...] = SWEEPS) -> dict[str, Any] | None:
    """What a record's snapshots say around ``experiments``: every SM clock, memory clock, clock-event reason and
    PCIe link seen (sorted, distinct), the PCIe replays added, the largest share of CPU time the hypervisor stole,
    and the board (:func:`board`, None where the record has none); None for a record made before the state was kept
    (model-zero-copy-reads)."""
    states = [provenance.get("machine_state", {}).get(name) for name in experiments]
    states = [s for s in states if s]
    if not states:
        return None
    snaps = [snap for s in states for snap in (s["before"], s["after"])]

    def seen(key: str) -> list[Any]:
        return sorted({snap[key] for snap in snaps if key in snap})

    links = sorted({f"Gen{snap['pcie_gen']} x{snap['pcie_width']}" for snap in snaps
                    if "pcie_gen" in snap and "pcie_width" in snap})
    return {"board": provenance.get("gpu_board"), "sm_clock_MHz": seen("sm_clock_MHz"), "memory_clock_MHz": seen("memory_clock_MHz"),
            "clock_event_reasons": seen("clock_event_reasons"), "pcie_link": links,
            "pcie_replays": sum(s["change"].get("pcie_replays", 0) for s in states),
            "steal_share": max((s["change"].get("steal_share", 0.0) for s in states), default=0.0)}
