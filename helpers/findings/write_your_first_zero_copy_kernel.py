"""write-your-first-zero-copy-kernel's sentences on what ran: where the seed's kernel runs, its pointers, what passing
arrays by value did, whether pinned memory leaked, and what contexts share. Live or recorded comes from the result
quoted, the backend from the kernel object itself."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..experiments import expect
from ..platform.notes import platform_note
from ..tables import Table, Text, join


def on_this_machine() -> Text:
    """What this machine changes in the lesson, beside the reference GPU (``helpers.platform.notes``)."""
    return Text(platform_note("write-your-first-zero-copy-kernel"))


def on_gpu(kernel: Any) -> bool:
    """Whether ``kernel`` is PyCUDA's (it runs on the GPU) rather than the CPU backend's."""
    return type(kernel).__module__.startswith("pycuda")


def backend(kernel: Any, gpu_name: str) -> Text:
    """Where the kernel just compiled will run, read from the kernel object."""
    if on_gpu(kernel):
        return Text(f"`vector_add_kernel` compiled by nvcc; it runs on the GPU ({gpu_name}).")
    return Text("`vector_add_kernel` compiled by the C++ compiler; it runs on the CPU backend `zc.cpu` (no GPU "
                "here): every thread on the CPU, every access checked against the arrays' bounds.")


def pointers(hosts: Sequence[np.ndarray], devices: Sequence[Any], names: str = "abc") -> Table:
    """Each array's host address beside the device pointer the driver gave for it."""
    rows = [(f"h_{name} / d_{name}", f"{h.ctypes.data:#x}", f"{int(d):#x}", int(d) == h.ctypes.data)
            for name, h, d in zip(names, hosts, devices)]
    same = all(row[-1] for row in rows)
    return Table(["array", "host address", "device pointer", "equal"], rows,
                 caption=f"*device pointer == host pointer for {'all' if same else 'not all'} of them*")


def by_value(result: Any) -> Any:
    """What launching the seed's kernel with the arrays themselves did, and a check of it."""
    row = result.rows[0]
    raised = f"the launch raised `{row['error_type']}: {row['error']}`" if row["raised"] else "no error was raised"
    after = "gave the right sums" if row["context_ok_after"] else "FAILED"
    said = (f"Passing the three arrays themselves packed {row['passed_argument_bytes']:,} bytes of parameters "
            f"({result.origin()}): {raised}; afterwards a launch with device pointers {after}.")
    checks = expect((bool(row["raised"]) and row["error_type"] == "LaunchError",
                     "the driver refuses a parameter buffer that does not match the kernel's parameter list",
                     row["error_type"] or "no error"),
                    (bool(row["context_ok_after"]), "the context still works after the refused launch",
                     "it works" if row["context_ok_after"] else "it does not"))
    return join(f"**{result.describe()}**", Text(said), checks)


def leak(runs: Sequence[bool], before: int, after: int, device: Any) -> Text:
    """The seed program run several times: did every run pass, and did the bytes held grow?"""
    held = ("page-locked bytes the helpers hold" if device.__name__.startswith("helpers.memory")
            else "bytes of mapped arrays the CPU backend knows")
    passed = f"{sum(map(bool, runs))} of {len(runs)} runs passed"
    if after == before:
        return Text(f"{passed}; {held}: {before:,} before, {after:,} after: **unchanged**, nothing leaked.")
    return Text(f"{passed}; {held}: {before:,} before, {after:,} after: **grew by {after - before:,}**: "
                "something was not freed.")


def contexts(result: Any) -> Any:
    """Mapped memory used across two contexts, and what importing ``pycuda.autoinit`` did."""
    autoinit = next(r for r in result.rows if "autoinit_context_is_primary" in r)
    said = (f"`import pycuda.autoinit` made another context current: {autoinit['autoinit_changed_current']}; that "
            f"context is the primary one: {autoinit['autoinit_context_is_primary']} ({result.origin()}).")
    table = Table(["allocated in", "kernel launched from", "PORTABLE", "kernel wrote it correctly", "error"],
                  [(r["allocated_in"], r["used_from"], r["portable"], r["correct"], r["error"] or "-")
                   for r in result.rows if r["allocated_in"]])
    return join(f"**{result.describe()}**", Text(said), table)


