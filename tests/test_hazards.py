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
