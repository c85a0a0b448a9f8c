"""Shared fixtures: the recorded data, and the gate for tests that need a live GPU."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from helpers import records
from helpers.mode import detect


# Libraries in the test session's kernel cache not built for this long are removed at the end of a session
# (they were built from an older cuda_cpu.h or compiler; a library still in use is rebuilt once).
TEST_CACHE_MAX_AGE_DAYS = 30


def session_cache_dir() -> str:
    """Where the test sessions build CPU kernels: ``$ZC_TEST_CPU_CACHE``, else a ``cpu-tests`` folder beside the
    learner's ``zero-copy-course/cpu`` user cache (kept between sessions; never the learner's own folder).
    ``ZC_TEST_CPU_CACHE=fresh`` builds into a new temporary folder, removed at the end (a cold run)."""
    override = os.environ.get("ZC_TEST_CPU_CACHE", "")
    if override:
        return override
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "zero-copy-course" / "cpu-tests")


def pytest_configure(config: pytest.Config) -> None:
    """Build CPU kernels, for the whole session (lesson notebooks and child processes too), into the tests' own
    private cache, so that no test reads or damages the user's cache. The folder is kept between sessions:
    a kernel is compiled once per source, header and compiler, not once per session. Tests that damage a cache
    or count builds use a folder of their own (tmp_path)."""
    # a lesson's check of a measured figure explains and carries on for learners; in the tests it fails
    os.environ.setdefault("ZC_STRICT_FIGURES", "1")
    if hasattr(config, "workerinput") and os.environ.get("ZC_CPU_CACHE"):
        return  # a pytest-xdist worker: the controller chose the folder, and its environment came with it
    from helpers.cpu.compiler import prepare_cache
    from helpers.cpu.errors import BuildCacheError

    folder = session_cache_dir()
    if folder != "fresh":
        try:
            prepare_cache(Path(folder))
        except BuildCacheError as exc:  # e.g. a read-only home: build into a temporary folder, as before
            config._zc_cpu_cache_note = f"{exc} Building into a temporary folder instead."  # type: ignore[attr-defined]
            folder = "fresh"
    if folder == "fresh":
        folder = tempfile.mkdtemp(prefix="zc-cpu-cache-")
        config._zc_cpu_cache_temporary = folder  # type: ignore[attr-defined]
    os.environ["ZC_CPU_CACHE"] = folder


# Tests whose cases make test may hand to different workers (pytest-xdist). Every other test file, and every
# lesson, runs whole and in order on one worker (--dist loadfile): a lesson's cells depend on the cells above.
CASES_APART = (
    "tests/test_gpu_live.py::test_rerunning_a_lesson_three_times_leaks_nothing[",
    "tests/test_i18n_outputs.py::test_a_chinese_lesson_shows_no_english_sentence[",
    "tests/test_hints.py::test_the_first_hint_asks_and_the_second_takes_a_smaller_step[",
    "tests/test_i18n_spacing.py::test_every_try_of_a_typical_wrong_answer_reads_without_a_space[",
)
# Work units that run a whole lesson: the longest, so the workers start on them (a long unit handed out last is
# the run's tail: live, the Chinese lessons' runs came last and took the run past five minutes).
WHOLE_LESSON_UNITS = (
    "lessons/",
    "tests/test_gpu_live.py::test_rerunning_a_lesson_three_times_leaks_nothing[",
    "tests/test_i18n_outputs.py::test_a_chinese_lesson_shows_no_english_sentence[",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadfile``: the units that run a whole lesson first, in collection order, then the other
    files, most tests first (pytest-xdist's own order). The sort is stable, so a lesson's cells keep their order.
    The workers sort too (the scheduler hands out their collection's order; a worker's own ``dist`` reads "no")."""
    worker = hasattr(config, "workerinput")
    if config.getoption("dist", None) != "loadfile" and not worker:   # None without pytest-xdist (-p no:xdist)
        return
    per_file = Counter(item.nodeid.split("::")[0] for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        if item.nodeid.startswith(WHOLE_LESSON_UNITS):
            return (0, 0)
        return (1, 0 if item.nodeid.startswith(CASES_APART) else -per_file[item.nodeid.split("::")[0]])

    items.sort(key=rank)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadfile``, except that each case of a test in ``CASES_APART`` is a work unit of its own, and the
    units go out in the order :func:`pytest_collection_modifyitems` gave (not re-sorted by their number of tests)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False

    class FilesWholeCasesApart(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(CASES_APART) else super()._split_scope(nodeid)

    return FilesWholeCasesApart(config, log)


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch):
    """Replay mode for this test, whatever the machine: a test of what a check or a sentence says from a record,
    not of a measurement (live, other work on the GPU moves the figures). The mode is probed again afterwards."""
    import matplotlib.pyplot as plt

    from helpers import mode

    monkeypatch.setenv("ZC_FORCE_REPLAY", "1")
    mode.detect(refresh=True)
    yield
    monkeypatch.undo()
    plt.close("all")    # the cells run drew figures that no notebook shows here
    mode.detect(refresh=True)


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [f"CPU kernel cache: {os.environ.get('ZC_CPU_CACHE')} (ZC_TEST_CPU_CACHE=fresh for a cold one)"]
    note = getattr(config, "_zc_cpu_cache_note", None)
    return lines + ([note] if note else [])


def pytest_unconfigure(config: pytest.Config) -> None:
    temporary = getattr(config, "_zc_cpu_cache_temporary", None)
    if temporary:
        shutil.rmtree(temporary, ignore_errors=True)
    elif not hasattr(config, "workerinput") and os.environ.get("ZC_CPU_CACHE"):  # the controller, after its workers
        _prune(Path(os.environ["ZC_CPU_CACHE"]), TEST_CACHE_MAX_AGE_DAYS * 86400)


def _prune(folder: Path, max_age_s: float) -> None:
    """Remove the libraries (with their checksum and lock files) built more than ``max_age_s`` ago."""
    now = time.time()
    for library in [*folder.glob("*.so"), *folder.glob("*.dylib")]:
        try:
            if now - library.stat().st_mtime > max_age_s:
                for path in (library, library.with_suffix(".sha256"), library.with_suffix(".lock")):
                    path.unlink(missing_ok=True)
        except OSError:
            pass


@pytest.fixture(autouse=True)
def first_try_at_every_exercise():
    """Each test starts with no wrong tries counted (helpers.exercises grades hints by the tries so far, per
    process), so a test sees the first hint unless it tries again itself."""
    from helpers import exercises

    exercises.reset_tries()
    yield
    exercises.reset_tries()


@pytest.fixture(scope="session")
def reference():
    """The newest recorded H200 record in data/ and its path."""
    return records.reference_record()


def live_or_skip() -> None:
    """Skip without a live GPU, unless ZC_REQUIRE_GPU=1 (make test-gpu), which makes it a failure."""
    mode = detect()
    if mode.live:
        return
    if os.environ.get("ZC_REQUIRE_GPU", "") not in ("", "0"):
        pytest.fail(f"ZC_REQUIRE_GPU is set but the course is in replay mode: {mode.reason}")
    pytest.skip(f"needs a live GPU: {mode.reason}")


@pytest.fixture
def live() -> None:
    live_or_skip()
