"""Hardware counters of zero-copy reads, read by Nsight Compute (model-zero-copy-reads).

Live, :func:`counters` runs ``ncu`` on a small program (this module, run as a script) that
launches ``read_strided`` once per access pattern over mapped memory, and records for every
launch the counters that say what crossed the link:

- ``lts__t_requests_aperture_sysmem_op_read.sum``: read requests the L2 sent towards system
  (host) memory;
- ``lts__t_sectors_aperture_sysmem_op_read.sum``: 32-byte sectors those requests asked for;
- ``pcie__read_bytes.sum``: bytes the GPU received over PCIe (data and packet overhead);
- ``pcie__write_bytes.sum``: bytes the GPU sent over PCIe; during a read kernel, mostly the
  read requests themselves.

The record keeps them beside the timings, so model-zero-copy-reads can compare the PCIe model's requests
and bytes with what the hardware counted, in replay too.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Sequence

import numpy as np

from ..errors import ProfilerUnavailableError
from .result import Result, Row, run

METRICS = (
    "lts__t_requests_aperture_sysmem_op_read.sum",
    "lts__t_sectors_aperture_sysmem_op_read.sum",
    "pcie__read_bytes.sum",
    "pcie__write_bytes.sum",
)
NBYTES = 1 << 26  # bytes of mapped memory each profiled launch reads across (64 MiB: counts scale with it)


def default_patterns(nbytes: int = NBYTES) -> list[dict[str, Any]]:
    """The launches profiled: exactly the zero-copy points of the stride, offset and vector_width sweeps
    (helpers.experiments.access), each over ``nbytes`` of mapped memory (model-zero-copy-reads).

    The sweeps read 1 GiB a point; the counters need no such length (they count, they do not time),
    and every count of a launch grows in proportion to the bytes it reads, so model-zero-copy-reads compares
    counts per 128-byte line."""
    from .access import OFFSETS, STRIDES, stride_count

    patterns = [{"kernel": "read_strided", "stride": s, "offset_floats": 0, "count": stride_count(s, nbytes)}
                for s in STRIDES]
    patterns += [{"kernel": "read_strided", "stride": 1, "offset_floats": o, "count": nbytes // 4}
                 for o in OFFSETS if o]
    patterns += [{"kernel": "read_strided_float4", "stride": 1, "offset_floats": 0, "count": nbytes // 16}]
    return patterns


def counters(patterns: Sequence[dict[str, Any]] | None = None, timeout: float = 600.0) -> Result:
    """Counters of one launch per access pattern, read with Nsight Compute (model-zero-copy-reads)."""
    params = {"patterns": list(patterns or default_patterns()), "metrics": list(METRICS), "timeout": timeout}
    return run("counters", params, _counters)


def find_ncu() -> str:
    """The path of Nsight Compute's command line, or ProfilerUnavailableError."""
    found = shutil.which("ncu") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/ncu"), reverse=True)), None) \
        or next(iter(sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)), None)
    if not found:
        raise ProfilerUnavailableError(
            "Nsight Compute's `ncu` is not on PATH (nor in /usr/local/cuda*/bin). It ships with the CUDA toolkit: "
            "put the toolkit's bin/ folder on PATH to record hardware counters.")
    return found


def _counters(patterns: list[dict[str, Any]], metrics: list[str], timeout: float) -> list[Row]:
    ncu = find_ncu()
    with tempfile.TemporaryDirectory(prefix="zc-ncu-") as folder:
        log = os.path.join(folder, "ncu.csv")
        command = [ncu, "--csv", "--print-units", "base", "--log-file", log, "--metrics", ",".join(metrics),
                   "-k", "regex:^read_strided", sys.executable, "-m", "helpers.experiments.counters",
                   json.dumps(patterns)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # `record` skips the counters, keeps the rest of the record
            raise ProfilerUnavailableError(
                f"ncu did not finish {len(patterns)} profiled launches in {timeout:g} s; pass a larger "
                "timeout to experiments.counters(timeout=...)") from exc
        text = open(log).read() if os.path.exists(log) else ""
        if done.returncode != 0 or "ERR_NVGPUCTRPERM" in text + done.stdout + done.stderr:
            raise ProfilerUnavailableError(
                f"ncu failed (exit {done.returncode}); its last words: "
                f"{(text + done.stdout + done.stderr).strip()[-600:]}")
    values = parse_ncu_csv(text)
    if len(values) != len(patterns):
        raise ProfilerUnavailableError(f"ncu profiled {len(values)} launches, expected {len(patterns)}:\n{text[-600:]}")
    rows = []
    for pattern, measured in zip(patterns, values):
        missing = [m for m in metrics if m not in measured]
        if missing:
            raise ProfilerUnavailableError(f"ncu gave no value for {', '.join(missing)} on this GPU.")
        rows.append({**pattern, "useful_bytes": pattern["count"] * (16 if pattern["kernel"].endswith("float4") else 4),
                     **{_column(m): measured[m] for m in metrics}})
    return rows


def _column(metric: str) -> str:
    """A record key for a metric: ``pcie__read_bytes.sum`` -> ``pcie__read_bytes``."""
    return metric.rsplit(".", 1)[0]


def parse_ncu_csv(text: str) -> list[dict[str, float]]:
    """Metric values per profiled launch, in launch order, from ``ncu --csv`` output."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    launches: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(lines):
        value = (row.get("Metric Value") or "").replace(",", "")
        try:
            number = float(value)
        except ValueError:
            continue
        launches.setdefault(int(row["ID"]), {})[row["Metric Name"]] = number
    return [launches[key] for key in sorted(launches)]


def _launch(patterns: list[dict[str, Any]]) -> None:
    """The profiled program: one launch per pattern over mapped memory (run under ncu)."""
    from .. import kernels
    from ..memory import gpu
    from .buffers import BLOCK, NEVER, device, full_grid, mapped

    span = max((p["offset_floats"] + p["count"] * p["stride"]) * (4 if p["kernel"] == "read_strided" else 16)
               for p in patterns)
    with mapped(span) as host, device(4) as sink:
        pointer = gpu.device_pointer(host)
        for p in patterns:
            kernel = kernels.load_kernel("access_pattern", p["kernel"])
            kernel(pointer, np.uint64(p["count"]), np.int32(p["stride"]), np.int32(p["offset_floats"]), NEVER, sink,
                   block=(BLOCK, 1, 1), grid=(full_grid(), 1))
        gpu.synchronize()


if __name__ == "__main__":
    _launch(json.loads(sys.argv[1]))
