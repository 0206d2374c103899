"""A `zmigrate send --json` run followed as it goes: each event with the moment it came, so a
test can act mid-transfer (cut a link, stop a process) and time what the job says after."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable

from .util import Event, start


class Send:
    """`zmigrate send ... --json` in the background; `events` as (monotonic time, event)."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.proc = start(env, "send", *args, "--json", "--no-history")
        self.events: list[tuple[float, Event]] = []
        self.stderr = ""
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._errors = threading.Thread(target=self._read_stderr, daemon=True)
        self._errors.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                with self._cond:
                    self.events.append((time.monotonic(), json.loads(line)))
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def wait_for(self, wanted: Callable[[Event], bool], timeout: float
                 ) -> tuple[float, Event]:
        """The first event (and when it came) for which `wanted` holds; AssertionError after
        `timeout` seconds or when the run ended without one."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for at, event in self.events:
                    if wanted(event):
                        return at, event
                left = deadline - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    verdicts = [e for _, e in self.events if e["event"] == "verdict"]
                    raise AssertionError(f"no such event within {timeout:.0f} s; last events: "
                                         f"{[e for _, e in self.events[-3:]]}; verdicts: "
                                         f"{verdicts[-4:]}; stderr: "
                                         f"{self.stderr[-2000:]}")
                self._cond.wait(min(left, 1.0))

    def between(self, start: float, end: float, kind: str) -> list[Event]:
        with self._cond:
            return [e for at, e in self.events if start <= at <= end and e["event"] == kind]

    def of(self, kind: str) -> list[Event]:
        with self._cond:
            return [e for _, e in self.events if e["event"] == kind]

    def finish(self, timeout: float) -> int:
        """The exit status once the run ends (killed after `timeout` s: a test failure)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise
        finally:
            self._reader.join(10)
            self._errors.join(10)


def stalls(kind: str = "stalled") -> Callable[[Event], bool]:
    """A verdict event whose finding is of `kind` (stalled, stall_cleared)."""
    return lambda e: e["event"] == "verdict" and e["finding"]["kind"] == kind


def progress_past(nbytes: int) -> Callable[[Event], bool]:
    return lambda e: e["event"] == "progress" and e["done"] > nbytes


def honest_eta(progress: list[Event]) -> list[Event]:
    """The progress events whose ETA is absurd (beyond 100x the time so far): none, in short."""
    return [e for e in progress
            if e["eta"] is not None and e["eta"] > 100 * max(e["elapsed"], 1.0)]
