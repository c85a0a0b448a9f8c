"""Shared fixtures: the recorded data, and the gate for tests that need a live GPU."""

from __future__ import annotations

import os

import pytest

from helpers import records
from helpers.mode import detect


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
