"""The CPU's view of pages, read live from /proc on any Linux (helpers.pages, lessons 01 and 02)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import gpu, pages


def test_untouched_pages_are_not_present_until_written():
    array = gpu.page_aligned_empty(16 * pages.PAGE_SIZE // 4)
    assert not any(f.present for f in pages.frames_of(array))
    array[:] = 1.0
    frames = pages.frames_of(array)
    assert len(frames) == 16 and all(f.present for f in frames)


def test_frame_numbers_are_visible_only_to_root():
    import os

    array = np.ones(pages.PAGE_SIZE)
    frames = pages.frames_of(array)
    if os.geteuid() == 0:
        assert pages.pfns_visible() and all(f.pfn for f in frames)
    else:
        assert all(f.pfn is None for f in frames)


def test_mapping_of_an_array_contains_it():
    array = np.ones(1 << 20)
    mapping = pages.mapping_of(array.ctypes.data)
    assert mapping.start <= array.ctypes.data < mapping.end and "rw" in mapping.permissions
    with pytest.raises(LookupError):
        pages.mapping_of(8)


def test_lock_counts_in_vmlck():
    soft, _ = pages.memlock_limit()
    array = gpu.page_aligned_empty(16 * pages.PAGE_SIZE // 4)
    if soft is not None and soft < array.nbytes:
        pytest.skip("RLIMIT_MEMLOCK too small to lock 64 KiB")
    before = pages.locked_kib()["VmLck"]
    pages.lock(array)
    try:
        assert pages.locked_kib()["VmLck"] >= before + array.nbytes // 1024
    finally:
        pages.unlock(array)
    assert pages.locked_kib()["VmLck"] == before


def test_one_maker_of_page_aligned_arrays_serves_both_backends():
    from helpers import cpu

    for array in (pages.page_aligned_empty((3, 5), np.float64), cpu.mapped_empty(1000, np.int32)):
        assert array.ctypes.data % pages.PAGE_SIZE == 0 and array.flags.writeable
    assert gpu.page_aligned_empty is pages.page_aligned_empty
    for bad in (0, -4, (2, 0), (3, -1)):
        with pytest.raises(ValueError, match="at least one element"):
            pages.page_aligned_empty(bad)
        with pytest.raises(ValueError, match="at least one element"):
            cpu.mapped_empty(bad)
