"""How the doctor runs one stage: its pipelines spawned (tagged with the run id), their
mbuffers followed, stopped after a bounded time, and the CPU each host spent meanwhile."""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass
from typing import Any

from .. import cmdline
from ..errors import ZmigrateError
from ..findings import Note, NoteKind
from ..hosts import Host, Process
from ..job.step import await_listener, port_holder, stop_processes, taken_error
from ..readings.mbuffer import LineSplitter, parse_status, parse_summary
from ..transports.listener import (
    CONNECTED_MARK,
    LISTENING_MARK,
    UNCHECKED_WORD,
    parse_taken,
    with_readiness_probe,
)
from ..units import KiB, MiB, size_arg
from .cpu import CPU_SCRIPT, CpuSnapshot, cpu_between, group_seconds, parse_cpu
from .results import Emit, StageResult, StageStarted

BLOCK = 128 * KiB
BUFFER = 64 * MiB  # enough to smooth a stage; the doctor measures rates, not buffering
DOCTOR_ENV = "ZMIGRATE_DOCTOR"
SUMMARY_WAIT = 5.0  # seconds to wait for mbuffer's summary line after it exited


def mbuffer_argv(*extra: str) -> list[str]:
    """The doctor's mbuffer (its block and buffer) with `extra` arguments."""
    return ["mbuffer", "-s", size_arg(BLOCK), "-m", size_arg(BUFFER), *extra]


class Meter:
    """Follows one mbuffer's stderr: (arrival time, total) of each status line, the summary."""

    def __init__(self) -> None:
        self._split = LineSplitter()
        self._lock = threading.Lock()
        self.points: list[tuple[float, int]] = []
        self.summary_rate: float | None = None
        self.summary_total: int | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=20)
        self._early: str | None = None  # a status line counted before its separator came
        # A listener's readiness probe (transports/listener.py) has its answer: ours listens
        # (`unchecked` where no tool names a socket's process), or `taken` by someone else.
        self.settled = threading.Event()
        self.unchecked = False
        self.taken: tuple[str, str] | None = None

    def _probe_said(self, text: str) -> bool:
        """Whether `text` is the readiness probe's line (and take what it says)."""
        if text in (LISTENING_MARK, f"{LISTENING_MARK} {UNCHECKED_WORD}"):
            self.unchecked = text != LISTENING_MARK
            self.settled.set()
            return True
        taken = parse_taken(text)
        if taken is not None:
            self.taken = taken
            self.settled.set()
            return True
        return text == CONNECTED_MARK

    def feed(self, data: bytes) -> None:
        now = time.monotonic()
        for line in self._split.feed(data):
            if self._probe_said(line.strip()):
                continue
            status = parse_status(line)
            with self._lock:
                if status is not None:
                    if line != self._early:
                        self.points.append((now, status.total))
                    self._early = None
                    continue
                summary = parse_summary(line)
                if summary is not None:
                    self.summary_rate, self.summary_total = summary.rate, summary.total
                elif line.strip() and "No controlling terminal" not in line:
                    self.tail.append(line.strip())
        # A status line is whole once it says "% full": taken as it comes, not half a second
        # later with the next one (a short stage may end before that).
        pending = self._split.peek()
        status = parse_status(pending) if pending.rstrip().endswith("full") else None
        if status is not None and pending != self._early:
            with self._lock:
                self.points.append((now, status.total))
                self._early = pending

    @property
    def total(self) -> int:
        with self._lock:
            if self.summary_total is not None:
                return self.summary_total
            return self.points[-1][1] if self.points else 0

    def rate(self, started: float, completed: bool) -> float | None:
        """Bytes/s: mbuffer's own average when it ran to the end, else the slope of its totals
        from the first status line after start-up: not the first line, and not before the
        first bytes went out (a starved ssh can take a second to log in while mbuffer waits)."""
        with self._lock:
            if completed and self.summary_rate is not None:
                return self.summary_rate
            flowing = next((i for i, (_, total) in enumerate(self.points) if total > 0), 0)
            first = max(1, flowing)
            pts = self.points[first:] if len(self.points) - first >= 2 else self.points
            if len(pts) >= 2 and pts[-1][0] - pts[0][0] > 0.2:
                return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
            if pts and pts[-1][0] > started:
                return pts[-1][1] / (pts[-1][0] - started)
            return None

    def error(self) -> str:
        lines = [x for x in self.tail if not x.startswith("summary:")]
        return "; ".join(lines[-3:]) if lines else "no error message"


@dataclass
class Spawned:
    host: Host
    proc: Process
    meter: Meter


class Measurer:
    """Runs a stage's pipelines on the two hosts for a bounded time and reads its rate."""

    def __init__(self, src: Host, dst: Host, seconds: float, run_id: str, emit: Emit,
                 cancelled: threading.Event) -> None:
        self.src, self.dst, self.seconds, self.run_id = src, dst, seconds, run_id
        self._emit, self.cancelled = emit, cancelled
        self._lock = threading.Lock()
        self._stopping = threading.Lock()
        self._live: list[Spawned] = []

    def line(self, pipeline: str) -> str:
        """The pipeline with our run id in its environment, so any leftover can be found."""
        return cmdline.join(["env", f"{DOCTOR_ENV}={self.run_id}", "sh", "-c", pipeline])

    def spawn(self, host: Host, pipeline: str) -> Spawned:
        meter = Meter()
        proc = host.spawn(self.line(pipeline), on_stderr=meter.feed, on_stdout=meter.feed)
        sp = Spawned(host, proc, meter)
        with self._lock:
            self._live.append(sp)
        if self.cancelled.is_set():  # cancel() may have run between the check and the spawn
            self.stop_all()
        return sp

    def stop_all(self) -> None:
        """TERM every live process group, then KILL what is left (senders first).

        A second caller (cancel() racing the stage's own stop) waits until the first is done,
        so "stopped" always means gone.
        """
        with self._stopping:
            with self._lock:
                live, self._live = list(self._live), []
            stop_processes([sp.proc for sp in reversed(live)])

    def cpu(self) -> dict[str, CpuSnapshot | None]:
        out: dict[str, CpuSnapshot | None] = {}
        for host in self.hosts():
            try:
                r = host.run(CPU_SCRIPT, timeout=30)
                out[host.label] = parse_cpu(r.stdout, time.monotonic())
            except ZmigrateError:
                out[host.label] = None
        return out

    def hosts(self) -> list[Host]:
        return [self.src] if self.dst is self.src else [self.src, self.dst]

    def measure(self, name: str, title: str, in_path: bool, start: list[tuple[Host, str]],
                 measured: int, *, listen_port: int | None = None,
                 details: dict[str, Any] | None = None, seconds: float | None = None,
                 keep_output: bool = False) -> StageResult:
        """Run the pipelines `start` (the first one a listener when `listen_port` is given) for
        `seconds` (the doctor's by default), or until the measured one ends, and read its
        rate."""
        limit = seconds or self.seconds
        self._emit(StageStarted(name, title, self.seconds))
        details = dict(details or {})
        details["commands"] = [{"host": h.label, "command": line} for h, line in start]
        before = self.cpu()
        began = time.monotonic()
        spawned: list[Spawned] = []
        error: str | None = None
        completed = False
        after: dict[str, CpuSnapshot | None] = {}
        elapsed: float | None = None
        try:
            for i, (host, line) in enumerate(start):
                if i == 0 and listen_port is not None:
                    line = with_readiness_probe(line, listen_port)  # ours or nothing
                spawned.append(self.spawn(host, line))
                if i == 0 and listen_port is not None:
                    error = self.wait_listening(spawned[0], listen_port)
                    if error:
                        break
            began = time.monotonic()
            if error is None and len(spawned) > measured:
                error, completed = self._follow(spawned, measured, began + limit, listen_port)
            elapsed = time.monotonic() - began
            if not self.cancelled.is_set():
                after = self.cpu()  # while the processes still run, so they are counted
        finally:
            if elapsed is None:
                elapsed = time.monotonic() - began
            self.stop_all()
        if self.cancelled.is_set():
            error = error or "cancelled"
        meter = spawned[measured].meter if len(spawned) > measured else Meter()
        if completed:
            # Its exit status can come before the last of its stderr: wait for the summary.
            deadline = time.monotonic() + SUMMARY_WAIT
            while meter.summary_rate is None and time.monotonic() < deadline:
                time.sleep(0.05)
        rate = None if error else meter.rate(began, completed)
        if rate is None and error is None:
            error = "mbuffer reported no figures: " + meter.error()
        cpu = tuple(cpu_between(h.label, before.get(h.label), after.get(h.label))
                    for h in self.hosts())
        own = {h.label: group_seconds(before.get(h.label), after.get(h.label),
                                      {sp.proc.pgid for sp in spawned
                                       if sp.host is h and sp.proc.pgid is not None})
               for h in self.hosts()}
        if any(v is not None for v in own.values()):
            # The stage's own processes' CPU on each host (its cost a byte: over `bytes`).
            details["own_cpu"] = own
        notes = (Note(NoteKind.RAN_TO_END, {"bytes": meter.total}),) if completed else ()
        if keep_output:
            details["output"] = list(meter.tail)[-12:]
        return StageResult(name, title, rate, elapsed, meter.total, in_path, cpu, notes, error,
                           details=details)

    def _follow(self, spawned: list[Spawned], measured: int, until: float,
                listen_port: int | None) -> tuple[str | None, bool]:
        """Watch a stage's processes until `until`, the measured one's end, or the first that
        fails: (why it failed, whether the measured one ran to its end)."""
        while not self.cancelled.is_set() and time.monotonic() < until:
            statuses = [sp.proc.poll() for sp in spawned]
            if statuses[measured] is not None:
                if statuses[measured] == 0:
                    return None, True
                return _why(spawned, measured, listen_port, f"exit {statuses[measured]}"), False
            failed = next((i for i, st in enumerate(statuses) if st not in (None, 0)), None)
            if failed is not None:
                return _why(spawned, failed, listen_port, spawned[failed].host.label), False
            self.cancelled.wait(0.1)
        return None, False

    def wait_listening(self, listener: Spawned, port: int) -> str | None:
        """None once the listener's own probe says it holds `port` (as a job's listener is
        checked: a port someone else holds is theirs, and the sender never starts); else why
        not."""
        meter = listener.meter
        state = await_listener(meter.settled.wait, listener.proc, self.cancelled, poll=0.01,
                               grace=0.5)
        taken = meter.taken
        if taken is None and state == "stopped":
            # Its probe had no time to say who holds the port (the listener could not bind it).
            taken = port_holder(listener.host, port)
        if taken is not None:
            return taken_error(port, listener.host.label, *taken).message
        if state == "stopped":
            return f"the listener stopped: {meter.error()}"
        return f"nothing listened on port {port}" if state == "timeout" else None


def _why(spawned: list[Spawned], failed: int, listen_port: int | None, who: str) -> str:
    """Why a stage's process failed, as `who: what it said`; where it is the listener that
    could not take its port back after a stranger's failed handshake, the process that holds
    the port now (as a job names it)."""
    meter = spawned[failed].meter
    bind = any("address already in use" in line.lower() for line in meter.tail)
    if failed == 0 and listen_port is not None and bind:
        taken = port_holder(spawned[0].host, listen_port)
        if taken is not None:
            return taken_error(listen_port, spawned[0].host.label, *taken, relisten=True).message
    return f"{who}: {meter.error()}"
