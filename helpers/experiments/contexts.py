"""Mapped pinned memory across CUDA contexts, and what ``import pycuda.autoinit`` makes current
(write-your-first-zero-copy-kernel).

Run in a child process, so the notebook's own context stack is never touched: the child retains GPU 0's
primary context (as :func:`helpers.memory.gpu.context` does), allocates mapped pinned memory there with and
without ``PORTABLE``, then launches a kernel on that memory from a second, newly created context, and the
other way round. It also imports ``pycuda.autoinit`` with the primary context current and records which
context autoinit made current.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np

from ..sharing.gpu_queue import measurement_slot
from .result import Result, Row, run

_KERNEL = r"""
extern "C" __global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""


def contexts(n: int = 1 << 16, timeout: float = 120.0) -> Result:
    """Mapped pinned memory used from a context other than the one that allocated it, with and without
    ``PORTABLE``; and whether ``pycuda.autoinit`` creates a context of its own (write-your-first-zero-copy-kernel)."""
    return run("contexts", {"n": n, "timeout": timeout}, _contexts)


def _contexts(n: int, timeout: float) -> list[Row]:
    with measurement_slot(what="contexts"):
        done = subprocess.run([sys.executable, "-m", "helpers.experiments.contexts", str(n)],
                              capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    if not lines:
        raise RuntimeError(f"the context probe died (exit {done.returncode}): {(done.stderr or done.stdout)[-600:]}")
    return json.loads(lines[-1])


def _handle(context: Any) -> int:
    """A context's driver handle, to tell two contexts apart."""
    return int(getattr(context, "handle", id(context)))


def _probe(n: int) -> list[Row]:
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule

    drv.init()
    device = drv.Device(0)
    primary = device.retain_primary_context()
    primary.push()
    created = device.make_context()  # a second context on the same GPU, now current
    created.pop()
    rows: list[Row] = []
    for owner_name, owner, user_name, user in (("primary", primary, "created", created),
                                               ("created", created, "primary", primary)):
        for portable in (False, True):
            owner.push()
            flags = drv.host_alloc_flags.DEVICEMAP | (drv.host_alloc_flags.PORTABLE if portable else 0)
            array = drv.pagelocked_empty(n, np.float32, mem_flags=flags)
            array[:] = 1.0
            pointer = int(array.base.get_device_pointer())
            owner.pop()
            row: Row = {"allocated_in": owner_name, "used_from": user_name, "portable": portable, "n": n}
            user.push()
            try:
                kernel = SourceModule(_KERNEL, no_extern_c=True).get_function("add_one")
                kernel(np.intp(pointer), np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
                drv.Context.synchronize()
                row.update(kernel_ran=True, correct=bool(np.all(array == 2.0)), error="")
            except drv.Error as exc:
                row.update(kernel_ran=False, correct=False, error=f"{type(exc).__name__}: {exc}"[:300])
            finally:
                user.pop()
            owner.push()
            array.base.free()
            owner.pop()
            rows.append(row)
    primary.push()
    before = _handle(drv.Context.get_current())
    import pycuda.autoinit  # noqa: F401  (what the course tells learners not to do; here, to see what it does)

    after = _handle(drv.Context.get_current())
    rows.append({"allocated_in": "", "used_from": "", "portable": False, "n": 0,
                 "autoinit_context_is_primary": after == _handle(primary), "autoinit_changed_current": after != before,
                 "kernel_ran": True, "correct": True, "error": ""})
    return rows


if __name__ == "__main__":
    print(json.dumps(_probe(int(sys.argv[1]))))
