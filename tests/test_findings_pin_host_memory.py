"""pin-host-memory's narration (helpers.findings.pin_host_memory) quotes the values the lesson's cells read, and its
words flip with them: frames shown or recorded, VmLck back or not, compaction allowed or not."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from helpers import experiments
from helpers.findings import pin_host_memory
from helpers.memory import pages


def _frames(present: list[bool], pfns: list[int | None]) -> list[pages.Frame]:
    return [pages.Frame(i, p, False, pfn) for i, (p, pfn) in enumerate(zip(present, pfns))]


@pytest.fixture
def array():
    if not pages.proc_available():
        pytest.skip("needs Linux /proc (its maps line)")
    return pages.page_aligned_empty(4 * pages.PAGE_SIZE, np.uint8)


def test_first_touch_counts_and_shows_the_frames_it_read(array):
    before, after = _frames([False] * 4, [None] * 4), _frames([True] * 4, [11, 12, 40, 41])
    text = pin_host_memory.first_touch(array, before, after)
    assert "**0 of 4** pages" in text and "**4 of 4**" in text and "every page faulted in" in text
    assert "[11, 12, 40, 41]" in text and "as root" in text and "Recorded" not in text
    partly = pin_host_memory.first_touch(array, before, _frames([True, True, False, True], [1, 2, None, 3]))
    assert "**3 of 4**" in partly and "3 of 4 page faulted in" in partly


def test_first_touch_shows_the_recorded_frames_when_hidden(array):
    recorded = experiments.reference("pagemap_pinned")
    hidden = _frames([True] * 4, [None] * 4)
    text = pin_host_memory.first_touch(array, _frames([False] * 4, [None] * 4), hidden, recorded)
    pfns = recorded.one(allocation="pageable, touched")["pfns"]
    assert f"Read as root in the virtual machine the {recorded.gpu} was recorded in" in text and str(pfns) in text
    assert "'s host" not in text                          # issue 31: the recording VM, never "the host"
    changed = SimpleNamespace(gpu="Other GPU", provenance={"gpu": "Other GPU", "virtualization": "none"},
                              one=lambda **where: {"pfns": [7, 8]})
    assert "in the machine the Other GPU was recorded on" in pin_host_memory.first_touch(array, [], hidden, changed)
    assert "[7, 8]" in pin_host_memory.first_touch(array, [], hidden, changed)


@pytest.mark.parametrize("vmlck, present, back", [((0, 16, 0), 4, True), ((8, 24, 12), 2, False)])
def test_mlocked_quotes_vmlck_and_the_pages_present(vmlck, present, back):
    text = pin_host_memory.mlocked(list(vmlck), present, 4, limit=(65536, None))
    before, locked, after = vmlck
    assert f"{before} KiB before, **{locked} KiB** while locked ({locked - before:+d} KiB)" in text
    assert ("back to where it was" in text) == back and (f"not back to {before} KiB" in text) == (not back)
    assert f"**{present} of 4**" in text and "soft 64 KiB, the most an unprivileged process may lock" in text and "hard unlimited" in text and "CAP_IPC_LOCK" in text and "getrlimit(2)" in text


@pytest.mark.parametrize("setting, phrase", [("1\n", "**may move**"), ("0\n", "**may not move**"),
                                             (None, "no `compact_unevictable_allowed`")])
def test_compaction_flips_with_the_setting(setting, phrase):
    text = pin_host_memory.compaction(setting)
    assert phrase in text
    if setting is not None:
        assert f"= {setting.strip()}:" in text


def test_the_machine_note_is_text():
    assert str(pin_host_memory.this_machine()).strip()


def test_the_machine_note_says_this_lessons_measurements_run_live_in_replay():
    """Issue 31: lesson 01 shows no GPU measurement, so its note never says that its figures replay a GPU's."""
    import dataclasses

    from helpers.platform.facts import Facts
    from helpers.platform.notes import platform_note

    replay = Facts(mode="replay", mode_cause="no-pycuda", mode_reason="test", gpu=None, virtualization="none",
                   cxx="/usr/bin/g++", cxx_identity="g++", proc_available=True)
    note = platform_note("01", facts=replay)
    assert "runs live here" in note and "replay" not in note.lower(), note
    other = platform_note("02", facts=dataclasses.replace(replay))
    assert "the GPU measurements replay" in other and "GPU measurements shown are those of the recorded" in other


def test_the_machine_note_says_whose_frames_section_2_shows_on_each_path():
    """Issue 31 (sixth walk): in a VM, as root, section 2 shows this VM's own frames and everything runs live here;
    without root it shows frames read as root on the recording machine, and the note says so, not "the VM's own"."""
    import dataclasses

    from helpers.platform.facts import Facts
    from helpers.platform.notes import platform_note

    root = Facts(mode="replay", mode_cause="no-pycuda", mode_reason="test", gpu=None, virtualization="kvm",
                 cxx="/usr/bin/g++", cxx_identity="g++", proc_available=True, frames_visible=True)
    note = platform_note("01", facts=root)
    assert "the VM's own" in note and "runs live here; none needs a GPU" in note and "recorded" not in note, note
    hidden = platform_note("01", facts=dataclasses.replace(root, frames_visible=False))
    assert "the VM's own" not in hidden and "except frame numbers" in hidden, hidden
    assert "read as root on the recording machine" in hidden and "only root may" in hidden, hidden
    bare = platform_note("01", facts=dataclasses.replace(root, frames_visible=False, virtualization="none"))
    assert "virtual machine" not in bare and "section 2 shows recorded ones" in bare, bare
    live = platform_note("01", facts=dataclasses.replace(root, frames_visible=False, mode="live"))
    assert "runs live here" not in live and "read as root on the recording machine" in live, live


def test_the_machine_note_of_a_vm_says_its_frames_are_the_vms_in_words_known_by_then():
    """Issue 31: a VM's note says what the VM changes here. Lesson 01's note comes before its section 1 defines
    frames, /proc and the hypervisor (third walk): it points there and explains none of them twice; "container" and
    "kvm", which no lesson defines, are left out of every lesson's note."""
    from helpers.platform.facts import Facts
    from helpers.platform.notes import platform_note

    vm = Facts(mode="replay", mode_cause="no-pycuda", mode_reason="test", gpu=None, virtualization="kvm",
               container="/.dockerenv", cxx="/usr/bin/g++", cxx_identity="g++", proc_available=True)
    note = platform_note("01", facts=vm)
    assert "the VM's own (section 1" in note and "virtual machine (VM)" in note, note
    for unknown in ("pagemap", "/proc", "hypervisor", "guest-physical", "container", "kvm"):
        assert unknown not in note, (unknown, note)
    later = platform_note("03", facts=vm)
    assert "guest-physical" in later and "container" not in later and "kvm" not in later, later
    bare = Facts(mode="replay", mode_cause="no-pycuda", mode_reason="test", gpu=None, virtualization="none",
                 cxx="/usr/bin/g++", cxx_identity="g++", proc_available=True)
    assert "guest-physical" not in platform_note("01", facts=bare)
