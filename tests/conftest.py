"""Shared test setup: the real lab's fixtures, and no thread a test starts outlives it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

pytest_plugins = ["lab.plugin"]

THREAD_GRACE = 5.0
# Long-lived threads that libraries start once per process and keep on purpose (not leaks);
# each named with why. Every other new thread must be gone THREAD_GRACE s after its test.
LIBRARY_THREADS: dict[str, str] = {}


def _foreign(thread: threading.Thread) -> bool:
    """A thread Python did not start: Qt's QThreadPool workers (gui/threads/tasks.py) show up as
    "Dummy-N" once they run Python code, and Python is never told when they end (Qt keeps them
    idle up to the pool's expiry timeout). Only those are let through."""
    return type(thread).__name__ == "_DummyThread"


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves any new thread alive 5 s after it ended."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE
    while True:
        leaked = [t for t in threading.enumerate()
                  if t not in before and t.is_alive() and t.name not in LIBRARY_THREADS
                  and not _foreign(t)]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if leaked:
        names = ", ".join(sorted(t.name for t in leaked))
        pytest.fail(f"threads still alive {THREAD_GRACE:.0f} s after the test: {names}",
                    pytrace=False)
