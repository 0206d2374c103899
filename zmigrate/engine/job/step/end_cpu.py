"""The CPU a step's own ends get on their hosts, read every PERIOD seconds while it streams and
emitted as `EndCpu` (one per side whose group runs one of the carrier's `cpu_ends`; for the ssh
transport's receive, the destination's sshd above it; for the relay, this process).

Each reading runs off the step's thread (the step's watch only ticks it), each host at its own
pace; a host that does not answer in time, or answers nothing it can read, is skipped until the
next.
"""

from __future__ import annotations

import platform
import threading
import time
from dataclasses import dataclass, field

from ...errors import ZmigrateError
from ...events import EndCpu, Side
from ...hosts import Host, Process
from ...readings import end_cpu
from .stream_watch import Emit

PERIOD = 5.0  # seconds between two readings: the live verdict's own period
# ... until a reading has something to compare with: the first verdict (5 s in) should have
# the ends' figures.
SOON = 1.0
# No reading in a step's first seconds: a short step needs no verdict, and its round trips
# stay few.
SETTLE = 2.0
READ_TIMEOUT = 10.0
# Read anyway when the receiver has said nothing of bytes this long (a carrier whose receiver
# does not report them).
UNSEEN_FLOW = 10.0


@dataclass(slots=True)
class _Side:
    side: Side
    label: str
    host: Host | None  # None: this process (the relay), read here
    proc: Process | None  # its group is read; None: the sshd above `mark`'s processes
    mark: str = ""
    last: end_cpu.Reading | None = None
    next: float | None = None  # when to read next; set by the first tick
    soon: bool = True  # no share of this side emitted yet: read again after SOON
    reading: threading.Lock = field(default_factory=threading.Lock)

    def script(self) -> str | None:
        """The reading's line; None once the followed process has ended."""
        if self.proc is None:
            # The sshd found by the last reading is read again without a search.
            found = next(iter(self.last.procs), None) if self.last is not None else None
            return end_cpu.marked_script(self.mark, found)
        pgid = self.proc.pgid_now()
        return None if pgid is None or self.proc.poll() is not None else end_cpu.script(pgid)


class EndCpuWatch:
    """Reads the `programs` in each followed process's group on its host, on `tick`, at most
    every PERIOD seconds. Each side keeps its own pace: a host slow to answer (short of CPU
    itself) does not hold back the other's readings."""

    def __init__(self, programs: tuple[str, ...], emit: Emit, t0: float) -> None:
        self.programs = programs
        self.emit = emit
        self.t0 = t0
        self._sides: list[_Side] = []
        self._start: float | None = None  # the first tick's time: the step's start

    def follow(self, side: Side, proc: Process) -> None:
        """Read `proc`'s group as `side`'s end."""
        if self.programs:
            self._sides.append(_Side(side, proc.host.label, proc.host, proc))

    def follow_ends(self, sender: Process, receiver: Process | None, host: Host,
                    mark: str | None, *, relayed: bool) -> None:
        """Read a step's ends: this process where it relays the stream (`relayed`: it takes
        the sender's output, so it reads as the send side); else the sender's group and the
        receiving end - `receiver`'s group where it is ours, else the sshd on `host` that
        carries the processes whose command line holds `mark` (the ssh transport's receive,
        started by the source's ssh)."""
        if relayed:
            if end_cpu.OWN in self.programs:
                self._sides.append(_Side(Side.SEND, relay_label(), None, None))
            return
        self.follow(Side.SEND, sender)
        if receiver is not None:
            self.follow(Side.RECEIVE, receiver)
        elif mark and self.programs:
            self._sides.append(_Side(Side.RECEIVE, host.label, host, None, mark))

    def tick(self, now: float, flowing: bool = True) -> None:
        """Start a side's reading once the step has run SETTLE seconds and its stream has
        flowed for SOON (`flowing`: bytes reached the receiver), then every PERIOD (SOON until
        it compared), unless one of that side is under way (each ends with its command's
        timeout): a side is never read twice at once."""
        if self._start is None:
            self._start = now
        if not flowing and now < self._start + UNSEEN_FLOW:
            # An end read before its stream moves reads idle: its share would water down the
            # first verdicts (an ssh that takes seconds to log in on a host short of CPU).
            return
        for s in self._sides:
            if s.next is None:
                s.next = max(self._start + SETTLE, now + SOON)
            if now < s.next or not s.reading.acquire(blocking=False):
                continue
            s.next = now + (SOON if s.soon else PERIOD)
            threading.Thread(target=self._read_side, args=(s,), name="zmigrate-end-cpu",
                             daemon=True).start()

    def _read_side(self, s: _Side) -> None:
        try:
            self._read(s)
        finally:
            s.reading.release()

    def _read(self, s: _Side) -> None:
        now = end_cpu.own() if s.host is None else _remote(s, s.host)
        if now is None:
            return
        before, s.last = s.last, now
        share = end_cpu.busiest(before, now, self.programs) if before is not None else None
        if share is not None:
            s.soon = False
            self.emit(EndCpu(time.monotonic() - self.t0, s.side, s.label, share.program,
                             round(share.on_cpu, 3), round(share.waiting, 3),
                             round(share.seconds, 2)))


def _remote(s: _Side, host: Host) -> end_cpu.Reading | None:
    """A side's reading on its host; None where it answered nothing (or its end is gone)."""
    line = s.script()
    if line is None:
        return None
    try:
        r = host.run(line, timeout=READ_TIMEOUT)
    except ZmigrateError:
        return None
    return end_cpu.parse(r.stdout, time.monotonic())


def relay_label() -> str:
    """How the verdict names the computer that relays: its name, said to be the relay (the
    job may run on a runner host, followed from elsewhere)."""
    return f"{platform.node() or 'this computer'} (the relay)"
