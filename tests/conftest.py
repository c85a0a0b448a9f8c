"""Shared fixtures: the recorded data, and the gate for tests that need a live GPU."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from helpers import records
from helpers.mode import detect


def pytest_configure(config: pytest.Config) -> None:
    """Build CPU kernels into a fresh private folder for the whole session (lesson notebooks too),
    so that no test reads or damages the user's cache."""
    config._zc_cpu_cache = tempfile.mkdtemp(prefix="zc-cpu-cache-")  # type: ignore[attr-defined]
    os.environ["ZC_CPU_CACHE"] = config._zc_cpu_cache  # type: ignore[attr-defined]
    # a lesson's check of a measured figure explains and carries on for learners; in the tests it fails
    os.environ.setdefault("ZC_STRICT_FIGURES", "1")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, "_zc_cpu_cache", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


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
