"""Keeping a job's copy in sync until the cut-over (`send -r --snapshot --detach
--keep-syncing 15m`): after the first copy the runner repeats the catch-up (a new snapshot,
each dataset's delta) every interval, unattended, until it is stopped or a final sync is asked
(`request_final`: the repetition stops, the final sync runs, the job ends with it).

The record keeps the first copy's events and the final sync's whole; each catch-up between is
one `Synced` event (its end, or its fault), and state.json's `extra["keep"]` the latest:
when the copy was last synced, the read-only window a final sync would take then, the fault.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from ..errors import CancelledError, InvalidNameError
from ..events import Event, Failed, Finished, Observer, Synced, TreePlanReady
from ..golive.readonly_window import duration
from .place import job_dir
from .state import Status

# Users keep in sync every minute at most often (each catch-up snapshots every dataset);
# tests lower the floor with this variable (seconds).
MIN_INTERVAL: Final = 60.0
MIN_INTERVAL_ENV: Final = "ZMIGRATE_KEEP_SYNC_MIN"
# Between catch-ups the final sync's window is predicted again this often (the source changes).
REPREDICT: Final = 300.0
POLL: Final = 0.5  # seconds between looks for a final sync's request while waiting
FINAL_FILE: Final = "final-sync"  # its presence asks the runner for the final sync
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_interval(text: str) -> float:
    """`30s`, `15m`, `1h`, `1d` (a bare number: seconds) in seconds, at least the floor."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smhd]?)\s*", text.lower())
    if m is None:
        raise InvalidNameError(f"the interval between catch-ups {text!r} is not a duration",
                               fix="give one like 30s, 15m or 1h")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    floor = float(os.environ.get(MIN_INTERVAL_ENV) or MIN_INTERVAL)
    if seconds < floor:
        raise InvalidNameError(f"the interval between catch-ups {text} is shorter than "
                               f"{floor:g} s",
                               fix=f"give {floor:g}s or longer (each catch-up snapshots and "
                               "checks every dataset)")
    return seconds


def interval_text(seconds: float) -> str:
    """`15m`, `1h`, `90s`: the interval as the user gives it."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


@dataclass(frozen=True, slots=True)
class Keep:
    """What a kept-in-sync job's state says (state.json's `extra["keep"]`)."""

    interval: float
    syncs: int = 0  # catch-ups that verified, the first copy included
    last_synced: float | None = None  # wall clock of the newest verified one
    window: float | None = None  # a final sync's read-only window as last predicted
    changed: int = 0  # the bytes that prediction counted
    window_at: float | None = None  # when it was predicted
    fault: str = ""  # the newest catch-up's failure ("" once one verifies again)
    fix: str = ""
    fault_at: float | None = None
    next_at: float | None = None
    final: bool = False  # the final sync was asked for (it runs, or ran)

    @classmethod
    def of(cls, s: Status) -> Keep | None:
        data = s.extra.get("keep")
        if not isinstance(data, dict):
            return None
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def describe(keep: Keep, now: float) -> str:
    """A kept-in-sync job as both faces say it, its fault first: `last synced 4 min ago; a
    final sync now would keep the source read-only for about 12 s`."""
    parts = []
    if keep.fault:
        ago = f" {duration(now - keep.fault_at)} ago" if keep.fault_at else ""
        parts.append(f"the last catch-up failed{ago}: {keep.fault}"
                     + (f" ({keep.fix})" if keep.fix else "")
                     + ("; the next one resumes it" if not keep.final else ""))
    if keep.final:
        parts.append("final sync running: the source is read-only until the copy is checked")
        return "; ".join(parts)
    if keep.last_synced is None:
        parts.append(f"first copy running, then kept in sync every "
                     f"{interval_text(keep.interval)}")
        return "; ".join(parts)
    parts.append(f"last synced {duration(max(0.0, now - keep.last_synced))} ago")
    if keep.window is not None:
        parts.append(f"a final sync now would keep the source read-only for about "
                     f"{duration(keep.window)}")
    else:
        parts.append("a final sync's read-only window is not known yet")
    if keep.next_at is not None:
        parts.append(f"next catch-up in {duration(max(0.0, keep.next_at - now))}")
    return "; ".join(parts)


def advance(s: Status, event: Event, now: float) -> dict[str, Any] | None:
    """state.json's new `extra` after `event` of a kept-in-sync job (None: unchanged)."""
    keep = Keep.of(s)
    if keep is None or not isinstance(event, Synced):
        return None
    changes: dict[str, Any] = {"next_at": now + event.next_in if event.next_in else None}
    if event.ok:
        changes |= {"syncs": keep.syncs + 1, "last_synced": now, "fault": "", "fix": "",
                    "fault_at": None}
        if event.window is not None:
            changes |= {"window": event.window, "changed": event.changed, "window_at": now}
    else:
        changes |= {"fault": event.error, "fix": event.fix, "fault_at": now}
    return {**s.extra, "keep": {**keep.to_json(), **changes}}


def holds(s: Status, event: Event) -> bool:
    """Whether `event` (a run's end) leaves the job running: a kept-in-sync job's first copy
    or catch-up, not its final sync."""
    keep = Keep.of(s)
    return keep is not None and not keep.final and isinstance(event, Finished) \
        and event.summary.verified


def request_final(job_id: str, pid: int | None) -> None:
    """Ask job `job_id`'s runner for the final sync: the file says so (read at its next
    look), the signal wakes it now."""
    (job_dir(job_id) / FINAL_FILE).touch()
    if pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGUSR1)


CatchUp = Callable[[bool, Observer], int]
"""Runs one catch-up (True: the final sync) with its events to the observer; exit status."""
Predict = Callable[[], tuple[float | None, int]]
"""A final sync's read-only window now (seconds, None: unknown) and the bytes changed."""


class Tap:
    """What one run said of its end: its summary or error, and the snapshot it sent."""

    def __init__(self, then: Observer | None = None) -> None:
        self.then = then
        self.finished: Finished | None = None
        self.failed: Failed | None = None
        self.snapshot = ""

    def __call__(self, event: Event) -> None:
        match event:
            case Finished():
                self.finished = event
            case Failed():
                self.failed = event
            case TreePlanReady() if not self.snapshot:
                self.snapshot = event.plan.snapshot
            case _:
                pass
        if self.then is not None:
            self.then(event)


class Loop:
    """The runner's repetition: the first copy (recorded whole), then a catch-up every
    `interval` (each recorded as its `Synced` end) until stopped or the final sync is asked,
    then the final sync (recorded whole). Runs on the runner's main thread: SIGUSR1's handler
    calls `ask_final` (a flag only: a handler must not take a lock its thread may hold),
    SIGTERM's KeyboardInterrupt stops it."""

    def __init__(self, writer: Any, interval: float, catch_up: CatchUp, predict: Predict,
                 clock: Callable[[], float] = time.time) -> None:
        self.writer = writer  # record.Writer (not imported: record imports this module)
        self.interval = interval
        self.catch_up = catch_up
        self.predict = predict
        self.clock = clock
        self.asked = False
        self.dir: Path = writer.dir

    def ask_final(self) -> None:
        self.asked = True

    def final_asked(self) -> bool:
        return self.asked or (self.dir / FINAL_FILE).exists()

    def run(self) -> int:
        """The whole job; its exit status (the final sync's, or a stop's)."""
        extra = {**self.writer.status.extra, "keep": Keep(self.interval).to_json()}
        self.writer.update(extra=extra)
        number, code = 0, 0
        try:
            while True:
                number += 1
                first = number == 1
                tap = Tap(self.writer if first else None)
                code = self.catch_up(False, tap)
                if self.writer.status.state.final:
                    return code  # the first copy failed, as an attended one does
                if self.writer.status.stop_requested:
                    return self._stopped(tap.snapshot)
                self._synced(number, tap)
                self._wait()
                if self.final_asked():
                    return self._final()
        except KeyboardInterrupt:
            return self._stopped("")

    def _synced(self, number: int, tap: Tap) -> None:
        """The catch-up's end into the record: its figures, or its fault (its partial receive
        kept: the next one resumes), and a final sync's window predicted now."""
        next_in = None if self.final_asked() else self.interval
        if tap.finished is not None and tap.finished.summary.verified:
            s = tap.finished.summary
            window, changed = self._predict()
            self.writer(Synced(number, True, s.bytes, s.seconds, tap.snapshot, window=window,
                               changed=changed, next_in=next_in))
            return
        error = tap.failed.error if tap.failed is not None else None
        self.writer(Synced(number, False, snapshot=tap.snapshot,
                           error=error.message if error else "the copy did not verify",
                           fix=(error.fix or "") if error else "", next_in=next_in))

    def _predict(self) -> tuple[float | None, int]:
        try:
            return self.predict()
        except Exception:  # noqa: BLE001 - a prediction that fails leaves the figure unknown
            return None, 0

    def _wait(self) -> None:
        """Until the next catch-up or the final sync's request; the window predicted again
        every REPREDICT seconds meanwhile."""
        due = self.clock() + self.interval
        predict_at = self.clock() + REPREDICT
        while not self.final_asked() and self.clock() < due:
            time.sleep(POLL)
            if self.clock() < predict_at or self.clock() >= due:
                continue
            predict_at = self.clock() + REPREDICT
            window, changed = self._predict()
            keep = Keep.of(self.writer.status)
            if keep is not None and window is not None:
                new = {**keep.to_json(), "window": window, "changed": changed,
                       "window_at": self.clock()}
                self.writer.update(extra={**self.writer.status.extra, "keep": new})

    def _final(self) -> int:
        """Stop repeating; the final sync, recorded whole: its end is the job's."""
        keep = Keep.of(self.writer.status)
        if keep is not None:
            new = {**keep.to_json(), "final": True, "next_at": None}
            self.writer.update(extra={**self.writer.status.extra, "keep": new})
        with contextlib.suppress(OSError):
            (self.dir / FINAL_FILE).unlink()
        return self.catch_up(True, self.writer)

    def _stopped(self, snapshot: str) -> int:
        where = f"; the copy holds @{snapshot}" if snapshot else ""
        if not self.writer.status.state.final:
            self.writer(Failed(CancelledError(f"stopped while keeping the copy in sync{where}"),
                               True))
        return 130


def again_argv(argv: list[str], source: str | None = None, *, final: bool = False,
               keep_every: str | None = None) -> list[str]:
    """A tree job's `send` arguments for the next run of the same tree (a face repeating a
    job it did not start: a re-attached one): a new snapshot (`--snapshot` for the source's
    `@SNAP`), with `--final`, or kept in sync every `keep_every`. `source`: the source
    argument as given (the request's), else the one after `-r`."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--keep-syncing", "--final", "--snapshot") or a.startswith("--keep-syncing="):
            skip = a == "--keep-syncing"
            continue
        out.append(a)
    if "-r" not in out and "--recursive" not in out:
        raise InvalidNameError("only a tree's job can be synced again from its record",
                               fix="start the transfer again from the first page")
    at = out.index(source) if source in out else \
        out.index("-r" if "-r" in out else "--recursive") + 1
    out[at] = out[at].partition("@")[0]  # the source: its tree's root, no snapshot
    out.append("--snapshot")
    out += ["--final"] if final else []
    out += ["--keep-syncing", keep_every] if keep_every else []
    return out
