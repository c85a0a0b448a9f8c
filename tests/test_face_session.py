"""The session hands a lesson what its seed program calls, from the backend it runs kernels on (write-your-first-
zero-copy-kernel), so that no lesson tests the mode: PyCUDA's names live, the CPU backend's twins in replay."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import course
from helpers.mode import Mode


def _replay() -> course.Session:
    return course.Session(Mode(live=False, reason="test"))


def test_replay_gives_the_cpu_backend_names():
    from helpers import cpu
    from helpers.cpu import driver

    session = _replay()
    assert session.driver is driver and session.SourceModule is cpu.SourceModule and session.device is cpu


def test_the_replay_names_run_the_seed_program():
    session = _replay()
    drv, device = session.driver, session.device
    source = "extern \"C\" __global__ void add(float *a, float *b, float *c, int n) {\n" \
             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] + b[i];\n}\n"
    add = session.SourceModule(source, no_extern_c=True).get_function("add")
    before = device.pinned_bytes_live()
    h = [drv.pagelocked_empty(64, np.float32, mem_flags=drv.host_alloc_flags.DEVICEMAP) for _ in range(3)]
    h[0][:], h[1][:] = 1.0, 2.0
    pointers = [np.intp(x.base.get_device_pointer()) for x in h]
    add(*pointers, np.int32(64), block=(64, 1, 1), grid=(1, 1))
    drv.Context.synchronize()
    assert (h[2] == 3.0).all()
    assert device.pinned_bytes_live() >= before + 3 * 64 * 4
    for x in h:
        x.base.free()
    assert device.pinned_bytes_live() == before


def test_live_gives_pycuda_names(monkeypatch):
    pytest.importorskip("pycuda.driver")
    from helpers.memory import gpu

    session = course.Session(Mode(live=True, reason="test"))
    import pycuda.compiler
    import pycuda.driver

    assert session.driver is pycuda.driver and session.SourceModule is pycuda.compiler.SourceModule
    assert session.device is gpu
