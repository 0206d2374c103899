"""A job's record directory: `request.json` (what to run), `events.jsonl` (every event as it
came, one JSON line each, flushed per line; old samples folded by `decimate`) and `state.json`.

`Writer` is the runner's observer; `read_events` and `Follower` read the record back.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TextIO

from .. import event_json
from ..errors import CancelledError
from ..events import Event, Failed, Finished, Progress, Sample, Verdict
from . import decimate, keep, state
from .state import JobState, Outcome, Status

EVENTS: Final = "events.jsonl"
STATE: Final = "state.json"
REQUEST: Final = "request.json"
# state.json is rewritten at most this often while events come (and at every change of state).
STATE_EVERY: Final = 1.0
# The file is compacted once this many periodic lines came since the last compaction.
COMPACT_EVERY: Final = 5000


def periodic(event: Event) -> str | None:
    """The key of an event that comes again and again (samples, progress, running verdicts):
    the kinds `decimate` may fold; None for the others."""
    match event:
        case Sample():
            return f"sample/{event.side.value}/{event.dataset}"
        case Progress():
            return "progress"
        case Verdict() if not event.final:
            return f"verdict/{event.dataset}"
    return None


def encode(seq: int, event: Event, at: float) -> str:
    return json.dumps({"seq": seq, "at": round(at, 3), **event_json.to_json(event)},
                      separators=(",", ":"))


class Writer:
    """The runner's observer: appends each event to events.jsonl and keeps state.json."""

    def __init__(self, directory: Path, status: Status, *,
                 clock: Callable[[], float] = time.time,
                 compact_every: int = COMPACT_EVERY) -> None:
        self.dir = directory
        self.status = status
        self.clock = clock
        self.compact_every = compact_every
        self._lock = threading.Lock()
        self._lines: list[decimate.Line] = []
        self._since_compact = 0
        self._seq = 0
        self._last_t = 0.0
        self._state_at = 0.0
        self._file = open(directory / EVENTS, "a", encoding="utf-8")  # noqa: SIM115
        self.save()

    def __call__(self, event: Event) -> None:
        with self._lock:
            now = self.clock()
            self._seq += 1
            text = encode(self._seq, event, now)
            # Folded by the record's own clock: a tree's datasets each count their samples'
            # `t` from their own start.
            key = periodic(event)
            t = now - self.status.started if key is not None else None
            if t is not None:
                self._last_t = max(self._last_t, t)
                self._since_compact += 1
            self._lines.append(decimate.Line(self._seq, t, key, text))
            self._file.write(text + "\n")
            self._file.flush()
            self.status = _advance(self.status, event, now)
            if self._since_compact >= self.compact_every:
                self._compact()
            if self.status.state.final or now - self._state_at >= STATE_EVERY:
                self._save(now)

    def _compact(self) -> None:
        """Rewrite events.jsonl with old periodic lines folded (a follower notices the new
        file and goes on after the last sequence number it read)."""
        self._lines = decimate.compact(self._lines, self._last_t)
        self._since_compact = 0
        tmp = self.dir / f".{EVENTS}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(line.text + "\n" for line in self._lines)
        self._file.close()
        os.replace(tmp, self.dir / EVENTS)
        self._file = open(self.dir / EVENTS, "a", encoding="utf-8")  # noqa: SIM115

    def update(self, **changes: Any) -> None:
        """Change state.json's fields now (the pid, a stop request, the final state)."""
        with self._lock:
            self.status = replace(self.status, **changes)
            self._save(self.clock())

    def save(self) -> None:
        with self._lock:
            self._save(self.clock())

    def _save(self, now: float) -> None:
        self._state_at = now
        state.write(self.dir / STATE, self.status)

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _advance(s: Status, event: Event, now: float) -> Status:
    """The status after `event`."""
    s = replace(s, last_event=now)
    if keep.holds(s, event):
        return s  # a kept-in-sync job's copy: it goes on (its Synced event follows)
    kept = keep.advance(s, event, now)
    if kept is not None:
        return replace(s, extra=kept)
    match event:
        case Progress():
            return replace(s, done=event.done, total=event.total, rate=event.rate,
                           eta=event.eta, elapsed=event.elapsed)
        case Finished(summary=summary):
            ok = summary.verified
            return replace(s, state=JobState.FINISHED if ok else JobState.FAILED,
                           done=summary.bytes, elapsed=summary.seconds, eta=0.0,
                           outcome=Outcome(ok, "" if ok else "the copy did not verify",
                                           bytes=summary.bytes, seconds=summary.seconds))
        case Failed(error=error, cancelled=cancelled):
            stopped = cancelled or isinstance(error, CancelledError) or s.stop_requested
            return replace(s, state=JobState.STOPPED if stopped else JobState.FAILED,
                           outcome=Outcome(False, error.message, error.fix or "",
                                           cancelled=stopped, bytes=s.done,
                                           seconds=s.elapsed))
    return s


# -- reading --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Recorded:
    """One event read back, with its sequence number and wall-clock time."""

    seq: int
    at: float
    event: Event


def decode(text: str) -> Recorded:
    data = json.loads(text)
    return Recorded(int(data["seq"]), float(data["at"]),
                    event_json.from_json({"kind": data["kind"], "data": data["data"]}))


def read_events(directory: Path) -> list[Recorded]:
    """Every event of the record so far."""
    try:
        text = (directory / EVENTS).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [decode(line) for line in text.split("\n")[:-1] if line]


class Follower:
    """Reads a record's events from the first, then those that come (`poll`), across the
    writer's compactions; a line still being written waits for its newline.

    It holds the file it reads open: a compaction puts a new file in its place, and the old
    one's inode can then not be reused by the next (which would hide the change)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / EVENTS
        self.last_seq = 0
        self._file: TextIO | None = None
        self._partial = ""

    def poll(self) -> list[Recorded]:
        """The events written since the last poll."""
        out: list[Recorded] = []
        while True:
            if self._file is None:
                try:
                    self._file = open(self.path, encoding="utf-8")  # noqa: SIM115
                except FileNotFoundError:
                    return out
                self._partial = ""
            out += self._take(self._file.read())
            try:
                replaced = os.stat(self.path).st_ino != os.fstat(self._file.fileno()).st_ino
            except FileNotFoundError:
                replaced = False
            if not replaced:
                return out
            self._file.close()  # compacted: go on in the new file after the last seq read
            self._file = None

    def _take(self, chunk: str) -> list[Recorded]:
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()
        out = []
        for line in lines:
            if not line:
                continue
            rec = decode(line)
            if rec.seq > self.last_seq:
                self.last_seq = rec.seq
                out.append(rec)
        return out

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def follow(directory: Path, alive: Callable[[], bool], interval: float = 0.25,
           stop: Callable[[], bool] = lambda: False) -> Iterator[Recorded]:
    """Every event of the job from the first, as it comes, until its state is final (or its
    runner is gone) and everything written is read."""
    f = Follower(directory)
    try:
        while True:
            yield from f.poll()
            s = state.read(directory / STATE)
            if s.state.final or not alive() or stop():
                yield from f.poll()
                return
            time.sleep(interval)
    finally:
        f.close()
