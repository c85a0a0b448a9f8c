"""write-your-first-zero-copy-kernel's findings agree with what they quote, replayed and changed (a live-like copy with
other rows): the numbers are the rows' own, and the words flip with them ("refused"/"no error", "live"/"recorded",
"unchanged"/"grew", "As expected"/"Unexpected")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from helpers import cpu, experiments
from helpers.findings import write_your_first_zero_copy_kernel as findings


@pytest.fixture(scope="module")
def by_value():
    return experiments.reference("pass_by_value")


def _live_copy(result, **changes):
    return dataclasses.replace(result, live=True, provenance={"gpu": "Some GPU"}, **changes)


def test_by_value_quotes_the_row(by_value, monkeypatch):
    monkeypatch.delenv("ZC_STRICT_FIGURES", raising=False)
    row = by_value.rows[0]
    text = str(findings.by_value(by_value))
    assert f"{row['passed_argument_bytes']:,} bytes" in text and "recorded on" in text
    assert (f"`{row['error_type']}: {row['error']}`" in text) == bool(row["raised"])
    assert text.count("As expected") == 2 and "Unexpected" not in text
    quiet = _live_copy(by_value, rows=[dict(row, raised=False, error_type="", error="", context_ok_after=False,
                                            passed_argument_bytes=20)])
    text = str(findings.by_value(quiet))
    assert "20 bytes" in text and "no error was raised" in text and "live on Some GPU" in text
    assert "FAILED" in text and text.count("Unexpected") == 2


def test_the_leak_line_says_unchanged_or_grew():
    text = findings.leak([True, True, True], 4096, 4096, cpu)
    assert "3 of 3 runs passed" in text and "4,096 before, 4,096 after" in text and "unchanged" in text
    assert "CPU backend" in text
    text = findings.leak([True, False, True], 0, 12288, cpu)
    assert "2 of 3 runs passed" in text and "grew by 12,288" in text


def test_pointers_compare_each_pair():
    arrays = [np.zeros(4, np.float32) for _ in range(3)]
    same = findings.pointers(arrays, [a.ctypes.data for a in arrays])._repr_markdown_()
    assert same.count("| True |") == 3 and "for all of them" in same
    assert f"{arrays[1].ctypes.data:#x}" in same
    apart = findings.pointers(arrays, [a.ctypes.data + 8 for a in arrays[:2]] + [arrays[2].ctypes.data])
    text = apart._repr_markdown_()
    assert text.count("| False |") == 2 and "not all" in text


def test_the_backend_is_read_from_the_kernel():
    kernel = cpu.load_kernel("vector_add", "vector_add_kernel")
    assert not findings.on_gpu(kernel) and "CPU backend" in findings.backend(kernel, "NVIDIA H200")


def test_contexts_quote_the_autoinit_row_and_the_table():
    result = experiments.reference("contexts")
    autoinit = next(r for r in result.rows if "autoinit_context_is_primary" in r)
    text = str(findings.contexts(result))
    assert f"made another context current: {autoinit['autoinit_changed_current']}" in text
    assert text.count("primary") >= 2 and "recorded on" in text
    changed = [dict(r, autoinit_changed_current=not r["autoinit_changed_current"]) if r is autoinit else r
               for r in result.rows]
    text = str(findings.contexts(_live_copy(result, rows=changed)))
    assert f"made another context current: {not autoinit['autoinit_changed_current']}" in text
    assert "live on Some GPU" in text


def test_the_machine_note_is_text():
    assert findings.on_this_machine()._repr_markdown_()
