"""Lesson 05's prediction (write-your-first-zero-copy-kernel): what launching the seed's kernel with the arrays
themselves does, compared with pass_by_value; "no prediction" on the untouched placeholder. Its exercises' hints are
tested in test_exercises.py and test_hints.py."""

from __future__ import annotations

import dataclasses

from helpers import exercises, experiments
from helpers.exercises import lesson05
from typical_wrong import Typical, edited


def test_the_prediction_names_where_the_figure_comes_from():
    by_value = experiments.pass_by_value(1024)
    row = by_value.rows[0]
    untouched = exercises.compare("05", ..., by_value)
    assert "no prediction" in untouched and ("live on" if by_value.live else "recorded on") in untouched
    assert isinstance(lesson05.compare_prediction(..., by_value), str)
    if row["raised"]:
        right = exercises.compare("05", "refused", by_value)
        assert "Right" in right and f"{row['passed_argument_bytes']:,} bytes" in right
        assert "Right" not in exercises.compare("05", "runs", by_value)
        assert "Right" not in exercises.compare("05", "garbage", by_value)
    assert "one of" in exercises.compare("05", "maybe", by_value)


def test_the_prediction_follows_a_run_that_was_not_refused():
    by_value = experiments.pass_by_value(1024)
    quiet = dataclasses.replace(by_value, live=True, provenance={"gpu": "Some GPU"},
                                rows=[dict(by_value.rows[0], raised=False, error_type="", error="")])
    said = exercises.compare("05", "garbage", quiet)
    assert "Right" in said and "not refused" in said and "live on Some GPU" in said
    assert "Right" not in exercises.compare("05", "refused", quiet)


def test_a_kernel_without_extern_c_is_refused_in_replay_as_live():
    """The CPU backend finds any name; PyCUDA's get_function does not find a mangled one (issue 35's walk)."""
    source = exercises.solution("05", "saxpy").replace('extern "C" __global__', "__global__")
    assert not lesson05.has_c_linkage(source, "saxpy")
    assert lesson05.has_c_linkage('extern "C" {\n__global__ void saxpy(int n) { if (n) {} }\n}', "saxpy")
    assert not lesson05.has_c_linkage('// extern "C"\n__global__ void saxpy(int n) {}', "saxpy")


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

def _add(old: str, new: str, phrase: str, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("05", "add_on_gpu", "add_on_gpu", old, new), keys, phrase=phrase)


def _saxpy(old: str, new: str, phrase: str | None = None, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("05", "saxpy", "SAXPY_SOURCE", old, new), keys, variable="SAXPY_SOURCE", phrase=phrase)


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("05", "add_on_gpu"): [
        _add("blocks = (n + threads - 1) // threads", "blocks = max(n // threads, 1)", "Round up",
             ("(n + threads - 1) // threads",)),
        _add("d_a, d_b, d_c = (np.intp(h.base.get_device_pointer()) for h in (h_a, h_b, h_c))",
             "d_a, d_b, d_c = h_a, h_b, h_c", "device pointer"),
        _add("        drv.Context.synchronize()\n", "", "no synchronisation"),
        _add("np.int32(n)", "n", "np.int32"),
        _add("return h_c.copy()", "return h_c", "page-locked array itself"),
        _add("        for h in (h_a, h_b, h_c):\n            h.base.free()", "        pass", "still allocated")],
    ("05", "saxpy"): [
        _saxpy("blockIdx.x * blockDim.x + threadIdx.x", "threadIdx.x", "tells the blocks apart",
               ("blockIdx.x * blockDim.x + threadIdx.x",)),
        _saxpy("if (i < n) {", "{", keys=("blockIdx.x * blockDim.x + threadIdx.x",)),
        _saxpy("    if (i < n) {\n        y[i] = a * x[i] + y[i];\n    }", "    y[i] = a * x[i] + y[i];",
               "index is n or more"),
        _saxpy("y[i] = a * x[i] + y[i];", "y[i] = a * x[i];", "overwritten"),
        _saxpy("void saxpy(", "void saxpy_kernel(", "no kernel named saxpy"),
        _saxpy('extern "C" __global__', "__global__", 'without extern "C"'),
        _saxpy("y[i] = a * x[i] + y[i];", "y[i] = a * x[i] + y[i]", "did not build")],
}


def test_a_pycuda_allocation_counts_as_freed_only_when_free_already_ran_and_a_leak_is_freed_by_the_check():
    """PyCUDA's HostAllocation.free() raises on an allocation already freed (its own flag, no driver call): the
    check reads that, and frees a leaked allocation itself, so it leaves no pinned memory behind."""
    import numpy as np

    from helpers.exercises import lesson05

    class Allocation:           # PyCUDA's pagelocked_host_allocation, as src/cpp/cuda.hpp writes it
        def __init__(self) -> None:
            self.valid, self.frees = True, 0

        def free(self) -> None:
            if not self.valid:
                raise RuntimeError("pagelocked_host_allocation::free failed: invalid handle")
            self.valid, self.frees = False, self.frees + 1

    class Pinned(np.ndarray):
        pass

    freed_one, leaked_one = (np.zeros(4).view(Pinned) for _ in range(2))
    freed_one.base_allocation, leaked_one.base_allocation = Allocation(), Allocation()
    freed_one.base_allocation.free()
    Pinned.base = property(lambda self: self.base_allocation)
    assert lesson05._freed(freed_one) is True
    assert lesson05._freed(leaked_one) is False
    assert leaked_one.base_allocation.frees == 1 and not leaked_one.base_allocation.valid


def test_a_prediction_in_the_chinese_edition_s_words_counts_as_its_keyword():
    """Issue 35's walk: the Chinese comment glosses "refused" as 被拒绝; typing the gloss is that prediction, quoted or
    spaced, and a word that names no outcome still gets "one of"."""
    quiet = dataclasses.replace(experiments.pass_by_value(1024), live=True, provenance={"gpu": "Some GPU"},
                                rows=[dict(experiments.pass_by_value(1024).rows[0], raised=False)])
    assert "Right" in exercises.compare("05", " 垃圾地址 ", quiet)
    assert "Right" in exercises.compare("05", "“垃圾地址”", quiet) and "Right" in exercises.compare("05", "GARBAGE", quiet)
    refused = exercises.compare("05", "被拒绝", quiet)
    assert "'refused'" in refused and "Right" not in refused and "one of" not in refused
    assert "one of" in exercises.compare("05", "被拒", quiet)
