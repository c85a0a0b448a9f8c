"""Group a kernel's memory accesses the way the GPU does: per warp and instruction (coalesce-and-align-accesses).

A warp-level memory instruction ("request") is formed by the k-th memory access of every
thread of a warp that made one (same k, same kind: load, store or atomic). This equals the
hardware's grouping when control flow is uniform within the warp; after divergence it is
an approximation (the backend has no source-location id for an access). For each request
the trace counts the bytes the threads asked for (``useful_bytes``), the distinct 32-byte
sectors and the distinct 128-byte lines they touch, and the "span" sectors: per line, the
sectors from the first to the last one touched (what one read request per line carries).

Addresses in a trace are "device" addresses: parameter ``p``'s array starts at
``(p + 1) << 40``, so every array is aligned as cudaMalloc and cuMemHostAlloc align
allocations (numpy only aligns to 16 or 64 bytes), and counts do not depend on where
numpy happened to put an array.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["RECORD_DTYPE", "INSTRUCTION_DTYPE", "SECTOR_BYTES", "LINE_BYTES", "Trace"]

SECTOR_BYTES = 32
LINE_BYTES = 128

RECORD_DTYPE = np.dtype([("addr", "<u8"), ("warp", "<u4"), ("seq", "<u4"), ("lane", "u1"),
                         ("flags", "u1"), ("param", "<i2"), ("size", "<u4")])
INSTRUCTION_DTYPE = np.dtype([("warp", "<u4"), ("instr", "<u4"), ("is_store", "?"), ("is_atomic", "?"),
                              ("threads", "<u4"), ("useful_bytes", "<u8"), ("sectors", "<u4"), ("lines", "<u4"),
                              ("span_sectors", "<u4"), ("param", "<i2")])


def _sector_stats(group: np.ndarray, first: np.ndarray, last: np.ndarray, ngroups: int) -> tuple[np.ndarray, ...]:
    """Per group: distinct sectors, distinct lines, and span sectors (per line, first to last touched
    sector inclusive, summed over lines), for accesses covering sectors ``first..last``."""
    span = (last - first + 1).astype(np.int64)
    if np.any(span > 1):
        g = np.repeat(group, span)
        within = np.arange(len(g)) - np.repeat(np.cumsum(span) - span, span)
        units = np.repeat(first, span) + within.astype(np.uint64)
    else:
        g, units = group, first
    order = np.lexsort((units, g))
    g, units = g[order], units[order]
    keep = np.ones(len(g), bool)
    keep[1:] = (g[1:] != g[:-1]) | (units[1:] != units[:-1])
    g, units = g[keep], units[keep]                        # distinct (group, sector), sorted
    per_line = np.uint64(LINE_BYTES // SECTOR_BYTES)
    line = units // per_line
    starts = np.ones(len(g), bool)
    starts[1:] = (g[1:] != g[:-1]) | (line[1:] != line[:-1])
    ends = np.ones(len(g), bool)
    ends[:-1] = starts[1:]
    widths = (units[ends] - units[starts] + np.uint64(1)).astype(np.int64)
    return (np.bincount(g, minlength=ngroups), np.bincount(g[starts], minlength=ngroups),
            np.bincount(g[starts], weights=widths, minlength=ngroups).astype(np.int64))


@dataclass(frozen=True, eq=False)
class Trace:
    """The memory requests of a (possibly sampled) launch, and their totals (coalesce-and-align-accesses).

    ``instructions`` holds one row per warp-level request: warp, instr (k), is_store,
    is_atomic, threads, useful_bytes, sectors, lines, span_sectors, param (which kernel
    parameter). ``accesses`` holds single accesses (``RECORD_DTYPE``): all of them for
    :meth:`from_addresses`, those of the first warps only for a kernel's trace, whose
    requests the C++ runtime counts as each warp ends (so memory stays bounded).
    When only the first ``traced_warps`` of ``total_warps`` ran, ``sampled`` is true and
    ``scale`` (= total/traced) extrapolates totals to the whole launch.
    """

    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    instructions: np.ndarray
    accesses: np.ndarray
    param_names: tuple[str, ...]
    total_warps: int
    traced_warps: int
    scale: float = 1.0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_records(cls, records: np.ndarray, *, kernel: str, block: Sequence[int], grid: Sequence[int],
                     param_names: Sequence[str] = (), max_warps: int | None = None) -> "Trace":
        """Group raw per-thread accesses (``RECORD_DTYPE``) into warp-level requests."""
        return cls.from_rows(_group(records), records, kernel=kernel, block=block, grid=grid,
                             param_names=param_names, max_warps=max_warps)

    @classmethod
    def from_rows(cls, instructions: np.ndarray, accesses: np.ndarray, *, kernel: str, block: Sequence[int],
                  grid: Sequence[int], param_names: Sequence[str] = (), max_warps: int | None = None) -> "Trace":
        """A trace from requests already grouped (``INSTRUCTION_DTYPE``, by the C++ runtime)."""
        block3 = tuple(int(b) for b in block)
        grid3 = tuple(int(g) for g in grid)
        per_block = (block3[0] * block3[1] * block3[2] + 31) // 32
        total = per_block * grid3[0] * grid3[1] * grid3[2]
        traced = total if not max_warps else min(total, int(max_warps))
        return cls(kernel, block3, grid3, instructions, accesses, tuple(param_names), total, traced,  # type: ignore[arg-type]
                   total / traced if traced else 1.0)

    @classmethod
    def from_addresses(cls, addresses: Sequence[int] | np.ndarray, size: int, *, is_store: bool = False,
                       kernel: str = "pattern") -> "Trace":
        """One warp, one instruction: thread ``i`` accesses ``size`` bytes at ``addresses[i]``."""
        addr = np.asarray(addresses, dtype=np.uint64)
        rec = np.zeros(len(addr), RECORD_DTYPE)
        rec["addr"] = addr
        rec["lane"] = np.arange(len(addr)) % 32
        rec["warp"] = np.arange(len(addr)) // 32
        rec["flags"] = 1 if is_store else 0
        rec["size"] = size
        return cls.from_records(rec, kernel=kernel, block=(len(addr), 1, 1), grid=(1, 1, 1))

    # ------------------------------------------------------------------ totals
    @property
    def sampled(self) -> bool:
        """True when only the first ``traced_warps`` warps of the launch ran."""
        return self.traced_warps < self.total_warps

    @property
    def requests(self) -> int:
        """Warp-level memory instructions traced."""
        return int(len(self.instructions))

    @property
    def useful_bytes(self) -> int:
        """Bytes the threads asked for, summed over the traced requests."""
        return int(self.instructions["useful_bytes"].sum())

    @property
    def sectors(self) -> int:
        """Distinct 32-byte sectors per request, summed over the traced requests."""
        return int(self.instructions["sectors"].sum())

    @property
    def lines(self) -> int:
        """Distinct 128-byte lines per request, summed over the traced requests."""
        return int(self.instructions["lines"].sum())

    @property
    def span_sectors(self) -> int:
        """Per request and line, the sectors from the first to the last touched, summed."""
        return int(self.instructions["span_sectors"].sum())

    def totals(self, kind: str = "all") -> dict[str, int]:
        """requests, useful_bytes, sectors, lines, span_sectors over ``kind``: 'all', 'load', 'store' or 'atomic'."""
        rows = self.instructions
        if kind == "load":
            rows = rows[~rows["is_store"]]
        elif kind == "store":
            rows = rows[rows["is_store"] & ~rows["is_atomic"]]
        elif kind == "atomic":
            rows = rows[rows["is_atomic"]]
        elif kind != "all":
            raise ValueError("kind is 'all', 'load', 'store' or 'atomic'")
        return {"requests": int(len(rows)), "useful_bytes": int(rows["useful_bytes"].sum()),
                "sectors": int(rows["sectors"].sum()), "lines": int(rows["lines"].sum()),
                "span_sectors": int(rows["span_sectors"].sum())}

def _group(records: np.ndarray) -> np.ndarray:
    if len(records) == 0:
        return np.zeros(0, INSTRUCTION_DTYPE)
    order = np.lexsort((records["flags"], records["seq"], records["warp"]))
    r = records[order]
    new = np.ones(len(r), bool)
    new[1:] = (r["warp"][1:] != r["warp"][:-1]) | (r["seq"][1:] != r["seq"][:-1]) | (r["flags"][1:] != r["flags"][:-1])
    group = np.cumsum(new) - 1
    n = int(group[-1]) + 1
    heads = r[new]
    out = np.zeros(n, INSTRUCTION_DTYPE)
    out["warp"] = heads["warp"]
    out["instr"] = heads["seq"]
    out["is_store"] = (heads["flags"] & 1) != 0
    out["is_atomic"] = (heads["flags"] & 2) != 0
    out["param"] = heads["param"]
    out["threads"] = np.bincount(group, minlength=n)
    out["useful_bytes"] = np.bincount(group, weights=r["size"], minlength=n).astype(np.uint64)
    addr, end = r["addr"], r["addr"] + r["size"].astype(np.uint64) - np.uint64(1)
    out["sectors"], out["lines"], out["span_sectors"] = _sector_stats(
        group, addr // np.uint64(SECTOR_BYTES), end // np.uint64(SECTOR_BYTES), n)
    return out
