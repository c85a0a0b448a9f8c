"""Mode detection and the clear errors for calls that need what is missing (helpers.mode, gpu, kernels)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from helpers import errors, kernels, mode
from helpers.memory import gpu


@pytest.fixture
def replay(monkeypatch):
    """Pretend PyCUDA is not installed, whatever this machine has."""
    monkeypatch.setitem(sys.modules, "pycuda", None)
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    monkeypatch.setattr(mode, "_detected", None)
    yield mode.detect()
    mode.detect(refresh=True)


def test_without_pycuda_the_course_replays(replay):
    assert not replay.live and replay.cause == "no-pycuda"
    assert "replay" in replay.describe() and "PyCUDA" in replay.reason


def test_forced_replay(monkeypatch):
    monkeypatch.setenv("ZC_FORCE_REPLAY", "1")
    assert mode.detect(refresh=True).cause == "forced"
    monkeypatch.delenv("ZC_FORCE_REPLAY")
    mode.detect(refresh=True)


def test_the_mode_is_decided_once(monkeypatch):
    first = mode.detect()
    monkeypatch.setattr(mode, "_probe", lambda: pytest.fail("probed twice"))
    assert mode.detect() is first


def test_live_only_calls_say_what_to_do_in_replay(replay):
    for call in (gpu.context, lambda: gpu.mapped_empty(16), lambda: gpu.pinned_empty(16)):
        with pytest.raises(errors.NoGPUError, match="replay mode") as info:
            call()
        assert "README" in str(info.value)


def test_a_gpu_that_cannot_map_host_memory_is_named(monkeypatch):
    monkeypatch.setattr(mode, "_detected", mode.Mode(False, "GPU X cannot map host memory", "cannot-map"))
    with pytest.raises(errors.HostMappingUnsupportedError, match="cannot map"):
        gpu.mapped_empty(16)
    mode.detect(refresh=True)


@pytest.mark.parametrize("nbytes", [0, -4, 10**15])
def test_sizes_that_cannot_be_pinned(nbytes):
    with pytest.raises(errors.PinningError, match="(at least one element|Refusing to pin)"):
        gpu._check_pinnable(nbytes)


def test_arrays_that_cannot_be_registered():
    with pytest.raises(errors.RegistrationError, match="not contiguous"):
        gpu._check_registrable(np.ones((64, 64))[:, ::2])
    with pytest.raises(errors.RegistrationError, match="page boundary"):
        gpu._check_registrable(np.ones(1000))
    with pytest.raises(errors.RegistrationError, match="numpy arrays"):
        gpu._check_registrable([1.0, 2.0])
    aligned = gpu.page_aligned_empty(4096)
    assert aligned.ctypes.data % gpu.PAGE_SIZE == 0
    gpu._check_registrable(aligned)  # a whole number of aligned pages passes


def test_device_pointer_rejects_ordinary_arrays():
    with pytest.raises(TypeError, match="not page-locked"):
        gpu.device_pointer(np.ones(4))
    with pytest.raises(TypeError, match="numpy array"):
        gpu.device_pointer([1, 2])


def test_missing_nvcc_is_named(monkeypatch):
    monkeypatch.setattr(kernels.shutil, "which", lambda name: None)
    kernels._module.cache_clear()
    with pytest.raises(errors.CompilerNotFoundError, match="nvcc"):
        kernels._module("vector_add")


def test_kernel_files_and_names():
    assert "vector_add" in kernels.files()
    assert kernels.names("vector_add") == ["vector_add_kernel"]
    for stem in kernels.files():
        assert kernels.names(stem), f"{stem}.cu declares no extern \"C\" __global__ kernel"
    with pytest.raises(FileNotFoundError, match="files are"):
        kernels.source("nope")
    with pytest.raises(KeyError, match="defines no kernel"):
        kernels.load_kernel("vector_add", "nope")
