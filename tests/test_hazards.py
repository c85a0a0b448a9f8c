"""Lessons 13 and 14's helpers that run without a GPU: rows missing from an older record, and how a
failed PyCUDA registration is recorded (helpers.experiments)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import experiments
from helpers.memory import gpu
from helpers.errors import RecordError
from helpers.experiments import mapping
from helpers.experiments.result import Result


def _replayed(rows: list[dict]) -> Result:
    return Result("atomics", {}, rows, live=False, provenance={"gpu": "NVIDIA H200"}, record_file="old.json")


def test_need_returns_the_row_that_is_there():
    result = _replayed([{"method": "count_atomically", "memory": "device"}])
    assert result.need(method="count_atomically") == {"method": "count_atomically", "memory": "device"}


def test_need_says_how_to_record_a_row_an_older_record_lacks():
    result = _replayed([{"method": "count_atomically"}])
    with pytest.raises(RecordError, match=r"old.json has no row of 'atomics'.*record --only atomics"):
        result.need(method="count_atomically_system")


def test_need_is_lookup_error_live_when_nothing_matches():
    live = Result("atomics", {}, [{"method": "a"}], live=True)
    with pytest.raises(LookupError, match="0 rows"):
        live.need(method="b")


def test_a_failed_pycuda_registration_records_the_error_and_its_cause(monkeypatch):
    def fail(array, flags):
        try:
            raise ValueError("inner problem")
        except ValueError as exc:
            raise SystemError("returned a result with an exception set") from exc

    monkeypatch.setattr(mapping, "_register_with_pycuda", fail)
    array = gpu.page_aligned_empty(2048)
    row = mapping._try_pycuda_register("label", array, 2)
    explanation = row.pop("explanation")
    assert "SystemError" in explanation and "cuMemHostRegister" in explanation
    assert row == {"allocation": "label", "nbytes": 8192, "page_offset": 0, "flags": 2, "works": False,
                   "error": "SystemError: returned a result with an exception set", "cause": "ValueError: inner problem"}


def test_a_working_pycuda_registration_is_checked_and_undone(monkeypatch):
    array = gpu.page_aligned_empty(1024)
    calls = []

    class Handle:
        def get_device_pointer(self):
            return array.ctypes.data

        def unregister(self):
            calls.append("unregister")

    class Registered:
        base = Handle()

    monkeypatch.setattr(mapping, "_register_with_pycuda", lambda a, flags: Registered())
    row = mapping._try_pycuda_register("label", array, 2)
    assert row["works"] is True and row["device_pointer_equal"] is True and calls == ["unregister"]


def test_handshake_is_recorded_with_the_others():
    assert experiments.ALL["handshake"] is experiments.handshake
    assert "count_atomically_system" in experiments.hazards.ATOMIC_METHODS


def test_the_host_poll_sees_a_raised_flag_and_gives_up_on_time():
    from helpers.experiments.hazards import _poll

    word = np.array([0, 7], np.uint32)
    assert _poll(word, 1, 7, timeout_s=1.0)
    assert not _poll(word, 0, 7, timeout_s=0.01)


LISTING = """
\t\tFunction : spin_ldcv
        /*0000*/                   LDC R1, c[0x0][0x28] ;      /* 0x00000a00ff017b82 */
                                                               /* 0x000fe20000000800 */
        /*0010*/                   LDG.E.STRONG.SYS R2, desc[UR6][R2.64] ;   /* 0x0000000602027981 */
        /*0020*/                   UIADD3 UR5, UP0, UR5, 0x1, URZ ;          /* 0x0000000105057890 */
        /*0030*/              @!P0 BRA P1, 0x20 ;                            /* 0xfffffffc00e88947 */
        /*0040*/                   EXIT ;                                    /* 0x000000000000794d */
        /*0050*/                   BRA 0x50;                                 /* 0xfffffffc00fc7947 */
        /*0060*/                   NOP;                                      /* 0x0000000000007918 */
\t\tFunction : spin_volatile
        /*0000*/                   ULDC.64 UR8, c[0x0][0x208] ;
        /*0010*/                   LDG.E.STRONG.SYS R4, desc[UR8][R2.64] ;
        /*0020*/               @P1 BRA P0, 0x10 ;
        /*0030*/                   EXIT ;
"""


def test_a_sass_listing_is_read_into_loops_and_loads():
    """A synthetic listing in cuobjdump's layout (the parser's test input, not a recorded listing): the branch back
    makes a loop, the trap after EXIT does not, constant loads are not the flag's load."""
    from helpers.experiments import sass

    listing = sass.functions(LISTING)
    assert set(listing) == {"spin_ldcv", "spin_volatile"}
    assert [a for a, _ in listing["spin_ldcv"]] == [0x00, 0x10, 0x20, 0x30, 0x40, 0x50]
    assert sass.loops(listing["spin_ldcv"]) == [(0x20, 0x30)]
    hoisted = sass.analyse("__ldcv", "spin_ldcv", listing["spin_ldcv"])
    assert hoisted["loads"] == [{"address": 0x10, "instruction": "LDG.E.STRONG.SYS", "in_loop": False}]
    assert not hoisted["load_in_loop"]
    assert sass.analyse("volatile", "spin_volatile", listing["spin_volatile"])["load_in_loop"]


def test_a_sass_listing_replays_from_data_sass_and_is_never_overwritten(tmp_path, monkeypatch):
    import dataclasses
    import json

    from helpers.experiments import sass

    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    empty = sass._replay()
    assert empty.rows == [] and not empty.live
    row = sass.analyse("__ldcv", "spin_ldcv", sass.functions(LISTING)["spin_ldcv"])
    live = Result("spin_sass", {}, [row], True, {"gpu": "NVIDIA H200", "date": "2026-12-04T10:00:00+00:00"})
    with pytest.raises(ValueError, match="only a live listing"):
        sass.save(dataclasses.replace(live, live=False))
    path = sass.save(live)
    assert path == tmp_path / "sass" / "nvidia-h200-2026-12-04.json"
    assert json.loads(path.read_text())["format"] == sass.FORMAT
    with pytest.raises(FileExistsError):
        sass.save(live)
    replayed = sass._replay()
    assert replayed.rows == [row] and replayed.record_file == "sass/nvidia-h200-2026-12-04.json"
    assert sass.summary(replayed) == {"__ldcv": "hoisted out of the loop"}


def test_the_spin_loop_times_every_spin_kernel():
    from helpers import kernels
    from helpers.experiments import hazards, sass

    assert set(hazards.SPIN_KERNELS.values()) <= set(kernels.names("hazards"))
    assert sass.SPIN_KERNELS is hazards.SPIN_KERNELS and "atomic_ref acquire" in hazards.SPIN_LOADS
