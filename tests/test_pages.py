"""The CPU's view of pages, read live from /proc on any Linux (helpers.memory.pages, lessons 01 and 03)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.memory import gpu, pages


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


def test_frame_runs_count_ascending_and_descending_runs():
    assert [(r.start, r.length, r.direction) for r in pages.frame_runs([10, 11, 12, 50, 49, 48, 7])] == [
        (0, 3, "ascending"), (3, 3, "descending"), (6, 1, "single")]
    # a descending block is one run: the recorded cudaHostAlloc buffer on the H200 looked like this
    down = list(range(1571343, 1571327, -1))
    (run,) = pages.frame_runs(down)
    assert run.length == 16 and run.step == -1 and run.first_pfn == 1571343
    # a direction change starts a new run even when the frames touch: 5, 6 then 5 again
    assert [r.length for r in pages.frame_runs([5, 6, 5])] == [2, 1]
    assert pages.frame_runs([]) == []
    with pytest.raises(ValueError, match="hidden"):
        pages.frame_runs([1, None])


def test_huge_page_possible_needs_ascending_aligned_frames():
    base = 2 << 20  # a 2 MiB-aligned virtual address
    aligned = [512 * 3069 + i for i in range(16)]
    assert pages.huge_page_possible(base, aligned)
    assert not pages.huge_page_possible(base, aligned[::-1])  # contiguous but descending
    assert not pages.huge_page_possible(base, [f + 1 for f in aligned])  # ascending, wrong offset in the block
    assert not pages.huge_page_possible(base + pages.PAGE_SIZE, aligned)  # virtual offset does not match
    assert not pages.huge_page_possible(base, [aligned[0], None])


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
