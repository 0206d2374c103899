"""The CPU a step's own ends get on their hosts, read every PERIOD seconds while it streams and
emitted as `EndCpu` (one per side whose group runs one of the carrier's `cpu_ends`).

Each reading runs off the step's thread (the step's watch only ticks it), both hosts at once;
a host that does not answer in time, or answers nothing (no /proc), is skipped until the next.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..errors import ZmigrateError
from ..events import EndCpu, Side
from ..hosts import Process
from ..hosts.at_once import both
from ..readings import end_cpu
from .stream_watch import Emit

PERIOD = 5.0  # seconds between two readings: the live verdict's own period
# ... until a reading has something to compare with: the first verdict (5 s in) should have
# the ends' figures.
SOON = 1.0
# No reading in a step's first seconds: a short step needs no verdict, and its round trips
# stay few.
SETTLE = 2.0
READ_TIMEOUT = 10.0


@dataclass(slots=True)
class _Side:
    side: Side
    proc: Process
    last: end_cpu.Reading | None = None


class EndCpuWatch:
    """Reads the `programs` in each followed process's group on its host, on `tick`, at most
    every PERIOD seconds."""

    def __init__(self, programs: tuple[str, ...], emit: Emit, t0: float) -> None:
        self.programs = programs
        self.emit = emit
        self.t0 = t0
        self._sides: list[_Side] = []
        self._next: float | None = None  # set by the first tick
        self._soon = True  # no end's share emitted yet: read again after SOON
        self._reading = threading.Lock()

    def follow(self, side: Side, proc: Process) -> None:
        """Read `proc`'s group as `side`'s end."""
        if self.programs:
            self._sides.append(_Side(side, proc))

    def tick(self, now: float) -> None:
        """Start a reading once the step has run SETTLE seconds, then every PERIOD (SOON until
        one compared), unless one is under way."""
        if self._next is None:
            self._next = now + SETTLE
        if not self._sides or now < self._next or not self._reading.acquire(blocking=False):
            return
        self._next = now + (SOON if self._soon else PERIOD)
        threading.Thread(target=self._read_all, name="zmigrate-end-cpu", daemon=True).start()

    def _read_all(self) -> None:
        # Both sides at once; each ends with its command's timeout, and the next reading waits
        # for both: one side is never read twice at once.
        try:
            first, *other = self._sides
            if other:
                both(lambda: self._read(first), lambda: self._read(other[0]))
            else:
                self._read(first)
        finally:
            self._reading.release()

    def _read(self, s: _Side) -> None:
        pgid = s.proc.pgid_now()
        if pgid is None or s.proc.poll() is not None:
            return
        try:
            r = s.proc.host.run(end_cpu.script(pgid), timeout=READ_TIMEOUT)
        except ZmigrateError:
            return
        now = end_cpu.parse(r.stdout)
        if now is None:
            return
        before, s.last = s.last, now
        share = end_cpu.busiest(before, now, self.programs) if before is not None else None
        if share is not None:
            self._soon = False
            self.emit(EndCpu(time.monotonic() - self.t0, s.side, s.proc.host.label, share.program,
                             round(share.on_cpu, 3), round(share.waiting, 3),
                             round(share.seconds, 2)))
