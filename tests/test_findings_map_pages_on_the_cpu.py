"""map-pages-on-the-cpu's narration agrees with what it quotes: the sentence under a page figure is computed from the
frames the figure draws (arrows parallel or crossing), the walks' tables count what the walks hold, and the pinned
buffer's lines come from the recorded row and flip with it ("live"/"recorded", "ruled out"/"not ruled out")."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from helpers import experiments
from helpers.findings import map_pages_on_the_cpu as said
from helpers.memory import pages
from helpers.memory.pages import Frame


def _walk(pfns, present=True, first=0x7F0000):
    return [Frame(first + i, present, False, pfn) for i, pfn in enumerate(pfns)]


def test_the_arrows_sentence_follows_the_drawn_frames():
    parallel = said.Drawn([1, 2, 3, 4], [10, 11, 30, 31], True, "live")
    assert "2 stretches of neighbouring frames, the longest 2 pages" in said.arrows(parallel)
    assert "run parallel" in said.arrows(parallel) and "runs of" not in said.arrows(parallel)
    assert "(live)" in said.arrows(parallel)
    crossing = said.Drawn([1, 2, 3, 4], [13, 12, 11, 10], False, "recorded on X")
    assert "neighbouring frames, in descending order" in said.arrows(crossing) and "every arrow crosses" in said.arrows(crossing)
    scattered = said.Drawn([1, 2, 3], [9, 4, 7], True, "live")
    assert "no two neighbouring pages got neighbouring frames" in said.arrows(scattered)   # issue 31: plain words
    assert "recorded" in said.arrows(crossing) and "live" not in said.arrows(crossing)
    # issue 31 (fourth walk): "some frame is smaller" when every frame was; the sentence says what the frames show
    assert "every arrow crosses every other one" in said.arrows(crossing)
    assert "2 of the 3 pairs of arrows cross" in said.arrows(scattered)   # 9>4 and 9>7: one drop, two crossings
    assert "recorded on X" not in said.arrows(crossing)      # the figure's title says where; the note does not repeat it


def test_the_arrows_count_every_crossing_pair_not_only_adjacent_drops():
    """Issue 31 (sixth walk): three pages whose frames lie above those of five later ones cross all fifteen of
    their arrows, though only one frame is smaller than the one before it."""
    pfns = [50, 51, 52, 10, 11, 12, 13, 14]
    assert said.crossings(pfns) == 15 and said.crossings([1, 2, 3]) == 0 and said.crossings([3, 2, 1]) == 3
    assert said.crossings([2, 1, 4, 3]) == 2
    text = said.arrows(said.Drawn(list(range(8)), pfns, False, "recorded"))
    assert "15 of the 28 pairs of arrows cross (a pair crosses" in text, text


def test_hidden_frames_are_said_once_and_the_tables_leave_them_out(monkeypatch):
    """Issue 31 (fourth walk): without root every table said "hidden" in every row, and the walk repeated why; the
    machine's line says why once, and the tables show what this process can read."""
    monkeypatch.setattr(pages, "pfns_visible", lambda: False)
    assert "CAP_SYS_ADMIN" in str(said.this_machine()) and "leave frames out" in str(said.this_machine())
    walk = said.walk(_walk([None] * 8))._repr_markdown_()
    assert "hidden" not in walk and "CAP_SYS_ADMIN" not in walk and "virtual page" in walk
    shown = said.walk(_walk(list(range(100, 108))))._repr_markdown_()
    assert "frame (PFN)" in shown and "0x64" in shown
    assert len(str(said.zero_page(_walk([None] * 8))).split()) < 30


def test_drawable_draws_the_array_where_frames_show_and_the_record_where_they_do_not(monkeypatch):
    arr = pages.page_aligned_empty(8 * pages.PAGE_SIZE // 4)
    arr[:] = 1
    monkeypatch.setattr(pages, "pfns_visible", lambda: False)
    drawn = said.drawable(arr)
    row = experiments.reference("pagemap_pinned").one(allocation="pageable, touched")
    assert drawn.pfns == row["pfns"][:8] and not drawn.live and "recording VM" in drawn.title
    # issue 31 (third walk): "recorded on NVIDIA H200's machine" drew 8 of 16 pages without saying so
    assert f"the first 8 of its {len(row['pfns'])} pages" in drawn.title and "'s machine" not in drawn.title


def test_first_touch_counts_presence_and_frames():
    table = said.first_touch(_walk([None] * 8, False), _walk([7] * 8), _walk(list(range(100, 108))))
    text = table._repr_markdown_()
    assert "| never touched | 0 of 8 | 0 |" in text and "| after reading | 8 of 8 | 1 |" in text
    assert "| after writing | 8 of 8 | 8 |" in text
    hidden = said.first_touch(_walk([None] * 8, False), _walk([None] * 8), _walk([None] * 8))._repr_markdown_()
    assert "distinct frames" not in hidden and "| after reading | 8 of 8 |" in hidden   # hidden: said once, above


def test_zero_page_words_flip_with_the_walk():
    assert "shared zero page" in said.zero_page(_walk([7] * 8)) and said.shares_a_frame(_walk([7] * 8))
    assert "Without root" in said.zero_page(_walk([None] * 8))
    assert "mapped no pages" in said.zero_page(_walk([None] * 8, False))
    assert "did not share" in said.zero_page(_walk(list(range(8))))


def test_the_zero_page_sentence_says_its_count_of_frames_in_words_that_agree():
    """Issue 31: "map 1 frame(s)" said one frame with a plural for any count."""
    one = str(said.zero_page(_walk([7] * 8)))
    assert "all map one frame" in one and "(s)" not in one
    two = str(said.zero_page(_walk([7] * 4 + [9] * 4)))
    assert "map only 2 frames" in two and "(s)" not in two


def test_the_replay_note_names_the_gpu_only_where_the_conclusions_are_the_gpus():
    """Issue 31: lesson 03's conclusions are about this machine's OS pages, yet its note said they "hold as written
    for the NVIDIA H200"; lesson 02's copy bandwidths are the GPU's, so its note names the GPU it holds for."""
    from helpers.platform.facts import Facts
    from helpers.platform.notes import platform_note, reference_gpu

    replay = Facts(mode="replay", mode_cause="no-pycuda", mode_reason="test", gpu=None, virtualization="none",
                   cxx="/usr/bin/g++", cxx_identity="g++", proc_available=True)
    gpu = reference_gpu().name
    note = platform_note("03", facts=replay)
    assert gpu not in note and "/proc sections run live" in note, note
    assert f"This lesson's conclusions hold as written for the {gpu}." in platform_note("02", facts=replay)


def test_pinned_buffer_quotes_the_row_and_flips_with_it():
    pinning = experiments.reference("pagemap_pinned")
    row = pinning.one(allocation="cudaHostAlloc mapped")
    start, pfns = int(row["address"], 16), row["pfns"]
    text = said.pinned_buffer(pinning)
    assert f"address {start:#x}" in text and f"{row['present_pages']} of {row['pages']} pages present" in text
    size = said.size_in_words(row["pages"] * pages.PAGE_SIZE)
    assert f"a {size} buffer ({row['pages']} pages)" in text
    mapping = said.size_in_words(row["mapping_bytes"])
    assert f"mapping around it (its range in `/proc/self/maps`, lesson 01): {mapping}" in text
    assert "of its 2 MiB block" not in text   # issue 31 (fifth walk): the verdict only; exercise 2 derives why
    assert said.neighbours(pfns) in text and "REPLAY" in text
    huge = pages.huge_page_possible(start, pfns)
    assert ("not ruled out" in text) == huge
    virtual, drawn, title = said.pinned_pages(pinning)
    assert drawn == pfns and len(virtual) == row["pages"] and "recorded" in title
    assert f"A {size} " in title and f"all {row['pages']} pages" in title   # text, output, figure agree
    rows = copy.deepcopy(pinning.rows)
    block = 0x103C00
    for r in rows:
        if r.get("allocation") == "cudaHostAlloc mapped":
            r["pfns"] = [block + i for i in range(len(r["pfns"]))]   # one 2 MiB-aligned, ascending block
    live = dataclasses.replace(pinning, rows=rows, live=True, provenance={"gpu": "GPU X", "date": "2026-12-05"})
    flipped = said.pinned_buffer(live)
    assert "not ruled out" in flipped and "neighbouring frames, in ascending order" in flipped
    assert "live" in said.pinned_pages(live)[2] and "measured live" in flipped


def test_two_views_of_one_file_share_their_frames():
    import mmap
    import os

    fd = os.memfd_create("test")
    os.ftruncate(fd, 2 * pages.PAGE_SIZE)
    one, two = (np.frombuffer(mmap.mmap(fd, 2 * pages.PAGE_SIZE), np.float32) for _ in range(2))
    os.close(fd)
    one[:] = 42.0
    assert np.all(two == 42.0)                  # reading maps view2's pages too
    text = said.two_views(one, two)._repr_markdown_()
    assert f"{one.ctypes.data:#x}" in text and f"{two.ctypes.data:#x}" in text and "| 42 |" in text


def test_huge_page_settings_read_the_files_given(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 1 kB\nHugepagesize:    2048 kB\n")
    thp = tmp_path / "sys/kernel/mm/transparent_hugepage"
    thp.mkdir(parents=True)
    (thp / "enabled").write_text("always [madvise] never\n")
    text = said.huge_page_settings(tmp_path)
    assert "`always [madvise] never`; the bracketed one is active: huge pages only where a program asks" in text
    assert "no 1 GiB pages" in text and "offered in `/sys/kernel/mm/hugepages/`: none" in text
    for size, count in ((2048, 0), (1048576, 4)):      # /sys/kernel/mm/hugepages/: one folder per size
        (tmp_path / f"sys/kernel/mm/hugepages/hugepages-{size}kB").mkdir(parents=True)
        (tmp_path / f"sys/kernel/mm/hugepages/hugepages-{size}kB/nr_hugepages").write_text(f"{count}\n")
    text = said.huge_page_settings(tmp_path)
    assert "2 MiB (0 set aside), 1 GiB (4 set aside)" in text and "no 1 GiB" not in text
    (thp / "enabled").write_text("[always] madvise never\n")
    assert "is active: huge pages wherever the OS kernel can" in said.huge_page_settings(tmp_path)


def test_one_size_is_written_in_one_unit():
    """Issue 31: 2 MiB, never "2048 KiB" beside "2 MiB" in the text."""
    assert said.size_in_words(2 << 20) == "2 MiB" and said.size_in_words(64 << 10) == "64 KiB"
    assert said.size_in_words(1 << 30) == "1 GiB"
    row = experiments.reference("pagemap_pinned").one(allocation="cudaHostAlloc mapped")
    if row["mapping_bytes"] % (1 << 20) == 0:
        assert "KiB" not in str(said.pinned_buffer(experiments.reference("pagemap_pinned"))).split("mapping")[1]


def test_the_pinned_buffers_banner_uses_only_words_the_main_path_has_taught():
    """Issue 31: lesson 03's replay paragraph says the VM's frames are physical only as the VM sees them, pointing
    to Going deeper, without the detector's token, hypervisors, IOMMUs or DMA addresses."""
    pinning = experiments.reference("pagemap_pinned")
    unnamed = dataclasses.replace(pinning, provenance={**pinning.provenance, "virtualization": "unknown-hypervisor"})
    text = str(said.pinned_buffer(unnamed))
    assert "The recording VM's frame numbers are physical only as the VM sees them" in text, text
    for word in ("hypervisor", "IOMMU", "DMA", "guest-physical"):
        assert word not in text, word
    bare = dataclasses.replace(pinning, provenance={**pinning.provenance, "virtualization": "none"})
    assert "no virtual machine" in str(said.pinned_buffer(bare))
