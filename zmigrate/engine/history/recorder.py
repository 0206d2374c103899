"""The Recorder: a job observer that downsamples live samples into the history store.

It writes the job row at PlanReady, samples in batches every `FLUSH_INTERVAL` seconds from its
own thread (so a crash loses at most the last few seconds), and the outcome at Finished/Failed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final, assert_never

from ..events import (
    DatasetState,
    EndCpu,
    Event,
    Failed,
    Finished,
    LogLine,
    OutOfTouch,
    PlanReady,
    Progress,
    Resent,
    Sample,
    StageChanged,
    StageResult,
    StageStarted,
    Stalled,
    Synced,
    TreePlanReady,
    Verdict,
    Wire,
    json_default,
)
from .store import History, HistoryError

log = logging.getLogger(__name__)

# How often the recorder commits buffered samples and touches the heartbeat.
FLUSH_INTERVAL: Final = 2.0
# Every sample is kept for this long (2 Hz per side: 1200 rows for both sides).
FULL_RESOLUTION_SECONDS: Final = 300.0
# Past that, a bucket is max(MIN_BUCKET_SECONDS, elapsed / BUCKET_DIVISOR) wide: about
# BUCKET_DIVISOR * ln(t2 / t1) rows per side between two times, so a week is ~13k rows in all.
MIN_BUCKET_SECONDS: Final = 5.0
BUCKET_DIVISOR: Final = 1000.0
# Hard ceiling per job; past it, samples are no longer stored (the job row says so).
MAX_SAMPLE_ROWS: Final = 25_000


# -- writing --------------------------------------------------------------------------------------
def bucket_width(t: float) -> float:
    """How many seconds of samples one stored row covers at `t` seconds into a job (0: each)."""
    if t < FULL_RESOLUTION_SECONDS:
        return 0.0
    return max(MIN_BUCKET_SECONDS, t / BUCKET_DIVISOR)


@dataclass(slots=True)
class _Bucket:
    """Samples of one side being folded into one row; `rowid` once (partly) written."""

    side: str
    start: float
    width: float
    n: int = 0
    in_sum: float = 0.0
    out_sum: float = 0.0
    fill_sum: float = 0.0
    fill_min: float = float("inf")
    fill_max: float = float("-inf")
    t: float = 0.0
    total: int = 0
    rowid: int | None = None
    dirty: bool = False

    def add(self, s: Sample) -> None:
        self.n += 1
        self.in_sum += s.in_rate
        self.out_sum += s.out_rate
        self.fill_sum += s.fill
        self.fill_min = min(self.fill_min, s.fill)
        self.fill_max = max(self.fill_max, s.fill)
        self.t = s.t
        self.total = s.total
        self.dirty = True

    def covers(self, t: float) -> bool:
        return t < self.start + self.width

    def values(self) -> tuple[float, str, float, float, int, float, float, float, int]:
        n = max(self.n, 1)
        return (self.t, self.side, self.in_sum / n, self.out_sum / n, self.total,
                self.fill_sum / n, self.fill_min, self.fill_max, self.n)


def _dumps(obj: object) -> str:
    return json.dumps(obj, default=json_default, sort_keys=True)


@dataclass(slots=True)
class _Pending:
    """What the next flush writes."""

    closed: list[_Bucket] = field(default_factory=list)
    bytes: int | None = None
    verdict: tuple[str | None, str | None, str | None] | None = None


def _job_row(event: PlanReady | TreePlanReady, now: float) -> tuple[object, ...]:
    """The jobs row of a job's plan (without pid and hostname)."""
    match event:
        case TreePlanReady(plan=tree):
            # One job row for the tree; its datasets' outcomes land in the summary.
            return (secrets.token_hex(4), now, now, tree.source_host, tree.destination_host,
                    f"{tree.root}@{tree.snapshot}", tree.destination, "tree", None,
                    tree.transport, None, tree.total, _dumps(tree.to_json()),
                    _dumps([{"host": h, "command": c} for h, c in tree.commands()]),
                    tree.describe())
        case PlanReady(plan=plan):
            return (plan.job_id, now, now, plan.source, plan.destination,
                    plan.source_snapshot, plan.destination_dataset, plan.kind, plan.base,
                    plan.transport.value, plan.port, plan.estimate,
                    _dumps(asdict(plan.options)),
                    _dumps([{"host": h, "command": c} for h, c in plan.commands()]),
                    plan.describe())
        case _:
            assert_never(event)


class Recorder:
    """Records one Job into a History: subscribe it with `job.subscribe(recorder)`.

    Thread-safe: events arrive on the job's thread, a background thread ("zmigrate-history")
    commits every `flush_interval` seconds and keeps the heartbeat fresh while nothing happens.
    The recorder never breaks a transfer: if the store fails, it logs once and stops recording.

    Args:
        history: where to record (the recorder opens a writer connection of its own).
        clock: wall-clock time source.
        flush_interval: seconds between commits.
        background: run the flusher thread; when False, flushes happen on events only (tests).
        owns_history: close `history` when the job ends.
    """

    def __init__(self, history: History, *, clock: Callable[[], float] | None = None,
                 flush_interval: float = FLUSH_INTERVAL, background: bool = True,
                 owns_history: bool = False) -> None:
        self.history = history
        self.clock = clock or history.clock
        self.flush_interval = flush_interval
        self.background = background
        self.owns_history = owns_history
        self.job_id: int | None = None
        self.failed = False
        self.finished = False
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._open: dict[str, _Bucket] = {}
        self._pending = _Pending()
        self._rows = 0
        self._truncated = False
        self._last_flush = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def for_default_store(cls) -> Recorder:
        """A recorder into the user's history (opened lazily, when the plan is ready)."""
        return cls(History(), owns_history=True)

    # -- events -------------------------------------------------------------------------------
    def __call__(self, event: Event) -> None:
        if self.failed or self.finished:
            return
        try:
            with self._lock:
                self._handle(event)
        except (sqlite3.Error, OSError, HistoryError) as exc:
            self._give_up(exc)
        if self.finished or self.failed:
            self._join()

    def _handle(self, event: Event) -> None:
        match event:
            case PlanReady() | TreePlanReady():
                if self.job_id is None:  # a tree's datasets' plans belong to the tree's job
                    self._start(event)
                return
            case _ if self.job_id is None:
                return
            case Sample():
                self._add_sample(event)
            case Progress():
                self._pending.bytes = event.done
            case Finished():
                self._finish_ok(event)
                return
            case Failed():
                self._finish_failed(event)
                return
            case Verdict():
                self._pending.verdict = _verdict_value(event)
            case (StageChanged() | LogLine() | Stalled() | DatasetState() | StageStarted()
                  | StageResult() | Wire() | Synced() | EndCpu() | Resent() | OutOfTouch()):
                pass  # not kept (a stall is kept as its verdict; a catch-up is its own run)
            case _:
                assert_never(event)
        if self.clock() - self._last_flush >= self.flush_interval:
            self._flush()

    def _start(self, event: PlanReady | TreePlanReady) -> None:
        self._conn = self.history.connect()
        now = self.clock()
        row = _job_row(event, now)
        cur = self._conn.execute(
            "INSERT INTO jobs (job_key, started, heartbeat, source, destination, snapshot, "
            "destination_dataset, kind, base, transport, port, estimate, options, commands, "
            "description, pid, hostname) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (*row, os.getpid(), socket.gethostname()),
        )
        self.job_id = int(cur.lastrowid or 0)
        self._last_flush = now
        if self.background:
            self._thread = threading.Thread(target=self._flusher, name="zmigrate-history",
                                            daemon=True)
            self._thread.start()

    def _add_sample(self, s: Sample) -> None:
        side = s.side.value
        bucket = self._open.get(side)
        if bucket is not None and not bucket.covers(s.t):
            self._pending.closed.append(bucket)
            bucket = None
        if bucket is None:
            bucket = _Bucket(side, s.t, bucket_width(s.t))
            self._open[side] = bucket
        bucket.add(s)
        if bucket.width == 0.0:
            self._pending.closed.append(bucket)
            del self._open[side]

    # -- writing ------------------------------------------------------------------------------
    def flush(self) -> None:
        """Commit what is buffered (closed buckets, the open ones so far) and the heartbeat."""
        try:
            with self._lock:
                if self.job_id is not None and not self.failed and not self.finished:
                    self._flush()
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)

    def _flush(self, final: dict[str, Any] | None = None) -> None:
        conn = self._conn
        assert conn is not None
        assert self.job_id is not None
        now = self.clock()
        buckets = self._pending.closed + [b for b in self._open.values() if b.dirty]
        conn.execute("BEGIN IMMEDIATE")
        try:
            for b in buckets:
                if b.rowid is not None:
                    conn.execute(
                        "UPDATE samples SET t=?, side=?, in_rate=?, out_rate=?, total=?, fill=?, "
                        "fill_min=?, fill_max=?, n=? WHERE rowid=?", (*b.values(), b.rowid))
                elif self._rows < MAX_SAMPLE_ROWS:
                    cur = conn.execute(
                        "INSERT INTO samples (job_id, t, side, in_rate, out_rate, total, fill, "
                        "fill_min, fill_max, n) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (self.job_id, *b.values()))
                    b.rowid = cur.lastrowid
                    self._rows += 1
                else:
                    self._truncated = True
                b.dirty = False
            sets = ["heartbeat = ?", "sample_rows = ?", "samples_truncated = ?"]
            params: list[Any] = [now, self._rows, int(self._truncated)]
            if self._pending.bytes is not None:
                sets.append("bytes = ?")
                params.append(self._pending.bytes)
            if self._pending.verdict is not None:
                sets += ["verdict = ?", "verdict_text = ?", "verdict_data = ?"]
                params += list(self._pending.verdict)
            for key, value in (final or {}).items():
                sets.append(f"{key} = ?")
                params.append(value)
            conn.execute(f"UPDATE jobs SET {', '.join(sets)} WHERE id = ?",
                         (*params, self.job_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._pending = _Pending()
        self._last_flush = now

    def _flusher(self) -> None:
        while not self._stop.wait(self.flush_interval):
            self.flush()

    # -- the end ------------------------------------------------------------------------------
    def _finish_ok(self, event: Finished) -> None:
        s = event.summary
        if self._pending.verdict is None and "verdict" in s.extra:
            self._pending.verdict = _verdict_value(s.extra["verdict"])
        self._pending.bytes = s.bytes
        error = None
        if not s.verified:
            error = ("the stream hashes differ" if s.hash_match is False
                     else "the snapshot guids differ")
        self._end({
            "outcome": "verified" if s.verified else "failed",
            "error": error,
            "seconds": s.seconds,
            "avg_rate": s.rate,
            "summary": _dumps(asdict(s)),
        })

    def _finish_failed(self, event: Failed) -> None:
        seconds = None
        rate = None
        last = max(self._open.values(), key=lambda b: b.t, default=None)
        closed = self._pending.closed[-1] if self._pending.closed else None
        t_end = max((b.t for b in (last, closed) if b is not None), default=None)
        done = self._pending.bytes
        if t_end is not None and t_end > 0:
            seconds = t_end
            if done is not None:
                rate = done / t_end
        self._end({
            "outcome": "cancelled" if event.cancelled else "failed",
            "error": str(event.error),
            "seconds": seconds,
            "avg_rate": rate,
        })

    def _end(self, final: dict[str, Any]) -> None:
        final["ended"] = self.clock()
        self._pending.closed.extend(b for b in self._open.values() if b.dirty)
        self._open.clear()
        try:
            self._flush(final)
        finally:
            self.finished = True
            self._shutdown()

    def _give_up(self, exc: BaseException) -> None:
        log.warning("the transfer history stopped recording: %s", exc)
        with self._lock:
            self.failed = True
            self._shutdown()

    def _shutdown(self) -> None:
        """Under the lock: stop the flusher (joined later, outside the lock) and close."""
        self._stop.set()
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        if self.owns_history:
            self.history.close()

    def _join(self) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
            self._thread = None

    def close(self) -> None:
        """Stop the flusher and close the writer without an outcome (the job reads as
        interrupted once its heartbeat is stale). Normally Finished/Failed end the recording."""
        with self._lock:
            if not self.finished:
                self.finished = True
                self._shutdown()
        self._join()


def _verdict_value(value: object) -> tuple[str | None, str | None, str | None]:
    """(verdict, text, JSON) from whatever a summary's extra["verdict"] holds.

    A diagnosis.Verdict has no text: it is data (its finding and advice), which each face
    words when it shows the record (from the JSON); older records and other events may carry
    a `text` of their own.
    """
    if value is None:
        return (None, None, None)
    if isinstance(value, str):
        return (value, None, _dumps(value))
    if isinstance(value, dict):
        kind = value.get("kind") or value.get("verdict") or value.get("bottleneck")
        text = value.get("text") or value.get("message")
        return (str(kind) if kind is not None else None, str(text) if text is not None else None,
                _dumps(value))
    kind = getattr(value, "kind", None)
    text = getattr(value, "text", None)
    return (str(getattr(kind, "value", kind)) if kind is not None else str(value),
            str(text) if text is not None else None, _dumps(_event_data(value)))


def _event_data(event: object) -> object:
    to_json = getattr(event, "to_json", None)
    if callable(to_json):
        with contextlib.suppress(Exception):
            return to_json()
    with contextlib.suppress(TypeError):
        return asdict(event)  # type: ignore[call-overload]
    return str(event)
