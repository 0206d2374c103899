"""Shared test setup: the real lab's fixtures, and no zmigrate thread outlives its test."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

pytest_plugins = ["lab.plugin"]

THREAD_PREFIX = "zmigrate"
THREAD_GRACE = 5.0


@pytest.fixture(autouse=True)
def _no_leaked_zmigrate_threads() -> Iterator[None]:
    """Fail a test that leaves a new thread named zmigrate* alive 5 s after it ended."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE
    while True:
        leaked = [t for t in threading.enumerate()
                  if t not in before and t.name.startswith(THREAD_PREFIX) and t.is_alive()]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if leaked:
        names = ", ".join(sorted(t.name for t in leaked))
        pytest.fail(f"threads still alive {THREAD_GRACE:.0f} s after the test: {names}",
                    pytrace=False)
